"""trec_eval's names in every measure string (issue 17 §2): ``map P.10 ndcg_cut.10 recip_rank``, ``P_10``, ``P.5,10``.

They are read from the families' own declarations (measures/trec_names.py),
printed canonically, and each mapping is noted (MeasureList.notes, shown on
stderr and in the report).  ir_measures' ``parse_trec_measure`` is asked for
every name the registered families declare: where it reads a name, it must
read the same measures (the families te-core/te-more add are covered as they
arrive, with no change here).
"""
from __future__ import annotations

import pytest

from trec_bridge.errors import InvalidInput
from trec_bridge.measures import parse_measures
from trec_bridge.measures.names import resolve
from trec_bridge.measures.trec_names import registered


def strings(text) -> list[str]:
    return [str(m) for m in parse_measures(text)]


def test_the_issues_example_is_read_and_printed_canonically():
    parsed = parse_measures("map P.10 ndcg_cut.10 recip_rank")
    assert [str(m) for m in parsed] == ["AP", "P@10", "nDCG@10", "RR"]
    assert parsed.notes == ["measure P.10 is trec_eval's name of P@10", "measure ndcg_cut.10 is trec_eval's name of "
                            "nDCG@10", "measure recip_rank is trec_eval's name of RR"]


@pytest.mark.parametrize("typed, canonical", [
    ("P_10", ["P@10"]), ("ndcg_cut_10", ["nDCG@10"]), ("map_cut_100", ["AP@100"]), ("recall_1000", ["R@1000"]),
    ("success_1", ["Success@1"]), ("success.1,5,10", ["Success@1", "Success@5", "Success@10"]),
    ("ndcg.1=3,2=9,4=4.5", ["nDCG(gains={1:3,2:9,4:4.5})"]), ("ndcg_1=3,2=9", ["nDCG(gains={1:3,2:9})"]),
    ("P.20,5", ["P@5", "P@20"]),  # trec_eval sorts a cutoff list
])
def test_printed_and_dotted_names(typed, canonical):
    assert strings(typed) == canonical
    assert len(parse_measures(typed).notes) == 1


def test_a_comma_list_inside_a_trec_eval_token_is_that_tokens_parameters():
    """A piece after a comma that cannot start a measure (digits, '.', '=', '-') continues the list; a name or a
    space after the comma starts the next measure."""
    assert strings("P.5,10,map") == ["P@5", "P@10", "AP"]
    assert strings("recall.5,10 nDCG@10,RR") == ["R@5", "R@10", "nDCG@10", "RR"]
    with pytest.raises(InvalidInput) as err:
        parse_measures("P.5, 10")
    assert err.value.code == "E_MEASURE_SYNTAX"


def test_repeats_across_vocabularies_are_dropped_with_a_note():
    parsed = parse_measures("P@10 P_10 P.10")
    assert [str(m) for m in parsed] == ["P@10"]
    assert len([n for n in parsed.notes if "repeat is dropped" in n]) == 2


@pytest.mark.parametrize("typed, code", [("P.5,5", "E_MEASURE_PARAM"), ("P.0", "E_MEASURE_PARAM"),
                                         ("P.", "E_MEASURE_SYNTAX"), ("P_x", "E_MEASURE_UNKNOWN")])
def test_bad_trec_eval_parameters_get_a_code(typed, code):
    with pytest.raises(InvalidInput) as err:
        parse_measures(typed)
    assert err.value.code == code


def test_our_spelling_wins_where_a_name_is_both():
    """``P`` is our family (it needs a cutoff), not trec_eval's nine cutoffs; ``map`` and ``ndcg`` mean the same."""
    assert strings("map ndcg") == ["AP", "nDCG"]
    with pytest.raises(InvalidInput) as err:
        parse_measures("P")
    assert err.value.code == "E_CUTOFF"


def test_the_api_and_the_cli_take_trec_eval_names(tmp_path):
    import trec_bridge as tb

    qrels = {"q1": {"a": 1, "b": 0}}
    run = {"q1": {"a": 2.0, "b": 1.0}}
    res = tb.score(qrels, run, "P.1,2 recip_rank")
    assert res.means == {"P@1": 1.0, "P@2": 0.5, "RR": 1.0}


def trec_names_to_compare() -> list[str]:
    """Every -m name, printed name and name.param the registered families declare (with their default parameters)."""
    out = []
    for name, named in registered().items():
        out.append(name)
        for m in named.to_measures(None):
            param, printed = named.spell(m)
            out.append(printed)
            if param is not None:
                out.append(f"{name}.{param}")
    return out


# ir_measures prints some measures under its other name for them; ours is the name it also reads
IR_MEASURES_OTHER_NAMES = {"SetP(relative=True)": "SetRelP", "NumRet(rel=1)": "NumRelRet"}


def _ir_measures_reading(token: str) -> list[str] | None:
    """ir_measures' measures for a trec_eval name (its other names mapped to ours), None when it has none."""
    import ir_measures
    try:
        return [IR_MEASURES_OTHER_NAMES.get(str(m), str(m)) for m in ir_measures.parse_trec_measure(token)]
    except (ValueError, KeyError, AttributeError):
        return None


BOTH = [t for t in trec_names_to_compare() if _ir_measures_reading(t) is not None]  # the names both tools read


def test_the_names_compared_cover_every_family_ir_measures_reads():
    assert {"map", "P_10", "recip_rank", "ndcg_cut_10", "num_rel_ret", "bpref", "Rprec", "set_P", "infAP",
            "iprec_at_recall_0.50"} <= set(BOTH)


@pytest.mark.parametrize("token", BOTH)
def test_ir_measures_parse_trec_measure_agrees(token):
    theirs = _ir_measures_reading(token)
    if resolve(token) is not None:  # also our own family's name, which wins where it needs a cutoff
        try:
            parse_measures(token)
        except InvalidInput as exc:
            assert exc.code == "E_CUTOFF"
            assert [str(m) for m in registered()[token].to_measures(None)] == theirs  # the declaration still agrees
            return
    assert strings(token) == theirs
