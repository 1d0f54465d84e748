"""The result store: every run, failed ones included, kept for judging, reports and trends."""

from harness.store.local import Store

__all__ = ["Store"]
