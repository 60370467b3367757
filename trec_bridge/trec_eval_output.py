"""trec_eval 9.0.4's output, written from our scorer's results (the ``trec-bridge trec_eval`` drop-in).

What is trec_eval's and not a measure's lives here, each rule from its C
source (9.0.4): the order in which it prints measures (``te_trec_measures``
in measures.c), its nicknames (``official``, ``all_trec``, ``set``), which
measures print integers (``%ld``: the counts) and which print no per-query
line (``runid``, ``num_q``, ``gm_map``, ``gm_bpref``), the line format
``%-22s\\t%s\\t%6.4f``, queries in ``strcmp`` order of their IDs
(get_trec_results.c sorts the lines), the run ID of the file's last line,
and the ``relstring`` label (m_relstring.c); with -Z, the ``Z`` lines and
each summary rule applied to z-scores (meas_avg.c; the conversion itself is
trec_eval_zscores.py).  Which measures a ``-m`` name
computes, and how each is printed, is the families' own declaration
(``measures.trec_names``): a family added later is printed with no change here.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .errors import InvalidInput, UsageError
from .measures.base import Measure, Ranking
from .measures.trec_names import registered
from .messages import quote
from .trec_eval_zscores import ZScores, c_fixed

# te_trec_measures (measures.c) up to the preference measures, which need another judgments format
TABLE = ("runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "Rprec", "bpref", "recip_rank",
         "iprec_at_recall", "P", "relstring", "recall", "infAP", "gm_bpref", "Rprec_mult", "utility", "11pt_avg",
         "binG", "G", "ndcg", "ndcg_rel", "Rndcg", "ndcg_cut", "map_cut", "relative_P", "success", "set_P",
         "set_relative_P", "set_recall", "set_map", "set_F", "num_nonrel_judged_ret")
NICKNAMES = {
    "official": ("runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "Rprec", "bpref",
                 "recip_rank", "iprec_at_recall", "P"),
    "all_trec": tuple(TABLE),
    "set": ("runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "utility", "set_P", "set_recall",
            "set_relative_P", "set_map", "set_F"),
}
# names trec_eval knows that read preference or judgment-group files (-R prefs, qrels_prefs, qrels_jg)
OTHER_FORMATS = ("all_prefs", "prefs", "qrels_jg", "prefs_num_prefs_poss", "prefs_num_prefs_ful",
                 "prefs_num_prefs_ful_ret", "prefs_simp", "prefs_pair", "prefs_avgjg", "prefs_avgjg_Rnonrel",
                 "prefs_simp_ret", "prefs_pair_ret", "prefs_avgjg_ret", "prefs_avgjg_Rnonrel_ret", "prefs_simp_imp",
                 "prefs_pair_imp", "prefs_avgjg_imp", "map_avgjg", "P_avgjg", "Rprec_mult_avgjg", "yaap")
COUNTS = frozenset({"num_q", "num_ret", "num_rel", "num_rel_ret", "num_nonrel_judged_ret"})  # printed with %ld
SUMMARY_ONLY = frozenset({"runid", "num_q", "gm_map", "gm_bpref"})  # te_print_single_meas_empty
# one value named name_PARAMS, PARAMS the -m text as typed (meas_init.c: te_init_meas_s_float_p_float and
# te_init_meas_s_float_p_pair name it append_string(name, printable_params)): -m ndcg.1=3.0 prints ndcg_1=3.0
RAW_PARAMS = frozenset({"11pt_avg", "G", "Rndcg", "ndcg", "ndcg_rel", "set_F", "utility"})
LABELS = frozenset({"runid", "relstring"})  # not measures: printed here from the run
RELSTRING_LENGTH = 10


@dataclass(frozen=True)
class Printed:
    """One ``-m`` name selected, with the measures it prints (name as printed, measure) in trec_eval's order."""

    name: str
    params: str | None
    lines: tuple[tuple[str, Measure], ...] = ()


