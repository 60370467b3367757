"""The trec_eval installer's extraction and placement, on a small fake sdist (no network).

The fake "binary" is a shell script printing the version line, so the whole
install path (stream the tar, read the jar member, verify, place) runs here.
"""
from __future__ import annotations

import hashlib
import io
import json
import os
import tarfile
import zipfile

import pytest

from trec_bridge.cli.main import main
from trec_bridge.errors import ReferenceUnavailable
from trec_bridge.tools import install_trec_eval as inst

FAKE = b"#!/bin/sh\necho 'trec_eval version 9.0.4'\n"


def fake_sdist(tmp_path, member: str | None = inst.JAR_MEMBER, payload: bytes = FAKE,
               jar_name: str = "pyserini-1.6.0/pyserini/resources/jars/anserini-1.7.1-fatjar.jar"):
    jar = io.BytesIO()
    with zipfile.ZipFile(jar, "w") as z:
        z.writestr("META-INF/MANIFEST.MF", "Manifest-Version: 1.0\n")
        if member:
            z.writestr(member, payload)
    path = tmp_path / "pyserini-1.6.0.tar.gz"
    with tarfile.open(path, "w:gz") as tar:
        for name, data in (("pyserini-1.6.0/setup.py", b"# nothing\n"), (jar_name, jar.getvalue())):
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return path


def pin(monkeypatch, sdist, payload: bytes = FAKE):
    """Make the installer's pins those of this fake sdist and binary (the real pins stay tested below)."""
    monkeypatch.setattr(inst, "PINNED", inst.Pins(hashlib.sha256(sdist.read_bytes()).hexdigest(),
                                                  hashlib.sha256(payload).hexdigest()))
    return sdist


@pytest.fixture
def linux(monkeypatch):
    monkeypatch.setattr(inst.platform, "system", lambda: "Linux")
    monkeypatch.setattr(inst.platform, "machine", lambda: "x86_64")


def test_extracts_member_from_jar_inside_tar(tmp_path):
    data, jar = inst.extract_binary(fake_sdist(tmp_path), tmp_path)
    assert data == FAKE and jar.endswith("anserini-1.7.1-fatjar.jar")


def test_install_places_verified_executable(tmp_path, linux, monkeypatch):
    dest = tmp_path / "bin"
    done = inst.install(dest, sdist=pin(monkeypatch, fake_sdist(tmp_path)))
    assert done.path == dest / "trec_eval" and done.version == "9.0.4"
    assert os.access(done.path, os.X_OK)
    assert sorted(p.name for p in dest.iterdir()) == ["trec_eval"]  # no staging file left
    assert done.sha256 == hashlib.sha256(FAKE).hexdigest()


def test_missing_member_or_jar_is_a_clear_error(tmp_path, linux, monkeypatch):
    with pytest.raises(ReferenceUnavailable, match="has no member trec_eval/trec_eval-linux-amd64"):
        inst.install(tmp_path / "bin", sdist=pin(monkeypatch, fake_sdist(tmp_path, member=None)))
    other = tmp_path / "other"
    other.mkdir()
    with pytest.raises(ReferenceUnavailable, match="fatjar.jar"):
        inst.install(tmp_path / "bin", sdist=pin(monkeypatch, fake_sdist(other, jar_name="pyserini-1.6.0/README.md")))
    assert not (tmp_path / "bin").exists()


def test_wrong_version_keeps_the_existing_binary(tmp_path, linux, monkeypatch):
    dest = tmp_path / "bin"
    inst.install(dest, sdist=pin(monkeypatch, fake_sdist(tmp_path)))
    before = (dest / "trec_eval").read_bytes()
    other = tmp_path / "other"
    other.mkdir()
    ten = b"#!/bin/sh\necho 'trec_eval version 10.0'\n"
    wrong = pin(monkeypatch, fake_sdist(other, payload=ten), ten)
    with pytest.raises(ReferenceUnavailable, match="reports trec_eval 10.0, expected 9.0.4"):
        inst.install(dest, sdist=wrong)
    assert (dest / "trec_eval").read_bytes() == before
    assert sorted(p.name for p in dest.iterdir()) == ["trec_eval"]


def test_other_platforms_are_refused(monkeypatch, tmp_path):
    monkeypatch.setattr(inst.platform, "system", lambda: "Darwin")
    monkeypatch.setattr(inst.platform, "machine", lambda: "arm64")
    with pytest.raises(ReferenceUnavailable, match="only on Linux x86_64"):
        inst.install(tmp_path, sdist=fake_sdist(tmp_path))


def test_default_dest_follows_xdg(monkeypatch, tmp_path):
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path))
    assert inst.default_dest() == tmp_path / "trec-bridge" / "bin"


def test_cli_help_and_install(tmp_path, linux, capsys, monkeypatch):
    with pytest.raises(SystemExit) as exc:
        main(["tools", "install-trec-eval", "--help"])
    assert exc.value.code == 0
    assert "--dest" in capsys.readouterr().out
    code = main(["tools", "install-trec-eval", "--dest", str(tmp_path / "bin"),
                 "--sdist", str(pin(monkeypatch, fake_sdist(tmp_path)))])
    out = capsys.readouterr().out
    assert code == 0 and "installed trec_eval 9.0.4" in out and "sha256 " in out
    code = main(["tools", "install-trec-eval", "--dest", str(tmp_path / "b2"), "--sdist", str(tmp_path / "nope.tgz")])
    err = capsys.readouterr().err
    assert code == 1 and "E_REFERENCE_UNAVAILABLE" in err and "Traceback" not in err


