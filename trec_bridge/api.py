"""The Python API: score a run from whatever the user holds, under the CLI's policies, checks and codes.

>>> import trec_bridge as tb
>>> res = tb.score({"q1": {"d1": 1, "d2": 0}}, {"q1": {"d1": 0.9, "d2": 0.8}}, "P@1 RR")
>>> res.means
{'P@1': 1.0, 'RR': 1.0}

Every function takes qrels and runs as a path (TREC, .gz, the project's
JSON, ranx JSON), pytrec_eval's nested dicts, a pandas or polars DataFrame
with ir_measures' column names, an iterable of ir_measures ``Qrel`` /
``ScoredDoc``, a ranx ``Qrels`` / ``Run``, or the project's ``Dataset`` /
``Qrels`` / ``Run``.  Bad input raises ``InvalidInput`` with ``.code``.
"""
from __future__ import annotations

import copy
import html
import os
from fractions import Fraction
from typing import Any

from .errors import InvalidInput, UsageError
from .model import Dataset, Qrels, Query, Run
from .scorer import ScoreResult

__all__ = ["score", "crosscheck", "explain", "Evaluator", "Result", "ScoredRuns", "Crosscheck", "read_run", "read_qrels",
           "read_dataset", "write_run", "InvalidInput"]


class _AsInvalidInput:
    """Every error of the API is an ``InvalidInput``: a ``UsageError`` (a wrong argument) becomes one, code kept."""

    def __enter__(self):
        return self

    def __exit__(self, kind, exc, tb):
        if isinstance(exc, UsageError):
            raise InvalidInput(exc.code, exc.message, **{k: v for k, v in vars(exc.where).items() if v is not None}) \
                from None
        return False


def _is_path(x: Any) -> bool:
    return isinstance(x, (str, os.PathLike))


def _dataset_and_ints(qrels: Any, rel: int | None, subtopics: bool = False):
    """The ``Dataset`` ``qrels`` stands for, and the integer IDs it held (converters.python_objects);
    ``subtopics``: read qrels as a diversity qrels (their iteration is the subtopic)."""
    from converters.python_objects import qrels_from_object

    from .integers import INT64_MAX, INT64_MIN, in_range, range_text

    if isinstance(rel, int) and not isinstance(rel, bool) and not in_range(rel, INT64_MIN, INT64_MAX):
        raise UsageError("E_USAGE", f"rel must be {range_text(INT64_MIN, INT64_MAX)}, as --rel, got {rel}")
    if isinstance(qrels, Dataset):
        return (qrels if rel is None else Dataset(**{**qrels.__dict__, "threshold": rel})), _held(qrels.qrels)
    if _is_path(qrels):
        from converters.detect import load_dataset_any

        dataset = load_dataset_any(qrels, None, rel, subtopics)
        return dataset, _held(dataset.qrels)
    q, ints = (qrels, _held(qrels)) if isinstance(qrels, Qrels) else qrels_from_object(qrels, subtopics)
    if subtopics and not q.subtopics:
        raise UsageError("E_USAGE", "subtopics=True reads qrels as a diversity qrels; these Qrels were read as "
                         "ordinary ones (read them again with subtopics=True)")
    return Dataset(queries=tuple(Query(x) for x in q.query_ids()), qrels=q, threshold=1 if rel is None else rel,
                   query_source="qrels"), ints


def _run_and_ints(run: Any):
    from converters.python_objects import run_from_object

    if isinstance(run, Run):
        return run, _held(run)
    if _is_path(run):
        from converters.detect import load_run_any

        loaded = load_run_any(run)
        return loaded, _held(loaded)
    return run_from_object(run)


def _held(read):
    """The integer IDs a ``Run`` or ``Qrels`` read from a columnar file held (``int_ids``), checked against the
    other side's spellings like those of a DataFrame (a Parquet qrels' 7 against a run's "007")."""
    from converters.python_objects import IntIds

    return read.int_ids if read.int_ids is not None else IntIds()


def _measures(measures: Any):
    """A string, a list of strings, or ir_measures measure objects (read through their ir_measures spelling)."""
    from .measures import parse_measures

    if isinstance(measures, str):
        return parse_measures(measures)
    items = list(measures) if isinstance(measures, (list, tuple, set, frozenset)) else [measures]
    return parse_measures([m if isinstance(m, str) else str(m) for m in items])


