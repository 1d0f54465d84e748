-- Prints samples of scenarios/lua/ycsb_common.lua's generators as counts, for tests/unit/test_ycsb_distributions.py.
-- Run (no database): sysbench ycsb_sample.lua --sample-dist=zipfian --sample-items=1000 --sample-n=1000000 sample
-- from a folder holding ycsb_common.lua and dbperf_ops.lua. Prints "COUNT <value> <count>" per value drawn,
-- and "KEY <n> <key>" for the first few record numbers.
local ycsb = require("ycsb_common")

sysbench.cmdline.options.sample_dist = { "scrambled | zipfian (unscrambled ranks) | latest", "scrambled" }
sysbench.cmdline.options.sample_items = { "items (records; for latest, the newest record + 1)", 1000 }
sysbench.cmdline.options.sample_n = { "samples", 100000 }

local function sample()
   local items, n, dist = sysbench.opt.sample_items, sysbench.opt.sample_n, sysbench.opt.sample_dist
   local counts = {}
   local g = dist == "zipfian" and ycsb.zipfian(items, 0.99) or nil
   for _ = 1, n do
      local u = sysbench.rand.uniform_double()
      local v
      if dist == "zipfian" then
         v = ycsb.zipfian_rank(g, u)
      elseif dist == "latest" then
         v = ycsb.latest(items - 1, u)
      else
         v = ycsb.scrambled_zipfian(items, u)
      end
      counts[v] = (counts[v] or 0) + 1
   end
   local out = {}
   for v, c in pairs(counts) do
      out[#out + 1] = string.format("COUNT %d %d", v, c)
   end
   for i = 0, 4 do
      out[#out + 1] = string.format("KEY %d %s", i, ycsb.key(i))
   end
   io.write(table.concat(out, "\n") .. "\n")
end

sysbench.cmdline.commands.sample = { sample }
