"""Compare N systems scored on one protocol: every pair, every measure, corrected for multiple testing.

Input: two or more score reports (``score --json``; ``compare`` can also
score the runs itself).  The reports must share their protocol (query set,
judgments, threshold, gain, policy: policy §6); reports whose *measures*
differ are compared on the measures they share, and the output says so.  On
any other mismatch the comparison is refused and the message names the parts
that differ (from the reports' ``protocol_parts``), not only two hashes.

Per pair (A = the system listed first, B the later one) and measure, the
paired statistics of ``rag.compare.compare_measure`` (t-test, Wilcoxon,
randomization test, bootstrap CI; scipy).  Each test's p-values over all
pairs x measures form one family, adjusted by ``multitest.adjust`` (Holm by
default).  The winner table marks, for each system and measure, the systems
it beats significantly (adjusted p of the chosen test below alpha, higher
mean), as TREC papers do with superscript letters.
"""
from __future__ import annotations

import os
import re

from .conditions import compare_conditions, refuse_uncontrolled
from .errors import InvalidInput, UsageError
from .multitest import METHODS, adjust
from .rag.compare import compare_measure, per_query_values
from .report import tool_stamp

TESTS = {"t": "t_test", "wilcoxon": "wilcoxon", "randomization": "permutation"}
TEST_NAMES = {"t_test": "paired t-test", "wilcoxon": "Wilcoxon signed-rank test",
              "permutation": "randomization test"}
_RUN_SUFFIXES = (".gz", ".json", ".trec", ".txt", ".run", ".tsv", ".res")


def short_label(path: str | None, fallback: str) -> str:
    """A system's name for tables and charts: the run file's name without folder, compression, extension or
    TREC's ``input.`` prefix (``runs/input.ICT-BERT2.gz`` -> ``ICT-BERT2``); never a path."""
    if not path:
        return fallback
    name = os.path.basename(path)
    for _ in range(2):
        for suffix in _RUN_SUFFIXES:
            if name.lower().endswith(suffix) and len(name) > len(suffix):
                name = name[: -len(suffix)]
    if name.startswith("input.") and len(name) > len("input."):
        name = name[len("input."):]
    return name or fallback


def unique_labels(labels: list[str]) -> list[str]:
    seen: dict[str, int] = {}
    out = []
    for label in labels:
        n = seen.get(label, 0) + 1
        seen[label] = n
        out.append(label if n == 1 else f"{label} ({n})")
    return out


def letters(n: int) -> list[str]:
    """The marks naming each system in the winner table: a, b, c, ... (1, 2, 3, ... past 26 systems)."""
    return [chr(ord("a") + i) for i in range(n)] if n <= 26 else [str(i + 1) for i in range(n)]


# ------------------------------------------------------------------ protocol


def _part_values(report: dict) -> dict:
    """What a reader can be shown of each protocol part (the hashes say whether it differs)."""
    ids = [r["query_id"] for r in report["per_query"]]
    qs = report["query_set"]
    return {"queries": f"{len(ids)} queries ({qs['source']}{', split ' + qs['split'] if qs['split'] else ''})",
            "judgments": "judgments " + ((report["fingerprints"].get("inputs") or {}).get("dataset") or {}).get("path", "?"),
            "measures": " ".join(sorted(report["measures"])),
            "threshold": f"relevance threshold {qs['relevance_threshold']}",
            "gain": f"gain {report['policy'].get('gain')}", "policy": f"policy {report['policy'].get('name')}"}


def differing_parts(a: dict, b: dict) -> list[str]:
    """The protocol parts in which two reports differ; [] when their protocol fingerprints are equal."""
    if a["fingerprints"]["protocol"] == b["fingerprints"]["protocol"]:
        return []
    pa, pb = a["fingerprints"].get("protocol_parts"), b["fingerprints"].get("protocol_parts")
    if pa and pb:
        return [p for p in pa if pa.get(p) != pb.get(p)] or ["protocol"]
    va, vb = _part_values(a), _part_values(b)  # older reports: what their fields show, judgments unknowable
    ids_differ = [r["query_id"] for r in a["per_query"]] != [r["query_id"] for r in b["per_query"]]
    seen = [p for p in ("threshold", "gain", "policy", "measures") if va[p] != vb[p]]
    return (["queries"] if ids_differ else []) + seen + ["judgments (not recorded part by part in these reports)"]


