"""Public benchmarks from ir_datasets -> ``model.Dataset``, offline by default.

``import_irds("msmarco-passage/trec-dl-2019/judged")`` reads the queries and
qrels of any ir_datasets ID through ir_datasets' own code (its parsers, its
filters such as ``/judged``), from the files already in its cache
(``IR_DATASETS_HOME``).  Nothing is downloaded unless ``allow_download``: a
file ir_datasets would have to fetch raises ``InvalidInput`` at once, naming
the dataset, the file and the path where ir_datasets expects it, instead of
ir_datasets' retries, warnings and eventual ``RuntimeError``.

How the offline guard works (ir_datasets 0.5-0.6): every remote file goes
through ``util.download.Download.path()`` / ``.stream()``, which return the
cached copy when it exists and otherwise try each mirror.  For the duration of
one import those two methods (and the network mirrors themselves, as a second
line) are wrapped: a missing cached copy raises ``DownloadNeeded`` before any
mirror is tried; ``util.fileio.Cache`` (a file ir_datasets extracts from a
download, e.g. a gunzipped query TSV) adds its own path, which is the one a
user can fill by hand.  The same wrappers record every file ir_datasets
actually reads, so the dataset's metadata carries their SHA-256 (and, where
ir_datasets knows the expected md5 of a cached download, whether it matches:
ir_datasets itself never checks a file it finds in its cache).

IR_DATASETS_HOME is read by ir_datasets when it is first imported; set it
before anything imports ir_datasets (the CLI's ``--home`` does).
"""
from __future__ import annotations

import contextlib
import difflib
import functools
import hashlib
import html
import os
import re
import sys
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterator, NamedTuple

import polars as pl

from trec_bridge.dataset_checks import check_dataset
from trec_bridge.errors import InvalidInput, TrecBridgeError, UsageError
from trec_bridge.model import QRELS_SCHEMA, Dataset, Qrels, Query
from trec_bridge.messages import quote
from . import invisible

DEFAULT_MAX_DOCS = 100_000  # --list-docs refuses a larger corpus (its IDs go on one JSON line)
SOURCE_KEY = "ir_datasets"  # Dataset.metadata[SOURCE_KEY] describes where the data came from


# --------------------------------------------------------------------------- errors


class DownloadNeeded(Exception):
    """Raised inside ir_datasets by the offline guard; turned into InvalidInput by import_irds."""

    def __init__(self, urls: list[str], cache_path: str | None, md5: str | None, local_copies: list[str]):
        super().__init__(urls)
        self.urls = urls
        self.cache_path = cache_path  # where ir_datasets keeps the download (None: a temporary file)
        self.md5 = md5
        self.local_copies = local_copies  # e.g. <home>/downloads/<md5>, checked by ir_datasets' md5
        self.extracted_to: list[str] = []  # Cache paths, outermost first: what ir_datasets reads in the end


class ManualFileNeeded(FileNotFoundError):
    """A file ir_datasets reads from a fixed local path (no URL) is absent."""

    def __init__(self, path: str, instructions: str | None):
        super().__init__(2, "No such file or directory", path)
        self.path = path
        self.instructions = instructions


class LocalCopyRejected(Exception):
    """ir_datasets refused the local copy of a download (``<home>/downloads/<md5>``), e.g. a wrong md5."""

    def __init__(self, path: str, cache_path, reason: Exception):
        super().__init__(path, reason)
        self.path = path
        self.cache_path = str(cache_path) if cache_path else None
        self.reason = reason


def _missing_file_error(dataset_id: str, stage: str, exc: DownloadNeeded, home: str) -> InvalidInput:
    targets = exc.extracted_to + ([exc.cache_path] if exc.cache_path else [])
    expected = targets[0] if targets else (exc.local_copies[0] if exc.local_copies else None)
    what = {"qrels": "judgments (qrels)", "queries": "queries", "docs": "documents"}[stage]
    msg = [f"ir_datasets dataset {quote(dataset_id)} needs a file for its {what} that is not in its cache "
           f"(IR_DATASETS_HOME={home}), and trec-bridge does not download."]
    if expected:
        msg.append(f"ir_datasets expects it at {expected}")
        if exc.extracted_to and exc.cache_path:
            msg[-1] += f" (it extracts it from {exc.cache_path})"
        elif exc.extracted_to:
            msg[-1] += " (it extracts it from the download)"
        msg[-1] += "."
    if exc.urls:
        msg.append(f"Its source: {exc.urls[0]}" + (f" (md5 {exc.md5})" if exc.md5 else "") + ".")
    if exc.local_copies and expected != exc.local_copies[0]:
        msg.append(f"A copy of the download placed at {exc.local_copies[0]} is also accepted (md5-checked).")
    msg.append("Place the file there, or pass --download (API: allow_download=True) to let ir_datasets fetch it.")
    return InvalidInput("E_IRDS_FILE_MISSING", " ".join(msg), file=expected)


