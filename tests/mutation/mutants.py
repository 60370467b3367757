"""Targeted mutants of the scoring rules and the test that must kill each.

A mutant is defined by the rule it breaks, not by a line number: a regular
expression that finds the code doing that rule wherever it lives in the
package (``trec_bridge/``, ``converters/``, or the files named in ``where``),
and the rewrite that breaks it.  When a refactor moves the rule to another
module the mutant follows; when the code no longer matches exactly once,
``locate`` fails loudly and names the rule, so a refactor can never disable a
mutant silently (tests/test_mutant_patterns.py checks this in the fast tier).

``run_mutant`` applies one mutant to a copy of the package and runs the named
test there; the mutant is killed only when that test fails on an assertion
(an import or syntax error proves nothing, so it counts as a survivor).
"""
from __future__ import annotations

import re
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
PACKAGES = ("trec_bridge", "converters")


@dataclass(frozen=True)
class Mutant:
    name: str
    pattern: str  # regular expression (re.MULTILINE) matching the code that does the rule, exactly once
    replacement: str  # re.sub template: the broken rule
    test: str  # pytest node ID
    where: tuple[str, ...] = PACKAGES  # folders or files (relative to the repository) searched for the rule


@dataclass(frozen=True)
class Site:
    file: str  # relative to the repository
    start: int
    end: int
    new: str


def locate(mutant: Mutant, root: Path = REPO) -> Site:
    """Where the mutant's rule lives under ``root``; AssertionError naming the rule unless it matches exactly once."""
    regex = re.compile(mutant.pattern, re.MULTILINE)
    found = []
    for place in mutant.where:
        path = root / place
        for file in sorted(path.rglob("*.py")) if path.is_dir() else [path]:
            text = file.read_text()
            found += [(file, m) for m in regex.finditer(text)]
    if len(found) != 1:
        where = ", ".join(f"{f.relative_to(root)}:{f.read_text().count(chr(10), 0, m.start()) + 1}" for f, m in found)
        raise AssertionError(
            f"mutant {mutant.name!r}: its pattern matches {len(found)} places in {', '.join(mutant.where)} "
            f"({where or 'none'}), not exactly one. The code doing this rule moved or changed: update the "
            f"pattern in tests/mutation/mutants.py to the code that does it now.\npattern: {mutant.pattern}")
    file, match = found[0]
    return Site(str(file.relative_to(root)), match.start(), match.end(), match.expand(mutant.replacement))


GOLDEN_S1_A = "tests/integration/test_golden.py::test_golden_case[S1:run A: q4 missing counts 0 and stays in the mean; ]"
GOLDEN_S1_LATE = "tests/integration/test_golden.py::test_golden_case[S1:q2 [d1, d2, d3] at k=2: RR is 0, not 1/3]"
GOLDEN_S2_ORDER = "tests/integration/test_golden.py::test_golden_case[S2:first occurrence order, never sorted: [d3a, d4a, d]"
GOLDEN_S4 = "tests/integration/test_golden.py::test_golden_case[S4:linear gain is the default (as in trec_eval and ir]"
GOLDEN_S4_REL = "tests/integration/test_golden.py::test_golden_case[S4:the relevance threshold does not change nDCG (trec]"
FIRST_OCCURRENCE = r'pl\.struct\("query_id", "doc_id"\)\.is_first_distinct\(\)'

SET_BY_HAND = "tests/test_trec_eval_families.py::test_set_measures_by_hand"

