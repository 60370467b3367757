"""Parse measure strings in ir_measures' syntax: ``"nDCG@10 RR(rel=2)@10 R@100"`` or ``"nDCG@10,P@10"``.

We do not call ``ir_measures.parse_measure``: it accepts names we do not
compute and its errors are Python exceptions, while a user pasting a string
needs one clear error code per mistake (unknown name, bad parameter, bad k),
and a suggestion for a near miss.  The accepted syntax is a superset of
ir_measures' for the families we support: measures are separated by spaces
and/or commas (a comma inside parentheses belongs to a parameter), names are
read in any letter case where that is unambiguous (``mrr@10``), ``Hit@k``,
``MRR@k`` and ``MAP`` are aliases (names.py), and ``gain=linear|exp`` names
nDCG's gain.  A measure listed twice (``P@10 P@10``, ``RR@10 MRR@10``) is
kept once, and the drop is reported in ``MeasureList.notes``.
"""
from __future__ import annotations

import ast
import re
import warnings

from ..errors import InvalidInput
from ..integers import INT64_MAX, INT64_MIN, in_range, parse_int, range_text
from ..messages import quote
from . import names, trec_names
from .base import FAMILIES, Measure

TOKEN = re.compile(r"^(?P<name>[A-Za-z_][A-Za-z0-9_]*)(?:\((?P<params>.*)\))?(?:@(?P<cutoff>.*))?$", re.S)
OPEN, CLOSE = "({[", ")}]"
TREC_PARAM_PIECE = re.compile(r"[0-9.+=-]+")  # what may follow a comma inside a trec_eval parameter list
SHARED_PARAMS = {"rel", "gain", "gains"}  # Measure fields; every other parameter goes to Measure.extra


class MeasureList(list):
    """Parsed measures in the order given, and what parsing did that the user should hear of.

    A list, so every caller keeps working; ``notes`` says which repeats
    were dropped (the CLI prints them on stderr and in the report).
    """

    def __init__(self, measures=(), notes=()):
        super().__init__(measures)
        self.notes: list[str] = list(notes)


def parse_measures(text: str | list[str]) -> MeasureList:
    """Every measure of a space- or comma-separated list (or a list of such strings), in order, repeats dropped."""
    tokens = _split(text) if isinstance(text, str) else [t for s in text for t in _split(s)]
    if not tokens:
        raise InvalidInput("E_MEASURE_SYNTAX", "no measure given")
    out = MeasureList()
    spelled: dict[Measure, str] = {}
    for tok, m in _read_tokens(tokens, out.notes):
        if m in spelled:
            first = spelled[m]
            if first == tok or str(m) == tok:
                what = "listed twice" + ("" if first == tok else f" (first as {first})")
            else:
                what = f"{m}, already listed" + ("" if first == str(m) else f" as {first}")
            out.notes.append(f"measure {tok} is {what}: the repeat is dropped")
            continue
        spelled[m] = tok
        out.append(m)
    return out


def _read_tokens(tokens: list[str], notes: list[str]):
    """(token, measure) for every measure of every token; a trec_eval name adds a note of what it maps to."""
    for tok in tokens:
        measures = trec_eval_measures(tok)
        if measures is None:
            yield tok, parse_measure(tok)
            continue
        notes.append(f"measure {tok} is trec_eval's name of {' '.join(map(str, measures))}")
        for m in measures:
            yield tok, m


def _split(text: str) -> list[str]:
    """Tokens separated by whitespace or commas outside parentheses and braces.

    A comma that continues a trec_eval parameter list stays in its token: a
    piece of digits, ``.``, ``+``, ``-`` and ``=`` only (``10``, ``.20``,
    ``2=9``, ``-1``) cannot be a measure (a name starts with a letter), so
    after a token without ``@`` or ``(`` it is read as more parameters:
    ``P.5,10`` and ``ndcg_1=3,2=9`` are one token each, as in trec_eval.
    """
    tokens, depth, cur, after_comma = [], 0, [], []
    for ch in text:
        depth += ch in OPEN
        depth -= ch in CLOSE
        if (ch.isspace() or ch == ",") and depth == 0:
            if cur:
                tokens.append("".join(cur))
                after_comma.append(ch == ",")
                cur = []
            elif ch.isspace() and after_comma:
                after_comma[-1] = False  # "P.5, 10": a space after the comma ends the list
        else:
            cur.append(ch)
    if depth != 0:
        raise InvalidInput("E_MEASURE_SYNTAX", f"unbalanced parentheses in {quote(text)}")
    if cur:
        tokens.append("".join(cur))
        after_comma.append(False)
    return _join_parameter_lists(tokens, after_comma)


