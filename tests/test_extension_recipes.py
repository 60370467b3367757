"""The "Adding things" recipes of docs/architecture.md, followed from outside the package.

A toy measure family (``RelHits@k``: relevant documents in the top k) and a
toy reference tool (``toy_eval``: its own Python loop, its own policy and an
axis reason) are registered here, in the test module, exactly as a measure
module and an adapter module register themselves.  Nothing else in the
package is told about them, yet ``score``, ``crosscheck`` and the generated
divergence document all see them.  The fixture undoes the registration so
that other tests see the package as shipped.
"""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from trec_bridge import divergence_doc, references
from trec_bridge.axes import AXES, reason
from trec_bridge.cli.main import main
from trec_bridge.measures.base import FAMILIES, Family, Values, register, unregister
from trec_bridge.policy import POLICIES, PYTHON_SORT_ORDER, Policy, get_policy
from trec_bridge.references.base import Reference, ReferenceResult

TOY_REASON = "toy_eval sorts double scores with ties by docno ascending"

# q1: a (2) and c (1) relevant, b not; the tie a/b at 1.0 goes to a either way.  q2: y relevant at rank 2.
# q3: judged, nothing relevant.  Hand-computed RelHits@2: q1 = 1 (a; c is third), q2 = 1, q3 = 0.
QRELS = "q1 0 a 2\nq1 0 b 0\nq1 0 c 1\nq2 0 x 0\nq2 0 y 1\nq3 0 z 0\n"
RUN = "q1 Q0 a 1 1.0 r\nq1 Q0 b 2 1.0 r\nq1 Q0 c 3 0.5 r\nq2 Q0 x 1 2.0 r\nq2 Q0 y 2 1.0 r\nq3 Q0 z 1 3.0 r\n"


def rel_hits(r, m, ctx) -> Values:
    """Relevant judged documents in the top k (a count: num / 1)."""
    num = r.per_query_count(r.relevant_rows(ctx.rel, m.cutoff))
    return Values.of_ratio(num, np.ones(r.n_queries, dtype=np.int64))


TOY_FAMILY = Family("RelHits", rel_hits, rational=True, needs_cutoff=True, params=frozenset({"rel"}),
                    description="relevant documents in the top k", tool_names={"toy_eval": "relhits"})

TOY_POLICY = Policy(name="toy_eval", description="toy_eval: every judged query, no-relevant = 0, Python sort",
                    query_set="judged", no_relevant="zero", ordering=PYTHON_SORT_ORDER, emulates="toy_eval")


class ToyEval(Reference):
    """An evaluator of its own: sorts each ranking by (-score, docno) and counts relevant documents."""

    name = "toy_eval"

    def available(self) -> bool:
        return True

    def version(self) -> str:
        return "0.1"

    def _reason(self, measure, rel):
        if FAMILIES[measure.family].native(self.name) is None:
            return f"toy_eval has no {measure.family}"
        return None

    def evaluate(self, qrels, run, measures, *, rel=1, options=references.Options()) -> ReferenceResult:
        result = ReferenceResult(self.name, self.version())
        grades = {(q, d): g for q, _, d, g in qrels.frame.select("query_id", "iteration", "doc_id", "grade").iter_rows()}
        judged = sorted({q for q, _ in grades})
        ranked: dict[str, list[str]] = {}
        for q, d, s in sorted(run.frame.select("query_id", "doc_id", "score").iter_rows(), key=lambda t: (-t[2], t[1])):
            ranked.setdefault(q, []).append(d)
        for m, level in self._split(measures, rel, result, qrels):
            native = FAMILIES[m.family].native(self.name)
            values = {q: float(sum(grades.get((q, d), 0) >= level for d in ranked.get(q, [])[:m.cutoff]))
                      for q in judged}
            result.per_query[str(m)] = values
            result.aggregate[str(m)] = sum(values.values()) / len(values)
            result.native[str(m)] = result.served_by[str(m)] = f"{native}.{m.cutoff}"
        return result


