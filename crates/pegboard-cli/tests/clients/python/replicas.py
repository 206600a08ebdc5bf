"""Stateful tool calls through a load balancer, with the official Python SDK (`mcp` 2.3) in legacy mode.

Usage:
    replicas.py URL [--sessions S] [--calls C] [--concurrency K] [--timeout T] [--until FILE]

Opens S sessions (the initialize handshake: a session the server keeps in one process), K at a time;
each calls `units-convert` C times and checks every answer. Driven by tests/e2e_replicas.rs, which
puts two `pegboard serve --replica-id` replicas behind nginx.

Prints one JSON line: {"ok": calls answered right, "total": S*C, "sessions": {session id prefix
(before the first `.`, "" when none): sessions}, "errors": {error: count}}. A session that cannot
connect counts all its calls as failed. Exit code 0 whatever the results.

With --until FILE (tests/e2e_store.rs, which restarts the replicas meanwhile) each session keeps
calling after its C calls until FILE exists; `total` is then the number of calls made, and the
client prints a line `started` once every session has answered a call. "ids" is the number of
distinct session ids the server sent (one per session unless a session was lost and opened again).
"""

from __future__ import annotations

import argparse
import json
import os
from collections import Counter

import anyio
import httpx2
import mcp_types as types
from mcp import Client
from mcp.client.streamable_http import streamable_http_client


def describe(error: BaseException) -> str:
    if isinstance(error, BaseExceptionGroup):
        return "; ".join(describe(e) for e in error.exceptions)
    return f"{type(error).__name__}: {error}"[:160]


class Tally:
    def __init__(self) -> None:
        self.ok = 0
        self.total = 0
        self.answered_sessions = 0
        self.ids = 0
        self.sessions: Counter[str] = Counter()
        self.errors: Counter[str] = Counter()


async def one_session(url: str, calls: int, timeout: float, tally: Tally, until: str | None, wanted: int) -> None:
    ids: list[str] = []

    async def seen(response: httpx2.Response) -> None:
        sid = response.headers.get("mcp-session-id")
        if sid and sid not in ids:
            ids.append(sid)

    done = 0
    try:
        async with httpx2.AsyncClient(
            timeout=httpx2.Timeout(timeout), event_hooks={"response": [seen]}
        ) as http:
            transport = streamable_http_client(url, http_client=http)
            async with Client(transport, mode="legacy", read_timeout_seconds=timeout) as client:
                i = 0
                while i < calls or (until is not None and not os.path.exists(until)):
                    i += 1
                    tally.total += 1
                    try:
                        with anyio.fail_after(timeout):
                            result = await client.call_tool("units-convert", {"value": i, "from": "kg", "to": "g"})
                        text = [b.text for b in result.content if isinstance(b, types.TextContent)]
                        if not result.is_error and text == [f"{i} kg = {i * 1000} g"]:
                            tally.ok += 1
                            if i == 1:
                                tally.answered_sessions += 1
                                if until is not None and tally.answered_sessions == wanted:
                                    print("started", flush=True)
                        else:
                            tally.errors[f"wrong answer: {text}"[:160]] += 1
                    except Exception as error:  # noqa: BLE001 - every failure is counted, not raised
                        tally.errors[describe(error)] += 1
                    done = i
    except Exception as error:  # noqa: BLE001 - a session that cannot connect fails its calls
        missed = max(calls - done, 0)
        tally.total += missed
        tally.errors[f"session: {describe(error)}"] += max(missed, 1)
    tally.ids += len(ids)
    tally.sessions[ids[0].split(".")[0] if ids and "." in ids[0] else ""] += 1


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("url")
    parser.add_argument("--sessions", type=int, default=10)
    parser.add_argument("--calls", type=int, default=100)
    parser.add_argument("--concurrency", type=int, default=4)
    parser.add_argument("--timeout", type=float, default=10.0)
    parser.add_argument("--until", default=None)
    args = parser.parse_args()
    tally = Tally()
    limit = anyio.Semaphore(args.concurrency)

    async def run() -> None:
        async with limit:
            await one_session(args.url, args.calls, args.timeout, tally, args.until, args.sessions)

    async with anyio.create_task_group() as group:
        for _ in range(args.sessions):
            group.start_soon(run)
    print(json.dumps({"ok": tally.ok, "total": tally.total, "ids": tally.ids,
                      "sessions": dict(tally.sessions), "errors": dict(tally.errors.most_common(5))}))


if __name__ == "__main__":
    anyio.run(main)
