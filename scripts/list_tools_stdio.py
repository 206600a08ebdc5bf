"""Lists the tools of an MCP server over stdio with the official Python SDK (mcp 2.x), for
scripts/test-packages.sh: the installed `pegboard serve` answering a real client.

Usage: list_tools_stdio.py [--cwd DIR] [--expect N] [--timeout S] -- COMMAND [ARG...]

Starts COMMAND ARG... as the server (with this process's whole environment, where the SDK would
pass only a few variables: uv's and npm's cache settings must reach it), completes the handshake,
lists the tools and prints their names, one a line. Exits non-zero unless exactly N tools (when
--expect is given) came back within the timeout.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cwd", help="the server's working directory")
    parser.add_argument("--expect", type=int, help="the number of tools the server must list")
    parser.add_argument("--timeout", type=float, default=60.0, help="for the whole exchange (s)")
    parser.add_argument("command", nargs="+", help="the server's command and arguments")
    return parser.parse_args()


async def list_tools(args: argparse.Namespace) -> list[str]:
    from mcp import Client, StdioServerParameters

    server = StdioServerParameters(
        command=args.command[0], args=args.command[1:], env=dict(os.environ), cwd=args.cwd
    )
    # The server's stderr is inherited: its logs land in this script's stderr.
    async with Client(server, read_timeout_seconds=args.timeout) as client:
        tools = await client.list_tools()
        return [tool.name for tool in tools.tools]


def main() -> int:
    args = parse_args()
    try:
        names = asyncio.run(asyncio.wait_for(list_tools(args), args.timeout))
    except TimeoutError:
        print(f"list_tools_stdio.py: no tools/list answer within {args.timeout} s", file=sys.stderr)
        return 1
    for name in names:
        print(name)
    if args.expect is not None and len(names) != args.expect:
        print(
            f"list_tools_stdio.py: expected {args.expect} tools, the server listed {len(names)}",
            file=sys.stderr,
        )
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
