"""`geosvc dev`: migrate, make a demo account and key, start everything, print the URLs."""

from __future__ import annotations

from rich.console import Console

from app.config import Settings


def serve(settings: Settings, *, host: str, port: int, console: Console) -> None:
    import uvicorn

    from app.db import migrate
    from app.main import create_app

    migrate()
    base = f"http://{host}:{port}"
    console.print(f"[bold]Dashboard[/]  {base}/")
    console.print(f"[bold]MCP URL[/]    {base}/mcp")
    uvicorn.run(create_app(), host=host, port=port, log_level="info")
