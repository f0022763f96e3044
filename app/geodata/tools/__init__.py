"""The tools, one folder each (`<tool>/`): `__init__.py` its `ToolSpec` (`SPEC`), summary,
example and hooks; `schemas.py` its argument and result models; `embedded.py` and, where
it can go upstream, `upstream.py` its answers (`answer(provider, args)`), with the modules
only it needs beside them. `spec.py` and `common.py` are what they share.
`app.geodata.catalogue` lists them in order (docs/CONTRIBUTING.md: a new tool)."""