def _manual_file_error(dataset_id: str, stage: str, path: str, instructions: str | None) -> InvalidInput:
    msg = (f"ir_datasets dataset {quote(dataset_id)} needs a file for its {stage} that ir_datasets cannot download: "
           f"it must be obtained and placed at {path}")
    if instructions:
        msg += f". ir_datasets says: {' '.join(instructions.split())}"
    return InvalidInput("E_IRDS_FILE_MISSING", msg, file=path)


# --------------------------------------------------------------------------- ir_datasets import

_IMPORTED_HOME: str | None = None  # IR_DATASETS_HOME in force when ir_datasets was imported


def default_home() -> str:
    return os.environ.get("IR_DATASETS_HOME") or str(Path.home() / ".ir_datasets")


def load_ir_datasets(home: str | os.PathLike | None = None):
    """Import ir_datasets, with ``home`` as IR_DATASETS_HOME (which must precede the first import)."""
    global _IMPORTED_HOME
    already = "ir_datasets" in sys.modules
    if home is not None:
        want = str(Path(home).resolve())
        if already:
            have = _IMPORTED_HOME or default_home()
            if str(Path(have).resolve()) != want:
                raise UsageError("E_USAGE", f"ir_datasets was already imported with IR_DATASETS_HOME={have}; it "
                                 f"reads the variable once, so {want} cannot be used in this process (set "
                                 "IR_DATASETS_HOME before anything imports ir_datasets)")
        else:
            os.environ["IR_DATASETS_HOME"] = want
    if not already:
        _IMPORTED_HOME = default_home()
    try:
        import ir_datasets
    except ImportError as exc:  # a hard dependency, but say so rather than trace back
        raise UsageError("E_USAGE", f"ir_datasets is not installed ({exc}); pip install ir-datasets") from None
    if _IMPORTED_HOME is None:
        _IMPORTED_HOME = default_home()
    return ir_datasets


def _load(irds, dataset_id: str):
    try:
        return irds.load(dataset_id)
    except KeyError:
        pass
    known = list(irds.registry)
    close = difflib.get_close_matches(dataset_id, known, n=5, cutoff=0.6)
    # also IDs that extend what was typed, e.g. "msmarco-passage/trec-dl-2019" -> ".../judged"
    close += [k for k in known if k.startswith(dataset_id.rstrip("/") + "/") and k not in close][:5 - len(close)]
    hint = f"; did you mean {', '.join(repr(c) for c in close)}?" if close else \
        "; `ir_datasets list` or https://ir-datasets.com lists the IDs"
    raise UsageError("E_IRDS_UNKNOWN",
                     f"unknown ir_datasets dataset ID {quote(dataset_id)} (ir_datasets {irds.__version__}){hint}") from None


# --------------------------------------------------------------------------- the guard and the recorder


@dataclass
class _SourceFile:
    path: str
    stages: list[str] = field(default_factory=list)
    md5_expected: str | None = None


class _Session:
    """Patches ir_datasets' download layer for one import: blocks downloads, records files read."""

    def __init__(self, irds, allow_download: bool):
        self.irds = irds
        self.allow_download = allow_download
        self.stage = "setup"
        self.files: dict[str, _SourceFile] = {}
        self.dl = None  # ir_datasets.util.download while active (the hooks test its classes)

    def record(self, path, md5: str | None = None) -> None:
        if path is None:
            return
        p = str(path)
        if p == os.devnull:
            return
        entry = self.files.setdefault(p, _SourceFile(p))
        if self.stage not in entry.stages:
            entry.stages.append(self.stage)
        if md5 and entry.md5_expected is None:
            entry.md5_expected = md5

    @contextlib.contextmanager
    def active(self) -> Iterator["_Session"]:
        """Install the hooks (``_hooks``) on ir_datasets' classes, and remove them on exit."""
        from ir_datasets.util import download as dl
        from ir_datasets.util import fileio

        self.dl = dl
        saved: list[tuple[Any, str, Any]] = []
        for owner, name, hook in _hooks(dl, fileio):
            original = owner.__dict__.get(name)
            if original is None:
                continue  # another ir_datasets version: skip that hook rather than fail
            saved.append((owner, name, original))
            setattr(owner, name, functools.partialmethod(hook, self, original))
        env = {"IR_DATASETS_DL_TRIES": "1"} if not self.allow_download else {}
        old_env = {k: os.environ.get(k) for k in env}
        os.environ.update(env)
        try:
            yield self
        finally:
            for owner, name, original in reversed(saved):
                setattr(owner, name, original)
            for k, v in old_env.items():
                if v is None:
                    os.environ.pop(k, None)
                else:
                    os.environ[k] = v