def read_dataset(x: Any, *, rel: int | None = None, subtopics: bool = False) -> Dataset:
    """Qrels (any input kind) as the project's ``Dataset``; a qrels-only input's query set is its judged queries.

    ``subtopics=True``: a diversity qrels (TREC ``qid subtopic docno grade``, or an ``iteration`` column / item
    holding the subtopic), which the diversity measures (alpha_nDCG, ERR_IA, ...) need (docs/formats.md).

    >>> ds = read_dataset({"q1": {"d1": 2}}, rel=2)
    >>> ds.threshold, ds.query_ids()
    (2, ['q1'])
    """
    with _AsInvalidInput():
        return _dataset_and_ints(x, rel, subtopics)[0]


def read_qrels(x: Any, *, subtopics: bool = False) -> Qrels:
    """Qrels (any input kind) as the project's ``Qrels`` (IDs as text, grades as integers, duplicates refused);
    ``subtopics=True``: a diversity qrels, as in ``read_dataset``.

    >>> read_qrels([("q1", "d1", 1)]).frame.height
    1
    >>> read_qrels([("q1", "d1", 1, "1"), ("q1", "d1", 0, "2")], subtopics=True).frame.height
    2
    """
    return read_dataset(x, subtopics=subtopics).qrels


def read_run(x: Any) -> Run:
    """A run (any input kind) as the project's ``Run``.

    A dict or DataFrame run has no rank column: each query is ordered by
    score, ties by document ID as trec_eval does (descending).

    >>> read_run({"q1": {"a": 1.0, "b": 1.0}}).frame.get_column("doc_id").to_list()
    ['b', 'a']
    """
    with _AsInvalidInput():
        return _run_and_ints(x)[0]


def write_run(run: Any, path: str | os.PathLike, format: str = "trec", *, run_id: str | None = None,
              dataset_id: str | None = None, dataset_version: str | None = None) -> None:
    """Write a run (any input kind) atomically as TREC (``format="trec"``, .gz by name) or the project's JSON.

    A JSON run names itself and the dataset it belongs to: pass ``run_id``
    and ``dataset_id`` when the run does not carry them (a dict does not).

    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "run.trec"
    >>> write_run({"q1": {"d1": 0.5}}, p)
    >>> p.read_text().split()[:4]
    ['q1', 'Q0', 'd1', '1']
    """
    with _AsInvalidInput():
        if format not in ("trec", "json"):
            raise UsageError("E_USAGE", f"format must be 'trec' or 'json', not {format!r}")
        r = copy.copy(read_run(run))
        r.run_id = run_id if run_id is not None else r.run_id
        r.dataset_id = dataset_id if dataset_id is not None else r.dataset_id
        r.dataset_version = dataset_version if dataset_version is not None else r.dataset_version
        if format == "trec":
            from converters.trec_run import write_trec_run

            write_trec_run(r, path)
            return
        if r.dataset_id is None or r.run_id is None:
            raise UsageError("E_USAGE", "a JSON run names itself and the dataset it belongs to, and this run does "
                             "not: pass run_id= and dataset_id= (and dataset_version= if the dataset has versions)")
        from converters.json_run_dump import dump_run

        dump_run(r, path)


