"""Issue 14, items 1-3: outputs never destroy what is not theirs, are written all or nothing, and OS errors on
writing are E_OUTPUT (trec_bridge/outputs.py).

Before the fix: every refusal below exited 0 (the device node, FIFO, read-only file or input was replaced by a
regular file); a failing sidecar deleted the old TREC file; ENOSPC / EFBIG / ENAMETOOLONG escaped as
tracebacks; SIGTERM left the temporary file behind (killed by the default action).
"""
from __future__ import annotations

import contextlib
import io
import json
import os
import resource
import shutil
import signal
import stat
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from trec_bridge import outputs
from trec_bridge.cli.main import build_parser, main
from trec_bridge.errors import InvalidInput, TrecBridgeError

REPO = Path(__file__).resolve().parent.parent
VALID = REPO / "tests" / "malformed" / "valid"
KB = REPO / "golden" / "rag" / "kb"


def run_cli(*argv) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main([str(a) for a in argv])
        except SystemExit as exc:
            code = exc.code
    return code, out.getvalue(), err.getvalue()


def temporaries(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.rglob("*") if p.name.endswith(".tmp"))


@pytest.fixture
def work(tmp_path):
    """Copies of valid inputs, so that a command that overwrote them could not damage the repository."""
    for name in ("qrels.txt", "run.txt", "dataset.json", "run.json"):
        shutil.copy(VALID / name, tmp_path / name)
    shutil.copy(KB / "dataset.json", tmp_path / "kb.json")
    shutil.copy(KB / "run_1.json", tmp_path / "kb_run.json")
    return tmp_path


def report(work: Path, name: str) -> Path:
    out = work / name
    assert run_cli("score", work / "qrels.txt", work / "run.txt", "P@1", "--json", out)[0] == 0
    return out


# Every command and every kind of output, with "OUT" where the hostile target goes.  "IN" marks the
# argument that is an input, for the output-is-input cases.
COMMANDS = {
    "score --json": ["score", "W/qrels.txt", "W/run.txt", "P@1", "--json", "OUT"],
    "score --html": ["score", "W/kb.json", "W/kb_run.json", "rag", "--html", "OUT"],
    "stages --json": ["stages", "W/qrels.txt", "--stage", "a=W/run.txt", "--stage", "b=W/run.json", "--json", "OUT"],
    "stages --html": ["stages", "W/qrels.txt", "--stage", "a=W/run.txt", "--stage", "b=W/run.json", "--html", "OUT"],
    "compare --json": ["compare", "W/r1.json", "W/r2.json", "--json", "OUT"],
    "crosscheck --json": ["crosscheck", "W/qrels.txt", "W/run.txt", "P@1", "--against", "ir_measures", "--json", "OUT"],
    "convert run": ["convert", "run", "W/run.json", "OUT"],
    "convert qrels": ["convert", "qrels", "W/dataset.json", "OUT"],
    "export run": ["export", "run", "W/run.txt", "--to", "ranx-json", "-o", "OUT"],
    "export dataset": ["export", "dataset", "W/qrels.txt", "--to", "trec-qrels", "-o", "OUT"],
    "import ranx-run": ["import", "ranx-run", "W/ranx.json", "-o", "OUT", "--dataset-id", "x"],
    "docs divergences": ["docs", "divergences", "-o", "OUT"],
}
# one input of each command, to name as its own output
OWN_INPUT = {
    "score --json": "W/run.txt", "score --html": "W/kb.json", "stages --json": "W/run.json",
    "stages --html": "W/qrels.txt", "compare --json": "W/r1.json", "crosscheck --json": "W/run.txt",
    "convert run": "W/run.json", "convert qrels": "W/dataset.json", "export run": "W/run.txt",
    "export dataset": "W/qrels.txt", "import ranx-run": "W/ranx.json",
}


