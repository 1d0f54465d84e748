-- dbperf TPC-C-like workload (unaudited; not TPC-C): the nine tables, a parallel loader and the five
-- transactions in the standard mix, with the standard's input distributions, no keying or think time.
--
--   sysbench tpcc.lua --tables=W --table-size=I prepare|run|cleanup
--
-- --tables is the number of warehouses and --table-size the number of items (100,000 in the standard;
-- stock rows per warehouse = items). Customers and initial orders per district scale with the items:
-- 3,000 x items / 100,000 (the standard's 3,000 at 100,000 items, never under 30), and so do the last
-- names (customers / 3 of them, 1,000 in the standard) and the year-to-date totals (10.00 per customer),
-- so that every TPC-C consistency condition dbperf checks holds from the load on.
--
-- Each transaction draws its home warehouse uniformly over 1..W (as go-tpc and sysbench-tpcc do), from
-- the same seeded generator as its other inputs.
--
-- Every thread writes ONE line `DBPERF-OPS {json}` in thread_done through dbperf_ops.lua (the
-- per-operation protocol, scenarios/README.md): per transaction type the count, errors, retries
-- (deadlock 1213 and lock-wait timeout 1205, each retried after a ROLLBACK), the latency sum and a
-- sysbench-shaped latency histogram; transactions that start in the warm-up (--dbperf-warmup-s) are
-- left out. A second line, `DBPERF-TPCC {json}`, gives the retries by error number and the New-Orders
-- rolled back on purpose (the 1 % with an unused item), which the protocol has no field for.
--
-- `sysbench tpcc.lua nurand` prints a sample of the NURand generators (tested against the exact
-- distribution in tests).

local ops = require("dbperf_ops")

sysbench.cmdline.options = {
   tables = { "Number of warehouses", 1 },
   table_size = { "Number of items (100000 in TPC-C); customers per district scale with it", 100000 },
   dbperf_warmup_s = { "Leave out of the DBPERF-OPS counts operations that start in the first N seconds", 0 },
   max_retries = { "Give a transaction up (an error) after this many deadlock / lock-wait retries", 100 },
   nurand_samples = { "Samples per generator for the nurand command", 100000 },
   mysql_storage_engine = { "Storage engine", "innodb" },
}

-- NURand constants: fixed so that every run (base and head) draws the same inputs. C_LAST_RUN differs
-- from C_LAST_LOAD by 66, inside the standard's allowed [65, 119] (not 96 or 112).
local C_LAST_LOAD = 157
local C_LAST_RUN = 223
local C_ID = 259
local C_ITEM = 7911
local DISTRICTS = 10

local SYLLABLES = { "BAR", "OUGHT", "ABLE", "PRI", "PRES", "ESE", "ANTI", "CALLY", "ATION", "EING" }
local TYPES = { "NEW_ORDER", "PAYMENT", "ORDER_STATUS", "DELIVERY", "STOCK_LEVEL" }

-- The loader draws from its own generator, seeded per loader task (Park-Miller, exact in doubles), so
-- the same dataset comes out on every server build, machine and loader thread count: a cost count
-- depends on the rows (order-line counts, stock quantities), and base and head prepare their own
-- snapshots. Runs draw from sysbench's generator (--rand-seed).
local loader_state

local function seed_loader(task)
   loader_state = (task * 7919 + 1) % 2147483646 + 1
end

local function rnd(a, b)
   if loader_state then
      loader_state = loader_state * 16807 % 2147483647
      return a + loader_state % (b - a + 1)
   end
   return sysbench.rand.uniform(a, b)
end

function nurand(a, x, y, c)
   return (((bit.bor(rnd(0, a), rnd(x, y))) + c) % (y - x + 1)) + x
end

local function warehouses()
   return sysbench.opt.tables
end

local function items()
   return sysbench.opt.table_size
end

function customers_per_district()
   return math.max(30, math.floor(3000 * items() / 100000))
end

-- Last names scale with the customers: N = customers / 3 names (the standard's 1,000 at 3,000
-- customers, at most 1,000), so a by-name lookup finds about three customers at any size. The loader's
-- c_last for customers 1..N comes from the customer id, the rest from NURand(255, 0, N - 1); every
-- run-time lookup draws from the same range, NURand(255, 0, N - 1).
local function last_name(num)
   return SYLLABLES[math.floor(num / 100) + 1] .. SYLLABLES[math.floor(num / 10) % 10 + 1] .. SYLLABLES[num % 10 + 1]
end

local function last_names()
   return math.min(1000, math.max(1, math.floor(customers_per_district() / 3)))
end

local function name_range()
   return last_names() - 1
end

-- the year-to-date totals the loader writes: each customer's one history row of 10.00, summed per
-- district and per warehouse (the standard's 30,000.00 and 300,000.00 at 3,000 customers), so that
-- D_YTD = sum(H_AMOUNT) and W_YTD = sum(H_AMOUNT) (consistency conditions 8 and 9) hold from the start
local function district_ytd()
   return 10 * customers_per_district()
end

local ALNUM = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"

local function astring(lo, hi)
   local n = rnd(lo, hi)
   local out = {}
   for i = 1, n do
      local k = rnd(1, #ALNUM)
      out[i] = string.sub(ALNUM, k, k)
   end
   return table.concat(out)
end

local function nstring(lo, hi)
   local n = rnd(lo, hi)
   local out = {}
   for i = 1, n do
      out[i] = string.char(48 + rnd(0, 9))
   end
   return table.concat(out)
end

local function zip()
   return nstring(4, 4) .. "11111"
end

-- i_data / s_data: 26-50 characters, 10 % holding "ORIGINAL" somewhere
local function data_string()
   local s = astring(26, 50)
   if rnd(1, 10) == 1 then
      local at = rnd(1, #s - 8)
      s = string.sub(s, 1, at - 1) .. "ORIGINAL" .. string.sub(s, at + 8)
   end
   return s
end

-- ---------------------------------------------------------------------------------------------------
-- Schema and loader
-- ---------------------------------------------------------------------------------------------------

local SCHEMA = {
   [[CREATE TABLE IF NOT EXISTS warehouse (
      w_id INT NOT NULL, w_name VARCHAR(10), w_street_1 VARCHAR(20), w_street_2 VARCHAR(20),
      w_city VARCHAR(20), w_state CHAR(2), w_zip CHAR(9), w_tax DECIMAL(4,4), w_ytd DECIMAL(12,2),
      PRIMARY KEY (w_id)) ENGINE=%s]],
   [[CREATE TABLE IF NOT EXISTS district (
      d_id INT NOT NULL, d_w_id INT NOT NULL, d_name VARCHAR(10), d_street_1 VARCHAR(20),
      d_street_2 VARCHAR(20), d_city VARCHAR(20), d_state CHAR(2), d_zip CHAR(9), d_tax DECIMAL(4,4),
      d_ytd DECIMAL(12,2), d_next_o_id INT, PRIMARY KEY (d_w_id, d_id)) ENGINE=%s]],
   [[CREATE TABLE IF NOT EXISTS customer (
      c_id INT NOT NULL, c_d_id INT NOT NULL, c_w_id INT NOT NULL, c_first VARCHAR(16), c_middle CHAR(2),
      c_last VARCHAR(16), c_street_1 VARCHAR(20), c_street_2 VARCHAR(20), c_city VARCHAR(20),
      c_state CHAR(2), c_zip CHAR(9), c_phone CHAR(16), c_since DATETIME, c_credit CHAR(2),
      c_credit_lim DECIMAL(12,2), c_discount DECIMAL(4,4), c_balance DECIMAL(12,2),
      c_ytd_payment DECIMAL(12,2), c_payment_cnt INT, c_delivery_cnt INT, c_data VARCHAR(500),
      PRIMARY KEY (c_w_id, c_d_id, c_id), KEY idx_customer (c_w_id, c_d_id, c_last, c_first)) ENGINE=%s]],
   [[CREATE TABLE IF NOT EXISTS history (
      h_c_id INT, h_c_d_id INT, h_c_w_id INT, h_d_id INT, h_w_id INT, h_date DATETIME,
      h_amount DECIMAL(6,2), h_data VARCHAR(24)) ENGINE=%s]],
   [[CREATE TABLE IF NOT EXISTS new_order (
      no_o_id INT NOT NULL, no_d_id INT NOT NULL, no_w_id INT NOT NULL,
      PRIMARY KEY (no_w_id, no_d_id, no_o_id)) ENGINE=%s]],
   [[CREATE TABLE IF NOT EXISTS orders (
      o_id INT NOT NULL, o_d_id INT NOT NULL, o_w_id INT NOT NULL, o_c_id INT, o_entry_d DATETIME,
      o_carrier_id INT, o_ol_cnt INT, o_all_local INT,
      PRIMARY KEY (o_w_id, o_d_id, o_id), KEY idx_order (o_w_id, o_d_id, o_c_id, o_id)) ENGINE=%s]],
   [[CREATE TABLE IF NOT EXISTS order_line (
      ol_o_id INT NOT NULL, ol_d_id INT NOT NULL, ol_w_id INT NOT NULL, ol_number INT NOT NULL,
      ol_i_id INT, ol_supply_w_id INT, ol_delivery_d DATETIME, ol_quantity INT, ol_amount DECIMAL(6,2),
      ol_dist_info CHAR(24), PRIMARY KEY (ol_w_id, ol_d_id, ol_o_id, ol_number)) ENGINE=%s]],
   [[CREATE TABLE IF NOT EXISTS item (
      i_id INT NOT NULL, i_im_id INT, i_name VARCHAR(24), i_price DECIMAL(5,2), i_data VARCHAR(50),
      PRIMARY KEY (i_id)) ENGINE=%s]],
   [[CREATE TABLE IF NOT EXISTS stock (
      s_i_id INT NOT NULL, s_w_id INT NOT NULL, s_quantity INT, s_dist_01 CHAR(24), s_dist_02 CHAR(24),
      s_dist_03 CHAR(24), s_dist_04 CHAR(24), s_dist_05 CHAR(24), s_dist_06 CHAR(24), s_dist_07 CHAR(24),
      s_dist_08 CHAR(24), s_dist_09 CHAR(24), s_dist_10 CHAR(24), s_ytd INT, s_order_cnt INT,
      s_remote_cnt INT, s_data VARCHAR(50), PRIMARY KEY (s_w_id, s_i_id)) ENGINE=%s]],
}

local TABLES = { "warehouse", "district", "customer", "history", "new_order", "orders", "order_line", "item", "stock" }

local function bulk(con, head, rows_fn, n)
   local batch = 0
   con:bulk_insert_init(head)
   for i = 1, n do
      con:bulk_insert_next(rows_fn(i))
      batch = batch + 1
   end
   con:bulk_insert_done()
end

local function load_items(con)
   bulk(con, "INSERT INTO item VALUES", function(i)
      return string.format("(%d,%d,'%s',%.2f,'%s')", i, rnd(1, 10000), astring(14, 24), rnd(100, 10000) / 100,
         data_string())
   end, items())
end

local function load_warehouse(con, w)
   con:query(string.format("INSERT INTO warehouse VALUES (%d,'%s','%s','%s','%s','%s','%s',%.4f,%d.00)",
      w, astring(6, 10), astring(10, 20), astring(10, 20), astring(10, 20), astring(2, 2), zip(),
      rnd(0, 2000) / 10000, district_ytd() * DISTRICTS))
   local ncust = customers_per_district()
   bulk(con, "INSERT INTO district VALUES", function(d)
      return string.format("(%d,%d,'%s','%s','%s','%s','%s','%s',%.4f,%d.00,%d)", d, w, astring(6, 10),
         astring(10, 20), astring(10, 20), astring(10, 20), astring(2, 2), zip(), rnd(0, 2000) / 10000,
         district_ytd(), ncust + 1)
   end, DISTRICTS)
end

local function load_stock(con, w)
   bulk(con, "INSERT INTO stock VALUES", function(i)
      local dists = {}
      for k = 1, 10 do
         dists[k] = "'" .. astring(24, 24) .. "'"
      end
      return string.format("(%d,%d,%d,%s,0,0,0,'%s')", i, w, rnd(10, 100), table.concat(dists, ","), data_string())
   end, items())
end

local function load_customers(con, w)
   local ncust, nnames = customers_per_district(), last_names()
   for d = 1, DISTRICTS do
      bulk(con, "INSERT INTO customer VALUES", function(c)
         local last = c <= nnames and last_name(c - 1) or last_name(nurand(255, 0, nnames - 1, C_LAST_LOAD))
         return string.format(
            "(%d,%d,%d,'%s','OE','%s','%s','%s','%s','%s','%s','%s',NOW(),'%s',50000.00,%.4f,-10.00,10.00,1,0,'%s')",
            c, d, w, astring(8, 16), last, astring(10, 20), astring(10, 20), astring(10, 20), astring(2, 2), zip(),
            nstring(16, 16), rnd(1, 10) == 1 and "BC" or "GC", rnd(0, 5000) / 10000, astring(300, 500))
      end, ncust)
      bulk(con, "INSERT INTO history VALUES", function(c)
         return string.format("(%d,%d,%d,%d,%d,NOW(),10.00,'%s')", c, d, w, d, w, astring(12, 24))
      end, ncust)
   end
end

-- a random permutation of 1..n (the customers of the initial orders)
local function permutation(n)
   local p = {}
   for i = 1, n do
      p[i] = i
   end
   for i = n, 2, -1 do
      local j = rnd(1, i)
      p[i], p[j] = p[j], p[i]
   end
   return p
end

local function load_orders(con, w)
   local norders = customers_per_district()
   local first_new = norders - math.floor(norders * 0.3) + 1 -- the last 30 % are undelivered (900 of 3,000)
   for d = 1, DISTRICTS do
      local cust = permutation(norders)
      local counts = {}
      bulk(con, "INSERT INTO orders VALUES", function(o)
         counts[o] = rnd(5, 15)
         local carrier = o < first_new and tostring(rnd(1, 10)) or "NULL"
         return string.format("(%d,%d,%d,%d,NOW(),%s,%d,1)", o, d, w, cust[o], carrier, counts[o])
      end, norders)
      con:bulk_insert_init("INSERT INTO order_line VALUES")
      for o = 1, norders do
         for n = 1, counts[o] do
            local delivered = o < first_new
            con:bulk_insert_next(string.format("(%d,%d,%d,%d,%d,%d,%s,5,%.2f,'%s')", o, d, w, n, rnd(1, items()), w,
               delivered and "NOW()" or "NULL", delivered and 0 or rnd(1, 999999) / 100, astring(24, 24)))
         end
      end
      con:bulk_insert_done()
      bulk(con, "INSERT INTO new_order VALUES", function(k)
         return string.format("(%d,%d,%d)", first_new + k - 1, d, w)
      end, norders - first_new + 1)
   end
end

-- The loader's tasks: the item table, then per warehouse its warehouse+district rows, stock, customers
-- (with history) and orders (with order lines and new orders); thread t takes tasks t+1, t+1+threads, ...
local function loader_tasks()
   local tasks = { { "item", 0 } }
   for w = 1, warehouses() do
      for _, what in ipairs({ "warehouse", "stock", "customer", "orders" }) do
         tasks[#tasks + 1] = { what, w }
      end
   end
   return tasks
end

local LOADERS = { item = load_items, warehouse = load_warehouse, stock = load_stock, customer = load_customers,
   orders = load_orders }

function cmd_prepare()
   local drv = sysbench.sql.driver()
   local con = drv:connect()
   for _, ddl in ipairs(SCHEMA) do
      con:query(string.format(ddl, sysbench.opt.mysql_storage_engine))
   end
   local tasks = loader_tasks()
   for k = sysbench.tid + 1, #tasks, sysbench.opt.threads do
      local what, w = tasks[k][1], tasks[k][2]
      seed_loader(k)
      LOADERS[what](con, w)
      print(string.format("thread %d loaded %s%s", sysbench.tid, what, w > 0 and (" of warehouse " .. w) or ""))
   end
   loader_state = nil
   con:disconnect()
end

function cmd_cleanup()
   local drv = sysbench.sql.driver()
   local con = drv:connect()
   for _, t in ipairs(TABLES) do
      con:query("DROP TABLE IF EXISTS " .. t)
   end
end

function cmd_nurand()
   local n = sysbench.opt.nurand_samples
   local gens = {
      { "customer", function() return nurand(1023, 1, 3000, C_ID) end },
      { "item", function() return nurand(8191, 1, 100000, C_ITEM) end },
      { "last", function() return nurand(255, 0, 999, C_LAST_RUN) end },
   }
   for _, g in ipairs(gens) do
      local counts = {}
      for _ = 1, n do
         local v = g[2]()
         counts[v] = (counts[v] or 0) + 1
      end
      local parts = {}
      for v, c in pairs(counts) do
         parts[#parts + 1] = string.format('"%d":%d', v, c)
      end
      io.write(string.format('NURAND {"name":"%s","a":%d,"c":%d,"counts":{%s}}\n', g[1],
         g[1] == "customer" and 1023 or (g[1] == "item" and 8191 or 255),
         g[1] == "customer" and C_ID or (g[1] == "item" and C_ITEM or C_LAST_RUN), table.concat(parts, ",")))
   end
end

sysbench.cmdline.commands = {
   prepare = { cmd_prepare, sysbench.cmdline.PARALLEL_COMMAND },
   cleanup = { cmd_cleanup },
   nurand = { cmd_nurand },
}

-- ---------------------------------------------------------------------------------------------------
-- Per-operation statistics: dbperf_ops.lua (the DBPERF-OPS protocol), plus one DBPERF-TPCC line per
-- thread with what the protocol has no field for: retries by error number and intended rollbacks
-- ---------------------------------------------------------------------------------------------------

local extra

local function new_extra()
   local e = {}
   for _, t in ipairs(TYPES) do
      e[t] = { by_errno = {}, rolled_back = 0 }
   end
   return e
end

local function extra_json()
   local parts = {}
   for _, t in ipairs(TYPES) do
      local errnos = {}
      for errno, n in pairs(extra[t].by_errno) do
         errnos[#errnos + 1] = string.format('"%d":%d', errno, n)
      end
      table.sort(errnos)
      parts[#parts + 1] = string.format('"%s":{"retry_errors":{%s},"rolled_back":%d}', t, table.concat(errnos, ","),
         extra[t].rolled_back)
   end
   return string.format('{"thread":%d,"ops":{%s}}', sysbench.tid, table.concat(parts, ","))
end

-- ---------------------------------------------------------------------------------------------------
-- The five transactions
-- ---------------------------------------------------------------------------------------------------

local con, warm_until

function thread_init()
   local drv = sysbench.sql.driver()
   con = drv:connect()
   extra = new_extra()
   ops.init()
   warm_until = ops.now() + (tonumber(sysbench.opt.dbperf_warmup_s) or 0)
end

function thread_done()
   ops.report()
   io.write("DBPERF-TPCC " .. extra_json() .. "\n")
   io.flush()
   con:disconnect()
end

local function q(sql, ...)
   return con:query(string.format(sql, ...))
end

local function row(sql, ...)
   local rs = con:query(string.format(sql, ...))
   local r = rs and rs.nrows > 0 and rs:fetch_row() or nil
   return r
end

local function rows(sql, ...)
   local rs = con:query(string.format(sql, ...))
   local out = {}
   if rs then
      for i = 1, rs.nrows do
         out[i] = rs:fetch_row()
      end
   end
   return out
end

local function other_warehouse(w)
   local o = rnd(1, warehouses() - 1)
   return o >= w and o + 1 or o
end

-- the customer of a Payment / Order-Status: 60 % by last name (the middle one of those sorted by
-- c_first), 40 % by NURand id; returns its id
local function pick_customer(w, d, by_name, last, c_id)
   if not by_name then
      return c_id
   end
   local ids = rows("SELECT c_id FROM customer WHERE c_w_id=%d AND c_d_id=%d AND c_last='%s' ORDER BY c_first", w, d,
      last)
   if #ids == 0 then
      return c_id -- cannot happen with names drawn from the loaded range; keeps the transaction valid
   end
   return tonumber(ids[math.ceil(#ids / 2)][1])
end

local ROLLBACK = {}

local function new_order(a)
   q("BEGIN")
   row("SELECT c_discount, c_last, c_credit, w_tax FROM customer, warehouse WHERE w_id=%d AND c_w_id=w_id AND "
      .. "c_d_id=%d AND c_id=%d", a.w, a.d, a.c)
   local dist = row("SELECT d_next_o_id, d_tax FROM district WHERE d_w_id=%d AND d_id=%d FOR UPDATE", a.w, a.d)
   local o_id = tonumber(dist[1])
   q("UPDATE district SET d_next_o_id=%d WHERE d_w_id=%d AND d_id=%d", o_id + 1, a.w, a.d)
   q("INSERT INTO orders VALUES (%d,%d,%d,%d,NOW(),NULL,%d,%d)", o_id, a.d, a.w, a.c, #a.lines, a.all_local)
   q("INSERT INTO new_order VALUES (%d,%d,%d)", o_id, a.d, a.w)
   for n, l in ipairs(a.lines) do
      local it = row("SELECT i_price, i_name, i_data FROM item WHERE i_id=%d", l.i)
      if it == nil then
         q("ROLLBACK") -- the 1 % with an unused item id: the standard's intended rollback
         return ROLLBACK
      end
      local st = row("SELECT s_quantity, s_data, s_dist_%02d FROM stock WHERE s_i_id=%d AND s_w_id=%d FOR UPDATE",
         a.d, l.i, l.w)
      local qty = tonumber(st[1])
      qty = qty - l.qty >= 10 and qty - l.qty or qty - l.qty + 91
      q("UPDATE stock SET s_quantity=%d, s_ytd=s_ytd+%d, s_order_cnt=s_order_cnt+1, s_remote_cnt=s_remote_cnt+%d "
         .. "WHERE s_i_id=%d AND s_w_id=%d", qty, l.qty, l.w == a.w and 0 or 1, l.i, l.w)
      q("INSERT INTO order_line VALUES (%d,%d,%d,%d,%d,%d,NULL,%d,%.2f,'%s')", o_id, a.d, a.w, n, l.i, l.w, l.qty,
         l.qty * tonumber(it[1]), st[3])
   end
   q("COMMIT")
end

local function payment(a)
   q("BEGIN")
   q("UPDATE warehouse SET w_ytd=w_ytd+%.2f WHERE w_id=%d", a.amount, a.w)
   local wh = row("SELECT w_name, w_street_1, w_street_2, w_city, w_state, w_zip FROM warehouse WHERE w_id=%d", a.w)
   q("UPDATE district SET d_ytd=d_ytd+%.2f WHERE d_w_id=%d AND d_id=%d", a.amount, a.w, a.d)
   local di = row("SELECT d_name, d_street_1, d_street_2, d_city, d_state, d_zip FROM district WHERE d_w_id=%d AND "
      .. "d_id=%d", a.w, a.d)
   local c = pick_customer(a.c_w, a.c_d, a.by_name, a.last, a.c)
   local cu = row("SELECT c_first, c_middle, c_last, c_street_1, c_street_2, c_city, c_state, c_zip, c_phone, "
      .. "c_since, c_credit, c_credit_lim, c_discount, c_balance FROM customer WHERE c_w_id=%d AND c_d_id=%d AND "
      .. "c_id=%d FOR UPDATE", a.c_w, a.c_d, c)
   if cu[11] == "BC" then
      local old = row("SELECT c_data FROM customer WHERE c_w_id=%d AND c_d_id=%d AND c_id=%d", a.c_w, a.c_d, c)
      local data = string.sub(string.format("%d %d %d %d %d %.2f %s", c, a.c_d, a.c_w, a.d, a.w, a.amount, old[1]),
         1, 500)
      q("UPDATE customer SET c_balance=c_balance-%.2f, c_ytd_payment=c_ytd_payment+%.2f, "
         .. "c_payment_cnt=c_payment_cnt+1, c_data='%s' WHERE c_w_id=%d AND c_d_id=%d AND c_id=%d", a.amount, a.amount,
         data, a.c_w, a.c_d, c)
   else
      q("UPDATE customer SET c_balance=c_balance-%.2f, c_ytd_payment=c_ytd_payment+%.2f, "
         .. "c_payment_cnt=c_payment_cnt+1 WHERE c_w_id=%d AND c_d_id=%d AND c_id=%d", a.amount, a.amount, a.c_w,
         a.c_d, c)
   end
   q("INSERT INTO history VALUES (%d,%d,%d,%d,%d,NOW(),%.2f,'%s')", c, a.c_d, a.c_w, a.d, a.w, a.amount,
      string.sub(wh[1] .. "    " .. di[1], 1, 24))
   q("COMMIT")
end

local function order_status(a)
   q("BEGIN")
   local c = pick_customer(a.w, a.d, a.by_name, a.last, a.c)
   row("SELECT c_balance, c_first, c_middle, c_last FROM customer WHERE c_w_id=%d AND c_d_id=%d AND c_id=%d", a.w, a.d,
      c)
   local o = row("SELECT o_id, o_entry_d, o_carrier_id FROM orders WHERE o_w_id=%d AND o_d_id=%d AND o_c_id=%d "
      .. "ORDER BY o_id DESC LIMIT 1", a.w, a.d, c)
   if o then
      rows("SELECT ol_i_id, ol_supply_w_id, ol_quantity, ol_amount, ol_delivery_d FROM order_line WHERE ol_w_id=%d "
         .. "AND ol_d_id=%d AND ol_o_id=%s", a.w, a.d, o[1])
   end
   q("COMMIT")
end

local function delivery(a)
   q("BEGIN")
   for d = 1, DISTRICTS do
      local no = row("SELECT no_o_id FROM new_order WHERE no_w_id=%d AND no_d_id=%d ORDER BY no_o_id LIMIT 1 FOR UPDATE",
         a.w, d)
      if no then
         local o_id = no[1]
         q("DELETE FROM new_order WHERE no_w_id=%d AND no_d_id=%d AND no_o_id=%s", a.w, d, o_id)
         local o = row("SELECT o_c_id FROM orders WHERE o_w_id=%d AND o_d_id=%d AND o_id=%s", a.w, d, o_id)
         q("UPDATE orders SET o_carrier_id=%d WHERE o_w_id=%d AND o_d_id=%d AND o_id=%s", a.carrier, a.w, d, o_id)
         q("UPDATE order_line SET ol_delivery_d=NOW() WHERE ol_w_id=%d AND ol_d_id=%d AND ol_o_id=%s", a.w, d, o_id)
         local total = row("SELECT SUM(ol_amount) FROM order_line WHERE ol_w_id=%d AND ol_d_id=%d AND ol_o_id=%s", a.w,
            d, o_id)
         q("UPDATE customer SET c_balance=c_balance+%s, c_delivery_cnt=c_delivery_cnt+1 WHERE c_w_id=%d AND "
            .. "c_d_id=%d AND c_id=%s", total[1] or "0", a.w, d, o[1])
      end
   end
   q("COMMIT")
end

local function stock_level(a)
   q("BEGIN")
   local di = row("SELECT d_next_o_id FROM district WHERE d_w_id=%d AND d_id=%d", a.w, a.d)
   local next_o = tonumber(di[1])
   row("SELECT COUNT(DISTINCT s_i_id) FROM order_line, stock WHERE ol_w_id=%d AND ol_d_id=%d AND ol_o_id<%d AND "
      .. "ol_o_id>=%d AND s_w_id=%d AND s_i_id=ol_i_id AND s_quantity<%d", a.w, a.d, next_o, next_o - 20, a.w,
      a.threshold)
   q("COMMIT")
end

-- inputs are drawn before the first attempt, so a retried transaction repeats the same one
local function customer_inputs(a)
   a.by_name = rnd(1, 100) <= 60
   a.last = last_name(nurand(255, 0, name_range(), C_LAST_RUN))
   a.c = nurand(1023, 1, customers_per_district(), C_ID)
   return a
end

local function new_order_inputs(w)
   local a = { w = w, d = rnd(1, DISTRICTS), c = nurand(1023, 1, customers_per_district(), C_ID), lines = {},
      all_local = 1 }
   local n = rnd(5, 15)
   local rollback = rnd(1, 100) == 1
   for k = 1, n do
      local l = { i = nurand(8191, 1, items(), C_ITEM), w = w, qty = rnd(1, 10) }
      if warehouses() > 1 and rnd(1, 100) == 1 then
         l.w = other_warehouse(w)
         a.all_local = 0
      end
      a.lines[k] = l
   end
   -- the order's items in (supply warehouse, item) order: fewer deadlocks between New-Orders
   table.sort(a.lines, function(x, y)
      return x.w < y.w or (x.w == y.w and x.i < y.i)
   end)
   if rollback then
      a.lines[n].i = items() + 1 -- an unused item id, last: the work is done, then rolled back
   end
   return a
end

local function payment_inputs(w)
   local a = customer_inputs({ w = w, d = rnd(1, DISTRICTS), amount = rnd(100, 500000) / 100 })
   a.c_w, a.c_d = w, a.d
   if warehouses() > 1 and rnd(1, 100) <= 15 then
      a.c_w, a.c_d = other_warehouse(w), rnd(1, DISTRICTS)
   end
   return a
end

local MIX = {
   { 45, "NEW_ORDER", new_order, new_order_inputs },
   { 88, "PAYMENT", payment, payment_inputs },
   { 92, "ORDER_STATUS", order_status, function(w) return customer_inputs({ w = w, d = rnd(1, DISTRICTS) }) end },
   { 96, "DELIVERY", delivery, function(w) return { w = w, carrier = rnd(1, 10) } end },
   { 100, "STOCK_LEVEL", stock_level, function(w) return { w = w, d = rnd(1, DISTRICTS), threshold = rnd(10, 20) } end },
}

function event()
   local roll = rnd(1, 100)
   local pick
   for _, m in ipairs(MIX) do
      if roll <= m[1] then
         pick = m
         break
      end
   end
   local name, fn = pick[2], pick[3]
   local args = pick[4](rnd(1, warehouses())) -- the home warehouse, drawn per transaction
   local t0 = ops.start()
   local retries, by_errno = 0, {}
   local ok, res
   while true do
      ok, res = pcall(fn, args)
      if ok then
         break
      end
      if type(res) ~= "table" or res.errcode ~= sysbench.error.RESTART_EVENT then
         error(res, 0) -- a real SQL or script error: fatal, the run fails
      end
      pcall(con.query, con, "ROLLBACK") -- a lock-wait timeout (1205) leaves the transaction open
      retries = retries + 1
      by_errno[res.sql_errno] = (by_errno[res.sql_errno] or 0) + 1
      if retries >= sysbench.opt.max_retries then
         break
      end
   end
   if ok then
      ops.done(name, t0, retries)
   else
      ops.failed(name, t0, retries)
   end
   if t0 >= warm_until then -- the same cut as dbperf_ops: transactions that start after the warm-up
      local e = extra[name]
      for errno, n in pairs(by_errno) do
         e.by_errno[errno] = (e.by_errno[errno] or 0) + n
      end
      if ok and res == ROLLBACK then
         e.rolled_back = e.rolled_back + 1
      end
   end
end