class Evaluator:
    """Judgments and measures read and checked once, then any number of runs scored against them.

    >>> ev = Evaluator({"q1": {"d1": 1}}, "P@1")
    >>> ev.score({"q1": {"d1": 0.3}}).means
    {'P@1': 1.0}
    """

    def __init__(self, qrels: Any, measures: Any, policy: str = "strict", *, rel: int | None = None,
                 split: str | None = None):
        from .policy import Policy, get_policy
        from .scorer import Judgments, refuse_unreproducible, select_checked

        with _AsInvalidInput():
            self.measures = _measures(measures)
            self.policy = policy if isinstance(policy, Policy) else get_policy(policy)
            dataset, self._ints = _dataset_and_ints(qrels, rel)
            self.dataset = select_checked(dataset, split)
            refuse_unreproducible(self.dataset, self.measures, self.policy)
            self._judgments = Judgments(self.dataset)  # joined once, copied for each run
        self._inputs = _path_input("dataset", qrels)

    def score(self, run: Any, *, client: Any = None) -> "Result":
        """Score one run (any input kind) under the evaluator's policy; see ``score``.  ``client``: a
        ``distributed.Client`` or a scheduler address; a run file or a Dask DataFrame is then scored on the cluster."""
        from .cluster import is_dask_collection
        from .evaluation import label
        from .scorer import evaluate

        if is_dask_collection(run) or (client is not None and _is_path(run)):
            return self._on_cluster(run, client)
        with _AsInvalidInput():
            prepared, metadata = self._prepared(run)
            result = evaluate(prepared, self.measures, self.policy)
        label(result, self.dataset, self.measures.notes)
        return Result(result, {**self._inputs, **_path_input("run", run)}, metadata)

    def _prepared(self, run: Any):
        """The run read against the judgments, and its metadata.  A run held in Python (a dict, a DataFrame, ...)
        is scored without being sorted where the policy allows (``grouped_run``: the same numbers, read off one
        sort of packed keys); a path, a ``Run`` or what that does not cover goes through the sorted ``Run``."""
        from .scorer import orderings_for, prepare_checked

        if isinstance(run, Run) or _is_path(run):
            r, ints = _run_and_ints(run)
            self._check_ids(r, ints)
        else:
            from converters.interop import order_grouped_run
            from converters.python_objects import grouped_run_from_object

            from .grouped_run import prepare_grouped

            grouped, ints = grouped_run_from_object(run)
            self._check_ids(grouped, ints)
            prepared = prepare_grouped(self._judgments, grouped, orderings_for(self.measures, self.policy),
                                       self.policy.duplicates, len(self.measures))
            if prepared is not None:
                return prepared, {}
            r = order_grouped_run(grouped)
        return prepare_checked(self.dataset, r, self.measures, self.policy, self._judgments), r.metadata

    def _on_cluster(self, run: Any, client: Any) -> "Result":
        """A run file or a Dask DataFrame scored on a Dask cluster (cluster.py), as ``score`` scores it here."""
        from .cluster import is_dask_collection, score_dataframe, score_file
        from .evaluation import label
        from .part_scores import PartJob

        job = PartJob(self.dataset, self.measures, self.policy, int_ids=self._ints)
        with _AsInvalidInput():
            if is_dask_collection(run):
                result, meta = score_dataframe(client, job, run)
            else:
                result, meta = score_file(client, job, os.fspath(run))
        label(result, self.dataset, self.measures.notes)
        return Result(result, {**self._inputs, **_path_input("run", run)}, meta)

    def score_many(self, runs: Any, jobs: int | None = None, *, client: Any = None) -> "ScoredRuns":
        """Score many runs (a list, or a dict of name -> run; any input kind each) in ``jobs`` worker processes
        (default: the cores; 1: this process), each exactly as ``score`` would; ``client`` (a
        ``distributed.Client`` or a scheduler address): one task a run on that Dask cluster instead.  A run with
        bad input does not stop the others: it is in ``.errors`` (its code and message), the others in
        ``.results``.

        >>> ev = Evaluator({"q1": {"d1": 1}}, "P@1")
        >>> many = ev.score_many({"good": {"q1": {"d1": 0.3}}, "bad": {"q1": {"d1": float("nan")}}}, jobs=1)
        >>> many.results["good"].means, many.errors["bad"]["code"]
        ({'P@1': 1.0}, 'E_RUN_SCORE')
        """
        from .many_runs import score_all

        named = dict(runs) if isinstance(runs, dict) else {_run_label(r, i): r for i, r in enumerate(runs)}
        outcomes = score_all(_EvaluatorJob(self), list(named.values()), jobs, cluster=client)
        return ScoredRuns({name: Result(o.result, {**self._inputs, **_path_input("run", run)})
                           for (name, run), o in zip(named.items(), outcomes) if o.error is None},
                          {name: o.error for name, o in zip(named, outcomes) if o.error is not None})

    def crosscheck(self, run: Any, against: Any = None, *, complete: bool = False,
                   explain_policy: Any = None) -> "Crosscheck":
        """Cross-check one run against the reference tools with the evaluator's judgments; see ``crosscheck``."""
        from .crosscheck import crosscheck as check, tools_asked
        from .policy_explain import policies_asked

        with _AsInvalidInput():
            tools, explain = tools_asked(against), policies_asked(explain_policy)
            if not tools and not explain:
                raise UsageError("E_USAGE", "against='none' runs no tool: name a policy to explain (explain_policy)")
            r, ints = _run_and_ints(run)
            self._check_ids(r, ints)
            result = check(self.dataset, r, self.measures, tools, complete=complete, explain=explain,
                           rank_run=_rank_reading(run, r, explain))
        return Crosscheck(result, {**self._inputs, **_path_input("run", run)}, r.metadata)

    def _check_ids(self, run, run_ints) -> None:
        """Integer IDs on one side against the other side's string spellings (7 against "007"); ``run``: a ``Run``
        or the unsorted path's ``GroupedRows`` (its rows in ``.frame`` either way)."""
        from converters.python_objects import check_id_spellings

        check_id_spellings(self.dataset, self._ints, run, run_ints)


