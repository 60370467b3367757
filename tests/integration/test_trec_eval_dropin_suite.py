"""`trec-bridge trec_eval` against trec_eval 9.0.4's own test suite: standard output byte for byte.

Every expected-output file of shared/data/trec_eval_test/v9.0.4 (the command
lines of test_trec_eval_suite.FILES, as the Makefile runs them) is covered:

* commands with an option the drop-in does not take (-R prefs, -R qrels_jg)
  must be refused with trec_eval's usage text and a line naming the option;
* every other command is run by the drop-in and by the binary with its -m
  options cut to the names whose families are registered, with and without
  -q and -c, and the outputs must be equal byte for byte;
* the command exactly as the Makefile runs it must print the expected file
  (every name it selects has a registered family: asserted).
"""
from __future__ import annotations

import shlex

import pytest

from tests.integration.dropin_support import binary_output, drop_in, missing_names, restricted
from tests.integration.test_trec_eval_suite import FILES

REFUSED_OPTIONS = ("-R",)  # preference / judgment-group formats


def argv_of(cmd) -> list[str]:
    return shlex.split(cmd.argv)[1:]


def refused_option(argv: list[str]) -> str | None:
    return next((o for o in REFUSED_OPTIONS if o in argv), None)


def absolute(argv: list[str], folder) -> list[str]:
    """The command's file arguments (the two last, and -Z's) made absolute (the drop-in runs in the test's folder)."""
    out = list(argv[:-2])
    for i in range(len(out) - 1):
        if out[i] == "-Z":
            out[i + 1] = str(folder / out[i + 1])
    return out + [str(folder / argv[-2]), str(folder / argv[-1])]


def with_flags(argv: list[str], flags: tuple[str, ...]) -> list[str]:
    return [f for f in flags if f not in argv] + argv


SUPPORTED = [c for c in FILES if refused_option(argv_of(c)) is None]
REFUSED = [c for c in FILES if refused_option(argv_of(c)) is not None]
FLAGS = [(), ("-q",), ("-c",), ("-q", "-c")]


# Known gaps, refused by the drop-in with an error code rather than printed differently (docs/trec_eval.md): none
# today.  Strict xfails: they turn into failures the day a gap is closed.
KNOWN_GAPS: dict[str, str] = {}


def _gap(cmd, flags=()):
    reason = KNOWN_GAPS.get(cmd.output)
    if reason is None or ("-l2" in reason and "-c" not in flags and "-c" not in argv_of(cmd)):
        return []
    return [pytest.mark.xfail(strict=True, reason=reason)]


def full_params():
    out = []
    for cmd in SUPPORTED:
        missing = missing_names(argv_of(cmd))
        assert not missing, f"no family registered for trec_eval's {missing}"
        out.append(pytest.param(cmd, id=cmd.output, marks=_gap(cmd)))
    return out


def registered_params():
    return [pytest.param(cmd, flags, id=f"{cmd.output}-{''.join(flags) or 'plain'}", marks=_gap(cmd, flags))
            for cmd in SUPPORTED for flags in FLAGS]


@pytest.mark.parametrize("cmd", full_params())
def test_command_prints_the_expected_file(shared_data, cmd):
    folder = shared_data / "trec_eval_test" / "v9.0.4"
    code, out, err = drop_in(absolute(argv_of(cmd), folder))
    assert code == 0, err
    assert out == (folder / cmd.output).read_text()


@pytest.mark.parametrize("cmd,flags", registered_params())
def test_registered_measures_match_the_binary(shared_data, trec_eval_binary, cmd, flags):
    folder = shared_data / "trec_eval_test" / "v9.0.4"
    argv = restricted(with_flags(argv_of(cmd), flags))
    assert argv is not None, "every command selects at least one registered measure"
    expected = binary_output(trec_eval_binary, argv, cwd=folder)
    code, out, err = drop_in(absolute(argv, folder))
    assert code == 0, err
    assert out == expected


@pytest.mark.parametrize("cmd", REFUSED, ids=[c.output for c in REFUSED])
def test_unsupported_options_are_refused_with_the_usage_text(shared_data, cmd):
    folder = shared_data / "trec_eval_test" / "v9.0.4"
    argv = argv_of(cmd)
    code, out, err = drop_in(absolute(argv, folder))
    assert (code, out) == (1, "")
    assert err.startswith("Usage: trec_eval [-h] [-q] {-m measure}* trec_rel_file trec_top_file\n")
    assert f"does not support option {refused_option(argv)}" in err and "[E_USAGE]" in err


def test_the_extra_words_of_results_trunc_are_ignored_and_said_on_stderr(shared_data, trec_eval_binary):
    """results.trunc has words after the sixth field: trec_eval ignores them; the strict reader refuses them."""
    folder = shared_data / "trec_eval_test" / "v9.0.4"
    argv = ["-q", "-c", "-m", "map", "-m", "P.5", str(folder / "qrels.test"), str(folder / "results.trunc")]
    code, out, err = drop_in(argv)
    assert code == 0
    assert out == binary_output(trec_eval_binary, argv)
    assert "5 run line(s) have words after the sixth field" in err