# The hooks: each is installed as ``partialmethod(hook, session, original)``, so it is called as
# ``hook(instance, session, original, *args)`` and calls ``original`` (ir_datasets' own method) itself.

_NETWORK_CLASSES = ("RequestsDownload", "GoogleDriveDownload", "GoogleCloudBucketStream")


def _hooks(dl, fileio) -> list[tuple[type, str, Callable]]:
    """(class, method name, hook) for every ir_datasets method the session replaces, in installation order."""
    hooks = [(dl.Download, "path", _download_path), (dl.Download, "stream", _download_stream),
             (dl.LocalDownload, "path", _local_path), (fileio.Cache, "verify", _cache_verify),
             (fileio.Cache, "stream", _cache_stream), (fileio.Cache, "path", _recorded_path),
             (fileio.RelativePath, "path", _recorded_path)]
    for cls_name in _NETWORK_CLASSES:
        cls = getattr(dl, cls_name, None)
        if cls is not None:
            hooks.append((cls, "stream", _blocked))
            if cls_name == "RequestsDownload":
                hooks.append((cls, "__iter__", _blocked))
    return hooks


def _mirrors_info(dl, download) -> tuple[list[str], list[str], list[str]]:
    """The download's URLs, its local mirrors, and those of them that exist."""
    urls, local, local_existing = [], [], []
    for m in getattr(download, "mirrors", []):
        if isinstance(m, dl.LocalDownload):
            local.append(str(m._path))
            if m._path.exists():
                local_existing.append(str(m._path))
        else:
            urls.append(getattr(m, "url", None) or getattr(m, "uri", None) or repr(m))
    return urls, local, local_existing


def _needed(dl, download) -> DownloadNeeded:
    urls, local, _ = _mirrors_info(dl, download)
    cache = download._cache_path
    return DownloadNeeded(urls, str(cache) if cache else None, download.expected_md5, local)


def _download_path(download, session: _Session, original, force=True):
    """``Download.path``: offline, only a local copy may fill the cache; records the file and its md5."""
    cache = download._cache_path
    cached = download._path is not None or (cache is not None and cache != os.devnull and os.path.exists(cache))
    if force and not cached and not session.allow_download:
        result = _from_local_copy(download, session.dl, original)
    else:
        result = original(download, force)
    if force:
        session.record(result, download.expected_md5 if cache is not None and str(result) == str(cache) else None)
    return result


def _from_local_copy(download, dl, original):
    """The download taken from its local copy only: ir_datasets copies it to its cache, checking the md5."""
    _, _, local_existing = _mirrors_info(dl, download)
    if not local_existing:
        raise _needed(dl, download)
    all_mirrors = download.mirrors
    download.mirrors = [m for m in all_mirrors if isinstance(m, dl.LocalDownload) and m._path.exists()]
    try:
        return original(download, True)
    except Exception as exc:  # noqa: BLE001 - e.g. HashVerificationError
        raise LocalCopyRejected(local_existing[0], download._cache_path, exc) from None
    finally:
        download.mirrors = all_mirrors


@contextlib.contextmanager
def _download_stream(download, session: _Session, original):
    """``Download.stream``: offline, a streamed download is read only from an existing local first mirror."""
    if getattr(download, "_stream", False) and not session.allow_download:
        first = download.mirrors[0] if download.mirrors else None
        if not (isinstance(first, session.dl.LocalDownload) and first._path.exists()):
            raise _needed(session.dl, download)
        session.record(first._path)
    with original(download) as s:
        yield s


def _cache_verify(cache, session: _Session, original):
    """``Cache.verify``: a missing download names the file it would have been extracted to."""
    try:
        return original(cache)
    except DownloadNeeded as exc:
        exc.extracted_to.insert(0, str(cache._path))
        raise


@contextlib.contextmanager
def _cache_stream(cache, session: _Session, original):
    with original(cache) as s:
        session.record(cache._path)
        yield s


def _recorded_path(owner, session: _Session, original, force=True):
    result = original(owner, force)
    if force:
        session.record(result)
    return result


