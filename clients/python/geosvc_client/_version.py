"""The client's version: the API's (info.version of the OpenAPI document it was generated from)."""

__version__ = "2026.12.7"
