"""The official MCP Python SDK (mcp 2.x) finds and calls a tool through PegBoard's search mode.

Usage: search_client.py PEGBOARD CONFIG

Starts `PEGBOARD serve --config CONFIG --tool-search on` over stdio, lists the tools, calls
`search_tools {"query": "convert kilometres to miles"}`, then `call_tool` with the first tool
found, and prints ONE JSON line: {"listed": [...], "found": [...], "result_text": ..., "is_error": ...}.
"""

from __future__ import annotations

import asyncio
import json
import sys


async def run(pegboard: str, config: str) -> dict:
    from mcp import Client, StdioServerParameters

    server = StdioServerParameters(command=pegboard, args=["serve", "--config", config, "--tool-search", "on"])
    async with Client(server, read_timeout_seconds=30.0) as client:
        listed = [tool.name for tool in (await client.list_tools()).tools]
        search = await client.call_tool("search_tools", {"query": "convert kilometres to miles", "limit": 3})
        found = [tool["name"] for tool in (search.structured_content or {}).get("tools", [])]
        arguments = {"value": 10, "from": "km", "to": "mi"}
        result = await client.call_tool("call_tool", {"name": found[0], "arguments": arguments})
        texts = [block.text for block in result.content if getattr(block, "type", None) == "text"]
        return {"listed": listed, "found": found, "result_text": "\n".join(texts), "is_error": bool(result.is_error)}


def main() -> int:
    out = asyncio.run(run(sys.argv[1], sys.argv[2]))
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
