// The MCP feature matrix, driven by the official TypeScript SDK client (@modelcontextprotocol/sdk 1.x).
//
// Usage:
//   node features.mjs [--namespace NS] [--timeout S] [--only a,b] [--node-modules DIR] stdio COMMAND [ARGS...]
//   node features.mjs [--namespace NS] [--timeout S] [--only a,b] [--node-modules DIR] http URL
//
// The same features, checks and output as ../python/features.py (read its docstring): one JSON line
// per feature on stdout, {"feature", "ok", "detail", "value", "ms"}; `value` must be equal between a
// direct run and a run through the gateway. Every feature has a deadline; the exit code is 0 once
// every feature reported (failed ones included), 1 on a crash past that.
// The SDK is loaded from --node-modules (default: $PEGBOARD_NODE_MODULES, else
// <workspace>/target/test-deps/node/node_modules, where scripts/setup-test-deps.sh installs it).

import { createRequire } from "node:module";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { gunzipSync } from "node:zlib";
import { Naming } from "./naming.mjs";
import { FEATURES, Matrix } from "./matrix.mjs";

function parseArgs(argv) {
  const opts = { namespace: null, timeout: 15, only: null, nodeModules: null };
  let i = 0;
  for (; i < argv.length && argv[i].startsWith("--"); i += 2) {
    const key = argv[i].slice(2);
    const value = argv[i + 1];
    if (key === "namespace") opts.namespace = value;
    else if (key === "timeout") opts.timeout = Number(value);
    else if (key === "only") opts.only = value.split(",");
    else if (key === "node-modules") opts.nodeModules = value;
    else throw new Error(`unknown option --${key}`);
  }
  opts.transport = argv[i];
  opts.target = argv.slice(i + 1);
  if (!["stdio", "http"].includes(opts.transport) || opts.target.length === 0) {
    throw new Error("usage: features.mjs [options] stdio COMMAND [ARGS...] | http URL");
  }
  return opts;
}

function loadSdk(nodeModules) {
  const here = dirname(fileURLToPath(import.meta.url));
  const dir = nodeModules || process.env.PEGBOARD_NODE_MODULES || resolve(here, "../../../../../target/test-deps/node/node_modules");
  // One loader (require) for every SDK module, so the schema objects are the SDK's own instances.
  const require = createRequire(join(dir, "noop.js"));
  return {
    ...require("@modelcontextprotocol/sdk/client/index.js"),
    ...require("@modelcontextprotocol/sdk/client/stdio.js"),
    ...require("@modelcontextprotocol/sdk/client/streamableHttp.js"),
    types: require("@modelcontextprotocol/sdk/types.js"),
    version: require("@modelcontextprotocol/sdk/package.json").version,
  };
}

function emit(line) {
  process.stdout.write(JSON.stringify(line) + "\n");
}

function describe(error) {
  const code = error && error.code !== undefined ? ` ${error.code}` : "";
  return `${(error && error.name) || "Error"}${code}: ${(error && error.message) || String(error)}`;
}

/** Run `body(signal)` with a deadline; on expiry the signal aborts (the SDK then sends notifications/cancelled). */
async function withDeadline(seconds, body) {
  const controller = new AbortController();
  let timer;
  const expired = new Promise((_, reject) => {
    timer = setTimeout(() => {
      controller.abort(new Error(`deadline of ${seconds} s`));
      reject(new Error(`timed out after ${seconds} s`));
    }, seconds * 1000);
  });
  try {
    return await Promise.race([body(controller.signal), expired]);
  } finally {
    clearTimeout(timer);
  }
}

async function main() {
  const opts = parseArgs(process.argv.slice(2));
  const sdk = loadSdk(opts.nodeModules);
  const ctx = { opts, sdk, naming: new Naming(opts.namespace), gunzipSync };
  const wanted = FEATURES.filter(([name]) => !opts.only || name === "connect" || opts.only.includes(name));
  const done = new Set();
  try {
    const matrix = await connectMatrix(ctx);
    for (const [name, body, timeout] of wanted) {
      const t0 = Date.now();
      let line;
      try {
        const [value, detail] = await withDeadline(timeout || opts.timeout, (signal) => body(matrix, signal));
        line = { feature: name, ok: true, detail: detail ?? null, value: value ?? null };
      } catch (error) {
        line = { feature: name, ok: false, detail: describe(error), value: null };
      }
      line.ms = Date.now() - t0;
      emit(line);
      done.add(name);
    }
    await withDeadline(10, () => matrix.client.close()).catch((e) => console.error(`features.mjs: close: ${describe(e)}`));
  } catch (error) {
    console.error(error);
    for (const [name] of wanted) {
      if (!done.has(name)) emit({ feature: name, ok: false, detail: `no connection: ${describe(error)}`, value: null });
    }
  }
}

async function connectMatrix(ctx) {
  const matrix = new Matrix(ctx);
  await withDeadline(ctx.opts.timeout, () => matrix.connect());
  return matrix;
}

main().then(
  () => process.exit(0),
  (error) => {
    // A failure past the per-feature handling: the matrix test requires exit status 0.
    console.error(error);
    process.exit(1);
  },
);
