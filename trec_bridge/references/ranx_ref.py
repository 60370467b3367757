"""ranx: a numba evaluator with its own defaults, run in a forked child (references/isolate.py).

What it does, found by experiment on ranx 0.3.21 (tests/test_ranx_ref.py
checks each reading against the installed ranx):

* **Queries.** ``evaluate`` refuses a run whose queries are not exactly the
  qrels' queries unless ``make_comparable=True``, which gives every judged
  query missing from the run an empty ranking (all its measures 0) and drops
  run queries the qrels do not judge: the mean is over every judged query,
  like ir_measures and ``trec_eval -c``.  We call it so (without it ranx
  evaluates nothing on such input).  An explicit empty ranking is a ranking
  of length 0 (0 everywhere).  A query with no relevant document scores 0 and
  is averaged (``np.mean`` of the per-query array).
* **Order.** Each ranking is sorted by ``np.argsort`` of the negated scores
  inside numba, an unstable quicksort: tied documents of a ranking longer
  than 15 come out in an order that depends on every score of the ranking,
  not on their IDs (``ordering.quicksort_order`` runs the same steps).  A
  ranking of 15 or fewer keeps ties in the order it was given.
  ``make_comparable`` sorts every ranking once more (``Run.sort``), which
  moves such ties again: the order evaluated is the quicksort applied twice.
  We hand the rankings over in the run's own order (the TREC reader's:
  score, then docno descending).
* **Floats.** Scores are doubles (``np.array(..., dtype=float)``); grades are
  int64 made doubles.  Document IDs are compared by their hash made a double
  (two IDs whose hashes round to one double would be confused; not observed).
* **Duplicates.** Its inputs are dicts (and ``Run.from_file`` builds one):
  the last line of a repeated document wins.  The adapter refuses such input
  rather than hand over something silently changed (as for ir_measures).
* **Threshold.** Every metric takes ``-lN``: documents graded below N are
  dropped from the qrels before the metric runs, so nDCG's gains *and its
  ideal* use only grades >= N (``ndcg_gain_floor = threshold``); a negative N
  would make negative grades relevant (refused).
* **Gain.** ``ndcg`` and ``dcg`` take the grade as gain (Järvelin), ``ndcg_burges``
  2^grade - 1; no other gain map.

The numba import (seconds) and its compilation happen only in the child, a
resident one (``isolate.Resident``): the later cross-checks of the same
process reuse what it compiled.  ``available`` and ``version`` read the
package metadata, not the module.
"""
from __future__ import annotations

import functools
import warnings
from typing import Callable, Mapping

from ..measures.base import FAMILIES, Measure
from ..model import Qrels, Run
from ..policy import Ordering, Policy
from .base import (Options, PythonReference, ReferenceResult, check_unique, qrels_dict, run_dict,
                   scored_frame, unavailable)
from .registry import Tool, register

RANX_ORDER = Ordering(tie_break="quicksort_twice", precision="float64")

RANX = Policy(
    name="ranx",
    description="ranx 0.3 with make_comparable=True: every judged query, missing = 0, no-relevant = 0; double scores "
                "sorted by numba's unstable quicksort; the threshold (-lN) also limits nDCG's gains and ideal",
    query_set="judged",
    no_relevant="zero",
    run_only_queries="ignore",
    unknown_docs="ignore",
    duplicates="last_wins",
    ordering=RANX_ORDER,
    ndcg_gain_floor="threshold",
    emulates="ranx",
)


def ranx_metric(measure: Measure, rel: int) -> str:
    """ranx's metric string for ``measure`` at threshold ``rel`` (``precision@10-l2``); raises ValueError with the
    reason when ranx has no such metric.

    A family declares its ranx name in ``tool_names["ranx"]``: a name, a
    ``{gain: name}`` map (nDCG: ``ndcg`` / ``ndcg_burges``), or a function of
    the measure returning the name with its parameters (RBP: ``rbp.95``).
    """
    named = FAMILIES[measure.family].native("ranx")
    if named is None:
        raise ValueError(f"no ranx metric for {measure.family}")
    if callable(named):
        named = named(measure)
    elif isinstance(named, Mapping):
        if measure.gains is not None:
            raise ValueError("ranx has no gain map: its nDCG gain is the grade (ndcg) or 2^grade - 1 (ndcg_burges)")
        named = named.get(measure.gain or "linear")
        if named is None:
            raise ValueError(f"ranx has no {measure.family} with gain={measure.gain}")
    if rel < 0:
        raise ValueError(f"ranx's -l{rel} would make negative grades relevant (trec-bridge never counts them)")
    text = named + (f"@{measure.cutoff}" if measure.cutoff is not None else "")
    return text + (f"-l{rel}" if rel != 1 else "")


