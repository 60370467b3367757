"""Strict JSON reading shared by the dataset and run loaders.

Python's ``json`` keeps the last of two duplicate keys, reads ``NaN`` and
``Infinity``, turns ``1e400`` into inf, and its ``true`` passes any
``isinstance(x, int)`` check; each of those has let a wrong evaluation number
through somewhere.  Here each is an error with its own code and a location: a line
and column for what breaks the JSON text, a JSON path (``$.judgments.q2``)
for what breaks the document.  After the parse comes the ``format`` /
``version`` check, then the shipped JSON Schema (draft 2020-12).

The schema is validated with ``jsonschema``, which costs ~10-30 µs per node:
too slow for a run of millions of entries.  So the loaders validate a
*lightened* copy of the shipped schema (bulk parts reduced to a type check)
and check those bulk parts themselves with the vectorised helpers below,
which give the same messages; tests hold both paths to the same verdicts.
"""
from __future__ import annotations

import codecs
import copy
import json
import math
import re
from functools import lru_cache
from importlib import resources
from typing import Any, Callable, Iterable

import jsonschema
import numpy as np

from trec_bridge.errors import InvalidInput
from trec_bridge.files import read_input_bytes
from trec_bridge.messages import quote

from . import invisible
from .id_text import ID_BAD_CHARS  # the schemas' $defs/id class (its tests name it here)

MAX_DEPTH = 64  # containers nested in one another; the top-level object is depth 1
INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1
KNOWN_FORMATS = {"trec-bridge.dataset": "dataset", "trec-bridge.run": "run", "trec-bridge.report": "report"}
FORMAT_VERSION = 1

_BAD_ID = re.compile(ID_BAD_CHARS)
_BRACKETS = np.frombuffer(b"[]{}", dtype=np.uint8)
# Only a number with a 3-digit exponent or 19+ digits can overflow float or int64;
# without one anywhere in the text, json.loads keeps its C number parsing.
_DIGITS_TO_0 = bytes(0x30 if 0x30 <= b <= 0x39 else 0x65 if b == 0x45 else b for b in range(256))
_RISKY = (b"0" * 19, b"e000", b"e+000", b"e-000")
_MAYBE_SURROGATE = re.compile(rb"\\u[dD][89a-fA-F]")
_SHORTHAND = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")

Parts = tuple  # JSON path as a tuple of keys (str) and indexes (int)


# ---------------------------------------------------------------- paths, messages


def json_path(parts: Iterable[str | int]) -> str:
    """``("judgments", "q2", "d 1")`` -> ``$.judgments.q2["d 1"]`` (RFC 9535 style)."""
    out = "$"
    for p in parts:
        if isinstance(p, int):
            out += f"[{p}]"
        elif _SHORTHAND.match(p):
            out += f".{p}"
        else:
            out += "[" + json.dumps(p, ensure_ascii=False) + "]"
    return out


def show(value: Any) -> str:
    """A JSON value as a user wrote it, shortened, with its kind."""
    if isinstance(value, bool):
        return f"boolean {'true' if value else 'false'}"
    if value is None:
        return "null"
    if isinstance(value, int):
        return f"integer {value}"
    if isinstance(value, float):
        return f"number {quote(value)}"
    if isinstance(value, str):
        text = json.dumps(value, ensure_ascii=False)
        return f"string {text if len(text) <= 60 else text[:57] + '...'}"
    return "an array" if isinstance(value, list) else "an object"


def schema_error(parts: Parts, message: str, file: str | None) -> InvalidInput:
    return InvalidInput("E_JSON_SCHEMA", message, file=file, json_path=json_path(parts))


def msg_type(expected: str, value: Any) -> str:
    return f"expected {expected}, found {show(value)}"


def msg_bad_id(value: str) -> str:
    if value == "":
        return "an ID must not be empty"
    return f"{show(value)} contains whitespace or a control character; IDs must survive a whitespace-separated TREC file"


