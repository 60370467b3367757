"""Someone else's evaluation figures, read for ``trec-bridge explain``: per-query values and means by measure.

Accepted shapes (detected from the content):

* trec_eval output, with or without ``-q``: ``measure  query  value`` lines,
  query ``all`` for the mean (``runid``, ``num_q`` and other lines we do not
  compute are skipped and listed in ``Theirs.skipped``);
* ir_measures' output: ``query  measure  value`` (``-q``), ``measure  value``
  (the means), or its JSON Lines (``-o jsonl``); any TSV of
  ``query measure value`` reads the same way;
* JSON ``{measure: {query: value}}``, ``{query: {measure: value}}``
  (pytrec_eval's shape) or ``{measure: value}`` (means only);
* summary figures only, as read from a paper: ``"nDCG@10=0.612 MRR@10=0.41"``.

Measure names are read in our vocabulary (``nDCG@10``, ``MRR@10``), in
trec_eval's printed names (``map``, ``P_10``, ``ndcg_cut_10``,
``recip_rank``: derived from each family's ``tool_names["trec_eval"]``
declaration, trec_names.py) and ranx's (``precision@10``, ``hit_rate@5``).
Each value keeps the number of decimals it was printed with, which is how
closely a reproduction must match it.
"""
from __future__ import annotations

import math
import os
import re
from dataclasses import dataclass, field

from trec_bridge.errors import InvalidInput
from trec_bridge.measures.base import FAMILIES, Measure
from trec_bridge.measures.trec_names import trec_eval_form
from trec_bridge.messages import quote

SUMMARY_QUERY = "all"  # trec_eval's and ir_measures' query ID of the mean
FULL_PRECISION = 12  # printed with this many decimals or more: compared as doubles
RANX_NAMES = {"precision": "P", "hit_rate": "Success", "hits": "Success", "ndcg_burges": "nDCG(gain=exp)"}


@dataclass
class Figure:
    """A value as printed: the number and how many decimals it was given with (None: a double, full precision)."""

    value: float
    decimals: int | None

    @property
    def tolerance(self) -> float:
        """Half a unit of the last printed place (a double: 1e-9)."""
        return 1e-9 if self.decimals is None else 0.5 * 10 ** -self.decimals + 1e-12


@dataclass
class Figures:
    """Their figures for one measure: per-query values (None: only the mean was given) and the mean."""

    measure: Measure
    spelled: str
    per_query: dict[str, Figure] | None = None
    mean: Figure | None = None


@dataclass
class Theirs:
    source: str
    form: str  # trec_eval | ir_measures | tsv | jsonl | json | summary
    figures: dict[str, Figures] = field(default_factory=dict)  # str(measure) -> figures
    skipped: list[str] = field(default_factory=list)  # names of theirs we do not compute

    def add(self, spelled: str, query: str | None, value) -> None:
        measure = read_measure_name(spelled)
        if measure is None:
            if spelled not in self.skipped:
                self.skipped.append(spelled)
            return
        fig = self.figures.setdefault(str(measure), Figures(measure, spelled))
        number = _figure(value, spelled, self.source)
        if query is None or query == SUMMARY_QUERY:
            fig.mean = number
        else:
            if fig.per_query is None:
                fig.per_query = {}
            if query in fig.per_query:
                raise InvalidInput("E_THEIRS_FORMAT", f"{spelled} is given twice for query {quote(query)}",
                                   file=self.source)
            fig.per_query[query] = number


def read_measure_name(name: str) -> Measure | None:
    """``name`` in our vocabulary, trec_eval's printed names or ranx's; None when we do not compute it."""
    from trec_bridge.measures import parse_measures

    for spelling in (name, _ranx(name)):
        if spelling is None:
            continue
        try:
            return parse_measures(spelling)[0]
        except InvalidInput:
            pass
    return _trec_eval_printed(name)


def _ranx(name: str) -> str | None:
    base, at, k = name.partition("@")
    return RANX_NAMES[base] + at + k if base in RANX_NAMES else None


