"""SHA-256 fingerprints of canonical JSON, so equal content gives equal hashes.

json and hashlib are imported when a fingerprint is made (hashlib's OpenSSL set-up is a few milliseconds of a
start-up that may make none: ``score``'s terminal table).
"""
from __future__ import annotations


def canonical_json(obj) -> bytes:
    import json

    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False).encode("utf-8")


def canonical_sha256(obj) -> str:
    import hashlib

    return hashlib.sha256(canonical_json(obj)).hexdigest()
