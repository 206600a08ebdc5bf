//! The bounded values that metrics and spans are labelled with: MCP methods, error types,
//! transports, denial reasons. Every value here is a `&'static str`, so a label set never holds
//! a string a client or a server sent.

/// Label value of a tool name that is not on the board (never the string the client sent).
pub const UNKNOWN: &str = "_unknown";
/// Label value of an MCP method outside [`Method`]'s fixed set.
pub const OTHER_METHOD: &str = "_other";
/// Label value of the client until clients have names (the access-control issue).
pub const DEFAULT_CLIENT: &str = "default";

macro_rules! methods {
    ($($variant:ident => $name:literal,)*) => {
        /// An MCP method, from a fixed set (the semantic conventions' well-known values and the
        /// methods PegBoard relays); anything else is [`Method::Other`], labelled `_other`.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum Method {
            $(
                #[doc = concat!("`", $name, "`")]
                $variant,
            )*
            /// A method outside the set (`_other`).
            Other,
        }

        impl Method {
            /// Every method of the set, [`Method::Other`] last.
            pub const ALL: &'static [Method] = &[$(Method::$variant,)* Method::Other];

            /// The method named `name` (exact, case-sensitive as JSON-RPC is), else `Other`.
            #[must_use]
            pub fn parse(name: &str) -> Self {
                match name {
                    $($name => Method::$variant,)*
                    _ => Method::Other,
                }
            }

            /// Its name as MCP spells it (`_other` for `Other`): the label value.
            #[must_use]
            pub const fn as_str(self) -> &'static str {
                match self {
                    $(Method::$variant => $name,)*
                    Method::Other => OTHER_METHOD,
                }
            }
        }
    };
}

methods! {
    Initialize => "initialize",
    Ping => "ping",
    ServerDiscover => "server/discover",
    ToolsList => "tools/list",
    ToolsCall => "tools/call",
    PromptsList => "prompts/list",
    PromptsGet => "prompts/get",
    ResourcesList => "resources/list",
    ResourcesTemplatesList => "resources/templates/list",
    ResourcesRead => "resources/read",
    ResourcesSubscribe => "resources/subscribe",
    ResourcesUnsubscribe => "resources/unsubscribe",
    CompletionComplete => "completion/complete",
    LoggingSetLevel => "logging/setLevel",
    SamplingCreateMessage => "sampling/createMessage",
    ElicitationCreate => "elicitation/create",
    RootsList => "roots/list",
    TasksGet => "tasks/get",
    TasksList => "tasks/list",
    TasksResult => "tasks/result",
    TasksCancel => "tasks/cancel",
    NotificationsInitialized => "notifications/initialized",
    NotificationsCancelled => "notifications/cancelled",
    NotificationsProgress => "notifications/progress",
    NotificationsMessage => "notifications/message",
    NotificationsRootsListChanged => "notifications/roots/list_changed",
    NotificationsToolsListChanged => "notifications/tools/list_changed",
    NotificationsPromptsListChanged => "notifications/prompts/list_changed",
    NotificationsResourcesListChanged => "notifications/resources/list_changed",
    NotificationsResourcesUpdated => "notifications/resources/updated",
}

impl Method {
    /// Whether the operation is a tool call (it carries `gen_ai.tool.name` and
    /// `gen_ai.operation.name = execute_tool`).
    #[must_use]
    pub const fn is_tool_call(self) -> bool {
        matches!(self, Method::ToolsCall)
    }
}

/// How an operation ended, as the `error_type` label and the `error.type` span attribute.
///
/// By the conventions: a JSON-RPC error is its code as a string (a fixed set of known codes here;
/// any other code is `_OTHER`, the conventions' fallback), a `CallToolResult` with `isError` is
/// `tool_error`; the rest name what PegBoard saw.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ErrorType {
    /// `tool_error`: the tool answered with `isError: true`.
    ToolError,
    /// `timeout`: no answer before the deadline.
    Timeout,
    /// `cancelled`: the client cancelled, or went away before the answer.
    Cancelled,
    /// `server_unavailable`: the server is not running or its connection is closed.
    ServerUnavailable,
    /// `message_too_large`: the server's answer was over the message limit.
    MessageTooLarge,
    /// `denied`: refused by the gateway (token, policy).
    Denied,
    /// `-32700` Parse error.
    ParseError,
    /// `-32600` Invalid Request.
    InvalidRequest,
    /// `-32601` Method not found.
    MethodNotFound,
    /// `-32602` Invalid params (also MCP's unknown tool).
    InvalidParams,
    /// `-32603` Internal error.
    InternalError,
    /// `-32001`: the request timed out (the TypeScript SDK's code).
    RequestTimeout,
    /// `-32002`: resource not found.
    ResourceNotFound,
    /// `-32042`: URL elicitation required.
    UrlElicitationRequired,
    /// `_OTHER`: any other error.
    Other,
}

impl ErrorType {
    /// Every error type, in a fixed order (the index of [`ErrorType::index`]).
    pub const ALL: [ErrorType; 15] = [
        ErrorType::ToolError,
        ErrorType::Timeout,
        ErrorType::Cancelled,
        ErrorType::ServerUnavailable,
        ErrorType::MessageTooLarge,
        ErrorType::Denied,
        ErrorType::ParseError,
        ErrorType::InvalidRequest,
        ErrorType::MethodNotFound,
        ErrorType::InvalidParams,
        ErrorType::InternalError,
        ErrorType::RequestTimeout,
        ErrorType::ResourceNotFound,
        ErrorType::UrlElicitationRequired,
        ErrorType::Other,
    ];

