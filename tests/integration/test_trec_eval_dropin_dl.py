"""`trec-bridge trec_eval` on the official TREC DL 2019/2020 passage runs: the binary's standard output, byte for byte.

The runs have what a drop-in must get right on real data: 200 run queries
against 43/54 judged ones, rank-0 rows, negative scores, hundreds of
thousands of tied scores and score pairs that tie only as float32.  Each run
(decompressed: trec_eval 9.0.4 reads plain files only) is compared with and
without -q and -c on the full default set and -m all_trec (every name of them
has a registered family: asserted), on all_trec named measure by measure, and
with -l2, -M and -J.
"""
from __future__ import annotations

import gzip

import pytest

from tests.integration.dropin_support import binary_output, drop_in, missing_names, restricted

RUNS = {
    "trec-dl-2019-passage-official": "qrels.dl19-passage.txt",
    "trec-dl-2020-passage-official": "qrels.dl20-passage.txt",
}
FLAGS = [(), ("-q",), ("-c",), ("-q", "-c")]
MEASURE_SETS = {"default": [], "all_trec": ["-m", "all_trec"]}
EXTRA = {  # the other options, on the registered measures of all_trec
    "l2": ["-l2"], "M100": ["-M100"], "J": ["-J"], "J-M20-q": ["-J", "-M20", "-q"], "n-q": ["-n", "-q"],
    "ndcg-gains": ["-q", "-m", "ndcg.1=0,2=1,3=3", "-m", "ndcg_cut.10,20"],
}


def run_files(shared_data):
    for folder, qrels in RUNS.items():
        for path in sorted((shared_data / "runs" / folder).glob("input.*.gz")):
            yield path, shared_data / "qrels" / "anserini-tools" / qrels


@pytest.fixture(scope="module")
def plain_runs(shared_data, tmp_path_factory):
    """Each run decompressed once, with its qrels."""
    out = tmp_path_factory.mktemp("dl")
    pairs = []
    for path, qrels in run_files(shared_data):
        plain = out / f"{path.parent.name}.{path.stem}"
        plain.write_bytes(gzip.decompress(path.read_bytes()))
        pairs.append((plain, qrels))
    assert len(pairs) == 14
    return pairs


def compare(binary: str, argv: list[str], pairs) -> list[str]:
    """The runs on which the drop-in's stdout differs from the binary's (with the first differing line)."""
    bad = []
    for run, qrels in pairs:
        files = [str(qrels), str(run)]
        code, out, err = drop_in(argv + files)
        if code != 0:  # a measure without a family: no need to run the binary to know
            bad.append(f"{run.name}: exit {code}: {err.strip()[:200]}")
            continue
        expected = binary_output(binary, argv + files)
        if out != expected:
            first = next((f"{a!r} != {b!r}" for a, b in zip(out.splitlines(), expected.splitlines()) if a != b),
                         "different line count")
            bad.append(f"{run.name}: {first}")
    return bad


def full_params():
    out = []
    for name, measures in MEASURE_SETS.items():
        missing = missing_names(measures)
        assert not missing, f"no family registered for trec_eval's {missing}"
        for flags in FLAGS:
            out.append(pytest.param(measures + list(flags), id=f"{name}{''.join(flags)}"))
    return out


@pytest.mark.parametrize("argv", full_params())
def test_full_measure_sets_match_the_binary(trec_eval_binary, plain_runs, argv):
    assert compare(trec_eval_binary, argv, plain_runs) == []


def test_all_trec_named_one_by_one_matches_the_binary(trec_eval_binary, plain_runs):
    """all_trec spelt out as one -m per measure (with -q -c): every name of it is registered (full_params asserts
    it), so the nickname's eight flag combinations above already cover the output; this covers the named path."""
    argv = restricted(MEASURE_SETS["all_trec"] + ["-q", "-c"])
    assert argv.count("-m") > 20 and compare(trec_eval_binary, argv, plain_runs) == []


@pytest.mark.parametrize("extra", list(EXTRA), ids=list(EXTRA))
def test_other_options_match_the_binary(trec_eval_binary, plain_runs, extra):
    argv = EXTRA[extra]
    argv = argv if "-m" in argv else restricted(["-m", "all_trec"] + argv)
    assert compare(trec_eval_binary, argv, plain_runs) == []
