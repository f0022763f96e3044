"""Geodata: the six tools' schemas, the service that answers them, and their providers."""