def _rank_reading(given: Any, run: Run, explain: list) -> Run | None:
    """A TREC run file read again by its rank column, for a policy to explain that reads it so (MS MARCO's)."""
    from .policy_explain import needs_rank_reading

    if not _is_path(given) or not needs_rank_reading(run, explain):
        return None
    from converters.detect import load_run_any

    return load_run_any(given, order="rank")


def _run_label(run: Any, index: int) -> str:
    """A run's name in ``score_many``'s results: its path, else its position ("run 0", "run 1", ...)."""
    return os.fspath(run) if _is_path(run) else f"run {index}"


class _EvaluatorJob:
    """``Evaluator.score_many``'s job: the evaluator's checked judgments, sent once to each worker."""

    def __init__(self, evaluator: Evaluator) -> None:
        self.evaluator = evaluator

    def score_one(self, run: Any):
        from .many_runs import RunOutcome, outcome_of_error

        try:
            return RunOutcome(_run_label(run, 0), result=self.evaluator.score(run).result)
        except InvalidInput as exc:
            return outcome_of_error(_run_label(run, 0), exc)


class ScoredRuns:
    """``Evaluator.score_many``'s outcome: ``results`` (name -> Result) and ``errors`` (name -> {code, message})."""

    def __init__(self, results: dict[str, "Result"], errors: dict[str, dict]) -> None:
        self.results, self.errors = results, errors

    @property
    def means(self) -> dict[str, dict[str, float | None]]:
        """Each scored run's means."""
        return {name: r.means for name, r in self.results.items()}

    def __repr__(self) -> str:
        return f"<ScoredRuns: {len(self.results)} scored, {len(self.errors)} invalid>"


def _path_input(role: str, x: Any) -> dict:
    """The report's input fingerprint of a file given by path, as the CLI records it (no entry otherwise)."""
    from .evaluation import input_fingerprints

    return input_fingerprints({role: os.fspath(x)}, hashed=True) if _is_path(x) else {}


def score(qrels: Any, run: Any, measures: Any, policy: str = "strict", *, rel: int | None = None,
          split: str | None = None, client: Any = None) -> "Result":
    """Score ``run`` against ``qrels`` under ``policy`` (strict by default), as ``trec-bridge score`` does.

    ``measures``: "nDCG@10 RR@10", a list of such strings, or ir_measures
    objects (``ir_measures.nDCG@10``).  ``policy``: strict, trec_eval,
    trec_eval_c, pytrec_eval or ir_measures.  ``rel``: the relevance
    threshold (trec_eval -l).  A dict or DataFrame run has no rank column:
    each query is ordered by score, ties by document ID as trec_eval does.
    Integer IDs are read as decimal text; 7 against "007" is refused
    (E_ID_COLLISION).  Bad input raises ``InvalidInput`` (``.code``).
    ``run`` may be a Dask DataFrame (ir_measures' columns): it is scored
    partition by partition where the partitions are, never collected, on
    ``client`` (a ``distributed.Client`` or a scheduler address) or Dask's
    current scheduler; a run file with ``client`` is read and scored on that
    cluster's workers.  The numbers are the ones scored here (docs/api.md).

    >>> score({"q1": {"d1": 1}, "q2": {"d9": 1}}, {"q1": {"d1": 0.5}}, "P@1").outcome
    'incomplete'
    """
    return Evaluator(qrels, measures, policy, rel=rel, split=split).score(run, client=client)


