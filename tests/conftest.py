"""Shared test settings.

Real public data (trec_eval's test suite, TREC runs and qrels) is never copied
into the project; tests reach it through one setting, TREC_BRIDGE_SHARED_DATA
(default ../shared/data next to the checkout), and skip with the reason when it
is absent.  Core tests never depend on it.
"""
from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
SHARED_DATA = Path(os.environ.get("TREC_BRIDGE_SHARED_DATA", REPO.parent / "shared" / "data"))


# Files whose tests take most of the suite's time (hypothesis against the real
# tools, the mutation check, every shared run, rlimit subprocesses).  They are
# marked ``slow`` here, in one place, so that ``pytest -m "not slow"`` is the
# quick loop while CI still runs everything.
SLOW_FILES = frozenset({
    "test_html_reports.py",  # issue 20: scoring, a cross-check and HTML pages, ~4 s
    "test_chart_layout.py",  # issue 20: renders charts with matplotlib, ~4 s
    "test_browser.py",  # issue 20: headless Chromium, a few seconds a page
    "test_compare_many.py",  # issue 20: paired tests with resampling over several systems
    "test_compare_dl19.py",  # issue 20: nine official DL19 runs
    "test_mutants.py",
    "test_walk.py",
    "test_crosscheck_hypothesis.py",
    "test_trec_families_hypothesis.py",
    "test_real_runs.py",
    "test_memory.py",
    "test_trec_eval_suite.py",
    "test_dl_official_runs.py",
    "test_fuzz.py",
    "test_memory_bound.py",
    "test_determinism.py",
    "test_reference_concurrency.py",
    "test_trec_eval_dropin_suite.py",
    "test_trec_eval_dropin_dl.py",
    "test_trec_eval_dropin_hypothesis.py",
    "test_trec_eval_families_binary.py",
    "test_trec_eval_families_dl.py",
    "test_explain_tools.py",
    "test_check_metric.py",
    "test_explain.py",
    "test_irm_families_hypothesis.py",
    "test_diversity_hypothesis.py",  # the diversity family against pyndeval, 300 generated cases
    "test_ranx_ref.py",
    "test_divergence_doc.py",  # regenerates docs/divergences.md: every tool run live on 17 cases (~30 s)
    "test_dask.py",  # issue 21: a distributed.LocalCluster of 2 worker processes, golden scenarios and DL19 on it
})
# Single tests that take seconds of CPU each (a real benchmark replayed, ranx's JIT, thousands of
# hypothesis examples, several subprocesses), by file::function: slow, the rest of their file stays quick.
SLOW_TESTS = frozenset({
    "test_small_inputs.py::test_each_measure_under_each_policy",  # each measure alone, three ways (~3 s a policy)
    "test_small_inputs.py::test_real_runs",  # official DL19 runs scored three ways (~5 s)
    "test_small_inputs.py::test_golden_scenarios",  # every golden case three ways (~14 s)
    "test_system_meta.py::test_report_terminal_and_html_show_the_system",  # issue 23: renders an HTML page (~2 s)
    "test_run_timing.py::test_timing_in_terminal_json_and_html",
    "test_system_meta.py::test_the_acceptance_page_shows_the_system",  # issue 23: renders an HTML page
    "test_system_meta.py::test_crosscheck_reports_carry_the_system",  # issue 23: two cross-checks with pytrec_eval (~2 s)  # issue 23: renders an HTML page (~1 s)
    "test_score_many.py::test_jobs_1_and_2_give_the_same_output",  # starts worker processes (~2 s)
    "test_score_many.py::test_api_score_many_in_two_processes_equals_scoring_each_alone",  # the same (~2 s)
    "test_parquet_parts.py::test_a_partitioned_run_is_scored_in_the_memory_of_one_partition",  # five processes
    "test_json_fast.py::test_fast_and_exact_agree_on_any_document",  # 400 hypothesis documents, each read twice
    "test_json_fast.py::test_the_fast_writer_writes_the_exact_writers_bytes_or_its_refusal",  # 300 runs, written twice
    "test_json_stream.py::test_a_written_document_cut_anywhere_is_the_exact_readers_error",  # 400 cuts, 3 reads each
    "test_json_dataset_quick.py::test_the_bulk_checks_give_the_light_schemas_verdict",  # 300 documents, jsonschema
    "test_irm_families_data.py::test_an_official_dl19_run",  # gdeval and cwl_eval on 43 x 1,000 (~10 s)
    "test_api.py::test_real_ranx_objects",  # ranx compiles its numba kernels on import (~30 s)
    "test_irds.py::test_workflow_dl2019_replays_as_printed",
    "test_irds.py::test_readme_benchmark_commands_as_written_on_an_official_dl19_run",
    "test_irds.py::test_judged_subset_declares_the_topics_its_parent_leaves_unjudged",
    "test_irds.py::test_dl19_judged_offline",
    "test_irds.py::test_missing_file_fails_fast_with_the_expected_path",
    "test_export.py::test_ranx_itself_reads_our_order",
    "test_emulation_fidelity.py::test_policy_ranx_refuses_exactly_what_ranx_does_not_print",
    "test_report_schema.py::test_mutated_reports_never_crash_compare",
    "test_report_schema.py::test_fast_row_checks_agree_with_jsonschema",
    "test_sidecar_roundtrip.py::test_write_then_read_is_the_identity",
    "test_docs.py::test_readme_convert_claim_holds",
    "test_invisible_ids.py::test_byte_search_matches_the_text_class",
    "test_outputs.py::test_concurrent_writers_leave_one_complete_report",
    "test_bench_smoke.py::test_quick_numbers_agree_without_trec_eval",
    "test_bench_smoke.py::test_quick_numbers_agree_with_trec_eval",
    "test_irds.py::test_missing_extracted_file_names_the_file_to_place",
    "test_irds.py::test_unknown_dataset_suggests_ids",
    "test_irds.py::test_a_wrong_local_copy_is_rejected_by_its_md5",
    "test_rag_compare.py::test_compare_cli_all_measures_text_and_json",
    "test_rag_compare.py::test_compare_uses_averaged_repeats",
    "test_rag_compare.py::test_bootstrap_matches_scipy_with_the_same_seed",
    "test_rag_html.py::test_compare_html",
    "test_measures_reference.py::test_every_measure_matches_the_textbook_definition",
    "test_json_dataset.py::test_random_datasets_round_trip",
    "test_json_run.py::test_fast_entry_checks_agree_with_the_shipped_schema",
    "test_json_run.py::test_random_runs_round_trip",
    "test_strict_json.py::test_parse_agrees_with_json_and_depth_is_exact",
    "test_determinism.py::test_crosscheck_json_is_byte_identical",
    "test_sidecar_roundtrip.py::test_every_tool_reads_the_written_order",
    "test_outputs.py::test_file_size_limit_is_e_output_and_keeps_the_old_pair",
    "test_export.py::test_ranx_and_numba_stay_out_of_trec_bridge",
    "test_emulation_fidelity.py::test_every_policy_refuses_exactly_what_its_tool_does_not_print",
    "test_chart_text.py::test_compare_html_draws_hostile_query_ids_and_run_names_literally",
    "test_ndcg_meaning.py::test_strict_ndcg_at_10_on_an_official_dl19_run_is_trec_evals",
    "test_bench_smoke.py::test_w2_floor_times_trec_eval_and_the_python_floor",
    "test_reference_concurrency.py::test_crosscheck_equals_the_one_by_one_cross_check",
    "test_reference_failures.py::test_crosscheck_at_the_largest_grade_runs_every_tool_or_says_why_not",
    "test_outputs.py::test_a_signal_mid_write_removes_the_temporary_file",
    "test_sidecar_roundtrip.py::test_real_trec_eval_reads_written_random_runs",
    "test_api_unsorted.py::test_unsorted_runs_score_as_sorted_ones_many",  # 42 inputs x 4 forms x 7 policies
    "test_bench_smoke.py::test_quick_dropin_rows_are_paired_with_the_binary_and_byte_identical",  # ~5 s
    "test_report_schema.py::test_every_report_the_writer_produces_passes_the_reader",  # every command's report (~5 s)
    "test_outputs.py::test_a_signal_during_start_up_is_one_line",  # a subprocess per signal, killed at start-up
    "test_outputs.py::test_html_and_png_are_one_set",  # renders an HTML page and its charts (~1 s)
})
# The mutation check, its own CI step (.ci/run): ``-m "not mutation"`` then ``-m mutation`` (both on two cores).
MUTATION_FILES = frozenset({"test_mutants.py"})


