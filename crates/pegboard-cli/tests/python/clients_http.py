"""Two named clients of `pegboard serve --http`, each with its own bearer token, through the MCP
Python SDK 1.x's streamable HTTP client (as LangChain's MCP adapters and LlamaIndex use it). Run by
tests/interop_list_and_close.rs with the SDK 1.x of target/test-deps/venv-mcp1.

Usage: clients_http.py URL TOKEN_A TOKEN_B

Both clients initialize and list the tools, then the script prints ONE line {"ready": {"a": [...],
"b": [...]}} (the tool names each sees) and waits (60 s at most) until client `a` is told its tools
changed: the test changes the board then. It lists again for both, closes both sessions (the SDK
sends DELETE and logs "Session termination failed: N" unless the answer is 200 or 204), and prints
ONE line: {"before": {...}, "after": {...}, "notifications": {"a": [...], "b": [...]},
"warnings": [...]} (methods each client was sent; what the SDK logged at WARNING and above).
"""

from __future__ import annotations

import asyncio
import json
import logging
import sys
from contextlib import AsyncExitStack


class Collect(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append(record.getMessage())


async def run(url: str, tokens: dict[str, str]) -> dict:
    import httpx
    from mcp import ClientSession
    from mcp.client.streamable_http import streamable_http_client

    warnings = Collect()
    logging.getLogger("mcp").addHandler(warnings)
    seen: dict[str, list[str]] = {name: [] for name in tokens}
    tools_changed = asyncio.Event()

    def handler(name: str):
        async def on_message(message) -> None:
            root = getattr(message, "root", message)
            method = getattr(root, "method", None)
            if method:
                seen[name].append(method)
                if name == "a" and method == "notifications/tools/list_changed":
                    tools_changed.set()

        return on_message

    async def names(session: ClientSession) -> list[str]:
        return sorted(t.name for t in (await session.list_tools()).tools)

    async with AsyncExitStack() as stack:
        sessions: dict[str, ClientSession] = {}
        for name, token in tokens.items():
            http = await stack.enter_async_context(
                httpx.AsyncClient(
                    headers={"Authorization": f"Bearer {token}"},
                    # The GET event stream is quiet until something changes.
                    timeout=httpx.Timeout(30, read=300),
                )
            )
            read, write, _ = await stack.enter_async_context(
                streamable_http_client(url, http_client=http)
            )
            session = await stack.enter_async_context(
                ClientSession(read, write, message_handler=handler(name))
            )
            await session.initialize()
            sessions[name] = session
        before = {name: await names(s) for name, s in sessions.items()}
        print(json.dumps({"ready": before}), flush=True)
        await asyncio.wait_for(tools_changed.wait(), 60)
        after = {name: await names(s) for name, s in sessions.items()}
    # Every session is closed here (its DELETE answered).
    return {
        "before": before,
        "after": after,
        "notifications": seen,
        "warnings": warnings.messages,
    }


def main() -> int:
    url, token_a, token_b = sys.argv[1:4]
    print(json.dumps(asyncio.run(run(url, {"a": token_a, "b": token_b}))), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