def msg_unknown_field(field: str, allowed: Iterable[str]) -> str:
    return f"unknown field {json.dumps(field, ensure_ascii=False)} (allowed: {', '.join(allowed)})"


def msg_missing_field(field: str) -> str:
    return f"missing field {json.dumps(field)}"


def msg_duplicate(value: Any) -> str:
    return f"{show(value)} is listed twice"


# ---------------------------------------------------------------- the strict parse


class _DupDict(dict):
    duplicate: str = ""


class _BadNumber:
    def __init__(self, literal: str, why: str):
        self.literal, self.why = literal, why


class _Hooks:
    """Callbacks for json.loads; they only flag, the walk afterwards finds the path."""

    def __init__(self):
        self.flagged = False

    def object(self, pairs):
        d = dict(pairs)
        if len(d) == len(pairs):
            return d
        self.flagged = True
        seen: set[str] = set()
        out = _DupDict(d)
        for key, _ in pairs:
            if key in seen:
                out.duplicate = key
                break
            seen.add(key)
        return out

    def float(self, literal: str):
        value = float(literal)
        if math.isinf(value):
            self.flagged = True
            return _BadNumber(literal, "overflows to infinity; numbers must be finite")
        return value

    def int(self, literal: str):
        value = int(literal) if len(literal) <= 20 else None  # int() of 4300+ digits raises
        if value is None or not INT64_MIN <= value <= INT64_MAX:
            self.flagged = True
            return _BadNumber(literal, "is outside the 64-bit integer range")
        return value

    def constant(self, literal: str):
        self.flagged = True
        return _BadNumber(literal, "is not a JSON number; numbers must be finite")


def parse_json(raw: bytes, file: str | None = None) -> Any:
    """Parse ``raw`` strictly; every refusal is an InvalidInput with a code and a location."""
    if not raw:
        raise InvalidInput("E_FILE_EMPTY", "the file is empty, expected a JSON document", file=file)
    if raw.startswith(codecs.BOM_UTF8):
        raise InvalidInput("E_BOM", "the file starts with a UTF-8 byte-order mark; save it without one", file=file)
    if not raw.strip(b" \t\r\n"):
        raise InvalidInput("E_FILE_EMPTY", "the file holds only whitespace, expected a JSON document", file=file)
    nul = raw.find(b"\x00")
    if nul >= 0:
        line, col = _line_col(raw, nul)
        raise InvalidInput("E_NUL_BYTE", f"NUL byte at line {line}, column {col} (UTF-16 is not accepted; use UTF-8)", file=file, line=line)
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line, col = _line_col(raw, exc.start)
        raise InvalidInput("E_ENCODING", f"invalid UTF-8 byte 0x{raw[exc.start]:02x} at line {line}, column {col}", file=file, line=line) from None
    _check_depth(raw, file)
    hooks = _Hooks()
    numbers = {"parse_float": hooks.float, "parse_int": hooks.int} if _risky_numbers(raw) else {}
    try:
        doc = json.loads(text, object_pairs_hook=hooks.object, parse_constant=hooks.constant, **numbers)
    except json.JSONDecodeError as exc:
        raise InvalidInput("E_JSON_SYNTAX", f"invalid JSON: {exc.msg} (line {exc.lineno}, column {exc.colno})", file=file, line=exc.lineno) from None
    except RecursionError:  # unreachable after _check_depth; kept so no traceback can escape
        raise InvalidInput("E_JSON_TOO_DEEP", f"nesting deeper than {MAX_DEPTH} levels", file=file) from None
    if hooks.flagged:
        _raise_flagged(doc, file)
    if _MAYBE_SURROGATE.search(raw):
        _check_surrogates(doc, file)
    return doc


def _risky_numbers(raw: bytes) -> bool:
    folded = raw.translate(_DIGITS_TO_0)
    return any(pattern in folded for pattern in _RISKY)