@pytest.fixture
def toys():
    register(TOY_FAMILY)
    references.register(references.Tool("toy_eval", ToyEval, TOY_POLICY,
                                        reasons={("ordering", PYTHON_SORT_ORDER): TOY_REASON}))
    try:
        yield
    finally:
        references.unregister("toy_eval")
        unregister("RelHits")


def files(tmp_path: Path) -> tuple[str, str]:
    (tmp_path / "qrels.txt").write_text(QRELS)
    (tmp_path / "run.txt").write_text(RUN)
    return str(tmp_path / "qrels.txt"), str(tmp_path / "run.txt")


def test_a_measure_module_and_nothing_else_is_scored(toys, tmp_path):
    q, r = files(tmp_path)
    out = tmp_path / "report.json"
    assert main(["score", q, r, "RelHits@2 relhits(rel=2)@2", "--json", str(out)]) == 0
    means = json.loads(out.read_text())["means"]
    # strict: q3 has no relevant document, so it is null and out of the mean: (1 + 1) / 2; at rel=2 only q1's a
    assert means["RelHits@2"]["value"] == 1.0 and means["RelHits@2"]["exact"] == "1"
    assert means["RelHits(rel=2)@2"]["value"] == 1.0


def test_a_tool_module_gives_a_policy_to_score(toys, tmp_path):
    q, r = files(tmp_path)
    out = tmp_path / "report.json"
    assert get_policy("toy_eval") is TOY_POLICY
    assert main(["score", q, r, "RelHits@2", "--policy", "toy_eval", "--json", str(out)]) == 0
    assert json.loads(out.read_text())["means"]["RelHits@2"]["value"] == pytest.approx(2 / 3)  # q3 counts as 0
    # the emulation prints only what the tool prints: P@2 is refused under toy_eval's policy
    assert main(["score", q, r, "P@2", "--policy", "toy_eval"]) == 1


def test_crosscheck_runs_the_toy_tool_and_explains_the_difference(toys, tmp_path, capsys):
    q, r = files(tmp_path)
    out = tmp_path / "cc.json"
    code = main(["crosscheck", q, r, "RelHits@2 P@1", "--against", "toy_eval", "--json", str(out)])
    assert code == 0, capsys.readouterr()
    report = json.loads(out.read_text())
    assert "toy_eval" in json.dumps(report)
    printed = capsys.readouterr().out
    assert "== toy_eval " in printed and "every difference is explained" in printed
    assert "not compared: toy_eval has no P" in printed
    assert "no_relevant" in printed  # strict 1.0 vs the tool's 2/3, attributed to the axis


def test_crosscheck_default_is_every_registered_tool(toys, tmp_path, capsys):
    from trec_bridge.cli.crosscheck import TOOLS

    assert list(TOOLS)[-1] == "toy_eval" and "toy_eval" in TOOLS


def test_the_divergence_document_shows_the_toy_tool(toys):
    registry = divergence_doc.registry_section()
    assert "`toy_eval`" in registry and TOY_REASON in registry
    assert reason(next(a for a in AXES if a.field == "ordering"), PYTHON_SORT_ORDER) == TOY_REASON
    assert divergence_doc.tool_versions()["toy_eval"] == "0.1"
    case = divergence_doc.Case("no_relevant", "toy", "q3 has nothing relevant.", (("q1", "a", 1), ("q3", "z", 0)),
                               (("q1", (("a", 1.0),)), ("q3", (("z", 1.0),))), "RelHits@1")
    section = divergence_doc.case_section(case, {"toy_eval": "0.1"})
    assert "| toy_eval | `RelHits@1` | 1.0000 | 0.5000 | 0.5000 | yes |" in section


def test_unregistering_leaves_the_package_as_shipped(toys):
    references.unregister("toy_eval")
    unregister("RelHits")
    assert "toy_eval" not in references.names() and "toy_eval" not in POLICIES and "RelHits" not in FAMILIES
    assert PYTHON_SORT_ORDER not in next(a for a in AXES if a.field == "ordering").reasons
    assert references.names() == ["trec_eval", "pytrec_eval", "ir_measures", "ranx"]


