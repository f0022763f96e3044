"""Request dependencies: the database session, the signed-in user and the session cookie.

Below the features (it imports only the bottom layer), so a feature's endpoints and the
dashboard's pages take the current user from here and never from another feature: an
edge module inside a feature folder then adds no arrow between features
(tests/test_layers.py). Nothing is imported here, so a worker that needs
`session_tokens` loads no web framework.
"""
