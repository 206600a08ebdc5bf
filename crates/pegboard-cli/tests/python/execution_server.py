"""An MCP server written with the official Python SDK's low-level `Server` whose tools carry
`execution` (MCP 2025-11-25), a member rmcp's `Tool` does not model, for tests/e2e_definitions.rs.

Usage: execution_server.py            serve on stdio
       execution_server.py --http     serve streamable HTTP on 127.0.0.1, a free port; prints
                                      `listening on http://127.0.0.1:PORT/mcp` on stderr

Tools: `read` (taskSupport "forbidden": a client may never run it as a task), `slow` (taskSupport
"optional"), `plain` (no `execution`). Each answers its name.
"""

from __future__ import annotations

import sys

import anyio
import mcp.types as types
from mcp.server.lowlevel import Server

SCHEMA = {"type": "object", "properties": {}}


async def list_tools(_ctx, _params) -> types.ListToolsResult:
    return types.ListToolsResult(
        tools=[
            types.Tool(name="read", description="Read", input_schema=SCHEMA, execution={"taskSupport": "forbidden"}),
            types.Tool(name="slow", description="Slow", input_schema=SCHEMA, execution={"taskSupport": "optional"}),
            types.Tool(name="plain", description="Plain", input_schema=SCHEMA),
        ]
    )


async def call_tool(_ctx, params: types.CallToolRequestParams) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(type="text", text=params.name)])


server = Server("execution-test-server", on_list_tools=list_tools, on_call_tool=call_tool)


async def serve_stdio() -> None:
    from mcp.server.stdio import stdio_server

    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


async def serve_http() -> None:
    import uvicorn

    config = uvicorn.Config(server.streamable_http_app(), host="127.0.0.1", port=0, log_level="warning")
    web = uvicorn.Server(config)
    async with anyio.create_task_group() as tg:
        tg.start_soon(web.serve)
        while not web.started:
            await anyio.sleep(0.01)
        port = web.servers[0].sockets[0].getsockname()[1]
        print(f"listening on http://127.0.0.1:{port}/mcp", file=sys.stderr, flush=True)


anyio.run(serve_http if "--http" in sys.argv[1:] else serve_stdio)