def _join_parameter_lists(tokens: list[str], after_comma: list[bool]) -> list[str]:
    out: list[str] = []
    joinable = False
    for tok, comma in zip(tokens, after_comma):
        if joinable and TREC_PARAM_PIECE.fullmatch(tok):
            out[-1] += "," + tok
        else:
            out.append(tok)
        last = out[-1]
        joinable = comma and not re.search(r"[@(]", last)
    return out


def trec_eval_measures(token: str) -> list[Measure] | None:
    """The measures a trec_eval name stands for, or None when ``token`` is ours or not trec_eval's.

    Our own spelling wins where a name is both (``map``, ``ndcg``, ``P``:
    the same measures, or ours needs a cutoff where trec_eval would take its
    default list).  Otherwise ``name.params`` and ``name`` read as ``-m``
    does, and a printed name (``P_10``, ``ndcg_cut_10``) as the measure a
    family spells so.  The names come from the families' declarations
    (trec_names.registered), so a family added later is read with no change here.
    """
    match = TOKEN.match(token.strip())
    if match and names.resolve(match["name"]) is not None:
        return None
    declared = trec_names.registered()
    name, dot, text = token.strip().partition(".")
    if name in declared:
        return _declared_measures(declared[name], text if dot else None, token)
    for prefix, named in declared.items():
        if token.startswith(prefix + "_"):
            found = [m for m in _quietly(named, token[len(prefix) + 1:]) if (named.spell(m) or (None, ""))[1] == token]
            if found:
                return found[:1]
    return None


def _declared_measures(named, text: str | None, token: str) -> list[Measure]:
    if text == "":
        raise InvalidInput("E_MEASURE_SYNTAX", f"no parameter after the dot in {quote(token)} (trec_eval: name.params)")
    try:
        return list(named.to_measures(text))
    except ValueError as exc:
        raise InvalidInput("E_MEASURE_PARAM", f"cannot read trec_eval's {quote(token)}: {exc}") from None


def _quietly(named, text: str) -> list[Measure]:
    """The measures of ``name.text``, or none when ``text`` is not a parameter list of that name."""
    try:
        return list(named.to_measures(text))
    except (ValueError, InvalidInput):
        return []


def parse_measure(token: str) -> Measure:
    match = TOKEN.match(token.strip())
    if not match:
        raise InvalidInput("E_MEASURE_SYNTAX", f"cannot parse measure {quote(token)}; expected e.g. nDCG@10 or RR(rel=2)@10")
    name = names.resolve(match["name"])
    if name is None:
        raise _unknown(match["name"], token)
    family = FAMILIES[name]
    if match["cutoff"] is not None and not family.takes_cutoff:
        raise InvalidInput("E_CUTOFF", f"{name} takes no cutoff (in {quote(token)})")
    reader = family.cutoff_reader or _cutoff
    cutoff = reader(match["cutoff"], token) if match["cutoff"] is not None else None
    if cutoff is None and family.needs_cutoff:
        example = "10" if _reads(reader, "10", token) else "0.5"  # IPrec@0.5: a level, not a rank
        raise InvalidInput("E_CUTOFF", f"{name} needs a cutoff, e.g. {name}@{example} (in {quote(token)})")
    params = _params(match["params"], token) if match["params"] is not None else {}
    kwargs: dict = {}
    extra: dict = {}
    for key, value in params.items():
        if key in family.param_aliases:
            target, values = family.param_aliases[key]
            if not isinstance(value, str) or value not in values:  # dcg=[1]: unhashable, was a TypeError
                raise InvalidInput("E_MEASURE_PARAM", f"{key} must be one of {sorted(values)} in {quote(token)}")
            key, value = target, values[value]
        if key in family.refused_params:
            raise InvalidInput("E_MEASURE_PARAM", family.refused_params[key].format(token=quote(token)))
        if key not in family.params:
            known = sorted(family.params | set(family.param_aliases))
            import difflib  # a suggestion for a misspelt parameter: imported only then

            close = difflib.get_close_matches(key, known, n=1, cutoff=0.6)
            hint = f"; did you mean {close[0]}=?" if close else (f"; it takes {', '.join(known)}" if known else "")
            raise InvalidInput("E_MEASURE_PARAM", f"{name} has no parameter {quote(key)} (in {quote(token)}){hint}")
        target = kwargs if key in SHARED_PARAMS else extra
        target[key] = _check_param(family, key, value, token)
    family.check_params({**kwargs, **extra}, token)
    extra = {k: v for k, v in extra.items() if not _is_default(family, k, v)}
    return Measure(family=name, cutoff=cutoff, **kwargs, extra=tuple(sorted(extra.items())))


