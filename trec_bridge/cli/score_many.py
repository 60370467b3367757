"""`trec-bridge score-many DATASET RUN... --measures "MEASURES"`: many runs against one dataset, one table."""
from __future__ import annotations

import argparse
import sys

from dataclasses import dataclass, field

from ..errors import EXIT_INCOMPLETE, EXIT_INVALID, EXIT_OK, TrecBridgeError
from ..integers import int_option
from ..many_runs import RunOutcome, outcome_of_error
from ..tables import FORMATS
from .inputs import add_input_arguments

HELP = """Score many runs against one dataset, in parallel, into one table (runs x measures).

RUN is a run file, a folder (its run files, sorted by name; a folder named
*.parquet is one partitioned Parquet run) or a quoted glob ("runs/*.trec").
Each run is scored exactly as `trec-bridge score DATASET RUN MEASURES` scores
it: --json-dir DIR writes one report per run, DIR/<run file name>.json,
byte-identical to that run's `score --json` report. The measures are an
option (--measures), not a positional argument, so that any number of runs
can follow the dataset.

Runs are scored in --jobs worker processes (default: every core); each
worker reads the judgments once. A run with bad input does not stop the
others: its row says "invalid" with the error code, its error is printed on
standard error, and the other runs are scored and reported.

With --dask ADDRESS the runs are scored on a Dask cluster's workers instead
(one task a run; the workers read the run paths, so they must see the same
files), with the same table and reports.

Exit codes: 0 every run complete; 1 the dataset is invalid (nothing scored),
or at least one run is invalid (the others are still scored and written);
2 no run invalid but at least one incomplete; 7 the Dask cluster could not be
reached or lost a task past Dask's retries (nothing written)."""