def pytest_collection_modifyitems(config, items):
    """Mark by what a test needs: ``slow`` and ``mutation`` by file, ``needs_shared_data`` by
    fixture, ``needs_trec_eval`` by the skip condition that guards the binary."""
    for item in items:
        if item.path.name in SLOW_FILES or f"{item.path.name}::{getattr(item, 'originalname', item.name)}" in SLOW_TESTS:
            item.add_marker(pytest.mark.slow)
        if item.path.name in MUTATION_FILES:
            item.add_marker(pytest.mark.mutation)
        if "shared_data" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.needs_shared_data)
        if "trec_eval_binary" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.needs_trec_eval)
        if any("trec_eval" in str(m.kwargs.get("reason", "")) for m in item.iter_markers("skipif")):
            item.add_marker(pytest.mark.needs_trec_eval)


@pytest.fixture(scope="session")
def shared_data() -> Path:
    if not SHARED_DATA.is_dir():
        pytest.skip(f"shared data not found at {SHARED_DATA} (set TREC_BRIDGE_SHARED_DATA)")
    return SHARED_DATA



@pytest.fixture(scope="session")
def trec_eval_binary() -> str:
    """The real trec_eval binary (TREC_EVAL, PATH or the installer's default place); skip with the reason without it."""
    from trec_bridge.references.trec_eval import find_binary

    binary = find_binary()
    if binary is None:
        pytest.skip("trec_eval binary not installed (trec-bridge tools install-trec-eval)")
    return binary


def run_cli(*argv) -> tuple[int, str, str]:
    """``trec-bridge ARGV`` in this process: (exit code, stdout, stderr)."""
    import contextlib
    import io

    from trec_bridge.cli.main import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main([str(a) for a in argv])
        except SystemExit as exc:
            code = exc.code
    return code, out.getvalue(), err.getvalue()
