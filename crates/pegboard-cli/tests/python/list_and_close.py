"""What LangChain's MCP adapters (`get_tools()`) and LlamaIndex do with the MCP Python SDK 1.x:
start the server over stdio, initialize, list the tools and close at once. Run against
`pegboard serve` by tests/interop_list_and_close.rs with the SDK 1.x of target/test-deps/venv-mcp1.

Usage: list_and_close.py RUNS PEGBOARD ARG...   (the gateway is `PEGBOARD ARG...`, a new one per run)

Each run is a fresh gateway whose servers are still starting when the client lists. Prints ONE JSON
line: {"runs": N, "failed": [{"run": i, "error": "..."}], "tools": [count per good run],
"notifications": [methods the client saw per run]}; exit status 0 when no run failed.
"""

from __future__ import annotations

import asyncio
import json
import sys
import traceback


async def one_run(command: str, args: list[str]) -> tuple[int, list[str]]:
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    seen: list[str] = []

    async def on_message(message) -> None:
        root = getattr(message, "root", message)
        method = getattr(root, "method", None)
        if method:
            seen.append(method)

    server = StdioServerParameters(command=command, args=args)
    async with stdio_client(server) as (read, write):
        async with ClientSession(read, write, message_handler=on_message) as session:
            await session.initialize()
            tools = []
            cursor = None
            while True:
                page = await session.list_tools(cursor=cursor)
                tools.extend(page.tools)
                cursor = page.nextCursor
                if not cursor:
                    break
    return len(tools), seen


def describe(error: BaseException) -> str:
    # anyio's errors come wrapped in (nested) exception groups: name every leaf.
    leaves: list[BaseException] = []

    def walk(e: BaseException) -> None:
        inner = getattr(e, "exceptions", None)
        if inner:
            for i in inner:
                walk(i)
        else:
            leaves.append(e)

    walk(error)
    return "; ".join(f"{type(e).__name__}: {e}" for e in leaves) or repr(error)


def main() -> int:
    runs = int(sys.argv[1])
    command, args = sys.argv[2], sys.argv[3:]
    out: dict = {"runs": runs, "failed": [], "tools": [], "notifications": []}
    for i in range(runs):
        try:
            count, seen = asyncio.run(one_run(command, args))
            out["tools"].append(count)
            out["notifications"].append(seen)
        except BaseException as e:  # noqa: BLE001 - every way a run dies is a failed run
            print(f"list_and_close.py: run {i}: {traceback.format_exc()}", file=sys.stderr)
            out["failed"].append({"run": i, "error": describe(e)})
    print(json.dumps(out))
    return 1 if out["failed"] else 0


if __name__ == "__main__":
    sys.exit(main())