def _argv(work: Path, name: str, out: str) -> list[str]:
    if not (work / "r1.json").exists():
        report(work, "r1.json")
        shutil.copy(work / "r1.json", work / "r2.json")
        (work / "ranx.json").write_text('{"q1": {"d1": 1.0}}')
    return [out if t == "OUT" else t.replace("W/", f"{work}/") for t in COMMANDS[name]]


def _refused(code: int, err: str, expected: str) -> None:
    assert code == 1, err
    assert "Traceback" not in err
    assert err.strip().splitlines()[-1].startswith(f"trec-bridge: error: [{expected}]"), err


@pytest.mark.parametrize("name", COMMANDS)
def test_a_fifo_a_directory_and_a_read_only_file_are_never_replaced(work, name):
    fifo, folder, read_only = work / "pipe", work / "folder", work / "ro.out"
    os.mkfifo(fifo)
    folder.mkdir()
    read_only.write_text("keep me")
    read_only.chmod(0o444)
    for target, reason in ((fifo, "FIFO"), (folder, "Is a directory"), (read_only, "Permission denied")):
        code, _, err = run_cli(*_argv(work, name, str(target)))
        _refused(code, err, "E_OUTPUT")
        assert str(target) in err and reason in err
    assert stat.S_ISFIFO(fifo.lstat().st_mode)
    assert folder.is_dir() and not any(folder.iterdir())
    assert read_only.read_text() == "keep me"
    assert temporaries(work) == []


@pytest.mark.parametrize("device", ["/dev/null", "/dev/full", "/dev/stdout", "/dev/stderr"])
@pytest.mark.parametrize("name", ["score --json", "convert run", "export dataset", "docs divergences"])
def test_a_device_or_a_stream_is_never_replaced(work, name, device):
    before = os.lstat(device)
    code, _, err = run_cli(*_argv(work, name, device))
    _refused(code, err, "E_OUTPUT")
    assert "device" in err or "standard stream" in err
    after = os.lstat(device)
    assert stat.S_IFMT(after.st_mode) == stat.S_IFMT(before.st_mode) and after.st_ino == before.st_ino


def test_dash_is_not_a_file_name(work, monkeypatch):
    """'-' would have been a file named '-' where a user expects standard output: refused, './-' is the file."""
    monkeypatch.chdir(work)
    code, _, err = run_cli(*_argv(work, "convert qrels", "-"))
    _refused(code, err, "E_OUTPUT")
    assert not (work / "-").exists()
    code, _, err = run_cli(*_argv(work, "convert qrels", "./-"))
    assert code == 0 and (work / "-").is_file(), err


def test_a_link_to_a_device_is_never_followed_into_a_replacement(work):
    link = work / "null.json"
    link.symlink_to("/dev/null")
    code, _, err = run_cli(*_argv(work, "score --json", str(link)))
    _refused(code, err, "E_OUTPUT")
    assert link.is_symlink() and stat.S_ISCHR(os.stat("/dev/null").st_mode)


def test_concurrent_writers_leave_one_complete_report(work):
    out = work / "shared.json"
    procs = [subprocess.Popen([sys.executable, "-m", "trec_bridge.cli.main", "score", str(work / "qrels.txt"),
                               str(work / "run.txt"), "P@1", "--json", str(out)], stdout=subprocess.DEVNULL,
                              stderr=subprocess.PIPE, env=ENV) for _ in range(4)]
    for p in procs:
        assert p.wait(timeout=120) == 0, p.stderr.read()
        p.stderr.close()
    assert json.loads(out.read_text())["means"] and temporaries(work) == []


@pytest.mark.parametrize("name", OWN_INPUT)
def test_an_output_that_is_an_input_is_refused_before_reading(work, name):
    argv = _argv(work, name, "OUT")
    own = OWN_INPUT[name].replace("W/", f"{work}/")
    before = {p: p.read_bytes() for p in work.iterdir() if p.is_file()}
    hard = work / "hardlink"
    os.link(own, hard)
    link = work / "symlink"
    link.symlink_to(own)
    for alias in (own, str(hard), str(link), str(work / "." / Path(own).name)):
        code, _, err = run_cli(*[alias if t == "OUT" else t for t in argv])
        _refused(code, err, "E_OUTPUT_IS_INPUT")
    assert {p: p.read_bytes() for p in before} == before
    assert link.is_symlink()
    assert temporaries(work) == []


