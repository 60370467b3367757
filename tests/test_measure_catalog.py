"""The measure families are imported by name when first asked for (measures/catalog.py): the catalog must name
every family the package's modules register, from the module that registers it, in the order importing them all
registers them (what iterating ``FAMILIES`` lists, as when the package imported every module at once), and asking
for a few families must import only theirs.  Checked in a fresh interpreter, where nothing is imported yet."""
from __future__ import annotations

import json
import subprocess
import sys

CHILD = r"""
import importlib, json, pkgutil, sys
from trec_bridge import measures
from trec_bridge.measures import base, catalog

measures.parse_measures("nDCG@10 RR@10 R@100 AP")
asked = sorted(m for m in sys.modules if m.startswith("trec_bridge.measures."))
listed = list(base.FAMILIES)  # iterating names imports nothing
asked_after_listing = sorted(m for m in sys.modules if m.startswith("trec_bridge.measures."))

order, where, add = [], {}, base.FamilyRegistry.add
def recording(self, family):
    order.append(family.name)
    where[family.name] = sys._getframe(2).f_globals["__name__"].rpartition(".")[2]  # register's caller
    add(self, family)
base.FamilyRegistry.add = recording
for loaded in asked:  # what importing every module in name order, from nothing, registers
    if loaded.rpartition(".")[2] not in measures.SHARED:
        del sys.modules[loaded]
for module in pkgutil.iter_modules(measures.__path__):
    if module.name not in measures.SHARED:
        importlib.import_module(f"trec_bridge.measures.{module.name}")
modules = [m.name for m in pkgutil.iter_modules(measures.__path__) if m.name not in measures.SHARED]
print(json.dumps({"asked": asked, "listed": listed, "asked_after_listing": asked_after_listing, "order": order,
                  "where": where, "modules": modules, "catalog": catalog.MODULES,
                  "values": [f.name for f in base.FAMILIES.values()]}))
"""


def test_the_catalog_names_every_family_from_its_module_in_registration_order():
    done = subprocess.run([sys.executable, "-c", CHILD], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    got = json.loads(done.stdout)
    assert got["order"] == list(got["catalog"])  # every family, once, in the order the modules register them
    assert got["where"] == got["catalog"]
    assert sorted(set(got["catalog"].values())) == sorted(got["modules"])  # no family module left out of it
    assert got["listed"] == got["values"] == got["order"]
    prefix = "trec_bridge.measures."
    families = {prefix + got["catalog"][name] for name in ("nDCG", "RR", "R", "AP")}
    assert families <= set(got["asked"])
    assert {m for m in got["asked"] if m.removeprefix(prefix) in got["modules"]} == families  # only those four
    assert got["asked_after_listing"] == got["asked"]


def test_a_family_registered_from_outside_is_listed_after_the_package_s():
    from trec_bridge.measures.base import FAMILIES, Family, Values, register, unregister

    import numpy as np

    toy = Family("ToyCatalogFamily", lambda r, m, ctx: Values(np.zeros(r.n_queries)), rational=False,
                 needs_cutoff=False)
    register(toy)
    try:
        assert "ToyCatalogFamily" in FAMILIES and FAMILIES["ToyCatalogFamily"] is toy
        assert list(FAMILIES)[-1] == "ToyCatalogFamily" and len(FAMILIES) == len(list(FAMILIES))
    finally:
        unregister("ToyCatalogFamily")
    assert "ToyCatalogFamily" not in FAMILIES and "ToyCatalogFamily" not in list(FAMILIES)
