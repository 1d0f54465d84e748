-- dbperf per-operation recorder: counts, errors, retries and a latency histogram per operation type,
-- reported in thread_done() as ONE line per sysbench thread (the per-operation protocol, see
-- scenarios/README.md):
--
--   DBPERF-OPS {"thread":0,"ops":{"READ":{"count":9,"errors":0,"retries":0,"misses":0,
--                                   "latency_ms_sum":1.234,"hist":[[0.105,3],[0.107,6]]}}}
--
-- "misses" counts the operations (in "count") that read a row which must exist and found none; the
-- script decides which reads those are (YCSB's READ, SCAN and READ_MODIFY_WRITE read acknowledged
-- records only). dbperf fails a run with any miss (scenarios/README.md, the per-operation protocol).
--
-- Usage in a workload script:
--   local ops = require("dbperf_ops")
--   function thread_init() ...; ops.init() end
--   function event() local t0 = ops.start(); ...the operation...; ops.done("READ", t0) end
--   function thread_done() ops.report(); ... end
--
-- Warm-up: dbperf runs a timing run as ONE sysbench process of warm-up + measured seconds, and passes
-- --dbperf-warmup-s=<seconds> (declared by dbperf's wrapper script). Operations that START before
-- thread start + warm-up seconds are left out, so the counts cover the measured window that
-- sysbench's own --report-checkpoints cut makes. Cost runs warm up in a separate sysbench process and
-- pass no warm-up: every operation of the measured process counts.
local ffi = require("ffi")

ffi.cdef [[
typedef struct { long tv_sec; long tv_nsec; } dbperf_timespec_t;
int clock_gettime(int clk_id, dbperf_timespec_t *tp);
]]

local M = {}

local CLOCK_MONOTONIC = 1
local ts = ffi.new("dbperf_timespec_t")

-- sysbench's latency histogram: 1024 log-scale buckets between 0.001 ms and 100 000 ms
-- (sb_histogram.c: index = floor((log(v) - log(min)) * mult + 0.5), value = exp(i / mult + log(min)))
local BUCKETS = 1024
local DEDUCT = math.log(0.001)
local MULT = (BUCKETS - 1) / (math.log(100000) - DEDUCT)

local stats = {}
local order = {}
local cut = 0.0
local started = false

--- Seconds on the monotonic clock (nanosecond resolution).
function M.now()
   ffi.C.clock_gettime(CLOCK_MONOTONIC, ts)
   return tonumber(ts.tv_sec) + tonumber(ts.tv_nsec) * 1e-9
end

--- Call in thread_init(): starts the thread's clock for the warm-up cut.
function M.init()
   local warmup = tonumber(sysbench.opt.dbperf_warmup_s or 0) or 0
   cut = M.now() + warmup
   started = true
end

local function entry(op)
   local s = stats[op]
   if s == nil then
      s = { count = 0, errors = 0, retries = 0, misses = 0, sum = 0.0, hist = {} }
      stats[op] = s
      order[#order + 1] = op
   end
   return s
end

--- The start time of an operation (pass it to done()).
function M.start()
   return M.now()
end

local function bucket(ms)
   if ms <= 0 then
      return 0
   end
   local i = math.floor((math.log(ms) - DEDUCT) * MULT + 0.5)
   if i < 0 then
      return 0
   elseif i >= BUCKETS then
      return BUCKETS - 1
   end
   return i
end

--- Record one finished operation of type `op` that started at `t0`; `retries` (default 0) counts the
--- times it was retried (deadlocks, lock-wait timeouts) before it succeeded, `misses` (default 0) the
--- rows it had to find and did not.
function M.done(op, t0, retries, misses)
   if not started then
      M.init()
   end
   if t0 < cut then
      return
   end
   local ms = (M.now() - t0) * 1000.0
   local s = entry(op)
   s.count = s.count + 1
   s.retries = s.retries + (retries or 0)
   s.misses = s.misses + (misses or 0)
   s.sum = s.sum + ms
   local i = bucket(ms)
   s.hist[i] = (s.hist[i] or 0) + 1
end

--- Record one operation of type `op` that failed (it is not in the count or the histogram).
function M.failed(op, t0, retries)
   if t0 < cut then
      return
   end
   local s = entry(op)
   s.errors = s.errors + 1
   s.retries = s.retries + (retries or 0)
end

--- The protocol line of this thread (without printing it).
function M.line()
   local parts = {}
   for _, op in ipairs(order) do
      local s = stats[op]
      local idx = {}
      for i, _ in pairs(s.hist) do
         idx[#idx + 1] = i
      end
      table.sort(idx)
      local hist = {}
      for k, i in ipairs(idx) do
         hist[k] = string.format("[%.6g,%d]", math.exp(i / MULT + DEDUCT), s.hist[i])
      end
      parts[#parts + 1] = string.format(
         '"%s":{"count":%d,"errors":%d,"retries":%d,"misses":%d,"latency_ms_sum":%.6f,"hist":[%s]}',
         op, s.count, s.errors, s.retries, s.misses, s.sum, table.concat(hist, ","))
   end
   return string.format('DBPERF-OPS {"thread":%d,"ops":{%s}}\n', sysbench.tid or 0, table.concat(parts, ","))
end

--- Call in thread_done(): writes the thread's line with a single io.write.
function M.report()
   io.write(M.line())
   io.flush()
end

return M
