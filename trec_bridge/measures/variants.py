"""Named variants of the standard measures: the conventions home-grown evaluation code gets wrong.

``trec-bridge explain`` and ``tb.testing.check_metric`` search these to say
which convention someone's numbers follow (docs/explain.md).  Each variant is
a measure parameter with a named value (``R(den=min_k)@10``,
``nDCG(ideal=retrieved)@10``); the default value is the standard definition,
so a measure string without the parameter computes exactly what it always
did.  No reference tool computes a variant: the adapters refuse a measure
that names one (``named_variant``), so it is never compared with a tool's
standard number.

A leaf of ``measures``: the family modules read their variant with
``variant(m, name)``; nothing here depends on a family.
"""
from __future__ import annotations

from dataclasses import dataclass

from ..errors import InvalidInput
from ..messages import quote


@dataclass(frozen=True)
class Variant:
    """One measure parameter that names a convention: its standard value and each value's meaning."""

    param: str
    families: tuple[str, ...]
    title: str
    values: dict[str, str]  # value -> what it computes; the first is the standard definition

    @property
    def standard(self) -> str:
        return next(iter(self.values))


VARIANTS: tuple[Variant, ...] = (
    Variant("den", ("R",), "recall's denominator", {
        "rel": "relevant judged documents (the standard definition, trec_eval, ir_measures)",
        "min_k": "min(relevant, k): a query with more relevant documents than k can still reach 1 "
                 "(the 'R-cap' or 'capped recall' of some RAG and BEIR code)",
        "k": "k itself: recall computed as precision"}),
    Variant("den", ("P",), "precision's denominator", {
        "k": "k, even when the ranking is shorter (the standard definition, trec_eval, ir_measures)",
        "retrieved": "the ranking's length when shorter than k: min(retrieved, k)"}),
    Variant("den", ("AP",), "average precision's denominator", {
        "rel": "every relevant judged document (the standard definition)",
        "retrieved": "the relevant documents retrieved (in the top k for AP@k): unretrieved relevant ones cost nothing"}),
    Variant("ideal", ("nDCG",), "nDCG's ideal ranking", {
        "judged": "every judged document's gain, retrieved or not (the standard definition)",
        "retrieved": "only the retrieved documents' gains, re-sorted (sklearn's ndcg_score on the ranked list)",
        "top_k": "only the gains of the retrieved documents in the top k, re-sorted: a ranking is 'ideal' "
                 "whenever its top k is in gain order"}),
    Variant("discount", ("nDCG",), "DCG's discount", {
        "log2": "1/log2(rank+1) (the standard definition; any log base gives the same nDCG with this offset)",
        "log2_rank": "1/log2(rank) with rank 1 undiscounted (Jarvelin and Kekalainen's DCG with base 2: "
                     "ranks 1 and 2 both get 1)",
        "log2_rank2": "1/log2(rank+2): a 0-based position given the offset meant for a 1-based rank",
        "ln_rank": "1/ln(rank) with ranks below e undiscounted (Jarvelin and Kekalainen with base e)"}),
    Variant("relevant", ("R", "P", "AP", "RR"), "what counts as relevant", {
        "threshold": "a grade at or above the relevance threshold (the standard definition, trec_eval -l)",
        "positive": "any grade above 0: grades below the threshold counted",
        "judged": "any judged document, whatever its grade (0 and negative included)"}),
)


def variants_of(family: str) -> dict[str, Variant]:
    """param -> Variant for one family."""
    return {v.param: v for v in VARIANTS if family in v.families}


def variant(m, param: str) -> str | None:
    """The measure's value of a variant parameter, the standard one when it names none (None: a family without
    that variant, such as GMAP reusing AP's kernel, computes the standard measure)."""
    found = variants_of(m.family).get(param)
    return None if found is None else m.param(param, found.standard)


def named_variant(m) -> str | None:
    """The first non-standard variant ``m`` names, as ``param=value`` (None: the standard measure)."""
    for param, v in variants_of(m.family).items():
        value = m.param(param, v.standard)
        if value != v.standard:
            return f"{param}={value}"
    return None


def readers(family: str) -> dict:
    """The parser's ``param_readers`` for a family's variant parameters."""
    return {param: _reader(v) for param, v in variants_of(family).items()}


def params(family: str) -> frozenset:
    return frozenset(variants_of(family))


def _reader(v: Variant):
    def read(value, token: str) -> str:
        if not isinstance(value, str) or value not in v.values:
            raise InvalidInput("E_MEASURE_PARAM", f"{v.param} ({v.title}) must be one of {', '.join(v.values)}, "
                               f"got {quote(value)} (in {quote(token)})")
        return value
    return read


def relevance_level(m, rel: int) -> int | None:
    """The threshold a binary measure counts relevant at: ``rel``, 1 (``relevant=positive``) or None (any
    judged document, ``relevant=judged``)."""
    chosen = variant(m, "relevant")  # None: a family without the variant (the standard threshold)
    return rel if chosen in (None, "threshold") else (1 if chosen == "positive" else None)
