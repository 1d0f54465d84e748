-- dbperf YCSB-like workload F. Read-modify-write: 50 % reads, 50 % read-modify-writes, zipfian (YCSB's workloadf).
-- The table, load phase, distributions and operations are in ycsb_common.lua.
local ycsb = require("ycsb_common")

ycsb.define({ name = "F", read = 0.5, read_modify_write = 0.5, distribution = "zipfian" })
