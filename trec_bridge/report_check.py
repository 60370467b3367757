"""Reading a score report back (``score --json``) without trusting it.

Every command that reads a report (today: ``compare``) calls ``read_report``,
which runs three checks in turn, each with its own codes:

1. the strict JSON reader (converters/strict_json.py: duplicate keys, NaN,
   a byte-order mark, too deep, out-of-range numbers) and the format/version;
2. the shipped JSON Schema, trec_bridge/schemas/report.v1.json
   (E_JSON_SCHEMA, with the JSON path);
3. what a schema cannot say (this module): every exact fraction parses and
   agrees with its float value (E_REPORT_EXACT); the rows, means and repeats
   give a value for exactly the report's measures, query lists name the
   report's queries, counts agree (E_REPORT_INCONSISTENT).

After that, code reading the report may index it without guarding each
access: a hand-edited or truncated report is refused with a message, never
a KeyError, TypeError or ZeroDivisionError.
"""
from __future__ import annotations

import math
import re
from fractions import Fraction
from functools import lru_cache
from typing import Any, Callable

from converters import strict_json as sj

from .errors import InvalidInput

REPORT_SCHEMA = "report.v1.json"
# float(exact) is correctly rounded; averages of floats (repeats of a non-rational measure) are not exact
REL_TOL, ABS_TOL = 1e-9, 1e-12


def read_report(path) -> dict:
    """The report at ``path``, strictly read, schema-validated and checked for consistency."""
    from .report import REPORT_FORMAT

    file = str(path)
    doc = sj.read_document(path, REPORT_FORMAT)
    validate_schema(doc, file)
    check_report(doc, file)
    return doc


# ------------------------------------------------------------------ schema, with a fast path for the rows
#
# The per-query rows hold nearly every node of a report, and jsonschema costs 20-50 µs a node (a
# 7,000-query report: seconds).  So the rows are left out of the jsonschema pass (a lightened
# schema, as the dataset and run loaders do) and each row is checked by ``row_ok`` / ``repeat_row_ok``
# below, exact type checks built from the same schema; a row they doubt goes to jsonschema, which
# names the problem.  tests/test_report_schema.py holds the fast checks to jsonschema's verdicts.

ROW_ARRAYS = {  # schema pointer of the row subschema -> where the rows are in a report
    "/properties/per_query/items": ("per_query",),
    "/$defs/rag/properties/repeats/properties/per_query/items": ("rag", "repeats", "per_query"),
}


def validate_schema(doc: Any, file: str | None) -> None:
    """E_JSON_SCHEMA for the first problem, as ``strict_json.validate`` on the whole schema would find it."""
    sj.validate(doc, REPORT_SCHEMA, file, {pointer: {"type": "object"} for pointer in ROW_ARRAYS})
    for pointer, where in ROW_ARRAYS.items():
        rows = _at(doc, where)
        fast = FAST_ROW_CHECKS[pointer]
        for i, row in enumerate(rows or ()):
            if not fast(row):
                error = next(iter(_row_validator(pointer).iter_errors(row)), None)
                if error is not None:
                    parts, message = sj.describe(error)
                    raise sj.schema_error(where + (i,) + parts, message, file)


def _at(doc: dict, where: tuple) -> list | None:
    node = doc
    for key in where:
        if not isinstance(node, dict) or key not in node:
            return None
        node = node[key]
    return node


def _subschema(pointer: str) -> dict:
    node = sj.shipped_schema(REPORT_SCHEMA)
    for key in pointer.strip("/").split("/"):
        node = node[key]
    return node


@lru_cache(maxsize=None)
def _row_validator(pointer: str):
    return sj.StrictValidator({**_subschema(pointer), "$defs": sj.shipped_schema(REPORT_SCHEMA)["$defs"]})