def _trec_eval_printed(name: str) -> Measure | None:
    """A trec_eval output name (``P_10``, ``map``): the family whose declared -m name prints it."""
    for family in FAMILIES.values():
        form = trec_eval_form(family)
        if isinstance(form, str):
            continue
        for te in form:
            cut = re.fullmatch(re.escape(te.name) + r"_([0-9]+)", name)
            for m in te.to_measures(cut[1] if cut else None) if (cut or name == te.name) else []:
                if te.spell(m) is not None and te.spell(m)[1] == name:
                    return m
    return None


def _figure(value, spelled: str, source: str) -> Figure:
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        raise InvalidInput("E_THEIRS_VALUE", f"{spelled}: {quote(value)} is not a number", file=source)
    text = value if isinstance(value, str) else repr(value)
    try:
        number = float(text)
    except ValueError:
        raise InvalidInput("E_THEIRS_VALUE", f"{spelled}: {quote(text)} is not a number", file=source) from None
    if not math.isfinite(number):
        raise InvalidInput("E_THEIRS_VALUE", f"{spelled}: {quote(text)} is not a finite number", file=source)
    decimals = None
    plain = re.fullmatch(r"[-+]?[0-9]*\.?([0-9]*)", text.strip())
    if plain and isinstance(value, str) and len(plain[1]) < FULL_PRECISION:
        decimals = len(plain[1])
    elif plain and not isinstance(value, str) and 0 < len(plain[1]) < 7 and not isinstance(value, int):
        decimals = len(plain[1])  # a double with a short repr was rounded by whoever wrote it, or is exact
    return Figure(number, decimals)


def read_theirs(theirs, source: str | None = None) -> Theirs:
    """Their figures from a path, a text (file content or summary figures) or a Python mapping."""
    if isinstance(theirs, dict):
        return _from_mapping(theirs, source or "<mapping>", "json")
    if isinstance(theirs, os.PathLike) or (isinstance(theirs, str) and os.path.exists(theirs)):
        from trec_bridge.files import read_input_bytes

        raw = read_input_bytes(theirs)
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError:
            raise InvalidInput("E_ENCODING", "not valid UTF-8", file=os.fspath(theirs)) from None
        return read_text(text, os.fspath(theirs))
    if isinstance(theirs, str):
        if not any(mark in theirs.strip() for mark in ("\n", "\t", "=", "{")):
            raise InvalidInput("E_FILE_NOT_FOUND", "no such file, and not summary figures such as "
                               "\"nDCG@10=0.612 MRR@10=0.41\"", file=theirs)
        return read_text(theirs, source or "<text>")
    raise InvalidInput("E_THEIRS_FORMAT", f"their figures must be a path, a text or a mapping, not {type(theirs).__name__}")


def read_text(text: str, source: str) -> Theirs:
    stripped = text.strip()
    if not stripped:
        raise InvalidInput("E_FILE_EMPTY", "no figures to explain", file=source)
    if stripped.startswith("{"):
        lines = stripped.splitlines()
        if len(lines) > 1 and all(line.strip().startswith("{") and line.strip().endswith("}") for line in lines):
            return _jsonl(lines, source)
        from converters.strict_json import parse_json

        return _from_mapping(parse_json(stripped.encode("utf-8"), source), source, "json")
    rows = [line.split() for line in stripped.splitlines() if line.strip()]
    if all(_is_figure(token) for r in rows for token in r):
        return _summary(stripped, source)
    widths = {len(r) for r in rows}
    if widths == {2}:
        return _rows(Theirs(source, "ir_measures"), [(m, None, v) for m, v in rows])
    if widths != {3}:
        bad = next(i for i, r in enumerate(rows) if len(r) != 3)
        raise InvalidInput("E_THEIRS_FORMAT", "expected 'measure query value' (trec_eval), 'query measure value' "
                           f"(ir_measures -q, TSV) or 'measure value' lines; line {bad + 1} has {len(rows[bad])} fields",
                           file=source)
    return _three_columns(rows, source)


