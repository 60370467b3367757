"""``--system KEY=VALUE`` and ``--system-file FILE``: the conditions of a run that does not carry them (a TREC run).

A JSON run carries its own ``system`` object; giving these options as well is
refused rather than merged, so that what the run file says is never silently
overridden.  docs/formats.md, "System metadata".
"""
from __future__ import annotations

import math
import sys

from ..errors import InvalidInput, UsageError
from ..system_meta import parse_system_options


def add_system_arguments(p) -> None:
    p.add_argument("--system", action="append", default=[], metavar="KEY=VALUE",
                   help="the run's test conditions when the run file does not carry them (a TREC run); repeatable, "
                        "a dotted KEY nests (index.ef_search=64); values are text")
    p.add_argument("--system-file", metavar="FILE",
                   help="the run's test conditions as a JSON object or a TOML table (.toml)")


def given_system(args) -> dict | None:
    """The object ``--system`` / ``--system-file`` give (None when neither is given)."""
    pairs, path = getattr(args, "system", None) or [], getattr(args, "system_file", None)
    if pairs and path:
        raise UsageError("E_USAGE", "give the system either as --system KEY=VALUE options or as --system-file, "
                         "not both")
    if path:
        return read_system_file(path)
    return parse_system_options(pairs) if pairs else None


def system_for(given: dict | None, run_metadata: dict | None) -> dict | None:
    """The run's own ``system`` object, or the one the options gave (``given_system``); both at once is refused."""
    own = (run_metadata or {}).get("system")
    if own is not None and given is not None:
        raise UsageError("E_USAGE", "the run carries its own system object; --system/--system-file describe runs "
                         "that do not (edit the run's system object instead)")
    return own if own is not None else given


def read_system_file(path: str) -> dict:
    """A JSON object (strict reader) or, for a .toml file, a TOML table of JSON-like values."""
    from converters import strict_json as sj

    from ..files import read_input_bytes

    if str(path).lower().endswith(".toml"):
        try:
            doc = _tomllib().loads(read_input_bytes(path).decode("utf-8"))
        except (UnicodeDecodeError, ValueError) as exc:
            raise InvalidInput("E_SYSTEM_FILE", f"not valid TOML: {exc}", file=str(path)) from None
    else:
        doc = sj.read_json_file(path)
    if not isinstance(doc, dict):
        raise InvalidInput("E_SYSTEM_FILE", "a system file holds one JSON object (key -> value)", file=str(path))
    _check_values(doc, str(path))
    return doc


def _check_values(value, file: str, at: str = "") -> None:
    """TOML has dates and infinities, which JSON has not: refused, never turned into something else."""
    if isinstance(value, dict):
        for k, v in value.items():
            _check_values(v, file, f"{at}.{k}" if at else k)
    elif isinstance(value, list):
        for i, v in enumerate(value):
            _check_values(v, file, f"{at}[{i}]")
    elif isinstance(value, float) and not math.isfinite(value):
        raise InvalidInput("E_SYSTEM_FILE", f"{at}: {value} is not a finite number", file=file)
    elif not isinstance(value, (str, int, float, bool)) and value is not None:
        raise InvalidInput("E_SYSTEM_FILE", f"{at}: a {type(value).__name__} is not a JSON value; write it as text",
                           file=file)


def _tomllib():
    """The TOML reader, imported when a .toml system file is read (its import is most of a command's start)."""
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - exercised on 3.10 only
        import tomli as tomllib
    return tomllib
