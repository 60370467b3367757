"""Bounded memory: an input too large for the memory the tool may use is refused up front (E_TOO_LARGE).

polars and numpy allocate outside Python; a failed allocation there aborts
the process (SIGABRT), which no handler can turn into a message.  So
``memory_guard`` estimates the need of each input file before it is read and
compares it with RLIMIT_AS / RLIMIT_DATA / the cgroup limit / MemAvailable.

The subprocess tests score a generated run of a few hundred thousand lines
under an ``RLIMIT_AS`` (and an ``RLIMIT_DATA``) a few hundred MiB below what
the same command was measured to need: the outcome must be exit 1 with
E_TOO_LARGE, or success - never a signal, an exit code >= 128 or a traceback.
"""
from __future__ import annotations

import contextlib
import gzip
import io
import json
import os
import resource
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from trec_bridge import files, memory_guard
from trec_bridge.errors import InvalidInput

REPO = Path(__file__).resolve().parent.parent
MiB = 1 << 20
ENV = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")])}
ENV.pop("TREC_BRIDGE_MEMORY_GUARD", None)
MEASURES = "nDCG@10 AP R@100"

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="rlimits and /proc are Linux's")

PEAK = textwrap.dedent("""
    import atexit, sys, threading, time
    def status(key):
        for line in open("/proc/self/status"):
            if line.startswith(key + ":"):
                return int(line.split()[1]) * 1024
    data = [0]
    def sample():  # the kernel keeps no peak of VmData: sample it
        while True:
            data[0] = max(data[0], status("VmData"))
            time.sleep(0.005)
    threading.Thread(target=sample, daemon=True).start()
    atexit.register(lambda: sys.stderr.write("PEAKS %d %d\\n" % (status("VmPeak"), max(data[0], status("VmData")))))
    from trec_bridge.cli.main import main
    sys.exit(main(sys.argv[1:]))
""")


@pytest.fixture(scope="module")
def generated(tmp_path_factory) -> dict[str, Path]:
    """qrels (60 KB), a TREC run of 300,000 lines (9 MB) and a JSON run of 200,000 entries (7.5 MB)."""
    folder = tmp_path_factory.mktemp("mem")
    nq, per = 300, 1000
    qrels = folder / "qrels.txt"
    qrels.write_text("".join(f"q{q} 0 d{q}_{d * 7} {d % 3}\n" for q in range(nq) for d in range(10)))
    trec = folder / "run.txt"
    trec.write_text("".join(f"q{q} Q0 d{q}_{d} {d + 1} {per - d}.5 bm25\n" for q in range(nq) for d in range(per)))
    rankings = {f"q{q}": [{"doc_id": f"d{q}_{d}", "score": per - d + 0.5} for d in range(per)] for q in range(200)}
    jrun = folder / "run.json"
    jrun.write_text(json.dumps({"format": "trec-bridge.run", "version": 1, "dataset_id": "mem", "run_id": "r",
                                "rankings": rankings}))
    return {"qrels": qrels, "trec": trec, "json": jrun}


def _peaks(args: list[str]) -> tuple[int, int]:
    """Peak address space (VmPeak) and peak data segment (VmData, sampled) of the command without limits."""
    p = subprocess.run([sys.executable, "-c", PEAK, *args], capture_output=True, text=True, env=ENV, timeout=300)
    assert p.returncode in (0, 2), p.stderr
    line = next(line for line in p.stderr.splitlines() if line.startswith("PEAKS"))
    return int(line.split()[1]), int(line.split()[2])


def _limited(args: list[str], res: int, limit: int) -> subprocess.CompletedProcess:
    def set_limit():
        resource.setrlimit(res, (limit, limit))

    return subprocess.run([sys.executable, "-m", "trec_bridge.cli.main", *args], capture_output=True, text=True,
                          env=ENV, preexec_fn=set_limit, timeout=300)


