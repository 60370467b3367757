"""`trec-bridge crosscheck DATASET RUN "MEASURES"`: strict vs trec_eval / pytrec_eval / ir_measures."""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from ..errors import EXIT_INCOMPLETE, EXIT_OK, EXIT_UNEXPLAINED
from ..integers import INT64_MIN, int_option
from ..messages import note
from ..messages import quote



class _RegisteredTools:
    """The registered reference tools' names, looked up when used (importing the adapters is not free)."""

    def __iter__(self):
        from ..references import names

        return iter(names())

    def __contains__(self, name) -> bool:
        return name in list(self)


TOOLS = _RegisteredTools()
REPRO_FILES = ["qrels.txt", "run.txt"]

HELP = """Run the reference tools on the same inputs, show that our emulation of each
reproduces it, and explain every strict-vs-reference difference by policy axis.

Exit codes: 0 every difference explained; 1 invalid input or a requested tool
missing; 2 the run is incomplete under the strict policy (all differences
explained); 3 an unexplained difference (a minimal reproducer is written)."""


def add_parser(sub) -> None:
    p = sub.add_parser("crosscheck", help="compare strict numbers with trec_eval, pytrec_eval and ir_measures",
                       description=HELP, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("dataset", help="JSON dataset or TREC qrels file")
    p.add_argument("run", help="JSON run or TREC run file")
    p.add_argument("measures", help='measures in ir_measures syntax, e.g. "nDCG@10 RR@10 R@100 AP"')
    p.add_argument("--against", help="comma-separated reference tools (default: every registered one, "
                   "see `trec-bridge tools which`)")
    p.add_argument("--complete", action="store_true", help="run trec_eval with -c (every judged query in the mean)")
    p.add_argument("--split", help="only the dataset's queries of this split")
    p.add_argument("--queries", metavar="FILE", help="with TREC qrels: the query set, one ID per line")
    p.add_argument("--rel", type=int_option("--rel", INT64_MIN), metavar="N", help="relevance threshold (trec_eval -l)")
    p.add_argument("--order", choices=["score", "rank"], default="score", help="TREC runs: order by score or rank column")
    p.add_argument("--chunk-map", metavar="FILE", help="collapse chunks to documents first")
    p.add_argument("--json", metavar="OUT", help="write the full cross-check report here")
    p.add_argument("--repro-dir", metavar="DIR", default="trec-bridge-repro",
                   help="where a minimal reproducer goes on an unexplained difference (default: %(default)s)")
    p.add_argument("--per-query", action="store_true", help="print every per-query difference")
    p.set_defaults(handler=run, io=io)


def _against(args) -> str:
    return ",".join(TOOLS) if args.against is None else args.against


def io(args):
    """Every file crosscheck reads and writes, the reproducer of each tool included."""
    from ..outputs import Declared

    tools = [t.strip() for t in _against(args).split(",") if t.strip() in TOOLS]
    return Declared(inputs=[args.dataset, args.run, args.queries, args.chunk_map], outputs=[args.json],
                    folders=[(str(Path(args.repro_dir) / t), REPRO_FILES) for t in tools])


def run(args) -> int:
    from converters.detect import load_dataset_any, load_run_any

    from ..crosscheck import crosscheck, minimal_reproducer
    from ..errors import UsageError
    from ..outputs import atomic_write, make_dirs
    from ..measures import parse_measures
    from ..report import build_report
    from . import say_notes

    against = [t.strip() for t in _against(args).split(",") if t.strip()]
    unknown = [t for t in against if t not in TOOLS]
    if unknown or not against:
        raise UsageError("E_USAGE", f"--against takes {', '.join(TOOLS)}; got {quote(args.against)}")
    measures = parse_measures(args.measures)
    dataset = load_dataset_any(args.dataset, args.queries, args.rel)
    run_ = load_run_any(args.run, order=args.order, chunks=bool(args.chunk_map))
    chunk_map = None
    if args.chunk_map:
        from converters.chunk_map import load_chunk_map

        chunk_map = load_chunk_map(args.chunk_map)
    result = crosscheck(dataset, run_, measures, against, split=args.split, chunk_map=chunk_map,
                        complete=args.complete)
    if measures.notes:
        result.strict.extra["measures"] = list(measures.notes)
    report = crosscheck_report(result, build_report(result.strict))
    if args.json:
        atomic_write(args.json, json.dumps(report, indent=2, sort_keys=True, ensure_ascii=False) + "\n")
    sys.stdout.write(render(result, args.per_query))
    say_notes(measures.notes)
    if result.unexplained:
        first = result.unexplained[0]
        folder = Path(args.repro_dir) / first.tool
        make_dirs(folder)
        qrels_text, run_text = minimal_reproducer(result, first)
        atomic_write(folder / "qrels.txt", qrels_text)
        atomic_write(folder / "run.txt", run_text)
        note(f"{len(result.unexplained)} unexplained difference(s); minimal reproducer in {folder}/")
        return EXIT_UNEXPLAINED
    return EXIT_OK if result.strict.complete else EXIT_INCOMPLETE


def crosscheck_report(result, strict_report: dict) -> dict:
    tools = {}
    for t in result.tools:
        entry = {"available": t.available, "policy": t.policy.name}
        if not t.available:
            entry["reason"] = t.unavailable_reason
        else:
            ref = t.reference
            entry.update({
                "version": t.version, "command": ref.command, "served_by": ref.served_by, "native": ref.native,
                "precision": ref.precision, "unsupported": ref.unsupported, "failed": ref.failed, "notes": ref.notes,
                "aggregates": t.aggregates, "per_query": t.rows,
                "unexplained": [u.to_json() for u in t.unexplained],
            })
        tools[t.tool] = entry
    return {
        "format": "trec-bridge.crosscheck", "version": 1,
        "strict": strict_report,
        "references": tools,
        "outcome": "unexplained" if result.unexplained else "explained",
        "unexplained": [u.to_json() for u in result.unexplained],
    }


def _f(v) -> str:
    return "null" if v is None else (f"{v:.4f}" if isinstance(v, float) else str(v))


def render(result, per_query: bool) -> str:
    out = []
    for t in result.tools:
        if not t.available:
            out.append(f"== {t.tool}: not available ({t.unavailable_reason})\n")
            continue
        ref = t.reference
        out.append(f"== {t.tool} {t.version} (emulated by policy {t.policy.name})")
        out.append(f"{'measure':<24} {'strict':>8} {'ref':>8} {'emulated':>8}  ok   strict - ref by axis")
        for name, agg in t.aggregates.items():
            parts = ", ".join(f"{p['axis']} {_f(p['delta']) if p['delta'] is not None else _f(p.get('from')) + '->' + _f(p.get('to'))}"
                              for p in agg["parts"]) or "-"
            served = ref.served_by.get(name, "")
            label = f"{name}" + (f" [{served}]" if served and t.tool == "ir_measures" else "")
            out.append(f"{label:<24} {_f(agg['strict']):>8} {_f(agg['reference']):>8} {_f(agg['emulation']):>8}  "
                       f"{'yes' if agg['agrees'] else 'NO '}  {parts}")
        for name, why in ref.unsupported.items():
            out.append(f"{name:<24} not compared: {why}")
        for name, why in ref.failed.items():
            out.append(f"{name:<24} {t.tool} failed: {why}")
        differing = [r for r in t.rows if "parts" in r]
        out.append(f"per query: {len(t.rows)} compared, {sum(not r['agrees'] for r in t.rows)} unexplained, "
                   f"{len(differing)} strict/reference differences, all attributed to axes" if not t.unexplained else
                   f"per query: {len(t.unexplained)} UNEXPLAINED")
        if per_query:
            for r in differing:
                parts = ", ".join(p["axis"] for p in r.get("parts", []))
                out.append(f"  {r['query_id']:<12} {r['measure']:<20} strict {_f(r['strict'])} ref {_f(r['reference'])}"
                           f" emu {_f(r['emulation'])}  {parts}")
        out.append("")
    verdict = "every difference is explained" if not result.unexplained else f"{len(result.unexplained)} UNEXPLAINED"
    out.append(f"cross-check: {verdict}")
    return "\n".join(out) + "\n"