def _local_path(local, session: _Session, original, force=True):
    """``LocalDownload.path``: a file ir_datasets cannot download is absent: say where it must be placed."""
    if force and not local._path.exists():
        raise ManualFileNeeded(str(local._path), local._message)
    result = original(local, force)
    if force:
        session.record(result)
    return result


def _blocked(network, session: _Session, original, *args, **kwargs):
    """A network download: refused unless downloads are allowed."""
    if session.allow_download:
        return original(network, *args, **kwargs)
    url = getattr(network, "url", None) or getattr(network, "uri", None) or repr(network)
    raise DownloadNeeded([url], None, None, [])


# --------------------------------------------------------------------------- progress


class _Progress:
    """``progress``: None = the project's terminal line (trec_bridge.progress: stderr on a terminal, after a
    couple of seconds, TREC_BRIDGE_PROGRESS=0/1 to force); False = nothing; a callable(stage, count, done)."""

    def __init__(self, progress, dataset_id: str):
        if progress is not None and progress is not False and not callable(progress):
            raise UsageError("E_USAGE", "progress must be None (terminal line), False or a callable(stage, count, done)")
        self.callback = progress if callable(progress) else None
        self.terminal = progress is None
        self.dataset_id = dataset_id
        self._line = None

    @contextlib.contextmanager
    def stage(self, stage: str) -> Iterator[None]:
        line = None
        if self.terminal:
            try:
                from trec_bridge.progress import progress as terminal_line
            except ImportError:  # pragma: no cover - the helper ships with trec-bridge
                terminal_line = None
            if terminal_line is not None:
                line = terminal_line(f"ir_datasets {self.dataset_id}: reading {stage}")
        self._line = line
        try:
            with line if line is not None else contextlib.nullcontext():
                yield
        finally:
            self._line = None

    def tick(self, stage: str, n: int) -> None:
        if n & 1023:
            return
        if self._line is not None:
            self._line.detail = f"{n:,} {stage}"
        if self.callback:
            self.callback(stage, n, False)

    def done(self, stage: str, n: int) -> None:
        if self.callback:
            self.callback(stage, n, True)


# --------------------------------------------------------------------------- import


def import_irds(dataset_id: str, *, list_docs: bool = False, progress=None, max_docs: int = DEFAULT_MAX_DOCS,
                threshold: int | None = None, allow_download: bool = False,
                home: str | os.PathLike | None = None) -> Dataset:
    """The queries and judgments of an ir_datasets dataset as a checked ``Dataset``.

    * queries: ID and text (``default_text()``, else ``text``, else the first
      text field) in ir_datasets' order; other fields are not kept (the
      dataset format has no per-query metadata), their names are listed in
      ``metadata["ir_datasets"]["query_fields"]``.
    * judgments: every qrel with its grade and iteration column, in order.
    * grades: scale = grades seen ∪ ``qrels_defs()`` keys, definitions =
      ``qrels_defs()``, threshold ``threshold`` or 1 (ir_datasets 0.6 has no
      per-dataset relevance level; its official measures carry ``rel=`` themselves).
    * official measures: ir_datasets' documented ``official_measures`` (those our
      parser accepts; others are listed in the metadata).
    * corpus open, unless ``list_docs`` (IDs of a corpus of at most ``max_docs``);
      completeness pooled; dataset_id = the ir_datasets ID.
    * metadata: ir_datasets version, the files read with SHA-256 (and md5
      check), query/qrel fields, counts, warnings.

    Offline unless ``allow_download``: a file missing from the cache raises
    InvalidInput (exit 1) naming it and where ir_datasets expects it.
    ``progress``: None = a line on stderr when it is a terminal and a stage
    takes more than a couple of seconds (``trec_bridge.progress``); False =
    none; a callable ``(stage, count, done)`` gets the counts instead.
    ``home``: IR_DATASETS_HOME to import ir_datasets with (only before its
    first import in the process).
    """
    if max_docs < 1:
        raise UsageError("E_USAGE", f"max_docs must be at least 1, not {max_docs}")
    bar = _Progress(progress, dataset_id)
    irds = load_ir_datasets(home)
    ds = _load(irds, dataset_id)
    for what in ("queries", "qrels"):
        if not getattr(ds, f"has_{what}")():
            raise UsageError("E_USAGE", f"ir_datasets dataset {quote(dataset_id)} has no {what}; trec-bridge imports "
                             "datasets with both queries and qrels")
    home_now = str(_IMPORTED_HOME or default_home())
    warnings: list[str] = []
    read = _read_stages(irds, ds, dataset_id, home_now, bar, warnings, allow_download=allow_download,
                        list_docs=list_docs, max_docs=max_docs)
    qrels_frame = read.qrels_frame
    files = _fingerprints(read.files, home_now, warnings)
    counts, documented = _counts(ds, dataset_id, read, warnings)
    docs = _documentation(ds)
    defs = _qrels_defs(ds, warnings)
    thr = 1 if threshold is None else threshold
    scale = _grade_scale(qrels_frame, defs, thr, warnings)
    measures, unparsed = _official_measures(docs.get("official_measures"))
    meta = _metadata(irds, dataset_id, read, files, counts, documented, docs, unparsed, allow_download, warnings)
    dataset = Dataset(
        queries=tuple(read.queries), qrels=Qrels(qrels_frame, source=f"ir_datasets:{dataset_id}"),
        dataset_id=dataset_id, grades=tuple(scale) if scale else None, threshold=thr, grade_definitions=defs,
        completeness="pooled", corpus=read.corpus, query_source="dataset", description=_description(docs),
        official_measures=measures, metadata={SOURCE_KEY: meta},
        trec_iteration=_common_iteration(qrels_frame), source=f"ir_datasets:{dataset_id}",
        unjudged_queries=tuple(read.parent.unjudged),
    )
    check_dataset(dataset)
    return dataset


