"""Providers answer the tools: the embedded one from packaged data, upstream ones over HTTP."""
