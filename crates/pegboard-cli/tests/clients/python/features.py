"""The MCP feature matrix, driven by the official Python SDK client (`mcp` 2.x, `mcp.Client`).

Usage:
    features.py [--namespace NS] [--mode legacy|auto] [--timeout S] [--only a,b] stdio COMMAND [ARGS...]
    features.py [--namespace NS] [--mode legacy|auto] [--timeout S] [--only a,b] http URL

Connects to an MCP server (meant for @modelcontextprotocol/server-everything, directly or behind
`pegboard serve` with it registered as namespace NS) and exercises one protocol feature at a time.
Each feature prints ONE JSON line on stdout:
    {"feature": "...", "ok": true|false, "detail": ..., "value": ..., "ms": N}
`value` is what must be equal between a direct run and a run through the gateway: names and URIs
are decoded back to the server's own (a wrongly namespaced one fails the feature), and anything
that varies per run (timestamps, session ids) is left out. `detail` is for people.
Every feature has its own deadline, so nothing hangs; the exit code is 0 whatever the results
(the caller judges). Logs go to stderr.
"""

from __future__ import annotations

from __future__ import annotations

import argparse
import json
import os
import sys
import time
import traceback
from typing import Any, Awaitable, Callable

import anyio

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from features_content import ContentFeatures  # noqa: E402
from features_session import SessionFeatures  # noqa: E402
from matrix_base import describe  # noqa: E402


class Matrix(ContentFeatures, SessionFeatures):
    """All the features, on one connection (plus the extra sessions some of them open)."""


FEATURES = [
    ("connect", "f_connect", None), ("tools-list", "f_tools_list", None), ("echo", "f_echo", None),
    ("resources-list", "f_resources_list", None), ("resource-templates", "f_resource_templates", None),
    ("resource-read", "f_resource_read", None), ("resource-links", "f_resource_links", None),
    ("embedded-resource", "f_embedded_resource", None), ("session-resource-link", "f_session_resource_link", None),
    ("prompts-list", "f_prompts_list", None), ("prompt-get", "f_prompt_get", None),
    ("prompt-embedded-resource", "f_prompt_embedded_resource", None),
    ("complete-prompt", "f_complete_prompt", None), ("complete-resource-template", "f_complete_resource_template", None),
    ("logging-set-level", "f_logging_set_level", None), ("logging-message", "f_logging_message", None),
    ("subscribe", "f_subscribe", None), ("progress", "f_progress", None),
    ("progress-two-clients", "f_progress_two_clients", None), ("cancel", "f_cancel", None),
    ("sampling", "f_sampling", None), ("elicitation-form", "f_elicitation_form", None),
    ("elicitation-url", "f_elicitation_url", None), ("roots", "f_roots", None),
    ("roots-list-changed", "f_roots_list_changed", None), ("task-2025", "f_task_2025", 30.0),
]


def emit(line: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(line, default=str) + "\n")
    sys.stdout.flush()


async def run_feature(name: str, body: Callable[[], Awaitable[tuple[Any, Any]]], timeout: float) -> None:
    t0 = time.monotonic()
    try:
        with anyio.fail_after(timeout):
            value, detail = await body()
        line = {"feature": name, "ok": True, "detail": detail, "value": value}
    except TimeoutError:
        line = {"feature": name, "ok": False, "detail": f"timed out after {timeout} s", "value": None}
    except Exception as error:  # any failure is this feature's result, never the run's end
        line = {"feature": name, "ok": False, "detail": describe(error), "value": None}
    line["ms"] = round((time.monotonic() - t0) * 1000)
    emit(line)


async def main_async(args: argparse.Namespace) -> None:
    matrix = Matrix(args)
    wanted = [f for f in FEATURES if not args.only or f[0] in args.only.split(",") or f[0] == "connect"]
    done: set[str] = set()
    try:
        async with matrix.new_client() as client:
            matrix.client = client
            for name, method, timeout in wanted:
                await run_feature(name, getattr(matrix, method), timeout or args.timeout)
                done.add(name)
    except Exception as error:  # no connection, or the session died: the remaining features say so
        print(traceback.format_exc(), file=sys.stderr)
        for name, _, _ in wanted:
            if name not in done:
                why = "session died" if done else "no connection"
                emit({"feature": name, "ok": False, "detail": f"{why}: {describe(error)}", "value": None})
                done.add(name)
    for name, _, _ in wanted:
        if name not in done:
            emit({"feature": name, "ok": False, "detail": "not run: no connection", "value": None})


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--namespace", help="expect PegBoard's naming for this namespace")
    parser.add_argument("--mode", choices=["legacy", "auto"], default="legacy")
    parser.add_argument("--timeout", type=float, default=15.0, help="deadline per feature (s)")
    parser.add_argument("--only", help="comma-separated feature names")
    parser.add_argument("transport", choices=["stdio", "http"])
    parser.add_argument("target", nargs=argparse.REMAINDER)
    args = parser.parse_args()
    if not args.target:
        parser.error("give the server command (stdio) or URL (http)")
    return args


def main() -> int:
    anyio.run(main_async, parse_args())
    return 0


if __name__ == "__main__":
    sys.exit(main())
