"""Per-query timing of a run (``timing`` in a run document, ``latency_ms`` / ``requested_at`` on a JSON Lines record).

The schema checks the shape (a finite, non-negative number; text); this
module checks what a schema cannot: that a timed query is one the run has a
record of (a ranking or a failure), and that a request time is an RFC 3339
date-time with its offset.  Missing timing stays missing: nothing is filled in.
"""
from __future__ import annotations

import re
from datetime import datetime

from trec_bridge.errors import InvalidInput
from trec_bridge.messages import quote

from . import strict_json as sj

TIMING_KEY = "timing"  # Run.metadata key: query -> {"latency_ms": float, "requested_at": str}
FIELDS = ("latency_ms", "requested_at")
_RFC3339 = re.compile(r"\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})")


def check_timing(timing: dict, has_query, file: str | None, at: tuple = (TIMING_KEY,), line: int | None = None) -> None:
    """Refuse (E_RUN_TIMING) timing of a query the run lacks (``has_query(q)`` false) or a malformed request time."""
    for q, entry in timing.items():
        where = at + (q,) if at else ()
        if not has_query(q):
            raise InvalidInput("E_RUN_TIMING", f"timing for query {quote(q)}, which has neither a ranking nor a "
                               "failure record in this run", file=file, json_path=sj.json_path(where), query=q,
                               line=line)
        stamp = entry.get("requested_at")
        if stamp is not None and not _is_rfc3339(stamp):
            raise InvalidInput("E_RUN_TIMING", f"requested_at {quote(stamp)} is not an RFC 3339 date-time with its "
                               "offset (e.g. 2026-05-01T09:30:00.125Z)", file=file,
                               json_path=sj.json_path(where + ("requested_at",)), query=q, line=line)


def _is_rfc3339(text: str) -> bool:
    if not _RFC3339.fullmatch(text):
        return False
    try:
        datetime.fromisoformat(text.upper().replace("Z", "+00:00"))
    except ValueError:  # a month 13, a 25th hour
        return False
    return True


def record_timing(record: dict) -> dict:
    """The timing fields of one JSON Lines record (possibly none)."""
    return {k: record[k] for k in FIELDS if k in record}
