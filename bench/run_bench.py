#!/usr/bin/env python3
"""Issue 7 benchmark: trec-bridge against trec_eval 9.0.4 and the Python tools, whole processes.

For each workload, every loop iteration runs each selected tool once as its own
process (the order rotates between iterations) and measures its wall time
(``time.perf_counter`` around ``Popen`` .. ``os.wait4``) and peak RSS
(``ru_maxrss`` of that child from ``os.wait4``: the largest single process of
its tree, so a ``crosscheck`` that starts trec_eval reports the larger of the
two). Ratios are taken against trec_eval's time *in the same iteration*, and
the median of those ratios is reported.

The numbers are checked, every iteration:

* ``score --policy trec_eval`` (measures ``nDCG@10 RR R@100 R@1000 P@10 AP``:
  trec_eval has no RR@10, its ``recip_rank`` ignores cutoffs, and so does
  ``RR`` under that policy) must print trec_eval's ``all`` means to its 4
  decimals;
* ``score`` (strict) must agree with trec_eval where nothing may differ on this
  input: same query set (no qrels query missing from the run, none without a
  relevant document), binary qrels for nDCG (exponential = linear gain), no
  float32 score collision that moves a relevant document (trec_eval reads
  scores as C floats); ``RR@10`` is compared with ir_measures' ``RR@10``
  instead, when no float64 score tie moves a relevant document (ir_measures
  breaks ties by docno ascending, we by docno descending);
* pytrec_eval's means must equal trec_eval's (same C code); ir_measures'
  must too when no qrels query is missing from the run (it averages missing
  queries as 0);
* ``crosscheck`` must exit 0 or 2 (every difference explained), never 3.

A disagreement is printed loudly on stderr and the script exits 1. Targets are
reported, not enforced (``--fail-on-targets`` makes a missed target exit 4).

Usage (from the repository root, in the project's venv):

    python bench/run_bench.py --work /tmp/tb-bench                 # W1 and W2, 3 repeats
    python bench/run_bench.py --work /tmp/tb-bench --workloads W3  # 50M lines: minutes, ~2 GB disk
    python bench/run_bench.py --quick                              # tiny workloads, seconds
    python bench/run_bench.py --work /tmp/tb-bench --update-readme # replace the table in bench/README.md
"""
from __future__ import annotations

import argparse
import dataclasses
import datetime as _dt
import hashlib
import importlib.util
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Callable

BENCH_DIR = Path(__file__).resolve().parent
REPO = BENCH_DIR.parent
DEFAULT_GEN = REPO.parent / "shared" / "bench" / "gen.py"
README = BENCH_DIR / "README.md"
README_BEGIN = "<!-- bench:results:begin (written by run_bench.py --update-readme) -->"
README_END = "<!-- bench:results:end -->"

STRICT_MEASURES = "nDCG@10 RR@10 R@100 R@1000 P@10 AP"
TE_POLICY_MEASURES = "nDCG@10 RR R@100 R@1000 P@10 AP"  # RR: trec_eval's recip_rank has no cutoff
# issue 18 §4: ir_measures' families beyond trec_eval, against ir_measures' own time for them (gdeval, cwl_eval,
# pyndeval), on the workload's qrels with a subtopic in the second column (``subtopic_twin``)
IRM_MEASURES = "ERR@20 RBP(p=0.8,rel=1) alpha_nDCG@20"
IRM_NAMES = {"ERR@20": "ERR@20", "RBP(rel=1)": "RBP(rel=1)",
             "alpha_nDCG@20": "alpha_nDCG@20"}  # our printed name -> ir_measures' printed name
SUBTOPICS = 4  # subtopic IDs 1..4, shared across queries as in TREC's diversity qrels
TE_ARGS = ["-m", "map", "-m", "P.10", "-m", "recall.100,1000", "-m", "ndcg_cut.10", "-m", "recip_rank"]
TE_NAMES = {"map": "AP", "P_10": "P@10", "recall_100": "R@100", "recall_1000": "R@1000",
            "ndcg_cut_10": "nDCG@10", "recip_rank": "RR"}
RANX_NAMES = {"ndcg@10": "nDCG@10", "mrr@10": "RR@10", "recall@100": "R@100", "recall@1000": "R@1000",
              "precision@10": "P@10", "map": "AP"}
ORDER_FREE = ("R@100", "R@1000", "P@10", "AP")  # with nDCG@10 (binary qrels): strict must equal trec_eval

# Expected sha256 of gen.py's output (numpy 2.x PCG64), from shared/bench/README.md.
KNOWN_SHA256 = {
    "W1.run": "b08cdb00845b4ecd00eb0e33a0b02be4cbff3974b4f8c1236b49408613421168",
    "W1.qrels": "388004dd28cceb2d97797c0dd57d907e814f6307f6bd29e919f07b8adc286f6e",
    "W2.run": "136a424bda68a74d789a832cdbc2f3db2d578f41179b6167f203d3965ab3b48d",
    "W2.qrels": "9589017ed0d7ad1ea3032044318e3b00817d9913894e2af2ffba0d2faabf86e6",
}

# ---------------------------------------------------------------------------------------------
# workloads

@dataclasses.dataclass(frozen=True)
class WorkloadSpec:
    name: str
    shape: str
    kind: str  # "gen": gen.py's own workload; "small": a small msmarco/dl19-like one made with gen.py's functions;
    # "tiny": many queries of 1-10 documents, made by _generate_tiny (gen.py has no such shape)
    small: dict | None = None


