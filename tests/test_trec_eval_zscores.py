"""`trec-bridge trec_eval -Z FILE`: z-scores as trec_eval 9.0.4 prints them (trec_bridge/trec_eval_zscores.py).

The expected outputs of the first tests are worked by hand from
convert_zscores.c, meas_avg.c and the print functions; where the binary is
installed, it is asked the same on generated inputs and z-score files that
reach every branch (a missing line, a missing query, a deviation of 0 with
the value at the mean and away from it, NaN, C's number spellings, CRLF, the
lookup that runs one past a query's lines).
"""
from __future__ import annotations

import math
import random
import subprocess

import pytest

from tests.integration.dropin_support import drop_in
from trec_bridge.measures.trec_names import atof
from trec_bridge.trec_eval_zscores import MISSING, c_fixed, read_zscores

QRELS = "q1 0 d1 1\nq1 0 d2 0\nq1 0 d3 1\nq2 0 d4 1\n"
RUN = "q1 Q0 d1 1 3.0 t\nq1 Q0 d2 2 2.0 t\nq2 Q0 d5 1 1.0 t\nq2 Q0 d4 2 0.5 t\n"
# q1: P_2 = 1/2, num_ret 2, AP = 1/2 (d1 at 1 of its 2 relevant); q2: P_2 = 1/2, num_ret 2, AP = (1/2)/1.
# gm_map's per-query value is log(AP) (m_gm_map.c), log(0.5) = -0.6931471805599453 for both.
ZSCORES = ("q1 P_2 0.25 0.5\n"  # (0.5 - 0.25) / 0.5 = 0.5
           "q1 map 0.5 0\n"  # deviation 0, value at the mean: 0
           "q1 num_ret 1 0.5\n"  # (2 - 1) / 0.5 = 2
           "q1 gm_map -0.6931471805599453 0.5\n"  # (log 0.5 - log 0.5) / 0.5 = 0
           "q2 P_2 1.0 0.25\n"  # (0.5 - 1) / 0.25 = -2
           "q2 map 0.25 0\n"  # deviation 0, value away from the mean: MISSING
           "q2 gm_map -0.6931471805599453 1\n")  # 0; q2 has no num_ret line: MISSING
MEASURES = ["-m", "num_q", "-m", "num_ret", "-m", "map", "-m", "gm_map", "-m", "P.2"]


def z(name: str, qid: str, value: str) -> str:
    return f"Z{name:<22}\t{qid}\t{value}\n"


@pytest.fixture
def files(tmp_path):
    (tmp_path / "qrels").write_text(QRELS)
    (tmp_path / "run").write_text(RUN)
    (tmp_path / "z").write_text(ZSCORES)
    return tmp_path


def test_per_query_z_scores_and_their_summary(files):
    """Per query, table order (num_q and gm_map print no per-query line); the summary: mean of the z-scores for
    P and map, the sum for num_ret (a count), exp of the mean for gm_map, num_q the number of queries."""
    code, out, _ = drop_in(["-q", *MEASURES, "-Z", str(files / "z"), str(files / "qrels"), str(files / "run")])
    assert code == 0
    assert out == (z("num_ret", "q1", "2.0000") + z("map", "q1", "0.0000") + z("P_2", "q1", "0.5000")
                   + z("num_ret", "q2", "-1000000.0000") + z("map", "q2", "-1000000.0000") + z("P_2", "q2", "-2.0000")
                   + z("num_q", "all", "2.0000") + z("num_ret", "all", "-999998.0000")
                   + z("map", "all", "-500000.0000") + z("gm_map", "all", "1.0000") + z("P_2", "all", "-0.7500"))


def test_complete_averages_over_every_judged_query(files):
    """-c with q3 judged and not run: 9.0.4 evaluates only the run's queries, and divides by the 3 judged ones;
    gm_map's missing query counts log(1e-5): exp((0 + 0 + log 1e-5) / 3) = 0.0215 (meas_avg.c)."""
    (files / "qrels").write_text(QRELS + "q3 0 d9 1\n")
    code, out, _ = drop_in(["-c", *MEASURES, "-Z", str(files / "z"), str(files / "qrels"), str(files / "run")])
    assert code == 0
    assert out == (z("num_q", "all", "3.0000") + z("num_ret", "all", "-999998.0000")
                   + z("map", "all", "-333333.3333") + z("gm_map", "all", "0.0215") + z("P_2", "all", "-0.5000"))