def selected_names(m_args: list[str]) -> dict[str, str | None]:
    """The ``-m`` arguments as trec_eval marks them: name -> the first parameter text given for it (None: its
    defaults), nicknames expanded, ``official`` when none is given (trec_eval.c mark_measure)."""
    params: dict[str, str | None] = {}
    marked: set[str] = set()
    for arg in m_args or ["official"]:
        name, dot, text = arg.partition(".")
        if dot:
            if not text:
                raise UsageError("E_MEASURE_SYNTAX", f"trec_eval: improper measure in parameter {quote(arg)}")
            params.setdefault(name, text)
        if name in OTHER_FORMATS:
            raise UsageError("E_MEASURE_UNKNOWN", f"-m {arg}: preference and judgment-group measures need "
                             "another judgments format (-R), which trec-bridge trec_eval does not read")
        if name not in NICKNAMES and name not in TABLE:
            raise UsageError("E_MEASURE_UNKNOWN", f"trec_eval: illegal measure {quote(arg)}")
        marked.update(NICKNAMES.get(name, (name,)))
    return {name: params.get(name) for name in TABLE if name in marked}


def printed_measures(m_args: list[str]) -> list[Printed]:
    """What each selected name prints, from the families' declarations; a name no family declares yet is refused."""
    names = registered()
    out = []
    for name, text in selected_names(m_args).items():
        if name in LABELS:
            out.append(Printed(name, text))
            continue
        if name not in names:
            raise UsageError("E_MEASURE_UNKNOWN", f"trec_eval's measure {name} is not computed by trec-bridge "
                             "(no measure family declares it)")
        declared = names[name]
        try:
            measures = declared.to_measures(text)
        except (ValueError, InvalidInput) as exc:
            raise UsageError("E_MEASURE_PARAM", f"-m {name}.{text}: {exc}") from None
        lines = tuple((_spelled(declared, m, name), m) for m in measures)
        if text is not None and name in RAW_PARAMS:
            lines = tuple((f"{name}_{text}", m) for _, m in lines)
        out.append(Printed(name, text, lines))
    return out


def _spelled(declared, m: Measure, name: str) -> str:
    spelling = declared.spell(m)
    if spelling is None:
        raise UsageError("E_MEASURE_UNKNOWN", f"trec_eval's {name} computes {m}, which its family cannot print")
    return spelling[1]


def measures_of(printed: list[Printed]) -> list[Measure]:
    """The distinct measures to score, in printing order."""
    return list(dict.fromkeys(m for p in printed for _, m in p.lines))


def line(name: str, qid: str, value, count: bool, z: bool = False) -> str:
    """One line as trec_eval prints it: ``%-22s\\t%s\\t%6.4f`` (``%ld`` of the truncated value for a count);
    with -Z (``z``) every value is ``Z%-22s\\t%s\\t%6.4f``, counts too (meas_print_single.c, meas_print_final.c)."""
    if z:
        return f"Z{name:<22}\t{qid}\t{c_fixed(value)}\n"
    shown = str(int(value)) if count else f"{value:6.4f}"
    return f"{name:<22}\t{qid}\t{shown}\n"


def relstring(ranking: Ranking, i: int, length: int) -> str:
    """Query ``i``'s relevance string (m_relstring.c): one character per document of its first ``length``:
    the grade 0-9, ``>`` above 9, ``.`` for a negative grade (in the pool, unjudged), ``-`` when not judged."""
    n = max(0, min(length, int(ranking.retrieved[i])))
    chars = ["-"] * n
    rows = np.flatnonzero((ranking.row_query == i) & (ranking.rank <= n))
    for rank, grade in zip(ranking.rank[rows].tolist(), ranking.grade[rows].tolist()):
        chars[rank - 1] = ">" if grade > 9 else (str(grade) if grade >= 0 else ".")
    return "".join(chars)


def relstring_length(params: str | None) -> int:
    if params is None:
        return RELSTRING_LENGTH
    try:
        return int(float(params.split(",")[0]))
    except ValueError:
        raise UsageError("E_MEASURE_PARAM", f"-m relstring.{params}: the length is not a number") from None


def render(printed: list[Printed], result, prepared, policy, tag: str, *, per_query: bool, summary: bool,
           zscores: ZScores | None = None, complete: bool = False) -> str:
    """trec_eval's standard output: with ``per_query``, each evaluated query's lines (queries in strcmp order,
    measures in table order), then with ``summary`` the ``all`` lines; with ``zscores`` (-Z) the values as z-scores
    and their summary (``_z_summary``); ``complete``: -c."""
    out: list[str] = []
    if per_query:
        out += _per_query_lines(printed, result, prepared, policy, zscores)
    if summary:
        for p in printed:
            if p.name == "runid":
                out.append(f"{'runid':<22}\tall\t{tag}\n")
            for name, m in p.lines:
                value = result.means[str(m)].value or 0.0
                if complete and p.name == "num_rel":
                    value = _judged_relevant(prepared)
                elif zscores is not None:
                    value = _z_summary(p.name, name, m, value, result, zscores, complete)
                out.append(line(name, "all", value, p.name in COUNTS, zscores is not None))
    return "".join(out)


