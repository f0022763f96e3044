"""The client libraries (clients/) against a real server: the v1 stack of tests/v1."""

from tests.v1.conftest import client, v1_stack

__all__ = ["client", "v1_stack"]
