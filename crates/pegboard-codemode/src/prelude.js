// The globals a run's script gets: `tools`, `call`, `ToolError`, `console`. Evaluated once per
// run, before the script, as a function of the two host functions (never globals themselves:
// the script reaches the host only through `call`) and the layout of `tools` (names.rs).
(function (hostCall, hostLog, layoutJson) {
  "use strict";
  const parse = JSON.parse;
  const stringify = JSON.stringify;
  const define = Object.defineProperty;

  class ToolError extends Error {
    constructor(message, tool) {
      super(message);
      this.name = "ToolError";
      this.tool = tool;
    }
  }

  async function call(name, args) {
    if (typeof name !== "string") {
      throw new TypeError("call(name, args): name must be a tool's board name, e.g. \"units-convert\"");
    }
    let text;
    try {
      text = args === undefined || args === null ? "{}" : stringify(args);
    } catch (e) {
      throw new TypeError("call(\"" + name + "\"): the arguments are not JSON: " + e.message);
    }
    if (text === undefined || text[0] !== "{") {
      throw new TypeError("call(\"" + name + "\"): the arguments must be an object");
    }
    const reply = parse(await hostCall(name, text));
    if (reply.ok) return reply.value;
    throw new ToolError(reply.error, name);
  }

  const tools = {};
  for (const { name, group, key } of parse(layoutJson)) {
    const fn = (args) => call(name, args);
    if (group === null) {
      if (!Object.prototype.hasOwnProperty.call(tools, key)) {
        define(tools, key, { value: fn, writable: true, enumerable: true, configurable: true });
      }
    } else {
      // Defined, not assigned: a namespace such as `__proto__` is an own property like any other.
      if (!Object.prototype.hasOwnProperty.call(tools, group)) {
        define(tools, group, { value: {}, writable: true, enumerable: true, configurable: true });
      }
      const space = tools[group];
      if (typeof space === "object") {
        define(space, key, { value: fn, writable: true, enumerable: true, configurable: true });
      }
    }
  }

  function show(value) {
    if (typeof value === "string") return value;
    if (value instanceof Error) return value.name + ": " + value.message;
    try {
      const text = stringify(value);
      return text === undefined ? String(value) : text;
    } catch (e) {
      return String(value);
    }
  }
  function log(...values) {
    hostLog(values.map(show).join(" "));
  }
  const console = { log, info: log, warn: log, error: log, debug: log };

  for (const [name, value] of [["tools", tools], ["call", call], ["ToolError", ToolError], ["console", console]]) {
    define(globalThis, name, { value, writable: true, configurable: true, enumerable: false });
  }
})
