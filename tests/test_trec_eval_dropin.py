"""`trec-bridge trec_eval` on small hand-made files: trec_eval's rules one at a time (issue 17 §3).

The expected outputs are written by hand from trec_eval 9.0.4's C source
(cited per test); where the binary is installed, it is asked too.
"""
from __future__ import annotations

import subprocess

import numpy as np
import pytest

from tests.integration.dropin_support import drop_in
from trec_bridge.cli.main import build_parser
from trec_bridge.measures.base import Ranking

QRELS = "q1 0 a 1\nq1 0 b 0\nq1 0 c 12\nq1 0 d -1\nq1 0 e 1\nq2 0 x 1\nq10 0 y 1\n"
# q1: a(1) z(unjudged) c(12) d(-1) b(0) e(1); q2: x; q3 has no judgments; tags differ, the last line's is "last"
RUN = ("q1 Q0 a 1 0.9 first\nq1 Q0 z 2 0.8 first\nq1 Q0 c 3 0.7 first\nq1 Q0 d 4 0.6 first\n"
       "q1 Q0 b 5 0.5 first\nq1 Q0 e 6 0.4 first\nq3 Q0 x 1 1.0 first\nq2 Q0 w 1 2.0 first\nq2 Q0 x 2 1.0 last\n")


@pytest.fixture
def files(tmp_path):
    (tmp_path / "qrels").write_text(QRELS)
    (tmp_path / "run").write_text(RUN)
    return [str(tmp_path / "qrels"), str(tmp_path / "run")]


def lines(*rows) -> str:
    return "".join(f"{name:<22}\t{qid}\t{value}\n" for name, qid, value in rows)


def test_per_query_lines_queries_in_strcmp_order_then_the_summary(files):
    """get_trec_results.c sorts by strcmp (q1 < q10 < q2); q10 is judged but not run, q3 run but not judged:
    neither is printed; the mean is over q1 and q2 (recip_rank 1 and 1/2)."""
    code, out, err = drop_in(["-q", "-m", "recip_rank", "-m", "P.2", *files])
    assert code == 0, err
    assert out == lines(("recip_rank", "q1", "1.0000"), ("P_2", "q1", "0.5000"),
                        ("recip_rank", "q2", "0.5000"), ("P_2", "q2", "0.5000"),
                        ("recip_rank", "all", "0.7500"), ("P_2", "all", "0.5000"))
    assert "1 run quer(ies) without judgments, skipped as trec_eval does: q3" in err


def test_complete_flag_averages_over_every_judged_query(files):
    """-c: q10 (judged, not run) scores 0 and counts: recip_rank (1 + 1/2 + 0) / 3; it gets no per-query line."""
    code, out, _ = drop_in(["-q", "-c", "-m", "recip_rank", *files])
    assert out.splitlines()[-1] == lines(("recip_rank", "all", "0.5000")).rstrip("\n")
    assert "q10" not in out


def test_relstring_and_runid(files):
    """m_relstring.c: grade 0-9 as a digit, > above 9, '.' for a judged negative grade, '-' when not judged;
    runid is the tag of the file's last line (each parsed line overwrites it)."""
    code, out, _ = drop_in(["-q", "-m", "relstring", "-m", "runid", *files])
    assert out == lines(("relstring", "q1", "'1->.01'"), ("relstring", "q2", "'-1'"), ("runid", "all", "last"))


def test_judged_only_and_depth(files):
    """-M3 keeps a, z, c; then -J drops z (unjudged) and d (negative grade): q1 ranks a, c -> P_2 = 1."""
    code, out, _ = drop_in(["-q", "-M3", "-J", "-m", "P.2", "-m", "relstring", *files])
    assert out.splitlines()[:2] == lines(("P_2", "q1", "1.0000"), ("relstring", "q1", "'1>'")).splitlines()


def test_no_summary(files):
    code, out, _ = drop_in(["-n", "-m", "map", *files])
    assert (code, out) == (0, "")


