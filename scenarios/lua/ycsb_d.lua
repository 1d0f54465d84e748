-- dbperf YCSB-like workload D. Read latest: 95 % reads of the newest records, 5 % inserts (YCSB's workloadd).
-- The table, load phase, distributions and operations are in ycsb_common.lua.
local ycsb = require("ycsb_common")

ycsb.define({ name = "D", read = 0.95, insert = 0.05, distribution = "latest" })
