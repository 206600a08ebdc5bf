"""The official MCP Python SDK (mcp 2.x) as a client of the gateway in code mode.

Usage:
    code_mode.py --stdio PEGBOARD CONFIG [--serve-arg ARG ...] SCENARIO
    code_mode.py --http URL [--token TOKEN] SCENARIO

SCENARIO:
    parity   each script (chain, loop, branch, parallel, failing call) run with `run_code` and the
             same calls made one by one with plain `tools/call`; plus describe_tools, a syntax
             error, a limit, progress notifications.
    hidden   as a client that may not see `units-convert`: the script's call and a direct call.
    busy     (HTTP) one session runs a script that loops until its time limit while a second
             session calls tools; prints what each got and which finished first.
    limits   (HTTP) as busy, and meanwhile the first session runs a script that hits each other
             limit (memory, stack, calls, output, log, a thrown non-error, a promise nothing
             settles, a pending call past the time limit); prints each run's answer, the second
             session's answers and their times.

Prints ONE JSON line to stdout; everything else goes to stderr.
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
    parser.add_argument("--serve-arg", action="append", default=[], help="an extra `pegboard serve` argument (stdio)")
    parser.add_argument("--token", help="the bearer token of the client to be (HTTP)")
    parser.add_argument("scenario", choices=["parity", "hidden", "busy", "limits"])
    return parser.parse_args()


def server_of(args: argparse.Namespace):
    from mcp import StdioServerParameters

    if args.stdio:
        pegboard, config = args.stdio
        return StdioServerParameters(command=pegboard, args=["serve", "--config", config, *args.serve_arg])
    return args.http


def texts(result) -> str:
    return "\n".join(block.text for block in result.content if getattr(block, "type", None) == "text")


async def direct(client, name: str, arguments: dict) -> str:
    result = await client.call_tool(name, arguments)
    if result.is_error:
        raise ToolFailed(name, texts(result))
    return texts(result)


class ToolFailed(Exception):
    def __init__(self, tool: str, message: str):
        super().__init__(message)
        self.tool = tool
        self.message = message


async def run_code(client, code: str, progress=None) -> dict:
    result = await client.call_tool("run_code", {"code": code}, progress_callback=progress)
    return {
        "is_error": bool(result.is_error),
        "text": texts(result),
        "structured": result.structured_content,
    }


# Each scenario: a script, and the same calls made one by one from here.
CHAIN = """
const a = await tools.units.convert({value: 10, from: "km", to: "mi"});
const miles = parseFloat(a.split(" = ")[1]);
const b = await call("units-convert", {value: miles, from: "mi", to: "ft"});
return [a, b];
"""


async def chain(client):
    a = await direct(client, "units-convert", {"value": 10, "from": "km", "to": "mi"})
    miles = float(a.split(" = ")[1].split(" ")[0])
    b = await direct(client, "units-convert", {"value": miles, "from": "mi", "to": "ft"})
    return [a, b]


LOOP = """
const out = [];
for (let v = 1; v <= 5; v++) out.push(await tools.units.convert({value: v, from: "kg", to: "lb"}));
return out;
"""


async def loop(client):
    return [await direct(client, "units-convert", {"value": v, "from": "kg", "to": "lb"}) for v in range(1, 6)]


BRANCH = """
const t = await tools.units.convert({value: 100, from: "C", to: "F"});
const f = parseFloat(t.split(" = ")[1]);
if (f > 200) return ["hot", await tools.units.convert({value: f, from: "F", to: "K"})];
return ["cold", await tools.units.list_units()];
"""


async def branch(client):
    t = await direct(client, "units-convert", {"value": 100, "from": "C", "to": "F"})
    f = float(t.split(" = ")[1].split(" ")[0])
    if f > 200:
        return ["hot", await direct(client, "units-convert", {"value": f, "from": "F", "to": "K"})]
    return ["cold", await direct(client, "units-list_units", {})]


PARALLEL = """
const values = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10];
return await Promise.all(values.map(v => tools.units.convert({value: v, from: "m", to: "ft"})));
"""


async def parallel(client):
    return [await direct(client, "units-convert", {"value": v, "from": "m", "to": "ft"}) for v in range(1, 11)]


FAILING = """
try {
  await tools.units.convert({value: 1, from: "km", to: "parsec"});
  return ["no error"];
} catch (e) {
  return [e.name, e.tool, e.message, e instanceof ToolError];
}
"""


async def failing(client):
    try:
        await direct(client, "units-convert", {"value": 1, "from": "km", "to": "parsec"})
        return ["no error"]
    except ToolFailed as e:
        return ["ToolError", e.tool, e.message, True]


async def parity(client) -> dict:
    tools = await client.list_tools()
    out: dict = {"tools": [t.name for t in tools.tools], "instructions": None, "scenarios": {}}
    for name, code, by_hand in [
        ("chain", CHAIN, chain),
        ("loop", LOOP, loop),
        ("branch", BRANCH, branch),
        ("parallel", PARALLEL, parallel),
        ("failing", FAILING, failing),
    ]:
        ran = await run_code(client, code)
        out["scenarios"][name] = {"code": ran, "direct": await by_hand(client)}
    # A note added by a script is there for a plain call: the script's calls reach the server.
    added = await run_code(client, 'return await tools.notes.add_note({title: "from-code-7f3", body: "written by run_code"})')
    out["added"] = added
    out["search_after"] = await direct(client, "notes-search", {"query": "from-code-7f3"})
    described = await client.call_tool("describe_tools", {"names": ["units-convert", "notes-search", "nope-x"]})
    out["describe"] = texts(described)
    out["syntax"] = await run_code(client, "const a = 1;\nconst b = ;\nreturn a;")
    out["thrown"] = await run_code(client, "await tools.units.list_units({});\nnull.x;")
    steps = []

    async def progress(value, total, message):
        steps.append({"progress": value, "message": message})

    out["with_progress"] = await run_code(client, PARALLEL, progress)
    out["progress"] = steps
    return out


async def hidden(client) -> dict:
    tools = await client.list_tools()
    out: dict = {"tools": [t.name for t in tools.tools]}
    out["script"] = await run_code(
        client,
        """try { await tools.units.convert({value: 1, from: "km", to: "mi"}); return "reached" }
           catch (e) { return [typeof tools.units.convert, e.message] }""",
    )
    out["by_call"] = await run_code(
        client,
        """try { await call("units-convert", {value: 1, from: "km", to: "mi"}); return "reached" }
           catch (e) { return e.message }""",
    )
    out["allowed"] = await run_code(client, "return await tools.units.list_units({})")
    out["describe"] = texts(await client.call_tool("describe_tools", {"names": ["units-convert"]}))
    try:
        result = await client.call_tool("units-convert", {"value": 1, "from": "km", "to": "mi"})
        out["direct"] = {"is_error": bool(result.is_error), "text": texts(result)}
    except Exception as e:  # the SDK raises a JSON-RPC error
        out["direct"] = {"error": str(e)}
    return out


async def busy(args) -> dict:
    from mcp import Client

    order = []
    spinning = asyncio.Event()

    async def progress(value, total, message):
        spinning.set()

    async def runaway():
        async with Client(server_of(args), mode="legacy", read_timeout_seconds=120) as client:
            # Its one call's progress says the script is past it, in its endless loop.
            ran = await run_code(client, "await tools.units.list_units({});\nwhile (true) {}", progress)
            order.append("runaway")
            return ran

    async def other():
        await spinning.wait()
        async with Client(server_of(args), mode="legacy", read_timeout_seconds=60) as client:
            got = []
            for v in range(1, 6):
                got.append(await direct(client, "units-convert", {"value": v, "from": "km", "to": "mi"}))
            got.append(await run_code(client, "return 6 * 7"))
            order.append("other")
            return got

    runaway_task = asyncio.create_task(runaway())
    other_result = await other()
    runaway_result = await runaway_task
    return {"other": other_result, "runaway": runaway_result, "order": order}


# Each limit's script (the config's limits are small: see interop_python_code_mode.rs).
LIMITS = {
    "memory": "const a = []; while (true) a.push(new Array(100000).fill(1));",
    "stack": "function f(n) { return f(n + 1) + 1 }\nreturn f(0);",
    "max_calls": "for (let i = 0; i < 4; i++) await tools.units.list_units({});\nreturn 'all made';",
    "output": "return 'x'.repeat(64 * 1024);",
    "log": "for (let i = 0; i < 10000; i++) console.log('line ' + i);\nreturn 'logged';",
    "thrown": "throw {code: 7};",
    "stalled": "await new Promise(() => {});",
    "pending": "await call('t-sleep', {ms: 60000});\nreturn 'slept';",
}


async def limits(args) -> dict:
    import time
    from mcp import Client

    order = []
    spinning = asyncio.Event()

    async def progress(value, total, message):
        spinning.set()

    async def runaway():
        async with Client(server_of(args), mode="legacy", read_timeout_seconds=120) as client:
            ran = await run_code(client, "await tools.units.list_units({});\nwhile (true) {}", progress)
            order.append("runaway")
            return ran

    async def each_limit():
        await spinning.wait()
        async with Client(server_of(args), mode="legacy", read_timeout_seconds=120) as client:
            names = list(LIMITS)
            ran = await asyncio.gather(*(run_code(client, LIMITS[n]) for n in names))
            order.append("limits")
            return dict(zip(names, ran))

    async def forty(client):
        got, ms = [], []
        for v in range(1, 41):
            started = time.monotonic()
            got.append(await direct(client, "units-convert", {"value": v, "from": "km", "to": "mi"}))
            ms.append((time.monotonic() - started) * 1000)
        return {"answers": got, "ms": ms}

    async def other():
        await spinning.wait()
        async with Client(server_of(args), mode="legacy", read_timeout_seconds=60) as client:
            got = await forty(client)
            order.append("other")
            return got

    # The same calls before any script runs: the latency to compare with.
    async with Client(server_of(args), mode="legacy", read_timeout_seconds=60) as client:
        quiet = await forty(client)
    runaway_task = asyncio.create_task(runaway())
    limits_task = asyncio.create_task(each_limit())
    other_result = await other()
    return {
        "quiet": quiet,
        "other": other_result,
        "limits": await limits_task,
        "runaway": await runaway_task,
        "order": order,
    }


async def as_named_client(args) -> dict:
    """`hidden` over HTTP as the client whose bearer token is `--token` (the SDK's HTTP transport
    on an httpx2 client that sends it)."""
    import httpx2
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {args.token}"}) as http:
        transport = streamable_http_client(args.http, http_client=http)
        async with Client(transport, mode="legacy", read_timeout_seconds=60) as client:
            return await hidden(client)


async def run(args: argparse.Namespace) -> dict:
    from mcp import Client

    if args.scenario == "busy":
        return await busy(args)
    if args.scenario == "limits":
        return await limits(args)
    if args.http and args.token:
        return await as_named_client(args)
    async with Client(server_of(args), mode="legacy", read_timeout_seconds=60) as client:
        if args.scenario == "parity":
            out = await parity(client)
            out["instructions"] = client.instructions
            return out
        return await hidden(client)


def main() -> int:
    args = parse_args()
    out = asyncio.run(run(args))
    sys.stdout.write(json.dumps(out) + "\n")
    sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
