"""The HTTP edge's shared parts: error rendering, OpenAPI error declarations, ASGI guards
(request dependencies: `app.deps`)."""
