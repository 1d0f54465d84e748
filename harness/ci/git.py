"""Git plumbing for ``dbperf ci``: refs, merge bases, the name-status diff, and a tree at a ref."""

from __future__ import annotations

import io
import posixpath
import subprocess
import tarfile
from pathlib import Path

from harness.ci.records import SCENARIOS, SERVERS, Area, FileChange
from harness.errors import GitError
from harness.workspace import child_environment


def _git(repo: Path, *args: str) -> subprocess.CompletedProcess[bytes]:
    try:
        return subprocess.run(
            ["git", "-C", str(repo), *args], capture_output=True, check=False, env=child_environment()
        )
    except OSError as exc:
        raise GitError(f"cannot run git ({exc.strerror}); install git") from exc


def _git_text(repo: Path, *args: str, what: str) -> str:
    out = _git(repo, *args)
    if out.returncode != 0:
        detail = out.stderr.decode(errors="replace").strip().splitlines()
        raise GitError(f"{what}: {detail[-1] if detail else f'git exited with {out.returncode}'}")
    return out.stdout.decode(errors="replace").strip()


def _check_repo(repo: Path) -> None:
    if not repo.is_dir():
        raise GitError(f"{repo} is not a directory; run dbperf ci in a clone of the project")
    if _git(repo, "rev-parse", "--show-toplevel").returncode != 0:
        raise GitError(f"{repo} is not inside a git repository; dbperf ci needs the project's git history")


def resolve_ref(repo: Path, ref: str) -> str:
    """The commit SHA ``ref`` names, or a :class:`GitError` saying how to get it."""
    _check_repo(repo)
    if not ref or ref.startswith("-"):
        raise GitError(f"invalid git ref {ref!r}")
    out = _git(repo, "rev-parse", "--verify", "--quiet", "--end-of-options", f"{ref}^{{commit}}")
    if out.returncode != 0:
        hint = "fetch it first"
        if _git(repo, "rev-parse", "--is-shallow-repository").stdout.strip() == b"true":
            hint = "this clone is shallow: use actions/checkout with fetch-depth: 0, or git fetch --unshallow"
        raise GitError(f"unknown git ref '{ref}' in {repo} ({hint})")
    return out.stdout.decode().strip()


def merge_base(repo: Path, base: str, head: str, base_ref: str, head_ref: str) -> str:
    out = _git(repo, "merge-base", base, head)
    if out.returncode != 0:
        raise GitError(f"'{base_ref}' and '{head_ref}' share no history; compare refs of the same project")
    return out.stdout.decode().strip()


def area_of(path: str) -> Area:
    parts = path.split("/")
    if parts[0] == "harness" or path == "pyproject.toml":
        return "harness"
    if parts[0] == "baselines":
        return "baseline"
    if parts[0] == SERVERS:
        return "server" if len(parts) == 2 and path.endswith(".toml") else "server-file"
    if parts[0] == SCENARIOS:
        return "scenario" if len(parts) == 2 and path.endswith(".toml") else "scenario-file"
    return "other"


def diff_changes(repo: Path, base_sha: str, head_sha: str) -> list[FileChange]:
    """``git diff --name-status`` between two commits, renames and copies detected, paths relative to
    ``repo`` (which may be a subfolder of the git work tree)."""
    args = (
        "diff",
        "--name-status",
        "-z",
        "-M",
        "-C",
        "--find-copies-harder",
        "--relative",
        "--no-color",
        "--no-ext-diff",
        base_sha,
        head_sha,
    )
    out = _git(repo, *args)
    if out.returncode != 0:
        raise GitError(f"git diff {base_sha[:12]} {head_sha[:12]} failed: {out.stderr.decode().strip()}")
    tokens = out.stdout.decode(errors="surrogateescape").split("\0")
    changes: list[FileChange] = []
    i = 0
    while i < len(tokens) and tokens[i]:
        status = tokens[i]
        letter = status[0]
        if letter in "RC":
            old, new = tokens[i + 1], tokens[i + 2]
            similarity = int(status[1:]) if status[1:].isdigit() else None
            changes.append(FileChange(letter, new, old, similarity, area_of(new)))
            i += 3
        else:
            changes.append(FileChange(letter, tokens[i + 1], area=area_of(tokens[i + 1])))
            i += 2
    return changes


def materialise(repo: Path, ref: str, workdir: Path) -> Path:
    """Write ``servers/`` and ``scenarios/`` as they are at ``ref`` into ``workdir``; returns ``workdir``.

    Uses ``git archive`` of the project folder at ``ref`` (so it works when the project is a
    subfolder of a larger repository), extracted with tarfile's ``data`` filter (no links out, no
    device files). ``workdir`` is created; it must not already hold a ``servers`` or ``scenarios``.
    """
    sha = resolve_ref(repo, ref)
    top = Path(_git_text(repo, "rev-parse", "--show-toplevel", what="git rev-parse"))
    prefix = _git_text(repo, "rev-parse", "--show-prefix", what="git rev-parse").rstrip("/")
    treeish = f"{sha}:{prefix}" if prefix else sha
    # Run from the top level: in a subfolder git reads paths as relative to it, even inside a tree.
    listing = _git_text(top, "ls-tree", "--name-only", treeish, what=f"git ls-tree {ref}")
    folders = [name for name in (SERVERS, SCENARIOS) if name in listing.splitlines()]
    workdir.mkdir(parents=True, exist_ok=True)
    clash = [name for name in (SERVERS, SCENARIOS) if (workdir / name).exists()]
    if clash:
        raise GitError(f"{workdir} already holds {', '.join(clash)}; materialise into an empty folder")
    if not folders:
        return workdir
    out = _git(top, "archive", "--format=tar", treeish, "--", *folders)
    if out.returncode != 0:
        raise GitError(f"git archive {ref} failed: {out.stderr.decode(errors='replace').strip()}")
    with tarfile.open(fileobj=io.BytesIO(out.stdout)) as archive:
        _extract(archive, workdir)
    return workdir


def _extract(archive: tarfile.TarFile, dest: Path) -> None:
    """Extract with tarfile's ``data`` filter, or, on Pythons before 3.11.4 (Debian 12 ships 3.11.2),
    only plain files and folders whose names stay inside ``dest``."""
    if hasattr(tarfile, "data_filter"):
        try:
            archive.extractall(dest, filter="data")
        except tarfile.FilterError as exc:  # a link out of the tree, an absolute path, a device file
            raise GitError(f"{exc}: refused (nothing outside the project is read); commit the file") from None
        return
    for member in archive.getmembers():
        name = posixpath.normpath(member.name)
        if name.startswith(("/", "../")) or name == ".." or not (member.isfile() or member.isdir()):
            continue
        path = dest / name
        if member.isdir():
            path.mkdir(parents=True, exist_ok=True)
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        source = archive.extractfile(member)
        if source is not None:
            path.write_bytes(source.read())