class Ranx(PythonReference):
    name = "ranx"
    module_name, pip_name = "ranx", "ranx"
    resident = True  # numba's import and JIT cost ~10 s a process: one child keeps them (isolate.Resident)
    precision = None  # doubles

    def available(self) -> bool:
        """Installed, judged without importing it (numba takes seconds): a broken install fails in the child."""
        import importlib.util

        try:
            return importlib.util.find_spec(self.module_name) is not None
        except (ImportError, ValueError):
            return False

    def version(self) -> str:
        import importlib.metadata  # ~10 ms, when a version is asked: registering the tool stays light

        try:
            return importlib.metadata.version(self.pip_name)
        except importlib.metadata.PackageNotFoundError:
            raise unavailable(f"ranx is not installed; pip install {self.pip_name} "
                              "(or pip install 'trec-bridge[ranx]')") from None

    def _reason(self, measure: Measure, rel: int) -> str | None:
        try:
            ranx_metric(measure, rel)  # every metric takes -lN, nDCG too (it has no rel= of its own in our syntax)
        except ValueError as exc:
            return str(exc)
        return None

    def _prepare(self, qrels: Qrels, run: Run, measures: list[Measure], rel: int,
                 options: Options) -> Callable[[], ReferenceResult]:
        result = ReferenceResult(self.name, self.version(), precision=self.precision)
        selected = self._split(measures, rel, result, qrels)
        if not selected:
            return functools.partial(_unchanged, result)
        frame, synthetic = scored_frame(run)
        if synthetic:
            result.notes.append(f"synthetic scores n-position+1 for queries without scores: {synthetic}")
        check_unique(qrels, None if run.unique_checked else frame, self.name)
        if frame.height == 0:
            raise unavailable("ranx cannot build a Run without any ranked document (Run() takes the longest ID "
                              "of an empty list)")
        qd, rd = qrels_dict(qrels), run_dict(run, frame, include_empty=True)
        metrics = {str(m): ranx_metric(m, level) for m, level in selected}
        names = list(dict.fromkeys(metrics.values()))
        result.command.append(f"ranx.evaluate(Qrels(qrels), Run(run), {names}, make_comparable=True)")
        return functools.partial(_evaluate, qd, rd, metrics, names, result)


def _unchanged(result: ReferenceResult) -> ReferenceResult:
    return result


def _evaluate(qd: dict, rd: dict, metrics: dict[str, str], names: list[str],
              result: ReferenceResult) -> ReferenceResult:
    """The tool call only, in the child: import ranx (numba), build its Qrels and Run, evaluate."""
    try:
        import ranx
    except Exception as exc:  # noqa: BLE001 - an install that imports badly is unavailable, with its reason
        raise unavailable(f"ranx cannot be imported: {type(exc).__name__}: {exc}") from None
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # numba's type-safety warnings would land on our stderr
            ranx_run = ranx.Run(rd)
            means = ranx.evaluate(ranx.Qrels(qd), ranx_run, names, make_comparable=True)
    except Exception as exc:  # noqa: BLE001 - its failure is reported, never ours
        raise unavailable(f"ranx raised {type(exc).__name__}: {exc}") from None
    if len(names) == 1:
        means = {names[0]: means}
    for key, name in metrics.items():
        result.per_query[key] = {q: float(v) for q, v in ranx_run.scores[name].items()}
        result.aggregate[key] = float(means[name])
        result.served_by[key] = name
        result.native[key] = name
    return result


register(Tool("ranx", Ranx, RANX, by_default=False, reasons={
    ("ordering", RANX_ORDER):
        "ranx sorts each ranking by np.argsort of the negated double scores inside numba, an unstable quicksort, "
        "and make_comparable sorts it again: tied documents of a ranking longer than 15 come out in an order set by "
        "all its scores, not by their IDs",
}))
