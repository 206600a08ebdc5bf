"""An MCP server written with the official Python SDK (`mcp` 2.x, MCPServer) that answers with
the `_meta` each request brought it, for the trace-context tests (tests/e2e_traces.rs): what the
gateway passed on of the client's `params._meta`, and the `traceparent` it put there.

Usage: meta_server.py (stdio)

- tool `echo_meta`: a text content, the JSON of the request's `_meta` (`{}` when none);
- prompt `meta`: one user message, the JSON of the request's `_meta`;
- resource template `meta://{name}`: a text, the JSON of the request's `_meta`.
"""

from __future__ import annotations

import json

from mcp.server.mcpserver import Context, MCPServer

server = MCPServer("meta-echo-server")


def received(ctx: Context) -> str:
    return json.dumps(dict(ctx.request_context.meta or {}), sort_keys=True)


@server.tool(description="Answer the request's _meta as JSON.")
def echo_meta(ctx: Context) -> str:
    return received(ctx)


@server.prompt(description="One user message: the request's _meta as JSON.")
def meta(ctx: Context) -> str:
    return received(ctx)


@server.resource("meta://{name}", description="The request's _meta as JSON.")
def meta_resource(name: str, ctx: Context) -> str:
    return received(ctx)


if __name__ == "__main__":
    server.run("stdio")
