"""Values from the user that are hostile by size or by what a terminal does with them (issue 14, item 9).

Three classes, each with one mechanism in the code:

* unbounded integers: every integer option and parameter is read through
  ``trec_bridge.integers`` (a bound and a code, never int()'s 4,300-digit
  ValueError or an OverflowError further down);
* control characters: every message passes through ``trec_bridge.messages``
  (escaped: no newline, escape sequence or carriage return reaches stderr);
* long values: a value quoted in a message is shortened, with its length said.
"""
from __future__ import annotations

import contextlib
import io
import json
import re
from pathlib import Path

import pytest

from trec_bridge.cli.main import main
from trec_bridge.messages import printable, quote

TESTS = Path(__file__).resolve().parent
VALID = TESTS / "malformed" / "valid"
PACKAGE = TESTS.parent / "trec_bridge"
DIGITS_5000 = "1" * 5000
HUGE = "99999999999999999999"  # above int64


def _run(argv: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            rc = main([str(a) for a in argv])
        except SystemExit as exc:
            rc = exc.code
    return rc, out.getvalue(), err.getvalue()


def _refused(argv: list[str], code: str) -> str:
    rc, _out, err = _run(argv)
    assert "Traceback" not in err, err
    assert rc == 1, (rc, err)
    last = err.strip().splitlines()[-1]
    assert last.startswith(f"trec-bridge: error: [{code}]"), err
    return last


@pytest.fixture(scope="module")
def reports(tmp_path_factory):
    """Two score reports whose per-query deltas differ (so compare really resamples); read only, made once."""
    tmp_path = tmp_path_factory.mktemp("reports")
    run_b = tmp_path / "run_b.txt"
    run_b.write_text("q1 Q0 d1 1 3.0 b\nq1 Q0 d2 2 2.0 b\nq2 Q0 d5 1 2.5 b\nq2 Q0 d4 2 1.5 b\n")
    paths = []
    for name, run in (("a.json", VALID / "run.txt"), ("b.json", run_b)):
        rc, _o, err = _run(["score", VALID / "qrels.txt", run, "P@1 RR", "--json", tmp_path / name])
        assert rc == 0, err
        paths.append(tmp_path / name)
    return paths


# ------------------------------------------------------------------ unbounded integers

SCORE = ["score", VALID / "qrels.txt", VALID / "run.txt"]


@pytest.mark.parametrize("value", [HUGE, DIGITS_5000, "-" + DIGITS_5000])
@pytest.mark.parametrize("option, code", [
    ("--rel", "E_USAGE"), ("--min-queries", "E_USAGE"), ("--triage-k", "E_CUTOFF"),
])
def test_score_integer_options_are_bounded(option, code, value):
    extra = ["--rag"] if option != "--rel" else []
    _refused([*SCORE, "P@1", option, value, *extra], code)


@pytest.mark.parametrize("option", ["--resamples", "--seed"])
@pytest.mark.parametrize("value", [HUGE, DIGITS_5000, "-1", "1e3", "1_000"])
def test_compare_integer_options_are_bounded(reports, option, value):
    last = _refused(["compare", *reports, option, value], "E_USAGE")
    assert option in last


def test_compare_resamples_has_an_upper_bound(reports):
    """99999999999999999999 resamples went down into scipy (an OverflowError traceback before)."""
    last = _refused(["compare", *reports, "--resamples", HUGE], "E_USAGE")
    assert "at most 1,000,000" in last
    rc, out, err = _run(["compare", *reports, "--resamples", "1000"])
    assert rc == 0, err


@pytest.mark.parametrize("option, code", [("--k", "E_CUTOFF"), ("--rel", "E_USAGE")])
def test_stages_integer_options_are_bounded(option, code):
    argv = ["stages", VALID / "qrels.txt", "--stage", f"a={VALID / 'run.txt'}", "--stage", f"b={VALID / 'run.txt'}"]
    _refused([*argv, option, DIGITS_5000], code)
    if option == "--k":
        _refused([*argv, option, HUGE], code)


def test_crosscheck_and_import_integer_options_are_bounded(tmp_path):
    _refused(["crosscheck", VALID / "qrels.txt", VALID / "run.txt", "P@1", "--rel", DIGITS_5000], "E_USAGE")
    _refused(["import", "irds", "x", "-o", tmp_path / "o.json", "--max-docs", DIGITS_5000], "E_USAGE")
    _refused(["import", "ranx-qrels", "x.json", "-o", tmp_path / "o.json", "--dataset-id", "d", "--rel", HUGE * 3],
             "E_USAGE")


@pytest.mark.parametrize("measure, code", [
    (f"P@{DIGITS_5000}", "E_CUTOFF"),
    (f"nDCG@{'9' * 4400}", "E_CUTOFF"),
    (f"P(rel={DIGITS_5000})@5", "E_MEASURE_PARAM"),
    (f"nDCG(gains={{1: {'9' * 400}}})@5", "E_MEASURE_PARAM"),  # float(10**400): OverflowError before
])
def test_measure_integers_are_bounded(measure, code):
    last = _refused([*SCORE, measure], code)
    assert len(last) < 1000, "the 5,000-digit value is quoted in full"


def test_official_measures_cutoff_is_bounded(tmp_path):
    doc = json.loads((VALID / "dataset.json").read_text())
    doc["official_measures"] = [f"P@{DIGITS_5000}"]
    path = tmp_path / "dataset.json"
    path.write_text(json.dumps(doc))
    _refused(["score", path, VALID / "run.json", "P@1"], "E_CUTOFF")


@pytest.mark.parametrize("toml", [f"min_queries = {DIGITS_5000}\n", f"[triage]\nk = {HUGE}\n",
                                  f"expected_repeats = {HUGE}\n"])
def test_thresholds_integers_are_bounded(tmp_path, toml):
    path = tmp_path / "t.toml"
    path.write_text(toml)
    _refused([*SCORE, "rag", "--gate", path], "E_THRESHOLDS")


def test_no_unbounded_integer_option_in_the_package():
    """The class guard: an integer option is declared with integers.int_option, never argparse's bare int."""
    offenders = [f"{p.relative_to(PACKAGE)}:{n}" for p in PACKAGE.rglob("*.py")
                 for n, line in enumerate(p.read_text().splitlines(), 1) if re.search(r"type\s*=\s*int\b", line)]
    assert not offenders, offenders


# ------------------------------------------------------------------ control characters

CONTROLS = ["\n", "\x1b[31m", "\r", "\t", "\x85", "\x9b", "\x07", "\x7f", "\u202e", "\u2066", "\u200b"]


@pytest.mark.parametrize("control", CONTROLS, ids=[f"U+{ord(c[0]):04X}" for c in CONTROLS])
def test_file_name_controls_are_escaped_in_errors(tmp_path, control):
    name = tmp_path / f"run{control}x.txt"
    last = _refused([*SCORE[:2], name, "P@1"], "E_FILE_NOT_FOUND")
    rc, _o, err = _run([*SCORE[:2], name, "P@1"])
    assert err.count("\n") == 1 and err.endswith("\n"), repr(err)
    assert not re.search("[\x00-\x1f\x7f-\x9f\u200b-\u200f\u202a-\u202e\u2066-\u2069]", err.rstrip("\n")), repr(err)
    assert printable(control) in last


def test_file_name_controls_are_escaped_in_notes(tmp_path):
    """A note (convert's 'wrote ...') names the output: escaped like an error."""
    out = tmp_path / "out\n\x1b[2Jfake.trec"
    rc, _o, err = _run(["convert", "run", VALID / "run.json", out])
    assert rc == 0, err
    assert "\x1b" not in err and "\\x1b[2J" in err
    assert all(line.startswith("trec-bridge: ") for line in err.splitlines()), repr(err)


def test_error_with_controls_in_an_unknown_query_file(tmp_path):
    """The location (file) and a message quoting a value are both escaped, on one line."""
    run = tmp_path / "r\x1b]0;title\x07.txt"
    run.write_text("qX Q0 d1 1 1.0 t\n")
    last = _refused(["score", VALID / "dataset.json", run, "P@1"], "E_RUN_UNKNOWN_QUERY")
    assert "\\x1b]0;title\\x07" in last


def test_printable_and_quote():
    assert printable("a\nb\rc\td\x1b[0m\x85\u202eé") == "a\\nb\\rc\\td\\x1b[0m\\x85\\u202eé"
    assert quote("q\n1") == "'q\\n1'"
    assert quote(12) == "12"


# ------------------------------------------------------------------ long values

def test_long_measure_value_is_shortened():
    """A 120 KB measure string was quoted in full (twice) in the message."""
    long = "x" * 120_000
    last = _refused([*SCORE, f"P@1 {long}"], "E_MEASURE_UNKNOWN")
    assert len(last) < 1000 and "(120,000 characters)" in last


@pytest.mark.parametrize("measure", ["P(rel=" + "a" * 120_000 + ")@1", "P@1" + "0" * 120_000 + "x",
                                     "P(" + "k" * 120_000 + "=1)@1"])
def test_every_measure_message_is_shortened(measure):
    rc, _o, err = _run([*SCORE, measure])
    assert rc == 1 and "Traceback" not in err
    assert len(err) < 1000, len(err)


def test_quote_says_the_length():
    text = quote("y" * 5000, limit=10)
    assert text == "'yyyyyyyyyy'… (5,000 characters)"