def _judged_relevant(prepared) -> int:
    """num_rel's ``all`` figure with -c (m_num_rel.c): every judgment above 0 of every judged query, whatever -l
    (and, with -Z, not a z-score)."""
    return int((prepared.dataset.qrels.frame.get_column("grade") > 0).sum())


def _evaluated(result) -> list:
    """The queries trec_eval evaluates (results and judgments both), in its order: strcmp of the IDs."""
    return sorted((q for q in result.queries if q.status != "missing"), key=lambda q: q.query_id.encode())


def _z_summary(table_name: str, name: str, m: Measure, value: float, result, zscores: ZScores,
               complete: bool) -> float:
    """The ``all`` figure of a measure under -Z: the evaluated queries' z-scores summed in trec_eval's order
    (trec_eval.c), then its calc_avg rule (meas_avg.c): divided by the queries averaged over (the judged queries
    with -c), left a sum for a count, or exp of the mean for gm_map and gm_bpref (a query -c adds counts as
    log(1e-5)).  num_q's figure is the number of queries (m_num_q.c): ``value``, as without -Z (num_rel's with -c
    is counted anew, ``_judged_relevant``)."""
    from .measures.base import FAMILIES, GMEAN_FLOOR

    if table_name == "num_q":
        return value
    evaluated = _evaluated(result)
    total = 0.0
    for q in evaluated:  # one addition after another, as C sums (not math.fsum, not sum()'s compensation)
        total += zscores.convert(q.query_id, name, q.values[str(m)] or 0.0)
    queries = len(result.queries) if complete else len(evaluated)
    aggregate = FAMILIES[m.family].aggregate
    if aggregate == "sum" or not queries:
        return total
    if aggregate == "gmean":
        return math.exp((total + (queries - len(evaluated)) * math.log(GMEAN_FLOOR)) / queries)
    return total / queries


def _per_query_lines(printed: list[Printed], result, prepared, policy, zscores: ZScores | None) -> list[str]:
    from .ranking import query_index
    from .scorer import policy_ranking

    queries = list(result.queries)
    evaluated = _evaluated(result)
    strings = None
    relstring_wanted = [p for p in printed if p.name == "relstring"]
    if relstring_wanted:
        index = query_index([q.query_id for q in queries])
        ranking = policy_ranking(prepared, policy.ordering, index, policy)
        position = {q.query_id: i for i, q in enumerate(queries)}
        length = relstring_length(relstring_wanted[0].params)
        strings = {q.query_id: relstring(ranking, position[q.query_id], length) for q in evaluated}
    out = []
    for q in evaluated:
        for p in printed:
            if p.name == "relstring":
                name = "relstring" if p.params is None else f"relstring_{p.params}"
                out.append(f"{name:<22}\t{q.query_id}\t'{strings[q.query_id]}'\n")
            elif p.name not in SUMMARY_ONLY:
                out += [line(name, q.query_id, _shown(q, name, m, zscores), p.name in COUNTS, zscores is not None)
                        for name, m in p.lines]
    return out


def _shown(q, name: str, m: Measure, zscores: ZScores | None) -> float:
    value = q.values[str(m)] or 0.0
    return value if zscores is None else zscores.convert(q.query_id, name, value)


def at_level(printed: list[Printed], level: int) -> list[Printed]:
    """-l below 1 (trec_eval counts grade 0 as relevant with -l0): the datasets' threshold is 1 or more, so each
    measure that takes a threshold gets ``rel=level`` instead (printed names unchanged)."""
    from dataclasses import replace

    from .measures.base import FAMILIES

    def moved(m: Measure) -> Measure:
        return replace(m, rel=level) if "rel" in FAMILIES[m.family].params else m
    return [Printed(p.name, p.params, tuple((name, moved(m)) for name, m in p.lines)) for p in printed]
