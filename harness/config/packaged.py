"""What the wheel carries for dbperf outside a project: the catalogue and the committed cost baselines.

``harness/catalogue/`` holds the repository's ``servers/``, ``scenarios/`` and ``baselines/cost/``
(symlinks in the checkout, copies in the wheel). Outside a project the catalogue is read where it is;
the cost baselines are copied into the user's baselines folder (``$XDG_DATA_HOME/dbperf/baselines``),
where ``dbperf baseline record`` also writes, so that one folder holds every baseline a command reads.

A copy the user has not touched is refreshed when a newer dbperf ships another file; one the user
recorded or edited (its content no longer what was copied) is never replaced. ``.packaged.json`` in
the cost folder keeps the hash of each copy.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

#: Where the catalogue shipped inside the package lives (used outside a project checkout).
PACKAGE_CATALOGUE = Path(__file__).resolve().parent.parent / "catalogue"
#: The cost baselines shipped inside the package (their folder layout is ``baselines/cost/``'s).
PACKAGED_COST_BASELINES = PACKAGE_CATALOGUE / "baselines" / "cost"
LEDGER = ".packaged.json"


def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def install_cost_baselines(baselines_dir: Path, source: Path = PACKAGED_COST_BASELINES) -> list[Path]:
    """Copy the packaged cost baselines into ``baselines_dir/cost`` (see the module's docstring); the
    files written. A folder that cannot be written is left as it is: commands then say "no baseline"."""
    if not source.is_dir():
        return []
    target = baselines_dir / "cost"
    ledger_path = target / LEDGER
    try:
        ledger: dict[str, str] = json.loads(ledger_path.read_text()) if ledger_path.is_file() else {}
    except (OSError, ValueError):
        ledger = {}
    written: list[Path] = []
    try:
        for packaged in sorted(source.glob("*/*/*/*t.json")):
            relative = packaged.relative_to(source).as_posix()
            data = packaged.read_bytes()
            dest = target / relative
            if dest.is_file():
                current = _digest(dest.read_bytes())
                if current == _digest(data) or ledger.get(relative) != current:
                    continue  # already this file, or the user's own: never replaced
            dest.parent.mkdir(parents=True, exist_ok=True)
            tmp = dest.with_suffix(".json.tmp")
            tmp.write_bytes(data)
            tmp.replace(dest)
            ledger[relative] = _digest(data)
            written.append(dest)
        if written:
            ledger_path.write_text(json.dumps(ledger, indent=2, sort_keys=True) + "\n")
    except OSError:
        return written
    return written
