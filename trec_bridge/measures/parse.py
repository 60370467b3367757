"""Parse measure strings in ir_measures' syntax: ``"nDCG@10 RR(rel=2)@10 R@100"``.

We do not call ``ir_measures.parse_measure``: it accepts names we do not
compute and its errors are Python exceptions, while a user pasting a string
needs one clear error code per mistake (unknown name, bad parameter, bad k).
The accepted syntax is a superset of ir_measures' for the families we support
(``Hit@k``, ``MRR@k`` and ``MAP`` are aliases; ``gain=linear`` names a gain).
"""
from __future__ import annotations

import ast
import re
import warnings

from ..errors import InvalidInput
from .base import FAMILIES, Measure

ALIASES = {"Hit": "Success", "MRR": "RR", "MAP": "AP", "Recall": "R", "NDCG": "nDCG", "ndcg": "nDCG"}
TOKEN = re.compile(r"^(?P<name>[A-Za-z_][A-Za-z0-9_]*)(?:\((?P<params>.*)\))?(?:@(?P<cutoff>.*))?$", re.S)
GAINS = {"exp": "exp", "exponential": "exp", "linear": "linear", "lin": "linear"}
DCG_TO_GAIN = {"log2": "linear", "exp-log2": "exp"}
INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1


def parse_measures(text: str | list[str]) -> list[Measure]:
    """Every measure of a whitespace-separated list (or a list of strings), in order."""
    tokens = _split(text) if isinstance(text, str) else [t for s in text for t in _split(s)]
    if not tokens:
        raise InvalidInput("E_MEASURE_SYNTAX", "no measure given")
    out: list[Measure] = []
    for tok in tokens:
        m = parse_measure(tok)
        if m in out:
            raise InvalidInput("E_MEASURE_SYNTAX", f"measure {tok!r} is listed twice")
        out.append(m)
    return out


def _split(text: str) -> list[str]:
    tokens, depth, cur = [], 0, []
    for ch in text:
        if ch in "({":
            depth += 1
        elif ch in ")}":
            depth -= 1
        if ch.isspace() and depth == 0:
            if cur:
                tokens.append("".join(cur))
                cur = []
        else:
            cur.append(ch)
    if depth != 0:
        raise InvalidInput("E_MEASURE_SYNTAX", f"unbalanced parentheses in {text!r}")
    if cur:
        tokens.append("".join(cur))
    return tokens


def parse_measure(token: str) -> Measure:
    match = TOKEN.match(token.strip())
    if not match:
        raise InvalidInput("E_MEASURE_SYNTAX", f"cannot parse measure {token!r}; expected e.g. nDCG@10 or RR(rel=2)@10")
    name = ALIASES.get(match["name"], match["name"])
    family = FAMILIES.get(name)
    if family is None:
        known = ", ".join(sorted(FAMILIES) + sorted(ALIASES))
        raise InvalidInput("E_MEASURE_UNKNOWN", f"unknown measure {match['name']!r} in {token!r}; known: {known}")
    cutoff = _cutoff(match["cutoff"], token)
    if cutoff is None and family.needs_cutoff:
        raise InvalidInput("E_CUTOFF", f"{name} needs a cutoff, e.g. {name}@10 (in {token!r})")
    params = _params(match["params"], token) if match["params"] is not None else {}
    kwargs: dict = {}
    for key, value in params.items():
        if key == "dcg" and name == "nDCG":
            if not isinstance(value, str) or value not in DCG_TO_GAIN:  # dcg=[1]: unhashable, was a TypeError
                raise InvalidInput("E_MEASURE_PARAM", f"dcg must be one of {sorted(DCG_TO_GAIN)} in {token!r}")
            key, value = "gain", DCG_TO_GAIN[value]
        if key == "rel" and name == "nDCG":
            raise InvalidInput("E_MEASURE_PARAM", f"nDCG has no rel parameter (in {token!r}): its gain is the grade "
                               "whatever the relevance threshold, as in trec_eval and ir_measures; to give low "
                               "grades no gain, map them: nDCG(gains={1:0})")
        if key not in family.params:
            raise InvalidInput("E_MEASURE_PARAM", f"{name} has no parameter {key!r} (in {token!r})")
        kwargs[key] = _check_param(key, value, token)
    if "gain" in kwargs and "gains" in kwargs:
        raise InvalidInput("E_MEASURE_PARAM", f"give gain= or gains=, not both (in {token!r})")
    return Measure(family=name, cutoff=cutoff, **kwargs)


