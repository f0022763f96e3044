"""The HTTP data API (/v1): the tools as REST endpoints, their OpenAPI and reference page."""
