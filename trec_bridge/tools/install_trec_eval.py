"""Install the real trec_eval 9.0.4 binary from a registry package.

Only PyPI is reachable from our machines, and trec_eval itself is not on it; the
pyserini sdist ships Anserini's fat jar, which carries a prebuilt
``trec_eval/trec_eval-linux-amd64`` (9.0.4).  We stream the sdist, copy only
that jar to a temp dir, read the one member with zipfile, check that it runs
and reports 9.0.4, and only then move it into place (so a bad download never
replaces a working binary).
"""
from __future__ import annotations

import hashlib
import os
import platform
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import zipfile
from dataclasses import dataclass
from pathlib import Path

from ..errors import ReferenceUnavailable
from ..outputs import atomic_write, make_dirs

PYSERINI_SPEC = "pyserini==1.6.0"
JAR_NAME = re.compile(r"(^|/)pyserini/resources/jars/anserini-[^/]+-fatjar\.jar$")
JAR_MEMBER = "trec_eval/trec_eval-linux-amd64"
EXPECTED_VERSION = "9.0.4"
BINARY_NAME = "trec_eval"


@dataclass(frozen=True)
class Installed:
    path: Path
    version: str
    sha256: str
    jar: str  # the jar the binary came from, for the record


def default_dest() -> Path:
    """``$XDG_DATA_HOME/trec-bridge/bin`` (default ``~/.local/share/trec-bridge/bin``)."""
    base = os.environ.get("XDG_DATA_HOME") or os.path.join(os.path.expanduser("~"), ".local", "share")
    return Path(base) / "trec-bridge" / "bin"


def _fail(message: str) -> ReferenceUnavailable:
    return ReferenceUnavailable("E_REFERENCE_UNAVAILABLE", message)


def check_platform() -> None:
    """The only binary in the jar is for linux x86_64; say so rather than install something that cannot run."""
    system, machine = platform.system(), platform.machine().lower()
    if system != "Linux" or machine not in ("x86_64", "amd64"):
        raise _fail(f"the packaged trec_eval binary ({JAR_MEMBER}) runs only on Linux x86_64, this is "
                    f"{system} {machine}; build trec_eval 9.0.4 from source and set TREC_EVAL to its path")


def download_sdist(workdir: Path, spec: str = PYSERINI_SPEC) -> Path:
    """``pip download`` the sdist (no wheel, no dependencies) into ``workdir``; return the .tar.gz."""
    cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "--no-binary", ":all:",
           "--disable-pip-version-check", "-q", "-d", str(workdir), spec]
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True)
    except OSError as exc:
        raise _fail(f"cannot run pip: {exc}") from None
    if proc.returncode != 0:
        lines = (proc.stderr or proc.stdout).strip().splitlines()
        tail = " | ".join(([ln for ln in lines if ln.startswith("ERROR")] or lines)[-2:])[:600]
        raise _fail(f"pip download {spec} failed (exit {proc.returncode}): {tail}")
    found = sorted(workdir.glob("*.tar.gz"))
    if not found:
        raise _fail(f"pip download {spec} produced no .tar.gz sdist in {workdir}")
    return found[0]


def extract_binary(sdist: Path, workdir: Path) -> tuple[bytes, str]:
    """The trec_eval bytes and the jar's name, reading the sdist as a stream.

    Stream mode cannot seek, and zipfile must, so the one jar is copied to
    ``workdir`` first; nothing else of the sdist touches the disk.
    """
    jar_path = workdir / "anserini-fatjar.jar"
    jar_name = None
    try:
        with tarfile.open(sdist, mode="r|gz") as tar:
            for member in tar:
                if member.isfile() and JAR_NAME.search(member.name):
                    src = tar.extractfile(member)
                    with open(jar_path, "wb") as out:
                        shutil.copyfileobj(src, out, 1 << 20)
                    jar_name = member.name
                    break
    except (tarfile.TarError, OSError, EOFError) as exc:
        raise _fail(f"cannot read {sdist.name} as a .tar.gz: {exc}") from None
    if jar_name is None:
        raise _fail(f"{sdist.name} has no pyserini/resources/jars/anserini-*-fatjar.jar")
    try:
        with zipfile.ZipFile(jar_path) as jar:
            try:
                data = jar.read(JAR_MEMBER)
            except KeyError:
                raise _fail(f"{jar_name} has no member {JAR_MEMBER}") from None
    except zipfile.BadZipFile as exc:
        raise _fail(f"{jar_name} is not a valid jar: {exc}") from None
    return data, jar_name


def binary_version(path: str | os.PathLike) -> str:
    """The version ``trec_eval -v`` reports, e.g. ``9.0.4``."""
    try:
        proc = subprocess.run([str(path), "-v"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise _fail(f"cannot run {path}: {exc}") from None
    text = (proc.stdout + proc.stderr).strip()
    match = re.search(r"trec_eval version (\S+)", text)
    if not match:
        raise _fail(f"{path} -v did not print a trec_eval version (exit {proc.returncode}): {text[:200]!r}")
    return match.group(1)


def install(dest: str | os.PathLike | None = None, sdist: str | os.PathLike | None = None) -> Installed:
    """Download (unless ``sdist`` is given), extract, verify and place ``DEST/trec_eval``."""
    check_platform()
    target_dir = Path(dest) if dest is not None else default_dest()
    if sdist is not None and not Path(sdist).is_file():
        raise _fail(f"sdist {sdist} does not exist")
    with tempfile.TemporaryDirectory(prefix="trec-bridge-install-") as tmp:
        work = Path(tmp)
        source = Path(sdist) if sdist is not None else download_sdist(work)
        data, jar_name = extract_binary(source, work)
    make_dirs(target_dir)
    staged = target_dir / f".{BINARY_NAME}.new"
    atomic_write(staged, data, mode=0o755, now=True)  # run below, so written at once (not with the command's set)
    try:
        version = binary_version(staged)
        if version != EXPECTED_VERSION:
            raise _fail(f"the extracted binary reports trec_eval {version}, expected {EXPECTED_VERSION}")
        final = target_dir / BINARY_NAME
        atomic_write(final, data, mode=0o755)
    finally:
        if staged.exists():
            staged.unlink()
    return Installed(final, version, hashlib.sha256(data).hexdigest(), jar_name)
