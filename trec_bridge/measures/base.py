"""A measure is a value: a family name plus typed parameters, printed in ir_measures' syntax.

Kernels (one module per family) compute per-query values on a ``Ranking``:
columnar arrays grouped by query.  Kernels know nothing of policies: they
compute ``num/den`` (or a float) and the scorer decides what a query with no
relevant document becomes (null or 0).
"""
from __future__ import annotations

import importlib
import math
from collections import abc
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Callable, Mapping

import numpy as np

from .catalog import MODULES
from .rounding import fixed_point_sum, long_sums, settled, settled_ratio
from .variants import relevance_level



@dataclass(frozen=True)
class Measure:
    """``family`` is the canonical name (R, RR, P, Success, AP, nDCG, Judged)."""

    family: str
    cutoff: int | None = None
    rel: int | None = None  # None: the dataset's threshold
    gain: str | None = None  # nDCG: "exp" or "linear"; None: the policy's default (linear in every policy)
    gains: tuple[tuple[int, float], ...] | None = None  # nDCG: explicit grade -> gain map
    # any other family's own parameters, as (name, value) sorted by name (RBP's p, SetF's beta, ...);
    # a new family reads them with ``param`` and needs no new field here
    extra: tuple[tuple[str, object], ...] = ()

    def param(self, name: str, default=None):
        """The value of the family-specific parameter ``name`` (``extra``), or ``default`` when not given."""
        return dict(self.extra).get(name, default)

    def __str__(self) -> str:
        params = []
        if self.rel is not None:
            params.append(f"rel={self.rel}")
        if self.gain is not None:
            params.append(f"gain={self.gain}")
        if self.gains is not None:
            inner = ",".join(f"{g}:{_num(v)}" for g, v in self.gains)
            params.append(f"gains={{{inner}}}")
        params.extend(f"{name}={_param_text(value)}" for name, value in self.extra)
        text = self.family + (f"({','.join(params)})" if params else "")
        return text + (f"@{self.cutoff}" if self.cutoff is not None else "")

    @property
    def rational(self) -> bool:
        return FAMILIES[self.family].rational

    @property
    def integer(self) -> bool:
        """Its values are whole counts (NumRet, ...), printed as integers."""
        return FAMILIES[self.family].integer


def _num(v: float) -> str:
    return str(int(v)) if float(v).is_integer() else repr(float(v))


def _param_text(value) -> str:
    """A parameter value as the measure string spells it: numbers shortest, words bare, maps in braces."""
    if isinstance(value, bool) or value is None:
        return str(value)
    if isinstance(value, (int, float)):
        return _num(value) if isinstance(value, float) else str(value)
    if isinstance(value, tuple) and all(isinstance(p, tuple) and len(p) == 2 for p in value):
        return "{" + ",".join(f"{_param_text(k)}:{_param_text(v)}" for k, v in value) + "}"
    if isinstance(value, tuple) and all(isinstance(p, float) for p in value):  # a list of numbers (AvgIPrec's levels)
        return "[" + ",".join(_num(p) for p in value) + "]"
    return str(value)


