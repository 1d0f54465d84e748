-- dbperf YCSB-like workload B. Read mostly: 95 % reads, 5 % updates, zipfian (YCSB's workloadb).
-- The table, load phase, distributions and operations are in ycsb_common.lua.
local ycsb = require("ycsb_common")

ycsb.define({ name = "B", read = 0.95, update = 0.05, distribution = "zipfian" })