def _line_col(data: bytes | str, offset: int) -> tuple[int, int]:
    nl = b"\n" if isinstance(data, bytes) else "\n"
    line = data.count(nl, 0, offset) + 1
    return line, offset - (data.rfind(nl, 0, offset) + 1) + 1


def _check_depth(raw: bytes, file: str | None) -> None:
    """Refuse deep nesting before json.loads recurses into it.

    Vectorised: a bracket is structural when an even number of unescaped
    quotes precede it; depth is the running sum of +1/-1 over those.
    """
    if raw.count(b"[") + raw.count(b"{") <= MAX_DEPTH:
        return
    arr = np.frombuffer(raw, dtype=np.uint8)
    brackets = np.flatnonzero(np.isin(arr, _BRACKETS))
    quotes = np.flatnonzero(arr == 0x22)
    if quotes.size and b"\\" in raw:
        quotes = quotes[_backslashes_before(arr, quotes) % 2 == 0]
    structural = brackets[np.searchsorted(quotes, brackets) % 2 == 0]
    kinds = arr[structural]
    steps = ((kinds == 0x5B) | (kinds == 0x7B)).astype(np.int8) * 2 - 1
    depth = np.cumsum(steps, dtype=np.int32)
    if depth.size == 0 or int(depth.max()) <= MAX_DEPTH:
        return
    offset = int(structural[int(np.argmax(depth > MAX_DEPTH))])
    line = raw.count(b"\n", 0, offset) + 1
    col = len(raw[raw.rfind(b"\n", 0, offset) + 1:offset].decode("utf-8", "replace")) + 1
    raise InvalidInput("E_JSON_TOO_DEEP", f"nesting deeper than {MAX_DEPTH} levels at line {line}, column {col} (refused "
                       "before a parser's recursion could exhaust the stack)", file=file, line=line)


def _backslashes_before(arr: np.ndarray, positions: np.ndarray) -> np.ndarray:
    """How many backslashes end right before each position (work bounded by the backslashes)."""
    count = np.zeros(positions.size, dtype=np.int64)
    active = np.flatnonzero(positions > 0)
    pos = positions[active] - 1
    while active.size:
        hit = arr[pos] == 0x5C
        active, pos = active[hit], pos[hit]
        count[active] += 1
        keep = pos > 0
        active, pos = active[keep], pos[keep] - 1
    return count


def _walk(value: Any, parts: Parts = ()):
    """Pre-order, document order: (parts, value, is_key) for every value and object key."""
    yield parts, value, False
    if isinstance(value, dict):
        for key, item in value.items():
            yield parts + (key,), key, True
            yield from _walk(item, parts + (key,))
    elif isinstance(value, list):
        for i, item in enumerate(value):
            yield from _walk(item, parts + (i,))


def _raise_flagged(doc: Any, file: str | None) -> None:
    for parts, value, is_key in _walk(doc):
        if isinstance(value, _DupDict):
            key = json.dumps(value.duplicate, ensure_ascii=False)
            raise InvalidInput("E_JSON_DUPLICATE_KEY", f"key {key} appears twice in this object", file=file, json_path=json_path(parts))
        if isinstance(value, _BadNumber) and not is_key:
            lit = value.literal if len(value.literal) <= 40 else value.literal[:37] + "..."
            raise InvalidInput("E_JSON_NUMBER", f"{lit} {value.why}", file=file, json_path=json_path(parts))


def _check_surrogates(doc: Any, file: str | None) -> None:
    for parts, value, is_key in _walk(doc):
        if isinstance(value, str):
            try:
                value.encode("utf-8")
            except UnicodeEncodeError:
                what = "key" if is_key else "string"
                raise InvalidInput("E_ENCODING", f"{what} holds a lone UTF-16 surrogate escape (\\ud800-\\udfff), not a character",
                                   file=file, json_path=json_path(parts)) from None


# ---------------------------------------------------------------- format and version