class _Read(NamedTuple):
    """What the reading stages of one import gave."""

    files: dict[str, _SourceFile]
    qrels_frame: pl.DataFrame
    qrel_fields: list[str]
    queries: list[Query]
    query_fields: list[str]
    text_field: str | None
    parent: "_ParentQueries"
    corpus: tuple[str, ...] | None  # the document IDs, when listed


def _read_stages(irds, ds, dataset_id: str, home_now: str, bar: _Progress, warnings: list[str], *,
                 allow_download: bool, list_docs: bool, max_docs: int) -> _Read:
    """Read qrels, queries, the parent's unjudged queries and (with ``list_docs``) the document IDs, guarded."""
    session = _Session(irds, allow_download)
    with session.active():
        session.stage = "qrels"
        with bar.stage("qrels"):
            qrels_frame, qrel_fields = _guarded(dataset_id, "qrels", home_now, lambda: _read_qrels(ds, bar))
        session.stage = "queries"
        with bar.stage("queries"):
            queries, query_fields, text_field = _guarded(dataset_id, "queries", home_now,
                                                         lambda: _read_queries(ds, bar))
        session.stage = "unjudged_queries"
        with bar.stage("queries of the parent dataset"):
            parent = _parent_unjudged(irds, dataset_id, queries, qrels_frame, bar, warnings)
        corpus = None
        if list_docs:
            session.stage = "docs"
            with bar.stage("documents"):
                corpus = _guarded(dataset_id, "docs", home_now, lambda: _read_doc_ids(ds, dataset_id, max_docs, bar))
    return _Read(session.files, qrels_frame, qrel_fields, queries, query_fields, text_field, parent, corpus)


def _metadata(irds, dataset_id: str, read: _Read, files: list, counts: dict, documented: dict, docs: dict,
              unparsed: list, allow_download: bool, warnings: list[str]) -> dict:
    """The dataset's ``metadata["ir_datasets"]``: where it came from and what the import saw (empty entries left out)."""
    meta = {
        "ir_datasets_version": irds.__version__,
        "dataset_id": dataset_id,
        "files": files,
        "query_fields": read.query_fields,
        "query_text_field": read.text_field,
        "qrel_fields": read.qrel_fields,
        "counts": counts,
        "documented_counts": documented,
        "unjudged_queries_from": read.parent.source,
        "bibtex_ids": docs.get("bibtex_ids"),
        "official_measures_not_supported": unparsed,
        "downloads_allowed": allow_download,
        "warnings": warnings,
    }
    return {k: v for k, v in meta.items() if v not in (None, [], {})}


def _counts(ds, dataset_id: str, read: _Read, warnings: list[str]) -> tuple[dict[str, int], dict]:
    """What was read, counted, and what ir_datasets documents (a difference is a warning)."""
    counts = {"queries": len(read.queries), "qrels": read.qrels_frame.height}
    if read.corpus is not None:
        counts["docs"] = len(read.corpus)
    if read.parent.unjudged:
        counts["unjudged_queries"] = len(read.parent.unjudged)
    documented = _documented_counts(ds)
    for what, n in documented.items():
        if what in counts and counts[what] != n:
            warnings.append(f"ir_datasets documents {n} {what} for {quote(dataset_id)}, but its cached files gave "
                            f"{counts[what]}: a partial or different file may be in the cache")
    return counts, documented


