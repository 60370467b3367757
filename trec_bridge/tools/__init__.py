"""Helpers that install or locate external tools (the real trec_eval binary)."""
