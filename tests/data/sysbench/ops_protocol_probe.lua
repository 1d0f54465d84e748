-- a database-free workload for the protocol test: two operation types, busy loops of different lengths
local ops = require("dbperf_ops")
function thread_init() ops.init() end
function event()
  local t0 = ops.start()
  local x = 0
  if sysbench.rand.uniform(1, 10) <= 7 then
    for i = 1, 2000 do x = x + i end
    ops.done("READ", t0)
  else
    for i = 1, 20000 do x = x + i end
    ops.done("UPDATE", t0, sysbench.rand.uniform(0, 1))
  end
end
function thread_done() ops.report() end
