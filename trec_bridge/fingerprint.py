"""SHA-256 fingerprints of canonical JSON, so equal content gives equal hashes."""
from __future__ import annotations

import hashlib
import json


def canonical_json(obj) -> bytes:
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False).encode("utf-8")


def canonical_sha256(obj) -> str:
    return hashlib.sha256(canonical_json(obj)).hexdigest()
