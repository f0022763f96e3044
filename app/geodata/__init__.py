"""Geodata: the tools' schemas, the service that answers them, and their providers."""
