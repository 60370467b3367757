"""Targeted mutants of the scorer and the test that must kill each.

Each mutant is one textual change to one file.  ``run_mutant`` applies it to a
copy of the package and runs the named test there; the mutant is killed only
when that test fails on an assertion (an import or syntax error proves
nothing, so it counts as a survivor).
"""
from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


@dataclass(frozen=True)
class Mutant:
    name: str
    file: str
    old: str
    new: str
    test: str  # pytest node ID (or -k expression after '::-k ')


GOLDEN_S1_A = "tests/test_golden.py::test_golden_case[S1:run A: q4 missing counts 0 and stays in the mean; ]"
GOLDEN_S1_LATE = "tests/test_golden.py::test_golden_case[S1:q2 [d1, d2, d3] at k=2: RR is 0, not 1/3]"
GOLDEN_S2_ORDER = "tests/test_golden.py::test_golden_case[S2:first occurrence order, never sorted: [d3a, d4a, d]"
GOLDEN_S4 = "tests/test_golden.py::test_golden_case[S4:linear gain is the default (as in trec_eval and ir]"
GOLDEN_S4_REL = "tests/test_golden.py::test_golden_case[S4:the relevance threshold does not change nDCG (trec]"

MUTANTS = [
    Mutant("drop missing queries from the denominator", "trec_bridge/scorer.py",
           "counted = family.defined(ranking, effective, ctx)",
           "counted = family.defined(ranking, effective, ctx) & (ranking.lengths() > 0)",
           GOLDEN_S1_A),
    Mutant("score no-relevant queries 0", "trec_bridge/scorer.py",
           'if policy.no_relevant != "null":',
           "if True:",
           GOLDEN_S1_A),
    Mutant("de-duplicate a ranking silently", "trec_bridge/validate.py",
           "        if self.duplicates == \"reject\" and not run.unique_checked:\n            _check_duplicates(run)",
           "        run.frame = run.frame.unique(subset=['query_id', 'doc_id'], keep='first', maintain_order=True)",
           "tests/test_scorer_rules.py::test_duplicate_inside_the_cutoff_is_rejected"),
    Mutant("truncate to k before validating", "trec_bridge/scorer.py",
           "    return _prepare_selected(dataset, run, orderings_for(measures, policy), policy.duplicates, chunk_map, len(measures))",
           "    run.frame = run.frame.filter(pl.col('rank') <= max(m.cutoff or 10**9 for m in measures))\n"
           "    return _prepare_selected(dataset, run, orderings_for(measures, policy), policy.duplicates, chunk_map, len(measures))",
           "tests/test_scorer_rules.py::test_duplicate_past_the_cutoff_is_rejected_not_deduplicated"),
    Mutant("turn a missing query into an empty list", "trec_bridge/scorer.py",
           '        codes = np.full(len(index_ids), STATUSES.index("missing"), dtype=np.int8)',
           '        codes = np.full(len(index_ids), STATUSES.index("empty"), dtype=np.int8)',
           GOLDEN_S1_A),
    Mutant("sort collapsed documents by ID", "trec_bridge/chunks.py",
           'first = mapped.filter(pl.struct("query_id", "doc_id").is_first_distinct())',
           'first = mapped.filter(pl.struct("query_id", "doc_id").is_first_distinct()).sort(["query_id", "doc_id"])',
           GOLDEN_S2_ORDER),
    Mutant("let a later chunk overwrite a document's first occurrence", "trec_bridge/chunks.py",
           'first = mapped.filter(pl.struct("query_id", "doc_id").is_first_distinct())',
           'first = mapped.filter(pl.struct("query_id", "doc_id").is_last_distinct())',
           GOLDEN_S2_ORDER),
    Mutant("RR without its cutoff", "trec_bridge/measures/rr.py",
           "mask = r.relevant_rows(ctx.rel, m.cutoff)",
           "mask = r.relevant_rows(ctx.rel, None)",
           GOLDEN_S1_LATE),
    Mutant("linear gain where exponential is asked", "trec_bridge/measures/ndcg.py",
           'if (m.gain or policy.gain) == "exp":',
           'if (m.gain or policy.gain) == "linear":',
           GOLDEN_S4),
    Mutant("the threshold raises nDCG's grade floor", "trec_bridge/measures/ndcg.py",
           'floor = max(rel, 0) if policy.ndcg_gain_floor == "threshold" else 1',
           "floor = max(rel, 0)",
           GOLDEN_S4_REL),
    Mutant("nDCG null at the threshold, not without a positive gain", "trec_bridge/measures/ndcg.py",
           "return np.bincount(q[gain > 0], minlength=r.n_queries) > 0",
           "return r.relevant_count(ctx.rel) > 0",
           "tests/test_scorer_rules.py::test_ndcg_is_null_only_without_a_positive_gain_whatever_the_threshold"),
]


def run_mutant(mutant: Mutant | None) -> tuple[str, str]:
    """Run the mutant's test on a mutated copy; return (outcome, output).

    outcome: "passed", "assertion" (killed), or "error" (import/syntax/collection error).
    """
    with tempfile.TemporaryDirectory(prefix="trec-bridge-mutant-") as tmp:
        root = Path(tmp)
        for part in ("trec_bridge", "converters", "tests", "golden"):
            shutil.copytree(REPO / part, root / part, ignore=shutil.ignore_patterns("__pycache__"))
        shutil.copy(REPO / "pyproject.toml", root / "pyproject.toml")
        if mutant is not None:
            target = root / mutant.file
            text = target.read_text()
            if text.count(mutant.old) != 1:
                raise AssertionError(f"mutant {mutant.name!r}: the original text is not found exactly once in {mutant.file}")
            target.write_text(text.replace(mutant.old, mutant.new))
        test = mutant.test if mutant is not None else None
        report = root / "junit.xml"
        cmd = [sys.executable, "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider", f"--junitxml={report}",
               "--rootdir", str(root), test]
        proc = subprocess.run(cmd, cwd=root, capture_output=True, text=True,
                              env={**_env(), "PYTHONPATH": str(root)})
        output = proc.stdout + proc.stderr
        if proc.returncode == 0:
            return "passed", output
        return ("assertion" if _failed_on_assertion(report) else "error"), output


def _failed_on_assertion(junit: Path) -> bool:
    """The test body failed on an assertion (or pytest.raises saw nothing raised), not on an import or syntax error."""
    import xml.etree.ElementTree as ET

    if not junit.exists():
        return False
    root = ET.parse(junit).getroot()
    if list(root.iter("error")):
        return False
    messages = [f.get("message", "") for f in root.iter("failure")]
    return bool(messages) and all(m.startswith(("AssertionError", "assert ", "Failed: DID NOT RAISE")) for m in messages)


def _env() -> dict:
    import os

    return {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}


if __name__ == "__main__":
    survivors = 0
    for m in MUTANTS:
        outcome, out = run_mutant(m)
        print(f"{'killed ' if outcome == 'assertion' else 'SURVIVED'}  {m.name}  ({outcome})")
        survivors += outcome != "assertion"
    sys.exit(1 if survivors else 0)
