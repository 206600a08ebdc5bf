// One client of `pegboard serve --http` with a bearer token, through the official TypeScript SDK
// (@modelcontextprotocol/sdk 1.x, `Client` over `StreamableHTTPClientTransport`). Run by
// tests/e2e_jwt_clients.rs with the SDK of target/test-deps (scripts/setup-test-deps.sh).
//
// Usage: node bearer_client.mjs NODE_MODULES_DIR URL TOKEN PLAN
//
// PLAN is a JSON list of calls, [{"name": ..., "arguments": {...}}, ...], made one after another in
// that order. The script lists the tools, makes the calls and prints ONE JSON line:
//   {"protocol_version": ..., "tools": [sorted names],
//    "calls": [{"name": ..., "error": {"code": ..., "message": ...}}
//              | {"name": ..., "result": {"is_error": ..., "text": ...}}, ...]}
// A call answered with a JSON-RPC error is recorded, not thrown; anything else that fails ends the
// script with the error on stderr and exit code 1.

import { createRequire } from "node:module";
import { join } from "node:path";

const [modules, url, token, plan] = process.argv.slice(2);
if (!modules || !url || !token || !plan) {
  console.error("usage: node bearer_client.mjs NODE_MODULES_DIR URL TOKEN PLAN");
  process.exit(2);
}
const require = createRequire(join(modules, "noop.js"));
const { Client } = require("@modelcontextprotocol/sdk/client/index.js");
const { StreamableHTTPClientTransport } = require("@modelcontextprotocol/sdk/client/streamableHttp.js");
const { McpError } = require("@modelcontextprotocol/sdk/types.js");

async function main() {
  const transport = new StreamableHTTPClientTransport(new URL(url), {
    requestInit: { headers: { Authorization: `Bearer ${token}` } },
  });
  const client = new Client({ name: "pegboard-e2e-jwt", version: "1.0.0" }, { capabilities: {} });
  await client.connect(transport);
  const tools = (await client.listTools()).tools.map((t) => t.name).sort();
  const calls = [];
  for (const step of JSON.parse(plan)) {
    try {
      const result = await client.callTool({ name: step.name, arguments: step.arguments ?? {} });
      const text = (result.content ?? []).filter((b) => b.type === "text").map((b) => b.text).join("\n");
      calls.push({ name: step.name, result: { is_error: Boolean(result.isError), text } });
    } catch (error) {
      if (!(error instanceof McpError)) throw error;
      calls.push({ name: step.name, error: { code: error.code, message: error.message } });
    }
  }
  const out = { protocol_version: transport.protocolVersion ?? null, tools, calls };
  await transport.terminateSession();
  await client.close();
  process.stdout.write(JSON.stringify(out) + "\n");
}

main().catch((error) => {
  console.error(error && error.stack ? error.stack : String(error));
  process.exit(1);
});
