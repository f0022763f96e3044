"""Providers answer the six tools: the embedded one from packaged data, upstream ones over HTTP."""
