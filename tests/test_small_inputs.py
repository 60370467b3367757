"""The small-input path of ``score`` (cli/quick.py) is a second reader of TREC files: it may answer only what the
full command answers, byte for byte.

Every case here runs ``score`` three ways: the quick path alone (``quick.attempt``), the full command with the
quick path switched off, and ``main`` as a user runs it.  The quick path either answers with the full command's
exit code, stdout and stderr, or defers having printed nothing; ``main`` always gives the full command's answer.
The cases: the golden scenarios, a generated clean pair under every policy and a broad measure list, and hostile
inputs (encodings, separators, numbers, IDs, order, sizes).  A floor on how many cases the quick path answered
keeps the test from passing by deferring everything.
"""
from __future__ import annotations

import contextlib
import gzip
import io
import json
import random
import re
from pathlib import Path

import pytest

from tests.conftest import run_cli
from trec_bridge.cli import quick

GOLDEN = Path(__file__).resolve().parent.parent / "golden"
MEASURES = "nDCG@10 RR R@100 P@5 AP"
WIDE_MEASURES = ("nDCG@10 nDCG RR RR(rel=2) R@5 R@1000 P@5 AP AP(rel=2) Rprec Bpref infAP ERR@10 RBP(p=0.8) "
                 "Success@3 Judged@10 NumQ NumRet NumRel NumRelRet SetP SetR SetF SDCG(max_rel=3)@5 IPrec@0.5 "
                 "AvgIPrec GMAP binG G Compat(p=0.8) INSQ(max_rel=3) INST(max_rel=3,T=2) NERR8(max_rel=3)@10 "
                 "RelativeP@5 R_cap@5 nDCG_rel Utility")
POLICIES = ("strict", "trec_eval", "pytrec_eval", "ir_measures", "ranx", "beir")


_LIVE_MEMORY = re.compile(r"[\d,.]+ (?:bytes|KiB|MiB|GiB) is in use")


def _steady(result: tuple) -> tuple:
    """The outcome with the live memory figure of an E_TOO_LARGE message masked: the process's resident size
    moves by a MiB between two calls, and it is the rule, not that figure, that both paths must agree on."""
    return tuple(_LIVE_MEMORY.sub("<used> is in use", part) if isinstance(part, str) else part for part in result)


def both(*argv) -> bool:
    """Assert the quick path answers ``score ARGV`` as the full command does, or defers silently; True when it
    answered."""
    argv = [str(a) for a in argv]
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = quick.attempt(argv)
    original = quick.attempt
    quick.attempt = lambda given: None
    try:
        full = _steady(run_cli(*argv))
    finally:
        quick.attempt = original
    assert _steady(run_cli(*argv)) == full, argv  # main as a user runs it
    if code is None:
        assert (out.getvalue(), err.getvalue()) == ("", ""), argv
        return False
    assert _steady((code, out.getvalue(), err.getvalue())) == full, argv
    return True