def explain(qrels: Any, run: Any, theirs: Any, measures: Any = None, *, rel: int | None = None,
            split: str | None = None) -> "Explained":
    """Which conventions make trec-bridge reproduce ``theirs`` for this qrels and run (``trec-bridge explain``).

    ``theirs``: a path or text of trec_eval output (with or without -q),
    ir_measures output, a query/measure/value TSV, JSON ``{measure: {query:
    value}}``, summary figures (``"nDCG@10=0.612 MRR@10=0.41"``), or a dict
    ``{measure: {query: value}}`` / ``{measure: value}``.  ``measures``: only
    these of theirs.  A run given as a TREC file is searched in its rank
    column too.

    >>> ex = explain({"q1": {"a": 1}}, {"q1": {"a": 1.0, "b": 1.0}}, {"RR": {"q1": 1.0}})
    >>> ex.explained, ex.best("RR")  # strict breaks the tie by document ID descending (b, then a: RR 0.5); ranx
    (True, [{'tool': 'ranx', 'differs': {}}])
    >>> # keeps a short tie in the order given (a, then b: RR 1), so their figure is ranx's, no axis changed
    """
    from converters.theirs import read_theirs

    from .explain_search import explain as search

    with _AsInvalidInput():
        dataset = select_checked_dataset(qrels, rel, split)
        r, _ = _run_and_ints(run)
        by_rank = None
        if _is_path(run) and r.order_source == "score":
            from converters.detect import load_run_any

            by_rank = load_run_any(run, order="rank")
        chosen = None if measures is None else _measures(measures)
        return Explained(search(dataset, r, read_theirs(theirs), chosen, run_by_rank=by_rank))


def select_checked_dataset(qrels: Any, rel: int | None, split: str | None) -> Dataset:
    from .scorer import select_checked

    return select_checked(_dataset_and_ints(qrels, rel)[0], split)


class Explained:
    """``explain``'s answer: ``explained``, per measure ``best(measure)`` and ``decided(measure)``, the JSON and
    the text of ``trec-bridge explain`` (``to_json()``, ``str()``)."""

    def __init__(self, explanation):
        self.explanation = explanation

    @property
    def explained(self) -> bool:
        return self.explanation.explained

    def _measure(self, measure: str):
        for m in self.explanation.measures:
            if measure in (m.measure, m.spelled):
                return m
        raise KeyError(measure)

    def best(self, measure: str) -> list[dict]:
        """[{"tool": name, "differs": {axis: value}}] closest to a known tool's defaults (empty: not reproduced)."""
        from .explain_report import best

        return best(self._measure(measure))

    def decided(self, measure: str) -> dict[str, list[str]]:
        """axis -> the values that reproduce their figures, for the axes these inputs decide."""
        m = self._measure(measure)
        return {k: v for k, v in m.decided.items() if k not in m.undecided}

    def to_json(self) -> dict:
        from .explain_report import explanation_json

        return explanation_json(self.explanation)

    def __str__(self) -> str:
        from .explain_report import render_text

        return render_text(self.explanation)

    __repr__ = __str__
def crosscheck(qrels: Any, run: Any, measures: Any, against: Any = None, *, rel: int | None = None,
               split: str | None = None, complete: bool = False, explain_policy: Any = None) -> "Crosscheck":
    """Run the reference tools on the same inputs and explain every difference from the strict numbers, as
    ``trec-bridge crosscheck`` does.

    ``against``: "trec_eval,ir_measures", a list, or None for every
    registered tool (a tool that is not installed is refused:
    E_REFERENCE_UNAVAILABLE).  Each tool's numbers are compared with our
    emulation of it (its policy), and what separates them from the strict
    numbers is decomposed over the named divergence axes (docs/divergences.md).
    ``complete``: trec_eval with -c.  ``explain_policy``: "msmarco,beir" or a list, the policies no tool can
    be run for (the leaderboard scripts), each walked from strict on the same inputs (``policy_table``);
    ``against="none"`` then runs no tool.

    >>> cc = crosscheck({"q1": {"d1": 1}, "q2": {"d2": 1}}, {"q1": {"d1": 1.0}}, "P@1", against="pytrec_eval")
    >>> cc.outcome, cc.table[["strict", "reference", "axes"]].to_dict("records")
    ('explained', [{'strict': 0.5, 'reference': 1.0, 'axes': 'query_set'}])
    >>> cc = crosscheck({"q1": {"d1": 0, "d2": 1}}, {"q1": {"d1": 2.0, "d2": 1.0}}, "RR@10", against="none",
    ...                 explain_policy="msmarco")
    >>> cc.policy_table[["policy", "strict", "value", "axes"]].to_dict("records")
    [{'policy': 'msmarco', 'strict': 0.5, 'value': 1.0, 'axes': 'relevance'}]
    """
    return Evaluator(qrels, measures, rel=rel, split=split).crosscheck(run, against, complete=complete,
                                                                       explain_policy=explain_policy)


