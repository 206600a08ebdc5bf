"""An MCP server written with the official Python SDK (`mcp` 2.x, MCPServer) whose tools answer
results of the sizes asked for, for the result-cap tests (tests/e2e_caps.rs).

Usage: caps_server.py

Tools:
- `text(size)`: one text block of `size` bytes: "ab" then "€" (3 bytes each), so a cut at a
  byte count that is not 2 + a multiple of 3 falls inside a character.
- `rows(count)`: structured output (a model), `count` rows: its `structuredContent` and the
  SDK's text copy of it.
- `picture(size)`: a text block "a picture:", then a PNG-typed image of `size` bytes (base64).
- `document(size)`: a text block "a document:", then an embedded text resource of `size` bytes.
- `small()`: text with multi-byte characters, a small image: a result well under any cap.
- `escaped(count)`: a text of `count` U+0001 characters: `count` bytes of text, six times as
  many in JSON (each is written `\\u0001`).
"""

from __future__ import annotations

import base64

from mcp.server.mcpserver import MCPServer
from mcp_types import (
    CallToolResult,
    EmbeddedResource,
    ImageContent,
    TextContent,
    TextResourceContents,
)
from pydantic import BaseModel

server = MCPServer("caps-test-server")


class Row(BaseModel):
    row: int
    name: str


class Rows(BaseModel):
    rows: list[Row]


@server.tool()
def text(size: int) -> CallToolResult:
    body = "ab" + "€" * ((size - 2) // 3)
    return CallToolResult(content=[TextContent(type="text", text=body)])


@server.tool()
def rows(count: int) -> Rows:
    return Rows(rows=[Row(row=i, name=f"item {i}") for i in range(count)])


@server.tool()
def picture(size: int) -> CallToolResult:
    data = base64.b64encode(bytes(i % 251 for i in range(size))).decode("ascii")
    return CallToolResult(
        content=[
            TextContent(type="text", text="a picture:"),
            ImageContent(type="image", data=data, mime_type="image/png"),
        ]
    )


@server.tool()
def document(size: int) -> CallToolResult:
    return CallToolResult(
        content=[
            TextContent(type="text", text="a document:"),
            EmbeddedResource(
                type="resource",
                resource=TextResourceContents(uri="file:///docs/big.txt", mime_type="text/plain", text="r" * size),
            ),
        ]
    )


@server.tool()
def small() -> CallToolResult:
    return CallToolResult(
        content=[
            TextContent(type="text", text="naïve café — 5 €, 東京 🙂"),
            ImageContent(type="image", data=base64.b64encode(b"\x89PNG tiny").decode("ascii"), mime_type="image/png"),
        ]
    )


@server.tool()
def escaped(count: int) -> CallToolResult:
    return CallToolResult(content=[TextContent(type="text", text="\u0001" * count)])


if __name__ == "__main__":
    server.run("stdio")
