"""The official MCP Python SDK (mcp 2.x) as a client of PegBoard in front of the test server's
`ask` tool, prompt and resources, which need the client's input (sampling, elicitation, roots).

Usage:
    mrtr_client.py --stdio PEGBOARD CONFIG --mode legacy|auto

In `legacy` mode the server's input requests reach the client as requests during its call; in
`auto` mode (2026-07-28) as `input_required` results, whose rounds the SDK drives itself. Prints
ONE JSON line: {"protocol_version": ..., "sampling": ..., "elicitation": ..., "roots": ...,
"prompt": ..., "resource": ...}; tracebacks go to stderr, the exit code is non-zero on failure.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from typing import Any


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--stdio", nargs=2, metavar=("PEGBOARD", "CONFIG"), required=True)
    parser.add_argument("--mode", choices=["legacy", "auto"], required=True)
    parser.add_argument("--timeout", type=float, default=30.0)
    return parser.parse_args()


async def on_sampling(_ctx: Any, _params: Any) -> Any:
    from mcp import types

    return types.CreateMessageResult(role="assistant", model="py", stop_reason="endTurn",
                                     content=types.TextContent(type="text", text="python"))


async def on_elicitation(_ctx: Any, _params: Any) -> Any:
    from mcp import types

    return types.ElicitResult(action="accept", content={"answer": "python"})


async def on_list_roots(_ctx: Any) -> Any:
    from mcp import types

    return types.ListRootsResult(roots=[types.Root(uri="file:///python")])


def text_of(blocks: Any) -> str:
    return " ".join(b.text for b in blocks if getattr(b, "type", None) == "text")


async def run(args: argparse.Namespace) -> dict:
    from mcp import Client, StdioServerParameters

    pegboard, config = args.stdio
    server = StdioServerParameters(command=pegboard, args=["serve", "--config", config])
    async with Client(server, mode=args.mode, read_timeout_seconds=args.timeout,
                      sampling_callback=on_sampling, elicitation_callback=on_elicitation,
                      list_roots_callback=on_list_roots) as client:
        out: dict[str, Any] = {"protocol_version": client.protocol_version}
        for via, rounds in [("sampling", 2), ("elicitation", 1), ("roots", 1)]:
            result = await client.call_tool("t-ask", {"via": via, "rounds": rounds})
            out[via] = ("error: " if result.is_error else "") + text_of(result.content)
        try:
            prompt = await client.get_prompt("t-ask", {"via": "sampling"})
            out["prompt"] = text_of(m.content for m in prompt.messages)
        except Exception as error:  # reported, the test decides
            out["prompt"] = f"error: {error}"
        try:
            read = await client.read_resource("t+test://ask/roots")
            out["resource"] = " ".join(getattr(c, "text", "") for c in read.contents)
        except Exception as error:
            out["resource"] = f"error: {error}"
        return out


def main() -> int:
    out = asyncio.run(run(parse_args()))
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