def msg_missing_format(expected: str, found: tuple[str, Any] | None = None) -> str:
    """What a document without a top-level ``format`` key should hold, with the accepted values."""
    others = " and ".join(f'"{f}"' for f in KNOWN_FORMATS if f != expected)
    msg = (f"no \"format\" field at the top level; expected \"format\": \"{expected}\" (a trec-bridge JSON "
           f"{KNOWN_FORMATS.get(expected, 'document')} starts {{\"format\": \"{expected}\", \"version\": "
           f"{FORMAT_VERSION}, ...}}; {others} name the other kinds of file)")
    if expected == "trec-bridge.run":
        msg += "; ranx's layout {query ID: {document ID: score}} is read too (trec-bridge import ranx-run converts it)"
    elif expected == "trec-bridge.dataset":
        msg += "; ranx's layout {query ID: {document ID: grade}} is read too (trec-bridge import ranx-qrels converts it)"
    if found is not None:
        msg += f", but {json_path((found[0],))} is {show(found[1])}, not a {{document ID: value}} object"
    return msg


def check_format(doc: Any, expected: str, file: str | None) -> None:
    """The document names ``expected`` as its format and version 1."""
    if not isinstance(doc, dict):
        raise InvalidInput("E_JSON_FORMAT", f"expected a JSON object with \"format\": \"{expected}\", found {show(doc)}", file=file, json_path="$")
    if "format" not in doc:
        raise InvalidInput("E_JSON_FORMAT", msg_missing_format(expected), file=file, json_path="$")
    found = doc["format"]
    if found != expected:
        msg = f"found format {show(found)}, expected \"{expected}\""
        if isinstance(found, str) and found in KNOWN_FORMATS:
            msg = f"this is a {KNOWN_FORMATS[found]} (format \"{found}\"), expected a {KNOWN_FORMATS.get(expected, expected)} (format \"{expected}\")"
        raise InvalidInput("E_JSON_FORMAT", msg, file=file, json_path="$.format")
    version = doc.get("version")
    if type(version) is not int or version != FORMAT_VERSION:
        found_v = "no version" if "version" not in doc else f"version {show(version)}"
        raise InvalidInput("E_JSON_FORMAT", f"{expected}: found {found_v}, this trec-bridge reads version {FORMAT_VERSION}", file=file,
                           json_path="$.version" if "version" in doc else "$")


def read_json_file(path) -> Any:
    """Read and strictly parse one JSON file (gzip allowed): the one way every JSON input is read."""
    return parse_json(read_input_bytes(path), str(path))


def read_document(path, expected_format: str) -> Any:
    """Read, strictly parse and format-check one JSON file (gzip allowed)."""
    doc = read_json_file(path)
    check_format(doc, expected_format, str(path))
    return doc


# ---------------------------------------------------------------- schema


def _is_int(_checker, value) -> bool:
    return type(value) is int  # not bool, not 1.0


def _is_number(_checker, value) -> bool:
    return type(value) in (int, float)


_TYPES = jsonschema.Draft202012Validator.TYPE_CHECKER.redefine_many({"integer": _is_int, "number": _is_number})
StrictValidator = jsonschema.validators.extend(jsonschema.Draft202012Validator, type_checker=_TYPES)


@lru_cache(maxsize=None)
def shipped_schema(name: str) -> dict:
    """A schema file shipped in trec_bridge/schemas (never mutate the result)."""
    return json.loads((resources.files("trec_bridge") / "schemas" / name).read_text(encoding="utf-8"))


def lightened(name: str, replacements: dict[str, Any]) -> dict:
    """The shipped schema with the subschemas at these JSON pointers replaced."""
    schema = copy.deepcopy(shipped_schema(name))
    for pointer, sub in replacements.items():
        *head, last = pointer.strip("/").split("/")
        node = schema
        for key in head:
            node = node[key]
        if last not in node:
            raise KeyError(f"{name}: no subschema at {pointer}")
        node[last] = sub
    return schema