def _assert_refused_or_done(p: subprocess.CompletedProcess, inputs: list[Path], limit_name: str) -> str:
    assert "Traceback" not in p.stderr, p.stderr
    assert 0 <= p.returncode < 128, f"killed by a signal or aborted: exit {p.returncode}\n{p.stderr}"
    if p.returncode == 0:
        return "processed"
    assert p.returncode == 1, p.stderr
    line = p.stderr.strip().splitlines()[-1]
    assert line.startswith("trec-bridge: error: [E_TOO_LARGE] "), p.stderr
    assert any(str(path) in line for path in inputs), line  # names the file
    for part in ("needs about", "MiB", limit_name, "is left", "Raise the limit"):  # size, estimate, limit, advice
        assert part in line, (part, line)
    return "refused"

@pytest.mark.parametrize("kind", ["trec", "json"])
def test_address_space_limit_below_need(generated, kind, tmp_path):
    args = ["score", str(generated["qrels"]), str(generated[kind]), MEASURES]
    vm_peak, _ = _peaks(args + ["--json", str(tmp_path / "measured.json")])
    p = _limited(args + ["--json", str(tmp_path / "r.json")], resource.RLIMIT_AS, vm_peak - 300 * MiB)
    outcome = _assert_refused_or_done(p, [generated["qrels"], generated[kind]], "RLIMIT_AS")
    if outcome == "refused":
        assert not (tmp_path / "r.json").exists()


def test_data_limit_below_need(generated):
    args = ["score", str(generated["qrels"]), str(generated["trec"]), MEASURES]
    _, data_peak = _peaks(args)
    p = _limited(args, resource.RLIMIT_DATA, data_peak - 100 * MiB)
    _assert_refused_or_done(p, [generated["qrels"], generated["trec"]], "RLIMIT_DATA")


# --------------------------------------------------------------------------- the guard itself, in-process


def _tight(monkeypatch, headroom: int):
    lim = memory_guard.Limit("RLIMIT_AS (ulimit -v)", 2000 * MiB, 2000 * MiB - headroom)
    monkeypatch.setattr(memory_guard, "limits", lambda first_file=True: [lim])


def test_refusal_names_file_size_need_limit_and_advice(tmp_path, monkeypatch):
    run = tmp_path / "big.run"
    run.write_bytes(b"q1 Q0 d1 1 1.0 r\n" * 200_000)  # 3.4 MB -> needs 64 + 10 x 3.4 MiB
    _tight(monkeypatch, 80 * MiB)
    with pytest.raises(InvalidInput) as exc:
        files.read_input_bytes(run)
    e = exc.value
    assert e.code == "E_TOO_LARGE" and e.where.file == str(run)
    for part in ("TREC run file (3 MiB)", "needs about 96 MiB", "10 x its size", "RLIMIT_AS (ulimit -v) is 2,000 MiB",
                 "80 MiB is left", "split the file"):
        assert part in e.message, (part, e.message)


def test_small_file_passes_and_guard_can_be_disabled(tmp_path, monkeypatch):
    run = tmp_path / "small.run"
    run.write_bytes(b"q1 Q0 d1 1 1.0 r\n" * 1000)
    _tight(monkeypatch, 100 * MiB)
    assert files.read_input_bytes(run) == run.read_bytes()
    _tight(monkeypatch, 1 * MiB)
    with pytest.raises(InvalidInput):
        files.read_input_bytes(run)
    monkeypatch.setenv("TREC_BRIDGE_MEMORY_GUARD", "off")
    assert files.read_input_bytes(run) == run.read_bytes()


def test_cli_refusal_is_one_line_exit_1(tmp_path, monkeypatch):
    valid = REPO / "tests" / "malformed" / "valid"
    monkeypatch.setattr(memory_guard, "_meminfo_available", lambda: 10 * MiB)  # a machine with 10 MiB free
    monkeypatch.setattr(memory_guard, "_cgroup_limit", lambda: None)
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        rc = __import__("trec_bridge.cli.main", fromlist=["main"]).main(
            ["score", str(valid / "qrels.txt"), str(valid / "run.txt"), "P@1", "--json", str(tmp_path / "r.json")])
    assert rc == 1
    assert err.getvalue().startswith("trec-bridge: error: [E_TOO_LARGE] ") and "MemAvailable" in err.getvalue()
    assert not (tmp_path / "r.json").exists()


