"""upload-artifact@v4 stand-in: copy matching files into $ACT_ARTIFACTS_DIR/<run id>/<name>/."""

import glob
import json
import os
import shutil
import sys
from pathlib import Path


def fail(msg: str) -> None:
    print(f"::error::{msg}")
    sys.exit(1)


store = os.environ.get("ACT_ARTIFACTS_DIR")
if not store:
    fail("upload-artifact stand-in: ACT_ARTIFACTS_DIR is not set")
name = os.environ["A_NAME"] or "artifact"
if any(c in name for c in '":<>|*?\r\n\\/'):
    fail(f"The artifact name is not valid: {name}")
run_id = os.environ.get("A_RUN_ID") or os.environ.get("GITHUB_RUN_ID", "1")
hidden = os.environ.get("A_HIDDEN", "false") == "true"
lines = [l.strip() for l in os.environ["A_PATH"].splitlines() if l.strip()]
include = [l for l in lines if not l.startswith("!")]
exclude = [l[1:] for l in lines if l.startswith("!")]


def is_hidden(p: Path, root: Path) -> bool:
    try:
        parts = p.relative_to(root).parts
    except ValueError:
        parts = p.parts
    return any(part.startswith(".") for part in parts)


files: list[Path] = []
roots: list[Path] = []
for pat in include:
    matches = glob.glob(pat, recursive=True)
    for m in matches:
        mp = Path(m).absolute()
        roots.append(mp if mp.is_dir() else mp.parent)
        if mp.is_dir():
            files += [f for f in mp.rglob("*") if f.is_file() and (hidden or not is_hidden(f, mp))]
        elif mp.is_file() and (hidden or not mp.name.startswith(".")):
            files.append(mp)
excluded = set()
for pat in exclude:
    for m in glob.glob(pat, recursive=True):
        mp = Path(m).absolute()
        excluded |= {mp} | (set(mp.rglob("*")) if mp.is_dir() else set())
files = sorted({f for f in files if f not in excluded})

if not files:
    how = os.environ.get("A_IF_NONE", "warn")
    msg = f"No files were found with the provided path: {os.environ['A_PATH'].strip()}. No artifacts will be uploaded."
    if how == "error":
        fail(msg)
    print(f"::warning::{msg}" if how == "warn" else msg)
    sys.exit(0)

root = Path(os.path.commonpath([str(r) for r in roots])) if len(roots) > 1 else roots[0]
dest = Path(store) / run_id / name
if dest.exists():
    if os.environ.get("A_OVERWRITE", "false") != "true":
        fail(
            "Failed to CreateArtifact: Received non-retryable error: Failed request: (409) Conflict: "
            "an artifact with this name already exists on the workflow run"
        )
    shutil.rmtree(dest)
dest.mkdir(parents=True)
size = 0
for f in files:
    rel = f.relative_to(root)
    (dest / rel).parent.mkdir(parents=True, exist_ok=True)
    shutil.copy2(f, dest / rel)
    size += f.stat().st_size
meta = {
    "name": name,
    "run_id": run_id,
    "files": len(files),
    "size": size,
    "retention_days": os.environ.get("A_RETENTION"),
    "job": os.environ.get("GITHUB_JOB"),
}
(Path(store) / run_id / f"{name}.meta.json").write_text(json.dumps(meta, indent=1))
print(f"upload-artifact stand-in: {len(files)} file(s), {size} bytes from {root} -> {dest}")
with open(os.environ["GITHUB_OUTPUT"], "a") as out:
    out.write(f"artifact-id={abs(hash((run_id, name))) % 10**9}\nartifact-url=file://{dest}\n")
