"""Thread sweeps whose work per transaction changes with the thread count are flagged (issue 34 item 6):
the 2-core sweep of threadpool_read_write read 400 rows per transaction at 1-16 threads and 281-374 at
32-64, and its CPU time per transaction fell from ~1,300 us to 122-623 us, printed without a word."""

from __future__ import annotations

import dataclasses
import io

from support.factories import run
from support.reports import runs_for

from harness.report.runs_markdown import render_runs_markdown
from harness.report.sweep_work import sweep_notes
from harness.report.terminal import print_summary

ROWS = {1: 400.0, 8: 400.2, 16: 399.9, 32: 374.0, 64: 281.0}
CPU = {1: 1300.0, 8: 1280.0, 16: 1310.0, 32: 623.0, 64: 122.0}


def sweep(rows=ROWS, cpu=CPU):
    out = []
    for threads in rows:
        for rep in range(2):
            r = dataclasses.replace(run(2000.0, threads=threads, cpu=cpu[threads]), run_id=f"r{threads}-{rep}")
            metrics = dataclasses.replace(r.metrics, work={"rows_read": rows[threads], "handler_reads": rows[threads]})
            out.append(dataclasses.replace(r, metrics=metrics))
    return out


def test_a_sweep_whose_rows_and_cpu_per_transaction_move_is_flagged_at_the_thread_counts_that_moved():
    notes = sweep_notes(sweep())
    assert len(notes) == 3  # rows read, handler reads, CPU time
    rows = next(n for n in notes if "rows read/txn" in n)
    assert "400.0 at 1, " in rows and "281.0 at 64 threads; -30 % at 64, beyond 5 %" in rows
    assert "the runs at 32, 64 threads did not measure a steady window" in rows
    cpu = next(n for n in notes if "CPU" in n)
    assert "-91 % at 64, beyond 30 %" in cpu and "runs at 32, 64 threads" in cpu


def test_a_steady_sweep_and_a_single_thread_count_say_nothing():
    flat = {t: 400.0 * (1 + 0.001 * i) for i, t in enumerate(ROWS)}
    assert sweep_notes(sweep(rows=flat, cpu={t: 1300.0 * (1 + 0.1 * (t > 16)) for t in ROWS})) == []
    assert sweep_notes([r for r in sweep() if r.threads == 64]) == []
    assert sweep_notes(runs_for("mariadb-10.11")) == []  # no work vector, CPU steady: nothing to say


def test_the_terminal_summary_and_the_markdown_report_carry_the_flag():
    runs = sweep()
    stream = io.StringIO()
    print_summary(runs, stream)
    assert (
        "warning: oltp_point_select on mariadb-local (time runs): rows read/txn changes with the thread count"
        in stream.getvalue()
    )
    text = render_runs_markdown(runs)
    assert "rows read/txn changes with the thread count" in text.split("Noise and measurement warnings", 1)[1]
