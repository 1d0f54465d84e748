-- dbperf YCSB-like workload C. Read only: 100 % reads, zipfian (YCSB's workloadc).
-- The table, load phase, distributions and operations are in ycsb_common.lua.
local ycsb = require("ycsb_common")

ycsb.define({ name = "C", read = 1.0, distribution = "zipfian" })