def test_a_query_the_file_does_not_list_is_missing_everywhere(files):
    (files / "z").write_text("q1 P_2 0.25 0.5\n")
    code, out, _ = drop_in(["-q", "-m", "P.2", "-Z", str(files / "z"), str(files / "qrels"), str(files / "run")])
    assert out == z("P_2", "q1", "0.5000") + z("P_2", "q2", "-1000000.0000") + z("P_2", "all", "-499999.7500")


def test_a_name_past_a_querys_lines_meets_the_next_querys_first(files):
    """find_meas searches one past q1's lines: "map" is above q1's only name "P_2" and equal to q2's first, so q1
    takes q2's map line: (0.5 - 0.25) / 0.25 = 1 (convert_zscores.c)."""
    (files / "z").write_text("q1 P_2 0.25 0.5\nq2 map 0.25 0.25\n")
    code, out, _ = drop_in(["-q", "-m", "map", "-Z", str(files / "z"), str(files / "qrels"), str(files / "run")])
    assert out.splitlines()[:2] == [z("map", "q1", "1.0000").rstrip("\n"), z("map", "q2", "1.0000").rstrip("\n")]


def test_runid_and_relstring_keep_their_lines(files):
    """Not values: no Z, no conversion (m_relstring.c, m_runid.c); q2's d5 is not judged: '-'."""
    code, out, _ = drop_in(["-q", "-m", "runid", "-m", "relstring.2", "-Z", str(files / "z"), str(files / "qrels"),
                            str(files / "run")])
    assert out == (f"{'relstring_2':<22}\tq1\t'10'\n" f"{'relstring_2':<22}\tq2\t'-1'\n" f"{'runid':<22}\tall\tt\n")


@pytest.mark.parametrize("text,value", [
    ("0.25", 0.25), ("+.5", 0.5), ("-3", -3.0), ("1e3", 1000.0), ("1e", 1.0), ("2.5x", 2.5), ("abc", 0.0),
    ("0x1p-2", 0.25), ("0x10", 16.0), ("-0x.8", -0.5), ("0x", 0.0), ("inf", math.inf), ("-Infinity", -math.inf),
    (".", 0.0), ("1,5", 1.0), (" \t7", 7.0), ("", 0.0),
])
def test_numbers_are_read_as_atof_reads_them(text, value):
    assert atof(text) == value


def test_nan_keeps_its_sign_as_glibc_prints_it():
    assert math.isnan(atof("nan")) and math.copysign(1, atof("nan")) == 1
    assert math.copysign(1, atof("-NaN(12)")) == -1
    assert (c_fixed(atof("nan")), c_fixed(atof("-nan")), c_fixed(-2.5), c_fixed(math.inf)) == \
        ("   nan", "  -nan", "-2.5000", "   inf")


def test_lines_are_split_on_any_c_space_and_crlf_is_read(tmp_path):
    path = tmp_path / "z"
    path.write_bytes(b"  q1\tP_2 \x0b0.5\f0.25 \r\nq1 map 1 2")  # no final newline: trec_eval adds one
    zs = read_zscores(str(path))
    assert zs.convert("q1", "P_2", 1.0) == 2.0 and zs.convert("q1", "map", 1.0) == 0.0
    assert zs.convert("q1", "recip_rank", 1.0) == MISSING and zs.convert("q9", "map", 1.0) == MISSING


@pytest.mark.parametrize("content,code,line", [
    ("q1 P_2 0.5\n", "E_ZSCORES", 1),  # three fields
    ("q1 P_2 0.5 0.2 7\n", "E_ZSCORES", 1),  # five
    ("q1 P_2 0.5 0.2\n\nq2 P_2 0.5 0.2\n", "E_ZSCORES", 2),  # a blank line is malformed too (get_zscores.c)
    ("q1 P_2 0.5 0.2\n\n", "E_ZSCORES", 2),
    ("q1 map 0.5 0.2\nq1 map 0.6 0.2\n", "E_ZSCORES", 2),  # two lines for one query and measure (trec_eval crashed)
    ("", "E_FILE_EMPTY", None),
    ("q1 map 0.5\x00 0.2\n", "E_NUL_BYTE", None),
    ("q1 map 0.5 -nan\n", "E_ZSCORES", 1),  # the sign of a NaN through C's arithmetic is the compiler's choice
    ("q1 map inf 0.2\n", "E_ZSCORES", 1),
    ("q1 map 0.5 -Infinity\n", "E_ZSCORES", 1),
])
def test_a_malformed_file_is_refused_with_its_line(files, content, code, line):
    (files / "z").write_bytes(content.encode())
    status, out, err = drop_in(["-m", "map", "-Z", str(files / "z"), str(files / "qrels"), str(files / "run")])
    assert (status, out) == (1, "") and f"[{code}]" in err and "Traceback" not in err
    if line is not None:
        assert f"z:{line}:" in err