def _pair(queries: int = 6, docs: int = 30, seed: int = 7) -> tuple[list[str], list[str]]:
    """Qrels lines (graded 0-3, one query without a relevant document) and run lines, in the usual shape."""
    rnd = random.Random(seed)
    qrels, run = [], []
    for q in range(1, queries + 1):
        judged = rnd.sample(range(docs * 2), docs // 2)
        for d in judged:
            grade = 0 if q == queries else rnd.choice((0, 0, 1, 2, 3))
            qrels.append(f"{q} 0 D{d} {grade}")
        for rank, d in enumerate(rnd.sample(range(docs * 2), docs), 1):
            run.append(f"{q} Q0 D{d} {rank} {round(rnd.uniform(-5, 30), rnd.choice((1, 2, 6)))} tag")
    return qrels, run


def _write(path: Path, lines, end: str = "\n", raw: bytes | None = None) -> Path:
    path.write_bytes(raw if raw is not None else ("".join(line + end for line in lines)).encode())
    return path


def test_golden_scenarios(tmp_path):
    answered = cases = 0
    for expected in sorted(GOLDEN.glob("*/expected.json")):
        folder = expected.parent
        for case in json.loads(expected.read_text())["cases"]:
            args = [str(folder / a) if (folder / a).exists() else a for a in case["args"]]
            if not args or args[0] == "score":
                args = args[1:]
            answered += both("score", *args)
            positional = [a for a in args if not a.startswith("-")][:3]
            policy = args[args.index("--policy") + 1] if "--policy" in args else "strict"
            if len(positional) == 3:
                answered += both("score", *positional, "--policy", policy)
            cases += 1
    assert cases >= 40
    assert answered >= 4  # the TREC scenarios (L1, D1) are answered here


# What each policy scores of WIDE_MEASURES (the others it refuses: E_POLICY_MEASURE, which the quick path leaves
# to the full command); test_each_measure_under_each_policy checks these lists against the full command.
POLICY_MEASURES = {
    "strict": WIDE_MEASURES,
    "trec_eval": "nDCG@10 nDCG RR RR(rel=2) R@5 R@1000 P@5 AP AP(rel=2) Rprec Bpref infAP Success@3 NumQ NumRet "
                 "NumRel NumRelRet SetP SetR SetF IPrec@0.5 AvgIPrec GMAP binG G RelativeP@5 nDCG_rel Utility",
    "ir_measures": "nDCG@10 nDCG RR RR(rel=2) R@5 R@1000 P@5 AP AP(rel=2) Rprec Bpref infAP ERR@10 RBP(p=0.8) "
                   "Success@3 Judged@10 NumQ NumRet NumRel NumRelRet SetP SetR SetF SDCG(max_rel=3)@5 IPrec@0.5 "
                   "Compat(p=0.8) INSQ(max_rel=3) INST(max_rel=3,T=2) NERR8(max_rel=3)@10",
    "ranx": "nDCG@10 nDCG RR RR(rel=2) R@5 R@1000 P@5 AP AP(rel=2) RBP(p=0.8) Success@3",
    "beir": "nDCG@10 nDCG RR RR(rel=2) R@5 R@1000 P@5 AP AP(rel=2) Success@3 R_cap@5",
}
POLICY_MEASURES["pytrec_eval"] = POLICY_MEASURES["trec_eval"]


@pytest.mark.parametrize("policy", POLICIES)
def test_a_clean_pair_under_each_policy(tmp_path, policy):
    qrels, run = _pair()
    q, r = _write(tmp_path / "q.txt", qrels), _write(tmp_path / "r.txt", run)
    assert both("score", q, r, POLICY_MEASURES[policy], "--policy", policy)
    assert both("score", q, r, MEASURES, f"--policy={policy}")
    assert not both("score", q, r, WIDE_MEASURES + " alpha_nDCG@10", "--policy", policy)


@pytest.mark.parametrize("policy", POLICIES)
def test_each_measure_under_each_policy(tmp_path, policy):
    """Each measure alone (slow tier): the quick path answers exactly those the full command scores."""
    qrels, run = _pair()
    q, r = _write(tmp_path / "q.txt", qrels), _write(tmp_path / "r.txt", run)
    answered = [m for m in WIDE_MEASURES.split() if both("score", q, r, m, "--policy", policy)]
    assert answered == POLICY_MEASURES[policy].split()


def test_the_quick_path_answers_the_usual_spellings(tmp_path):
    qrels, run = _pair()
    q, r = _write(tmp_path / "q.txt", qrels), _write(tmp_path / "r.txt", run)
    assert both("score", q, r, MEASURES)
    assert both("score", "--policy", "trec_eval", q, r, MEASURES)
    assert not both("score", q, r, MEASURES, "--policy", "strict", "--policy", "strict")
    assert not both("score", q, r, MEASURES, "--json", tmp_path / "report.json")
    assert not both("score", q, r)
    assert not both("score", q, r, "alpha_nDCG@10")  # a diversity measure: refused by the full command
    assert not both("score", q, r, "nDCG@x")
    assert not both("score", q, r, MEASURES, "--policy", "nonesuch")
    assert not both("score", q, tmp_path / "absent.txt", MEASURES)
    assert not both("score", q, tmp_path, MEASURES)


def _hostile(qrels: list[str], run: list[str]) -> dict[str, tuple[bytes, bytes]]:
    """Named (qrels bytes, run bytes) pairs, each a clean pair with one hostile change."""
    Q, R = "\n".join(qrels) + "\n", "\n".join(run) + "\n"
    first = run[0].split()

    def run_line(i: int, **fields) -> str:
        parts = dict(zip(("q", "q0", "doc", "rank", "score", "tag"), run[i].split()))
        parts.update(fields)
        return " ".join(parts.values())

    def with_run_line(i: int, line: str) -> str:
        return "\n".join(run[:i] + [line] + run[i + 1:]) + "\n"

    cases = {
        "clean": (Q, R),
        "bom qrels": ("\ufeff" + Q, R), "bom run": (Q, "\ufeff" + R),
        "crlf qrels": (Q.replace("\n", "\r\n"), R), "crlf run": (Q, R.replace("\n", "\r\n")),
        "cr only": (Q, R.replace("\n", "\r")),
        "tabs qrels": (Q.replace(" ", "\t"), R), "tabs run": (Q, R.replace(" ", "\t")),
        "mixed tabs": (Q, R.replace(" Q0 ", "\tQ0 ", 3)),
        "two spaces": (Q, R.replace(" Q0 ", "  Q0 ", 1)),
        "trailing space": (Q, R.replace("\n", " \n", 1)), "trailing tab": (Q, R.replace("\n", "\t\n", 1)),
        "trailing space at end": (Q, R.rstrip("\n") + " "), "no final newline": (Q.rstrip("\n"), R.rstrip("\n")),
        "leading space": (Q, " " + R), "blank line inside": (Q, R.replace("\n", "\n\n", 1)),
        "blank lines at end": (Q + "\n\n", R + "\n"), "blank line first": ("\n" + Q, R),
        "whitespace-only line": (Q, R.replace("\n", "\n   \n", 1)),
        "comment line": (Q, "# a comment\n" + R),
        "empty qrels": ("", R), "empty run": (Q, ""), "blank run": (Q, "\n\n"),
        "nbsp in doc": (Q, with_run_line(0, run_line(0, doc=first[2] + "\u00a0"))),
        "zero-width in doc": (Q, with_run_line(0, run_line(0, doc="\u200b" + first[2]))),
        "accent in query": (Q.replace("1 0 ", "é 0 "), R.replace("1 Q0 ", "é Q0 ")),
        "vertical tab": (Q, R.replace(" Q0 ", "\x0bQ0 ", 1)), "form feed": (Q, R.replace(" Q0 ", "\x0cQ0 ", 1)),
        "nul in doc": (Q, with_run_line(0, run_line(0, doc=first[2] + "\x00x"))),
        "del in doc": (Q, with_run_line(0, run_line(0, doc=first[2] + "\x7f"))),
        "escape in doc": (Q, with_run_line(0, run_line(0, doc=first[2] + "\x1b"))),
        "doc twice": (Q, with_run_line(1, run_line(1, doc=first[2]))),
        "doc twice same line": (Q, R + run[0] + "\n"),
        "qrels judged twice same grade": (Q + qrels[0] + "\n", R),
        "qrels judged twice other grade": (Q + qrels[0].rsplit(" ", 1)[0] + " 3\n", R),
        "qrels five columns": (Q.replace("\n", " x\n", 1), R), "qrels three columns": (Q.replace(" 0 ", " ", 1), R),
        "run five columns": (Q, with_run_line(0, run_line(0, tag="").strip())),
        "run seven columns": (Q, with_run_line(0, run_line(0) + " extra")),
        "unknown query": (Q, R + "999 Q0 D1 1 1.0 tag\n"),
        "query missing from run": (Q, "\n".join(r for r in run if not r.startswith("2 ")) + "\n"),
        "queries interleaved": (Q, "\n".join(run[1:4] + run[:1] + run[4:]) + "\n"),
        "queries apart": (Q, "\n".join(run[30:32] + run[:30] + run[32:]) + "\n"),
        "qrels out of order": ("\n".join(qrels[::-1]) + "\n", R),
        "qrels queries apart": ("\n".join(qrels[20:22] + qrels[:20] + qrels[22:]) + "\n", R),
        "run reversed": (Q, "\n".join(run[::-1]) + "\n"),
        "all tied": (Q, "\n".join(run_line(i, score="1.5") for i in range(len(run))) + "\n"),
        "ties numeric-looking ids": (Q.replace(" D1", " 10", 1).replace(" D2", " 9", 1),
                                     "\n".join(run_line(i, doc=str(i % 30 + 1) if i < 30 else run[i].split()[2],
                                                        score="2") for i in range(len(run))) + "\n"),
        "ties by case": (Q, with_run_line(1, run_line(1, doc="d" + first[2][1:], score=first[4]))),
        "minus zero ties": (Q, "\n".join(run_line(i, score="-0.0" if i % 2 else "0.0") for i in range(len(run))) + "\n"),
        "minus zero": (Q, with_run_line(0, run_line(0, score="-0"))),
    }
    for token in ("nan", "NaN", "inf", "-inf", "Infinity", "1e400", "-1e400", "1e-400", "1.7976931348623157e308",
                  "1.5E+02", "1e3", "+1.5", ".5", "5.", "1.e3", "-.5e-3", "0x1p3", "1_000", "1,5", "1.5.2", "e5", "",
                  "00012", "123456789012345678901234567890", "0.1000000000000000055511151231257827", "4.9e-324"):
        cases[f"score {token!r}"] = (Q, with_run_line(2, run_line(2, score=token).replace("  ", " ")))
    for token in ("1.5", "-1", "0", "99999999999999999999", "x", "+2", "1e2"):
        cases[f"rank {token!r}"] = (Q, with_run_line(2, run_line(2, rank=token)))
    for token in ("-1", "+1", "01", "-0", "1.0", "true", "9223372036854775808", "1_0", "4", "-2147483649", "1e1"):
        cases[f"grade {token!r}"] = (Q.replace(qrels[1], qrels[1].rsplit(" ", 1)[0] + " " + token, 1), R)
    cases["long doc id"] = (Q, with_run_line(0, run_line(0, doc="D" * 300)))
    cases["long judged doc id"] = (Q + f"1 0 {'D' * 300} 2\n", with_run_line(0, run_line(0, doc="D" * 300)))
    cases["very long line"] = (Q, with_run_line(0, run_line(0, tag="t" * 100_000)))
    cases["doc is query id"] = (Q, with_run_line(0, run_line(0, doc=first[0])))
    cases["brace first"] = ("{" + Q, R)
    cases["underscores in ids"] = (Q.replace(" D", " D_"), R.replace(" D", " D_").replace(" tag", " a_tag"))
    cases["one double, two spellings"] = (Q, with_run_line(1, run_line(1, score="0.1")).replace(
        run[0], run_line(0, score="0.10000000000000001"), 1))
    cases["tab and space mixed, one each"] = (Q, R.replace(" Q0 ", "\tQ0 ", 5))
    cases["qrels no relevant anywhere"] = ("\n".join(line.rsplit(" ", 1)[0] + " 0" for line in qrels) + "\n", R)
    return {name: (q.encode(), r.encode()) for name, (q, r) in cases.items()}


@pytest.mark.parametrize("policy", ("strict", pytest.param("trec_eval", marks=pytest.mark.slow)))
def test_hostile_inputs(tmp_path, policy):
    qrels, run = _pair()
    answered = []
    for n, (name, (q_bytes, r_bytes)) in enumerate(_hostile(qrels, run).items()):
        q = _write(tmp_path / f"q{n}.txt", (), raw=q_bytes)
        r = _write(tmp_path / f"r{n}.txt", (), raw=r_bytes)
        if both("score", q, r, MEASURES, "--policy", policy):
            answered.append(name)
    assert {"clean", "tabs run", "tabs qrels", "all tied", "underscores in ids", "one double, two spellings"} <= set(
        answered), answered
    assert len(answered) >= 30, answered


def test_non_utf8_bytes(tmp_path):
    qrels, run = _pair()
    q = _write(tmp_path / "q.txt", qrels)
    for name, blob in (("latin-1 doc", b"1 Q0 D\xe9 1 9.5 tag\n"), ("lone continuation", b"1 Q0 \x80 1 9.5 tag\n"),
                       ("utf-16", "1 Q0 D1 1 9.5 tag\n".encode("utf-16"))):
        r = _write(tmp_path / "r.txt", (), raw=blob + ("\n".join(run) + "\n").encode())
        assert not both("score", q, r, MEASURES), name


def test_files_by_name_and_content(tmp_path):
    qrels, run = _pair()
    q = _write(tmp_path / "q.txt", qrels)
    text = ("\n".join(run) + "\n").encode()
    gz = tmp_path / "r.txt.gz"
    gz.write_bytes(gzip.compress(text))
    hidden = tmp_path / "r.txt"
    hidden.write_bytes(gzip.compress(text))  # gzip bytes, a plain name
    for path in (gz, hidden, _write(tmp_path / "r.parquet", (), raw=text), _write(tmp_path / "r.arrow", (), raw=text)):
        assert not both("score", q, path, MEASURES), path.name
    assert both("score", q, _write(tmp_path / "r.json", (), raw=text), MEASURES)  # JSON is told by content
    qgz = tmp_path / "q.txt.gz"
    qgz.write_bytes(gzip.compress(("\n".join(qrels) + "\n").encode()))
    assert not both("score", qgz, _write(tmp_path / "plain.txt", run), MEASURES)


def test_a_run_with_a_sidecar_defers(tmp_path):
    qrels, run = _pair()
    q, r = _write(tmp_path / "q.txt", qrels), _write(tmp_path / "r.txt", run)
    from converters.sidecar import sidecar_path

    sidecar_path(r).write_text("{}")
    assert not both("score", q, r, MEASURES)


def test_inputs_over_the_limit_defer(tmp_path, monkeypatch):
    qrels, run = _pair()
    q, r = _write(tmp_path / "q.txt", qrels), _write(tmp_path / "r.txt", run)
    monkeypatch.setattr(quick, "PLAIN_LIMIT", q.stat().st_size + r.stat().st_size - 1)
    assert not both("score", q, r, MEASURES)


def test_many_random_pairs(tmp_path):
    """Generated pairs of other shapes (many ties, tiny and wide queries) under the reference policies."""
    answered = 0
    for seed in range(12):
        rnd = random.Random(seed)
        qrels, run = _pair(queries=rnd.randint(1, 9), docs=rnd.choice((2, 5, 40, 120)), seed=seed)
        if seed % 3 == 0:  # coarse scores: ties everywhere
            run = [" ".join(line.split()[:4] + [str(rnd.randint(0, 3)), "t"]) for line in run]
        q, r = _write(tmp_path / f"q{seed}.txt", qrels), _write(tmp_path / f"r{seed}.txt", run)
        policy = POLICIES[seed % len(POLICIES)]
        answered += both("score", q, r, POLICY_MEASURES[policy], "--policy", policy)
    assert answered >= 10


def test_real_runs(shared_data, tmp_path):
    """The smallest official DL19 passage runs, ungzipped (the quick path takes plain files only), the SIGIR'25
    annotation runs and the reference tools' test files, scored both ways."""
    runs = shared_data / "runs"
    qrels = shared_data / "qrels" / "anserini-tools" / "qrels.dl19-passage.txt"
    plain = []
    for name in ("input.ICT-BERT2.gz", "input.srchvrs_ps_run2.gz", "input.test1.gz"):
        plain.append(tmp_path / name.removesuffix(".gz"))
        plain[-1].write_bytes(gzip.decompress((runs / "trec-dl-2019-passage-official" / name).read_bytes()))
    plain += sorted((runs / "sigir25-annotation").glob("*dl-2019*.run"))
    answered = 0
    for run in plain:
        for policy in ("strict", "trec_eval"):
            answered += both("score", qrels, run, POLICY_MEASURES[policy], "--policy", policy)
    tests = shared_data / "qrels" / "ir_measures-tests"
    for name in ("compat", "cwl"):
        answered += both("score", tests / f"{name}.qrels", runs / "ir_measures-tests" / f"{name}.run", MEASURES)
    assert answered >= 10


def test_near_a_memory_limit_the_quick_path_defers(tmp_path, monkeypatch):
    """The memory guard weighs what the process already holds, and the full command holds polars: within
    FULL_PATH_MARGIN of a limit the quick path leaves the decision to it (both paths in one process here, so
    the rule itself is what is checked)."""
    from trec_bridge import memory_guard

    qrels, run = _pair()
    q, r = _write(tmp_path / "q.txt", qrels), _write(tmp_path / "r.txt", run)
    used = memory_guard._proc_status().get("VmRSS", 0)
    need = memory_guard.estimate(r.stat().st_size, "trec_qrels")  # the larger of the two estimates
    monkeypatch.setenv(memory_guard.LIMIT_ENV, str(used + need + memory_guard.FULL_PATH_MARGIN // 2))
    assert not both("score", q, r, MEASURES)
    monkeypatch.setenv(memory_guard.LIMIT_ENV, str(used + need + 2 * memory_guard.FULL_PATH_MARGIN))
    assert both("score", q, r, MEASURES)
    monkeypatch.setenv(memory_guard.LIMIT_ENV, str(used // 2))  # refused by both: the full command says so
    assert not both("score", q, r, MEASURES)
    assert "E_TOO_LARGE" in run_cli("score", q, r, MEASURES)[2]


ENTRY = "from trec_bridge.cli.main import entry; entry()"
FULL_ENTRY = "from trec_bridge.cli import quick; quick.attempt = lambda argv: None; " + ENTRY
HEAVY = ("polars", "pyarrow", "pandas", "argparse", "msgspec")  # what the quick path must not import


def test_as_whole_processes(tmp_path):
    """The console script's process (entry: its exit and stream flushing) answers as the full command's does, and
    the quick path's process never imports polars."""
    import subprocess
    import sys

    qrels, run = _pair()
    q, r = _write(tmp_path / "q.txt", qrels), _write(tmp_path / "r.txt", run)
    bad = _write(tmp_path / "bad.txt", (), raw=b"1 Q0 D1 1 nan tag\n")
    for argv in (["score", q, r, MEASURES], ["score", q, bad, MEASURES, "--policy", "trec_eval"]):
        quick_run, full_run = (subprocess.run([sys.executable, "-c", code, *map(str, argv)], capture_output=True,
                                              timeout=120) for code in (ENTRY, FULL_ENTRY))
        assert (quick_run.returncode, quick_run.stdout, quick_run.stderr) == \
            (full_run.returncode, full_run.stdout, full_run.stderr), argv
    probe = ("import contextlib, io, sys; from trec_bridge.cli.quick import attempt\n"
             "with contextlib.redirect_stdout(io.StringIO()): code = attempt(sys.argv[1:])\n"
             f"print(code, sorted(m for m in sys.modules if m.split('.')[0] in {HEAVY!r}))")
    done = subprocess.run([sys.executable, "-c", probe, "score", str(q), str(r), MEASURES], capture_output=True,
                          text=True, timeout=120)
    assert done.stdout.strip() == "0 []", done.stderr


# What the quick path's process must not import (bench/README.md, "W2, round 2"): pathlib (with urllib.parse),
# threading, the output machinery and the progress line, the measure families not asked for.
NOT_ON_THE_QUICK_PATH = ("pathlib", "urllib", "threading", "argparse", "polars", "trec_bridge.outputs",
                         "trec_bridge.progress", "trec_bridge.references", "trec_bridge.measures.bpref",
                         "trec_bridge.measures.intent", "trec_bridge.measures.cwl", "converters.detect")


def _quick_path_imports(tmp_path, unwanted: tuple[str, ...], *options: str) -> str:
    """``code families modules`` printed by a fresh interpreter without site (so that no install's start-up files
    import anything first) after the quick path answered: the measure families loaded, and the modules of
    ``unwanted`` (by prefix) that were imported."""
    import os
    import subprocess
    import sys

    qrels, run = _pair()
    q, r = _write(tmp_path / "q.txt", qrels), _write(tmp_path / "r.txt", run)
    probe = ("import sys; import os; sys.path[:0] = sys.argv.pop(1).split(os.pathsep)\n"
             "import contextlib, io; from trec_bridge.cli.main import main\n"
             "with contextlib.redirect_stdout(io.StringIO()): code = main(sys.argv[1:])\n"
             "from trec_bridge.measures.catalog import MODULES\n"
             "families = sorted(n for n, m in MODULES.items() if 'trec_bridge.measures.' + m in sys.modules)\n"
             f"print(code, families, sorted(m for m in sys.modules if m.startswith({unwanted!r})))")
    paths = os.pathsep.join([str(Path(__file__).resolve().parent.parent), *sys.path])
    done = subprocess.run([sys.executable, "-S", "-c", probe, paths, "score", str(q), str(r), MEASURES, *options],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def test_the_quick_path_imports_only_what_it_needs(tmp_path):
    """The quick path answers and leaves out of ``sys.modules`` every module it has no use for, the families of
    the measures it was not asked for among them."""
    assert _quick_path_imports(tmp_path, NOT_ON_THE_QUICK_PATH) == "0 ['AP', 'P', 'R', 'RR', 'nDCG'] []"


def test_a_tool_policy_on_the_quick_path_imports_no_path_machinery(tmp_path):
    """--policy trec_eval asks trec_eval's adapter (the references package) which measures it computes: that
    loads no pathlib, urllib, polars, argparse or output machinery either."""
    unwanted = tuple(m for m in NOT_ON_THE_QUICK_PATH if m != "trec_bridge.references")
    assert _quick_path_imports(tmp_path, unwanted, "--policy", "trec_eval") == "0 ['AP', 'P', 'R', 'RR', 'nDCG'] []"