def test_endless_device_is_refused_as_it_grows(monkeypatch):
    """/dev/zero has no size: it is checked block by block instead of read until the memory runs out."""
    _tight(monkeypatch, 100 * MiB)
    with pytest.raises(InvalidInput) as exc:
        files.read_input_bytes("/dev/zero")
    assert exc.value.code == "E_TOO_LARGE" and exc.value.where.file == "/dev/zero"


def _gzip_bomb(folder: Path, big_mib: int = 64) -> Path:
    """A multi-member gzip: a first member of ``big_mib`` MiB, then a last member whose trailer says
    a few hundred KB (more than the whole compressed file, so no trailer check can tell it wrapped)."""
    line = b"q1 Q0 d1 1 1.0 r\n"
    big = gzip.compress(line * (big_mib * MiB // len(line)), 9)
    last = gzip.compress(b"q2 Q0 d2 1 1.0 r\n" * (2 * len(big) // len(line) + 1), 9)
    path = folder / "bomb.run.gz"
    path.write_bytes(big + last)
    assert int.from_bytes(last[-4:], "little") > path.stat().st_size  # the trailer looks plausible
    return path


def test_multi_member_gzip_bomb_is_refused_while_decompressing(tmp_path, monkeypatch):
    """The guard counts what comes out of the gzip stream, not what its last trailer claims."""
    bomb = _gzip_bomb(tmp_path)
    _tight(monkeypatch, 150 * MiB)  # 64 MiB of TREC run needs 64 + 640 MiB
    with pytest.raises(InvalidInput) as exc:
        files.read_input_bytes(bomb)
    assert exc.value.code == "E_TOO_LARGE" and exc.value.where.file == str(bomb)
    assert "at least" in exc.value.message and "decompressing" in exc.value.message


def test_gzip_trailer_that_lies_is_not_trusted(tmp_path, monkeypatch):
    """ISIZE is the size mod 2**32 and may be anything: a trailer claiming 10 bytes hides nothing, one claiming
    4 GiB refuses nothing that fits; a lying trailer is then reported as corrupt."""
    data = b"q1 Q0 d1 1 1.0 r\n" * (40 * MiB // 17)
    good = gzip.compress(data, 9)
    small_lie = tmp_path / "small.gz"
    small_lie.write_bytes(good[:-4] + (10).to_bytes(4, "little"))
    _tight(monkeypatch, 200 * MiB)  # 40 MiB needs 64 + 400 MiB
    with pytest.raises(InvalidInput) as exc:
        files.read_input_bytes(small_lie)
    assert exc.value.code == "E_TOO_LARGE"
    big_lie = tmp_path / "big.gz"
    big_lie.write_bytes(good[:-4] + (0xFFFFFFFF).to_bytes(4, "little"))
    _tight(monkeypatch, 600 * MiB)
    with pytest.raises(InvalidInput) as exc:
        files.read_input_bytes(big_lie)
    assert exc.value.code == "E_GZIP_CORRUPT"  # decompressed in full (it fits), then its length check fails


def test_multi_member_gzip_within_the_limit_reads_every_member(tmp_path):
    parts = [b"q1 Q0 d1 1 2.0 r\n", b"q1 Q0 d2 2 1.0 r\n" * 3, b"", b"q2 Q0 d3 1 1.0 r\n"]
    gz = tmp_path / "multi.gz"
    gz.write_bytes(b"".join(gzip.compress(p) for p in parts))
    assert files.read_input_bytes(gz) == b"".join(parts)
    assert files.sha256_file(gz) == __import__("hashlib").sha256(gz.read_bytes()).hexdigest()
    gz.write_bytes(gz.read_bytes()[:-3])
    with pytest.raises(InvalidInput) as exc:
        files.read_input_bytes(gz)
    assert exc.value.code == "E_GZIP_CORRUPT"


def test_cli_refuses_gzip_bomb_under_the_memory_limit_setting(tmp_path):
    """``TREC_BRIDGE_MEMORY_LIMIT`` caps the memory the tool may use; the bomb ends in one E_TOO_LARGE line."""
    bomb = _gzip_bomb(tmp_path)
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("q1 0 d1 1\n")
    p = subprocess.run([sys.executable, "-m", "trec_bridge.cli.main", "score", str(qrels), str(bomb), "P@1"],
                       capture_output=True, text=True, env={**ENV, "TREC_BRIDGE_MEMORY_LIMIT": "300M"}, timeout=120)
    _assert_refused_or_done(p, [bomb], "TREC_BRIDGE_MEMORY_LIMIT")
    assert p.returncode == 1


@pytest.mark.parametrize("text, size", [("1048576", MiB), ("512M", 512 * MiB), ("2G", 2 << 30), ("1.5GiB", 3 << 29),
                                        ("300mb", 300 * MiB)])
def test_memory_limit_setting_sizes(text, size):
    assert memory_guard.parse_size(text) == size


@pytest.mark.parametrize("text", ["", "lots", "-1G", "0", "12X"])
def test_memory_limit_setting_rejects_what_is_not_a_size(text, monkeypatch):
    monkeypatch.setenv("TREC_BRIDGE_MEMORY_LIMIT", text)
    if text:
        with pytest.raises(Exception) as exc:
            memory_guard.limits()
        assert exc.value.code == "E_USAGE" and "TREC_BRIDGE_MEMORY_LIMIT" in exc.value.message
    else:
        assert all(lim.name != "TREC_BRIDGE_MEMORY_LIMIT" for lim in memory_guard.limits())


def test_sniffing_the_kind_of_file():
    assert memory_guard.sniff(b'  {"format": "trec-bridge.run"') == "json"
    assert memory_guard.sniff(b"q1 Q0 d1 1 2.5 bm25\nq1 Q0 d2 2 2.0 bm25\n") == "trec_run"
    assert memory_guard.sniff(b"q1 0 d1 1\n") == "trec_qrels"
    assert memory_guard.sniff(b"c1 d1\n") == "other"


def test_limits_are_read_from_this_process():
    """Whatever the machine: each limit found is positive and its usage below it or close (no crash reading /proc)."""
    for lim in memory_guard.limits():
        assert lim.limit > 0 and lim.used >= 0, lim


# The import reserve: the full path checks its first file before polars is imported; each limit counts what the
# import will take until it is, so that a file fitting only without polars' address space is refused, not let
# through to an import that a tight ``ulimit -v`` would make fail.
IMPORT_RESERVE = textwrap.dedent("""
    import json, resource, sys
    resource.setrlimit(resource.RLIMIT_AS, (1 << 45, 1 << 45))  # a limit in force, far above any need
    from trec_bridge import memory_guard as mg
    from trec_bridge.errors import InvalidInput
    real = mg.limits
    mg.limits = lambda first_file=True: [lim for lim in real(first_file) if lim.name.startswith("RLIMIT_AS")]
    out = {"polars_first": "polars" in sys.modules}
    before = mg.limits()[0]
    out["imports"], out["headroom"] = before.imports, before.headroom
    size = (before.headroom + before.imports // 2 - mg.FIXED) // mg.RATIOS["trec_run"]  # fits only without polars
    try:
        mg.Guard("big.run", b"q1 Q0 d1 1 1.0 r\\n").check(size)
        out["refusal"] = None
    except InvalidInput as exc:
        out["refusal"] = exc.message
    import polars  # noqa: F401
    after = mg.limits()[0]
    out["imports_after"], out["headroom_after"] = after.imports, after.headroom
    print(json.dumps(out))
""")


def test_limits_count_polars_import_until_it_is_loaded():
    p = subprocess.run([sys.executable, "-c", IMPORT_RESERVE], capture_output=True, text=True, env=ENV, timeout=120)
    assert p.returncode == 0, p.stderr
    out = json.loads(p.stdout)
    assert out["polars_first"] is False and out["imports"] == memory_guard.POLARS_IMPORT["VmSize"]
    assert out["refusal"] is not None and "will be taken by importing polars" in out["refusal"], out["refusal"]
    assert "RLIMIT_AS (ulimit -v)" in out["refusal"]
    assert out["imports_after"] == 0  # loaded: it is in VmSize now, no longer reserved
    # the reserve held what the import took: what is left after it is no less, and not much more, than foreseen
    assert 0 <= out["headroom_after"] - out["headroom"] < 64 * MiB, out