def _grade_scale(qrels_frame: pl.DataFrame, defs: dict, threshold: int, warnings: list[str]) -> list[int]:
    """Grades seen and defined; the threshold joins them when no grade reaches it."""
    seen = set(qrels_frame.get_column("grade").unique().to_list())
    scale = sorted(seen | set(defs))
    if scale and max(scale) < threshold:
        warnings.append(f"no grade reaches the relevance threshold {threshold}; it is added to the grade scale")
        scale.append(threshold)
    return scale


def _guarded(dataset_id: str, stage: str, home: str, read: Callable[[], Any]) -> Any:
    """Run one reading stage; turn ir_datasets' failures into InvalidInput (never a traceback)."""
    try:
        return read()
    except DownloadNeeded as exc:
        raise _missing_file_error(dataset_id, stage, exc, home) from None
    except TrecBridgeError:
        raise
    except LocalCopyRejected as exc:
        raise InvalidInput("E_FILE_UNREADABLE", f"ir_datasets rejected {exc.path}, the local copy of a download for the "
                           f"{stage} of {quote(dataset_id)}: {type(exc.reason).__name__}: {exc.reason}. Replace it with the "
                           "file ir_datasets expects" + (f", or place the file itself at {exc.cache_path}"
                                                         if exc.cache_path else "") + ".", file=exc.path) from None
    except ManualFileNeeded as exc:  # a LocalDownload (manual file, or create_dataset's file) is absent
        raise _manual_file_error(dataset_id, stage, exc.path, exc.instructions) from None
    except ImportError as exc:
        raise UsageError("E_USAGE", f"ir_datasets needs an optional package to read the {stage} of {quote(dataset_id)}: "
                         f"{exc}") from None
    except Exception as exc:  # noqa: BLE001 - ir_datasets' parsers raise RuntimeError/ValueError/...
        raise InvalidInput("E_FILE_UNREADABLE", f"ir_datasets failed to read the {stage} of {quote(dataset_id)}: "
                           f"{type(exc).__name__}: {exc}") from None


@dataclass
class _ParentQueries:
    source: dict | None = None  # {"dataset_id": ..., "queries": n}: where the unjudged queries come from
    unjudged: list[str] = field(default_factory=list)


def _parent_unjudged(irds, dataset_id: str, queries: list[Query], qrels: pl.DataFrame, bar: _Progress,
                     warnings: list[str]) -> _ParentQueries:
    """The queries of the parent dataset with the same judgments that this subset leaves out and nobody judged.

    ``msmarco-passage/trec-dl-2019/judged`` keeps the 43 of the 200 topics of
    ``msmarco-passage/trec-dl-2019`` that have judgments, and every official
    run answers all 200.  ir_datasets' ``parent_id(id, "qrels")`` names the
    most general dataset sharing this one's qrels (the same handler, so the
    same judgments); its queries that the subset leaves out and that no qrel
    mentions are the benchmark's unjudged topics.  A parent with other
    judgments (``dev`` for ``dev/small``) gives none: its other queries are
    judged, so a run answering them is from another split.  The parent is
    extra information: when its queries cannot be read, a warning says so and
    the dataset is imported without it.
    """
    try:
        parent_id = irds.parent_id(dataset_id, "qrels")
    except Exception:  # noqa: BLE001 - ir_datasets < 0.5.5 has no parent_id; a local dataset has no parent
        return _ParentQueries()
    if parent_id == dataset_id:
        return _ParentQueries()
    parent = irds.load(parent_id)
    if not parent.has_queries():
        return _ParentQueries()
    try:
        parent_queries, _, _ = _read_queries(parent, bar)
    except Exception as exc:  # noqa: BLE001 - a missing file, a parser's error: the import goes on without
        reason = {DownloadNeeded: "a file is not in ir_datasets' cache", ManualFileNeeded: "a file is missing"}.get(
            type(exc), f"{type(exc).__name__}: {exc}")
        warnings.append(f"the queries of {parent_id!r} (the parent with the same judgments) could not be read "
                        f"({reason}): no query is declared unjudged, so a run answering its other queries is refused")
        return _ParentQueries()
    own = {q.query_id for q in queries}
    judged = set(qrels.get_column("query_id").unique().to_list())
    unjudged = list(dict.fromkeys(q.query_id for q in parent_queries if q.query_id not in own and q.query_id not in judged))
    documented = _documented_counts(parent).get("queries")
    if documented is not None and documented != len(parent_queries):
        warnings.append(f"ir_datasets documents {documented} queries for {parent_id!r} (the parent with the same "
                        f"judgments), but its cached files gave {len(parent_queries)}: a partial or different file "
                        "may be in the cache, and a run answering the queries it lacks is refused (not unjudged)")
    return _ParentQueries({"dataset_id": parent_id, "queries": len(parent_queries)}, unjudged)