    /// The error type of a JSON-RPC error `code`: known codes keep their number, others are
    /// `_OTHER` (a server's made-up code must not become a new label value).
    #[must_use]
    pub const fn from_code(code: i64) -> Self {
        match code {
            -32700 => ErrorType::ParseError,
            -32600 => ErrorType::InvalidRequest,
            -32601 => ErrorType::MethodNotFound,
            -32602 => ErrorType::InvalidParams,
            -32603 => ErrorType::InternalError,
            -32001 => ErrorType::RequestTimeout,
            -32002 => ErrorType::ResourceNotFound,
            -32042 => ErrorType::UrlElicitationRequired,
            _ => ErrorType::Other,
        }
    }

    /// The label value.
    #[must_use]
    pub const fn as_str(self) -> &'static str {
        match self {
            ErrorType::ToolError => "tool_error",
            ErrorType::Timeout => "timeout",
            ErrorType::Cancelled => "cancelled",
            ErrorType::ServerUnavailable => "server_unavailable",
            ErrorType::MessageTooLarge => "message_too_large",
            ErrorType::Denied => "denied",
            ErrorType::ParseError => "-32700",
            ErrorType::InvalidRequest => "-32600",
            ErrorType::MethodNotFound => "-32601",
            ErrorType::InvalidParams => "-32602",
            ErrorType::InternalError => "-32603",
            ErrorType::RequestTimeout => "-32001",
            ErrorType::ResourceNotFound => "-32002",
            ErrorType::UrlElicitationRequired => "-32042",
            ErrorType::Other => "_OTHER",
        }
    }

    /// The JSON-RPC code this error type stands for (`rpc.response.status_code`), if it is one.
    #[must_use]
    pub const fn jsonrpc_code(self) -> Option<&'static str> {
        match self {
            ErrorType::ParseError
            | ErrorType::InvalidRequest
            | ErrorType::MethodNotFound
            | ErrorType::InvalidParams
            | ErrorType::InternalError
            | ErrorType::RequestTimeout
            | ErrorType::ResourceNotFound
            | ErrorType::UrlElicitationRequired => Some(self.as_str()),
            _ => None,
        }
    }

    /// Its position in [`ErrorType::ALL`].
    #[must_use]
    pub const fn index(self) -> usize {
        self as usize
    }
}

/// The `error_type` label of an outcome: empty when it succeeded.
#[must_use]
pub const fn error_label(error: Option<ErrorType>) -> &'static str {
    match error {
        Some(e) => e.as_str(),
        None => "",
    }
}

/// How bytes travel (`network.transport`): `pipe` for stdio, `tcp` for HTTP.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Transport {
    /// stdio (a child process's pipes, or the gateway's own stdin/stdout).
    Pipe,
    /// streamable HTTP.
    Tcp,
}

impl Transport {
    /// The attribute value.
    #[must_use]
    pub const fn as_str(self) -> &'static str {
        match self {
            Transport::Pipe => "pipe",
            Transport::Tcp => "tcp",
        }
    }
}

/// Why the gateway refused a request (`pegboard_denied_total{reason}`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DenyReason {
    /// No bearer token, or the wrong one (HTTP 401).
    Unauthorized,
    /// The client may not use what it asked for (policy).
    Forbidden,
    /// An Origin header that is not allowed.
    Origin,
    /// A Host header that is not allowed.
    Host,
}

impl DenyReason {
    /// Every reason, in the order of [`DenyReason::index`].
    pub const ALL: [DenyReason; 4] = [
        DenyReason::Unauthorized,
        DenyReason::Forbidden,
        DenyReason::Origin,
        DenyReason::Host,
    ];

    /// The label value.
    #[must_use]
    pub const fn as_str(self) -> &'static str {
        match self {
            DenyReason::Unauthorized => "unauthorized",
            DenyReason::Forbidden => "forbidden",
            DenyReason::Origin => "origin",
            DenyReason::Host => "host",
        }
    }

    /// Its position in [`DenyReason::ALL`].
    #[must_use]
    pub const fn index(self) -> usize {
        self as usize
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn methods_round_trip_and_anything_else_is_other() {
        for &m in Method::ALL {
            if m != Method::Other {
                assert_eq!(Method::parse(m.as_str()), m);
            }
        }
        assert_eq!(Method::parse("tools/call"), Method::ToolsCall);
        assert_eq!(Method::parse("Tools/Call"), Method::Other);
        assert_eq!(Method::parse("x".repeat(10_000).as_str()), Method::Other);
        assert_eq!(Method::Other.as_str(), "_other");
    }

    #[test]
    fn error_types_are_bounded_and_indexed_in_order() {
        for (i, e) in ErrorType::ALL.iter().enumerate() {
            assert_eq!(e.index(), i);
        }
        assert_eq!(ErrorType::from_code(-32602).as_str(), "-32602");
        assert_eq!(ErrorType::from_code(-31999), ErrorType::Other);
        assert_eq!(ErrorType::from_code(i64::MIN).as_str(), "_OTHER");
        assert_eq!(ErrorType::ToolError.jsonrpc_code(), None);
        assert_eq!(ErrorType::InvalidParams.jsonrpc_code(), Some("-32602"));
        assert_eq!(error_label(None), "");
        for (i, r) in DenyReason::ALL.iter().enumerate() {
            assert_eq!(r.index(), i);
        }
    }
}