def _toy_run(doc: dict, file: str, chunks: bool):
    """The toy layout: {"toy_run": [[query, doc, score], ...]}."""
    import polars as pl

    from trec_bridge.model import RUN_SCHEMA, Run

    rows, seen = [], {}
    for q, d, s in doc["toy_run"]:  # ranked in list order, per query
        seen[q] = seen.get(q, 0) + 1
        rows.append((q, d, float(s), seen[q]))
    return Run(pl.DataFrame(rows, schema=RUN_SCHEMA, orient="row"), queries=tuple(dict.fromkeys(q for q, *_ in rows)))


@pytest.fixture
def toy_layout():
    from converters import detect

    detect.register_layout(detect.JsonLayout("toy", lambda doc: "toy_run" in doc, _toy_run, None))
    try:
        yield
    finally:
        detect.JSON_LAYOUTS.pop("toy")


def test_a_json_layout_registered_with_the_detector_is_read_by_score(toy_layout, tmp_path):
    q, _ = files(tmp_path)
    run = tmp_path / "run.json"
    run.write_text(json.dumps({"toy_run": [["q1", "b", 2.0], ["q1", "a", 1.0], ["q2", "y", 1.0]]}))
    out = tmp_path / "report.json"
    assert main(["score", q, str(run), "P@1", "--json", str(out)]) == 2  # q3 is missing: incomplete
    # P@1: q1's top document is b (grade 0) -> 0; q2's is y -> 1; q3 missing -> 0, null (no relevant): (0 + 1) / 2
    assert json.loads(out.read_text())["means"]["P@1"]["value"] == 0.5


def _weighted_hits(r, m, ctx) -> Values:
    """Relevant documents in the whole ranking times the family's own parameter w (a float measure)."""
    hits = r.per_query_count(r.relevant_rows(ctx.rel, None))
    return Values(hits * float(m.param("w", 1.0)))


def _read_weight(value, token):
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0:
        from trec_bridge.errors import InvalidInput
        raise InvalidInput("E_MEASURE_PARAM", f"w must be a positive number (in {token})")
    return float(value)


SUM_FAMILY = Family("WHits", _weighted_hits, rational=False, needs_cutoff=False, params=frozenset({"rel", "w"}),
                    description="weighted relevant documents retrieved, summed over queries",
                    takes_cutoff=False, aggregate="sum", param_readers={"w": _read_weight},
                    defined=lambda r, m, ctx: np.ones(r.n_queries, dtype=bool))


@pytest.fixture
def summed_family():
    register(SUM_FAMILY)
    yield SUM_FAMILY
    unregister("WHits")


def test_a_family_with_its_own_parameter_no_cutoff_and_a_summed_summary(summed_family, tmp_path):
    """Family.takes_cutoff, an own parameter (Measure.extra) and aggregate="sum", from outside the package."""
    from trec_bridge.measures import parse_measures
    from trec_bridge.errors import InvalidInput
    (m,) = parse_measures("WHits(w=0.5)")
    assert m.param("w") == 0.5 and str(m) == "WHits(w=0.5)"
    with pytest.raises(InvalidInput) as err:
        parse_measures("WHits@10")
    assert err.value.code == "E_CUTOFF"
    with pytest.raises(InvalidInput) as err:
        parse_measures("WHits(w=-1)")
    assert err.value.code == "E_MEASURE_PARAM"
    (tmp_path / "q").write_text(QRELS)
    (tmp_path / "r").write_text(RUN)
    out = tmp_path / "rep.json"
    assert main(["score", str(tmp_path / "q"), str(tmp_path / "r"), "WHits(w=0.5)", "--json", str(out)]) == 0
    report = json.loads(out.read_text())
    # relevant retrieved: q1 2 (a, c), q2 1 (y), q3 0 -> (2 + 1 + 0) * 0.5, summed not averaged
    assert report["means"]["WHits(w=0.5)"]["value"] == 1.5
