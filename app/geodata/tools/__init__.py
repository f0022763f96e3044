"""The tools, one module each: its `ToolSpec` (`SPEC`), summary, example and the hooks
that fit its description and arguments to a deployment. `app.geodata.catalogue` lists
them in order (docs/CONTRIBUTING.md: a new tool)."""
