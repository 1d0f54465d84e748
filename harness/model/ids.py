"""Stable identities: short content hashes shared by records, snapshots and baselines."""

from __future__ import annotations

import hashlib
import json


def stable_hash(payload: object, length: int = 12) -> str:
    """Short SHA-256 of a JSON rendering with sorted keys: the same content gives the same hash."""
    text = json.dumps(payload, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:length]
