"""Measure names as users type them: canonical names, aliases, any letter case where that is unambiguous.

One table of spellings (``ALIASES``, beside the registered family names) and
one lookup (``resolve``): ``MRR``, ``mrr`` and ``Mrr`` all name RR, because
no other spelling folds to ``mrr``.  A fold shared by two families would need
its exact spelling, and an unknown name gets the closest known spellings
(``suggest``).  Another vocabulary (trec_eval's ``map``, ``P_10``,
``ndcg_cut_10``) is added as data here and one token rewrite in ``parse``;
nothing else reads names.
"""
from __future__ import annotations

import re

from .base import FAMILIES

# ir_measures' aliases (and the common capitalisations), spelling -> family
ALIASES = {"Hit": "Success", "MRR": "RR", "MAP": "AP", "Recall": "R", "NDCG": "nDCG"}


def spellings() -> dict[str, str]:
    """Every exact spelling -> family name (families first, then aliases)."""
    return {**{name: name for name in FAMILIES}, **ALIASES}


def _by_fold() -> dict[str, list[str]]:
    """Case-folded spelling -> the exact spellings that fold to it (families first)."""
    out: dict[str, list[str]] = {}
    for spelling in sorted(spellings(), key=lambda s: (s not in FAMILIES, s)):
        out.setdefault(spelling.casefold(), []).append(spelling)
    return out


def resolve(name: str) -> str | None:
    """The family ``name`` spells, in any letter case unless two families' spellings fold alike; else None."""
    table = spellings()
    if name in table:
        return table[name]
    families = {table[s] for s in _by_fold().get(name.casefold(), [])}
    return families.pop() if len(families) == 1 else None


def suggest(name: str, rest: str = "", n: int = 3) -> list[str]:
    """The closest known spellings of ``name`` (one per family), each followed by ``rest`` (parameters, cutoff).

    A trailing ``_10`` or ``10`` is read as a cutoff, since that is how
    other tools spell one: ``P_10`` -> ``P@10``.
    """
    stem = re.fullmatch(r"(?P<base>[A-Za-z][A-Za-z_]*?)_?(?P<k>[0-9]+)", name)
    if stem and not rest:
        base = resolve(stem["base"])
        if base is not None:
            return [f"{stem['base'] if stem['base'] in spellings() else base}@{stem['k']}"]
        return [f"{s}@{stem['k']}" for s in _close(stem["base"], n, True)] or [s for s in _close(name, n)]
    return [s + rest for s in _close(name, n, "@" in rest)]


def _close(name: str, n: int, with_cutoff: bool = False) -> list[str]:
    """Known spellings near ``name`` in any letter case, nearest first, one per family.

    ``with_cutoff``: only families that take one, since the guess keeps the
    cutoff typed (``Recal@100`` is ``Recall@100``, never ``SetRelP@100``).
    """
    by_fold, table = _by_fold(), spellings()
    out: dict[str, str] = {}
    import difflib  # suggestions for an unknown name: imported only then

    for fold in difflib.get_close_matches(name.casefold(), list(by_fold), n=4 * n, cutoff=0.5):
        spelling = by_fold[fold][0]
        if not with_cutoff or FAMILIES[table[spelling]].takes_cutoff:
            out.setdefault(table[spelling], spelling)
    return list(out.values())[:n]
