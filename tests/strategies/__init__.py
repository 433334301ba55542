"""Per-strategy tests: tests/strategies/test_<name>.py for generator/strategies/<name>.py."""