def _reads(reader, raw: str, token: str) -> bool:
    """Whether a cutoff reader takes ``raw`` (the example a "needs a cutoff" message gives)."""
    try:
        reader(raw, token)
    except InvalidInput:
        return False
    return True


def _is_default(family, key: str, value) -> bool:
    """``value`` is the family's default for ``key`` (same type too: True is not 1)."""
    if key not in family.param_defaults:
        return False
    default = family.param_defaults[key]
    return type(value) is type(default) and value == default


def _unknown(name: str, token: str) -> InvalidInput:
    """An unknown name, answered with the closest known spellings (the token's parameters and cutoff kept)."""
    rest = token.strip()[len(name):]
    guesses = names.suggest(name, rest)
    hint = f"; did you mean {' or '.join(guesses)}?" if guesses else ""
    known = ", ".join(sorted(FAMILIES) + sorted(names.ALIASES))
    return InvalidInput("E_MEASURE_UNKNOWN", f"unknown measure {quote(name)} in {quote(token)}{hint} (known: {known}; "
                        "any letter case)")


def _cutoff(raw: str | None, token: str) -> int | None:
    if raw is None:
        return None
    k = parse_int(raw) if re.fullmatch(r"[0-9]+", raw) else None
    if k is None or k <= 0:
        hint = "; separate measures with spaces or commas" if re.search(r"[@(]", raw) else ""
        raise InvalidInput("E_CUTOFF", f"cutoff {quote(raw)} in {quote(token)} is not a positive integer{hint}")
    if k > INT64_MAX:  # k = 10**12 is fine (no ranking is that long); beyond int64 numpy cannot hold it
        raise InvalidInput("E_CUTOFF", f"cutoff {quote(raw)} in {quote(token)} is above 2**63-1, the largest cutoff supported")
    return k


def _params(raw: str, token: str) -> dict:
    out = {}
    for part in _split_commas(raw):
        if not part.strip():
            continue
        key, sep, value = part.partition("=")
        key = key.strip()
        if not sep or not key.isidentifier():
            raise InvalidInput("E_MEASURE_SYNTAX", f"parameter {quote(part.strip())} is not key=value (in {quote(token)})")
        if key in out:
            raise InvalidInput("E_MEASURE_PARAM", f"parameter {quote(key)} given twice (in {quote(token)})")
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
                raise InvalidInput("E_MEASURE_PARAM", f"cannot read value {quote(value)} of {key} (in {quote(token)})") from None
    return out


def _no_duplicate_keys(value: str, key: str, token: str) -> None:
    """``gains={1:1,1:2}`` would silently keep the last gain (literal_eval builds a dict): refuse it."""
    if "{" not in value:
        return
    tree = ast.parse(value, mode="eval")  # SyntaxError is handled by the caller
    for node in ast.walk(tree):
        if isinstance(node, ast.Dict) and None not in node.keys:  # None: a {**x} unpacking, refused by literal_eval
            if len(ast.literal_eval(node)) != len(node.keys):  # 1 and True are the same key too
                raise InvalidInput("E_MEASURE_PARAM", f"the same key appears twice in {key}={quote(value)} (in {quote(token)})")


def _split_commas(raw: str) -> list[str]:
    parts, depth, cur = [], 0, []
    for ch in raw:
        depth += ch in OPEN
        depth -= ch in CLOSE
        if ch == "," and depth == 0:
            parts.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
    parts.append("".join(cur))
    return parts


def _check_param(family, key: str, value, token: str):
    """The parameter's value as the measure keeps it: the family's own reader, else the shared ``rel`` rule."""
    if key in family.param_readers:
        return family.param_readers[key](value, token)
    if key == "rel":
        if not in_range(value, INT64_MIN, INT64_MAX):
            raise InvalidInput("E_MEASURE_PARAM", f"rel must be {range_text(INT64_MIN, INT64_MAX)}, got {quote(value)} "
                               f"(in {quote(token)})")
        return value
    raise InvalidInput("E_MEASURE_PARAM", f"unknown parameter {quote(key)} (in {quote(token)})")
