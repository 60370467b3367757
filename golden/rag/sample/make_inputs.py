"""Writes this folder's input files (run once by hand; the tests never run it).

200 queries s001..s200, each with exactly one relevant document r001..r200
(grade 3); x1..x5 are filler documents, never judged.
  s001..s144: the relevant document at rank 1   (144 queries)
  s145..s160: the relevant document at rank 6   ( 16 queries)
  s161..s200: the relevant document not retrieved (40 queries)
dataset_199.json is the same with s200 declared unanswerable (no judgment).
The expected figures are worked by hand in ../README.md, not produced here.
"""
import json

QUERIES = [f"s{i:03d}" for i in range(1, 201)]
FILLER = ["x1", "x2", "x3", "x4", "x5"]


def ranking(i: int) -> list[str]:
    rel = f"r{i:03d}"
    if i <= 144:
        return [rel] + FILLER
    if i <= 160:
        return FILLER + [rel]
    return FILLER[:3]


def dataset(no_answer: set[str]) -> dict:
    return {
        "format": "trec-bridge.dataset", "version": 1, "dataset_id": "golden-rag-sample",
        "description": "200 one-answer queries for the sample-size rule and the domain discount",
        "grades": {"scale": [0, 1, 2, 3], "threshold": 1}, "completeness": "pooled",
        "corpus": {"kind": "listed", "documents": [f"r{i:03d}" for i in range(1, 201)] + FILLER},
        "queries": [{"query_id": q, **({"answerable": False} if q in no_answer else {})} for q in QUERIES],
        "judgments": {q: ({"x1": 0} if q in no_answer else {f"r{i:03d}": 3}) for i, q in enumerate(QUERIES, 1)},
    }


def dump(obj: dict, path: str) -> None:
    """One line per top-level field, and one line per entry of a list or object field."""
    out = []
    for key, value in obj.items():
        if isinstance(value, dict) and key in ("rankings", "judgments"):
            inner = ",\n".join(f"    {json.dumps(k)}: {json.dumps(v)}" for k, v in value.items())
            out.append(f"  {json.dumps(key)}: {{\n{inner}\n  }}")
        elif isinstance(value, list):
            inner = ",\n".join(f"    {json.dumps(v)}" for v in value)
            out.append(f"  {json.dumps(key)}: [\n{inner}\n  ]")
        else:
            out.append(f"  {json.dumps(key)}: {json.dumps(value)}")
    text = "{\n" + ",\n".join(out) + "\n}\n"
    assert json.loads(text) == obj
    with open(path, "w") as fh:
        fh.write(text)


dump(dataset(set()), "dataset.json")
dump(dataset({"s200"}), "dataset_199.json")
dump({"format": "trec-bridge.run", "version": 1, "dataset_id": "golden-rag-sample", "run_id": "sample",
      "rankings": {q: ranking(i) for i, q in enumerate(QUERIES, 1)}}, "run.json")