def test_a_sidecar_of_an_input_is_an_input(work):
    """convert run a.txt b.txt where b.txt.manifest.json is a.txt's sidecar: the same file by another name."""
    assert run_cli("convert", "run", work / "run.json", work / "a.txt")[0] == 0
    os.link(work / "a.txt.manifest.json", work / "b.txt.manifest.json")
    code, _, err = run_cli("convert", "run", work / "a.txt", work / "b.txt", "--dataset-id", "x")
    _refused(code, err, "E_OUTPUT_IS_INPUT")
    assert "b.txt.manifest.json" in err


def test_two_outputs_naming_one_file_are_refused(work):
    code, _, err = run_cli("score", work / "kb.json", work / "kb_run.json", "rag", "--json", work / "same",
                           "--html", work / "same")
    _refused(code, err, "E_USAGE")
    assert not (work / "same").exists()


def test_a_symlink_is_written_through_and_kept(work):
    """The documented choice: a link at the output is followed; the file it points to gets the report."""
    real = work / "reports" / "real.json"
    real.parent.mkdir()
    real.write_text("old")
    link = work / "latest.json"
    link.symlink_to(real)
    dangling = work / "next.json"
    dangling.symlink_to(work / "reports" / "new.json")
    for target in (link, dangling):
        assert run_cli("score", work / "qrels.txt", work / "run.txt", "P@1", "--json", target)[0] == 0
        assert target.is_symlink()
        assert json.loads(target.read_text())["means"]
    assert json.loads(real.read_text())["means"]
    assert temporaries(work) == []


@pytest.mark.parametrize("argv_tail, where", [
    (["--png-dir", "FILE"], "not a folder"),
    (["--html", "MISSING/x.html"], "does not exist"),
])
def test_folders_are_checked_before_reading(work, argv_tail, where):
    (work / "file").write_text("x")
    tail = [t.replace("FILE", str(work / "file")).replace("MISSING", str(work / "missing")) for t in argv_tail]
    code, _, err = run_cli("score", work / "kb.json", work / "kb_run.json", "rag", *tail)
    _refused(code, err, "E_OUTPUT")
    assert where in err


def test_every_command_declares_its_files():
    """The class guard: every leaf command gives main its inputs and outputs (io), so none can skip the checks."""
    parser = build_parser()

    def leaves(p, path):
        subs = [a for a in p._actions if a.__class__.__name__ == "_SubParsersAction"]
        if not subs:
            yield path, p
        for action in subs:
            for name, child in action.choices.items():
                yield from leaves(child, path + [name])

    found = list(leaves(parser, []))
    assert len(found) >= 12
    missing = [" ".join(path) for path, p in found if not callable(p.get_default("io"))]
    assert not missing, f"commands that do not declare their files: {missing}"


# --------------------------------------------------------------------------- all or nothing (item 2)

def _trec_pair(work: Path) -> tuple[Path, Path, bytes, bytes]:
    out = work / "out.trec"
    assert run_cli("convert", "run", work / "run.json", out)[0] == 0
    side = Path(str(out) + ".manifest.json")
    return out, side, out.read_bytes(), side.read_bytes()


def _other_run(work: Path) -> Path:
    doc = json.loads((work / "run.json").read_text())
    doc["run_id"] = "another-system"
    path = work / "run2.json"
    path.write_text(json.dumps(doc))
    return path


def test_a_sidecar_that_cannot_be_written_leaves_the_old_pair(work):
    """Before: a directory at the sidecar's name made convert delete the old out.trec."""
    out, side, old, old_side = _trec_pair(work)
    side.unlink()
    side.mkdir()
    code, _, err = run_cli("convert", "run", _other_run(work), out)
    _refused(code, err, "E_OUTPUT")
    assert out.read_bytes() == old and side.is_dir()
    assert temporaries(work) == []


