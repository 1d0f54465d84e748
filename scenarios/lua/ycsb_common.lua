-- dbperf YCSB-like workloads: the core workloads A-F of the Yahoo! Cloud Serving Benchmark as a
-- sysbench 1.0.20 script library. One table, usertable (YCSB_KEY + FIELD0..FIELD9, 100 bytes each),
-- loaded by `prepare` (--table-size records), and a run phase whose events are single operations:
-- READ, UPDATE, INSERT, SCAN, READ_MODIFY_WRITE, each reported with dbperf's per-operation protocol.
--
-- Request distributions as YCSB defines them (sysbench has none of them):
--   zipfian  YCSB's ScrambledZipfianGenerator: a zipfian rank over 10^10 items (constant 0.99, Gray
--            et al.'s generator, YCSB's precomputed zeta), then FNV-1a-64 hashed modulo the record count
--   uniform  every record alike
--   latest   YCSB's SkewedLatestGenerator: the newest record minus a zipfian rank over all records
-- Keys are "user" .. fnvhash64(n) (YCSB's default hashed insert order), so scans run over hashed keys.
--
-- Where this differs from YCSB (said in scenarios/README.md): operations run in autocommit as YCSB's
-- JDBC binding does; a thread inserts the keys next + tid + k * threads, where `next` (the first record
-- number never inserted) is kept in the table ycsb_meta so that a later sysbench process (cost mode's
-- measured run after its warm-up run) goes on where the last one stopped (a rolled-back warm-up, dbperf's
-- --dbperf-rollback, keeps no record: its inserts reuse one number); "latest" counts back from the
-- newest ACKNOWLEDGED record, as YCSB's AcknowledgedCounterGenerator does: the longest run of record
-- numbers from `next` whose inserts have all returned, read from per-thread counters in memory the
-- sysbench threads share (sysbench threads are separate Lua states in one process: the counters are a
-- small file mapped by every thread, one slot each; no statement is added, and at 1 thread the keys are
-- the ones this thread inserted, as before); zipfian choices cover the loaded records only (not the
-- keys inserted during the run); READ_MODIFY_WRITE is one operation (its read and update are not also
-- counted as READ and UPDATE). Reads of a record that must exist and found none are counted as misses
-- (dbperf_ops.lua), and dbperf fails a run that has any.
local ffi = require("ffi")
local ops = require("dbperf_ops")

-- each declaration on its own: a declaration another module made already is kept
for _, decl in ipairs({
   "int open(const char *path, int flags, int mode);",
   "int close(int fd);",
   "int ftruncate(int fd, int64_t length);",
   "void *mmap(void *addr, size_t length, int prot, int flags, int fd, int64_t offset);",
   "int unlink(const char *path);",
   "int getpid(void);",
}) do
   pcall(ffi.cdef, decl)
end

local M = {}

sysbench.cmdline.options = {
   tables = { "Number of tables (YCSB uses one: usertable)", 1 },
   table_size = { "Records loaded by prepare (YCSB's recordcount)", 10000 },
   field_count = { "Fields per record", 10 },
   field_length = { "Bytes per field", 100 },
   max_scan_length = { "Longest scan, records (uniform 1..max)", 100 },
   request_distribution = { "zipfian, uniform or latest (empty: the workload's own)", "" },
   mysql_storage_engine = { "Storage engine", "innodb" },
}

local ZIPF_THETA = 0.99
local ZIPF_ITEMS = 10000000000 -- YCSB's ScrambledZipfianGenerator.ITEM_COUNT
local ZIPF_ZETAN = 26.46902820178302 -- zeta(ITEM_COUNT + 1, 0.99), YCSB's constant

-- ---------------------------------------------------------------------------------------------
-- Hashing and generators (pure Lua, testable without a database)

local FNV_OFFSET = 0xCBF29CE484222325ULL
local FNV_PRIME = 1099511628211ULL
local SIGN = 0x8000000000000000ULL

--- YCSB's Utils.fnvhash64 (FNV-1a over the 8 bytes of the value, then Math.abs), as a uint64.
function M.fnvhash64(value)
   local v = ffi.cast("uint64_t", value)
   local h = FNV_OFFSET
   for _ = 1, 8 do
      h = bit.bxor(h, bit.band(v, 0xffULL)) * FNV_PRIME
      v = bit.rshift(v, 8)
   end
   if h >= SIGN then -- Math.abs of the signed value
      h = -h
   end
   return h
end

local function zeta(from, to, theta, initial)
   local sum = initial
   for i = from, to - 1 do
      sum = sum + 1.0 / math.pow(i + 1, theta)
   end
   return sum
end

--- YCSB's ZipfianGenerator (Gray et al., "Quickly generating billion-record synthetic databases"):
--- ranks 0..items-1, rank 0 the most popular. `zetan` may be given (YCSB's precomputed constant).
function M.zipfian(items, theta, zetan)
   local g = { items = items, theta = theta }
   g.zeta2 = zeta(0, 2, theta, 0.0)
   g.alpha = 1.0 / (1.0 - theta)
   g.count = items
   g.zetan = zetan or zeta(0, items, theta, 0.0)
   g.eta = (1 - math.pow(2.0 / items, 1 - theta)) / (1 - g.zeta2 / g.zetan)
   g.half = 1.0 + math.pow(0.5, theta)
   return g
end

--- Grow a zipfian generator to `items` ranks (YCSB recomputes zeta incrementally the same way).
local function grow(g, items)
   if items > g.count then
      g.zetan = zeta(g.count, items, g.theta, g.zetan)
      g.count = items
      g.items = items
      g.eta = (1 - math.pow(2.0 / items, 1 - g.theta)) / (1 - g.zeta2 / g.zetan)
   end
end

--- The next rank of zipfian generator `g`, from the uniform [0, 1) draw `u`.
function M.zipfian_rank(g, u)
   local uz = u * g.zetan
   if uz < 1.0 then
      return 0
   end
   if uz < g.half then
      return 1
   end
   return math.floor(g.items * math.pow(g.eta * u - g.eta + 1, g.alpha))
end

local scrambled = nil

--- YCSB's ScrambledZipfianGenerator over record numbers 0..records-1.
function M.scrambled_zipfian(records, u)
   if scrambled == nil then
      scrambled = M.zipfian(ZIPF_ITEMS + 1, ZIPF_THETA, ZIPF_ZETAN)
   end
   local rank = M.zipfian_rank(scrambled, u)
   return tonumber(M.fnvhash64(rank) % ffi.cast("uint64_t", records))
end

local latest = nil

--- YCSB's SkewedLatestGenerator: the newest record number minus a zipfian rank over all of them.
function M.latest(newest, u)
   if latest == nil then
      latest = M.zipfian(newest + 1, ZIPF_THETA)
   else
      grow(latest, newest + 1)
   end
   return newest - M.zipfian_rank(latest, u)
end

--- YCSB's key of record number n: "user" .. fnvhash64(n).
function M.key(n)
   local text = tostring(M.fnvhash64(n))
   return "user" .. text:sub(1, -4) -- strip LuaJIT's "ULL"
end

-- ---------------------------------------------------------------------------------------------
-- Load phase (sysbench prepare / cleanup)

local function field_value()
   return sysbench.rand.string(string.rep("@", sysbench.opt.field_length))
end

local function columns()
   local cols = {}
   for i = 0, sysbench.opt.field_count - 1 do
      cols[#cols + 1] = string.format("FIELD%d", i)
   end
   return cols
end

local function check_options()
   if sysbench.opt.tables ~= 1 then
      error("YCSB-like workloads use one table (usertable): --tables must be 1")
   end
end

function M.cmd_prepare()
   check_options()
   local drv = sysbench.sql.driver()
   local con = drv:connect()
   local defs = {}
   for _, c in ipairs(columns()) do
      defs[#defs + 1] = string.format("%s VARCHAR(%d)", c, sysbench.opt.field_length)
   end
   print("Creating table 'usertable'...")
   con:query(string.format("CREATE TABLE usertable (YCSB_KEY VARCHAR(255) NOT NULL PRIMARY KEY, %s) ENGINE = %s",
      table.concat(defs, ", "), sysbench.opt.mysql_storage_engine))
   con:query(string.format("CREATE TABLE ycsb_meta (name VARCHAR(32) NOT NULL PRIMARY KEY, value BIGINT NOT NULL) "
      .. "ENGINE = %s", sysbench.opt.mysql_storage_engine))
   con:query(string.format("INSERT INTO ycsb_meta VALUES ('next_insert', %d)", sysbench.opt.table_size))
   print(string.format("Loading %d records into 'usertable'...", sysbench.opt.table_size))
   local batch = 100
   local n = 0
   while n < sysbench.opt.table_size do
      local rows = {}
      for i = n, math.min(n + batch, sysbench.opt.table_size) - 1 do
         local values = { "'" .. M.key(i) .. "'" }
         for _ = 1, sysbench.opt.field_count do
            values[#values + 1] = "'" .. field_value() .. "'"
         end
         rows[#rows + 1] = "(" .. table.concat(values, ",") .. ")"
      end
      con:query("INSERT INTO usertable VALUES " .. table.concat(rows, ","))
      n = n + batch
   end
   con:disconnect()
end

function M.cmd_cleanup()
   local drv = sysbench.sql.driver()
   local con = drv:connect()
   con:query("DROP TABLE IF EXISTS usertable")
   con:query("DROP TABLE IF EXISTS ycsb_meta")
   con:disconnect()
end

sysbench.cmdline.commands = {
   prepare = { M.cmd_prepare, sysbench.cmdline.PARALLEL_COMMAND },
   cleanup = { M.cmd_cleanup },
}

-- ---------------------------------------------------------------------------------------------
-- Run phase

local con, stmt = nil, {}
local mix = {}
local distribution = "zipfian"
local inserted = 0
local next_insert = 0 -- the first record number no earlier process inserted (ycsb_meta)

local function param(s, kind, size)
   return s:bind_create(kind, size)
end

local function prepare_statements()
   local V, I = sysbench.sql.type.VARCHAR, sysbench.sql.type.INT
   local cols = columns()
   stmt.read = con:prepare("SELECT * FROM usertable WHERE YCSB_KEY = ?")
   stmt.read_key = param(stmt.read, V, 255)
   stmt.read:bind_param(stmt.read_key)
   stmt.update, stmt.update_key, stmt.update_val = {}, {}, {}
   for i, c in ipairs(cols) do
      local s = con:prepare(string.format("UPDATE usertable SET %s = ? WHERE YCSB_KEY = ?", c))
      stmt.update_val[i] = param(s, V, sysbench.opt.field_length)
      stmt.update_key[i] = param(s, V, 255)
      s:bind_param(stmt.update_val[i], stmt.update_key[i])
      stmt.update[i] = s
   end
   local marks = { "?" }
   for _ = 1, #cols do
      marks[#marks + 1] = "?"
   end
   stmt.insert = con:prepare("INSERT INTO usertable VALUES (" .. table.concat(marks, ",") .. ")")
   stmt.insert_params = {}
   stmt.insert_params[1] = param(stmt.insert, V, 255)
   for i = 1, #cols do
      stmt.insert_params[i + 1] = param(stmt.insert, V, sysbench.opt.field_length)
   end
   stmt.insert:bind_param(unpack(stmt.insert_params))
   stmt.scan = con:prepare("SELECT * FROM usertable WHERE YCSB_KEY >= ? ORDER BY YCSB_KEY LIMIT ?")
   stmt.scan_key = param(stmt.scan, V, 255)
   stmt.scan_len = param(stmt.scan, I)
   stmt.scan:bind_param(stmt.scan_key, stmt.scan_len)
end

-- ---------------------------------------------------------------------------------------------
-- Acknowledged inserts across threads (YCSB's AcknowledgedCounterGenerator)
--
-- Slot 0 holds the process's start time (a stale file of an earlier process with the same pid is
-- reset), slot 1 + tid the number of inserts thread tid has had acknowledged. Thread tid inserts record
-- numbers next + tid + k * threads, so records next .. next + acknowledged() - 1 all exist.

local acks = nil -- int64_t[1 + threads] in the shared mapping (nil: one thread, or no inserts)
local acks_path = nil

local function process_token()
   local f = io.open("/proc/self/stat", "r")
   local text = f and f:read("*l") or ""
   if f then
      f:close()
   end
   return tonumber(text:match("%) %S+" .. string.rep(" %S+", 18) .. " (%d+)")) or 0
end

local function map_acks(threads)
   -- in the working directory: dbperf runs sysbench in a folder of its own, removed with the run (also
   -- when sysbench is killed before thread_done), so no file outlives the run in a shared place
   acks_path = string.format("./dbperf-ycsb-acks-%d", ffi.C.getpid())
   local size = 8 * (threads + 1)
   local fd = ffi.C.open(acks_path, 66, 384) -- O_RDWR | O_CREAT, 0600
   if fd < 0 or ffi.C.ftruncate(fd, size) ~= 0 then
      error("ycsb: cannot create the acknowledged-insert counters in " .. acks_path)
   end
   local p = ffi.C.mmap(nil, size, 3, 1, fd, 0) -- PROT_READ | PROT_WRITE, MAP_SHARED
   ffi.C.close(fd)
   if ffi.cast("intptr_t", p) == -1 then
      error("ycsb: cannot map the acknowledged-insert counters in " .. acks_path)
   end
   acks = ffi.cast("volatile int64_t *", p)
   local token = process_token()
   if acks[0] ~= token then -- a file left by an earlier process: only counts undercount while reset
      for i = 1, threads do
         acks[i] = 0
      end
      acks[0] = token
   end
end

--- Record numbers next_insert + 0 .. + n - 1 are all acknowledged: n, the longest such run.
local function acknowledged()
   if acks == nil then
      return inserted * sysbench.opt.threads
   end
   local threads = sysbench.opt.threads
   local counts, least = {}, math.huge
   for t = 1, threads do
      counts[t] = tonumber(acks[t])
      if counts[t] < least then
         least = counts[t]
      end
   end
   local run = least * threads
   for t = 1, threads do
      if counts[t] <= least then
         break
      end
      run = run + 1
   end
   return run
end

local function newest()
   return next_insert - 1 + acknowledged()
end

local function choose()
   local u = sysbench.rand.uniform_double()
   if distribution == "uniform" then
      return math.floor(u * sysbench.opt.table_size)
   elseif distribution == "latest" then
      return M.latest(newest(), u)
   end
   return M.scrambled_zipfian(sysbench.opt.table_size, u)
end

--- 1 when a statement that must find a row found none, else 0.
local function missed(rs)
   return (rs ~= nil and type(rs) ~= "boolean" and tonumber(rs.nrows) == 0) and 1 or 0
end

local function read(n)
   stmt.read_key:set(M.key(n))
   return missed(stmt.read:execute())
end

local function update(n)
   local i = sysbench.rand.uniform(1, sysbench.opt.field_count)
   stmt.update_val[i]:set(field_value())
   stmt.update_key[i]:set(M.key(n))
   stmt.update[i]:execute()
end

local function insert()
   local n = next_insert + sysbench.tid + inserted * sysbench.opt.threads
   stmt.insert_params[1]:set(M.key(n))
   for i = 2, #stmt.insert_params do
      stmt.insert_params[i]:set(field_value())
   end
   stmt.insert:execute()
   if not sysbench.opt.dbperf_rollback then
      -- a rolled-back warm-up (dbperf's --dbperf-rollback) keeps no record: the next insert takes the same
      -- number again, and "latest" stays the newest record the table really holds
      inserted = inserted + 1
      if acks ~= nil then
         acks[sysbench.tid + 1] = inserted -- acknowledged: the autocommit INSERT has returned
      end
   end
   return 0
end

local function scan(n)
   stmt.scan_key:set(M.key(n))
   stmt.scan_len:set(sysbench.rand.uniform(1, sysbench.opt.max_scan_length))
   return missed(stmt.scan:execute()) -- a scan starts at an existing record: at least one row
end

local ACTIONS = {
   READ = function() return read(choose()) end,
   UPDATE = function()
      update(choose())
      return 0
   end,
   INSERT = insert,
   SCAN = function() return scan(choose()) end,
   READ_MODIFY_WRITE = function()
      local n = choose()
      local miss = read(n)
      update(n)
      return miss
   end,
}

--- Define the workload: `spec` gives the proportions (read, update, insert, scan, read_modify_write,
--- adding up to 1) and the default request distribution.
function M.define(spec)
   local total = 0
   for _, name in ipairs({ "read", "update", "insert", "scan", "read_modify_write" }) do
      if (spec[name] or 0) > 0 then
         total = total + spec[name]
         mix[#mix + 1] = { limit = total, op = string.upper(name), action = ACTIONS[string.upper(name)] }
      end
   end
   if math.abs(total - 1.0) > 1e-9 then
      error(string.format("YCSB workload %s: proportions add up to %g, not 1", spec.name, total))
   end
   mix[#mix].limit = 1.0 + 1e-9
   distribution = spec.distribution or "zipfian"
   local inserts = (spec.insert or 0) > 0

   function thread_init()
      check_options()
      local chosen = sysbench.opt.request_distribution
      if chosen ~= "" then
         if chosen ~= "zipfian" and chosen ~= "uniform" and chosen ~= "latest" then
            error("--request_distribution must be zipfian, uniform or latest, not " .. chosen)
         end
         distribution = chosen
      end
      local drv = sysbench.sql.driver()
      con = drv:connect()
      if inserts then
         local rs = con:query("SELECT value FROM ycsb_meta WHERE name = 'next_insert'")
         next_insert = tonumber(rs:fetch_row()[1])
      else
         next_insert = sysbench.opt.table_size
      end
      if inserts and sysbench.opt.threads > 1 then
         map_acks(sysbench.opt.threads)
      end
      prepare_statements()
      ops.init()
   end

   function event()
      local u = sysbench.rand.uniform_double()
      for _, m in ipairs(mix) do
         if u < m.limit then
            local t0 = ops.start()
            local misses = m.action()
            ops.done(m.op, t0, 0, misses)
            return
         end
      end
   end

   function thread_done()
      ops.report()
      if inserts and inserted > 0 then
         con:query(string.format("UPDATE ycsb_meta SET value = GREATEST(value, %d) WHERE name = 'next_insert'",
            next_insert + sysbench.tid + inserted * sysbench.opt.threads))
      end
      if acks_path ~= nil then
         ffi.C.unlink(acks_path) -- every thread has mapped it by now; the mapping outlives the name
      end
      con:disconnect()
   end
end

return M
