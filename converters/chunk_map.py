"""Read a chunk-to-document map: a JSON object {"chunk": "doc", ...} or two whitespace-separated columns.

The JSON side goes through the strict parser (a chunk listed twice is a
duplicate key, rejected); the text side rejects a repeated chunk the same way.
"""
from __future__ import annotations

import polars as pl

from trec_bridge.errors import InvalidInput
from trec_bridge.files import read_input_bytes
from trec_bridge.model import CHUNK_SCHEMA, ChunkMap
from trec_bridge.messages import quote

from .strict_json import check_ids, json_path, parse_json
from .text_lines import check_bytes


def load_chunk_map(path) -> ChunkMap:
    file = str(path)
    raw = read_input_bytes(path)
    if raw.lstrip(b" \t\r\n")[:1] == b"{":
        doc = parse_json(raw, file)
        pairs = list(doc.items())
        for chunk, target in pairs:
            if not isinstance(target, str) or not target:
                raise InvalidInput("E_JSON_SCHEMA", f"chunk {quote(chunk)} must map to a document ID string, got {quote(target)}",
                                   file=file, json_path=json_path((chunk,)))
        chunks = [c for c, _ in pairs]
        check_ids(chunks, lambda i: (chunks[i],), file)  # same ID rule as a dataset's chunk_map
        check_ids([t for _, t in pairs], lambda i: (chunks[i],), file)
    else:
        pairs = _text_pairs(raw, file)
    if not pairs:
        raise InvalidInput("E_FILE_EMPTY", "the chunk map lists no chunk", file=file)
    frame = pl.DataFrame(pairs, schema=CHUNK_SCHEMA, orient="row")
    return ChunkMap(frame, source=file)


def _text_pairs(raw: bytes, file: str) -> list[tuple[str, str]]:
    check_bytes(raw, file)  # BOM, NUL, UTF-8, separators the tools disagree on: as in TREC files
    text = raw.decode("utf-8")
    pairs, seen = [], {}
    for n, line in enumerate(text.split("\n"), 1):  # not splitlines(): \x0c or U+2028 would shift line numbers
        fields = line.split()
        if not fields:
            continue
        if len(fields) != 2:
            raise InvalidInput("E_TREC_COLUMNS", f"expected 2 columns (chunk, document), found {len(fields)}",
                               file=file, line=n)
        if fields[0] in seen:
            raise InvalidInput("E_CHUNK_MAP_DUPLICATE", f"chunk {quote(fields[0])} is listed twice in the chunk map (first on "
                               f"line {seen[fields[0]]})", file=file, line=n)
        seen[fields[0]] = n
        pairs.append((fields[0], fields[1]))
    return pairs
