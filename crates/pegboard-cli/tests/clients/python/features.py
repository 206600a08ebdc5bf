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

import argparse
import json
import os
import sys
import time
import traceback
from typing import Any, Awaitable, Callable

import warnings

import anyio
import mcp_types as types
from mcp import Client, StdioServerParameters
from mcp.shared.exceptions import MCPDeprecationWarning

# Logging, roots and resources/subscribe are deprecated in 2026-07-28; this client tests them anyway.
warnings.filterwarnings("ignore", category=MCPDeprecationWarning)

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from naming import Naming  # noqa: E402

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


class Matrix:
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

    # --- features: each returns (value, detail) ---------------------------------------------
    async def f_connect(self) -> tuple[Any, Any]:
        info = self.c.server_info
        return None, {"protocol_version": self.c.protocol_version, "server": info and info.name}

    async def f_tools_list(self) -> tuple[Any, Any]:
        tools, cursor = [], None
        while True:
            page = await self.c.list_tools(cursor=cursor)
            tools += page.tools
            if not (cursor := page.next_cursor):
                break
        self.tools = {self.naming.decode_name(t.name): t for t in tools}
        missing = [n for n in EXPECTED_TOOLS if n not in self.tools]
        expect(not missing, f"{len(tools)} tools, missing {missing}")
        value = {n: {"title": t.title, "description": t.description,
                     "inputSchema": t.input_schema, "outputSchema": t.output_schema,
                     "annotations": t.annotations and t.annotations.model_dump(exclude_none=True)}
                 for n, t in sorted(self.tools.items())}
        execution = {n: t.execution.task_support for n, t in self.tools.items() if t.execution}
        return value, {"count": len(tools), "execution": execution}

    async def f_echo(self) -> tuple[Any, Any]:
        result = await self.call("echo", {"message": "pegboard"})
        expect(texts(result) == ["Echo: pegboard"], f"echo answered {texts(result)}")
        return texts(result), None

    async def f_resources_list(self) -> tuple[Any, Any]:
        items, cursor = [], None
        while True:
            page = await self.c.list_resources(cursor=cursor)
            items += page.resources
            if not (cursor := page.next_cursor):
                break
        value = sorted([self.naming.decode_uri(str(r.uri)), r.name, r.mime_type] for r in items)
        expect(any(v[0] == DOC_URI for v in value), f"{DOC_URI} not listed")
        return value, {"count": len(items)}

    async def f_resource_templates(self) -> tuple[Any, Any]:
        page = await self.c.list_resource_templates()
        value = sorted([self.naming.decode_uri(t.uri_template), t.name, t.mime_type]
                       for t in page.resource_templates)
        listed = [v[0] for v in value]
        expect(TEXT_TEMPLATE in listed and BLOB_TEMPLATE in listed, f"templates listed: {listed}")
        return value, None

    async def read(self, original_uri: str) -> types.ReadResourceResult:
        shown = self.naming.uri(original_uri)
        result = await self.c.read_resource(shown)
        expect(result.contents, f"{shown}: no contents")
        expect(str(result.contents[0].uri) == shown, f"read {shown}, contents name {result.contents[0].uri}")
        return result

    async def f_resource_read(self) -> tuple[Any, Any]:
        doc = (await self.read(DOC_URI)).contents[0]
        expect(isinstance(doc, types.TextResourceContents) and doc.text, "architecture.md has no text")
        dyn = (await self.read("demo://resource/dynamic/text/7")).contents[0]
        expect(isinstance(dyn, types.TextResourceContents), "dynamic text resource is not text")
        head = dyn.text.split(" created at ")[0]
        expect(head == "Resource 7: This is a plaintext resource", f"template read gave {dyn.text!r}")
        return {"doc": [doc.mime_type, len(doc.text)], "template": head}, None

    async def f_resource_links(self) -> tuple[Any, Any]:
        result = await self.call("get-resource-links", {"count": 2})
        links = [b for b in result.content if isinstance(b, types.ResourceLink)]
        expect(len(links) == 2, f"{len(links)} resource links")
        value = []
        for link in links:
            original = self.naming.decode_uri(str(link.uri))
            contents = (await self.read(original)).contents[0]
            value.append([original, link.name, link.mime_type, type(contents).__name__])
        return value, None

    async def f_embedded_resource(self) -> tuple[Any, Any]:
        result = await self.call("get-resource-reference", {"resourceType": "Text", "resourceId": 3})
        embedded = [b for b in result.content if isinstance(b, types.EmbeddedResource)]
        expect(len(embedded) == 1, f"{len(embedded)} embedded resources")
        original = self.naming.decode_uri(str(embedded[0].resource.uri))
        expect(original == "demo://resource/dynamic/text/3", f"embedded {original}")
        await self.read(original)
        return original, None

    async def f_session_resource_link(self) -> tuple[Any, Any]:
        import base64
        import gzip

        payload = "pegboard matrix payload"
        data = "data:text/plain;base64," + base64.b64encode(payload.encode()).decode()
        result = await self.call("gzip-file-as-resource", {"name": "matrix.txt.gz", "data": data})
        links = [b for b in result.content if isinstance(b, types.ResourceLink)]
        expect(len(links) == 1, f"{len(links)} resource links")
        original = self.naming.decode_uri(str(links[0].uri))
        blob = (await self.read(original)).contents[0]
        expect(isinstance(blob, types.BlobResourceContents), "session resource is not a blob")
        text = gzip.decompress(base64.b64decode(blob.blob)).decode()
        expect(text == payload, f"gunzipped {text!r}")
        return [original, text], None

    async def f_subscribe(self) -> tuple[Any, Any]:
        shown = self.naming.uri(DOC_URI)
        if self.modern():
            async with self.c.listen(resource_subscriptions=[shown]) as sub:
                await self.call("toggle-subscriber-updates")
                try:
                    async for event in sub:
                        uri = getattr(event, "uri", None)
                        if uri == shown:
                            return self.naming.decode_uri(uri), {"via": "listen"}
                finally:
                    await self.stop_toggle("toggle-subscriber-updates")
            raise Check("listen stream ended without an update")
        await self.c.subscribe_resource(shown)
        await self.call("toggle-subscriber-updates")
        try:
            uri = await self.updates.wait_for(lambda u: str(u) == shown)
        finally:
            await self.stop_toggle("toggle-subscriber-updates")
            with anyio.CancelScope(shield=True), anyio.move_on_after(5):
                await self.c.unsubscribe_resource(shown)
        return self.naming.decode_uri(str(uri)), {"via": "resources/subscribe"}

    async def f_prompts_list(self) -> tuple[Any, Any]:
        page = await self.c.list_prompts()
        value = sorted([self.naming.decode_name(p.name), sorted([a.name, bool(a.required)] for a in p.arguments or [])]
                       for p in page.prompts)
        names = [v[0] for v in value]
        expect(all(p in names for p in EXPECTED_PROMPTS), f"prompts: {names}")
        return value, None

    async def f_prompt_get(self) -> tuple[Any, Any]:
        result = await self.c.get_prompt(self.naming.name("args-prompt"), {"city": "Paris", "state": "Texas"})
        value = [[m.role, getattr(m.content, "text", None)] for m in result.messages]
        expect(value == [["user", "What's weather in Paris, Texas?"]], f"messages {value}")
        return value, None

    async def f_prompt_embedded_resource(self) -> tuple[Any, Any]:
        result = await self.c.get_prompt(self.naming.name("resource-prompt"), {"resourceType": "Text", "resourceId": "2"})
        embedded = [m.content for m in result.messages if isinstance(m.content, types.EmbeddedResource)]
        expect(len(embedded) == 1, f"{len(embedded)} embedded resources in {len(result.messages)} messages")
        original = self.naming.decode_uri(str(embedded[0].resource.uri))
        expect(original == "demo://resource/dynamic/text/2", f"embedded {original}")
        await self.read(original)
        return original, None

    async def f_complete_prompt(self) -> tuple[Any, Any]:
        ref = types.PromptReference(name=self.naming.name("completable-prompt"))
        dept = await self.c.complete(ref, {"name": "department", "value": "En"})
        people = await self.c.complete(ref, {"name": "name", "value": ""}, {"department": "Engineering"})
        value = [dept.completion.values, people.completion.values]
        expect(value == [["Engineering"], ["Alice", "Bob", "Charlie"]], f"completions {value}")
        return value, None

    async def f_complete_resource_template(self) -> tuple[Any, Any]:
        ref = types.ResourceTemplateReference(uri=self.naming.uri(TEXT_TEMPLATE))
        result = await self.c.complete(ref, {"name": "resourceId", "value": "42"})
        expect(result.completion.values == ["42"], f"completions {result.completion.values}")
        return result.completion.values, None

    async def f_logging_set_level(self) -> tuple[Any, Any]:
        await self.c.set_logging_level("debug")
        return "debug", None

    async def f_logging_message(self) -> tuple[Any, Any]:
        await self.call("toggle-simulated-logging")
        try:
            simulated = lambda p: isinstance(p.data, str) and ("level message" in p.data or "level-message" in p.data)
            message = await self.logs.wait_for(simulated)
        finally:
            await self.stop_toggle("toggle-simulated-logging")
        self.naming.check_logger(message.logger)
        return "simulated log message", {"level": message.level, "logger": message.logger, "data": message.data}

    async def long_op(self, client: Client, steps: int, duration: float,
                      token: str | None = None, inbox: Inbox | None = None) -> list[list[float]]:
        """The long operation; its progress through `progress_callback`, or, given `token`, sent with
        `_meta.progressToken = token` and collected from `inbox`."""
        seen: list[list[float]] = []

        async def on_progress(progress: float, total: float | None, _message: str | None) -> None:
            seen.append([progress, total])

        name, arguments = self.naming.name("trigger-long-running-operation"), {"duration": duration, "steps": steps}
        if token is None:
            result = await client.call_tool(name, arguments, progress_callback=on_progress)
        else:
            result = await client.call_tool(name, arguments, meta={"progressToken": token})
        expect(not result.is_error and "completed" in " ".join(texts(result)), f"long op: {texts(result)}")
        if inbox is not None:
            # The last notification may still be queued behind the result; it has 3 s to arrive.
            with anyio.move_on_after(3):
                await inbox.wait_for(lambda p: p.progress_token == token and p.progress == steps)
            seen = [[p.progress, p.total] for p in inbox.items if p.progress_token == token]
        return seen

    async def f_progress(self) -> tuple[Any, Any]:
        seen = await self.long_op(self.c, 3, 0.6)
        expect(seen == [[1, 3], [2, 3], [3, 3]], f"progress notifications {seen}")
        return seen, None

    async def f_progress_two_clients(self) -> tuple[Any, Any]:
        # Two sessions at once, both calls with the same progress token; different step counts
        # show whether a notification reached the wrong session.
        seen: dict[int, list[list[float]]] = {}

        async def one(steps: int) -> None:
            inbox = Inbox()
            async with self.new_client(callbacks=False, progress=inbox) as client:
                seen[steps] = await self.long_op(client, steps, 1.0, token="matrix-shared-token", inbox=inbox)

        async with anyio.create_task_group() as group:
            group.start_soon(one, 3)
            group.start_soon(one, 4)
        value = [seen[3], seen[4]]
        want = [[[i, 3] for i in (1, 2, 3)], [[i, 4] for i in (1, 2, 3, 4)]]
        expect(value == want, f"client A got {seen[3]}, client B got {seen[4]}")
        return value, None

    async def f_cancel(self) -> tuple[Any, Any]:
        started = Inbox()
        outcome: dict[str, Any] = {}

        async def on_progress(progress: float, _total: float | None, _message: str | None) -> None:
            started.push(progress)

        async def long_call() -> None:
            try:
                await self.c.call_tool(self.naming.name("trigger-long-running-operation"),
                                       {"duration": 30, "steps": 30}, progress_callback=on_progress)
                outcome["ended"] = "completed"
            except anyio.get_cancelled_exc_class():
                outcome["ended"] = "cancelled"
                raise
            except Exception as error:
                outcome["ended"] = describe(error)

        t0 = time.monotonic()
        async with anyio.create_task_group() as group:
            group.start_soon(long_call)
            # Cancel once the upstream is provably working on it (first progress); a gateway that
            # drops progress gets the cancel after 3 s instead.
            with anyio.move_on_after(3):
                await started.wait_for(lambda _: True)
            group.cancel_scope.cancel()
        expect(outcome.get("ended") == "cancelled", f"the call ended: {outcome.get('ended')}")
        healthy = await self.call("echo", {"message": "after cancel"})
        expect(texts(healthy) == ["Echo: after cancel"], f"echo after cancel: {texts(healthy)}")
        return "cancelled; server healthy", {"progress_before_cancel": len(started.items),
                                             "cancelled_after_s": round(time.monotonic() - t0, 2)}

    async def f_sampling(self) -> tuple[Any, Any]:
        self.sampled.clear()
        result = await self.call("trigger-sampling-request", {"prompt": "pegboard-sampling", "maxTokens": 20})
        expect(len(self.sampled) == 1, f"sampling callback called {len(self.sampled)} times")
        asked = self.sampled[0]
        text = " ".join(texts(result))
        expect("sampled by the matrix client" in text, f"tool result {text!r}")
        answer = json.loads(text.split("\n", 1)[1])
        return {"asked": [m.content.text for m in asked.messages], "maxTokens": asked.max_tokens,
                "answer": answer}, None

    async def f_elicitation_form(self) -> tuple[Any, Any]:
        self.elicited.clear()
        result = await self.call("trigger-elicitation-request")
        expect(len(self.elicited) == 1, f"elicitation callback called {len(self.elicited)} times")
        asked = self.elicited[0]
        expect(isinstance(asked, types.ElicitRequestFormParams), f"not a form elicitation: {asked}")
        lines = [t for t in texts(result) if "Raw result" not in t]
        expect(any("Name: Ada Lovelace" in t for t in lines), f"tool result {lines}")
        return {"message": asked.message, "fields": sorted(asked.requested_schema["properties"]),
                "result": lines}, None

    async def f_elicitation_url(self) -> tuple[Any, Any]:
        self.elicited.clear()
        url = "https://example.com/pegboard-auth"
        result = await self.call("trigger-url-elicitation", {"url": url, "elicitationId": "pb-matrix-1"})
        expect(len(self.elicited) == 1, f"elicitation callback called {len(self.elicited)} times")
        asked = self.elicited[0]
        expect(isinstance(asked, types.ElicitRequestURLParams) and asked.url == url, f"asked {asked}")
        lines = [t for t in texts(result) if "Raw result" not in t]
        expect(any("completed the URL elicitation" in t for t in lines), f"tool result {lines}")
        return {"url": asked.url, "id": asked.elicitation_id, "result": lines}, None

    async def f_roots(self) -> tuple[Any, Any]:
        text = " ".join(texts(await self.call("get-roots-list")))
        expect("(1 total)" in text and str(ROOT_A.uri) in text, f"get-roots-list: {text!r}")
        return text, {"roots_requests": len(self.roots_asked.items)}

    async def f_roots_list_changed(self) -> tuple[Any, Any]:
        self.roots = [ROOT_A, ROOT_B]
        asked_before = len(self.roots_asked.items)
        await self.c.send_roots_list_changed()
        await self.roots_asked.wait_for(lambda uris: len(uris) == 2)
        # The server stores the roots when our answer arrives, which we cannot observe; ask until
        # it shows them (bounded by the feature deadline).
        while True:
            text = " ".join(texts(await self.call("get-roots-list")))
            if "(2 total)" in text:
                break
            await anyio.sleep(0.05)
        expect(str(ROOT_B.uri) in text, f"get-roots-list: {text!r}")
        return text, {"roots_requests": len(self.roots_asked.items) - asked_before}

    async def f_task_2025(self) -> tuple[Any, Any]:
        tool = self.tools.get("simulate-research-query")
        support = tool.execution.task_support if tool and tool.execution else None
        arguments = {"topic": "pegboard"}
        if support == "required":
            # mcp 2.3 has no client API for 2025-11-25 tasks: the SEP-1686 calls, raw, as a
            # client that honours `execution.taskSupport` must make them.
            dispatcher = self.c.session._dispatcher  # noqa: SLF001
            opts = {"timeout": self.args.timeout}
            created = await dispatcher.send_raw_request(
                "tools/call", {"name": self.naming.name("simulate-research-query"), "arguments": arguments,
                               "task": {"ttl": 60000}}, opts)
            task_id = created["task"]["taskId"]
            raw = await dispatcher.send_raw_request("tasks/result", {"taskId": task_id}, opts)
            result = types.CallToolResult.model_validate(raw)
            via = "task-augmented call, tasks/result"
        else:
            result = await self.c.call_tool(self.naming.name("simulate-research-query"), arguments)
            via = "plain tools/call"
        text = " ".join(texts(result))
        expect(not result.is_error and text.startswith("# Research Report: pegboard"), f"{via}: {text[:200]!r}")
        return text, {"via": via, "taskSupport": support}


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
