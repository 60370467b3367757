"""Scenario suites: the command line and the public data end to end (unit tests sit in tests/, named after their modules)."""
