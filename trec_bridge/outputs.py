"""Every file trec-bridge writes goes through here: checked before anything is read, written all or nothing.

A command declares its inputs and outputs (``Declared``, from the command's
``io(args)``) and ``Outputs.declare`` checks the whole set before any input is
read.  The rules, the same for every command and every output (reports,
HTML pages, PNG charts, reproducers, converted files, sidecars, binaries):

- an output that is one of the inputs (same device and inode, or the same
  resolved path; an input's sidecar counts as an input) is refused:
  ``E_OUTPUT_IS_INPUT``;
- an output that exists and is not a regular file (a device such as
  /dev/null, a FIFO, a socket, a directory) is refused, and so is a
  read-only file, an empty name, ``-``, a standard stream (/dev/stdout,
  /dev/fd/N), a name ending in ``/``, a name the system cannot hold, a
  missing folder: ``E_OUTPUT`` with the path and the reason;
- a symbolic link is written *through*: the file it points to is replaced
  and the link stays (the checks above apply to the file it points to).

Writing: each output is written whole to ``.NAME.XXXXXXXX.tmp`` beside its
target and fsynced.  Inside a CLI command (``session``) nothing is renamed
until the command has finished: then every file is renamed in the order it
was written, and when a rename fails, or Ctrl-C / SIGTERM comes between two,
the files already renamed are put back from backups (hard links, or
copies where links are not supported).  So an
existing target is untouched unless the whole set is written.  An OS error
(disk full, file-size limit, name too long, ...) is ``E_OUTPUT`` and removes
every temporary file.  Outside a session, ``write_files`` is its own set.
"""
from __future__ import annotations

import errno
import os
import stat
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Callable, Iterable, Iterator, Sequence

from .errors import TrecBridgeError, UsageError

Content = bytes | str | Callable[[IO[bytes]], None]
SIDECAR_SUFFIX = ".manifest.json"  # converters.sidecar.SUFFIX: an input's sidecar is an input too
_MAX_PREFIX = 200  # temporary names stay under the 255-byte limit of a file name
_STREAMS = ("/dev/stdin", "/dev/stdout", "/dev/stderr", "/dev/fd/", "/proc/")  # never a file to replace


@dataclass
class Declared:
    """What one command reads and writes, known from its arguments alone."""

    inputs: list = field(default_factory=list)  # paths (None ignored)
    outputs: list = field(default_factory=list)  # files written
    folders: list = field(default_factory=list)  # (folder, [file names written in it]); created if missing


def _error(message: str, path, code: int | None = None) -> TrecBridgeError:
    """E_OUTPUT for ``path``; ``code``: the errno whose text the OS would give, for a check made before it can."""
    reason = f" ({os.strerror(code)})" if code is not None else ""
    return TrecBridgeError("E_OUTPUT", message + reason, file=os.fspath(path))


def _reason(exc: OSError) -> str:
    return exc.strerror or str(exc)


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def _resolve(name: str) -> tuple[Path, os.stat_result | None]:
    """The file a name leads to (links followed: written through) and its status, None when it is new."""
    if not name:
        raise _error("the output file name is empty", "''", errno.ENOENT)
    if name == "-":  # would be a file named "-", where a user expects standard output, which no command offers
        raise _error("'-' (standard output) is not offered for files; give a file name (./- for a file named -)", name)
    if name.endswith(("/", os.sep, "/.", "/..")) or name in (".", ".."):
        raise _error("names a folder (ends with '/'); give a file name", name, errno.EISDIR)
    if os.path.abspath(name).startswith(_STREAMS):
        raise _error("names a standard stream or an open file descriptor, not a file; give a file name", name)
    try:
        target = Path(os.path.realpath(name))
        try:
            info = os.stat(name)  # what the name leads to, links followed (/dev/stdout -> a pipe)
        except FileNotFoundError:
            if not stat.S_ISDIR(os.stat(target.parent).st_mode):
                raise _error(f"{str(target.parent)!r} is not a folder", name, errno.ENOTDIR) from None
            return target, None
        same = os.stat(target)
        if (same.st_dev, same.st_ino) != (info.st_dev, info.st_ino):
            raise _error("is a link that does not lead to a file name; give a file name", name)
        return target, info
    except FileNotFoundError:
        raise _error(f"folder {str(Path(name).parent)!r} does not exist", name, errno.ENOENT) from None
    except NotADirectoryError:
        raise _error("a part of the path is a file, not a folder", name, errno.ENOTDIR) from None
    except OSError as exc:
        raise _error(f"cannot write: {_reason(exc)}", name) from None