def test_interrupt_between_the_renames_puts_the_old_pair_back(work, monkeypatch):
    out, side, old, old_side = _trec_pair(work)
    real_replace, renamed = os.replace, []

    def replace(src, dst):
        renamed.append(Path(dst).name)
        if len(renamed) == 2:  # the second rename of the set: Ctrl-C comes first
            raise KeyboardInterrupt
        real_replace(src, dst)

    monkeypatch.setattr(outputs.os, "replace", replace)
    code, _, err = run_cli("convert", "run", _other_run(work), out)
    monkeypatch.undo()
    assert code == 130 and "interrupted" in err
    assert renamed[:2] == ["out.trec.manifest.json", "out.trec"]  # the sidecar is renamed first
    assert out.read_bytes() == old and side.read_bytes() == old_side
    assert temporaries(work) == [] and sorted(p.name for p in work.iterdir() if "out" in p.name) == [
        "out.trec", "out.trec.manifest.json"]


def test_a_kill_between_the_renames_is_detected_on_reading(work):
    """What SIGKILL between the renames leaves: the new sidecar beside the old TREC file -> E_SIDECAR_MISMATCH."""
    out, side, old, _ = _trec_pair(work)
    fresh = work / "fresh.trec"
    assert run_cli("convert", "run", _other_run(work), fresh)[0] == 0
    shutil.copy(str(fresh) + ".manifest.json", side)  # the sidecar renamed, the TREC file not yet
    for argv in (["convert", "run", out, work / "back.json"], ["score", work / "qrels.txt", out, "P@1"]):
        code, _, err = run_cli(*argv)
        _refused(code, err, "E_SIDECAR_MISMATCH")


def test_an_old_sidecar_without_a_hash_is_refused(work):
    out, side, _, _ = _trec_pair(work)
    manifest = json.loads(side.read_text())
    del manifest["trec_file"]["sha256"]
    side.write_text(json.dumps(manifest))
    code, _, err = run_cli("score", work / "qrels.txt", out, "P@1")
    _refused(code, err, "E_SIDECAR")
    assert "no trec_file.sha256" in err
    assert run_cli("convert", "run", out, work / "x.json", "--ignore-sidecar", "--dataset-id", "x")[0] == 0


def test_html_and_png_are_one_set(work, monkeypatch):
    """A failure writing the HTML page leaves the old page and the old PNG, and no new PNG folder."""
    html, pngs = work / "page.html", work / "charts"
    assert run_cli("score", work / "kb.json", work / "kb_run.json", "rag", "--html", html, "--png-dir", pngs)[0] == 0
    old_html, old_png = html.read_bytes(), (pngs / "tiers.png").read_bytes()
    html.write_bytes(b"old page")
    (pngs / "tiers.png").write_bytes(b"old png")
    real = outputs.Outputs.stage

    def failing(self, path, content, mode=None):
        if str(path).endswith(".html"):
            content = lambda fh: (_ for _ in ()).throw(OSError(28, "No space left on device"))  # noqa: E731
        real(self, path, content, mode)

    monkeypatch.setattr(outputs.Outputs, "stage", failing)
    for folder in (pngs, work / "new-charts"):
        code, _, err = run_cli("score", work / "kb.json", work / "kb_run.json", "rag", "--html", html,
                               "--png-dir", folder)
        _refused(code, err, "E_OUTPUT")
        assert "No space left on device" in err and str(html) in err
    assert html.read_bytes() == b"old page" and (pngs / "tiers.png").read_bytes() == b"old png"
    assert not (work / "new-charts").exists()
    assert temporaries(work) == []
    assert old_html and old_png


