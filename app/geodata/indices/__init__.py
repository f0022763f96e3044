"""Compact on-disk indices built once from the packaged datasets (see docs/DATA.md)."""
