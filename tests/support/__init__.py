"""Code the tests share: helpers, record factories, stand-ins (no tests, no fixtures).

Test modules and conftest files import from here, never from a conftest or from another test module
(tests/unit/test_test_layout.py); the conftest files hold fixtures only, thin wrappers over this code.
"""

from __future__ import annotations

from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SERVERS = REPO / "servers"
SCENARIOS = REPO / "scenarios"
