"""Python client of the Geospatial Data Service's HTTP data API (/v1).

The operations and models are generated from the API's OpenAPI document
(`geosvc_client.generated`: `api.tools.geocode`, `api.batches.geocode_batch`, `api.jobs`, ...);
`GeoService` adds retries, credits and bulk jobs over them. See README.md.
"""

from geosvc_client._version import __version__
from geosvc_client.service import Answer, Credits, GeoService, ServiceError

__all__ = ["Answer", "Credits", "GeoService", "ServiceError", "__version__"]
