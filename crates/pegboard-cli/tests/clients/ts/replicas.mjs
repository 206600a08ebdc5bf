// Stateful tool calls through a load balancer, with the official TypeScript SDK client (@modelcontextprotocol/sdk 1.x).
//
// Usage:
//   node replicas.mjs [--sessions S] [--calls C] [--concurrency K] [--timeout S] [--until FILE] [--node-modules DIR] URL
//
// The same runs and output as ../python/replicas.py (read its docstring): S sessions, K at a time, each
// calling `units-convert` C times; one JSON line {"ok", "total", "ids", "sessions", "errors"}; exit code 0.
// --until FILE: as in replicas.py, each session keeps calling until FILE exists (a line `started` is
// printed once every session has answered a call), and `total` counts the calls made.
// The SDK is loaded from --node-modules (default: $PEGBOARD_NODE_MODULES, else
// <workspace>/target/test-deps/node/node_modules, where scripts/setup-test-deps.sh installs it).

import { existsSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const opts = { sessions: 10, calls: 100, concurrency: 4, timeout: 10, until: null, nodeModules: null };
const argv = process.argv.slice(2);
let i = 0;
for (; i < argv.length && argv[i].startsWith("--"); i += 2) {
  const key = argv[i].slice(2).replace(/-(.)/g, (_, c) => c.toUpperCase());
  if (!(key in opts)) throw new Error(`unknown option ${argv[i]}`);
  opts[key] = key === "nodeModules" || key === "until" ? argv[i + 1] : Number(argv[i + 1]);
}
const url = argv[i];
if (!url) throw new Error("usage: replicas.mjs [options] URL");

const here = dirname(fileURLToPath(import.meta.url));
const dir = opts.nodeModules || process.env.PEGBOARD_NODE_MODULES || resolve(here, "../../../../../target/test-deps/node/node_modules");
const require = createRequire(join(dir, "noop.js"));
const { Client } = require("@modelcontextprotocol/sdk/client/index.js");
const { StreamableHTTPClientTransport } = require("@modelcontextprotocol/sdk/client/streamableHttp.js");

const tally = { ok: 0, total: 0, ids: 0, answered: 0, sessions: {}, errors: {} };
const count = (map, key, n = 1) => { map[key] = (map[key] || 0) + n; };
const describe = (e) => `${(e && e.name) || "Error"}${e && e.code !== undefined ? ` ${e.code}` : ""}: ${(e && e.message) || e}`.slice(0, 160);

async function oneSession() {
  const transport = new StreamableHTTPClientTransport(new URL(url));
  const client = new Client({ name: "pegboard-replicas", version: "0" });
  client.onerror = () => {}; // a failed background GET stream is not a failed call
  const timeout = opts.timeout * 1000;
  let done = 0;
  try {
    await client.connect(transport, { timeout });
    for (let n = 1; n <= opts.calls || (opts.until && !existsSync(opts.until)); n++) {
      tally.total++;
      try {
        const result = await client.callTool({ name: "units-convert", arguments: { value: n, from: "kg", to: "g" } }, undefined, { timeout });
        const text = (result.content || []).filter((b) => b.type === "text").map((b) => b.text);
        if (!result.isError && text.length === 1 && text[0] === `${n} kg = ${n * 1000} g`) {
          tally.ok++;
          if (n === 1 && ++tally.answered === opts.sessions && opts.until) process.stdout.write("started\n");
        } else count(tally.errors, `wrong answer: ${JSON.stringify(text)}`.slice(0, 160));
      } catch (e) {
        count(tally.errors, describe(e));
      }
      done = n;
    }
  } catch (e) {
    const missed = Math.max(opts.calls - done, 0);
    tally.total += missed;
    count(tally.errors, `session: ${describe(e)}`, Math.max(missed, 1));
  }
  const id = transport.sessionId || "";
  tally.ids += id ? 1 : 0;
  count(tally.sessions, id.includes(".") ? id.split(".")[0] : "");
  await client.close().catch(() => {});
}

let next = 0;
async function worker() {
  while (next < opts.sessions) {
    next++;
    await oneSession();
  }
}
await Promise.all(Array.from({ length: Math.min(opts.concurrency, opts.sessions) }, worker));
const errors = Object.fromEntries(Object.entries(tally.errors).sort((a, b) => b[1] - a[1]).slice(0, 5));
process.stdout.write(JSON.stringify({ ok: tally.ok, total: tally.total, ids: tally.ids, sessions: tally.sessions, errors }) + "\n");
