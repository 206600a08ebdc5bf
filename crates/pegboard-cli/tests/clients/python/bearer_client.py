"""One client of `pegboard serve --http` with a bearer token, through the official MCP Python SDK
(mcp 2.x, `mcp.Client` over its streamable HTTP transport). Run by tests/e2e_jwt_clients.rs with
the venv of target/test-deps (scripts/setup-test-deps.sh).

Usage: bearer_client.py URL TOKEN MODE PLAN

MODE is `legacy` (initialize) or `auto` (`server/discover`, falling back to initialize). PLAN is a
JSON list of calls, [{"name": ..., "arguments": {...}}, ...], made one after another in that order.
The script lists the tools, makes the calls and prints ONE JSON line:
    {"protocol_version": ..., "tools": [sorted names],
     "calls": [{"name": ..., "error": {"code": ..., "message": ...}}
               | {"name": ..., "result": {"is_error": ..., "text": ...}}, ...]}
A call answered with a JSON-RPC error is recorded, not raised; anything else that fails ends the
script with a traceback on stderr and a non-zero exit code.
"""

from __future__ import annotations

import asyncio
import json
import sys


async def run(url: str, token: str, mode: str, plan: list[dict]) -> dict:
    import httpx2
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared.exceptions import MCPError

    http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=30)
    transport = streamable_http_client(url, http_client=http)
    calls = []
    async with http, Client(transport, mode=mode, read_timeout_seconds=30, cache=None) as client:
        tools = sorted(tool.name for tool in (await client.list_tools()).tools)
        for step in plan:
            try:
                result = await client.call_tool(step["name"], step.get("arguments", {}))
            except MCPError as error:
                calls.append({"name": step["name"], "error": {"code": error.code, "message": error.message}})
                continue
            text = "\n".join(b.text for b in result.content if getattr(b, "type", None) == "text")
            calls.append({"name": step["name"], "result": {"is_error": bool(result.is_error), "text": text}})
        return {"protocol_version": client.protocol_version, "tools": tools, "calls": calls}


def main() -> int:
    url, token, mode, plan = sys.argv[1:5]
    print(json.dumps(asyncio.run(run(url, token, mode, json.loads(plan)))), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
