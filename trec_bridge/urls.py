"""Inputs named by an fsspec URL (``memory://``, ``s3://``, ...): Parquet and Arrow IPC runs and qrels, read
where fsspec is installed (it comes with the dask extra), with the same checks as a local file.

Only the columnar readers take URLs (converters/columnar.py); a URL elsewhere
is a file that does not exist.  fsspec is imported only for a URL.
"""
from __future__ import annotations

import os

from .errors import InvalidInput


def is_url(path) -> bool:
    """``scheme://...`` (not a Windows drive, not a plain path)."""
    text = os.fspath(path) if isinstance(path, os.PathLike) else str(path)
    scheme, sep, _ = text.partition("://")
    return bool(sep) and scheme.replace("+", "").replace("-", "").isalnum() and len(scheme) > 1


def filesystem(url: str):
    """(fsspec filesystem, path inside it) of ``url``; E_FILE_UNREADABLE without fsspec or for an unknown scheme."""
    try:
        import fsspec.core
    except ImportError:
        raise InvalidInput("E_FILE_UNREADABLE", "reading a URL needs fsspec (pip install fsspec, or "
                           "'trec-bridge[dask]')", file=url) from None
    try:
        return fsspec.core.url_to_fs(url)
    except (ImportError, ValueError) as exc:  # a scheme whose fsspec backend is not installed
        raise InvalidInput("E_FILE_UNREADABLE", f"cannot open this URL: {exc}", file=url) from None


def sha256_url(url: str) -> str:
    """As ``files.sha256_file``: the bytes of a file; of a folder, its files' relative paths and SHA-256s."""
    import hashlib  # here and below: detect (every input's kind) imports this module, and hashes nothing

    fs, root = filesystem(url)
    if fs.isdir(root):
        h = hashlib.sha256()
        for p in sorted(fs.find(root)):
            rel = p[len(root.rstrip("/")) + 1:]
            h.update(f"{rel}\t{_sha256_of(fs, p)}\n".encode())
        return h.hexdigest()
    return _sha256_of(fs, root)


def _sha256_of(fs, path: str) -> str:
    import hashlib

    h = hashlib.sha256()
    with fs.open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()
