"""The official MCP Python SDK (mcp 2.x) as a client of the PegBoard gateway.

Usage:
    client.py --stdio PEGBOARD CONFIG [--mode legacy|auto] [--pin-version VERSION]
    client.py --http URL [--mode legacy|auto] [--pin-version VERSION]

Connects with `mcp.Client`, lists the tools, calls `units-convert {"value": 10, "from": "km",
"to": "mi"}` and prints ONE JSON line to stdout:
    {"protocol_version": ..., "tools": [...], "result_text": ..., "is_error": ...,
     "server_info": ..., "offered_version": ...}
Anything else (tracebacks, logs) goes to stderr; the exit code is non-zero on failure.

`--pin-version` offers an older handshake-era version in `initialize`. mcp 2.x has no public
option for that (`Client(mode=...)` accepts only "legacy", "auto" or a modern version, and
`ClientSession.initialize()` always offers `LATEST_HANDSHAKE_VERSION`), so this replaces that
module constant in `mcp.client.session` before connecting. It implies --mode legacy.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    target = parser.add_mutually_exclusive_group(required=True)
    target.add_argument("--stdio", nargs=2, metavar=("PEGBOARD", "CONFIG"))
    target.add_argument("--http", metavar="URL")
    parser.add_argument("--mode", choices=["legacy", "auto"], default="auto")
    parser.add_argument("--pin-version", metavar="VERSION")
    parser.add_argument("--timeout", type=float, default=30.0, help="read timeout per request (s)")
    parser.add_argument("--verbose-gateway", action="store_true", help="start `pegboard serve -v` (stdio)")
    return parser.parse_args()


async def run(args: argparse.Namespace) -> dict:
    import mcp.client.session as session_module
    from mcp import Client, StdioServerParameters

    mode = args.mode
    offered = session_module.LATEST_HANDSHAKE_VERSION
    if args.pin_version:
        session_module.LATEST_HANDSHAKE_VERSION = args.pin_version
        offered = args.pin_version
        mode = "legacy"

    if args.stdio:
        pegboard, config = args.stdio
        serve_args = ["serve", "--config", config] + (["-v"] if args.verbose_gateway else [])
        # The gateway's stderr is inherited: it lands in this script's stderr.
        server: object = StdioServerParameters(command=pegboard, args=serve_args)
    else:
        server = args.http

    async with Client(server, mode=mode, read_timeout_seconds=args.timeout) as client:
        protocol_version = client.protocol_version
        print(f"client.py: connected, mode={mode}, protocol_version={protocol_version}", file=sys.stderr)
        info = client.server_info
        tools = await client.list_tools()
        names = [tool.name for tool in tools.tools]
        metas = {tool.name: (tool.meta or {}).get("pegboard/namespace") for tool in tools.tools}
        result = await client.call_tool("units-convert", {"value": 10, "from": "km", "to": "mi"})
        texts = [block.text for block in result.content if getattr(block, "type", None) == "text"]
        return {
            "protocol_version": protocol_version,
            "offered_version": offered if mode == "legacy" else None,
            "server_info": None if info is None else {"name": info.name, "version": info.version},
            "tools": names,
            "namespaces": metas,
            "result_text": "\n".join(texts),
            "is_error": bool(result.is_error),
        }


def main() -> int:
    args = parse_args()
    out = asyncio.run(run(args))
    sys.stdout.write(json.dumps(out) + "\n")
    sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
