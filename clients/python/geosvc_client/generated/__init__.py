"""A client library for accessing Geospatial Data Service: HTTP data API"""

from .client import AuthenticatedClient, Client

__all__ = (
    "AuthenticatedClient",
    "Client",
)