@pytest.mark.parametrize("option", [["-N", "100"], ["-R", "prefs"], ["-D", "1"], ["-v"], ["-o"]])
def test_unsupported_options_print_trec_evals_usage(files, option):
    code, out, err = drop_in([*option, *files])
    assert (code, out) == (1, "")
    assert err.startswith("Usage: trec_eval [-h] [-q]") and f"does not support option {option[0]}" in err


@pytest.mark.parametrize("argv", [["-x"], ["--query_eval_wanted"]])
def test_unknown_options_print_trec_evals_usage_too(files, argv):
    """trec_eval answers an option it does not know with its usage text and exit 1 (trec_eval.c, case '?')."""
    code, out, err = drop_in([*argv, *files])
    assert (code, out) == (1, "")
    assert err.startswith("Usage: trec_eval [-h] [-q]") and f"unknown option {argv[0]}" in err and "[E_USAGE]" in err


def test_default_formats_are_accepted(files):
    assert drop_in(["-R", "qrels", "-T", "trec_results", "-m", "map", *files])[0] == 0


@pytest.mark.parametrize("measure, code", [("foo", "E_MEASURE_UNKNOWN"), ("P.5,5", "E_MEASURE_PARAM"),
                                           ("P.0", "E_MEASURE_PARAM"), ("prefs_simp", "E_MEASURE_UNKNOWN")])
def test_bad_measures_are_refused_with_a_code(files, measure, code):
    exit_code, out, err = drop_in(["-m", measure, *files])
    assert (exit_code, out) == (1, "") and f"[{code}]" in err


def test_a_run_without_a_judged_query_is_refused(tmp_path):
    (tmp_path / "q").write_text("1 0 a 1\n")
    (tmp_path / "r").write_text("2 Q0 a 1 1 t\n")
    code, out, err = drop_in(["-m", "map", str(tmp_path / "q"), str(tmp_path / "r")])
    assert (code, out) == (1, "") and "[E_QUERY_SET_EMPTY]" in err


def test_the_command_is_listed_in_the_help():
    assert "trec_eval" in build_parser().format_help()


def test_restricted_ranking_cuts_then_drops_unjudged():
    """Ranking.restricted: depth first (rank <= 3), then judged-only re-ranks the rows with grade >= 0."""
    r = Ranking(n_queries=2, retrieved=np.array([5, 2]), row_query=np.array([0, 0, 0, 1]),
                rank=np.array([2, 3, 5, 2]), grade=np.array([-1, 1, 0, 2]),
                qrels_query=np.array([0, 1]), qrels_grade=np.array([1, 2]))
    cut = r.restricted(depth=3, judged_only=True)
    assert cut.retrieved.tolist() == [1, 1]
    assert (cut.row_query.tolist(), cut.rank.tolist(), cut.grade.tolist()) == ([0, 1], [1, 1], [1, 2])
    assert r.restricted(depth=3).retrieved.tolist() == [3, 2]
    assert r.restricted() is r


def test_hand_made_files_against_the_binary(files, trec_eval_binary):
    for argv in (["-q", "-m", "relstring", "-m", "runid", "-m", "P.2", "-m", "recip_rank"],
                 ["-q", "-c", "-M3", "-J", "-m", "P.2", "-m", "relstring", "-m", "map"],
                 ["-q", "-c", "-l2", "-m", "num_rel", "-m", "P.2"], ["-q", "-c", "-l0", "-m", "num_rel"]):
        expected = subprocess.run([trec_eval_binary, *argv, *files], capture_output=True, text=True).stdout
        assert drop_in([*argv, *files])[1] == expected


def test_complete_num_rel_summary_counts_every_judgment_above_zero_whatever_the_level(files):
    """-l2: num_rel per query counts grades >= 2 (q1: c; q2: none); with -c its ``all`` line is m_num_rel.c's
    te_calc_avg_num_rel: every judgment above 0 of every qrels query (a, c, e, x and q10's y: 5), not the sum 1
    of the per-query lines, which it is without -c."""
    expected = lines(("num_rel", "q1", "1"), ("num_rel", "q2", "0"))
    for flags, total in ((["-c"], "5"), ([], "1")):
        argv = ["-q", *flags, "-l2", "-m", "num_rel", *files]
        code, out, err = drop_in(argv)
        assert (code, out) == (0, expected + lines(("num_rel", "all", total))), err


