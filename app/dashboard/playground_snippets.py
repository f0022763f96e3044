"""The same call as a developer would make it: the /v1 URL, curl, Python (httpx) and an
MCP client's configuration with the call's arguments. Each names the key by a
placeholder: the page never holds a key's secret (the service keeps only its hash).

The /v1 query is the argument written in the compact forms `app.geodata.query` reads
(`center=LAT,LON`, `markers=LAT,LON,COLOR,LABEL` repeated, `path=LAT,LON|LAT,LON`, a list
repeated); tests/dashboard/test_playground_form.py reads every tool's example back
through it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode

from app.dashboard.keys_page import client_config
from app.geodata.tools.spec import ToolSpec
from app.kit.config import get_settings

KEY_ENV_VAR = "GEOSVC_API_KEY"
KEY_PLACEHOLDER = "YOUR_API_KEY"  # where a configuration file cannot read the environment


@dataclass(frozen=True)
class Snippets:
    url: str
    curl: str
    python: str
    mcp_config: str
    mcp_call: str


def _number(value: Any) -> str:
    return format(value, "g") if isinstance(value, float) and value.is_integer() else str(value)


def _joined(values: Any) -> str:
    """A point, box or circle (an object, or a list of numbers) as comma-separated numbers."""
    parts = values.values() if isinstance(values, dict) else values
    return ",".join(_number(v) for v in parts)


def _marker(marker: dict[str, Any]) -> str:
    text = f"{_number(marker['lat'])},{_number(marker['lon'])}"
    label = marker.get("label")
    if marker.get("color") or label is not None:
        text += f",{marker.get('color') or ''}"
    return text + (f",{label}" if label is not None else "")


def query_pairs(arguments: dict[str, Any]) -> list[tuple[str, str]]:
    """The query parameters of a call with these (JSON) arguments."""
    pairs: list[tuple[str, str]] = []
    for name, value in arguments.items():
        if value is None:
            continue
        if isinstance(value, dict) and set(value) == {"bbox"}:  # within: a box
            pairs.append((name, _joined(value["bbox"])))
        elif isinstance(value, dict) and set(value) == {"polygon"}:  # within: LON,LAT|...
            pairs.append((name, "|".join(_joined(vertex) for vertex in value["polygon"])))
        elif isinstance(value, dict):
            pairs.append((name, _joined(value)))
        elif isinstance(value, list) and value and isinstance(value[0], dict):
            if "label" in value[0] or "color" in value[0] or name == "markers":
                pairs += [(name, _marker(marker)) for marker in value]
            else:  # a path: the points once, in order
                pairs.append((name, "|".join(_joined(point) for point in value)))
        elif isinstance(value, list):
            pairs += [(name, _number(item)) for item in value]
        elif isinstance(value, bool):
            pairs.append((name, "true" if value else "false"))
        else:
            pairs.append((name, _number(value)))
    return pairs


def snippets(spec: ToolSpec, arguments: dict[str, Any], *, image: bool) -> Snippets:
    base = get_settings().base_url.rstrip("/")
    pairs = query_pairs(arguments)
    query = urlencode(pairs, safe=",")  # LAT,LON stays readable
    url = f"{base}{spec.http_path}" + (f"?{query}" if query else "")
    output = " -o map.png" if image else ""
    curl = f'curl -s{output} "{url}" \\\n  -H "Authorization: Bearer ${KEY_ENV_VAR}"'
    return Snippets(
        url=url,
        curl=curl,
        python=_python(f"{base}{spec.http_path}", pairs, image=image),
        mcp_config=client_config(KEY_PLACEHOLDER),
        mcp_call=json.dumps(
            {"method": "tools/call", "params": {"name": spec.name, "arguments": arguments}},
            indent=2,
            ensure_ascii=False,
        ),
    )


def _python(url: str, pairs: list[tuple[str, str]], *, image: bool) -> str:
    repeated = len({name for name, _ in pairs}) < len(pairs)
    params = repr(pairs) if repeated else repr(dict(pairs))
    answer = 'open("map.png", "wb").write(response.content)' if image else "print(response.json())"
    return "\n".join(
        [
            "import os",
            "",
            "import httpx",
            "",
            "response = httpx.get(",
            f"    {url!r},",
            f"    params={params},",
            f'    headers={{"Authorization": f"Bearer {{os.environ[{KEY_ENV_VAR!r}]}}"}},',
            "    timeout=30,",
            ")",
            "response.raise_for_status()",
            answer,
        ]
    )