def validate(doc: Any, name: str, file: str | None, light: dict[str, Any] | None = None) -> None:
    """Raise E_JSON_SCHEMA for the first error jsonschema finds (in schema-keyword order).

    ``light`` maps JSON pointers of the shipped schema to lighter subschemas;
    the caller then checks those parts itself with the bulk helpers below.
    """
    validator = _validator(name, json.dumps(light or {}, sort_keys=True))
    error = next(iter(validator.iter_errors(doc)), None)
    if error is not None:
        parts, message = describe(error)
        if error.validator == "not" and isinstance(error.instance, str):
            _refuse_invisible(error.instance, parts, file)
        raise schema_error(parts, message, file)


@lru_cache(maxsize=None)
def _validator(name: str, light_json: str) -> Any:
    light = json.loads(light_json)
    return StrictValidator(lightened(name, light) if light else shipped_schema(name), registry=_registry())


REFERABLE = ("run.v1.json",)  # shipped schemas whose $defs another schema refers to by $id


@lru_cache(maxsize=None)
def _registry():
    """The shipped schemas other schemas refer to (run-lines.v1.json uses run.v1.json's IDs and entries)."""
    from referencing import Registry, Resource

    return Registry().with_resources((shipped_schema(n)["$id"], Resource.from_contents(shipped_schema(n)))
                                     for n in REFERABLE)


def describe(error: jsonschema.ValidationError) -> tuple[Parts, str]:
    """A jsonschema error as (path parts, message in the loaders' words)."""
    if error.context:  # anyOf / oneOf: the branch that got furthest says most
        error = jsonschema.exceptions.best_match(error.context)
    parts = tuple(error.absolute_path)
    kind, inst, arg = error.validator, error.instance, error.validator_value
    if "propertyNames" in error.absolute_schema_path:
        parts += (inst,)
    if kind == "additionalProperties":
        allowed = list(error.schema.get("properties", {}))
        extra = next(k for k in inst if k not in allowed)
        return parts, msg_unknown_field(extra, allowed)
    if kind == "required":
        return parts, msg_missing_field(next(k for k in arg if k not in inst))
    if kind == "type":
        names = arg if isinstance(arg, list) else [arg]
        article = {"integer": "an integer", "object": "an object", "array": "an array", "boolean": "true or false"}
        return parts, msg_type(" or ".join(article.get(n, f"a {n}") for n in names), inst)
    if kind == "const":
        return parts, f"must be {json.dumps(arg)}, found {show(inst)}"
    if kind == "enum":
        return parts, f"must be one of {', '.join(json.dumps(a) for a in arg)}; found {show(inst)}"
    if kind in ("minLength", "minItems"):
        is_id = kind == "minLength" and isinstance(error.schema, dict) and "not" in error.schema
        return parts, msg_bad_id("") if is_id else "must not be empty"
    if kind == "not" and arg == {}:  # {"not": {}}: a field forbidden in this context, $comment says why
        return parts, f"this field is not allowed here ({error.schema.get('$comment', 'see the schema')})"
    if kind == "not":
        return parts, msg_bad_id(inst)
    if kind == "uniqueItems":
        seen: set = set()
        for i, item in enumerate(inst):
            key = (type(item).__name__, json.dumps(item, sort_keys=True))  # true and 1 differ here
            if key in seen:
                return parts + (i,), msg_duplicate(item)
            seen.add(key)
    if kind == "pattern" and isinstance(error.schema, dict) and "description" in error.schema:
        return parts, f"{show(inst)} is not {error.schema['description']}"
    if kind == "pattern":  # a dataset's grade definitions' keys
        return parts, f"key {json.dumps(inst, ensure_ascii=False)} is not a grade written as a decimal integer, e.g. \"3\""
    return parts, error.message


# ---------------------------------------------------------------- bulk checks (vectorised)