def test_a_failed_command_writes_none_of_its_outputs(work, monkeypatch):
    """Everything a command writes is one set: a failure after the JSON report was produced keeps the old one."""
    out = report(work, "r.json")
    out.write_text("old")
    from trec_bridge.rag import cli_support

    def broken(*args, **kwargs):  # the JSON report is already written (staged) when the HTML step fails
        raise TrecBridgeError("E_OUTPUT", "cannot write: File too large", file="p.html")

    monkeypatch.setattr(cli_support.Plan, "write_outputs", broken)
    code, _, err = run_cli("score", work / "kb.json", work / "kb_run.json", "rag", "--json", out, "--html",
                           work / "p.html")
    _refused(code, err, "E_OUTPUT")
    assert out.read_text() == "old" and not (work / "p.html").exists() and temporaries(work) == []


# --------------------------------------------------------------------------- OS errors and signals (item 3)

ENV = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")])}


def _limited(limit: int):
    def setup():
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
    return setup


def test_file_size_limit_is_e_output_and_keeps_the_old_pair(work):
    """EFBIG (ulimit -f) in a real process: exit 1, E_OUTPUT naming the file and the reason, old pair intact."""
    out, side, old, old_side = _trec_pair(work)
    limit = min(len(old), len(old_side)) + 1  # the larger file of the pair cannot be written
    for limit_setup in (_limited(limit), _limited(8)):
        p = subprocess.run([sys.executable, "-m", "trec_bridge.cli.main", "convert", "run", str(_other_run(work)),
                            str(out)], capture_output=True, text=True, env=ENV, preexec_fn=limit_setup, timeout=120)
        _refused(p.returncode, p.stderr, "E_OUTPUT")
        assert "File too large" in p.stderr
        assert out.read_bytes() == old and side.read_bytes() == old_side
        assert temporaries(work) == []


@pytest.mark.skipif(os.geteuid() != 0 or not shutil.which("mount"), reason="mounting a tiny tmpfs needs root")
def test_disk_full_on_a_real_file_system(work, tmp_path_factory):
    """ENOSPC from a 64 KiB tmpfs (the monkeypatched ENOSPC of test_atomic runs everywhere)."""
    mnt = tmp_path_factory.mktemp("full")
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(mnt)]).returncode:
        pytest.skip("mount is not permitted here")
    try:
        (mnt / "r.json").write_text("old")
        (mnt / "fill").write_bytes(b"x" * (60 << 10))
        code, _, err = run_cli("score", work / "kb.json", work / "kb_run.json", "rag", "--json", mnt / "r.json",
                               "--html", mnt / "p.html")
        _refused(code, err, "E_OUTPUT")
        assert "No space left on device" in err
        assert (mnt / "r.json").read_text() == "old" and not (mnt / "p.html").exists() and temporaries(mnt) == []
    finally:
        subprocess.run(["umount", str(mnt)])


SLOW_WRITER = textwrap.dedent("""
    import sys, time
    from trec_bridge import outputs
    real = outputs.Outputs.stage

    def stage(self, path, content, mode=None):
        def slow(fh):
            fh.write(b"partial")
            fh.flush()
            print("WRITING", flush=True)
            time.sleep(60)
        real(self, path, slow, mode)

    outputs.Outputs.stage = stage
    from trec_bridge.cli.main import entry
    sys.argv = ["trec-bridge", *sys.argv[1:]]
    entry()
""")


@pytest.mark.parametrize("sig, exit_code, word", [(signal.SIGTERM, 143, "terminated"), (signal.SIGINT, 130,
                                                                                        "interrupted")])
def test_a_signal_mid_write_removes_the_temporary_file(work, sig, exit_code, word):
    out = report(work, "r.json")
    out.write_text("old")
    p = subprocess.Popen([sys.executable, "-c", SLOW_WRITER, "score", str(work / "qrels.txt"),
                          str(work / "run.txt"), "P@1", "--json", str(out)], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True, env=ENV, preexec_fn=lambda: signal.signal(
                             signal.SIGINT, signal.SIG_DFL))
    try:
        for line in p.stdout:
            if line.strip() == "WRITING":
                break
        assert temporaries(work)  # the partial report exists as a temporary file
        os.kill(p.pid, sig)
        _, err = p.communicate(timeout=60)
    finally:
        if p.poll() is None:
            p.kill()
    assert p.returncode == exit_code, err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1 and word in err
    assert out.read_text() == "old" and temporaries(work) == []


