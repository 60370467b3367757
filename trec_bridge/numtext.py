"""Numbers as people read them, and as JSON consumers that cannot take 500-digit strings want them.

A rational measure's exact mean over many queries is an honest fraction, but
its numerator and denominator can run to hundreds of digits.  Text meant for
a reader (the terminal tables, the HTML pages) shows the fraction only when
it is short (``SHORT_EXACT`` characters or fewer) and the float otherwise;
the JSON reports keep every exact value unless the user asks for floats only
(``floats_only``, the commands' ``--json-floats``).
"""
from __future__ import annotations

from fractions import Fraction

SHORT_EXACT = 15  # longest exact text shown to a reader: "1234567/8912345" fits, a 60-digit fraction does not
FLOATS_ONLY = "float"  # the report's "numbers" field in float-only mode


def exact_text(f: Fraction | None) -> str | None:
    """An exact value as the reports write it: ``"3"`` or ``"7/10"``; None stays None."""
    if f is None:
        return None
    return str(f.numerator) if f.denominator == 1 else f"{f.numerator}/{f.denominator}"


def readable_exact(exact: str | Fraction | None, value: float | None) -> str:
    """The exact text when it is short, else the float in full (``repr``: shortest round-trip).

    "" when there is no exact value (a measure that is not rational, or a null):
    the float column says the rest.
    """
    text = exact_text(exact) if isinstance(exact, Fraction) else exact
    if text is None:
        return ""
    if len(text) <= SHORT_EXACT:
        return text
    return repr(float(value) if value is not None else float(Fraction(text)))


def floats_only(report):
    """The same report without exact fractions: every ``exact`` / ``*_exact`` text becomes null.

    The keys stay (a reader finds the same shape) and the top level says
    ``"numbers": "float"`` so that nobody takes the nulls for undefined values.
    Generic over the report kind (score, cross-check, comparison, stages).
    """
    out = _strip(report)
    if isinstance(out, dict):
        out["numbers"] = FLOATS_ONLY
    return out


def _is_exact_key(key) -> bool:
    return isinstance(key, str) and (key == "exact" or key.endswith("_exact"))


USER_OBJECTS = ("system",)  # the user's own objects (a run's test conditions): kept as given, whatever their keys


def _strip(node):
    if isinstance(node, dict):
        return {k: (v if k in USER_OBJECTS else _nulled(v) if _is_exact_key(k) else _strip(v)) for k, v in node.items()}
    if isinstance(node, list):
        return [_strip(v) for v in node]
    return node


def _nulled(value):
    """An exact text -> None; a map measure -> exact text -> the same keys with None."""
    if isinstance(value, dict):
        return {k: None for k in value}
    return None if isinstance(value, str) else value


def p_text(p: float | None) -> str:
    """A p-value as every report prints it (terminal, HTML, Markdown, LaTeX): 4 significant digits, n/a."""
    return "n/a" if p is None else f"{p:.4g}"