def test_level_zero_counts_grade_zero_and_negative_levels_are_refused(files):
    """-l0: grade 0 is relevant (q1's top 5 a z c d b: a, c and b, P_5 = 3/5; at -l1 2/5); -l-1 would count
    unjudged documents: refused with a code."""
    code, out, _ = drop_in(["-q", "-l0", "-m", "P.5", *files])
    assert out.splitlines()[0] == lines(("P_5", "q1", "0.6000")).rstrip("\n")
    code, out, err = drop_in(["-l-1", "-m", "P.2", *files])
    assert (code, out) == (1, "") and "[E_POLICY_MEASURE]" in err


@pytest.mark.parametrize("measure,printed", [
    ("ndcg.1=3.0,2=9", "ndcg_1=3.0,2=9"), ("set_F.0.50", "set_F_0.50"), ("utility.2.0,-1,0,0", "utility_2.0,-1,0,0"),
    ("G.1=2.0", "G_1=2.0"), ("Rndcg.1=3.0", "Rndcg_1=3.0"), ("ndcg_rel.1=1.0", "ndcg_rel_1=1.0"),
    ("P.05", "P_5"),  # a cutoff is printed from its number (%ld), not as typed
])
def test_a_parameter_list_is_printed_as_typed(files, measure, printed):
    """meas_init.c names a value of a float-parameter measure append_string(name, printable_params): the -m text
    verbatim (ndcg.1=3.0 prints ndcg_1=3.0, though its gain is the number 3)."""
    code, out, _ = drop_in(["-m", measure, *files])
    assert code == 0 and out.split("\t")[0].rstrip() == printed


@pytest.mark.needs_trec_eval
def test_parameter_lists_as_typed_against_the_binary(files, trec_eval_binary):
    argv = ["-q", "-m", "ndcg.1=3.0,2=9", "-m", "set_F.0.50", "-m", "utility.2.0,-1,0,0", "-m", "G.1=2.0",
            "-m", "Rndcg.1=3.0", "-m", "ndcg_rel.1=1.0", "-m", "P.05,2"]
    expected = subprocess.run([trec_eval_binary, *argv, *files], capture_output=True, text=True).stdout
    assert drop_in([*argv, *files])[1] == expected


def test_eleven_point_average_at_other_levels(files):
    """-m 11pt_avg.0.5,1: q1 has 3 relevant (a, c, e at ranks 1, 3, 6; -l1, grade 12 counts): level 0.5 needs
    (long)(0.5 x 3 + 0.9) = 2 relevant, best precision from rank 3 on is 2/3; level 1 needs 3, 3/6; the mean
    (1/2 + 2/3) / 2 = 0.5833.  q2: x at rank 2, one relevant: both levels 1/2."""
    code, out, _ = drop_in(["-q", "-m", "11pt_avg.0.5,1", *files])
    assert out == lines(("11pt_avg_0.5,1", "q1", "0.5833"), ("11pt_avg_0.5,1", "q2", "0.5000"),
                        ("11pt_avg_0.5,1", "all", "0.5417"))


def test_eleven_point_levels_out_of_order_are_refused(files):
    code, out, err = drop_in(["-m", "11pt_avg.0.5,0.2", *files])
    assert (code, out) == (1, "") and "[E_MEASURE_PARAM]" in err and "ascend" in err


@pytest.mark.needs_trec_eval
def test_levels_against_the_binary(files, trec_eval_binary):
    """iprec_at_recall sorts its levels (get_float_cutoffs); 11pt_avg keeps its text; both read by atof."""
    argv = ["-q", "-m", "iprec_at_recall.0.9,.25,0.5x", "-m", "11pt_avg..2,.5,0.8", "-m", "Rprec_mult.2,0.5"]
    expected = subprocess.run([trec_eval_binary, *argv, *files], capture_output=True, text=True).stdout
    assert drop_in([*argv, *files])[1] == expected
