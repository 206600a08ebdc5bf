// The features of features.mjs: each is `async (matrix, signal) => [value, detail]` and throws on
// failure. Same checks and values as ../python/features.py, through the TypeScript SDK's Client.

const CAPABILITIES = { sampling: {}, elicitation: { form: {}, url: {} }, roots: { listChanged: true } };
const ROOT_A = { uri: "file:///tmp/pegboard-matrix/a", name: "matrix-a" };
const ROOT_B = { uri: "file:///tmp/pegboard-matrix/b", name: "matrix-b" };
// server-everything 2026.8.31's tools for a client with sampling, elicitation (form, url) and roots.
const EXPECTED_TOOLS = [
  "echo", "get-annotated-message", "get-env", "get-resource-links", "get-resource-reference",
  "get-structured-content", "get-sum", "get-tiny-image", "gzip-file-as-resource",
  "toggle-simulated-logging", "toggle-subscriber-updates", "trigger-long-running-operation",
  "get-roots-list", "trigger-elicitation-request", "trigger-url-elicitation",
  "trigger-sampling-request", "simulate-research-query",
];
const EXPECTED_PROMPTS = ["args-prompt", "completable-prompt", "resource-prompt", "simple-prompt"];
const DOC_URI = "demo://resource/static/document/architecture.md";
const TEXT_TEMPLATE = "demo://resource/dynamic/text/{resourceId}";
const BLOB_TEMPLATE = "demo://resource/dynamic/blob/{resourceId}";

function expect(condition, message) {
  if (!condition) throw new Error(message);
}

const texts = (result) => result.content.filter((b) => b.type === "text").map((b) => b.text);
const byFirst = (a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0);

/** Notifications as they arrive, and a way to wait for one that matches (no polling). */
class Inbox {
  constructor() {
    this.items = [];
    this.waiters = [];
  }
  push(item) {
    this.items.push(item);
    this.waiters = this.waiters.filter(({ matches, resolve }) => !(matches(item) && (resolve(item), true)));
  }
  waitFor(matches) {
    const found = this.items.find(matches);
    return found !== undefined ? Promise.resolve(found) : new Promise((resolve) => this.waiters.push({ matches, resolve }));
  }
}

export class Matrix {
  constructor({ opts, sdk, naming, gunzipSync }) {
    Object.assign(this, { opts, sdk, naming, gunzipSync });
    this.roots = [ROOT_A];
    this.rootsAsked = new Inbox();
    this.updates = new Inbox();
    this.logs = new Inbox();
    this.progress = new Inbox();
    this.sampled = [];
    this.elicited = [];
    this.tools = new Map();
  }

  newClient(callbacks = true) {
    const { Client, types } = this.sdk;
    const client = new Client({ name: "pegboard-matrix", version: "1.0.0" }, { capabilities: callbacks ? CAPABILITIES : {} });
    // Progress is collected by token from every notification instead of through `onprogress`: the
    // SDK runs notification handlers a microtask late and drops a request's progress handler when its
    // response arrives, so the last notification, sent just before the result, is often lost.
    client.progress = callbacks ? this.progress : new Inbox();
    client.setNotificationHandler(types.ProgressNotificationSchema, (n) => client.progress.push(n.params));
    if (!callbacks) return client;
    client.setRequestHandler(types.CreateMessageRequestSchema, async (request) => {
      this.sampled.push(request.params);
      return { role: "assistant", model: "matrix-model", stopReason: "endTurn",
               content: { type: "text", text: "sampled by the matrix client" } };
    });
    client.setRequestHandler(types.ElicitRequestSchema, async (request) => {
      this.elicited.push(request.params);
      if (request.params.mode === "url") return { action: "accept" };
      return { action: "accept", content: { name: "Ada Lovelace", check: true, integer: 7 } };
    });
    client.setRequestHandler(types.ListRootsRequestSchema, async () => {
      this.rootsAsked.push(this.roots.map((r) => r.uri));
      return { roots: [...this.roots] };
    });
    client.setNotificationHandler(types.LoggingMessageNotificationSchema, (n) => this.logs.push(n.params));
    client.setNotificationHandler(types.ResourceUpdatedNotificationSchema, (n) => this.updates.push(n.params.uri));
    return client;
  }

