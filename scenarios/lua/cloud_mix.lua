-- dbperf cloud-vendor mix: four point selects and one indexed update per transaction
-- (read/write 4:1), the mix several cloud MySQL vendors publish. Uses sysbench's oltp_common,
-- so the usual options (--tables, --table-size, --skip_trx, --rand-type ...) apply.
require("oltp_common")

function prepare_statements()
   sysbench.opt.point_selects = 4
   sysbench.opt.index_updates = 1
   if not sysbench.opt.skip_trx then
      prepare_begin()
      prepare_commit()
   end
   prepare_point_selects()
   prepare_index_updates()
end

function event()
   if not sysbench.opt.skip_trx then
      begin()
   end
   execute_point_selects()
   execute_index_updates()
   if not sysbench.opt.skip_trx then
      commit()
   end
end
