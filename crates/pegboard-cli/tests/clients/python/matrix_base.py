"""What every feature of the matrix shares: the connection, the client callbacks, waiting on
notifications, and the expectations about server-everything 2026.8.31."""

from __future__ import annotations

import argparse
import sys
import warnings
from typing import Any, Callable

import anyio
import mcp_types as types
from mcp import Client, StdioServerParameters
from mcp.shared.exceptions import MCPDeprecationWarning

from naming import Naming

# Logging, roots and resources/subscribe are deprecated in 2026-07-28; this client tests them anyway.
warnings.filterwarnings("ignore", category=MCPDeprecationWarning)

ROOT_A = types.Root(uri="file:///tmp/pegboard-matrix/a", name="matrix-a")
ROOT_B = types.Root(uri="file:///tmp/pegboard-matrix/b", name="matrix-b")

# server-everything 2026.8.31's tools for a client that declares sampling, elicitation (form and
# url) and roots: 12 always, 5 more once those capabilities are known (its registerConditionalTools;
# the two `*-async` ones also need the 2025 `tasks` client capability, which no SDK here declares).
EXPECTED_TOOLS = sorted(
    [
        "echo", "get-annotated-message", "get-env", "get-resource-links", "get-resource-reference",
        "get-structured-content", "get-sum", "get-tiny-image", "gzip-file-as-resource",
        "toggle-simulated-logging", "toggle-subscriber-updates", "trigger-long-running-operation",
        "get-roots-list", "trigger-elicitation-request", "trigger-url-elicitation",
        "trigger-sampling-request", "simulate-research-query",
    ]
)
EXPECTED_PROMPTS = ["args-prompt", "completable-prompt", "resource-prompt", "simple-prompt"]
DOC_URI = "demo://resource/static/document/architecture.md"
TEXT_TEMPLATE = "demo://resource/dynamic/text/{resourceId}"
BLOB_TEMPLATE = "demo://resource/dynamic/blob/{resourceId}"


class Check(Exception):
    """A feature's expectation that did not hold."""


def expect(condition: Any, message: str) -> None:
    if not condition:
        raise Check(message)


def texts(result: types.CallToolResult) -> list[str]:
    return [block.text for block in result.content if isinstance(block, types.TextContent)]


def describe(error: BaseException) -> str:
    if isinstance(error, BaseExceptionGroup):
        return "; ".join(describe(e) for e in error.exceptions)
    code = getattr(getattr(error, "error", None), "code", None)
    return f"{type(error).__name__}{f' {code}' if code is not None else ''}: {error}"


class Inbox:
    """Notifications as they arrive, and a way to wait for one that matches (no polling)."""

    def __init__(self) -> None:
        self.items: list[Any] = []
        self._changed = anyio.Event()

    def push(self, item: Any) -> None:
        self.items.append(item)
        self._changed.set()
        self._changed = anyio.Event()

    async def wait_for(self, matches: Callable[[Any], bool]) -> Any:
        while True:
            changed = self._changed
            for item in self.items:
                if matches(item):
                    return item
            await changed.wait()


class MatrixBase:
    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        self.naming = Naming(args.namespace)
        self.roots = [ROOT_A]
        self.roots_asked = Inbox()
        self.updates = Inbox()
        self.logs = Inbox()
        self.sampled: list[types.CreateMessageRequestParams] = []
        self.elicited: list[types.ElicitRequestParams] = []
        self.tools: dict[str, types.Tool] = {}
        self.client: Client | None = None

    # --- connection -------------------------------------------------------------------------
    def target(self) -> Any:
        if self.args.transport == "http":
            return self.args.target[0]
        command, *rest = self.args.target
        return StdioServerParameters(command=command, args=rest)

    def new_client(self, callbacks: bool = True, progress: Inbox | None = None) -> Client:
        extra: dict[str, Any] = {}
        if progress is not None:

            async def on_message(message: Any) -> None:
                if isinstance(message, types.ProgressNotification):
                    progress.push(message.params)

            extra["message_handler"] = on_message
        if callbacks:
            extra = dict(
                sampling_callback=self.on_sampling,
                elicitation_callback=self.on_elicitation,
                list_roots_callback=self.on_list_roots,
                logging_callback=self.on_log,
                message_handler=self.on_message,
            )
        # log_level only stamps 2026-07-28 requests; handshake-era sessions use logging/setLevel.
        return Client(self.target(), mode=self.args.mode, read_timeout_seconds=self.args.timeout,
                      log_level="debug", **extra)

    async def on_sampling(self, _ctx: Any, params: types.CreateMessageRequestParams) -> Any:
        self.sampled.append(params)
        return types.CreateMessageResult(role="assistant", model="matrix-model", stop_reason="endTurn",
                                         content=types.TextContent(type="text", text="sampled by the matrix client"))

    async def on_elicitation(self, _ctx: Any, params: types.ElicitRequestParams) -> Any:
        self.elicited.append(params)
        if isinstance(params, types.ElicitRequestURLParams):
            return types.ElicitResult(action="accept")
        return types.ElicitResult(action="accept", content={"name": "Ada Lovelace", "check": True, "integer": 7})

    async def on_list_roots(self, _ctx: Any) -> Any:
        self.roots_asked.push([r.uri for r in self.roots])
        return types.ListRootsResult(roots=list(self.roots))

    async def on_log(self, params: types.LoggingMessageNotificationParams) -> None:
        self.logs.push(params)

    async def on_message(self, message: Any) -> None:
        if isinstance(message, types.ResourceUpdatedNotification):
            self.updates.push(message.params.uri)

    @property
    def c(self) -> Client:
        assert self.client is not None
        return self.client

    def modern(self) -> bool:
        return not self.c.protocol_version.startswith(("2024", "2025"))

    async def call(self, tool: str, arguments: dict[str, Any] | None = None, **kw: Any) -> types.CallToolResult:
        result = await self.c.call_tool(self.naming.name(tool), arguments or {}, **kw)
        expect(not result.is_error, f"{tool} answered isError: {texts(result)}")
        return result

    async def stop_toggle(self, tool: str) -> None:
        """Switch a server-everything toggle back off, even when the feature was cancelled."""
        with anyio.CancelScope(shield=True), anyio.move_on_after(5):
            try:
                await self.c.call_tool(self.naming.name(tool), {})
            except Exception as error:  # cleanup only: the feature's own outcome stands
                print(f"features.py: turning {tool} off failed: {describe(error)}", file=sys.stderr)
