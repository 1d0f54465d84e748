"""Write the committed option list of one server flavour and version from the real server binary.

    python tools/server_options.py mariadb 10.11 --binary mariadbd
    python tools/server_options.py mariadb 11.8 --image dbperf/mariadb:11.8
    python tools/server_options.py mysql 9.7 --image dbperf/mysql:9.7

It runs the binary's ``--no-defaults --verbose --help`` (in a throwaway container without network for
``--image``) and writes ``harness/config/server_options/<flavour>-<version>.txt``: the option names dbperf
resolves server variable names against (harness/config/option_names.py, servers/README.md).
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from harness.config.option_names import OPTION_LISTS, parse_help

_BINARY = {"mariadb": "mariadbd", "mysql": "mysqld"}


def help_text(flavour: str, binary: str | None, image: str | None) -> str:
    """The server's ``--verbose --help`` output (stdout only: warnings go to stderr)."""
    argv = [binary or _BINARY[flavour], "--no-defaults", "--verbose", "--help"]
    if image:
        argv = ["docker", "run", "--rm", "--network", "none", image, *argv]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=120, check=False)
    if done.returncode != 0 or "Variables (--variable-name=value)" not in done.stdout:
        raise SystemExit(f"{' '.join(argv)} failed (exit {done.returncode}): {done.stderr.strip()[-300:]}")
    return done.stdout


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("flavour", choices=sorted(_BINARY))
    parser.add_argument("version", help="the version pin the list is for, e.g. 10.11")
    where = parser.add_mutually_exclusive_group()
    where.add_argument("--binary", help="the server binary on this machine (default: mariadbd or mysqld)")
    where.add_argument("--image", help="a server image holding the binary (run with docker)")
    args = parser.parse_args()
    text = help_text(args.flavour, args.binary, args.image)
    first = next((line for line in text.splitlines() if " Ver " in line), "").strip()
    names = sorted(parse_help(text))
    path = OPTION_LISTS / f"{args.flavour}-{args.version}.txt"
    path.parent.mkdir(parents=True, exist_ok=True)
    header = [
        f"# Options of {args.flavour} {args.version}: {first}",
        f"# from `{'docker run ' + args.image + ' ' if args.image else ''}{args.binary or _BINARY[args.flavour]} "
        "--no-defaults --verbose --help`; regenerate with tools/server_options.py (servers/README.md)",
    ]
    path.write_text("\n".join([*header, *names]) + "\n")
    print(f"{path}: {len(names)} options")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
