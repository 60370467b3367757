"""The formats runs and datasets export to, defined once for the exporter and the CLI.

A leaf module (no polars), so that building the command-line parser stays light.
"""
RUN_TARGETS = ("trec", "ranx-json", "ir-measures-tsv")
DATASET_TARGETS = ("trec-qrels", "ranx-json", "ir-measures-tsv")
