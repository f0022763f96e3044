"""OAuth 2.1 sign-in for /mcp beside API keys: the authorization server (Authlib), the
connected apps it grants, and the access-token check of the resource server."""
