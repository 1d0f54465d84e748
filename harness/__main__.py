"""``python -m harness`` is ``dbperf``."""

from harness.cli import main

main()