def check_protocols(reports: list[dict], paths: list[str]) -> list[str]:
    """Refuse reports on different protocols (naming the parts); the notes when only their measures differ."""
    notes = []
    for report, path in zip(reports[1:], paths[1:]):
        parts = differing_parts(reports[0], report)
        if parts and parts != ["measures"]:
            va, vb = _part_values(reports[0]), _part_values(report)
            shown = "; ".join(f"{p}: {va[p]} vs {vb[p]}" if p in va else p for p in parts)
            raise InvalidInput("E_COMPARE_PROTOCOL",
                               f"{paths[0]} and {path} were scored on different protocols; they differ in "
                               f"{', '.join(parts)} ({shown}), so their numbers are not comparable; score the runs "
                               "with the same dataset, split, threshold and policy", file=path)
        if parts == ["measures"]:
            notes.append(f"{path} lists other measures than {paths[0]}: compared on the measures they share")
    return notes


def shared_measures(reports: list[dict], asked: list[str] | None, paths: list[str]) -> list[str]:
    """The measures to compare: those asked (each in every report), else those of the first report in all."""
    common = [m for m in reports[0]["measures"] if all(m in r["measures"] for r in reports[1:])]
    if asked:
        for name in asked:
            if name not in common:
                owners = [p for p, r in zip(paths, reports) if name not in r["measures"]]
                raise InvalidInput("E_USAGE", f"measure {name} is not in every report (missing from "
                                   f"{', '.join(owners)}); the reports share {', '.join(common) or 'none'}",
                                   file=owners[0] if owners else paths[0])
        return list(asked)
    if not common:
        raise InvalidInput("E_COMPARE_PROTOCOL", "the reports have no measure in common", file=paths[1])
    return common


# ------------------------------------------------------------------ the comparison


def _side(report: dict, path: str, label: str, mark: str, source: str) -> dict:
    run = ((report.get("fingerprints") or {}).get("inputs") or {}).get("run") or {}
    return {"label": label, "mark": mark, "path": path, "run": run.get("path"), "outcome": report.get("outcome"),
            "values_from": source, "protocol_fingerprint": report["fingerprints"]["protocol"],
            "system_fingerprint": report["fingerprints"].get("system")}


