"""Install the real trec_eval 9.0.4 binary from a registry package.

Only PyPI is reachable from our machines, and trec_eval itself is not on it; the
pyserini sdist ships Anserini's fat jar, which carries a prebuilt
``trec_eval/trec_eval-linux-amd64`` (9.0.4).  We stream the sdist, copy only
that jar to a temp dir, read the one member with zipfile, check that it runs
and reports 9.0.4, and only then move it into place (so a bad download never
replaces a working binary).

Nothing downloaded is trusted: the sdist and the extracted binary must match
the sha256 pinned below (E_INSTALL_CHECKSUM otherwise), and no byte of an
archive is executed or installed before both checks pass.  Archive members
are streamed with a size bound (E_ARCHIVE_TOO_LARGE), never read whole on the
strength of their header.  ``allow_unverified`` (``--allow-unverified``) is
the loud way out for a user's own build: a mismatch is then a warning on
stderr, and the binary is run for its version check as the user asked.
"""
from __future__ import annotations

import hashlib
import io
import os
import platform
import re
import subprocess
import sys
import tempfile
import zlib
from dataclasses import dataclass
from pathlib import Path

from ..errors import ReferenceUnavailable
from ..outputs import atomic_write, make_dirs

PYSERINI_SPEC = "pyserini==1.6.0"
JAR_NAME = re.compile(r"(^|/)pyserini/resources/jars/anserini-[^/]+-fatjar\.jar$")
JAR_MEMBER = "trec_eval/trec_eval-linux-amd64"
EXPECTED_VERSION = "9.0.4"
BINARY_NAME = "trec_eval"
# Bounds on what is read out of the archives: the real jar is 162 MiB, the real binary 437 KiB.
MAX_JAR_BYTES = 512 << 20
MAX_BINARY_BYTES = 16 << 20
_CHUNK = 1 << 20


@dataclass(frozen=True)
class Pins:
    """The sha256 of the files we accept, taken once by hand from PyPI's pyserini-1.6.0.tar.gz."""

    sdist_sha256: str
    binary_sha256: str


PINNED = Pins(
    sdist_sha256="e34761d700b33613c26bc61113effc6d65598dee6ada28a33214f79350f833f4",  # pyserini-1.6.0.tar.gz
    binary_sha256="a282ee9c22966f306c4bcbbfda9142ff22f371012a2994782194e6afdadbe6e4",  # trec_eval 9.0.4 in anserini-1.7.1
)


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


def _fail(message: str, code: str = "E_REFERENCE_UNAVAILABLE") -> ReferenceUnavailable:
    return ReferenceUnavailable(code, message)


def _warn(message: str) -> None:
    sys.stderr.write(f"trec-bridge: WARNING: {message}\n")


def sha256_of_file(path: Path) -> str:
    digest = hashlib.sha256()
    try:
        with open(path, "rb") as fh:
            while block := fh.read(_CHUNK):
                digest.update(block)
    except OSError as exc:
        raise _fail(f"cannot read {path}: {exc.strerror or exc}") from None
    return digest.hexdigest()


def verify(what: str, found: str, expected: str, allow_unverified: bool) -> None:
    """Refuse (E_INSTALL_CHECKSUM) a file whose sha256 is not the pinned one, or warn loudly when allowed."""
    if found == expected:
        return
    message = f"{what} has sha256 {found}, expected {expected}"
    if not allow_unverified:
        raise _fail(message + "; refusing to use it (a corrupt or tampered download, or another file). "
                    "For your own build, pass --allow-unverified", "E_INSTALL_CHECKSUM")
    _warn(message + "; installing it anyway because --allow-unverified was given")


def copy_bounded(src, out, limit: int, what: str) -> int:
    """Copy ``src`` to ``out`` in blocks, refusing (E_ARCHIVE_TOO_LARGE) once more than ``limit`` bytes came."""
    total = 0
    while block := src.read(min(_CHUNK, limit + 1 - total)):
        total += len(block)
        if total > limit:
            raise _fail(f"{what} is larger than {limit} bytes: refused", "E_ARCHIVE_TOO_LARGE")
        out.write(block)
    return total


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
    ``workdir`` first; nothing else of the sdist touches the disk.  Both the
    jar and the binary are copied in blocks with a bound: a member's declared
    size is checked first, and the bytes actually read are counted too (a
    header can lie, a compressed member can expand).
    """
    import tarfile  # here: importing the installer (the trec_eval adapter does) stays light
    import zipfile

    jar_path = workdir / "anserini-fatjar.jar"
    jar_name = None
    try:
        with tarfile.open(sdist, mode="r|gz") as tar:
            for member in tar:
                if member.isfile() and JAR_NAME.search(member.name):
                    _check_declared(member.name, member.size, MAX_JAR_BYTES)
                    with open(jar_path, "wb") as out:
                        copy_bounded(tar.extractfile(member), out, MAX_JAR_BYTES, member.name)
                    jar_name = member.name
                    break
    except (tarfile.TarError, OSError, EOFError, zlib.error) as exc:
        raise _fail(f"cannot read {sdist.name} as a .tar.gz: {exc}") from None
    if jar_name is None:
        raise _fail(f"{sdist.name} has no pyserini/resources/jars/anserini-*-fatjar.jar")
    try:
        with zipfile.ZipFile(jar_path) as jar:
            try:
                info = jar.getinfo(JAR_MEMBER)
            except KeyError:
                raise _fail(f"{jar_name} has no member {JAR_MEMBER}") from None
            _check_declared(f"{jar_name}!{JAR_MEMBER}", info.file_size, MAX_BINARY_BYTES)
            buf = io.BytesIO()
            with jar.open(info) as src:
                copy_bounded(src, buf, MAX_BINARY_BYTES, f"{jar_name}!{JAR_MEMBER}")
            data = buf.getvalue()
    except (zipfile.BadZipFile, NotImplementedError, OSError, EOFError, zlib.error) as exc:
        raise _fail(f"{jar_name} is not a valid jar: {exc}") from None
    return data, jar_name


def _check_declared(what: str, size: int, limit: int) -> None:
    if size > limit:
        raise _fail(f"{what} declares {size} bytes, more than the {limit} this installer reads: refused",
                    "E_ARCHIVE_TOO_LARGE")


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


def install(dest: str | os.PathLike | None = None, sdist: str | os.PathLike | None = None,
            allow_unverified: bool = False) -> Installed:
    """Download (unless ``sdist`` is given), verify, extract, verify, run and place ``DEST/trec_eval``.

    The order is the point: the sdist's sha256 before it is opened, the
    binary's sha256 before it is written anywhere or run.
    """
    check_platform()
    target_dir = Path(dest) if dest is not None else default_dest()
    if sdist is not None and not Path(sdist).is_file():
        raise _fail(f"sdist {sdist} does not exist")
    with tempfile.TemporaryDirectory(prefix="trec-bridge-install-") as tmp:
        work = Path(tmp)
        source = Path(sdist) if sdist is not None else download_sdist(work)
        verify(f"the sdist {source.name}", sha256_of_file(source), PINNED.sdist_sha256, allow_unverified)
        data, jar_name = extract_binary(source, work)
    digest = hashlib.sha256(data).hexdigest()
    verify(f"{JAR_MEMBER} in {jar_name}", digest, PINNED.binary_sha256, allow_unverified)
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
    return Installed(final, version, digest, jar_name)