  transport() {
    const { StdioClientTransport, StreamableHTTPClientTransport } = this.sdk;
    if (this.opts.transport === "http") return new StreamableHTTPClientTransport(new URL(this.opts.target[0]));
    const [command, ...args] = this.opts.target;
    return new StdioClientTransport({ command, args, stderr: "inherit" });
  }

  async connect() {
    this.client = this.newClient();
    await this.client.connect(this.transport());
  }

  req(signal) {
    return { signal, timeout: this.opts.timeout * 1000 };
  }

  async call(tool, args, signal, extra = {}) {
    const result = await this.client.callTool({ name: this.naming.name(tool), arguments: args || {} }, undefined,
                                              { ...this.req(signal), ...extra });
    expect(!result.isError, `${tool} answered isError: ${JSON.stringify(texts(result))}`);
    return result;
  }

  /** Switch a server-everything toggle back off, even when the feature failed. */
  async stopToggle(tool) {
    try {
      await this.client.callTool({ name: this.naming.name(tool), arguments: {} }, undefined, { timeout: 5000 });
    } catch (error) {
      console.error(`features.mjs: turning ${tool} off failed: ${error}`);
    }
  }

  async read(original, signal) {
    const shown = this.naming.uri(original);
    const result = await this.client.readResource({ uri: shown }, this.req(signal));
    expect(result.contents.length > 0, `${shown}: no contents`);
    expect(result.contents[0].uri === shown, `read ${shown}, contents name ${result.contents[0].uri}`);
    return result;
  }

  /** The long operation with `_meta.progressToken = token`; the progress notifications it got. */
  async longOp(client, token, steps, duration, signal) {
    const result = await client.callTool(
      { name: this.naming.name("trigger-long-running-operation"), arguments: { duration, steps }, _meta: { progressToken: token } },
      undefined, this.req(signal));
    expect(!result.isError && texts(result).join(" ").includes("completed"), `long op: ${texts(result)}`);
    // The last notification may still be queued behind the result; it has 3 s to arrive.
    const last = client.progress.waitFor((p) => p.progressToken === token && p.progress === steps);
    await Promise.race([last, new Promise((resolve) => setTimeout(resolve, 3000).unref())]);
    return client.progress.items.filter((p) => p.progressToken === token).map((p) => [p.progress, p.total]);
  }
}

const n = (m) => m.naming;

