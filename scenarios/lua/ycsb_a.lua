-- dbperf YCSB-like workload A. Update heavy: 50 % reads, 50 % updates, zipfian (YCSB's workloada).
-- The table, load phase, distributions and operations are in ycsb_common.lua.
local ycsb = require("ycsb_common")

ycsb.define({ name = "A", read = 0.5, update = 0.5, distribution = "zipfian" })