def _refuse_kind(name: str, target: Path, info: os.stat_result) -> None:
    """Only an existing regular file that may be written is replaced."""
    mode = info.st_mode
    if stat.S_ISDIR(mode):
        raise _error("output path is a directory", name, errno.EISDIR)
    if not stat.S_ISREG(mode):
        kind = "a device" if stat.S_ISCHR(mode) or stat.S_ISBLK(mode) else "a FIFO" if stat.S_ISFIFO(mode) else \
            "a socket" if stat.S_ISSOCK(mode) else "not a regular file"
        raise _error(f"the output exists and is {kind}, not a regular file; trec-bridge only replaces regular "
                     "files", name)
    if not mode & 0o222 or not os.access(target, os.W_OK):  # root may write anything: the mode says read-only
        raise _error("the output exists and is read-only; make it writable or choose another name", name, errno.EACCES)


@dataclass
class _Op:
    target: Path  # resolved (a symlink's destination)
    shown: str  # the name the user gave
    tmp: Path | None  # None: remove the target


class Outputs:
    """One set of outputs: checked against the inputs, written to temporary files, renamed together."""

    def __init__(self) -> None:
        self._inputs: dict[str, tuple[str, tuple | None]] = {}
        self._ops: list[_Op] = []
        self._made: list[Path] = []

    # ------------------------------------------------------------------ checks

    def add_inputs(self, paths: Iterable) -> None:
        for path in paths:
            if path is None or os.fspath(path) in ("", "-"):
                continue
            name = os.fspath(path)
            for p in (name, name + SIDECAR_SUFFIX):
                try:
                    info = os.stat(p)
                except (OSError, ValueError):
                    continue
                self._inputs.setdefault(p, (os.path.realpath(p), (info.st_dev, info.st_ino)))

    def declare(self, declared: Declared) -> None:
        """Check every output of a command against its inputs and the rules, before anything is read."""
        self.add_inputs(declared.inputs)
        seen: dict[str, str] = {}
        files = [os.fspath(p) for p in declared.outputs if p is not None]
        for folder, names in declared.folders:
            if folder is None:
                continue
            if self.check_folder(folder):
                files += [os.path.join(folder, n) for n in names]
        for name in files:
            real = str(self.check(name))
            if real in seen:
                raise UsageError("E_USAGE", f"two outputs name the same file: {seen[real]} and {name}")
            seen[real] = name

    def check(self, path) -> Path:
        """The file to replace for output ``path`` (a symlink's destination); raise if it may not be written."""
        name = os.fspath(path)
        target, info = _resolve(name)
        for shown, (real, ident) in self._inputs.items():
            if str(target) == real or (info is not None and (info.st_dev, info.st_ino) == ident):
                raise TrecBridgeError("E_OUTPUT_IS_INPUT", f"this output is the input {shown}: writing it would "
                                      "destroy the input; choose another output name", file=name)
        if info is not None:
            _refuse_kind(name, target, info)
        if not os.access(target.parent, os.W_OK | os.X_OK):
            raise _error(f"cannot write in folder {str(target.parent)!r}", name, errno.EACCES)
        return target

    def check_folder(self, folder) -> bool:
        """A folder outputs go into: True when it exists, False when it will be created; raise if it cannot be."""
        name = os.fspath(folder)
        if not name:
            raise _error("the output folder name is empty", "''", errno.ENOENT)
        path = Path(name)
        try:
            if path.is_dir():
                return True
            if os.path.lexists(path):
                raise _error("exists and is not a folder", name, errno.ENOTDIR)
            parent = path.parent
            while not os.path.lexists(parent):
                parent = parent.parent
            if not parent.is_dir():
                raise _error(f"{str(parent)!r} is not a folder", name, errno.ENOTDIR)
        except OSError as exc:
            raise _error(f"cannot create the folder: {_reason(exc)}", name) from None
        return False

    # ------------------------------------------------------------------ writing

    def make_dirs(self, folder) -> Path:
        """Create ``folder`` (and missing parents); removed again if the set is not written."""
        if self.check_folder(folder):
            return Path(folder)
        missing = []
        path = Path(folder)
        while not os.path.lexists(path):
            missing.append(path)
            path = path.parent
        for p in reversed(missing):
            try:
                p.mkdir()
            except FileExistsError:
                continue
            except OSError as exc:
                raise _error(f"cannot create the folder: {_reason(exc)}", p) from None
            self._made.append(p)
        return Path(folder)

    def stage(self, path, content: Content, mode: int | None = None) -> None:
        """Write ``content`` whole to a temporary file beside ``path``; renamed by ``commit``."""
        target, shown = self._new_target(path)
        fd, tmp = self._temporary(target, shown)
        self._write(fd, tmp, shown, content, mode)
        self._ops.append(_Op(target, shown, tmp))

    def stage_many(self, items: list, mode: int | None = None) -> None:
        """``stage`` each (path, content), the temporary files written and fsynced in parallel threads: an fsync
        waits for the disk, and many overlap (score-many's 100 reports: 0.64 s one after the other, 0.06 s so;
        bench/README.md).  Every target is checked first; when a write fails, or Ctrl-C / SIGTERM comes,
        every temporary file is removed (a write still under way keeps its open file, not the name)."""
        from concurrent.futures import ThreadPoolExecutor

        news, made, futures, pool = [], [], [], None
        for path, content in items:
            news.append((*self._new_target(path, [t for t, _, _ in news]), content))
        try:
            for target, shown, _ in news:
                made.append(self._temporary(target, shown))
            pool = ThreadPoolExecutor(max(1, min(16, len(news))), thread_name_prefix="trec-bridge-write")
            for (fd, tmp), (_, shown, content) in zip(made, news):
                futures.append(pool.submit(self._write, fd, tmp, shown, content, mode))
            pool.shutdown(wait=True)
            failed = next((f.exception() for f in futures if f.exception() is not None), None)
            if failed is not None:
                raise failed
        except BaseException:
            if pool is not None:
                pool.shutdown(wait=False, cancel_futures=True)
            for n, (fd, tmp) in enumerate(made):
                if n >= len(futures) or futures[n].cancelled():  # never handed to a thread: its file is ours
                    os.close(fd)
                _unlink(tmp)
            raise
        self._ops += [_Op(target, shown, tmp) for (_, tmp), (target, shown, _) in zip(made, news)]

    def _new_target(self, path, pending: list | None = None) -> tuple[Path, str]:
        """``path`` checked (``check``), and not already an output of this set: (target, the name given)."""
        target = self.check(path)
        shown = os.fspath(path)
        if any(op.target == target for op in self._ops) or target in (pending or ()):
            raise UsageError("E_USAGE", f"two outputs name the same file: {shown}")
        return target, shown

    @staticmethod
    def _temporary(target: Path, shown: str) -> tuple[int, Path]:
        import tempfile  # with secrets and shutil, imported when a file is written: a command that only prints
        # (score's table) starts without them

        try:
            fd, tmp = tempfile.mkstemp(prefix=f".{target.name[:_MAX_PREFIX]}.", suffix=".tmp", dir=target.parent)
        except OSError as exc:
            raise _error(f"cannot write: {_reason(exc)}", shown) from None
        return fd, Path(tmp)

    @staticmethod
    def _write(fd: int, tmp: Path, shown: str, content: Content, mode: int | None) -> None:
        """``content`` written whole to the new file ``fd`` (``tmp``) and fsynced; ``tmp`` removed when that
        fails."""
        try:
            with os.fdopen(fd, "wb") as fh:
                if callable(content):
                    content(fh)
                else:
                    fh.write(content.encode("utf-8") if isinstance(content, str) else content)
                fh.flush()
                os.fsync(fh.fileno())
            os.chmod(tmp, mode if mode is not None else 0o666 & ~_umask())  # mkstemp's 0600 -> a new file's mode
        except BaseException as exc:
            _unlink(tmp)
            if isinstance(exc, OSError):
                raise _error(f"cannot write: {_reason(exc)}", shown) from None
            raise

    def stage_removal(self, path) -> None:
        """Remove ``path`` when the set is written (a stale sidecar), after the files written before."""
        target = self.check(path)
        self._ops.append(_Op(target, os.fspath(path), None))

    def commit(self) -> None:
        """Rename every staged file into place, in order; on any failure put back what was replaced."""
        ops, self._ops = self._ops, []
        done: list[tuple[_Op, Path | None]] = []  # applied, with the backup of the file it replaced (None: new)
        backups: list[Path] = []
        try:
            for op in ops:
                backup = _backup(op.target) if len(ops) > 1 else None
                if backup is not None:
                    backups.append(backup)
                if op.tmp is None:
                    _unlink(op.target)
                else:
                    os.replace(op.tmp, op.target)
                done.append((op, backup))
        except BaseException as exc:
            for op, backup in reversed(done):
                try:
                    if backup is not None:
                        os.replace(backup, op.target)
                    elif op.tmp is not None:
                        os.unlink(op.target)  # it did not exist before
                except OSError:
                    pass
            self._ops = ops
            self.abort()
            if isinstance(exc, OSError):
                failed = ops[len(done)].shown if len(done) < len(ops) else ops[-1].shown
                raise _error(f"cannot write: {_reason(exc)}", failed) from None
            raise
        finally:
            for backup in backups:
                _unlink(backup)
        self._made.clear()

    def abort(self) -> None:
        """Remove every temporary file and every folder made for this set; the targets stay as they were."""
        for op in self._ops:
            if op.tmp is not None:
                _unlink(op.tmp)
        self._ops = []
        for folder in reversed(self._made):
            try:
                folder.rmdir()
            except OSError:
                pass
        self._made = []


