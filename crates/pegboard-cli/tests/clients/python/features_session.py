"""Features about the session: subscriptions, logging, progress, cancellation, the server's
requests to the client (sampling, elicitation, roots) and 2025 tasks. Each returns (value, detail)
and raises on failure."""

from __future__ import annotations

import json
import time
from typing import Any

import anyio
import mcp_types as types
from mcp import Client

from matrix_base import DOC_URI, ROOT_A, ROOT_B, Check, Inbox, MatrixBase, describe, expect, texts


class SessionFeatures(MatrixBase):
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
