"""The HTTP edge's shared parts: error rendering, request dependencies, ASGI guards."""