def _unlink(path: Path) -> None:
    try:
        os.unlink(path)
    except OSError:  # already gone, or cannot be removed: nothing more to do while cleaning up
        pass


def _backup(target: Path) -> Path | None:
    """A copy of the current ``target`` to put back if the set fails (None when there is no target).

    A hard link costs nothing; where links are not supported the file is
    copied.  When neither works, the error stops the set before ``target``
    is replaced.
    """
    if not os.path.lexists(target):
        return None
    import secrets
    import shutil

    backup = target.parent / f".{target.name[:_MAX_PREFIX]}.{secrets.token_hex(8)}.old.tmp"
    try:
        os.link(target, backup)
    except OSError:
        try:
            shutil.copy2(target, backup)
        except BaseException:  # the set's failure, before ``target`` is replaced
            _unlink(backup)
            raise
    return backup


_current: Outputs | None = None


@contextmanager
def session(declared: Declared | None = None) -> Iterator[Outputs]:
    """One command's outputs: written when the block ends normally, none of them when it raises."""
    global _current
    outputs, previous = Outputs(), _current
    _current = outputs
    try:
        if declared is not None:
            outputs.declare(declared)
        yield outputs
    except BaseException:
        outputs.abort()
        raise
    else:
        outputs.commit()
    finally:
        _current = previous