def check_types(values: list, allowed: tuple[type, ...], expected: str, where: Callable[[int], Parts], file: str | None) -> None:
    """Every value's exact type is in ``allowed`` (so bool never passes for int)."""
    if set(map(type, values)) <= set(allowed):
        return
    i = next(i for i, v in enumerate(values) if type(v) not in allowed)
    raise schema_error(where(i), msg_type(expected, values[i]), file)


def check_ids(values: list, where: Callable[[int], Parts], file: str | None) -> None:
    """Every value is a non-empty string free of whitespace and control characters."""
    check_types(values, (str,), "a string ID", where, file)
    bad = "" in values or _BAD_ID.search("".join(values)) is not None
    if bad:
        i = next(i for i, v in enumerate(values) if v == "" or _BAD_ID.search(v))
        _refuse_invisible(values[i], where(i), file)
        raise schema_error(where(i), msg_bad_id(values[i]), file)


def _refuse_invisible(value: str, parts: Parts, file: str | None) -> None:
    """An ID refused for an invisible character gets that class's own code (as in TREC files)."""
    invisible.refuse_in([value], "the ID", lambda _: {"file": file, "json_path": json_path(parts)})


def check_unique(values: list, where: Callable[[int], Parts], file: str | None) -> None:
    if len(set(values)) == len(values):
        return
    seen: set = set()
    for i, v in enumerate(values):
        if v in seen:
            raise schema_error(where(i), msg_duplicate(v), file)
        seen.add(v)


def id_is_valid(value: Any) -> bool:
    return type(value) is str and value != "" and _BAD_ID.search(value) is None


# ---------------------------------------------------------------- writing


def render(doc: dict, expand: dict[str, int]) -> str:
    """Deterministic text: one top-level field per line, ``expand[field]`` more levels
    broken onto lines, everything deeper compact; UTF-8 as is, trailing newline."""
    try:
        lines = [f"  {_compact(k)}: {_render(v, expand.get(k, 0), 1)}" for k, v in doc.items()]
    except ValueError as exc:  # NaN or infinity in free-form metadata
        raise InvalidInput("E_JSON_NUMBER", f"cannot be written as JSON: {exc}") from None
    except TypeError as exc:  # a value JSON has no notation for (set, bytes, datetime...)
        raise InvalidInput("E_JSON_SCHEMA", f"cannot be written as JSON: {exc}") from None
    return "{\n" + ",\n".join(lines) + "\n}\n"


def encode_checked(text: str, strict: bool, file: str | None) -> bytes:
    """UTF-8 bytes of a rendered document, refused as the loader would refuse them.

    ``strict`` re-parses the bytes with ``parse_json`` (number range, depth,
    surrogates), for documents small enough that the second parse is cheap.
    """
    try:
        data = text.encode("utf-8")
    except UnicodeEncodeError as exc:
        line, col = _line_col(text, exc.start)
        raise InvalidInput("E_ENCODING", f"a lone UTF-16 surrogate at line {line}, column {col} cannot be written as UTF-8", file=file) from None
    if strict:
        parse_json(data, file)
    return data


def _render(value: Any, depth: int, indent: int) -> str:
    if depth <= 0 or not isinstance(value, (dict, list)) or not value:
        return _compact(value)
    pad = "  " * (indent + 1)
    if isinstance(value, dict):
        items = [f"{pad}{_compact(k)}: {_render(v, depth - 1, indent + 1)}" for k, v in value.items()]
        return "{\n" + ",\n".join(items) + "\n" + "  " * indent + "}"
    items = [pad + _render(v, depth - 1, indent + 1) for v in value]
    return "[\n" + ",\n".join(items) + "\n" + "  " * indent + "]"


def _compact(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, allow_nan=False, separators=(", ", ": "))


def sorted_keys(value: Any) -> Any:
    """Free-form metadata with keys sorted at every level, so equal dicts write equal bytes."""
    if isinstance(value, dict):
        return {k: sorted_keys(value[k]) for k in sorted(value)}
    if isinstance(value, list):
        return [sorted_keys(v) for v in value]
    return value
