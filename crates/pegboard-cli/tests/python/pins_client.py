"""The official MCP Python SDK (`mcp` 2.x, `mcp.Client`) as a client of `pegboard serve`, for
the pinning tests (tests/e2e_pins.rs).

Usage: pins_client.py PEGBOARD CONFIG [--bump TOOL [--swap SRC DST]] [--call TOOL ...]

Starts `pegboard serve --config CONFIG` over stdio, lists the tools and prompts; with --bump,
copies SRC over DST (the test server's state file) and calls TOOL (the test server's `bump`, which changes its tools and says so) and waits for the
gateway's `notifications/tools/list_changed`, then lists again; then calls each --call tool with
{"text": "hi"}. Prints ONE JSON line:
    {"before": {"tools": {NAME: DESCRIPTION}, "prompts": {...}},
     "after": {...} | null, "calls": {NAME: {"text": ..., "is_error": ...}}}
"""

from __future__ import annotations

import argparse
import asyncio
import json
import shutil
import sys


async def listing(client) -> dict:
    tools = await client.list_tools()
    prompts = await client.list_prompts()
    return {
        "tools": {t.name: t.description for t in tools.tools},
        "prompts": {p.name: p.description for p in prompts.prompts},
    }


async def run(args: argparse.Namespace) -> dict:
    from mcp import Client, StdioServerParameters

    changed = asyncio.Event()

    async def on_message(message) -> None:
        for candidate in (message, getattr(message, "root", None)):
            if getattr(candidate, "method", None) == "notifications/tools/list_changed":
                changed.set()

    server = StdioServerParameters(command=args.pegboard, args=["serve", "--config", args.config])
    out: dict = {"before": None, "after": None, "calls": {}}
    async with Client(server, mode="legacy", read_timeout_seconds=30, message_handler=on_message) as client:
        out["before"] = await listing(client)
        if args.bump:
            if args.swap:
                # The server's next definitions: in place before it is told to re-read them.
                source, target = args.swap
                shutil.copyfile(source, target)
            changed.clear()
            result = await client.call_tool(args.bump, {})
            print(f"pins_client.py: bump answered {result.content}", file=sys.stderr)
            await asyncio.wait_for(changed.wait(), timeout=30)
            out["after"] = await listing(client)
        for name in args.call:
            result = await client.call_tool(name, {"text": "hi"})
            text = "".join(getattr(c, "text", "") for c in result.content)
            out["calls"][name] = {"text": text, "is_error": bool(result.is_error)}
    return out


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("pegboard")
    parser.add_argument("config")
    parser.add_argument("--bump")
    parser.add_argument("--swap", nargs=2, metavar=("SRC", "DST"), help="copy SRC over DST before --bump")
    parser.add_argument("--call", action="append", default=[])
    args = parser.parse_args()
    try:
        print(json.dumps(asyncio.run(run(args))))
    except Exception as error:  # noqa: BLE001 - reported for the test to show
        import traceback

        traceback.print_exc()
        print(f"pins_client.py: {error!r}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
