// The official TypeScript SDK (@modelcontextprotocol/sdk 1.x) as a client of the gateway in code
// mode. Run by tests/interop_ts_code_mode.rs with the SDK of target/test-deps.
//
// Usage: node code_mode.mjs NODE_MODULES_DIR stdio PEGBOARD CONFIG [SERVE_ARG...]
//        node code_mode.mjs NODE_MODULES_DIR http URL
//
// Each scenario is run as one `run_code` script and as the same calls one by one with plain
// `tools/call`; prints ONE JSON line: {"tools": [...], "scenarios": {name: {"code": value or
// {"error": text}, "direct": value}}}.

import { createRequire } from "node:module";
import { join } from "node:path";

const [modules, kind, ...rest] = process.argv.slice(2);
const require = createRequire(join(modules, "noop.js"));
const { Client } = require("@modelcontextprotocol/sdk/client/index.js");
const { StdioClientTransport } = require("@modelcontextprotocol/sdk/client/stdio.js");
const { StreamableHTTPClientTransport } = require("@modelcontextprotocol/sdk/client/streamableHttp.js");

const text = (result) => result.content.filter((b) => b.type === "text").map((b) => b.text).join("\n");

async function direct(client, name, args) {
  const result = await client.callTool({ name, arguments: args });
  if (result.isError) {
    const error = new Error(text(result));
    error.tool = name;
    throw error;
  }
  return text(result);
}

async function runCode(client, code) {
  const result = await client.callTool({ name: "run_code", arguments: { code } });
  if (result.isError) return { error: text(result) };
  return JSON.parse(text(result).split("\nconsole:\n")[0]);
}

const number = (t) => parseFloat(t.split(" = ")[1]);

const scenarios = {
  chain: [
    `const a = await tools.units.convert({value: 10, from: "km", to: "mi"});
     const b = await call("units-convert", {value: parseFloat(a.split(" = ")[1]), from: "mi", to: "ft"});
     return [a, b];`,
    async (c) => {
      const a = await direct(c, "units-convert", { value: 10, from: "km", to: "mi" });
      return [a, await direct(c, "units-convert", { value: number(a), from: "mi", to: "ft" })];
    },
  ],
  loop: [
    `const out = []; for (let v = 1; v <= 5; v++) out.push(await tools.units.convert({value: v, from: "kg", to: "lb"})); return out;`,
    async (c) => {
      const out = [];
      for (let v = 1; v <= 5; v++) out.push(await direct(c, "units-convert", { value: v, from: "kg", to: "lb" }));
      return out;
    },
  ],
  branch: [
    `const f = parseFloat((await tools.units.convert({value: 100, from: "C", to: "F"})).split(" = ")[1]);
     return f > 200 ? ["hot", await tools.units.convert({value: f, from: "F", to: "K"})] : ["cold", await tools.units.list_units()];`,
    async (c) => {
      const f = number(await direct(c, "units-convert", { value: 100, from: "C", to: "F" }));
      return f > 200
        ? ["hot", await direct(c, "units-convert", { value: f, from: "F", to: "K" })]
        : ["cold", await direct(c, "units-list_units", {})];
    },
  ],
  parallel: [
    `return await Promise.all([1,2,3,4,5,6,7,8,9,10].map(v => tools.units.convert({value: v, from: "m", to: "ft"})));`,
    async (c) => {
      const out = [];
      for (let v = 1; v <= 10; v++) out.push(await direct(c, "units-convert", { value: v, from: "m", to: "ft" }));
      return out;
    },
  ],
  failing: [
    `try { await tools.units.convert({value: 1, from: "km", to: "parsec"}); return ["no error"]; }
     catch (e) { return [e.name, e.tool, e.message]; }`,
    async (c) => {
      try {
        await direct(c, "units-convert", { value: 1, from: "km", to: "parsec" });
        return ["no error"];
      } catch (e) {
        return ["ToolError", e.tool, e.message];
      }
    },
  ],
};

async function main() {
  const transport =
    kind === "stdio"
      ? new StdioClientTransport({ command: rest[0], args: ["serve", "--config", rest[1], ...rest.slice(2)], stderr: "inherit" })
      : new StreamableHTTPClientTransport(new URL(rest[0]));
  const client = new Client({ name: "pegboard-code-mode-test", version: "0" });
  await client.connect(transport);
  const tools = (await client.listTools()).tools.map((t) => t.name);
  const out = { tools, scenarios: {} };
  for (const [name, [code, byHand]] of Object.entries(scenarios)) {
    out.scenarios[name] = { code: await runCode(client, code), direct: await byHand(client) };
  }
  await client.close();
  process.stdout.write(JSON.stringify(out) + "\n");
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
