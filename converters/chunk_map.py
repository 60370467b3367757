"""Read a chunk-to-document map: a JSON object {"chunk": "doc", ...} or two whitespace-separated columns.

The JSON side goes through the strict parser (a chunk listed twice is a
duplicate key, rejected); the text side rejects a repeated chunk the same way.
"""
from __future__ import annotations

import polars as pl

from trec_bridge.errors import InvalidInput
from trec_bridge.files import read_input_bytes
from trec_bridge.model import CHUNK_SCHEMA, ChunkMap

from .strict_json import parse_json


def load_chunk_map(path) -> ChunkMap:
    file = str(path)
    raw = read_input_bytes(path)
    if raw.lstrip(b" \t\r\n")[:1] == b"{":
        doc = parse_json(raw, file)
        pairs = list(doc.items())
        for chunk, target in pairs:
            if not isinstance(target, str) or not target:
                raise InvalidInput("E_JSON_SCHEMA", f"chunk {chunk!r} must map to a document ID string, got {target!r}",
                                   file=file, json_path=f"$.{chunk}")
    else:
        pairs = _text_pairs(raw, file)
    if not pairs:
        raise InvalidInput("E_FILE_EMPTY", "the chunk map lists no chunk", file=file)
    frame = pl.DataFrame(pairs, schema=CHUNK_SCHEMA, orient="row")
    return ChunkMap(frame, source=file)


def _text_pairs(raw: bytes, file: str) -> list[tuple[str, str]]:
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise InvalidInput("E_ENCODING", "the chunk map is not valid UTF-8", file=file) from None
    pairs, seen = [], set()
    for n, line in enumerate(text.splitlines(), 1):
        fields = line.split()
        if not fields:
            continue
        if len(fields) != 2:
            raise InvalidInput("E_TREC_COLUMNS", f"expected 2 columns (chunk, document), found {len(fields)}",
                               file=file, line=n)
        if fields[0] in seen:
            raise InvalidInput("E_CHUNK_MAP_DUPLICATE", "chunk listed twice in the chunk map", file=file, line=n,
                               doc=fields[0])
        seen.add(fields[0])
        pairs.append((fields[0], fields[1]))
    return pairs
