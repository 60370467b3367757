"""Outputs appear whole or not at all, even when the writer is killed (SIGKILL) mid-way.

``atomic_write`` writes ``.NAME.XXXXXXXX.tmp`` beside NAME and renames it over
NAME when complete.  SIGKILL runs no clean-up, so a stray ``.NAME.*.tmp`` may
remain (documented in docs/errors.md); what must never happen is a partial
NAME.  A subprocess streams a large report through a slow callable and is
killed at several points; afterwards NAME is its old content or absent.
"""
from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from trec_bridge.errors import TrecBridgeError
from trec_bridge.outputs import atomic_write

REPO = Path(__file__).resolve().parent.parent
CHUNK = 1 << 20  # 1 MiB per write
CHUNKS = 64  # a 64 MiB report

WRITER = textwrap.dedent("""
    import sys, time
    from trec_bridge.outputs import atomic_write
    target, chunks, kill_after = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    block = b"x" * (1 << 20)

    def slow(fh):
        for i in range(chunks):
            fh.write(block)
            if i + 1 == kill_after:
                fh.flush()
                print("KILL ME", flush=True)  # the parent kills us now, mid-write
                time.sleep(60)
            time.sleep(0.001)
        fh.flush()
        print("KILL ME", flush=True)  # everything written, not yet fsynced nor renamed
        time.sleep(60)

    atomic_write(target, slow)
    print("DONE", flush=True)
""")


def _kill_mid_write(target: Path, kill_after: int) -> None:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")])}
    proc = subprocess.Popen([sys.executable, "-c", WRITER, str(target), str(CHUNKS), str(kill_after)],
                            stdout=subprocess.PIPE, text=True, env=env)
    try:
        line = proc.stdout.readline()
        assert line.strip() == "KILL ME", line
        # the temporary file exists and holds the partial report while NAME is untouched
        partial = list(target.parent.glob(f".{target.name}.*.tmp"))
        assert len(partial) == 1 and partial[0].stat().st_size >= min(kill_after, CHUNKS) * CHUNK
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == -signal.SIGKILL


@pytest.mark.parametrize("kill_after", [1, CHUNKS // 2, CHUNKS + 1], ids=["first-MiB", "half-way", "before-rename"])
@pytest.mark.parametrize("existing", [True, False], ids=["old-file", "no-file"])
def test_sigkill_leaves_old_file_or_none(tmp_path, kill_after, existing):
    target = tmp_path / "report.json"
    old = b'{"old": "report"}\n'
    if existing:
        target.write_bytes(old)
    _kill_mid_write(target, kill_after)
    if existing:
        assert target.read_bytes() == old  # not a byte of the new report
    else:
        assert not target.exists()
    # what SIGKILL may leave: the temporary file, never under the target's name
    for path in tmp_path.iterdir():
        assert path == target or re.fullmatch(rf"\.{re.escape(target.name)}\.[^/]+\.tmp", path.name), path.name


def test_completed_write_replaces_whole(tmp_path):
    target = tmp_path / "report.json"
    target.write_text("old")
    atomic_write(target, lambda fh: [fh.write(b"y" * CHUNK) for _ in range(8)])
    assert target.stat().st_size == 8 * CHUNK
    assert [p.name for p in tmp_path.iterdir()] == ["report.json"]


def test_error_in_writer_removes_temporary_and_keeps_old(tmp_path):
    target = tmp_path / "report.json"
    target.write_text("old")

    def failing(fh):
        fh.write(b"partial")
        raise RuntimeError("disk on fire")

    with pytest.raises(RuntimeError):
        atomic_write(target, failing)
    assert target.read_text() == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["report.json"]


def test_unwritable_targets_are_errors_with_a_code(tmp_path):
    with pytest.raises(TrecBridgeError) as exc:
        atomic_write(tmp_path / "no-such-folder" / "out.json", "x")
    assert exc.value.code == "E_OUTPUT"
    with pytest.raises(TrecBridgeError) as exc:
        atomic_write(tmp_path, "x")
    assert exc.value.code == "E_OUTPUT"


# Files the tool writes that are not outputs: scratch inputs for the trec_eval binary inside a private
# TemporaryDirectory, and the jar unpacked into the installer's temporary work folder.  trec_bridge/outputs.py
# is the mechanism itself and is not scanned.
MECHANISM = "trec_bridge/outputs.py"
SCRATCH_WRITERS = {
    "trec_bridge/references/trec_eval.py": 2,  # _write_qrels, _write_run: in tempfile.TemporaryDirectory()
    "trec_bridge/tools/install_trec_eval.py": 2,  # the jar, in tempfile.TemporaryDirectory(); unlink of .trec_eval.new
}
WRITE_CALL = re.compile(r"""open\([^)]*["'][wax]b?\+?["']|\.write_(?:text|bytes)\(|\.savefig\(\s*(?!buf)|"""
                        r"""\.write_(?:csv|json|parquet|ndjson|ipc)\(\s*(?!buf)[a-z_]|"""
                        # whatever else creates, replaces or deletes a file or folder
                        r"""\.mkdir\(|os\.makedirs\(|os\.(?:replace|rename|link|symlink)\(|"""
                        r"""shutil\.(?:copy|copy2|copyfile|copytree|move)\(|"""
                        r"""\.unlink\(|\.rmdir\(|\.touch\(|os\.mkfifo\(""")


def test_every_output_goes_through_the_outputs_module():
    """grep: no module of trec_bridge/ or converters/ writes, renames or deletes a file except through
    trec_bridge.outputs (which checks outputs against inputs and writes each command's set all or nothing)."""
    found = {}
    for folder in ("trec_bridge", "converters"):
        for path in (REPO / folder).rglob("*.py"):
            rel = path.relative_to(REPO).as_posix()
            if rel == MECHANISM:
                continue
            hits = [ln for ln in path.read_text(encoding="utf-8").splitlines()
                    if WRITE_CALL.search(ln) and not ln.lstrip().startswith("#")]
            if len(hits) != SCRATCH_WRITERS.get(rel, 0):
                found[rel] = hits
    assert not found, f"direct file writes (use trec_bridge.outputs): {found}"


def test_report_is_written_atomically_by_the_cli(tmp_path, monkeypatch, capsys):
    """score --json goes through the outputs module: a failing write (disk full) is E_OUTPUT with the path and
    the OS's reason, leaves the old report and no temporary file.  (Before: the OSError escaped main.)"""
    from trec_bridge import outputs
    from trec_bridge.cli.main import main

    out = tmp_path / "report.json"
    out.write_text("old report")
    calls = []
    real = outputs.atomic_write

    def spy(path, content):
        calls.append(str(path))
        real(path, lambda fh: (_ for _ in ()).throw(OSError(28, "No space left on device")))

    monkeypatch.setattr(outputs, "atomic_write", spy)
    valid = REPO / "tests" / "malformed" / "valid"
    assert main(["score", str(valid / "qrels.txt"), str(valid / "run.txt"), "P@1", "--json", str(out)]) == 1
    err = capsys.readouterr().err
    assert f"[E_OUTPUT] {out}: cannot write: No space left on device" in err and "Traceback" not in err
    assert calls == [str(out)]
    assert out.read_text() == "old report"
    assert [p.name for p in tmp_path.iterdir()] == ["report.json"]