def write_files(items: Iterable[tuple[object, Content]], mode: int | None = None,
                then_remove: Iterable = (), rename_order: Sequence[int] | None = None) -> None:
    """Write every (path, content) or none of them, in the given order, renamed into place in that order or in
    ``rename_order`` (indices into ``items``: a sidecar that hashes the file written before it is renamed
    first); then delete ``then_remove`` (a stale sidecar) with them."""
    def stage(outputs: Outputs) -> None:
        start = len(outputs._ops)
        for path, content in items:
            outputs.stage(path, content, mode)
        if rename_order is not None:
            staged = outputs._ops[start:]
            if sorted(rename_order) != list(range(len(staged))):
                raise ValueError(f"rename_order {list(rename_order)} is not an order of the {len(staged)} files")
            outputs._ops[start:] = [staged[i] for i in rename_order]
        for path in then_remove:
            outputs.stage_removal(path)

    _as_one_set(stage)


def write_many(items: Iterable[tuple[object, Content]]) -> None:
    """``write_files`` of many files at once (score-many's reports): written and fsynced in parallel
    (``Outputs.stage_many``), renamed into place in the given order with the command's other outputs."""
    _as_one_set(lambda outputs: outputs.stage_many(list(items)))


def _as_one_set(stage: Callable[[Outputs], None]) -> None:
    """``stage`` into the command's set (renamed when it ends), or into a set of its own renamed now."""
    outputs = _current if _current is not None else Outputs()
    try:
        stage(outputs)
    except BaseException:
        if outputs is not _current:
            outputs.abort()
        raise
    if outputs is not _current:
        outputs.commit()


def atomic_write(path, content: Content, mode: int | None = None, now: bool = False) -> None:
    """Write ``content`` (bytes, text as UTF-8, or a callable writing to a binary file) to ``path``.

    Readers see the old file or the whole new one.  Inside a session the file
    appears when the command ends, with the others; ``now`` writes it at once
    (a file the command itself must run or read back).
    """
    if now and _current is not None:
        outputs = Outputs()
        outputs._inputs = _current._inputs
        outputs.stage(path, content, mode)
        outputs.commit()
        return
    write_files([(path, content)], mode)


def make_dirs(folder) -> Path:
    """Create an output folder; inside a session it is removed again when the command fails."""
    return (_current or Outputs()).make_dirs(folder)
