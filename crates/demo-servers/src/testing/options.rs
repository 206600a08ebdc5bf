//! [`TestServerOptions`]: which faults and extras a [`super::TestServer`] has.

/// Options for [`TestServer::new`](super::TestServer::new). All fields default to "off"/zero.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TestServerOptions {
    /// Number of extra tools `tool_0000`, `tool_0001`, ... (each echoes its own name).
    pub extra_tools: usize,
    /// Page size of `tools/list`; 0 means all tools in one page.
    pub page_size: usize,
    /// When true, `tools/list` never answers (until the request is cancelled).
    pub hang_list: bool,
    /// When true, the `crash` tool calls `std::process::exit(3)`; when false it returns a tool
    /// error (`is_error: true`), which is what in-process tests want.
    pub exit_on_crash: bool,
    /// When true (with a `page_size`), `tools/list` never advances its cursor: every page is the
    /// first page, with the same `nextCursor` (a broken server seen in the wild).
    pub stuck_cursor: bool,
    /// When true, a `huge {bytes}` tool answers with a text of that many bytes (message size
    /// limit tests).
    pub huge_tool: bool,
    /// When non-zero, `tools/list` also lists `huge_listing`, whose description is this many
    /// bytes: a tools/list page of about that size.
    pub huge_list: usize,
    /// When true, the server speaks only protocol 2026-07-28 (`server/discover`, no
    /// `initialize`): a server of the newest generation only.
    pub only_2026: bool,
    /// When true, an `ask {via, rounds?, question?}` tool (and an `ask` prompt and
    /// `test://ask/{via}` resources) asks the client for input: with `input_required` results
    /// for a 2026-07-28 client (multi round-trip requests), with server-to-client requests
    /// during the call for an older one (see `testing/mrtr.rs`).
    pub ask_tool: bool,
    /// When true, the tools the gateway's parity suites use: `echo_meta` (answers with the
    /// `_meta` it received), `progress {values, total?}` (sends those progress values, in order)
    /// and `malformed {shape}` (answers with an invalid tool result over stdio; see
    /// `testing/parity.rs`).
    pub parity_tools: bool,
    /// When true, `tools/list` (answered by [`Faults`](super::Faults), over stdio) also lists
    /// [`vendor_tools`](super::vendor_tools): definitions with members rmcp's `Tool` does not
    /// model (a vendor's own, `execution`), as raw JSON.
    pub vendor_tools: bool,
}

impl TestServerOptions {
    /// Sets [`extra_tools`](Self::extra_tools).
    pub fn extra_tools(mut self, n: usize) -> Self {
        self.extra_tools = n;
        self
    }
    /// Sets [`page_size`](Self::page_size).
    pub fn page_size(mut self, n: usize) -> Self {
        self.page_size = n;
        self
    }
    /// Sets [`hang_list`](Self::hang_list).
    pub fn hang_list(mut self, yes: bool) -> Self {
        self.hang_list = yes;
        self
    }
    /// Sets [`stuck_cursor`](Self::stuck_cursor).
    pub fn stuck_cursor(mut self, yes: bool) -> Self {
        self.stuck_cursor = yes;
        self
    }
    /// Sets [`only_2026`](Self::only_2026).
    pub fn only_2026(mut self, yes: bool) -> Self {
        self.only_2026 = yes;
        self
    }
    /// Sets [`ask_tool`](Self::ask_tool).
    pub fn ask_tool(mut self, yes: bool) -> Self {
        self.ask_tool = yes;
        self
    }
    /// Sets [`parity_tools`](Self::parity_tools).
    pub fn parity_tools(mut self, yes: bool) -> Self {
        self.parity_tools = yes;
        self
    }
    /// Sets [`vendor_tools`](Self::vendor_tools).
    pub fn vendor_tools(mut self, yes: bool) -> Self {
        self.vendor_tools = yes;
        self
    }
    /// Sets [`huge_tool`](Self::huge_tool).
    pub fn huge_tool(mut self, yes: bool) -> Self {
        self.huge_tool = yes;
        self
    }
    /// Sets [`huge_list`](Self::huge_list).
    pub fn huge_list(mut self, bytes: usize) -> Self {
        self.huge_list = bytes;
        self
    }
    /// Sets [`exit_on_crash`](Self::exit_on_crash).
    pub fn exit_on_crash(mut self, yes: bool) -> Self {
        self.exit_on_crash = yes;
        self
    }
}
