"""The last resort of every entry point: an exception dbperf did not expect is a bug in dbperf.

The ``dbperf`` command, the pytest plugin and the trusted builders (``python -m
harness.report.trusted_comment`` / ``check_run``) catch what no :class:`~harness.errors.HarnessError`
handler did, write the traceback to ``$TMPDIR/dbperf-crash-<UTC time>-<pid>.txt`` and print one line
naming the file; the command exits 2 (:data:`EXIT_CRASH`), never 1, which means a regression (README.md,
"Exit codes"). This module needs only the standard library:
the trusted builders import it without dbperf's other dependencies.
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
import traceback
from pathlib import Path

#: A bug is an error of the harness, not a finding: the harness-error exit code.
EXIT_CRASH = 2


def crash_line(exc: BaseException, program: str = "dbperf") -> str:
    """Write ``exc``'s traceback to a file and return the one line to print (it names the file).

    When the file cannot be written (a full or read-only TMPDIR) the traceback goes to stderr first,
    and the line says so."""
    first = (str(exc).splitlines() or [""])[0][:200]
    what = f"{type(exc).__name__}: {first}" if first else type(exc).__name__
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    path = Path(tempfile.gettempdir()) / f"dbperf-crash-{stamp}-{os.getpid()}.txt"
    text = "".join(traceback.format_exception(exc))
    try:
        with path.open("x", encoding="utf-8") as out:
            out.write(f"{program} {' '.join(sys.argv[1:])}\n\n{text}")
        where = f"the traceback is in {path}"
    except OSError as write_error:
        sys.stderr.write(text)
        where = f"the traceback is above ({path} could not be written: {write_error.strerror})"
    return f"dbperf: internal error ({what}): a bug in dbperf; {where}; please report it with that traceback"
