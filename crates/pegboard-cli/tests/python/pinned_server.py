"""An MCP server written with the official Python SDK (`mcp` 2.x, MCPServer) whose tools and
prompts come from a JSON state file, for the pinning tests (tests/e2e_pins.rs).

Usage: pinned_server.py STATE

STATE: {"tools": {NAME: DESCRIPTION, ...}, "prompts": {NAME: DESCRIPTION, ...}}

The definitions are read when the server starts (so a test changes them across restarts by
rewriting the file), and again when the tool `bump` is called: it brings the server's tools and
prompts in line with the file and sends `notifications/tools/list_changed` (and the prompts'),
so a test changes them between listings of one running server. Every tool answers
"NAME: TEXT"; every prompt answers one user message.
"""

from __future__ import annotations

import json
import sys

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.prompts.base import Prompt

STATE = sys.argv[1]
server = MCPServer("pinned-test-server")
current: dict[str, dict[str, str]] = {"tools": {}, "prompts": {}}


def read_state() -> dict[str, dict[str, str]]:
    with open(STATE, encoding="utf-8") as f:
        state = json.load(f)
    return {"tools": state.get("tools", {}), "prompts": state.get("prompts", {})}


def make_tool(name: str):
    def tool(text: str = "") -> str:
        return f"{name}: {text}"

    return tool


def make_prompt(name: str):
    def prompt() -> str:
        return f"prompt {name}"

    return prompt


def apply(state: dict[str, dict[str, str]]) -> None:
    for name in list(current["tools"]):
        server.remove_tool(name)
    for name, description in state["tools"].items():
        server.add_tool(make_tool(name), name=name, description=description)
    for name in list(current["prompts"]):
        server.remove_prompt(name)
    for name, description in state["prompts"].items():
        server.add_prompt(Prompt.from_function(make_prompt(name), name=name, description=description))
    current["tools"] = dict(state["tools"])
    current["prompts"] = dict(state["prompts"])


@server.tool(description="Bring the tools in line with the state file and say that they changed.")
async def bump(ctx: Context) -> str:
    apply(read_state())
    # A handshake-era session gets the notifications; a 2026-07-28 one its subscription events.
    try:
        await ctx.session.send_tool_list_changed()
        await ctx.session.send_prompt_list_changed()
    except Exception as error:  # noqa: BLE001 - the other way is tried next
        print(f"pinned_server.py: session notification failed: {error}", file=sys.stderr)
    try:
        await ctx.notify_tools_changed()
        await ctx.notify_prompts_changed()
    except Exception as error:  # noqa: BLE001
        print(f"pinned_server.py: subscription event failed: {error}", file=sys.stderr)
    return "bumped"


apply(read_state())

if __name__ == "__main__":
    server.run("stdio")