WORKLOADS = {
    "W1": WorkloadSpec("W1", "6,980 q × 1,000 docs (7M lines), binary qrels", "gen"),
    "W1d": WorkloadSpec("W1d", "W1 with 1% queries missing and score ties", "gen"),
    "W2": WorkloadSpec("W2", "43 q × 1,000 docs, graded 0-3 qrels", "gen"),
    "W3": WorkloadSpec("W3", "50,000 q × 1,000 docs (50M lines, 1.9 GB)", "gen"),
    # issue 14 item 7: per-query cost, not bytes; trec_eval's time grows with the square of the query count
    # (100k queries: ~200 s), so its ratio is measured on W4s and W4 is run without it (--tools score,score-te)
    "W4": WorkloadSpec("W4", "1,000,000 q × 1-10 docs (5.5M lines), one relevant per query", "tiny",
                       {"nq": 1_000_000, "seed": 20261201}),
    "W4s": WorkloadSpec("W4s", "100,000 q × 1-10 docs (0.55M lines), one relevant per query", "tiny",
                        {"nq": 100_000, "seed": 20261202}),
    # --quick: the same generators, a few hundred queries
    "Q1": WorkloadSpec("Q1", "100 q × 1,000 docs, W1-like binary qrels", "small",
                       {"fn": "msmarco", "nq": 100, "seed": 7000}),
    "Q1d": WorkloadSpec("Q1d", "100 q × 1,000 docs, W1d-like defects (missing queries, ties)", "small",
                        {"fn": "msmarco", "nq": 100, "seed": 7001, "defects": True}),
    "Q2": WorkloadSpec("Q2", "8 q × 1,000 docs, W2-like graded qrels", "small",
                       {"fn": "dl19", "nq": 8, "seed": 7002}),
}
QUICK = ["Q1", "Q1d", "Q2"]
WARMUP = WorkloadSpec("warmup", "5 q × 1,000 docs", "small", {"fn": "dl19", "nq": 5, "seed": 7003})


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def _load_gen(gen_path: Path):
    spec = importlib.util.spec_from_file_location("trec_bridge_bench_gen", gen_path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def ensure_workload(spec: WorkloadSpec, work: Path, gen_path: Path | None) -> tuple[Path, Path, str]:
    """(qrels, run, how it was made); existing files in ``work`` are reused."""
    qrels, run = work / f"{spec.name}.qrels", work / f"{spec.name}.run"
    if qrels.is_file() and run.is_file():
        return qrels, run, "reused"
    tmp = Path(tempfile.mkdtemp(prefix=f".gen-{spec.name}-", dir=work))
    t0 = time.perf_counter()
    try:
        if spec.kind == "tiny":
            _generate_tiny(tmp, spec.name, spec.small["nq"], spec.small["seed"])
            how = f"run_bench.py _generate_tiny, {spec.small['nq']:,} queries"
        elif gen_path is not None and spec.kind == "gen":
            log(f"generating {spec.name} with {gen_path} (W1: ~15 s, W3: a few minutes) ...")
            subprocess.run([sys.executable, str(gen_path), "--out", str(tmp), spec.name], check=True)
            how = f"gen.py {spec.name}"
        elif gen_path is not None:
            gen = _load_gen(gen_path)
            s = spec.small
            if s["fn"] == "msmarco":
                gen.gen_msmarco_like(str(tmp), spec.name, s["nq"], 1_102_432, s["seed"],
                                     defects=s.get("defects", False))
            else:
                gen.gen_dl19_like(str(tmp), spec.name, nq=s["nq"], seed=s["seed"])
            how = f"gen.py functions, {s['nq']} queries"
        else:
            log(f"generating {spec.name} with run_bench.py's own generator (gen.py not found) ...")
            _fallback_generate(spec, tmp)
            how = "run_bench.py fallback generator (same shapes, not gen.py's bytes)"
        for p in (qrels, run):  # move into place only when complete
            os.replace(tmp / p.name, p)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    log(f"{spec.name}: generated in {time.perf_counter() - t0:.1f}s")
    return qrels, run, how


def _generate_tiny(out: Path, name: str, nq: int, seed: int) -> None:
    """``nq`` queries of 1-10 documents each (uniform), numeric IDs, strictly decreasing scores; one relevant
    document per query, retrieved for 70% of the queries (the others' relevant document is not in the run)."""
    import numpy as np

    rng = np.random.default_rng(seed)
    k = rng.integers(1, 11, size=nq)
    qids = np.arange(1, nq + 1)
    starts = np.cumsum(k) - k
    n = int(k.sum())
    rank = np.arange(n) - np.repeat(starts, k) + 1
    docs = rng.integers(0, 8_841_823, size=n) * 16 + rank  # distinct within a query
    q_of = np.repeat(qids, k)
    step = 500_000
    with open(out / f"{name}.run", "w", buffering=1 << 22) as fh:
        for at in range(0, n, step):
            sl = slice(at, at + step)
            fh.write("".join(f"{q} Q0 {d} {r} {1000 - r}.000000 tiny\n"
                             for q, d, r in zip(q_of[sl].tolist(), docs[sl].tolist(), rank[sl].tolist())))
    pick = starts + (rng.random(nq) * k).astype(np.int64)
    rel = np.where(rng.random(nq) < 0.7, docs[pick], rng.integers(0, 8_841_823, size=nq) * 16)
    with open(out / f"{name}.qrels", "w") as fh:
        fh.write("".join(f"{q} 0 {d} 1\n" for q, d in zip(qids.tolist(), rel.tolist())))


def _fallback_generate(spec: WorkloadSpec, out: Path) -> None:
    """Same shapes as gen.py (msmarco-like or dl19-like), without its exact bytes."""
    import numpy as np

    sizes = {"W1": ("msmarco", 6980, 20240601, False), "W1d": ("msmarco", 6980, 20240601, True),
             "W2": ("dl19", 43, 20190043, False), "W3": ("msmarco", 50_000, 20245000, False)}
    if spec.kind == "small":
        fn, nq, seed, defects = spec.small["fn"], spec.small["nq"], spec.small["seed"], spec.small.get("defects", False)
    else:
        fn, nq, seed, defects = sizes[spec.name]
    rng = np.random.default_rng(seed)
    depth, ndocs = 1000, 8_841_823
    qids = 2 + rng.choice(1_140_000 if fn == "dl19" else 10_000_000, size=nq, replace=False)
    with open(out / f"{spec.name}.run", "w", buffering=1 << 22) as fr, open(out / f"{spec.name}.qrels", "w") as fq:
        for qi, q in enumerate(qids.tolist()):
            docs = rng.choice(ndocs, size=depth + 400, replace=False) if nq <= 50 else \
                np.unique(rng.integers(0, ndocs, size=depth + 60))[:depth + 20]
            rng.shuffle(docs)
            scale = rng.uniform(4, 20) * 1e6 / (depth - 1)
            gaps = 1 + np.floor(rng.exponential(1.0, depth - 1) * scale).astype(np.int64)
            top = int(rng.uniform(2, 12) * 1e6) + int(gaps.sum())
            sc = np.concatenate(([top], top - np.cumsum(gaps)))
            if defects and qi % 33 == 5:
                sc = (np.round(sc / 10_000) * 10_000).astype(np.int64)  # ties
            if fn == "msmarco":
                nrel = 1 + int(rng.random() < 0.058) + int(rng.random() < 0.006)
                ranks = np.clip(np.floor(np.exp(rng.uniform(0, np.log(depth + 1), nrel))).astype(int), 1, depth)
                rel = [int(docs[r - 1]) if rng.random() < 0.86 else int(docs[depth + i]) for i, r in enumerate(ranks)]
                fq.write("".join(f"{q} 0 {d} 1\n" for d in dict.fromkeys(rel)))
                if defects and qi % 100 == 7:
                    continue  # a qrels query missing from the run
            else:
                p_judged = np.minimum(0.92, 0.92 * (10 / np.arange(1, depth + 1)) ** 0.75)
                judged = np.flatnonzero(rng.random(depth) < p_judged)
                extra = docs[depth:depth + int(rng.integers(20, 200))]
                lines = [(int(docs[r]), int(rng.choice(4, p=[0.45, 0.25, 0.18, 0.12]))) for r in judged]
                lines += [(int(d), int(rng.choice(4, p=[0.4, 0.3, 0.2, 0.1]))) for d in extra]
                fq.write("".join(f"{q} 0 {d} {g}\n" for d, g in lines))
            fr.write("".join(f"{q} Q0 {d} {r} {s // 1_000_000}.{s % 1_000_000:06d} bm25\n"
                             for r, (d, s) in enumerate(zip(docs[:depth].tolist(), sc.tolist()), 1)))


def sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for b in iter(lambda: f.read(1 << 22), b""):
            h.update(b)
    return h.hexdigest()


def warm_page_cache(*paths: Path) -> None:
    for p in paths:
        with open(p, "rb") as f:
            while f.read(1 << 24):
                pass


# ---------------------------------------------------------------------------------------------
# facts about a workload that decide which numbers must agree

def workload_facts(qrels: Path, run: Path) -> dict:
    """Query sets, grades, and whether float32 / tie-break differences can move a relevant document.

    ``f32_moved``: queries where reading scores as C floats (trec_eval) puts a
    relevant document at another position than float64 does (strict), both
    breaking ties by docno descending. Since rounding to float32 is monotone, a
    float32 tie group is a contiguous block in both orders, so comparing the
    grade sequence inside each such block is exact.
    ``f64_tie_moved``: queries where a float64 score tie puts a relevant
    document at another position with docno ascending (ir_measures' msmarco
    provider) than with docno descending (ours).
    Cached next to the files (keyed by size and mtime).
    """
    cache = run.with_suffix(".facts.json")
    key = [qrels.stat().st_size, qrels.stat().st_mtime_ns, run.stat().st_size, run.stat().st_mtime_ns]
    if cache.is_file():
        try:
            cached = json.loads(cache.read_text())
            if cached.get("key") == key:
                return cached["facts"]
        except (OSError, ValueError):
            pass
    import polars as pl

    t0 = time.perf_counter()
    q = pl.read_csv(qrels, separator=" ", has_header=False, new_columns=["q", "it", "d", "g"],
                    schema_overrides={"q": pl.String, "d": pl.String, "g": pl.Int64}, columns=[0, 2, 3])
    r = pl.read_csv(run, separator=" ", has_header=False, new_columns=["q", "q0", "d", "rk", "s", "tag"],
                    schema_overrides={"q": pl.String, "d": pl.String, "s": pl.Float64}, columns=[0, 2, 4])
    qrels_q = set(q.get_column("q").unique().to_list())
    run_counts = r.group_by("q").len()
    run_q = set(run_counts.get_column("q").to_list())
    with_rel = set(q.filter(pl.col("g") >= 1).get_column("q").unique().to_list())
    rel = q.filter(pl.col("g") >= 1).select("q", "d", "g")

    def moved(keys: list[str], keep: pl.Expr, order_a, order_b) -> list[str]:
        """Queries where a tie group (rows sharing ``keys``, filtered by ``keep``) holding a relevant
        document gives another grade sequence under ``order_a`` than under ``order_b``."""
        groups = (r.group_by(keys).agg(pl.len().alias("n"), pl.col("s").n_unique().alias("n64"))
                  .filter(keep).select(keys))
        if groups.height == 0:
            return []
        rows = (r.join(groups, on=keys, how="semi").join(rel, on=["q", "d"], how="left")
                .with_columns(pl.col("g").fill_null(0)))
        hit = rows.filter(pl.col("g") > 0).select(keys).unique()
        out = set()
        for part in rows.join(hit, on=keys, how="semi").partition_by(keys):
            items = list(zip(part.get_column("s").to_list(), part.get_column("d").to_list(),
                             part.get_column("g").to_list()))
            if [t[2] for t in sorted(items, key=order_a)] != [t[2] for t in sorted(items, key=order_b)]:
                out.add(part.get_column("q")[0])
        return sorted(out)

    def desc(d: str) -> tuple:  # docno descending (bytes, like strcmp) as a key for an ascending sort
        return tuple(-b for b in d.encode()) + (1,)

    r = r.with_columns(s32=pl.col("s").cast(pl.Float32))
    # float32 tie groups holding several float64 values: (s desc, docno desc) vs (docno desc)
    f32 = moved(["q", "s32"], pl.col("n64") > 1, lambda t: (-t[0], desc(t[1])), lambda t: desc(t[1]))
    # float64 tie groups: docno descending vs ascending
    f64 = moved(["q", "s"], pl.col("n") > 1, lambda t: desc(t[1]), lambda t: t[1].encode())
    facts = {
        "qrels_queries": len(qrels_q),
        "run_queries": len(run_q),
        "run_lines": r.height,
        "max_depth": int(run_counts.get_column("len").max() or 0),
        "max_grade": int(q.get_column("g").max() or 0),
        "missing": sorted(qrels_q - run_q),
        "run_only": sorted(run_q - qrels_q),
        "no_relevant": sorted(qrels_q - with_rel),
        "f32_moved": f32,
        "f64_tie_moved": f64,
    }
    log(f"{run.name}: workload facts in {time.perf_counter() - t0:.1f}s "
        f"(missing {len(facts['missing'])}, no-relevant {len(facts['no_relevant'])}, "
        f"float32 moves {len(f32)}, float64 tie moves {len(f64)})")
    try:
        cache.write_text(json.dumps({"key": key, "facts": facts}))
    except OSError:
        pass
    return facts


# ---------------------------------------------------------------------------------------------
# output parsers: measure -> value rounded to 4 decimals, as a string

def fmt4(v: float) -> str:
    return "nan" if v != v else f"{v:.4f}"


def parse_trec_eval(text: str) -> dict[str, str]:
    out = {}
    for line in text.splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[1] == "all" and parts[0] in TE_NAMES:
            out[TE_NAMES[parts[0]]] = parts[2]
    return out


SCORE_NAMES = frozenset(STRICT_MEASURES.split() + TE_POLICY_MEASURES.split() + list(IRM_NAMES))


def parse_score_table(text: str) -> dict[str, str]:
    """``trec-bridge score``'s table: ``measure  mean  exact  eligible`` (the mean printed to 4 decimals)."""
    out = {}
    for line in text.splitlines():
        parts = line.split()
        if len(parts) >= 2 and parts[0] in SCORE_NAMES:
            try:
                out[parts[0]] = fmt4(float(parts[1]))
            except ValueError:
                out[parts[0]] = parts[1]  # e.g. a null mean: kept as text, never equal to a number
    return out


def parse_json_means(names: dict[str, str]) -> Callable[[str], dict[str, str]]:
    def parse(text: str) -> dict[str, str]:
        data = json.loads(text.strip().splitlines()[-1])
        return {names[k]: fmt4(float(v)) for k, v in data.items() if k in names}
    return parse


def parse_ir_measures(text: str) -> dict[str, str]:
    out = {}
    for line in text.splitlines():
        parts = line.split("\t")
        if len(parts) == 2:
            try:
                out[parts[0].strip()] = fmt4(float(parts[1]))
            except ValueError:
                pass
    return out


def parse_nothing(text: str) -> dict[str, str]:
    return {}


# ---------------------------------------------------------------------------------------------
# tools

@dataclasses.dataclass
class Ctx:
    python: str
    trec_bridge: list[str]
    trec_eval: str | None
    out_dir: Path
    launcher: Launcher


@dataclasses.dataclass(frozen=True)
class Tool:
    key: str
    label: str
    argv: Callable[[Ctx, Path, Path, Path], list[str]]
    ok_rc: tuple[int, ...]
    parse: Callable[[str], dict[str, str]]
    versus: str = "trec_eval"  # the tool whose wall time, in the same iteration, the ratio divides by
    default: bool = True  # run without --tools (the ir_measures-family pair is slow: ask for it)
    paired: str | None = None  # a tool whose standard output this one must print byte for byte (the drop-in)


TOOLS = [
    Tool("trec_eval", "trec_eval 9.0.4 (C binary)",
         lambda c, q, r, o: [c.trec_eval, *TE_ARGS, str(q), str(r)], (0,), parse_trec_eval),
    Tool("score", "trec-bridge score (strict)",
         lambda c, q, r, o: [*c.trec_bridge, "score", str(q), str(r), STRICT_MEASURES], (0, 2), parse_score_table),
    Tool("score-te", "trec-bridge score --policy trec_eval",
         lambda c, q, r, o: [*c.trec_bridge, "score", str(q), str(r), TE_POLICY_MEASURES, "--policy", "trec_eval"],
         (0, 2), parse_score_table),
    Tool("score-json", "trec-bridge score on the run as JSON (strict)",
         lambda c, q, r, o: [*c.trec_bridge, "score", str(q), str(json_twin(c, r, ".json")), STRICT_MEASURES], (0, 2),
         parse_score_table, default=False),
    Tool("score-jsonl", "trec-bridge score on the run as JSON Lines (strict)",
         lambda c, q, r, o: [*c.trec_bridge, "score", str(q), str(json_twin(c, r, ".jsonl")), STRICT_MEASURES],
         (0, 2), parse_score_table, default=False),
    Tool("score-parquet", "trec-bridge score on the run as one Parquet file (strict)",
         lambda c, q, r, o: [*c.trec_bridge, "score", str(q), str(parquet_twin(c, r)), STRICT_MEASURES], (0, 2),
         parse_score_table, versus="score", default=False),
    Tool("score-parquet-parts", "trec-bridge score on the run as a folder of 16 Parquet partitions (strict)",
         lambda c, q, r, o: [*c.trec_bridge, "score", str(q), str(parquet_twin(c, r, parts=16)), STRICT_MEASURES],
         (0, 2), parse_score_table, versus="score", default=False),
    Tool("convert-json", "trec-bridge convert run TREC -> JSON",
         lambda c, q, r, o: [*c.trec_bridge, "convert", "run", str(r), str(o / "converted.json"), "--dataset-id",
                             "bench"], (0,), parse_nothing, default=False),
    Tool("convert-trec", "trec-bridge convert run JSON -> TREC",
         lambda c, q, r, o: [*c.trec_bridge, "convert", "run", str(json_twin(c, r, ".json")), str(o / "back.trec"),
                             "--no-sidecar"], (0,), parse_nothing, default=False),
    Tool("crosscheck", "trec-bridge crosscheck --against trec_eval,pytrec_eval",
         lambda c, q, r, o: [*c.trec_bridge, "crosscheck", str(q), str(r), STRICT_MEASURES,
                             "--against", "trec_eval,pytrec_eval", "--repro-dir", str(o / "repro")],
         (0, 2, 3), parse_nothing),
    Tool("pytrec_eval", "pytrec_eval (parse in Python + evaluate)",
         lambda c, q, r, o: [c.python, str(BENCH_DIR / "tool_pytrec_eval.py"), str(q), str(r)], (0,),
         parse_json_means(TE_NAMES)),
    Tool("ir_measures", "ir_measures CLI",
         lambda c, q, r, o: [c.python, "-m", "ir_measures", str(q), str(r), STRICT_MEASURES], (0,),
         parse_ir_measures),
    Tool("ranx", "ranx (numba cache as found)",
         lambda c, q, r, o: [c.python, str(BENCH_DIR / "tool_ranx.py"), str(q), str(r)], (0,),
         parse_json_means(RANX_NAMES)),
    Tool("score-irm", f"trec-bridge score {IRM_MEASURES} --policy ir_measures --subtopics",
         lambda c, q, r, o: [*c.trec_bridge, "score", str(subtopic_twin(q)), str(r), IRM_MEASURES, "--policy",
                             "ir_measures", "--subtopics"],
         (0, 2), parse_score_table, versus="ir_measures-irm", default=False),
    Tool("ir_measures-irm", f"ir_measures CLI {IRM_MEASURES} (gdeval, cwl_eval, pyndeval)",
         lambda c, q, r, o: [c.python, "-m", "ir_measures", str(subtopic_twin(q)), str(r), IRM_MEASURES], (0,),
         parse_ir_measures, default=False),
]
# Issue 17 §4: the drop-in `trec-bridge trec_eval` beside the binary with the same arguments, in the same iteration;
# its ratio is against that binary run and its stdout must equal the binary's byte for byte.
DROPIN_SETS = {"default": [], "all": ["-m", "all_trec"]}  # no -m: trec_eval's official set


def dropin_args(kind: str) -> list[str]:
    return DROPIN_SETS[kind]


def registered_dropin_sets() -> None:
    """--dropin-registered: each set cut to the names whose families are registered (before every family exists)."""
    from trec_bridge.measures.trec_names import registered
    from trec_bridge.trec_eval_output import LABELS, NICKNAMES

    known = set(registered()) | set(LABELS)
    for kind, nick in (("default", "official"), ("all", "all_trec")):
        DROPIN_SETS[kind] = [a for n in NICKNAMES[nick] if n in known for a in ("-m", n)]


for _kind in DROPIN_SETS:
    TOOLS += [
        Tool(f"te-{_kind}", f"trec_eval 9.0.4, {'no -m' if _kind == 'default' else '-m all_trec'}",
             lambda c, q, r, o, k=_kind: [c.trec_eval, *dropin_args(k), str(q), str(r)], (0,), parse_nothing),
        Tool(f"dropin-{_kind}", f"trec-bridge trec_eval, {'no -m' if _kind == 'default' else '-m all_trec'}",
             lambda c, q, r, o, k=_kind: [*c.trec_bridge, "trec_eval", *dropin_args(k), str(q), str(r)], (0,),
             parse_nothing, versus=f"te-{_kind}", paired=f"te-{_kind}"),
    ]
TOOL_BY_KEY = {t.key: t for t in TOOLS}


def subtopic_twin(qrels: Path) -> Path:
    """The qrels as a diversity qrels beside the file, made once (not timed): every line kept with its grade, its
    second column a subtopic 1..SUBTOPICS chosen by the document ID's CRC-32, so each document has one judgment
    (ERR and RBP read the file's own grades) and the subtopic IDs are shared across queries."""
    import zlib

    twin = qrels.with_name(qrels.name + ".subtopics")
    if not twin.exists():
        log(f"making {twin.name} (once, not timed)")
        lines = []
        for line in qrels.read_text().splitlines():
            q, _, d, g = line.split()
            lines.append(f"{q} {1 + zlib.crc32(d.encode()) % SUBTOPICS} {d} {g}\n")
        tmp = twin.with_name(twin.name + ".tmp")
        tmp.write_text("".join(lines))
        tmp.replace(twin)
    return twin


def json_twin(ctx: "Ctx", run: Path, suffix: str) -> Path:
    """The run as JSON (or JSON Lines) beside the TREC file, made once by trec-bridge convert (not timed)."""
    twin = run.with_name(run.name + suffix)
    if not twin.exists():
        log(f"making {twin.name} (once, not timed)")
        subprocess.run([*ctx.trec_bridge, "convert", "run", str(run), str(twin), "--dataset-id", "bench"], check=True,
                       stdout=subprocess.DEVNULL)
    return twin


def parquet_twin(ctx: "Ctx", run: Path, parts: int = 0) -> Path:
    """The run as Parquet beside the TREC file (one file by trec-bridge convert; ``parts``: that file's rows in
    so many partition files, each query whole in one), made once (not timed)."""
    one = run.with_name(run.name + ".parquet")
    if not one.exists():
        log(f"making {one.name} (once, not timed)")
        subprocess.run([*ctx.trec_bridge, "convert", "run", str(run), str(one)], check=True, stdout=subprocess.DEVNULL)
    if not parts:
        return one
    folder = run.with_name(f"{run.name}.{parts}parts.parquet")
    if not folder.exists():
        import polars as pl

        log(f"making {folder.name} (once, not timed)")
        frame = pl.read_parquet(one)
        ids = frame.get_column("query_id").unique(maintain_order=True).to_list()
        folder.mkdir()
        for n in range(parts):
            chosen = ids[n * len(ids) // parts:(n + 1) * len(ids) // parts]
            frame.filter(pl.col("query_id").is_in(chosen)).write_parquet(folder / f"part-{n:03d}.parquet")
    return folder


@dataclasses.dataclass
class Sample:
    wall: float
    maxrss_kib: int
    rc: int
    values: dict[str, str]
    stdout: Path
    stderr: Path


# Peak RSS must be read by a *small* parent. ``ru_maxrss`` from ``os.wait4`` on a child we start ourselves
# is at least our own high-water RSS: Linux records the old address space's high-water mark at exec, and a
# (v)forked child's old address space is a copy of ours (this script holds polars and the facts; every child
# would show >= 180 MiB). So each command runs under a tiny launcher that forks, execs and wait4()s it:
# GNU time (``/usr/bin/time -f %M``, ~1 MiB floor) when present, else a ``python -S -I`` one (~9 MiB floor).
PY_LAUNCHER = (
    "import os,sys\n"
    "pid=os.fork()\n"
    "if pid==0:\n"
    "    try: os.execvp(sys.argv[2],sys.argv[2:])\n"
    "    finally: os._exit(127)\n"
    "_,st,ru=os.wait4(pid,0)\n"
    "open(sys.argv[1],'w').write('%d\\n'%ru.ru_maxrss)\n"
    "sys.exit(os.waitstatus_to_exitcode(st))\n")


def gnu_time() -> str | None:
    path = shutil.which("time", path="/usr/bin:/bin:/usr/local/bin")
    if not path:
        return None
    try:
        out = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return None
    return path if "GNU" in (out.stdout + out.stderr) else None


@dataclasses.dataclass(frozen=True)
class Launcher:
    gnu_time: str | None
    python: str

    def wrap(self, argv: list[str], rss_file: Path) -> list[str]:
        if self.gnu_time:
            return [self.gnu_time, "-f", "%M", "-o", str(rss_file), *argv]
        return [self.python, "-S", "-I", "-c", PY_LAUNCHER, str(rss_file), *argv]

    def describe(self) -> str:
        return "GNU time (`/usr/bin/time -f %M`)" if self.gnu_time else "a `python -S -I` fork/exec/wait4 launcher"


def run_timed(argv: list[str], stdout: Path, stderr: Path, env: dict, cwd: Path,
              launcher: Launcher) -> tuple[float, int, int]:
    """Wall seconds, peak RSS (KiB) of the command (and its reaped descendants), exit code."""
    rss_file = stdout.with_suffix(".maxrss")
    rss_file.unlink(missing_ok=True)
    with open(stdout, "wb") as o, open(stderr, "wb") as e:
        t0 = time.perf_counter()
        p = subprocess.Popen(launcher.wrap(argv, rss_file), stdout=o, stderr=e, stdin=subprocess.DEVNULL,
                             env=env, cwd=cwd)
        _, status, _ = os.wait4(p.pid, 0)
        wall = time.perf_counter() - t0
    rc = os.waitstatus_to_exitcode(status)
    p.returncode = rc  # already reaped: keep Popen from waiting again
    try:  # GNU time writes "Command exited with non-zero status N" before the figure
        rss = int(rss_file.read_text().split()[-1])
    except (OSError, ValueError, IndexError):
        rss = -1
    return wall, rss, rc


# ---------------------------------------------------------------------------------------------
# agreement

def compare(values: dict[str, str], ref: dict[str, str], measures, ref_name: str,
            their: Callable[[str], str] = lambda m: m) -> tuple[list[str], list[str]]:
    """(checked measures, disagreements as text)."""
    checked, bad = [], []
    for m in measures:
        a, b = values.get(m), ref.get(their(m))
        if a is None or b is None:
            bad.append(f"{m}: missing from the output ({'ours' if a is None else ref_name})")
            continue
        checked.append(m)
        if a != b:
            bad.append(f"{m} {a} != {ref_name} {their(m)} {b}")
    return checked, bad


def agreement(tool: str, values: dict[str, Sample], facts: dict, rc: int) -> tuple[str, list[str]]:
    """(cell text, disagreements) for one tool in one iteration; ``values`` maps tool key -> parsed means."""
    te = values.get("trec_eval")
    ref_name, ref = ("trec_eval", te) if te is not None else ("pytrec_eval", values.get("pytrec_eval"))
    same_set = not facts["missing"] and not facts["no_relevant"] and not facts["run_only"]
    if tool == "trec_eval" or tool.startswith("te-"):
        return "reference", []
    if tool == "crosscheck":
        return ("yes (every difference explained)", []) if rc in (0, 2) else \
            ("NO", [f"crosscheck exited {rc}: an unexplained difference (see its stdout)"])
    if tool == "ranx":
        return "not checked (own tie rule)", []
    if tool.startswith("convert-"):
        return "not checked (writes a file; tests/test_json_fast.py holds the bytes)", []
    if tool in ("score-json", "score-jsonl", "score-parquet", "score-parquet-parts") and "score" in values:
        checked, bad = compare(values[tool], values["score"], list(values["score"]), "score on the TREC run")
        return _cell(checked, bad, "score on the TREC run"), bad
    if tool == "ir_measures-irm":
        return "reference", []
    if tool == "score-irm":
        irm = values.get("ir_measures-irm")
        if irm is None:
            return "n/a (no ir_measures run)", []
        checked, bad = compare(values[tool], irm, list(IRM_NAMES), "ir_measures", their=IRM_NAMES.get)
        return _cell(checked, bad, "ir_measures"), bad
    mine = values[tool]
    if tool == "pytrec_eval":
        if te is None:
            return "n/a (no trec_eval)", []
        checked, bad = compare(mine, te, list(TE_NAMES.values()), "trec_eval")
        return _cell(checked, bad, "trec_eval"), bad
    if ref is None:
        return "n/a (no reference run)", []
    if tool == "score-te":
        checked, bad = compare(mine, ref, list(TE_NAMES.values()), ref_name)
        return _cell(checked, bad, ref_name), bad
    if tool == "score":
        if not same_set:
            return "n/a vs " + ref_name + " (query sets differ: missing or no-relevant queries)", []
        measures = []
        if not facts["f32_moved"]:
            measures = list(ORDER_FREE) + (["nDCG@10"] if facts["max_grade"] <= 1 else [])
        elif facts["max_depth"] <= 1000:
            measures = ["R@1000"]  # the whole ranking: order does not matter
        checked, bad = compare(mine, ref, measures, ref_name)
        cell = _cell(checked, bad, ref_name) if checked or bad else f"n/a vs {ref_name} (float32 ties)"
        irm = values.get("ir_measures")
        if irm is not None and not facts["f64_tie_moved"]:
            c2, b2 = compare(mine, irm, ["RR@10"], "ir_measures")
            checked, bad = checked + c2, bad + b2
            cell += "; " + _cell(c2, b2, "ir_measures")
        return cell, bad
    if tool == "ir_measures":
        if facts["missing"] or facts["run_only"]:
            return "n/a (ir_measures averages missing queries as 0)", []
        checked, bad = compare(mine, ref, ["nDCG@10", "R@100", "R@1000", "P@10", "AP"], ref_name)
        return _cell(checked, bad, ref_name), bad
    return "", []


def _cell(checked: list[str], bad: list[str], ref_name: str) -> str:
    if bad:
        return f"**NO** ({len(bad)} of {len(checked)} vs {ref_name})"
    return f"yes ({len(checked)}/{len(checked)} vs {ref_name})"


# ---------------------------------------------------------------------------------------------
# targets (issue 7)

GIB = 1024 * 1024  # KiB per GiB


@dataclasses.dataclass(frozen=True)
class Target:
    ratio: float | None = None  # vs trec_eval, same iteration, median
    rss_gib: float | None = None
    sum_ratio: float | None = None  # vs trec_eval + pytrec_eval, same iteration, median

    def text(self) -> str:
        parts = []
        if self.ratio is not None:
            parts.append(f"≤ {self.ratio:.2f}×")
        if self.sum_ratio is not None:
            parts.append(f"≤ {self.sum_ratio:.1f}× (trec_eval + pytrec_eval)")
        if self.rss_gib is not None:
            parts.append(f"≤ {self.rss_gib:g} GiB")
        return ", ".join(parts)


TARGETS = {
    ("W1", "score"): Target(ratio=0.20, rss_gib=1.0),
    ("W1", "score-te"): Target(ratio=0.20, rss_gib=1.0),
    ("W1", "crosscheck"): Target(sum_ratio=1.3),
    ("W1", "score-json"): Target(ratio=0.30, rss_gib=1.0),
    ("W1", "score-jsonl"): Target(ratio=0.25, rss_gib=1.0),
    ("W1", "score-parquet"): Target(ratio=0.5, rss_gib=1.0),  # issue 21 §3: vs score on the TREC text, same iteration
    ("W1", "score-parquet-parts"): Target(ratio=0.5, rss_gib=1.0),
    ("W1", "convert-json"): Target(ratio=0.30, rss_gib=1.0),
    ("W1", "convert-trec"): Target(ratio=0.30, rss_gib=1.0),
    ("W3", "score-jsonl"): Target(rss_gib=1.0),
    ("W1", "dropin-default"): Target(ratio=0.25, rss_gib=1.0),  # issue 17 §4, vs the binary with the same arguments
    ("W1", "dropin-all"): Target(ratio=0.30, rss_gib=1.0),
    ("W2", "score"): Target(ratio=1.0),
    ("W2", "score-te"): Target(ratio=1.0),
    ("W3", "score"): Target(ratio=0.25, rss_gib=3.0),
    ("W3", "score-te"): Target(ratio=0.25, rss_gib=3.0),
    ("W4", "score"): Target(ratio=0.25, rss_gib=1.0),
    ("W4", "score-te"): Target(ratio=0.25, rss_gib=1.0),
    ("W4s", "score"): Target(ratio=0.25, rss_gib=1.0),
    ("W4s", "score-te"): Target(ratio=0.25, rss_gib=1.0),
    ("W1", "score-irm"): Target(ratio=0.5),  # vs ir_measures' own time (issue 18 §4)
    ("W2", "score-irm"): Target(ratio=0.5),
}


# ---------------------------------------------------------------------------------------------
# the loop

@dataclasses.dataclass
class Row:
    workload: str
    tool: Tool
    samples: list[Sample]
    ratios: list[float]
    sum_ratios: list[float]
    agree: str
    target: Target | None
    met: str = ""


def bench_workload(spec: WorkloadSpec, qrels: Path, run: Path, tools: list[Tool], repeats: int, ctx: Ctx,
                   env: dict, failures: list[str]) -> list[Row]:
    facts = workload_facts(qrels, run)
    warm_page_cache(qrels, run)
    samples: dict[str, list[Sample]] = {t.key: [] for t in tools}
    ratios: dict[str, list[float]] = {t.key: [] for t in tools}
    sum_ratios: dict[str, list[float]] = {t.key: [] for t in tools}
    cells: dict[str, str] = {}
    out = ctx.out_dir / spec.name
    out.mkdir(parents=True, exist_ok=True)
    for it in range(repeats):
        k = it % len(tools)
        order = tools[k:] + tools[:k]  # rotate so no tool always runs first (or right after the biggest)
        got: dict[str, Sample] = {}
        for tool in order:
            so, se = out / f"{tool.key}.{it}.stdout", out / f"{tool.key}.{it}.stderr"
            wall, rss, rc = run_timed(tool.argv(ctx, qrels, run, out), so, se, env, out, ctx.launcher)
            text = so.read_text(errors="replace")
            values: dict[str, str] = {}
            if rc not in tool.ok_rc:
                msg = f"{spec.name}: {tool.label} exited {rc}: {se.read_text(errors='replace').strip()[-800:]}"
                failures.append(msg)
                log("!!! " + msg)
            else:
                try:
                    values = tool.parse(text)
                except (ValueError, IndexError, KeyError) as exc:
                    failures.append(f"{spec.name}: cannot parse {tool.label}'s output ({exc}); see {so}")
            got[tool.key] = Sample(wall, rss, rc, values, so, se)
            log(f"[{spec.name} {it + 1}/{repeats}] {tool.key:<12} {wall:8.2f} s {rss / 1024:8.0f} MiB  rc={rc}")
        pt = got.get("pytrec_eval")
        _check_pairs(spec, it, tools, got, cells, failures)
        vals = {key: s.values for key, s in got.items() if s.rc in TOOL_BY_KEY[key].ok_rc}
        for tool in tools:
            s = got[tool.key]
            samples[tool.key].append(s)
            base = got.get(tool.versus)
            if base is not None and base.rc == 0:
                ratios[tool.key].append(s.wall / base.wall)
                if tool.versus == "trec_eval" and pt is not None and pt.rc == 0:
                    sum_ratios[tool.key].append(s.wall / (te.wall + pt.wall))
            if tool.paired:
                continue  # judged by _check_pairs
            if tool.key not in vals and tool.key != "crosscheck":
                cells[tool.key] = "**failed**"
                continue
            cell, bad = agreement(tool.key, vals, facts, s.rc)
            if bad:
                for b in bad:
                    msg = f"{spec.name} iteration {it + 1}: {tool.label}: {b}"
                    failures.append(msg)
                    log("!!! DISAGREEMENT " + msg)
            if cells.get(tool.key, "").startswith("**"):
                continue  # keep the first failure visible
            cells[tool.key] = cell
    rows = []
    for tool in tools:
        row = Row(spec.name, tool, samples[tool.key], ratios[tool.key], sum_ratios[tool.key],
                  cells.get(tool.key, ""), TARGETS.get((spec.name, tool.key)))
        row.met = judge(row)
        rows.append(row)
    return rows


def _check_pairs(spec: WorkloadSpec, it: int, tools: list[Tool], got: dict[str, Sample], cells: dict[str, str],
                 failures: list[str]) -> None:
    """A paired tool (the drop-in) must print its pair's standard output byte for byte."""
    for tool in tools:
        base = got.get(tool.paired) if tool.paired else None
        if base is None:
            continue
        mine = got[tool.key]
        same = mine.rc == 0 and base.rc == 0 and mine.stdout.read_bytes() == base.stdout.read_bytes()
        if not same:
            msg = f"{spec.name} iteration {it + 1}: {tool.label}: stdout differs from {tool.paired}'s ({mine.stdout})"
            failures.append(msg)
            log("!!! DISAGREEMENT " + msg)
        if not cells.get(tool.key, "").startswith("**"):
            cells[tool.key] = "yes (stdout byte-identical to the binary's)" if same else "**NO** (stdout differs)"


def judge(row: Row) -> str:
    t = row.target
    if t is None:
        return ""
    verdict, why = True, []
    if t.ratio is not None:
        if not row.ratios:
            return f"n/a (no {row.tool.versus})"
        r = statistics.median(row.ratios)
        verdict &= r <= t.ratio
        why.append(f"{r:.2f}×")
    if t.sum_ratio is not None:
        if not row.sum_ratios:
            return "n/a (needs trec_eval and pytrec_eval)"
        r = statistics.median(row.sum_ratios)
        verdict &= r <= t.sum_ratio
        why.append(f"{r:.2f}× of the sum")
    if t.rss_gib is not None:
        rss = max(s.maxrss_kib for s in row.samples) / GIB
        verdict &= rss <= t.rss_gib
        why.append(f"{rss:.2f} GiB")
    if row.agree.startswith("**"):
        verdict = False
        why.append("numbers disagree")
    return ("yes" if verdict else "**no**") + " (" + ", ".join(why) + ")"


# ---------------------------------------------------------------------------------------------
# report

def machine() -> dict:
    cpu = "unknown"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    mem = ""
    try:
        mem = subprocess.run(["free", "-h"], capture_output=True, text=True).stdout.splitlines()[1].split()[1]
    except (OSError, IndexError):
        pass
    return {"nproc": os.cpu_count(), "cpu": cpu, "mem": mem, "python": platform.python_version(),
            "platform": platform.platform()}


def git_state() -> str:
    try:
        head = subprocess.run(["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"], capture_output=True,
                              text=True).stdout.strip()
        dirty = subprocess.run(["git", "-C", str(REPO), "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True).stdout.strip()
        return head + (" + uncommitted changes" if dirty else "") if head else "unknown"
    except OSError:
        return "unknown"


def render(rows: list[Row], meta: dict) -> str:
    m = meta["machine"]
    lines = [
        f"Measured {meta['date']} on {m['nproc']} cores ({m['cpu']}), {m['mem']} RAM, Python {m['python']}, "
        f"trec-bridge at {meta['git']}; {meta['repeats']} paired repeats. The machine is shared: other "
        f"processes may have been running (load average {meta['load_before']} before, {meta['load_after']} "
        "after). Ratios are paired per iteration to absorb this; absolute seconds are noisy.",
        "",
        f"Command: `{meta['command']}`",
        "",
        "| workload | tool | median wall s | ratio vs trec_eval (or as named) | peak RSS MiB | numbers agree | target "
        "| met |",
        "|---|---|---:|---:|---:|---|---|---|",
    ]
    for r in rows:
        walls = [s.wall for s in r.samples]
        ratio = f"{statistics.median(r.ratios):.3f}" if r.ratios else "—"
        if r.ratios and r.tool.versus != "trec_eval":
            ratio += f" vs {r.tool.versus}"
        rss = max(s.maxrss_kib for s in r.samples) / 1024
        lines.append(f"| {r.workload} | {r.tool.label} | {statistics.median(walls):.2f} | {ratio} | {rss:.0f} | "
                     f"{r.agree} | {r.target.text() if r.target else ''} | {r.met} |")
    judged = [r for r in rows if r.target is not None]
    if judged:
        met = [r for r in judged if r.met.startswith("yes")]
        lines += ["", f"**Issue-7 targets met: {len(met)} of {len(judged)}** in this measurement"
                  + (" (" + "; ".join(f"{r.workload} `{r.tool.key}` {'met' if r in met else 'not met'}"
                                      for r in judged) + ")." if judged else ".")]
    lines.append("")
    for name, info in meta["workloads"].items():
        lines.append(f"* {name}: {info}")
    for note in meta["notes"]:
        lines.append(f"* {note}")
    return "\n".join(lines) + "\n"


def rows_from_json(data: dict) -> list[Row]:
    """Rows of a ``--json`` file (to re-render a table without re-running)."""
    rows = []
    for d in data["rows"]:
        samples = [Sample(s["wall"], s["maxrss_kib"], s["rc"], s["values"], Path(), Path()) for s in d["samples"]]
        row = Row(d["workload"], TOOL_BY_KEY[d["tool"]], samples, d["ratios"], d["sum_ratios"], d["agree"],
                  TARGETS.get((d["workload"], d["tool"])))
        row.met = judge(row)
        rows.append(row)
    return rows


def update_readme(markdown: str, path: Path = README) -> None:
    text = path.read_text()
    if README_BEGIN not in text or README_END not in text:
        raise SystemExit(f"{path}: markers {README_BEGIN!r} / {README_END!r} not found")
    head, rest = text.split(README_BEGIN, 1)
    _, tail = rest.split(README_END, 1)
    path.write_text(head + README_BEGIN + "\n" + markdown + README_END + tail)


# ---------------------------------------------------------------------------------------------

def find_trec_eval(explicit: str | None) -> str | None:
    if explicit:
        return shutil.which(explicit)
    try:
        from trec_bridge.references.trec_eval import find_binary
    except ImportError:
        return shutil.which("trec_eval")
    return find_binary()


def trec_bridge_command(python: str) -> list[str]:
    exe = Path(python).parent / "trec-bridge"
    if exe.is_file() and os.access(exe, os.X_OK):
        return [str(exe)]
    found = shutil.which("trec-bridge")
    return [found] if found else [python, "-m", "trec_bridge.cli.main"]


def install_note(python: str, work: Path) -> str:
    """Which trec-bridge the timed commands import: a regular install or the checkout (editable)."""
    probe = subprocess.run([python, "-c", "import trec_bridge; print(trec_bridge.__file__)"], cwd=work,
                           capture_output=True, text=True)
    where = probe.stdout.strip()
    if "site-packages" in Path(where).parts:
        return f"trec-bridge: a regular install ({where}), as the README's first command makes"
    return (f"trec-bridge: imported from the checkout ({where or 'not importable'}), i.e. an editable install; its "
            "import hook adds ~10 ms to every start (a regular install is what users time)")


def child_env(work: Path, trec_eval: str | None, keep_env: bool) -> dict:
    env = dict(os.environ)
    if trec_eval:
        env["TREC_EVAL"] = trec_eval  # crosscheck uses the very binary timed here
    if not keep_env:
        # A normal install has byte-code caches; with PYTHONDONTWRITEBYTECODE and an editable checkout
        # every start would recompile trec_bridge. Keep the caches outside the repository instead.
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        env["PYTHONPYCACHEPREFIX"] = str(work / "pycache")
    env.pop("TREC_BRIDGE_PROGRESS", None)
    return env


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--workloads", help="comma-separated: W1, W1d, W2, W3, or the tiny "
                    f"{', '.join(QUICK)} (default W1,W2; W3 only when asked: minutes, ~2 GB disk)")
    ap.add_argument("--quick", action="store_true", help=f"the tiny workloads {', '.join(QUICK)} "
                    "(unless --workloads names others): seconds")
    ap.add_argument("--tools", default=",".join(t.key for t in TOOLS if t.default),
                    help="comma-separated subset of: " + ", ".join(t.key for t in TOOLS))
    ap.add_argument("--dropin-registered", action="store_true",
                    help="the drop-in rows on the registered part of trec_eval's sets (families still missing)")
    ap.add_argument("--repeats", type=int, default=3, help="paired iterations per workload (default 3)")
    ap.add_argument("--work", type=Path, help="folder for workloads and outputs, outside the repository "
                                              "(default: a new temp dir); existing workload files are reused")
    ap.add_argument("--gen", type=Path, default=DEFAULT_GEN, help=f"gen.py (default {DEFAULT_GEN}); when absent "
                    "an equivalent built-in generator is used")
    ap.add_argument("--trec-eval", help="trec_eval binary (default: trec-bridge's find_binary())")
    ap.add_argument("--markdown", type=Path, metavar="OUT", help="also write the markdown table here")
    ap.add_argument("--json", type=Path, metavar="OUT", help="write every sample (wall, RSS, rc, values) here")
    ap.add_argument("--update-readme", action="store_true", help="replace the results section of bench/README.md")
    ap.add_argument("--no-warmup", action="store_true", help="skip the untimed warm-up run of each Python tool")
    ap.add_argument("--keep-env", action="store_true",
                    help="run children with the environment as is (default: enable byte-code caching in WORK)")
    ap.add_argument("--verify", action="store_true", help="check W1/W2 sha256 against gen.py's published hashes")
    ap.add_argument("--fail-on-targets", action="store_true", help="exit 4 when an issue-7 target is missed")
    ap.add_argument("--render-json", type=Path, metavar="FILE", nargs="+",
                    help="run nothing: re-render the tables of earlier --json FILEs, one after the other "
                    "(with --markdown/--update-readme; e.g. a W1,W2 run and a W3 run with fewer tools)")
    return ap.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if args.dropin_registered:
        registered_dropin_sets()
    if args.render_json:
        tables = []
        for path in args.render_json:
            data = json.loads(path.read_text())
            tables.append(render(rows_from_json(data), data["meta"]))
        md = "\n".join(tables)
        print(md)
        if args.markdown:
            args.markdown.write_text(md)
        if args.update_readme:
            update_readme(md)
        return 0
    if args.workloads:
        names = [w.strip() for w in args.workloads.split(",") if w.strip()]
    else:
        names = list(QUICK) if args.quick else ["W1", "W2"]
    unknown = [w for w in names if w not in WORKLOADS]
    if unknown:
        log(f"unknown workload(s) {unknown}; known: {', '.join(WORKLOADS)}")
        return 2
    keys = [k.strip() for k in args.tools.split(",") if k.strip()]
    bad = [k for k in keys if k not in TOOL_BY_KEY]
    if bad:
        log(f"unknown tool(s) {bad}; known: {', '.join(TOOL_BY_KEY)}")
        return 2
    if args.repeats < 1:
        log("--repeats must be at least 1")
        return 2
    notes = ["trec_eval has no RR@10: it runs `recip_rank` (no cutoff); `score --policy trec_eval` is asked "
             "for `RR`, which ignores cutoffs the same way; strict `RR@10` is compared with ir_measures' `RR@10`.",
             "peak RSS: the largest single process of the command's tree (for crosscheck: the larger of "
             "trec-bridge and the trec_eval it starts), maximum over the repeats.",
             "ratio: median over iterations of (tool wall / trec_eval wall in the same iteration); "
             "tool order rotates between iterations."]
    tools = [TOOL_BY_KEY[k] for k in keys]
    trec_eval = find_trec_eval(args.trec_eval)
    if trec_eval is None:
        for k in ("trec_eval", "crosscheck"):
            if any(t.key == k for t in tools):
                notes.append(f"{k}: skipped, trec_eval binary not found (`trec-bridge tools install-trec-eval` "
                             "or TREC_EVAL)")
        tools = [t for t in tools if t.key not in ("trec_eval", "crosscheck")]
    if any(t.key == "ranx" for t in tools) and importlib.util.find_spec("ranx") is None:
        notes.append("ranx: skipped, not importable in this environment")
        tools = [t for t in tools if t.key != "ranx"]
    if not tools:
        log("no tool left to run")
        return 2
    work = (args.work or Path(tempfile.mkdtemp(prefix="trec-bridge-bench-"))).resolve()
    if work == REPO or REPO in work.parents:
        log(f"--work {work} is inside the repository; choose a folder outside it")
        return 2
    work.mkdir(parents=True, exist_ok=True)
    gen_path = args.gen.resolve() if args.gen and args.gen.is_file() else None
    if gen_path is None:
        notes.append(f"gen.py not found at {args.gen}: workloads made by run_bench.py's own generator "
                     "(same shapes, different bytes)")
    python = sys.executable
    launcher = Launcher(gnu_time(), python)
    ctx = Ctx(python, trec_bridge_command(python), trec_eval, work / "out", launcher)
    env = child_env(work, trec_eval, args.keep_env)
    (work / "out").mkdir(parents=True, exist_ok=True)
    _, floor, _ = run_timed(["true"], work / "out" / "floor.stdout", work / "out" / "floor.stderr", env, work, launcher)
    notes.append(f"peak RSS is read by {launcher.describe()} around each command (`ru_maxrss` from wait4; "
                 f"measured floor: `true` shows {floor / 1024:.1f} MiB)")
    notes.append(install_note(python, work))
    log(f"work dir: {work}")

    if not args.no_warmup:  # untimed: byte-code caches, first imports, numba (ranx)
        wq, wr, _ = ensure_workload(WARMUP, work, gen_path)
        wout = work / "out" / "warmup"
        wout.mkdir(parents=True, exist_ok=True)
        for tool in tools:
            if tool.key != "trec_eval":
                run_timed(tool.argv(ctx, wq, wr, wout), wout / f"{tool.key}.stdout", wout / f"{tool.key}.stderr",
                          env, wout, ctx.launcher)

    failures: list[str] = []
    rows: list[Row] = []
    workload_info: dict[str, str] = {}
    load_before = " ".join(f"{x:.1f}" for x in os.getloadavg())
    started = _dt.datetime.now().astimezone().strftime("%Y-%m-%d %H:%M %Z")
    for name in names:
        spec = WORKLOADS[name]
        qrels, run, how = ensure_workload(spec, work, gen_path)
        size = run.stat().st_size
        info = f"{spec.shape}; run {size / 1e6:.0f} MB ({how})"
        if args.verify and f"{name}.run" in KNOWN_SHA256:
            ok = all(sha256(work / f) == KNOWN_SHA256[f] for f in (f"{name}.run", f"{name}.qrels"))
            info += "; sha256 " + ("matches" if ok else "DIFFERS from") + " gen.py's published hashes"
        workload_info[name] = info
        rows += bench_workload(spec, qrels, run, tools, args.repeats, ctx, env, failures)
    load_after = " ".join(f"{x:.1f}" for x in os.getloadavg())

    meta = {"date": started, "machine": machine(),
            "git": git_state(), "repeats": args.repeats, "load_before": load_before, "load_after": load_after,
            "command": "python bench/run_bench.py " + " ".join(argv if argv is not None else sys.argv[1:]),
            "workloads": workload_info, "notes": notes}
    md = render(rows, meta)
    print(md)
    if args.markdown:
        args.markdown.write_text(md)
    if args.update_readme:
        update_readme(md)
        log(f"updated {README}")
    if args.json:
        args.json.write_text(json.dumps({
            "meta": meta,
            "rows": [{"workload": r.workload, "tool": r.tool.key, "label": r.tool.label, "agree": r.agree,
                      "target": r.target.text() if r.target else None, "met": r.met,
                      "ratios": r.ratios, "sum_ratios": r.sum_ratios,
                      "samples": [{"wall": s.wall, "maxrss_kib": s.maxrss_kib, "rc": s.rc, "values": s.values}
                                  for s in r.samples]} for r in rows]}, indent=1))
    if failures:
        log("\n" + "!" * 78)
        log(f"!!! {len(failures)} DISAGREEMENT(S) OR FAILURE(S):")
        for f in failures:
            log("!!!   " + f)
        log("!" * 78)
        return 1
    if args.fail_on_targets and any(r.met.startswith("**no") for r in rows):
        log("some issue-7 targets are not met")
        return 4
    return 0


if __name__ == "__main__":
    sys.exit(main())