export const FEATURES = [
  ["connect", async (m) => [null, { protocol_version: m.client.transport?.protocolVersion ?? null,
                                      server: m.client.getServerVersion()?.name, sdk: m.sdk.version }]],
  ["tools-list", async (m, signal) => {
    const tools = [];
    let cursor;
    do {
      const page = await m.client.listTools(cursor ? { cursor } : undefined, m.req(signal));
      tools.push(...page.tools);
      cursor = page.nextCursor;
    } while (cursor);
    m.tools = new Map(tools.map((t) => [n(m).decodeName(t.name), t]));
    const missing = EXPECTED_TOOLS.filter((name) => !m.tools.has(name));
    expect(missing.length === 0, `${tools.length} tools, missing ${missing}`);
    const value = Object.fromEntries([...m.tools.entries()].sort(byFirst).map(([name, t]) => [name, {
      title: t.title ?? null, description: t.description ?? null, inputSchema: t.inputSchema ?? null,
      outputSchema: t.outputSchema ?? null, annotations: t.annotations ?? null }]));
    const execution = Object.fromEntries(tools.filter((t) => t.execution).map((t) => [t.name, t.execution.taskSupport]));
    return [value, { count: tools.length, execution }];
  }],
  ["echo", async (m, signal) => {
    const result = await m.call("echo", { message: "pegboard" }, signal);
    expect(JSON.stringify(texts(result)) === '["Echo: pegboard"]', `echo answered ${texts(result)}`);
    return [texts(result)];
  }],
  ["resources-list", async (m, signal) => {
    const items = [];
    let cursor;
    do {
      const page = await m.client.listResources(cursor ? { cursor } : undefined, m.req(signal));
      items.push(...page.resources);
      cursor = page.nextCursor;
    } while (cursor);
    const value = items.map((r) => [n(m).decodeUri(r.uri), r.name, r.mimeType ?? null]).sort(byFirst);
    expect(value.some((v) => v[0] === DOC_URI), `${DOC_URI} not listed`);
    return [value, { count: items.length }];
  }],
  ["resource-templates", async (m, signal) => {
    const page = await m.client.listResourceTemplates(undefined, m.req(signal));
    const value = page.resourceTemplates.map((t) => [n(m).decodeUri(t.uriTemplate), t.name, t.mimeType ?? null]).sort(byFirst);
    const listed = value.map((v) => v[0]);
    expect(listed.includes(TEXT_TEMPLATE) && listed.includes(BLOB_TEMPLATE), `templates listed: ${listed}`);
    return [value];
  }],
  ["resource-read", async (m, signal) => {
    const doc = (await m.read(DOC_URI, signal)).contents[0];
    expect(typeof doc.text === "string" && doc.text.length > 0, "architecture.md has no text");
    const dyn = (await m.read("demo://resource/dynamic/text/7", signal)).contents[0];
    const head = String(dyn.text).split(" created at ")[0];
    expect(head === "Resource 7: This is a plaintext resource", `template read gave ${dyn.text}`);
    return [{ doc: [doc.mimeType, doc.text.length], template: head }];
  }],
  ["resource-links", async (m, signal) => {
    const result = await m.call("get-resource-links", { count: 2 }, signal);
    const links = result.content.filter((b) => b.type === "resource_link");
    expect(links.length === 2, `${links.length} resource links`);
    const value = [];
    for (const link of links) {
      const original = n(m).decodeUri(link.uri);
      const contents = (await m.read(original, signal)).contents[0];
      value.push([original, link.name, link.mimeType ?? null, "blob" in contents ? "blob" : "text"]);
    }
    return [value];
  }],
  ["embedded-resource", async (m, signal) => {
    const result = await m.call("get-resource-reference", { resourceType: "Text", resourceId: 3 }, signal);
    const embedded = result.content.filter((b) => b.type === "resource");
    expect(embedded.length === 1, `${embedded.length} embedded resources`);
    const original = n(m).decodeUri(embedded[0].resource.uri);
    expect(original === "demo://resource/dynamic/text/3", `embedded ${original}`);
    await m.read(original, signal);
    return [original];
  }],
  ["session-resource-link", async (m, signal) => {
    const payload = "pegboard matrix payload";
    const data = `data:text/plain;base64,${Buffer.from(payload).toString("base64")}`;
    const result = await m.call("gzip-file-as-resource", { name: "matrix.txt.gz", data }, signal);
    const links = result.content.filter((b) => b.type === "resource_link");
    expect(links.length === 1, `${links.length} resource links`);
    const original = n(m).decodeUri(links[0].uri);
    const blob = (await m.read(original, signal)).contents[0];
    expect(typeof blob.blob === "string", "session resource is not a blob");
    const text = m.gunzipSync(Buffer.from(blob.blob, "base64")).toString();
    expect(text === payload, `gunzipped ${text}`);
    return [[original, text]];
  }],
  ["prompts-list", async (m, signal) => {
    const page = await m.client.listPrompts(undefined, m.req(signal));
    const value = page.prompts.map((p) => [n(m).decodeName(p.name),
      (p.arguments || []).map((a) => [a.name, Boolean(a.required)]).sort(byFirst)]).sort(byFirst);
    const names = value.map((v) => v[0]);
    expect(EXPECTED_PROMPTS.every((p) => names.includes(p)), `prompts: ${names}`);
    return [value];
  }],
  ["prompt-get", async (m, signal) => {
    const result = await m.client.getPrompt({ name: n(m).name("args-prompt"), arguments: { city: "Paris", state: "Texas" } }, m.req(signal));
    const value = result.messages.map((msg) => [msg.role, msg.content.text ?? null]);
    expect(JSON.stringify(value) === JSON.stringify([["user", "What's weather in Paris, Texas?"]]), `messages ${JSON.stringify(value)}`);
    return [value];
  }],
  ["prompt-embedded-resource", async (m, signal) => {
    const result = await m.client.getPrompt({ name: n(m).name("resource-prompt"), arguments: { resourceType: "Text", resourceId: "2" } }, m.req(signal));
    const embedded = result.messages.filter((msg) => msg.content.type === "resource");
    expect(embedded.length === 1, `${embedded.length} embedded resources in ${result.messages.length} messages`);
    const original = n(m).decodeUri(embedded[0].content.resource.uri);
    expect(original === "demo://resource/dynamic/text/2", `embedded ${original}`);
    await m.read(original, signal);
    return [original];
  }],
  ["complete-prompt", async (m, signal) => {
    const ref = { type: "ref/prompt", name: n(m).name("completable-prompt") };
    const dept = await m.client.complete({ ref, argument: { name: "department", value: "En" } }, m.req(signal));
    const people = await m.client.complete({ ref, argument: { name: "name", value: "" },
                                             context: { arguments: { department: "Engineering" } } }, m.req(signal));
    const value = [dept.completion.values, people.completion.values];
    expect(JSON.stringify(value) === '[["Engineering"],["Alice","Bob","Charlie"]]', `completions ${JSON.stringify(value)}`);
    return [value];
  }],
  ["complete-resource-template", async (m, signal) => {
    const ref = { type: "ref/resource", uri: n(m).uri(TEXT_TEMPLATE) };
    const result = await m.client.complete({ ref, argument: { name: "resourceId", value: "42" } }, m.req(signal));
    expect(JSON.stringify(result.completion.values) === '["42"]', `completions ${result.completion.values}`);
    return [result.completion.values];
  }],
  ["logging-set-level", async (m, signal) => {
    await m.client.setLoggingLevel("debug", m.req(signal));
    return ["debug"];
  }],
  ["logging-message", async (m, signal) => {
    await m.call("toggle-simulated-logging", {}, signal);
    let message;
    try {
      message = await m.logs.waitFor((p) => typeof p.data === "string" && /level[ -]message/.test(p.data));
    } finally {
      await m.stopToggle("toggle-simulated-logging");
    }
    n(m).checkLogger(message.logger);
    return ["simulated log message", { level: message.level, logger: message.logger ?? null, data: message.data }];
  }],
  ["subscribe", async (m, signal) => {
    const shown = n(m).uri(DOC_URI);
    await m.client.subscribeResource({ uri: shown }, m.req(signal));
    await m.call("toggle-subscriber-updates", {}, signal);
    let uri;
    try {
      uri = await m.updates.waitFor((u) => u === shown);
    } finally {
      await m.stopToggle("toggle-subscriber-updates");
      await m.client.unsubscribeResource({ uri: shown }, { timeout: 5000 }).catch(() => {});
    }
    return [n(m).decodeUri(uri), { via: "resources/subscribe" }];
  }],
  ["progress", async (m, signal) => {
    const seen = await m.longOp(m.client, "matrix-progress", 3, 0.6, signal);
    expect(JSON.stringify(seen) === "[[1,3],[2,3],[3,3]]", `progress notifications ${JSON.stringify(seen)}`);
    return [seen];
  }],
  ["progress-two-clients", async (m, signal) => {
    // Two sessions at once, both calls with the same progress token; different step counts show
    // whether a notification reached the wrong session.
    const one = async (steps) => {
      const client = m.newClient(false);
      await client.connect(m.transport());
      try {
        return await m.longOp(client, "matrix-shared-token", steps, 1.0, signal);
      } finally {
        await client.close();
      }
    };
    const value = await Promise.all([one(3), one(4)]);
    const want = [[[1, 3], [2, 3], [3, 3]], [[1, 4], [2, 4], [3, 4], [4, 4]]];
    expect(JSON.stringify(value) === JSON.stringify(want), `client A got ${JSON.stringify(value[0])}, client B got ${JSON.stringify(value[1])}`);
    return [value];
  }],
  ["cancel", async (m, signal) => {
    const controller = new AbortController();
    signal.addEventListener("abort", () => controller.abort(signal.reason));
    const token = "matrix-cancel";
    const t0 = Date.now();
    const call = m.client.callTool(
      { name: n(m).name("trigger-long-running-operation"), arguments: { duration: 30, steps: 30 }, _meta: { progressToken: token } },
      undefined, { signal: controller.signal, timeout: 60000 })
      .then(() => "completed", (error) => (controller.signal.aborted ? "cancelled" : describeError(error)));
    // Cancel once the upstream is provably working on it (first progress); a gateway that drops
    // progress gets the cancel after 3 s instead.
    const started = m.progress.waitFor((p) => p.progressToken === token);
    await Promise.race([started, new Promise((resolve) => setTimeout(resolve, 3000).unref())]);
    controller.abort("matrix cancels the call");
    const ended = await call;
    expect(ended === "cancelled", `the call ended: ${ended}`);
    const healthy = await m.call("echo", { message: "after cancel" }, signal);
    expect(texts(healthy)[0] === "Echo: after cancel", `echo after cancel: ${texts(healthy)}`);
    return ["cancelled; server healthy", { progress_before_cancel: m.progress.items.filter((p) => p.progressToken === token).length, cancelled_after_s: (Date.now() - t0) / 1000 }];
  }],
  ["sampling", async (m, signal) => {
    m.sampled = [];
    const result = await m.call("trigger-sampling-request", { prompt: "pegboard-sampling", maxTokens: 20 }, signal);
    expect(m.sampled.length === 1, `sampling handler called ${m.sampled.length} times`);
    const text = texts(result).join(" ");
    expect(text.includes("sampled by the matrix client"), `tool result ${text}`);
    const asked = m.sampled[0];
    return [{ asked: asked.messages.map((msg) => msg.content.text), maxTokens: asked.maxTokens,
              answer: JSON.parse(text.split("\n").slice(1).join("\n")) }];
  }],
  ["elicitation-form", async (m, signal) => {
    m.elicited = [];
    const result = await m.call("trigger-elicitation-request", {}, signal);
    expect(m.elicited.length === 1, `elicitation handler called ${m.elicited.length} times`);
    const asked = m.elicited[0];
    expect(asked.mode !== "url" && asked.requestedSchema, `not a form elicitation: ${JSON.stringify(asked)}`);
    const lines = texts(result).filter((t) => !t.includes("Raw result"));
    expect(lines.some((t) => t.includes("Name: Ada Lovelace")), `tool result ${lines}`);
    return [{ message: asked.message, fields: Object.keys(asked.requestedSchema.properties).sort(), result: lines }];
  }],
  ["elicitation-url", async (m, signal) => {
    m.elicited = [];
    const url = "https://example.com/pegboard-auth";
    const result = await m.call("trigger-url-elicitation", { url, elicitationId: "pb-matrix-1" }, signal);
    expect(m.elicited.length === 1, `elicitation handler called ${m.elicited.length} times`);
    const asked = m.elicited[0];
    expect(asked.mode === "url" && asked.url === url, `asked ${JSON.stringify(asked)}`);
    const lines = texts(result).filter((t) => !t.includes("Raw result"));
    expect(lines.some((t) => t.includes("completed the URL elicitation")), `tool result ${lines}`);
    return [{ url: asked.url, id: asked.elicitationId, result: lines }];
  }],
  ["roots", async (m, signal) => {
    const text = texts(await m.call("get-roots-list", {}, signal)).join(" ");
    expect(text.includes("(1 total)") && text.includes(ROOT_A.uri), `get-roots-list: ${text}`);
    return [text, { roots_requests: m.rootsAsked.items.length }];
  }],
  ["roots-list-changed", async (m, signal) => {
    m.roots = [ROOT_A, ROOT_B];
    const before = m.rootsAsked.items.length;
    await m.client.sendRootsListChanged();
    await m.rootsAsked.waitFor((uris) => uris.length === 2);
    // The server stores the roots when our answer arrives, which we cannot observe; ask until it
    // shows them (bounded by the feature deadline).
    let text;
    for (;;) {
      text = texts(await m.call("get-roots-list", {}, signal)).join(" ");
      if (text.includes("(2 total)") || signal.aborted) break;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(text.includes(ROOT_B.uri), `get-roots-list: ${text}`);
    return [text, { roots_requests: m.rootsAsked.items.length - before }];
  }],
  ["task-2025", async (m, signal) => {
    // callToolStream is the SDK's way to call a tool whatever its execution.taskSupport: task-augmented
    // (tools/call + task, tasks/get, tasks/result) when the listing says so, a plain call otherwise.
    const tool = m.tools.get("simulate-research-query");
    const support = tool?.execution?.taskSupport ?? null;
    let result;
    const seen = [];
    const stream = m.client.experimental.tasks.callToolStream(
      { name: n(m).name("simulate-research-query"), arguments: { topic: "pegboard" } }, undefined, m.req(signal));
    for await (const message of stream) {
      seen.push(message.type);
      if (message.type === "result") result = message.result;
      if (message.type === "error") throw message.error;
    }
    expect(result, `no result; stream messages: ${seen}`);
    const text = texts(result).join(" ");
    expect(!result.isError && text.startsWith("# Research Report: pegboard"), `${seen}: ${text.slice(0, 200)}`);
    return [text, { via: [...new Set(seen)].join(","), taskSupport: support }];
  }, 30],
];

function describeError(error) {
  return `${error?.name ?? "Error"}${error?.code !== undefined ? ` ${error.code}` : ""}: ${error?.message ?? error}`;
}
