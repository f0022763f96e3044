"""Geospatial Data Service: MCP tools and control plane."""