class Crosscheck:
    """A cross-check's outcome: a table per tool and measure, the per-query differences, and their explanations.

    >>> cc = crosscheck({"q1": {"d1": 1}}, {"q1": {"d1": 1.0}}, "P@1", against=["pytrec_eval"])
    >>> cc.outcome, list(cc.table.columns)
    ('explained', ['tool', 'measure', 'strict', 'reference', 'emulation', 'agrees', 'axes'])
    """

    def __init__(self, result, inputs: dict | None = None, run_metadata: dict | None = None):
        self.result = result  # crosscheck.CrosscheckResult, for what this class does not surface
        self._inputs = inputs or {}
        self._run = run_metadata or {}  # the run's system object and timing, reported as the CLI reports them

    @property
    def outcome(self) -> str:
        """"explained" (every difference is attributed to a named axis) or "unexplained"."""
        return "unexplained" if self.result.unexplained else "explained"

    @property
    def strict(self) -> "Result":
        """The strict scores of the run."""
        return Result(self.result.strict, self._inputs)

    @property
    def table(self):
        """A pandas DataFrame, one row per tool and measure: the means (strict, the tool's, our emulation's),
        whether emulation and tool agree, and the axes that separate strict from the tool ("" when equal)."""
        import pandas as pd

        rows = [(t.tool, name, a["strict"], a["reference"], a["emulation"], a["agrees"],
                 ", ".join(p["axis"] for p in a["parts"]))
                for t in self.result.tools if t.available for name, a in t.aggregates.items()]
        return pd.DataFrame(rows, columns=["tool", "measure", "strict", "reference", "emulation", "agrees", "axes"])

    @property
    def differences(self):
        """A pandas DataFrame of the per-query values where strict and a tool differ, with the axes that
        explain each (``explanations`` has each axis's share)."""
        import pandas as pd

        rows = [(t.tool, r["query_id"], r["measure"], r["strict"], r["reference"], r["emulation"], r["agrees"],
                 ", ".join(p["axis"] for p in r["parts"]))
                for t in self.result.tools if t.available for r in t.rows if "parts" in r]
        return pd.DataFrame(rows, columns=["tool", "query_id", "measure", "strict", "reference", "emulation",
                                           "agrees", "axes"])

    @property
    def explanations(self) -> list[dict]:
        """Every strict/tool difference (means: query_id None) with its steps, one per axis: the axis, why
        (its reason) and the share of the difference it accounts for (delta)."""
        out = []
        for t in self.result.tools:
            if not t.available:
                continue
            out += [{"tool": t.tool, "measure": name, "query_id": None, "parts": a["parts"]}
                    for name, a in t.aggregates.items() if a["parts"]]
            out += [{"tool": t.tool, "measure": r["measure"], "query_id": r["query_id"], "parts": r["parts"]}
                    for r in t.rows if r.get("parts")]
        return out

    @property
    def policy_table(self):
        """A pandas DataFrame, one row per explained policy (``explain_policy``) and measure it computes: strict,
        the policy's value, and the axes that separate them ("" when equal)."""
        import pandas as pd

        rows = [(e.policy.name, name, a["strict"], a["policy"], ", ".join(p["axis"] for p in a["parts"]))
                for e in self.result.explanations for name, a in e.aggregates.items()]
        return pd.DataFrame(rows, columns=["policy", "measure", "strict", "value", "axes"])

    @property
    def unexplained(self) -> list:
        """The differences between a tool and our emulation of it (empty when the cross-check holds)."""
        return self.result.unexplained

    def to_json(self, path: str | os.PathLike) -> None:
        """Write the report of ``trec-bridge crosscheck --json`` (atomically)."""
        from .crosscheck_report import full_report
        from .json_text import dumps
        from .outputs import atomic_write

        report = full_report(self.result, self._inputs or None, self._run.get("system"), self._run.get("timing"))
        atomic_write(os.fspath(path), dumps(report, allow_nan=True) + "\n")  # the reference tools' NaN as given

    def write_reproducer(self, folder: str | os.PathLike):
        """The minimal reproducer of the first unexplained difference, written under ``folder``/<tool>/; its
        folder, or None when there is nothing to reproduce."""
        from .crosscheck import write_reproducer

        return write_reproducer(self.result, folder)

    def __repr__(self) -> str:
        from .crosscheck_report import render_text

        return render_text(self.result, per_query=False).rstrip("\n")

    def _repr_html_(self) -> str:
        head = f"<p>cross-check: {html.escape(self.outcome)}</p>"
        return head + self.table.to_html(index=False, na_rep="null")