def compare_systems(reports: list[dict], paths: list[str], *, labels: list[str] | None = None,
                    measures: list[str] | None = None, seed: int = 0, resamples: int = 10000,
                    confidence: float = 0.95, correction: str = "holm", test: str = "t",
                    alpha: float = 0.05, step=None, single_variable: bool = False) -> dict:
    """The comparison of every pair of ``reports`` (two or more), as a JSON-ready dict.

    ``step(text)``: told of each pair as it starts (a progress line).
    ``single_variable``: refuse (E_COMPARE_UNCONTROLLED) systems not shown to
    differ from the first in one system key at most (conditions.py).
    """
    if len(reports) < 2:
        raise UsageError("E_USAGE", "compare needs two or more systems")
    notes = check_protocols(reports, paths)
    names = shared_measures(reports, measures, paths)
    rows = [per_query_values(r) for r in reports]
    ids = [r["query_id"] for r in rows[0][0]]
    for (r, _), path in zip(rows[1:], paths[1:]):
        if [q["query_id"] for q in r] != ids:
            raise InvalidInput("E_COMPARE_PROTOCOL", "the reports list different queries although their query sets "
                               "have the same fingerprint (edited report?)", file=path)
    labels = unique_labels(labels or [short_label(_run_path(r) or p, f"system {i + 1}")
                                      for i, (r, p) in enumerate(zip(reports, paths))])
    marks = letters(len(reports))
    conditions = compare_conditions(reports, labels)
    if single_variable:
        refuse_uncontrolled(conditions, paths[-1])
    systems = [_side(r, p, lab, mk, src) for r, p, lab, mk, (_, src) in zip(reports, paths, labels, marks, rows)]
    pairs = []
    for i in range(len(reports)):
        for j in range(i + 1, len(reports)):
            if step:
                step(f"{labels[i]} vs {labels[j]}")
            pairs.append({"a": labels[i], "b": labels[j], "measures": [
                compare_measure(n, rows[i][0], rows[j][0], seed, resamples, confidence, paths[j]) for n in names]})
    _correct(pairs, correction)
    return {
        "format": "trec-bridge.comparison", "version": 2, "tool": tool_stamp(),
        "systems": systems, "measures": names, "delta": "B - A (A listed before B)",
        "seed": seed, "resamples": resamples, "confidence_level": confidence,
        "correction": {"method": correction, "description": METHODS[correction], "test": TESTS[test],
                       "alpha": alpha, "family": sum(len(p["measures"]) for p in pairs),
                       "scope": "each test's p-values over all pairs x measures"},
        "notes": notes, "warnings": _warnings(reports, paths, rows) + [
            v for v in conditions["verdict"] if v.startswith("not a controlled")],
        "conditions": conditions,
        "pairs": pairs, "winners": winners(systems, pairs, names, TESTS[test], alpha),
    }


def _run_path(report: dict) -> str | None:
    return (((report.get("fingerprints") or {}).get("inputs") or {}).get("run") or {}).get("path")


def _warnings(reports: list[dict], paths: list[str], rows) -> list[str]:
    warn = [f"{p} is the report of an incomplete run: its missing and failed queries score 0"
            for r, p in zip(reports, paths) if r.get("outcome") == "incomplete"]
    sources = {src for _, src in rows}
    if len(sources) > 1:
        warn.append("the systems' values come from different places: " + "; ".join(
            f"{p}: {src}" for p, (_, src) in zip(paths, rows)))
    return warn


def _correct(pairs: list[dict], method: str) -> None:
    """Each test's p-values over every pair x measure, adjusted as one family (``pvalue_adjusted``)."""
    for key in TESTS.values():
        cells = [m[key] for p in pairs for m in p["measures"]]
        adjusted = adjust([c.get("pvalue") for c in cells], method)
        for cell, value in zip(cells, adjusted):
            cell["pvalue_adjusted"] = value


def winners(systems: list[dict], pairs: list[dict], names: list[str], test: str, alpha: float) -> list[dict]:
    """Per measure: each system's mean, the systems it beats significantly (adjusted p < alpha), the best.

    ``better_than`` lists systems in the order given, so marks read a, b, c.
    """
    beats: dict[tuple[str, str], list[str]] = {}
    means: dict[tuple[str, str], float | None] = {}  # over the paired (eligible) queries, repeats averaged
    for pair in pairs:
        for m in pair["measures"]:
            means[(m["measure"], pair["a"])], means[(m["measure"], pair["b"])] = m["mean_a"], m["mean_b"]
            p = m[test].get("pvalue_adjusted")
            if p is None or p >= alpha or not m["mean_delta"]:
                continue
            winner, loser = (pair["b"], pair["a"]) if m["mean_delta"] > 0 else (pair["a"], pair["b"])
            beats.setdefault((m["measure"], winner), []).append(loser)
    out = []
    for name in names:
        cells = [{"system": s["label"], "mean": means.get((name, s["label"])),
                  "better_than": sorted(beats.get((name, s["label"]), []), key=[x["label"] for x in systems].index)}
                 for s in systems]
        found = [c["mean"] for c in cells if c["mean"] is not None]
        best = max(found) if found else None
        out.append({"measure": name, "best": [c["system"] for c in cells if best is not None and c["mean"] == best],
                    "cells": cells})
    return out


def png_label(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9]+", "_", text).strip("_")
