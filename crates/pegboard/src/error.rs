//! The one error type of the crate.

use std::time::Duration;

/// Everything that can go wrong on a [`PegBoard`](crate::PegBoard).
///
/// Every variant says what happened and what to do about it; a failed write (`add_service`,
/// `register_tool`, ...) always leaves the board exactly as it was.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum PegBoardError {
    /// No tool of that name is on the board.
    #[error(
        "tool `{}` is not on the board{}",
        shown(name),
        did_you_mean(suggestions)
    )]
    ToolNotFound {
        /// The name that was asked for.
        name: String,
        /// Names on the board that are close to it, closest first.
        suggestions: Vec<String>,
    },

    /// The tool is off the board because its service's [`ListingFilter`](crate::ListingFilter)
    /// withheld it; the message is the filter's reason (what happened, what to do).
    #[error("{reason}")]
    ToolWithheld {
        /// The board name that was asked for.
        name: String,
        /// The filter's reason.
        reason: String,
    },

    /// The prompt is off the board because its service's [`ListingFilter`](crate::ListingFilter)
    /// withheld it; the message is the filter's reason.
    #[error("{reason}")]
    PromptWithheld {
        /// The board name that was asked for.
        name: String,
        /// The filter's reason.
        reason: String,
    },

    /// The name a tool would get is already taken (by the board, or by another tool of the same server).
    #[error(
        "tool name `{}` is already registered{}; add the server under another namespace, or leave the tool out with a deny list",
        shown(name),
        owner(namespace)
    )]
    DuplicateTool {
        /// The full name, as the LLM would see it.
        name: String,
        /// The namespace that holds (or would hold) the name already; `None` for unprefixed tools.
        namespace: Option<String>,
    },

    /// A tool name that cannot be used.
    #[error("invalid tool name `{}`: {reason}", shown(name))]
    InvalidName {
        /// The name as given.
        name: String,
        /// Why it was refused.
        reason: String,
    },

    /// A namespace that cannot be used.
    #[error("invalid namespace `{}`: {reason}", shown(namespace))]
    InvalidNamespace {
        /// The namespace as given.
        namespace: String,
        /// Why it was refused.
        reason: String,
    },

    /// No tool or service is registered under that namespace.
    #[error(
        "namespace `{}` is not on the board (known namespaces: {known})",
        shown(namespace)
    )]
    UnknownNamespace {
        /// The namespace that was asked for.
        namespace: String,
        /// The namespaces on the board, comma separated.
        known: String,
    },

    /// No service is stored at that index (never added, or removed since).
    #[error(
        "no server is connected at index {index}: it was never added, or it has been removed since"
    )]
    UnknownService {
        /// The index that was asked for.
        index: usize,
    },

    /// The arguments of a call are not a JSON object.
    #[error("invalid arguments for `{tool}`: {reason}")]
    InvalidArguments {
        /// The tool called.
        tool: String,
        /// What is wrong with them.
        reason: String,
    },

    /// No prompt of that name is offered by any server on the board.
    #[error(
        "prompt `{}` is not on the board{}; prompts/list shows the prompts there are",
        shown(name),
        did_you_mean(suggestions)
    )]
    PromptNotFound {
        /// The name asked for.
        name: String,
        /// Close matches among the board's prompts, best first.
        suggestions: Vec<String>,
    },

    /// A resource URI that no server on the board serves.
    #[error("resource `{}` is not on the board: {hint}", shown(uri))]
    ResourceNotFound {
        /// The URI asked for.
        uri: String,
        /// How the board's resource URIs look, for the reader to fix the request.
        hint: String,
    },

    /// A server answered a request other than `tools/call` with an error, or the request could
    /// not be delivered.
    #[error(
        "server{} could not answer {request}: {source}",
        of_namespace(namespace)
    )]
    Upstream {
        /// The request and what it named (method, then the name or URI).
        request: String,
        /// The namespace of the service.
        namespace: Option<String>,
        /// rmcp's error.
        #[source]
        source: rmcp::ServiceError,
    },

    /// The service answered the call with an error, or the call could not be delivered.
    #[error("server{} could not run `{tool}`: {source}", of_namespace(namespace))]
    ServiceError {
        /// The tool called, by its board name.
        tool: String,
        /// The namespace of the service.
        namespace: Option<String>,
        /// rmcp's error.
        #[source]
        source: rmcp::ServiceError,
    },

    /// Listing the tools of a service failed.
    #[error(
        "could not list the tools of server{}: {source}",
        of_namespace(namespace)
    )]
    Discovery {
        /// The namespace the service was being added under.
        namespace: Option<String>,
        /// rmcp's error.
        #[source]
        source: rmcp::ServiceError,
    },

    /// The service did not answer in time; the request was cancelled towards it.
    #[error(
        "`{operation}` on server{} timed out after {after:?} and was cancelled; the server may be stuck or busy: try again, or raise its timeout if it needs longer",
        of_namespace(namespace)
    )]
    Timeout {
        /// The tool called, or `tools/list` for discovery.
        operation: String,
        /// The namespace of the service.
        namespace: Option<String>,
        /// The timeout that expired.
        after: Duration,
    },

    /// The service's transport is closed (its process exited, its connection dropped).
    #[error(
        "server{} is closed (its process exited or its connection dropped), so the request did not reach it; restart the server",
        of_namespace(namespace)
    )]
    ServiceClosed {
        /// The namespace of the service.
        namespace: Option<String>,
    },

    /// A service offered more tools (or pages of tools) than the board accepts from one service.
    #[error(
        "server{} {what}; it was refused to protect the board: keep only the tools you need with an allow list, or raise the per-server limit",
        of_namespace(namespace)
    )]
    TooManyTools {
        /// The namespace of the service.
        namespace: Option<String>,
        /// What was exceeded.
        what: String,
    },

    /// The board has been shut down: it takes no new services.
    #[error("the board has been shut down and takes no new servers")]
    ShutDown,
}

/// Names longer than this are cut in messages: they reach LLMs and logs, and a name is the
/// caller's own input, which may be huge.
const SHOWN_MAX_CHARS: usize = 80;

/// `name` as messages show it: cut after [`SHOWN_MAX_CHARS`] characters, with its size.
pub(crate) fn shown(name: &str) -> String {
    match name.char_indices().nth(SHOWN_MAX_CHARS) {
        None => name.to_string(),
        Some((cut, _)) => format!("{}… ({} bytes)", &name[..cut], name.len()),
    }
}

fn did_you_mean(suggestions: &[String]) -> String {
    if suggestions.is_empty() {
        String::new()
    } else {
        let list: Vec<String> = suggestions.iter().map(|s| format!("`{s}`")).collect();
        format!("; did you mean {}?", list.join(", "))
    }
}

fn owner(namespace: &Option<String>) -> String {
    match namespace {
        Some(ns) => format!(" by namespace `{ns}`"),
        None => " by a server added without a namespace".to_string(),
    }
}

fn of_namespace(namespace: &Option<String>) -> String {
    match namespace {
        Some(ns) => format!(" `{ns}`"),
        None => " (no namespace)".to_string(),
    }
}