def add_parser(sub) -> None:
    p = sub.add_parser("score-many", help="score many runs against one dataset, in parallel, into one table",
                       description=HELP, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_input_arguments(p, run=False)
    p.add_argument("runs", nargs="+", metavar="RUN", help="run files, folders of runs, or quoted globs")
    p.add_argument("--measures", "-m", required=True, help='measures in ir_measures syntax, e.g. "nDCG@10 RR@10"')
    p.add_argument("--policy", default="strict", help="as in score (docs/policy.md)")
    p.add_argument("--jobs", type=int_option("--jobs", 1), metavar="N",
                   help="worker processes (default: the number of cores; 1: score in this process)")
    p.add_argument("--dask", metavar="ADDRESS", help="score on the Dask cluster at this scheduler address "
                   "(tcp://host:8786) instead of local worker processes (needs trec-bridge[dask])")
    p.add_argument("--json-dir", metavar="DIR", help="write each run's JSON report to DIR/<run file name>.json")
    p.add_argument("--json-floats", action="store_true", help="as in score: the reports' numbers as floats only")
    p.add_argument("--format", choices=FORMATS, default="table",
                   help="the table on standard output: " + ", ".join(FORMATS) + " (default table)")
    p.set_defaults(handler=run, io=io)


def io(args):
    """Every file score-many reads and writes (checked before anything is read: trec_bridge.outputs)."""
    from ..many_runs import expand_runs, report_name
    from ..outputs import Declared

    runs = expand_runs(args.runs)
    return Declared(inputs=[args.dataset, args.queries, args.chunk_map, *runs],
                    folders=[(args.json_dir, [report_name(r) for r in runs])])


def run(args) -> int:
    import os

    from ..many_runs import expand_runs, report_name, score_all, warm_up
    from ..outputs import make_dirs, write_many
    from . import say_notes

    runs = expand_runs(args.runs)
    if not args.dask:
        warm_up(args.jobs, len(runs))  # the workers' imports overlap reading the judgments here
    job = FileJob(args.dataset, args.queries, args.rel, args.split, args.chunk_map, args.order, args.policy,
                  args.measures, json=bool(args.json_dir), json_floats=args.json_floats, subtopics=args.subtopics)
    loaded = job.load()  # a bad dataset or measure is refused here, before any run is read
    outcomes = score_all(job, runs, args.jobs, cluster=args.dask)
    if args.json_dir:
        make_dirs(args.json_dir)
        write_many([(os.path.join(args.json_dir, report_name(o.run)), o.report_text) for o in outcomes
                     if o.report_text is not None])
    sys.stdout.write(render_outcomes(outcomes, [str(m) for m in loaded["measures"]], args.format))
    for o in outcomes:
        if o.error is not None:
            sys.stderr.write(f"trec-bridge: error: run {o.run}: {o.error['message']}\n")
    say_notes(loaded["measures"].notes)
    statuses = {o.status for o in outcomes}
    return EXIT_INVALID if "invalid" in statuses else EXIT_INCOMPLETE if "incomplete" in statuses else EXIT_OK


def render_outcomes(outcomes, measures: list[str], fmt: str) -> str:
    """One row per run: its path, status (invalid with the code) and each measure's mean."""
    from ..tables import render

    if fmt == "json":
        from ..report import report_json

        return report_json({"runs": [{"run": o.run, "status": o.status, "error": o.error,
                                      "means": None if o.result is None else
                                      {m: o.result.means[m].value for m in measures}} for o in outcomes]})
    rows = []
    for o in outcomes:
        status = f"invalid {o.error['code']}" if o.error else o.status
        rows.append([o.run, status, *[None if o.result is None else o.result.means[m].value for m in measures]])
    return render(["run", "status", *measures], rows, fmt)


@dataclass
class FileJob:
    """What ``score-many`` scores each run with, as ``score`` would: the settings by value, the dataset read lazily.

    Only paths and settings travel to a worker; each worker reads the
    dataset (and chunk map) once, on its first run.
    """

    dataset: str
    queries: str | None
    rel: int | None
    split: str | None
    chunk_map: str | None
    order: str | None
    policy: str
    measures: str
    json: bool = False
    json_floats: bool = False
    subtopics: bool = False  # --subtopics: the dataset is a diversity qrels
    _loaded: dict = field(default_factory=dict, repr=False, compare=False)

    def load(self):
        """The dataset, chunk map, measures and policy (read once per process); dataset errors raise."""
        if not self._loaded:
            from argparse import Namespace

            from .. import references  # noqa: F401  (a reference tool's module registers its policy)
            from .inputs import load_inputs
            from ..measures import parse_measures
            from ..policy import get_policy

            args = Namespace(**{k: getattr(self, k) for k in ("dataset", "queries", "rel", "split", "chunk_map",
                                                              "order", "policy", "subtopics")})
            inputs, measures, policy = load_inputs(args, read_run=False), parse_measures(self.measures), \
                get_policy(self.policy)
            self._loaded.update(inputs=inputs, measures=measures, policy=policy, judgments=_judgments(
                inputs.dataset, self.split, measures, policy))
        return self._loaded

    def score_one(self, run_path: str) -> RunOutcome:
        try:
            return self._score(run_path)
        except TrecBridgeError as exc:
            return outcome_of_error(run_path, exc)
        except MemoryError:
            return outcome_of_error(run_path, TrecBridgeError("E_TOO_LARGE", "ran out of memory scoring this run",
                                                              file=run_path))

    def _score(self, run_path: str) -> RunOutcome:
        """``score RUN`` without the acceptance options: read in parts when it can, else whole; the same report."""
        from types import SimpleNamespace

        from .report_options import json_report_text
        from ..evaluation import input_fingerprints, label, score_file_in_parts, score_whole
        from ..report import build_report

        loaded = self.load()
        inputs, measures, policy = loaded["inputs"], loaded["measures"], loaded["policy"]
        result = None
        if not self.chunk_map:
            result = score_file_in_parts(inputs.dataset, run_path, measures, policy, order=inputs.order,
                                         split=self.split, fingerprint=self.json, judgments=loaded["judgments"])
        if result is None:
            _, result = score_whole(inputs.dataset, inputs.load_run(run_path), measures, policy,
                                    split=inputs.split, chunk_map=inputs.chunk_map)
        self._share_protocol(result)
        label(result, inputs.dataset, measures.notes)
        text = None
        if self.json:
            roles = {**inputs.roles(), "run": run_path}
            roles = {k: roles[k] for k in ("dataset", "run", "queries", "chunk_map") if k in roles}
            report = build_report(result, input_fingerprints(roles, hashed=True))
            text = json_report_text(report, SimpleNamespace(json_floats=self.json_floats))
        return RunOutcome(run_path, result=result, report_text=text)

    def _share_protocol(self, result) -> None:
        """Every run of the job has one protocol (the same dataset, measures and policy): its fingerprints are
        computed for the first run only (hashing the judgments once per worker, not once per run)."""
        from ..scorer import Known

        known = self._loaded.get("protocol")
        if known is None:
            self._loaded["protocol"] = (Known(result.protocol_fingerprint), Known(result.protocol_parts()))
        else:
            result.protocol, result.protocol_parts = known


def _judgments(dataset, split, measures, policy):
    """The dataset checked, its split selected and joined with the query set once, for every run of the job
    (refusing what ``score`` refuses before it reads a run)."""
    from ..scorer import Judgments, refuse_unreproducible, select_checked

    selected = select_checked(dataset, split)
    refuse_unreproducible(selected, measures, policy)
    return Judgments(selected)
