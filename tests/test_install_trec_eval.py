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


@pytest.fixture
def linux(monkeypatch):
    monkeypatch.setattr(inst.platform, "system", lambda: "Linux")
    monkeypatch.setattr(inst.platform, "machine", lambda: "x86_64")


def test_extracts_member_from_jar_inside_tar(tmp_path):
    data, jar = inst.extract_binary(fake_sdist(tmp_path), tmp_path)
    assert data == FAKE and jar.endswith("anserini-1.7.1-fatjar.jar")


def test_install_places_verified_executable(tmp_path, linux):
    dest = tmp_path / "bin"
    done = inst.install(dest, sdist=fake_sdist(tmp_path))
    assert done.path == dest / "trec_eval" and done.version == "9.0.4"
    assert os.access(done.path, os.X_OK)
    assert sorted(p.name for p in dest.iterdir()) == ["trec_eval"]  # no staging file left
    assert done.sha256 == hashlib.sha256(FAKE).hexdigest()


def test_missing_member_or_jar_is_a_clear_error(tmp_path, linux):
    with pytest.raises(ReferenceUnavailable, match="has no member trec_eval/trec_eval-linux-amd64"):
        inst.install(tmp_path / "bin", sdist=fake_sdist(tmp_path, member=None))
    other = tmp_path / "other"
    other.mkdir()
    with pytest.raises(ReferenceUnavailable, match="fatjar.jar"):
        inst.install(tmp_path / "bin", sdist=fake_sdist(other, jar_name="pyserini-1.6.0/README.md"))
    assert not (tmp_path / "bin").exists()


def test_wrong_version_keeps_the_existing_binary(tmp_path, linux):
    dest = tmp_path / "bin"
    inst.install(dest, sdist=fake_sdist(tmp_path))
    before = (dest / "trec_eval").read_bytes()
    other = tmp_path / "other"
    other.mkdir()
    wrong = fake_sdist(other, payload=b"#!/bin/sh\necho 'trec_eval version 10.0'\n")
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


def test_cli_help_and_install(tmp_path, linux, capsys):
    with pytest.raises(SystemExit) as exc:
        main(["tools", "install-trec-eval", "--help"])
    assert exc.value.code == 0
    assert "--dest" in capsys.readouterr().out
    code = main(["tools", "install-trec-eval", "--dest", str(tmp_path / "bin"), "--sdist", str(fake_sdist(tmp_path))])
    out = capsys.readouterr().out
    assert code == 0 and "installed trec_eval 9.0.4" in out and "sha256 " in out
    code = main(["tools", "install-trec-eval", "--dest", str(tmp_path / "b2"), "--sdist", str(tmp_path / "nope.tgz")])
    err = capsys.readouterr().err
    assert code == 1 and "E_REFERENCE_UNAVAILABLE" in err and "Traceback" not in err


def test_cli_which_lists_the_tools(capsys):
    assert main(["tools", "which", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert [r["tool"] for r in rows] == ["trec_eval", "pytrec_eval", "ir_measures"]
