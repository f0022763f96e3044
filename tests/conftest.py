"""The shared fixtures live in `tests/support/fixtures.py`, loaded here for every folder."""

pytest_plugins = ["tests.support.fixtures"]