@dataclass
class Ranking:
    """One policy's view of a run joined with the judgments, grouped by query.

    Only the *judged* ranked rows are kept: an unjudged document adds nothing
    to any measure except the length of its ranking, which ``retrieved``
    holds.  So a 7M-row run becomes a few thousand rows here.  Rows are
    grouped by query index and in rank order inside a query; ``rank`` is the
    1-based position in the whole ranking (judged or not).  ``qrels_*``
    describe all judgments of the scored queries (recall denominators, the
    nDCG ideal).
    """

    n_queries: int
    retrieved: np.ndarray  # int64 per query: ranked documents, judged or not
    row_query: np.ndarray  # int64 per judged row
    rank: np.ndarray  # int64 per judged row, 1-based position in the full ranking
    grade: np.ndarray  # int64 per judged row
    qrels_query: np.ndarray  # int64 per judgment
    qrels_grade: np.ndarray  # int64 per judgment
    # A diversity qrels only (subtopics.py): per judged row and per judgment (one per judged document, its
    # highest grade above), the pair index into ``subtopics``, which holds every pair's subtopic judgments.
    # None for an ordinary qrels, so the other measures' path builds and carries nothing more.
    row_pair: np.ndarray | None = None
    qrels_pair: np.ndarray | None = None
    subtopics: object = None  # subtopics.SubtopicTable
    # what depends on the judgments alone (``judged``), shared by the rankings of one index's judgments:
    # every run an ``Evaluator`` scores, and each policy's ranking of one run
    memo: dict = field(default_factory=dict, repr=False, compare=False)

    def judged(self, key: tuple, compute: Callable[[], np.ndarray]) -> np.ndarray:
        """``compute()``, a function of ``qrels_query`` and ``qrels_grade`` alone, memoised under ``key`` and read-only.

        The memo is only trusted while it belongs to these very arrays: a ranking made with
        ``dataclasses.replace`` and other judgments (``every_judgment_relevant``) computes afresh.
        """
        owner = self.memo.setdefault("judgments", (self.qrels_query, self.qrels_grade))
        if owner[0] is not self.qrels_query or owner[1] is not self.qrels_grade:
            return compute()
        if key not in self.memo:
            value = compute()
            value.flags.writeable = False  # shared: a caller changing it in place would change every later run
            self.memo[key] = value
        return self.memo[key]

    def lengths(self) -> np.ndarray:
        return self.retrieved

    def restricted(self, depth: int | None = None, judged_only: bool = False) -> "Ranking":
        """The ranking as trec_eval's -M and -J see it (form_res_rels.c, 9.0.4), in that order.

        ``depth``: each ranking cut to its first ``depth`` documents.
        ``judged_only``: documents without a judgment of grade >= 0 are
        removed and the others ranked 1, 2, ... in their order, so the
        ranking's length is its number of such documents.  The judgments
        (recall denominators, the nDCG ideal) are untouched.
        """
        if depth is None and not judged_only:
            return self
        row_query, rank, grade, retrieved, pair = self.row_query, self.rank, self.grade, self.retrieved, self.row_pair
        if depth is not None:
            keep = rank <= depth
            row_query, rank, grade = row_query[keep], rank[keep], grade[keep]
            pair = None if pair is None else pair[keep]
            retrieved = np.minimum(retrieved, depth)
        if judged_only:
            keep = grade >= 0
            row_query, grade = row_query[keep], grade[keep]
            pair = None if pair is None else pair[keep]
            retrieved = np.bincount(row_query, minlength=self.n_queries).astype(np.int64)
            starts = np.flatnonzero(np.r_[True, row_query[1:] != row_query[:-1]]) if len(row_query) else row_query
            rank = np.arange(1, len(row_query) + 1, dtype=np.int64)
            if len(row_query):
                rank -= np.repeat(starts, np.diff(np.append(starts, len(row_query))))
        return Ranking(self.n_queries, retrieved, row_query, rank, grade, self.qrels_query, self.qrels_grade, pair,
                       self.qrels_pair, self.subtopics, self.memo)

    def in_cut(self, cutoff: int | None) -> np.ndarray:
        """Ranked documents per query within the top ``cutoff`` (all when None)."""
        return self.retrieved if cutoff is None else np.minimum(self.retrieved, cutoff)

    def per_query_count(self, row_mask: np.ndarray) -> np.ndarray:
        return np.bincount(self.row_query[row_mask], minlength=self.n_queries).astype(np.int64)

    def relevant_count(self, rel: int | None) -> np.ndarray:
        """Relevant judged documents per query (grade >= rel, never a negative grade; None: every judged one);
        read-only, computed once per judgments (``judged``)."""
        return self.judged(("relevant", rel), lambda: self._relevant_count(rel))

    def _relevant_count(self, rel: int | None) -> np.ndarray:
        if rel is None:
            return np.bincount(self.qrels_query, minlength=self.n_queries).astype(np.int64)
        mask = (self.qrels_grade >= rel) & (self.qrels_grade >= 0)
        return np.bincount(self.qrels_query[mask], minlength=self.n_queries).astype(np.int64)

    def hits(self, rel: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(query, k, rank) of each relevant ranked row: the k-th relevant document of ``query`` is at ``rank``."""
        rows = np.flatnonzero(self.relevant_rows(rel, None))
        query = self.row_query[rows]
        k = np.arange(1, len(rows) + 1) - np.searchsorted(query, query, side="left")
        return query, k.astype(np.int64), self.rank[rows]

    def relevant_in_top(self, rel: int, n: np.ndarray) -> np.ndarray:
        """Relevant documents per query within the top ``n[q]`` of query q (a per-query cutoff such as R)."""
        mask = self.relevant_rows(rel, None) & (self.rank <= n[self.row_query])
        return self.per_query_count(mask)

    def relevant_rows(self, rel: int | None, cutoff: int | None) -> np.ndarray:
        """Judged rows in the top ``cutoff`` that are relevant at ``rel`` (None: every judged row)."""
        mask = np.ones(len(self.grade), dtype=bool) if rel is None else (self.grade >= rel) & (self.grade >= 0)
        if cutoff is not None:
            mask &= self.rank <= cutoff
        return mask


@dataclass(frozen=True)
class Terms:
    """A rational measure's exact values: value of query q = sum of num/den over q's terms.

    One term per query for num/den families, one per relevant row for AP.
    Kept as integer arrays so that exact means are sums grouped by
    denominator (a few big-integer operations), never a Fraction per query.
    """

    query: np.ndarray  # int64, ascending
    num: np.ndarray  # int64
    den: np.ndarray  # int64, > 0

    def bounds(self, n_queries: int) -> np.ndarray:
        return np.searchsorted(self.query, np.arange(n_queries + 1))

    def total(self, queries: np.ndarray) -> Fraction:
        """Exact sum of the values of ``queries`` (a boolean mask over all queries)."""
        keep = queries[self.query]
        num, den = self.num[keep], self.den[keep]
        if len(den) == 0:
            return Fraction(0)
        order = np.argsort(den, kind="stable")
        den, num = den[order], num[order]
        starts = np.flatnonzero(np.r_[True, den[1:] != den[:-1]])
        sums = np.add.reduceat(num, starts).tolist()
        dens = den[starts].tolist()
        common = math.lcm(*dens)
        return Fraction(sum(s * (common // d) for s, d in zip(sums, dens)), common)


@dataclass
class Values:
    """Per-query results of one measure, before the policy's null/zero rule.

    Rational families also give ``terms`` (their exact values); ``value`` may
    then be a float approximation, and ``rounded`` gives each exact value
    correctly rounded, which is what reports show.
    """

    value: np.ndarray  # float64 per query
    terms: Terms | None = None
    # True: ``value`` holds log(max(v, GMEAN_FLOOR)) per query, as trec_eval's C code keeps a gm_* measure;
    # the geometric-mean summary is then exp of their mean (``geometric``)
    logged: bool = False
    _bounds: np.ndarray | None = field(default=None, repr=False)
    _long: dict = field(default_factory=dict, repr=False, compare=False)  # ``_long_sums``, by compensated

    @staticmethod
    def of_ratio(num: np.ndarray, den: np.ndarray) -> "Values":
        """num/den per query (0 where den is 0): one term per query with a non-zero numerator."""
        num, den = np.asarray(num, dtype=np.int64), np.asarray(den, dtype=np.int64)
        q = np.flatnonzero((den != 0) & (num != 0))
        return Values(ratio(num, den), Terms(q.astype(np.int64), num[q], den[q]))

    def zeroed(self, queries: np.ndarray) -> "Values":
        """The same values with ``queries`` (a boolean mask) set to 0 (ir_measures' rule for a missing query)."""
        value = np.where(queries, 0.0, self.value)
        if self.terms is None:
            return Values(value, logged=self.logged)
        keep = ~queries[self.terms.query]
        t = self.terms
        return Values(value, Terms(t.query[keep], t.num[keep], t.den[keep]), logged=self.logged)

    def _query_bounds(self) -> np.ndarray:
        if self._bounds is None:
            self._bounds = self.terms.bounds(len(self.value))
        return self._bounds

    def fraction(self, i: int) -> Fraction | None:
        if self.terms is None:
            return None
        b = self._query_bounds()
        at = slice(b[i], b[i + 1])
        return Fraction(*exact_sum(self.terms.num[at].tolist(), self.terms.den[at].tolist()))

    def fraction_texts(self, counted: np.ndarray) -> list[str | None]:
        """Each ``counted`` query's ``fraction`` as the reports write it ("3", "7/10"; None elsewhere), for
        every query at once: a query of one term (num/den families) reduced by a vectorised gcd, one without
        terms "0", one of several (AP) through ``fraction``; no Fraction per query for the first two."""
        n = len(self.value)
        if self.terms is None:
            return [None] * n
        t = self.terms
        counts = np.diff(self._query_bounds())
        one = (counts[t.query] == 1) & (t.den > 0) & (t.num > np.iinfo(np.int64).min)  # what the gcd reduces
        num, den, at = _distinct_pairs(t.num[one], t.den[one])  # each distinct fraction written once (P@10: 11)
        g = np.gcd(num, den)
        texts = np.array([f"{a}/{b}" if b != 1 else str(a) for a, b in zip((num // g).tolist(), (den // g).tolist())],
                         dtype=object)
        out = np.full(n, "0", dtype=object)
        out[t.query[one]] = texts[at]
        for i in np.unique(t.query[~one]).tolist():
            f = self.fraction(i)
            out[i] = str(f.numerator) if f.denominator == 1 else f"{f.numerator}/{f.denominator}"
        out[~counted] = None
        return out.tolist()

    def _long_sums(self, compensated: bool = False) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(queries with terms, their long-double sums, error bounds): ``rounding.long_sums``, computed once; the
        compensated ones whenever they are made already (they are the tighter)."""
        compensated = compensated or True in self._long
        if compensated not in self._long:
            b = self._query_bounds()
            queries = np.flatnonzero(np.diff(b) > 0)
            self._long[compensated] = (queries, *long_sums(self.terms.num, self.terms.den, b[queries], compensated))
        return self._long[compensated]

    def _compensated_sums_of(self, queries: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``rounding.long_sums`` compensated, of these queries' terms only (those a plain sum left unsettled)."""
        b = self._query_bounds()
        lengths = b[queries + 1] - b[queries]
        starts = np.cumsum(lengths) - lengths
        rows = np.repeat(b[queries] - starts, lengths) + np.arange(int(lengths.sum()))
        return long_sums(self.terms.num[rows], self.terms.den[rows], starts)

    @staticmethod
    def of_counts(n: np.ndarray) -> "Values":
        """Whole counts per query (num_ret, num_rel, ...): n / 1, exact."""
        return Values.of_ratio(n, np.ones(len(n), dtype=np.int64))

    def rounded(self) -> np.ndarray:
        """Each query's exact value correctly rounded to float64 (``value`` for non-rational measures).

        A single term num/den is one IEEE division of exactly representable
        integers, hence already correctly rounded; a sum of several is proved
        in long double where it can be (``rounding.settled``), otherwise in
        256-bit fixed point (``rounding.fixed_point_sum``), and otherwise
        summed exactly in integers.
        """
        if self.terms is None:
            return self.value
        t = self.terms
        out = np.zeros(len(self.value), dtype=np.float64)
        counts = np.diff(self._query_bounds())
        single = counts[t.query] == 1
        out[t.query[single]] = t.num[single] / t.den[single]
        queries, sums, bounds = self._long_sums()
        several = counts[queries] > 1
        nearest, ok = settled(sums[several], bounds[several])
        out[queries[several][ok]] = nearest[ok]
        left = queries[several][~ok]
        if len(left) and True not in self._long:  # added one after the other: one in ten left; pairwise, then
            nearest, ok = settled(*self._compensated_sums_of(left))
            out[left[ok]] = nearest[ok]
            left = left[~ok]
        b = self._query_bounds()
        for i in left.tolist():  # about one sum in 200: in 256-bit fixed point, else exactly
            nums, dens = t.num[b[i]:b[i + 1]].tolist(), t.den[b[i]:b[i + 1]].tolist()
            value = fixed_point_sum(nums, dens)
            if value is None:
                num, den = exact_sum(nums, dens)
                value = num / den  # Python's int division is correctly rounded, as float(Fraction) is
            out[i] = value
        return out

    def rounded_mean(self, counted: np.ndarray, divisor: int) -> float:
        """float(exact sum of the ``counted`` queries' values / ``divisor``), proved in long double where it
        can be (``rounding.settled_ratio``: from plain sums, else from compensated ones), else from the exact
        total, which a few terms (a small run: ``EXACT_TERMS``) go to at once: the same double (both are
        float(Fraction), correctly rounded), for less than the proof's own Fractions cost."""
        if len(self.terms.den) <= EXACT_TERMS:
            return float(self.terms.total(counted) / divisor)
        for compensated in (False, True):
            queries, sums, bounds = self._long_sums(compensated)
            keep = counted[queries]
            value = settled_ratio(sums[keep], bounds[keep], divisor)
            if value is not None:
                return value
        return float(self.terms.total(counted) / divisor)


def _distinct_pairs(num: np.ndarray, den: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The distinct (num, den) pairs and, per input pair, the index of its own among them (a lexsort: numpy's
    unique over rows sorts a void view, seconds for a million)."""
    order = np.lexsort((den, num))
    sn, sd = num[order], den[order]
    first = np.r_[True, (sn[1:] != sn[:-1]) | (sd[1:] != sd[:-1])] if len(sn) else np.zeros(0, dtype=bool)
    at = np.empty(len(order), dtype=np.int64)
    at[order] = np.cumsum(first) - 1
    return sn[first], sd[first], at


EXACT_TERMS = 64  # a measure with this many exact terms or fewer takes its mean from the exact total


def exact_sum(nums: list[int], dens: list[int]) -> tuple[int, int]:
    """sum(num/den) as one (numerator, denominator) over the denominators' lcm: integer work, no Fraction per term.

    Several times faster than adding Fractions (each addition reduces by a
    gcd); the value is the same rational, not necessarily in lowest terms.
    """
    common = math.lcm(*dens)
    return sum(n * (common // d) for n, d in zip(nums, dens)), common


def everywhere(r: Ranking, m, ctx) -> np.ndarray:
    """A count (num_ret, num_rel, ...) has a value on every query, relevant documents or not (policy §2)."""
    return np.ones(r.n_queries, dtype=bool)


GMEAN_FLOOR = 1e-5  # trec_eval's MIN_GEO_MEAN: a zero value would make the geometric mean 0


def geometric(values: Values, ctx) -> Values:
    """A geometric-mean family's per-query values under ``ctx``: its own values (strict), or, when the policy
    says ``gm_per_query="log"``, log(max(value, 1e-5)) per query as trec_eval's m_gm_map.c / m_gm_bpref.c
    store them (pytrec_eval returns those)."""
    if not ctx.gm_log:
        return values
    # the log of the value the policy's arithmetic gives (Policy.arithmetic): the exact value correctly rounded,
    # or the kernel's double formed in trec_eval's order, as the C code forms the AP it takes the log of (another
    # double in about four queries of ten: tests/test_float_arithmetic.py)
    value = values.value if ctx.float_values else values.rounded()
    return Values(np.log(np.maximum(value, GMEAN_FLOOR)), logged=True)


def geometric_context(m: "Measure", rel: int, policy) -> "MeasureContext":
    """The threshold, and whether the policy keeps a gm_* measure's per-query value as its log (trec_eval)."""
    return MeasureContext(rel=rel, gm_log=policy.gm_per_query == "log", float_values=policy.arithmetic == "float")


def has_relevant(r: Ranking, m, ctx) -> np.ndarray:
    """The binary measures are defined on a query with a relevant judged document at the threshold (policy §2)."""
    return r.relevant_count(ctx.rel) > 0


def plain_context(m: "Measure", rel: int, policy) -> "MeasureContext":
    """A binary measure needs only its threshold."""
    return MeasureContext(rel=rel)


def variant_context(m: "Measure", rel: int, policy) -> "MeasureContext":
    """A binary measure's threshold, as its ``relevant=`` variant says (variants.py; the threshold by default)."""
    return MeasureContext(rel=relevance_level(m, rel))


def as_given(m: "Measure", policy) -> "Measure":
    """The measure a policy computes for ``m``: ``m`` itself, unless the family says otherwise."""
    return m


@dataclass(frozen=True)
class Family:
    """Everything the rest of the program asks about a measure family; one module per family registers one.

    The scorer calls ``effective``, ``context``, ``kernel`` and ``defined``;
    the parser reads ``params``, ``param_aliases``, ``refused_params``,
    ``param_readers`` and ``check_params``; each
    reference adapter reads its own entry of ``tool_names`` (the family's name
    in that tool's vocabulary; a family without an entry is "not compared").
    """

    name: str
    kernel: Callable  # (Ranking, Measure, MeasureContext) -> Values
    rational: bool
    needs_cutoff: bool
    params: frozenset = field(default_factory=frozenset)  # allowed parameter names
    description: str = ""
    # (Ranking, Measure, MeasureContext) -> bool per query: where the measure has a value; the policy
    # decides what the other queries become (null or 0)
    defined: Callable = has_relevant
    # (Measure, rel, Policy) -> MeasureContext: what the kernel computes with under a policy
    context: Callable = plain_context
    # (Measure, Policy) -> Measure: what a policy computes for the measure (trec_eval's RR ignores the cutoff)
    effective: Callable = as_given
    # tool name -> the family's name in that tool's vocabulary, in the form that tool's adapter reads
    tool_names: Mapping[str, object] = field(default_factory=dict)
    # parameter spelling -> (name, {value -> value}) it stands for (nDCG: dcg=log2 is gain=linear)
    param_aliases: Mapping[str, tuple[str, Mapping[str, str]]] = field(default_factory=dict)
    # parameter -> why the family refuses it (nDCG has no rel)
    refused_params: Mapping[str, str] = field(default_factory=dict)
    # parameter -> (value, token) -> the value the Measure keeps, raising InvalidInput when bad (rel: shared rule)
    param_readers: Mapping[str, Callable] = field(default_factory=dict)
    # (parameters read, token) -> None: a rule across parameters (nDCG: gain= or gains=, not both)
    check_params: Callable = lambda params, token: None
    # parameter -> its default: a parameter given at its default is dropped, so RBP(p=0.8) is RBP (as in ir_measures)
    param_defaults: Mapping[str, object] = field(default_factory=dict)
    # False: the family refuses a cutoff (NumQ@10 means nothing); needs_cutoff: it requires one
    takes_cutoff: bool = True
    # (text after @, token) -> the cutoff the Measure keeps, raising InvalidInput when bad; None: a positive
    # integer (IPrec@0.5 reads a recall level in [0, 1])
    cutoff_reader: Callable | None = None
    # how per-query values become the summary: "mean" (arithmetic, over the counted queries), "sum" (trec_eval's
    # num_* counts) or "gmean" (gm_map, gm_bpref: exp of the mean log of max(value, 1e-5), as trec_eval)
    aggregate: str = "mean"
    # True: every value is a whole count (num_ret, ...): reports print it as an integer
    integer: bool = False
    # True: a diversity measure, which reads per-subtopic judgments (Ranking.subtopics) and needs a diversity qrels
    subtopics: bool = False
    # True: a query's values (and terms) are the same bits whatever other queries the Ranking holds, so parts of a
    # run scored apart merge exactly (part_scores.py); False: the kernel sums floats across queries (a running
    # cumulative sum), and a part's values differ in the last bits, so its rows are merged, not its values
    query_local: bool = True

    def native(self, tool: str):
        """The family's name in ``tool``'s vocabulary, or None when the tool does not compute it."""
        return self.tool_names.get(tool)


@dataclass(frozen=True)
class MeasureContext:
    """What one measure is computed with: the threshold of a binary measure, nDCG's gain and grade floor."""

    rel: int | None  # None: every judged document counts as relevant (the relevant=judged variant)
    gain: Callable[[np.ndarray], np.ndarray] | None = None
    ideal_floor: int = 1  # grades below this never enter the nDCG ideal or DCG
    gain_key: tuple | None = None  # what ``gain`` is (its measure's gains= / gain= or the policy's): memo keys
    gm_log: bool = False  # a gm_* family gives log(max(value, 1e-5)) per query (``geometric``)
    float_values: bool = False  # the policy's arithmetic is "float": ``geometric`` takes the log of the kernel's double


class FamilyRegistry(abc.Mapping):
    """Family name -> ``Family``.  The package's families (``catalog.MODULES``) are known by name before their
    modules are imported: asking for one imports its module, which registers it; iterating lists every known
    family (in the catalog's order, then any registered from outside the package) without importing, and
    reading the values imports them all.  A family registered from outside the package is simply held."""

    def __init__(self, modules: Mapping[str, str]):
        self._modules, self._loaded = modules, {}

    def __getitem__(self, name: str) -> Family:
        if name not in self._loaded and name in self._modules:
            importlib.import_module(f"{__package__}.{self._modules[name]}")
        return self._loaded[name]

    def __contains__(self, name) -> bool:
        return name in self._loaded or name in self._modules

    def __iter__(self):
        yield from self._modules
        yield from (name for name in list(self._loaded) if name not in self._modules)

    def __len__(self) -> int:
        return len(self._modules) + sum(name not in self._modules for name in self._loaded)

    def add(self, family: Family) -> None:
        self._loaded[family.name] = family

    def discard(self, name: str) -> None:
        self._loaded.pop(name, None)


FAMILIES = FamilyRegistry(MODULES)


class MeasureOverflow(ArithmeticError):
    """A kernel's intermediate sum or value left the double range: refused, never printed as inf or nan.

    ``query`` is the query index; the scorer turns this into E_GAIN_OVERFLOW naming the query ID.
    """

    def __init__(self, query: int, what: str):
        super().__init__(what)
        self.query, self.what = query, what


class MeasureRefused(ValueError):
    """A kernel found input its measure cannot score (a grade above the measure's scale): refused, never repaired.

    ``query`` is the query index; the scorer turns this into ``code`` naming the query ID.
    """

    def __init__(self, query: int, code: str, message: str):
        super().__init__(message)
        self.query, self.code, self.message = query, code, message


def check_finite(*named: tuple[str, np.ndarray]) -> None:
    """Raise MeasureOverflow for the first query whose entry in any (name, per-query array) is inf or nan."""
    for name, a in named:
        bad = np.flatnonzero(~np.isfinite(a))
        if len(bad):
            raise MeasureOverflow(int(bad[0]), name)


def register(family: Family) -> Family:
    """Make ``family`` known to the parser, the scorer and the adapters (a measure module calls this once)."""
    FAMILIES.add(family)
    return family


def unregister(name: str) -> None:
    """Forget a family registered from outside the package (a test's toy family)."""
    FAMILIES.discard(name)


def ratio(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    """num/den as float64, 0 where den is 0."""
    out = np.zeros(len(num), dtype=np.float64)
    np.divide(num, den, out=out, where=den != 0)
    return out