def _read_qrels(ds, bar: _Progress) -> tuple[pl.DataFrame, list[str]]:
    qids: list = []
    docs: list = []
    grades: list = []
    its: list = []
    fields: list[str] = list(getattr(ds.qrels_cls(), "_fields", ()))
    n = 0
    for n, q in enumerate(ds.qrels_iter(), 1):
        qids.append(q.query_id)
        docs.append(q.doc_id)
        grades.append(q.relevance)
        its.append(getattr(q, "iteration", "0"))
        bar.tick("qrels", n)
    bar.done("qrels", n)
    _check_strings(qids, "query ID", qids, docs)
    _check_strings(docs, "document ID", qids, docs)
    its = ["0" if it is None else str(it) for it in its]
    for i, g in enumerate(grades):
        if type(g) is not int:
            try:
                import numpy as np
                if isinstance(g, np.integer):
                    grades[i] = int(g)
                    continue
            except ImportError:  # pragma: no cover
                pass
            raise InvalidInput("E_QRELS_GRADE", f"ir_datasets gives relevance {quote(g)} ({type(g).__name__}); a grade must "
                               "be an integer", query=qids[i], doc=docs[i])
    frame = pl.DataFrame({"query_id": qids, "iteration": its, "doc_id": docs, "grade": grades}, schema=QRELS_SCHEMA)
    from .trec_qrels import check_qrels_duplicates

    check_qrels_duplicates(frame)  # e.g. subtopic qrels judge a pair once per subtopic
    return frame, fields


def _check_strings(values: list, what: str, qids: list, docs: list) -> None:
    if set(map(type, values)) <= {str}:
        invisible.refuse_in(values, f"ir_datasets' {what}", lambda i: {"query": qids[i], "doc": docs[i]})
        return
    i = next(i for i, v in enumerate(values) if type(v) is not str)
    raise InvalidInput("E_JSON_SCHEMA", f"ir_datasets gives a {what} that is not a string: {quote(values[i])}",
                       query=str(qids[i]), doc=str(docs[i]))


def _read_queries(ds, bar: _Progress) -> tuple[list[Query], list[str], str | None]:
    cls = ds.queries_cls()
    fields = [f for f in getattr(cls, "_fields", ()) if f != "query_id"]
    text_of = _text_getter(cls, fields)
    out: list[Query] = []
    text_field = None
    n = 0
    for n, q in enumerate(ds.queries_iter(), 1):
        qid = q.query_id
        if type(qid) is not str:
            raise InvalidInput("E_JSON_SCHEMA", f"ir_datasets gives a query ID that is not a string: {quote(qid)}")
        invisible.refuse_in([qid], "ir_datasets' query ID")
        text = text_of(q)
        if n == 1:
            text_field = _field_name(q, fields, text)
        out.append(Query(qid, text if isinstance(text, str) else (None if text is None else str(text))))
        bar.tick("queries", n)
    bar.done("queries", n)
    return out, ["query_id", *fields], text_field


def _text_getter(cls, fields: list[str]) -> Callable[[Any], Any]:
    """The query text: ``default_text()`` (ir_datasets' own choice), else ``text``, else the first str field."""
    if callable(getattr(cls, "default_text", None)):
        return lambda q: q.default_text()
    if "text" in fields:
        return lambda q: q.text
    hints = getattr(cls, "__annotations__", {})
    first = next((f for f in fields if hints.get(f) is str), fields[0] if fields else None)
    if first is None:
        return lambda q: None
    return lambda q: getattr(q, first, None)


def _field_name(q, fields: list[str], text) -> str | None:
    """Which field the text came from, for the metadata ("title", "text", or "default_text()")."""
    if text is None:
        return None
    for f in fields:
        if getattr(q, f, None) == text:
            return f
    return "default_text()"