def _cutoff(raw: str | None, token: str) -> int | None:
    if raw is None:
        return None
    if not re.fullmatch(r"[0-9]+", raw) or int(raw) <= 0:
        raise InvalidInput("E_CUTOFF", f"cutoff {raw!r} in {token!r} is not a positive integer")
    if int(raw) > INT64_MAX:  # k = 10**12 is fine (no ranking is that long); beyond int64 numpy cannot hold it
        raise InvalidInput("E_CUTOFF", f"cutoff {raw!r} in {token!r} is above 2**63-1, the largest cutoff supported")
    return int(raw)


def _params(raw: str, token: str) -> dict:
    out = {}
    for part in _split_commas(raw):
        if not part.strip():
            continue
        key, sep, value = part.partition("=")
        key = key.strip()
        if not sep or not key.isidentifier():
            raise InvalidInput("E_MEASURE_SYNTAX", f"parameter {part.strip()!r} is not key=value (in {token!r})")
        if key in out:
            raise InvalidInput("E_MEASURE_PARAM", f"parameter {key!r} given twice (in {token!r})")
        value = value.strip()
        try:
            with warnings.catch_warnings():  # "1if" would print "<unknown>:1: SyntaxWarning" on stderr
                warnings.simplefilter("ignore", SyntaxWarning)
                _no_duplicate_keys(value, key, token)
                out[key] = ast.literal_eval(value)
        except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):  # {[1]: 2}: unhashable key
            if re.fullmatch(r"[A-Za-z][A-Za-z0-9_-]*", value):
                out[key] = value  # a bare word, as in gain=linear
            else:
                raise InvalidInput("E_MEASURE_PARAM", f"cannot read value {value!r} of {key} (in {token!r})") from None
    return out


def _no_duplicate_keys(value: str, key: str, token: str) -> None:
    """``gains={1:1,1:2}`` would silently keep the last gain (literal_eval builds a dict): refuse it."""
    if "{" not in value:
        return
    tree = ast.parse(value, mode="eval")  # SyntaxError is handled by the caller
    for node in ast.walk(tree):
        if isinstance(node, ast.Dict) and None not in node.keys:  # None: a {**x} unpacking, refused by literal_eval
            if len(ast.literal_eval(node)) != len(node.keys):  # 1 and True are the same key too
                raise InvalidInput("E_MEASURE_PARAM", f"the same key appears twice in {key}={value} (in {token!r})")


def _split_commas(raw: str) -> list[str]:
    parts, depth, cur = [], 0, []
    for ch in raw:
        depth += ch in "({[" 
        depth -= ch in ")}]"
        if ch == "," and depth == 0:
            parts.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
    parts.append("".join(cur))
    return parts


def _check_param(key: str, value, token: str):
    if key == "rel":
        if type(value) is not int or not INT64_MIN <= value <= INT64_MAX:
            raise InvalidInput("E_MEASURE_PARAM", f"rel must be a 64-bit integer, got {value!r} (in {token!r})")
        return value
    if key == "gain":
        if not isinstance(value, str) or value.lower() not in GAINS:
            raise InvalidInput("E_MEASURE_PARAM", f"gain must be 'exp' or 'linear', got {value!r} (in {token!r})")
        return GAINS[value.lower()]
    if key == "gains":
        if not isinstance(value, dict) or not value:
            raise InvalidInput("E_MEASURE_PARAM", f"gains must be a non-empty {{grade: gain}} map (in {token!r})")
        items = []
        for g, v in value.items():
            if (type(g) is not int or not INT64_MIN <= g <= INT64_MAX or isinstance(v, bool) or not isinstance(v, (int, float))
                    or v != v or abs(v) == float("inf")):
                raise InvalidInput("E_MEASURE_PARAM", f"gains maps integer grades to finite numbers, got {g!r}: {v!r} (in {token!r})")
            items.append((g, float(v)))
        return tuple(sorted(items))
    raise InvalidInput("E_MEASURE_PARAM", f"unknown parameter {key!r} (in {token!r})")