FAMILIES_TEST = "tests/test_trec_families.py::"
MUTANTS = [
    # which queries a measure is defined on: also require a non-empty ranking (a missing query leaves the mean)
    Mutant("drop missing queries from the denominator",
           r"\b\w+\.defined\((?P<ranking>\w+),[^)\n]*\)",
           r"(\g<0> & (\g<ranking>.lengths() > 0))",
           GOLDEN_S1_A),
    # the null rule: a query without relevant documents is null (left out of the mean) under the strict policy
    Mutant("score no-relevant queries 0",
           r"""(?:\b\w+\.)?no_relevant\s*!=\s*["']null["']""",
           "True",
           GOLDEN_S1_A),
    # policy.duplicates == "reject": a repeated document is an error, never de-duplicated
    Mutant("de-duplicate a ranking silently",
           r"""^(?P<indent>[ ]*)if [^\n]*\bduplicates\s*==\s*["']reject["'][^\n]*:\n[ ]*_check_duplicates\((?P<run>\w+)\)$""",
           r"\g<indent>\g<run>.frame = \g<run>.frame.unique(subset=['query_id', 'doc_id'], keep='first', "
           r"maintain_order=True)",
           "tests/test_scorer_rules.py::test_duplicate_inside_the_cutoff_is_rejected"),
    # the validation sees the whole ranking (RunChecks.add), not its top k (the killing test asks R@2)
    Mutant("truncate to k before validating",
           r"^(?P<indent>[ ]*)(?P<checks>[\w.]*checks)\.add\((?P<part>\w+)\)$",
           r"\g<indent>\g<part>.frame = \g<part>.frame.filter(\g<part>.frame.get_column('rank') <= 2)\n"
           r"\g<indent>\g<checks>.add(\g<part>)",
           "tests/test_scorer_rules.py::test_duplicate_past_the_cutoff_is_rejected_not_deduplicated"),
    # the missing-query rule: a query the run does not record is "missing" (scored 0, kept in the mean);
    # every query starts as missing until the run records it
    Mutant("turn a missing query into an empty list",
           r"""(np\.full\([^,\n]+,\s*STATUSES\.index\()["']missing["']""",
           r'\g<1>"empty"',
           GOLDEN_S1_A),
    # chunk collapse keeps each document at its first chunk's position, in ranking order
    Mutant("sort collapsed documents by ID",
           rf"(?<![~\w])\w+\.filter\({FIRST_OCCURRENCE}\)",
           r'\g<0>.sort(["query_id", "doc_id"])',
           GOLDEN_S2_ORDER),
    Mutant("let a later chunk overwrite a document's first occurrence",
           rf"(?<=\.filter\(){FIRST_OCCURRENCE}",
           'pl.struct("query_id", "doc_id").is_last_distinct()',
           GOLDEN_S2_ORDER),
    # RR@k counts a relevant document only within the cutoff
    Mutant("RR without its cutoff",
           r"(?P<call>\brelevant_rows\((?P<rel>[\w.]+),\s*)[\w.]*cutoff\)",
           r"\g<call>None)",
           GOLDEN_S1_LATE, where=("trec_bridge/measures/rr.py",)),
    # a measure's own gain, else the policy's: exp means 2^grade - 1
    Mutant("linear gain where exponential is asked",
           r"""\((?P<own>[\w.]+\.gain) or (?P<default>[\w.]+\.gain)\)\s*==\s*["']exp["']""",
           r'(\g<own> or \g<default>) == "linear"',
           GOLDEN_S4),
    # the relevance threshold floors nDCG's grades only under a policy that says so
    Mutant("the threshold raises nDCG's grade floor",
           r"""\s+if\s+[\w.]+\.ndcg_gain_floor\s*==\s*["']threshold["']\s+else\s+1\b""",
           "",
           GOLDEN_S4_REL),
    # ir_measures' families beyond trec_eval (tests/test_irm_families.py works each figure by hand)
    Mutant("ERR without the cascade (every document reached)",
           r"reach\[at\] = reach\[at - 1\] \* \(1\.0 - stop\[at - 1\]\)",
           "reach[at] = reach[at - 1]",
           "tests/test_irm_families.py::test_err_is_the_cascade_with_gdeval_stopping_probabilities"),
    Mutant("C/W/L depth shorter than cwl_eval's 1,000",
           r"^DEPTH = 1000\b",
           "DEPTH = 10",
           "tests/test_irm_families.py::test_rbp_and_its_residual"),
    Mutant("INST's goal never met",
           r"goal_left = t - np\.cumsum\(g, axis=1\)",
           "goal_left = t + 0.0 * g",
           "tests/test_irm_families.py::test_inst_with_its_goal_met_at_the_top"),
    Mutant("Compat's ideal ignores grades",
           r"ideal = better \+ ",
           "ideal = 0 * better + ",
           "tests/test_irm_families.py::test_compat_ideal_puts_the_better_grade_first"),
    Mutant("Compat normalised the wrong way round",
           r"if m\.param\(\"normalize\", True\):",
           'if not m.param("normalize", True):',
           "tests/test_irm_families.py::test_compat_is_rank_biased_overlap_with_the_ideal"),
    Mutant("gdeval's printed digits not applied",
           r"values = Values\(printed\(values\.value, digits\)\)",
           "pass",
           "tests/test_irm_families.py::test_err_under_ir_measures_is_gdevals_five_decimal_printout"),
    Mutant("cwl_eval's tied rows sorted by docno",
           r'    if ordering\.tie_break == "input":\n        return \{"by": columns, "descending": descending\}\n',
           "",
           "tests/test_irm_families.py::test_cwl_eval_ties_stay_in_the_runs_row_order_under_ir_measures"),
    # nDCG is null only for a query without a positive gain, whatever the threshold
    Mutant("nDCG null at the threshold, not without a positive gain",
           r"np\.bincount\(\w+\[(?P<gain>\w+) > 0\], minlength=(?P<r>\w+)\.n_queries\) > 0",
           r"\g<r>.relevant_count(ctx.rel) > 0",
           "tests/test_scorer_rules.py::test_ndcg_is_null_only_without_a_positive_gain_whatever_the_threshold"),
    # trec_eval's set measures (m_set_*.c): the whole ranking, each with its own denominator
    Mutant("SetP divided by the relevant count",
           r"of_ratio\(rel_ret, r\.retrieved\)",
           "of_ratio(rel_ret, r.relevant_count(ctx.rel))",
           SET_BY_HAND, where=("trec_bridge/measures/set_p.py",)),
    Mutant("SetRelP divided by the larger of retrieved and relevant",
           r"np\.minimum\(r\.retrieved, r\.relevant_count\(ctx\.rel\)\)",
           "np.maximum(r.retrieved, r.relevant_count(ctx.rel))",
           SET_BY_HAND, where=("trec_bridge/measures/set_rel_p.py",)),
    Mutant("SetR at threshold 1 whatever rel says",
           r"relevant_rows\(ctx\.rel, None\)",
           "relevant_rows(1, None)",
           "tests/test_trec_eval_families.py::test_set_measures_at_another_threshold",
           where=("trec_bridge/measures/set_recall.py",)),
    Mutant("SetAP without the square",
           r"of_ratio\(rel_ret \* rel_ret,",
           "of_ratio(rel_ret,",
           SET_BY_HAND, where=("trec_bridge/measures/set_ap.py",)),
    Mutant("SetF's beta squared (van Rijsbergen's F_beta, not trec_eval's x)",
           r"p, q = beta\.numerator, beta\.denominator",
           "p, q = beta.numerator ** 2, beta.denominator ** 2",
           "tests/test_trec_eval_families.py::test_set_f_beta_is_trec_eval_x_not_squared",
           where=("trec_bridge/measures/set_f.py",)),
    # trec_eval's gain-level families (m_binG.c, m_G.c, m_ndcg_rel.c, m_Rndcg.c)
    Mutant("binG discounted by the rank, not by the non-relevant above",
           r"above = r\.rank\[rows\] - kth",
           "above = r.rank[rows] - 1",
           "tests/test_trec_eval_families.py::test_bin_g_by_hand", where=("trec_bridge/measures/bin_g.py",)),
    Mutant("G's ideal costs its gain, without the floor of 1 per rank",
           r"cost = r\.rank \+ prefix_at\(iq, ipos, np\.maximum\(igain - 1\.0, 0\.0\),",
           "cost = prefix_at(iq, ipos, igain,",
           "tests/test_trec_eval_families.py::test_g_by_hand", where=("trec_bridge/measures/g.py",)),
    Mutant("ndcg_rel forgets the relevant documents not retrieved",
           r"np\.divide\(unretrieved \* dcg, idcg, out=rest",
           "np.divide(0 * dcg, idcg, out=rest",
           "tests/test_trec_eval_families.py::test_ndcg_rel_by_hand", where=("trec_bridge/measures/ndcg_rel.py",)),
    Mutant("Rndcg adds the whole ranking one past the ideal",
           r"r\.retrieved >= n_ideal \+ 2",
           "r.retrieved >= n_ideal + 1",
           "tests/test_trec_eval_families.py::test_rndcg_adds_the_whole_ranking_only_two_past_the_ideal",
           where=("trec_bridge/measures/rndcg.py",)),
    Mutant("Rndcg's R-levels at every ideal position, not where the gain drops",
           r"\(ipos > 1\) & \(igain != np\.r_\[np\.nan, igain\[:-1\]\]\)",
           "ipos > 1",
           "tests/test_trec_eval_families.py::test_rndcg_by_hand", where=("trec_bridge/measures/rndcg.py",)),
    # trec_eval's utility (m_utility.c): the contingency cells and a query without a ranking
    Mutant("utility's non-relevant cell counts every retrieved document",
           r"r\.retrieved - rel_ret, ",
           "r.retrieved, ",
           "tests/test_trec_eval_families.py::test_utility_by_hand", where=("trec_bridge/measures/utility.py",)),
    Mutant("utility scores a missing query's relevant documents",
           r"num = np\.where\(ranked, (?P<sum>.+), 0\)",
           r"num = np.where(True, \g<sum>, 0)",
           "tests/test_trec_eval_families.py::test_utility_by_hand", where=("trec_bridge/measures/utility.py",)),
    # infAP (m_infap.c): a negative grade is pooled but unjudged, an absent judgment outside the pool
    Mutant("infAP without the pooled-but-unjudged documents above",
           r"\(\(earlier \+ nonrel \+ unjudged\) / above\)",
           "((earlier + nonrel) / above)",
           "tests/test_trec_eval_families.py::test_infap_by_hand", where=("trec_bridge/measures/infap.py",)),
    Mutant("infAP takes a negative grade for a judged non-relevant document",
           r"_count_above\(r, \(r\.grade >= 0\) & ~relevant\)",
           "_count_above(r, ~relevant)",
           "tests/test_trec_eval_families.py::test_infap_by_hand", where=("trec_bridge/measures/infap.py",)),
    # --- the trec_eval families of issue 17 §1 (tests/test_trec_families.py works each figure by hand)
    # counts are never null: a query without relevant documents still has its num_ret
    Mutant("counts null without a relevant document",
           r"return np\.ones\(r\.n_queries, dtype=bool\)",
           "return r.relevant_count(ctx.rel) > 0",
           FAMILIES_TEST + "test_counts_per_query_and_summed", where=("trec_bridge/measures/base.py",)),
    # a negative grade is unjudged, not judged non-relevant (trec_eval's RELVALUE_UNJUDGED)
    Mutant("num_nonrel_judged_ret counts negative grades",
           r"\(r\.grade >= 0\) & (\(r\.grade < ctx\.rel\))",
           r"\1",
           FAMILIES_TEST + "test_counts_per_query_and_summed",
           where=("trec_bridge/measures/num_nonrel_judged_ret.py",)),
    # ir_measures fills a query missing from the run with 0, counts included
    Mutant("ir_measures' missing query keeps its counts",
           r"values = values\.zeroed\(zeroed\)",
           "values = values",
           FAMILIES_TEST + "test_counts_under_the_tools_query_sets"),
    # Rprec divides by R even when the ranking is shorter
    Mutant("Rprec divides by the ranking's length when shorter than R",
           r"Values\.of_ratio\((?P<num>r\.relevant_in_top\(ctx\.rel, n_rel\)), n_rel\)",
           r"Values.of_ratio(\g<num>, n_rel.clip(max=r.retrieved))",
           FAMILIES_TEST + "test_rprec"),
    # bpref: min(n, R) non-relevant documents above a relevant one count
    Mutant("bpref without min(n, R)",
           r"capped = np\.minimum\(before, big_r\)",
           "capped = before",
           FAMILIES_TEST + "test_bpref"),
    Mutant("bpref counts negative grades as judged non-relevant",
           r"\(\(r\.grade >= 0\) & (\(r\.grade < rel\))\)",
           r"\1",
           FAMILIES_TEST + "test_bpref", where=("trec_bridge/measures/bpref.py",)),
    # the geometric mean floors each value at 1e-5 (trec_eval's MIN_GEO_MEAN)
    Mutant("geometric mean of value + 1e-5 instead of max(value, 1e-5)",
           r"np\.log\(np\.maximum\(counted, GMEAN_FLOOR\)\)",
           "np.log(counted + GMEAN_FLOOR)",
           FAMILIES_TEST + "test_gmap_per_query_and_geometric_summary"),
    # a recall level reaches the (long)(r * R + 0.9)-th relevant document, as trec_eval 9 computes it
    Mutant("recall level rounded instead of trec_eval's + 0.9",
           r"np\.trunc\((?P<x>levels \* n_rel\.astype\(np\.float64\)) \+ 0\.9\)",
           r"np.round(\g<x>)",
           FAMILIES_TEST + "test_iprec_at_trec_evals_levels"),
    # interpolated precision is the best precision at or after the point
    Mutant("precision at the point, not interpolated",
           r"np\.maximum\.accumulate\(\(code \+ shift\)\[::-1\]\)\[::-1\]",
           "(code + shift)",
           FAMILIES_TEST + "test_iprec_interpolates_from_later_ranks"),
    Mutant("11pt_avg over 10 levels",
           r"\* len\(levels\)$",
           "* (len(levels) - 1)",
           FAMILIES_TEST + "test_avg_iprec_is_the_mean_of_eleven_levels", where=("trec_bridge/measures/iprec_avg.py",)),
    # Rprec_mult divides by its rank n, even past the end of the ranking
    Mutant("Rprec_mult divides by the ranking's length",
           r"Values\.of_ratio\((?P<num>r\.relevant_in_top\(ctx\.rel, n\)), n\)",
           r"Values.of_ratio(\g<num>, n.clip(max=r.retrieved))",
           FAMILIES_TEST + "test_rprec_mult"),
    # relative_P divides by min(k, R)
    Mutant("relative_P divides by k",
           r"np\.minimum\(r\.relevant_count\(ctx\.rel\), m\.cutoff\)",
           "np.full(r.n_queries, m.cutoff)",
           FAMILIES_TEST + "test_relative_p", where=("trec_bridge/measures/relative_p.py",)),
]


def run_mutant(mutant: Mutant | None, tests: tuple[str, ...] = ()) -> tuple[str, str]:
    """Run the mutant's test (or ``tests``, in one pytest, on an unmutated copy) on a copy of the package;
    (outcome, output).

    outcome: "passed", "assertion" (killed), or "error" (import/syntax/collection error). The byte-code
    caches are copied with the sources (copytree keeps their mtimes, so Python takes each cache exactly
    when its source is unchanged, and compiles the mutated file again): without them every copy compiled
    the whole package and its tests again, most of a mutant's time.
    """
    with tempfile.TemporaryDirectory(prefix="trec-bridge-mutant-") as tmp:
        root = Path(tmp)
        for part in ("trec_bridge", "converters", "tests", "golden"):
            shutil.copytree(REPO / part, root / part)
        shutil.copy(REPO / "pyproject.toml", root / "pyproject.toml")
        if mutant is not None:
            site = locate(mutant, root)
            target = root / site.file
            text = target.read_text()
            target.write_text(text[:site.start] + site.new + text[site.end:])
            tests = (mutant.test,)
        report = root / "junit.xml"
        cmd = [sys.executable, "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider", f"--junitxml={report}",
               "--rootdir", str(root), *tests]
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