def _fast_checks() -> dict[str, Callable[[Any], bool]]:
    defs = sj.shipped_schema(REPORT_SCHEMA)["$defs"]
    exact_pattern = re.compile(defs["exact"]["pattern"])
    row_schema, repeat_schema = (_subschema(p) for p in ROW_ARRAYS)
    statuses = tuple(row_schema["properties"]["status"]["enum"])
    numbers = (int, float)

    def keys_ok(row: Any, schema: dict) -> bool:
        return type(row) is dict and set(schema["required"]) <= row.keys() <= schema["properties"].keys()

    def count(v: Any) -> bool:
        return type(v) is int and v >= 0

    def value(v: Any) -> bool:
        return v is None or type(v) in numbers

    def exact(v: Any) -> bool:
        return v is None or (type(v) is str and exact_pattern.search(v) is not None)

    def spread(v: Any) -> bool:
        return v is None or (type(v) is dict and v.keys() == {"min", "max", "stdev"} and type(v["min"]) in numbers
                             and type(v["max"]) in numbers
                             and (v["stdev"] is None or (type(v["stdev"]) in numbers and v["stdev"] >= 0)))

    def per_run(v: Any) -> bool:
        return type(v) is list and len(v) >= 1 and all(value(x) for x in v)

    def by_measure(m: Any, ok: Callable[[Any], bool]) -> bool:
        return type(m) is dict and all(type(k) is str and len(k) > 0 and ok(v) for k, v in m.items())

    def status(v: Any) -> bool:
        return type(v) is str and v in statuses

    def row_ok(row: Any) -> bool:
        return (keys_ok(row, row_schema) and sj.id_is_valid(row["query_id"]) and status(row["status"])
                and ("reason" not in row or type(row["reason"]) is str)
                and count(row["relevant"]) and count(row["retrieved"])
                and by_measure(row["values"], value) and by_measure(row["exact"], exact))

    def repeat_row_ok(row: Any) -> bool:
        return (keys_ok(row, repeat_schema) and sj.id_is_valid(row["query_id"])
                and type(row["statuses"]) is list and len(row["statuses"]) >= 1 and all(status(s) for s in row["statuses"])
                and by_measure(row["values"], value) and by_measure(row["exact"], exact)
                and by_measure(row["per_run"], per_run) and by_measure(row["spread"], spread))

    return dict(zip(ROW_ARRAYS, (row_ok, repeat_row_ok)))


FAST_ROW_CHECKS = _fast_checks()


# ------------------------------------------------------------------ semantics


def check_report(doc: dict, file: str | None = None) -> None:
    """The semantic checks (3. above) on a document that already matches the schema."""
    _Checker(doc, file).run()