def _read_doc_ids(ds, dataset_id: str, max_docs: int, bar: _Progress) -> tuple[str, ...]:
    if not ds.has_docs():
        raise UsageError("E_USAGE", f"ir_datasets dataset {quote(dataset_id)} has no documents to list; drop --list-docs")
    try:
        documented = ds.docs_count()
    except Exception:  # noqa: BLE001 - metadata unavailable for some datasets
        documented = None
    if documented is not None and documented > max_docs:
        raise UsageError("E_USAGE", f"ir_datasets dataset {quote(dataset_id)} has {documented:,} documents, more than the "
                         f"{max_docs:,} --list-docs lists (--max-docs N raises the limit); without --list-docs the "
                         "corpus is open")
    ids: list[str] = []
    for n, d in enumerate(ds.docs_iter(), 1):
        if n > max_docs:
            raise UsageError("E_USAGE", f"ir_datasets dataset {quote(dataset_id)} has more than {max_docs:,} documents "
                             "(--max-docs N raises the limit); without --list-docs the corpus is open")
        ids.append(d.doc_id)
        bar.tick("documents", n)
    bar.done("documents", len(ids))
    return tuple(ids)


def _documentation(ds) -> dict:
    try:
        docs = ds.documentation()
    except Exception:  # noqa: BLE001 - locally created datasets have none
        return {}
    return dict(docs) if isinstance(docs, dict) else {}


def _description(docs: dict) -> str | None:
    text = docs.get("pretty_name") or docs.get("desc")
    if not isinstance(text, str):
        return None
    if docs.get("pretty_name") and isinstance(docs.get("desc"), str):
        text = f"{docs['pretty_name']}: {docs['desc']}"
    text = re.sub(r"</?(?:p|ul|ol|li|br|div|h\d)\b[^>]*>", " ", text)  # block tags separate words
    text = html.unescape(re.sub(r"<[^>]+>", "", text))
    text = re.sub(r"\s+([,.;:])", r"\1", " ".join(text.split()))
    return text or None


def _qrels_defs(ds, warnings: list[str]) -> dict[int, str]:
    try:
        defs = ds.qrels_defs() or {}
    except Exception:  # noqa: BLE001
        return {}
    out: dict[int, str] = {}
    for k, v in defs.items():
        try:
            key = int(k)
        except (TypeError, ValueError):
            warnings.append(f"qrels_defs key {quote(k)} is not an integer grade; not kept")
            continue
        out[key] = " ".join(str(v).split()) or str(key)
    return dict(sorted(out.items()))


def _official_measures(measures) -> tuple[tuple[str, ...], list[str]]:
    from trec_bridge.measures.parse import parse_measure

    if not isinstance(measures, list):
        return (), []
    keep, unparsed, seen = [], [], set()
    for m in measures:
        try:
            parsed = parse_measure(str(m))
        except InvalidInput:
            unparsed.append(str(m))
            continue
        if parsed not in seen:
            seen.add(parsed)
            keep.append(str(m))
    return tuple(keep), unparsed


def _documented_counts(ds) -> dict[str, int]:
    out = {}
    for what in ("queries", "qrels"):
        try:
            n = getattr(ds, f"{what}_count")()
        except Exception:  # noqa: BLE001
            n = None
        if isinstance(n, int):
            out[what] = n
    return out


def _common_iteration(frame: pl.DataFrame) -> str:
    if frame.height == 0:
        return "0"
    counts = Counter(frame.get_column("iteration").to_list())
    return max(counts.items(), key=lambda kv: (kv[1], kv[0] == "0"))[0]


def _fingerprints(files: dict[str, _SourceFile], home: str, warnings: list[str]) -> list[dict]:
    """SHA-256 (and md5 against ir_datasets' expectation) of every regular file read, paths relative to the home."""
    out = []
    home_p = Path(home).resolve()
    for p in sorted(files):
        entry = files[p]
        path = Path(p)
        try:
            rel = path.resolve().relative_to(home_p)
            shown, root = rel.as_posix(), "IR_DATASETS_HOME"
        except ValueError:
            shown, root = str(path), None
        item: dict = {"path": shown}
        if root:
            item["root"] = root
        item["used_for"] = entry.stages
        if path.is_file():
            sha, md5, size = _hash(path)
            item.update({"sha256": sha, "bytes": size})
            if entry.md5_expected:
                item["md5_expected"] = entry.md5_expected
                item["md5_matches"] = md5 == entry.md5_expected
                if md5 != entry.md5_expected:
                    warnings.append(f"{p} differs from the file ir_datasets would download (md5 {md5}, expected "
                                    f"{entry.md5_expected}); ir_datasets does not check files in its cache")
        elif path.is_dir():
            item["kind"] = "directory"
        else:
            continue
        out.append(item)
    return out


def _hash(path: Path) -> tuple[str, str, int]:
    sha, md5, size = hashlib.sha256(), hashlib.md5(), 0
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            sha.update(block)
            md5.update(block)
            size += len(block)
    return sha.hexdigest(), md5.hexdigest(), size
