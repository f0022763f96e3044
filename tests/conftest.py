"""The shared fixtures live in `tests/support/`, loaded here for every folder."""

pytest_plugins = [
    "tests.support.fixtures",
    "tests.support.mail_stack",
    "tests.support.schedule",
    "tests.support.tiers",
]
