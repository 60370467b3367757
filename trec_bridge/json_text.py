"""The reports' JSON text, ``json.dumps(obj, indent=2, sort_keys=True, ...)`` byte for byte, at the C encoder's speed.

Python serves ``indent`` from its pure-Python encoder only: a report of 30,000
queries x 36 measures (47 MB) took ~7 s to write.  The C encoder takes any
separators, so a container holding only scalars (and empty containers) at
nesting level L is written by it with the item separator ``",\\n"`` plus the
indent of level L + 1: exactly the lines the indenting encoder writes, bar
the first and last, added here.  Only the containers above those (a report's
top level, its per-query rows) are walked in Python.  Without the C encoder
(another Python), this is ``json.dumps`` itself.
"""
from __future__ import annotations

import json
from json import encoder as _json_encoder

INDENT = "  "


def dumps(obj, *, ensure_ascii: bool = False, allow_nan: bool = False) -> str:
    """``json.dumps(obj, indent=2, sort_keys=True, ensure_ascii=..., allow_nan=...)``, the same text."""
    if _json_encoder.c_make_encoder is None:
        return json.dumps(obj, indent=2, sort_keys=True, ensure_ascii=ensure_ascii, allow_nan=allow_nan)
    out: list[str] = []
    _Writer(ensure_ascii, allow_nan).write(obj, 0, out)
    return "".join(out)


def _not_serializable(o):
    """What ``json.JSONEncoder.default`` raises."""
    raise TypeError(f"Object of type {o.__class__.__name__} is not JSON serializable")


_SCALAR_TYPES = frozenset((str, int, float, bool, type(None)))


def _is_flat(values) -> bool:
    """Only scalars and empty containers: the C encoder writes it with one level's separator."""
    if _SCALAR_TYPES.issuperset(map(type, values)):  # the usual case, without a Python step per value
        return True
    for v in values:
        if isinstance(v, (dict, list, tuple)) and v:
            return False
    return True


class _Writer:
    """One ``dumps``: a C encoder per nesting level (its separator carries that level's indent)."""

    def __init__(self, ensure_ascii: bool, allow_nan: bool):
        self.string = _json_encoder.encode_basestring_ascii if ensure_ascii else _json_encoder.encode_basestring
        self.allow_nan = allow_nan
        self.by_level: dict[int, object] = {}

    def flat(self, o, level: int) -> str:
        """A scalar, or a container of scalars at ``level``, as the indenting encoder writes it."""
        enc = self.by_level.get(level)
        if enc is None:
            enc = self.by_level[level] = _json_encoder.c_make_encoder(
                {}, _not_serializable, self.string, None, ": ", ",\n" + INDENT * (level + 1), True, False,
                self.allow_nan)
        text = "".join(enc(o, 0))
        if isinstance(o, (dict, list, tuple)) and o:
            return text[0] + "\n" + INDENT * (level + 1) + text[1:-1] + "\n" + INDENT * level + text[-1]
        return text

    def write(self, o, level: int, out: list[str]) -> None:
        kind = type(o)
        if kind is str:  # the scalars of the Python-walked levels, without a C encoder's call
            return out.append(self.string(o))
        if kind is int:
            return out.append(int.__repr__(o))
        if isinstance(o, dict):
            if o and not _is_flat(o.values()):
                return self._dict(o, level, out)
        elif isinstance(o, (list, tuple)):
            if o and not _is_flat(o):
                return self._list(o, level, out)
        out.append(self.flat(o, level))

    def _dict(self, o: dict, level: int, out: list[str]) -> None:
        inner = "\n" + INDENT * (level + 1)
        out.append("{" + inner)
        first = True
        for key, value in sorted(o.items()):
            if not first:
                out.append("," + inner)
            first = False
            out.append(self.string(self._key(key)) + ": ")
            self.write(value, level + 1, out)
        out.append("\n" + INDENT * level + "}")

    def _list(self, o, level: int, out: list[str]) -> None:
        inner = "\n" + INDENT * (level + 1)
        out.append("[" + inner)
        for i, value in enumerate(o):
            if i:
                out.append("," + inner)
            self.write(value, level + 1, out)
        out.append("\n" + INDENT * level + "]")

    def _key(self, key) -> str:
        """A key as ``json`` turns it into a string (floats, ints, True/False/None; anything else refused)."""
        if isinstance(key, str):
            return key
        if isinstance(key, (float, int)) or key is None:  # bool is an int: true/false, as json writes them
            return self.flat(key, 0)
        raise TypeError(f"keys must be str, int, float, bool or None, not {key.__class__.__name__}")
