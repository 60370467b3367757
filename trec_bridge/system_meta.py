"""The conditions a run was made under (its ``system`` object): fingerprint, differences, filters.

A run's free-form ``system`` object (JSON runs; ``--system`` / ``--system-file``
for TREC runs) travels into every report so that a number is never read
without the configuration that produced it.  Two systems are compared key by
key on their *dotted paths* (``index.ef_search``), so that a comparison can
say whether exactly one variable changed (docs/rag.md, "Test conditions").
The system is not part of the protocol: its fingerprint is separate.
"""
from __future__ import annotations

from .errors import UsageError

_MISSING = object()


def system_fingerprint(system: dict) -> str:
    """SHA-256 of the canonical JSON of ``system`` (keys sorted, no spaces, UTF-8): equal objects, equal hashes."""
    import hashlib
    import json

    text = json.dumps(system, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def flatten(system: dict) -> dict:
    """Dotted path -> leaf value; an empty object is a leaf (``{}``), a list is a value as a whole."""
    return {".".join(path): value for path, value in _leaves(system).items()}


def _leaves(system: dict, prefix: tuple = ()) -> dict:
    """Key path (a tuple, so that ``{"a": {"b": 1}}`` and ``{"a.b": 1}`` stay apart) -> leaf value."""
    out: dict = {}
    for key, value in system.items():
        if isinstance(value, dict) and value:
            out.update(_leaves(value, prefix + (key,)))
        else:
            out[prefix + (key,)] = value
    return out


def system_diff(a: dict, b: dict) -> list[dict]:
    """Every dotted key that differs: ``{"key", "change": added|removed|changed, "a", "b"}``, sorted by key.

    ``added`` is a key only ``b`` has, ``removed`` one only ``a`` has.  Values
    compare by their canonical JSON text, as the fingerprint does (1 and 1.0
    differ, true is not 1): no difference exactly when the fingerprints agree.
    """
    fa, fb = _leaves(a), _leaves(b)
    out = []
    for path in sorted(set(fa) | set(fb)):
        va, vb, key = fa.get(path, _MISSING), fb.get(path, _MISSING), ".".join(path)
        if va is _MISSING:
            out.append({"key": key, "change": "added", "a": None, "b": vb})
        elif vb is _MISSING:
            out.append({"key": key, "change": "removed", "a": va, "b": None})
        elif _canonical(va) != _canonical(vb):
            out.append({"key": key, "change": "changed", "a": va, "b": vb})
    return out


def _canonical(value) -> str:
    import json

    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def describe_change(d: dict) -> str:
    """One difference as a reader sees it: ``index.ef_search: 64 -> 128``."""
    if d["change"] == "added":
        return f"{d['key']}: added ({_shown(d['b'])})"
    if d["change"] == "removed":
        return f"{d['key']}: removed (was {_shown(d['a'])})"
    return f"{d['key']}: {_shown(d['a'])} -> {_shown(d['b'])}"


def _shown(value) -> str:
    return value if isinstance(value, str) else _canonical(value)


def filter_keys(system: dict) -> list[str]:
    """The dotted keys that state filters (a key whose name contains "filter"): reports call them out."""
    return [k for k in flatten(system) if any("filter" in part.lower() for part in k.split("."))]


def system_lines(system: dict | None) -> list[str]:
    """The system as ``key: value`` lines (dotted keys); filters first, marked."""
    if not system:
        return []
    flat = flatten(system)
    filters = filter_keys(system)
    rest = [k for k in flat if k not in filters]
    return [f"{k}: {_shown(flat[k])}  (filter)" for k in filters] + [f"{k}: {_shown(flat[k])}" for k in rest]


def parse_system_options(pairs: list[str]) -> dict:
    """``--system KEY=VALUE`` (repeatable) -> an object; a dotted KEY nests (``index.ef_search=64``).

    Values are text (give a ``--system-file`` for numbers and booleans); a
    key given twice, or both as a value and as a parent, is refused.
    """
    out: dict = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        parts = key.split(".")
        if not sep or not all(p.strip() for p in parts):
            raise UsageError("E_USAGE", f"--system takes KEY=VALUE (e.g. embedding_model=bge-m3), got {pair!r}")
        node = out
        for part in parts[:-1]:
            node = node.setdefault(part, {})
            if not isinstance(node, dict):
                raise UsageError("E_USAGE", f"--system {key}: {part} is already given a value")
        if parts[-1] in node:
            raise UsageError("E_USAGE", f"--system {key} is given twice (or is a group of other keys)")
        node[parts[-1]] = value
    return out