def test_cli_which_lists_the_tools(capsys):
    assert main(["tools", "which", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert [r["tool"] for r in rows] == ["trec_eval", "pytrec_eval", "ir_measures", "ranx"]


# ------------------------------------------------------------------ nothing unverified is run or installed

MARKER_SCRIPT = "#!/bin/sh\ntouch '{marker}'\necho 'trec_eval version 9.0.4'\n"


def evil_payload(tmp_path) -> tuple[bytes, object]:
    """A "binary" that leaves a marker file when it is run: proof of whether it was executed."""
    marker = tmp_path / "EXECUTED"
    return MARKER_SCRIPT.format(marker=marker).encode(), marker


def test_real_pins_are_the_recorded_pyserini_1_6_0_hashes():
    assert inst.PINNED.sdist_sha256 == "e34761d700b33613c26bc61113effc6d65598dee6ada28a33214f79350f833f4"
    assert inst.PINNED.binary_sha256 == "a282ee9c22966f306c4bcbbfda9142ff22f371012a2994782194e6afdadbe6e4"


def test_unpinned_sdist_is_refused_and_its_binary_never_run(tmp_path, linux, capsys):
    payload, marker = evil_payload(tmp_path)
    evil = fake_sdist(tmp_path, payload=payload)
    dest = tmp_path / "bin"
    code = main(["tools", "install-trec-eval", "--dest", str(dest), "--sdist", str(evil)])
    err = capsys.readouterr().err
    assert code == 1 and "[E_INSTALL_CHECKSUM]" in err and "Traceback" not in err
    assert "sha256" in err and inst.PINNED.sdist_sha256 in err
    assert not marker.exists()
    assert not dest.exists() or list(dest.iterdir()) == []


def test_pinned_sdist_with_a_swapped_binary_is_refused_before_running_it(tmp_path, linux, monkeypatch):
    """The sdist matches its pin but the binary does not: refused before it is written or executed."""
    payload, marker = evil_payload(tmp_path)
    sdist = fake_sdist(tmp_path, payload=payload)
    monkeypatch.setattr(inst, "PINNED", inst.Pins(hashlib.sha256(sdist.read_bytes()).hexdigest(),
                                                  hashlib.sha256(FAKE).hexdigest()))
    dest = tmp_path / "bin"
    with pytest.raises(ReferenceUnavailable) as exc:
        inst.install(dest, sdist=sdist)
    assert exc.value.code == "E_INSTALL_CHECKSUM" and "trec_eval/trec_eval-linux-amd64" in exc.value.message
    assert not marker.exists()
    assert not dest.exists() or list(dest.iterdir()) == []


def test_allow_unverified_installs_with_a_loud_warning(tmp_path, linux, capsys):
    dest = tmp_path / "bin"
    code = main(["tools", "install-trec-eval", "--dest", str(dest), "--sdist", str(fake_sdist(tmp_path)),
                 "--allow-unverified"])
    captured = capsys.readouterr()
    assert code == 0 and (dest / "trec_eval").read_bytes() == FAKE
    assert captured.err.count("WARNING") == 2 and "--allow-unverified" in captured.err


def _jar_sdist(tmp_path, jar_bytes: bytes):
    path = tmp_path / "pyserini-1.6.0.tar.gz"
    with tarfile.open(path, "w:gz") as tar:
        info = tarfile.TarInfo("pyserini-1.6.0/pyserini/resources/jars/anserini-1.7.1-fatjar.jar")
        info.size = len(jar_bytes)
        tar.addfile(info, io.BytesIO(jar_bytes))
    return path


def test_oversized_zip_member_is_refused_without_reading_it(tmp_path, linux, monkeypatch):
    """A member bigger than the bound (by its header) is refused before a byte of it is decompressed."""
    monkeypatch.setattr(inst, "MAX_BINARY_BYTES", 1 << 20)
    jar = io.BytesIO()
    with zipfile.ZipFile(jar, "w", compression=zipfile.ZIP_DEFLATED) as z:
        z.writestr(inst.JAR_MEMBER, b"\0" * (4 << 20))  # 4 MiB, compresses to a few KiB
    sdist = pin(monkeypatch, _jar_sdist(tmp_path, jar.getvalue()))
    reads = []
    real_open = zipfile.ZipFile.open
    monkeypatch.setattr(zipfile.ZipFile, "open", lambda self, *a, **k: reads.append(a) or real_open(self, *a, **k))
    with pytest.raises(ReferenceUnavailable) as exc:
        inst.install(tmp_path / "bin", sdist=sdist)
    assert exc.value.code == "E_ARCHIVE_TOO_LARGE" and reads == []


def test_member_whose_header_lies_is_stopped_at_the_bound(tmp_path):
    """The bound counts the bytes actually read, not only the declared size."""
    src = io.BytesIO(b"x" * 5000)
    with pytest.raises(ReferenceUnavailable) as exc:
        inst.copy_bounded(src, io.BytesIO(), 4096, "member")
    assert exc.value.code == "E_ARCHIVE_TOO_LARGE" and src.tell() <= 4097


def test_oversized_jar_in_the_tar_is_refused(tmp_path, linux, monkeypatch):
    monkeypatch.setattr(inst, "MAX_JAR_BYTES", 1000)
    jar = io.BytesIO()
    with zipfile.ZipFile(jar, "w") as z:
        z.writestr(inst.JAR_MEMBER, FAKE + b"#" * 2000)
    sdist = pin(monkeypatch, _jar_sdist(tmp_path, jar.getvalue()))
    with pytest.raises(ReferenceUnavailable) as exc:
        inst.install(tmp_path / "bin", sdist=sdist)
    assert exc.value.code == "E_ARCHIVE_TOO_LARGE"
    assert not (tmp_path / "bin").exists()
