"""Which paths name Parquet or Arrow input, by name alone: the one question the plain TREC reader asks of
``detect`` (re-exported there), kept apart so that ``score`` on small TREC files imports no format detector
(cli/quick.py)."""
from __future__ import annotations

import os
from typing import TYPE_CHECKING

from trec_bridge.errors import InvalidInput
from trec_bridge.urls import is_url

if TYPE_CHECKING:  # pathlib is imported where a folder is looked into: score on small files needs none (cli/quick.py)
    from pathlib import Path

PARQUET_SUFFIXES = (".parquet", ".pq")
IPC_SUFFIXES = (".arrow", ".ipc", ".feather")


def columnar_kind(path: str | Path) -> str | None:
    """"parquet" or "ipc" by the name's extension (a folder: named so, or holding .parquet partition files), else
    None.  By name only: Parquet and Arrow files are never sniffed."""
    name = str(path).rstrip("/").lower()
    if name.endswith(PARQUET_SUFFIXES):
        return "parquet"
    if name.endswith(IPC_SUFFIXES):
        return "ipc"
    if is_url(path):  # an fsspec URL names a Parquet folder or nothing we read (trec_bridge/urls.py)
        from .columnar import partition_files

        try:
            return "parquet" if partition_files(str(path)) is not None else None
        except InvalidInput:
            return None
    if os.path.isdir(path):
        from pathlib import Path

        return "parquet" if _holds_parquet(Path(path)) else None
    return None


def _holds_parquet(folder: Path) -> bool:
    """Parquet partition files in ``folder`` or in its hive partition folders (``key=value``), looked for no
    deeper: a folder given by mistake (a home folder) is not walked whole."""
    try:
        entries = list(folder.iterdir())
    except OSError:
        return False
    return any(p.suffix.lower() == ".parquet" and p.is_file() for p in entries) or \
        any("=" in p.name and p.is_dir() and _holds_parquet(p) for p in entries)