def _three_columns(rows: list[list[str]], source: str) -> Theirs:
    """trec_eval (measure first, ``all`` for the mean) or ir_measures/TSV (query first), by the columns' names."""
    first_known = sum(read_measure_name(r[0]) is not None for r in rows)
    second_known = sum(read_measure_name(r[1]) is not None for r in rows)
    if first_known == 0 and second_known == 0:
        names = ", ".join(dict.fromkeys(r[0] for r in rows[:20]))
        raise InvalidInput("E_THEIRS_FORMAT", f"no column holds a measure we compute (e.g. nDCG@10, P_10, map); "
                           f"first column: {names}", file=source)
    if first_known >= second_known:
        return _rows(Theirs(source, "trec_eval"), [(m, q, v) for m, q, v in rows])
    return _rows(Theirs(source, "ir_measures"), [(m, q, v) for q, m, v in rows])


def _rows(out: Theirs, rows) -> Theirs:
    for measure, query, value in rows:
        out.add(measure, query, value)
    return _known(out)


def _jsonl(lines: list[str], source: str) -> Theirs:
    from converters.strict_json import parse_json

    out = Theirs(source, "jsonl")
    for i, line in enumerate(lines):
        doc = parse_json(line.encode("utf-8"), source)
        if not isinstance(doc, dict) or "measure" not in doc or "value" not in doc:
            raise InvalidInput("E_THEIRS_FORMAT", f"line {i + 1}: expected {{\"query_id\", \"measure\", \"value\"}}",
                               file=source)
        out.add(str(doc["measure"]), doc.get("query_id"), doc["value"])
    return _known(out)


def _from_mapping(doc, source: str, form: str) -> Theirs:
    """{measure: {query: value}}, {query: {measure: value}} or {measure: value}."""
    if not isinstance(doc, dict) or not doc:
        raise InvalidInput("E_THEIRS_FORMAT", "expected a non-empty mapping {measure: {query: value}} or "
                           "{measure: value}", file=source)
    out = Theirs(source, form)
    outer_measures = sum(read_measure_name(str(k)) is not None for k in doc)
    nested = [v for v in doc.values() if isinstance(v, dict)]
    if nested and len(nested) != len(doc):
        raise InvalidInput("E_THEIRS_FORMAT", "mixes per-query mappings and single values", file=source)
    if not nested:
        return _rows(out, [(str(k), None, v) for k, v in doc.items()])
    inner_measures = sum(read_measure_name(str(k)) is not None for v in nested for k in v)
    if outer_measures or not inner_measures:
        return _rows(out, [(str(m), str(q), v) for m, per in doc.items() for q, v in per.items()])
    return _rows(out, [(str(m), str(q), v) for q, per in doc.items() for m, v in per.items()])


def _is_figure(token: str) -> bool:
    """``name=value`` with a number after the last ``=`` (``nDCG(gain=exp)@10`` alone is a name)."""
    name, sep, value = token.rstrip(",;").rpartition("=")
    return bool(sep and name) and re.fullmatch(r"[-+]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][-+]?[0-9]+)?", value) is not None


def _summary(text: str, source: str) -> Theirs:
    """``name=value`` figures separated by spaces, commas or semicolons (a parameter's ``=`` stays inside its
    parentheses: the last ``=`` outside them splits)."""
    out = Theirs(source, "summary")
    for token in re.split(r"[\s;]+|,(?![^(]*\))", text.strip()):
        if not token:
            continue
        name, sep, value = token.rpartition("=")
        if not sep or not name:
            raise InvalidInput("E_THEIRS_FORMAT", f"summary figure {quote(token)} is not name=value "
                               "(e.g. nDCG@10=0.612)", file=source)
        out.add(name, None, value)
    return _known(out)


def _known(out: Theirs) -> Theirs:
    if not out.figures:
        names = ", ".join(out.skipped[:8]) or "none"
        raise InvalidInput("E_THEIRS_FORMAT", f"no measure we compute among their figures (found: {names})",
                           file=out.source)
    return out
