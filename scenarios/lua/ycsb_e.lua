-- dbperf YCSB-like workload E. Short ranges: 95 % scans of 1-100 records, 5 % inserts, zipfian (YCSB's workloade).
-- The table, load phase, distributions and operations are in ycsb_common.lua.
local ycsb = require("ycsb_common")

ycsb.define({ name = "E", scan = 0.95, insert = 0.05, distribution = "zipfian" })