class Result:
    """One run's scores: means, exact means, a per-query table, the outcome and the report.

    >>> r = score({"q1": {"d1": 1, "d2": 0}}, {"q1": {"d2": 0.9, "d1": 0.1}}, "RR")
    >>> r.means, r.exact, r.outcome
    ({'RR': 0.5}, {'RR': Fraction(1, 2)}, 'complete')
    """

    def __init__(self, result: ScoreResult, inputs: dict | None = None, run_metadata: dict | None = None):
        self.result = result  # the scorer's full result, for what this class does not surface
        self._inputs = inputs or {}
        self._run_metadata = run_metadata or {}  # the run's system object and timing, for the report

    @property
    def means(self) -> dict[str, float | None]:
        """Each measure's mean over the policy's eligible queries (None: no eligible query)."""
        return {name: m.value for name, m in self.result.means.items()}

    @property
    def exact(self) -> dict[str, Fraction]:
        """The exact mean of each rational measure (P, R, RR, AP, ...)."""
        return {name: m.exact for name, m in self.result.means.items() if m.exact is not None}

    @property
    def per_query(self):
        """A pandas DataFrame, one row per query and measure: query_id, measure, value (None: null), status."""
        import pandas as pd

        names = [str(m) for m in self.result.measures]
        rows = [(q.query_id, n, q.values[n], q.status) for q in self.result.queries for n in names]
        return pd.DataFrame(rows, columns=["query_id", "measure", "value", "status"])

    @property
    def outcome(self) -> str:
        """"complete", or "incomplete" when a query of the set is missing or failed (scored 0, kept in the mean)."""
        return "complete" if self.result.complete else "incomplete"

    @property
    def missing(self) -> list[str]:
        """Queries of the query set the run does not answer (scored 0 and kept in the strict mean)."""
        return self.result.missing

    @property
    def no_relevant(self) -> list[str]:
        """Queries with no relevant judged document (null under strict, out of the mean)."""
        return self.result.no_relevant

    @property
    def unjudged(self) -> list[str]:
        """Run queries the qrels never judge (listed, never scored)."""
        return list(self.result.unjudged_queries)

    def to_json(self, path: str | os.PathLike) -> None:
        """Write the JSON report of ``trec-bridge score --json`` (atomically)."""
        from .outputs import atomic_write
        from .report import build_report, report_json

        meta = self._run_metadata
        atomic_write(os.fspath(path), report_json(build_report(self.result, self._inputs, meta.get("system"),
                                                               meta.get("timing"))))

    def _rows(self) -> list[tuple[str, str, str]]:
        return [(name, "null" if m.value is None else f"{m.value:.4f}", str(m.eligible))
                for name, m in self.result.means.items()]

    def __repr__(self) -> str:
        head = f"Result(policy={self.result.policy.name}, outcome={self.outcome}, queries={len(self.result.queries)})"
        width = max([len("measure")] + [len(r[0]) for r in self._rows()])
        lines = [head, f"  {'measure':<{width}}  {'mean':>8}  eligible"]
        lines += [f"  {n:<{width}}  {v:>8}  {e}" for n, v, e in self._rows()]
        return "\n".join(lines)

    def _repr_html_(self) -> str:
        cells = "".join(f"<tr><td>{html.escape(n)}</td><td>{v}</td><td>{e}</td></tr>" for n, v, e in self._rows())
        return (f"<p>policy {html.escape(self.result.policy.name)}, {self.outcome}, "
                f"{len(self.result.queries)} queries</p><table><thead><tr><th>measure</th><th>mean</th>"
                f"<th>eligible</th></tr></thead><tbody>{cells}</tbody></table>")