def test_a_missing_file_is_refused(files):
    status, out, err = drop_in(["-m", "map", "-Z", str(files / "none"), str(files / "qrels"), str(files / "run")])
    assert (status, out) == (1, "") and "[E_FILE_NOT_FOUND]" in err


# ---------------------------------------------------------------- against the binary

def _inputs(rng: random.Random) -> tuple[str, str]:
    """A graded qrels and a run: a query without relevant documents, one judged and not run, one run and not
    judged, ties."""
    qrels, run = [], []
    for q in range(1, 9):
        for d in range(12):
            if rng.random() < 0.6:
                grade = 0 if q == 4 else rng.choice([0, 0, 1, 2, 3])
                qrels.append(f"{q} 0 d{d} {grade}")
    for q in [1, 2, 3, 4, 5, 6, 7, 9]:
        for rank, d in enumerate(rng.sample(range(16), rng.randint(3, 14)), 1):
            run.append(f"{q} Q0 d{d} {rank} {round(rng.uniform(0, 3), 1)} sys")
    return "\n".join(qrels) + "\n", "\n".join(run) + "\n"


def _zscore_file(rng: random.Random, printed: str) -> bytes:
    """Lines for most (query, measure) of the binary's own -q output, each of another kind of figure."""
    rows = []
    for text in printed.splitlines():
        name, qid, value = text.split("\t")
        name = name.strip()
        if name in ("runid", "relstring") or qid == "all" or rng.random() < 0.1:
            continue
        kind = rng.random()
        mean, dev = f"{rng.uniform(-1, 2):.4f}", f"{rng.uniform(0.01, 3):.4f}"
        if kind < 0.1:
            mean, dev = value, "0"  # at the mean when the printed value is exact (counts, 0.2000, ...)
        elif kind < 0.15:
            dev = "0"
        elif kind < 0.2:
            mean = rng.choice(["abc", "1e", "+.5", "0x1p-1", "2,5", "-0"])
        elif kind < 0.23:
            dev = "nan"  # trec_eval's own test file has nan for set_F
        rows.append(f"{rng.choice(['', '  '])}{qid}\t{name} {mean}  {dev}{rng.choice(['', ' ', chr(13)])}")
    rows.append("2\tzz_after_every_name 1 1")  # a query's last name: the lookups past query 1 meet query 2's first
    # a last query above every other: trec_eval's lookups past the last query's lines read outside its table (it
    # crashed on some), which this file never asks of it
    rows.append("~ P_5 0.5 0.5")
    rng.shuffle(rows)
    return ("\n".join(rows) + rng.choice(["\n", ""])).encode()


@pytest.mark.needs_trec_eval
@pytest.mark.parametrize("seed", range(12))
def test_the_binary_prints_the_same(tmp_path, trec_eval_binary, seed):
    rng = random.Random(seed)
    qrels, run = _inputs(rng)
    (tmp_path / "qrels").write_text(qrels)
    (tmp_path / "run").write_text(run)
    files = [str(tmp_path / "qrels"), str(tmp_path / "run")]
    printed = subprocess.run([trec_eval_binary, "-q", "-m", "all_trec", *files], capture_output=True, text=True,
                             check=True).stdout
    (tmp_path / "z").write_bytes(_zscore_file(rng, printed))
    for options in (["-q", "-m", "all_trec"], ["-m", "all_trec"], ["-q", "-c", "-m", "all_trec"], ["-c"], ["-q", "-n"],
                    ["-q", "-c", "-M5", "-m", "official", "-m", "ndcg_cut.3"]):
        argv = [*options, "-Z", str(tmp_path / "z"), *files]
        expected = subprocess.run([trec_eval_binary, *argv], capture_output=True, text=True)
        assert expected.returncode == 0, expected.stderr
        code, out, err = drop_in(argv)
        assert (code, out) == (0, expected.stdout), (options, err)