class _Checker:
    """Walks a schema-valid report; a JSON path is kept as a tuple of keys and indexes (``strict_json.json_path``)."""

    def __init__(self, doc: dict, file: str | None):
        self.doc, self.file = doc, file
        self.measures = list(doc["measures"])
        self.ids = [row["query_id"] for row in doc["per_query"]]

    def fail(self, code: str, where: tuple, message: str, query: str | None = None) -> None:
        raise InvalidInput(code, message, file=self.file, json_path=sj.json_path(where), query=query)

    def run(self) -> None:
        doc = self.doc
        self.same_keys(doc["means"], ("means",), "the means")
        for name, mean in doc["means"].items():
            self.exact_agrees(mean["exact"], mean["value"], ("means", name))
        self.unique(self.ids, ("per_query",))
        for i, row in enumerate(doc["per_query"]):
            self.row(row, ("per_query", i))
        self.counts()
        self.query_lists()
        if "rag" in doc:
            self.rag(doc["rag"])

    # ------------------------------------------------------------ pieces

    def row(self, row: dict, where: tuple) -> None:
        """One per-query row: a value for each measure of the report, exact values that agree with them."""
        qid = row["query_id"]
        self.same_keys(row["values"], where + ("values",), "the row's values", qid)
        for name, exact in row["exact"].items():
            if name not in self.measures:
                self.fail("E_REPORT_INCONSISTENT", where + ("exact", name),
                          f"an exact value for {name}, which is not among the report's measures {self.measures}", qid)
            self.exact_agrees(exact, row["values"][name], where + ("exact", name), qid)

    def same_keys(self, mapping: dict, where: tuple, what: str, query: str | None = None) -> None:
        missing = [m for m in self.measures if m not in mapping]
        extra = [m for m in mapping if m not in self.measures]
        if missing or extra:
            parts = ([f"no value for {', '.join(missing)}"] if missing else []) + \
                    ([f"a value for {', '.join(extra)}, which is not a measure of the report"] if extra else [])
            self.fail("E_REPORT_INCONSISTENT", where,
                      f"{what} must name exactly the report's measures {self.measures}: " + "; ".join(parts), query)

    def exact_agrees(self, exact: str | None, value: float | None, where: tuple, query: str | None = None) -> None:
        """An exact fraction parses, has a non-zero denominator and is its float value up to rounding."""
        if exact is None:
            return
        try:
            as_float = float(Fraction(exact))
        except (ValueError, ZeroDivisionError, OverflowError) as exc:
            self.fail("E_REPORT_EXACT", where, f"exact value {_short(exact)} is not a usable fraction ({exc})", query)
        if value is None:
            self.fail("E_REPORT_EXACT", where, f"exact value {_short(exact)} given for a null value", query)
        if not math.isclose(as_float, value, rel_tol=REL_TOL, abs_tol=ABS_TOL):
            self.fail("E_REPORT_EXACT", where,
                      f"exact value {_short(exact)} (= {as_float!r}) disagrees with the value {value!r}", query)

    def unique(self, ids: list[str], where: tuple) -> None:
        seen: set[str] = set()
        for i, q in enumerate(ids):
            if q in seen:
                self.fail("E_REPORT_INCONSISTENT", where + (i,), f"query {q!r} has two rows", q)
            seen.add(q)

    def counts(self) -> None:
        n = len(self.ids)
        doc = self.doc
        for where, value in ((("query_set", "size"), doc["query_set"]["size"]), (("totals", "total"), doc["totals"]["total"]),
                             (("coverage", "expected"), doc["coverage"]["expected"])):
            if value != n:
                self.fail("E_REPORT_INCONSISTENT", where, f"says {value} queries, per_query has {n} rows")

    def query_lists(self) -> None:
        """Each list of queries by status is exactly the rows with that status, in query-set order."""
        doc = self.doc
        by_status = {s: [r["query_id"] for r in doc["per_query"] if r["status"] == s] for s in ("missing", "empty", "failed")}
        for where, listed, status in ((("missing_queries",), doc["missing_queries"], "missing"),
                                      (("coverage", "missing"), doc["coverage"]["missing"], "missing"),
                                      (("empty_queries",), doc["empty_queries"], "empty"),
                                      (("failed_queries",), list(doc["failed_queries"]), "failed")):
            if listed != by_status[status]:
                self.fail("E_REPORT_INCONSISTENT", where,
                          f"lists {_few(listed)}, but the per_query rows with status {status} are {_few(by_status[status])}")
        known = set(self.ids)
        for i, q in enumerate(doc["no_relevant_queries"]):
            if q not in known:
                self.fail("E_REPORT_INCONSISTENT", ("no_relevant_queries", i), "not a query of the report's per_query rows", q)
        complete = not by_status["missing"] and not by_status["failed"]
        if (doc["outcome"] == "complete") != complete:
            self.fail("E_REPORT_INCONSISTENT", ("outcome",),
                      f"says {doc['outcome']} although {len(by_status['missing'])} queries are missing and "
                      f"{len(by_status['failed'])} failed")

    def rag(self, rag: dict) -> None:
        rep = rag["repeats"]
        at = ("rag", "repeats")
        runs, count = rep["runs"], rep["count"]
        if not count == len(runs) == len(rep["complete"]):
            self.fail("E_REPORT_INCONSISTENT", at + ("count",),
                      f"count {count}, but {len(runs)} runs and {len(rep['complete'])} completeness flags are listed")
        if [row["query_id"] for row in rep["per_query"]] != self.ids:
            self.fail("E_REPORT_INCONSISTENT", at + ("per_query",),
                      "the repeats' per-query rows must list the report's queries in the same order")
        for i, row in enumerate(rep["per_query"]):
            where = at + ("per_query", i)
            self.row(row, where)
            qid = row["query_id"]
            if len(row["statuses"]) != count:
                self.fail("E_REPORT_INCONSISTENT", where + ("statuses",), f"{len(row['statuses'])} statuses for {count} runs", qid)
            for name, values in row["per_run"].items():
                if name not in self.measures or len(values) != count:
                    self.fail("E_REPORT_INCONSISTENT", where + ("per_run", name),
                              f"per_run must hold one value per run ({count}) for a measure of the report", qid)
        for name, means in rep["run_means"].items():
            if len(means) != count:
                self.fail("E_REPORT_INCONSISTENT", at + ("run_means", name), f"{len(means)} means for {count} runs")
            for j, m in enumerate(means):
                self.exact_agrees(m["exact"], m["value"], at + ("run_means", name, j))
        for i, tier in enumerate(rag["tiers"]):
            self.exact_agrees(tier["exact"], tier["value"], ("rag", "tiers", i))
        for i, row in enumerate(rag["breakdown"]):
            for name, mean in row["means"].items():
                self.exact_agrees(mean["exact"], mean["value"], ("rag", "breakdown", i, "means", name))
        for kind in ("recall", "ndcg"):
            for i, entry in enumerate(rag["triage"][kind]["queries"]):
                self.exact_agrees(entry["exact"], entry["value"], ("rag", "triage", kind, "queries", i), entry["query_id"])


def _short(text: str, limit: int = 60) -> str:
    return repr(text if len(text) <= limit else text[:limit] + "...")


def _few(ids: list[Any], limit: int = 5) -> str:
    shown = ", ".join(repr(q) for q in ids[:limit])
    return "[" + shown + (f", ... (+{len(ids) - limit})" if len(ids) > limit else "") + "]"