@pytest.mark.parametrize("sig, exit_code, word", [(signal.SIGINT, 130, "interrupted"),
                                                   (signal.SIGTERM, 143, "terminated")])
def test_a_signal_during_start_up_is_one_line(work, sig, exit_code, word):
    """Ctrl-C / SIGTERM while the command is still importing (seen through -X importtime): exit 130 / 143,
    one line, no traceback (before: a KeyboardInterrupt traceback from inside an import, or -15). Small plain
    files are scored without polars (cli/quick.py, which imports numpy late); a JSON report sends the command
    down the full path, which imports polars."""
    plain = ["score", str(work / "qrels.txt"), str(work / "run.txt"), "P@1"]
    for after, argv in (("trec_bridge.cli", plain), ("trec_bridge.errors", plain), ("numpy", plain),
                        ("polars", plain + ["--json", str(work / "signalled.json")])):
        p = subprocess.Popen([sys.executable, "-X", "importtime", "-m", "trec_bridge.cli.main", *argv],
                             stdout=subprocess.DEVNULL,
                             stderr=subprocess.PIPE, text=True, env=ENV,
                             preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
        lines = []
        try:
            for line in p.stderr:
                lines.append(line)
                if line.rsplit("|", 1)[-1].strip() == after:  # imported at any depth
                    os.kill(p.pid, sig)
                    break
            lines += p.stderr.read().splitlines(keepends=True)
            p.wait(timeout=60)
        finally:
            if p.poll() is None:
                p.kill()
        said = [ln for ln in lines if not ln.startswith("import time:")]
        assert p.returncode == exit_code, (after, said)
        assert len(said) == 1 and word in said[0] and "Traceback" not in "".join(said), (after, said)
        assert not (work / "signalled.json").exists()


def test_library_writes_outside_a_command_are_sets_too(tmp_path):
    """write_trec_run called from Python (no CLI session) still writes both files or neither."""
    from converters.trec_run import write_trec_run
    from converters.json_run import load_run

    out = tmp_path / "x.trec"
    (tmp_path / "x.trec.manifest.json").mkdir()
    with pytest.raises(Exception) as exc:
        write_trec_run(load_run(VALID / "run.json"), out)
    assert getattr(exc.value, "code", None) == "E_OUTPUT"
    assert not out.exists() and temporaries(tmp_path) == []


def test_reading_a_mismatched_sidecar_from_the_api(tmp_path):
    from converters.trec_run import read_trec_run, write_trec_run
    from converters.json_run import load_run

    out = tmp_path / "x.trec"
    write_trec_run(load_run(VALID / "run.json"), out)
    out.write_bytes(out.read_bytes() + b"q9 Q0 d9 1 1 x\n")
    with pytest.raises(InvalidInput) as exc:
        read_trec_run(out)
    assert exc.value.code == "E_SIDECAR_MISMATCH"


def test_without_hard_links_the_old_pair_is_still_put_back(work, monkeypatch):
    """Where hard links are not supported, the backup is a copy: an interrupted set still restores the old pair."""
    out, side, old, old_side = _trec_pair(work)

    def no_links(src, dst):
        raise OSError(1, "Operation not permitted")

    real_replace, renamed = os.replace, []

    def replace(src, dst):
        renamed.append(Path(dst).name)
        if len(renamed) == 2:
            raise OSError(5, "Input/output error")
        real_replace(src, dst)

    monkeypatch.setattr(outputs.os, "link", no_links)
    monkeypatch.setattr(outputs.os, "replace", replace)
    code, _, err = run_cli("convert", "run", _other_run(work), out)
    monkeypatch.undo()
    _refused(code, err, "E_OUTPUT")
    assert "Input/output error" in err and str(out) in err
    assert out.read_bytes() == old and side.read_bytes() == old_side
    assert temporaries(work) == []
