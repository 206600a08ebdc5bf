//! Options for adding a service ([`ServiceOptions`]) and for one call ([`CallOptions`]).

use std::{any::Any, fmt, sync::Arc, time::Duration};

use crate::{ListingFilter, ToolListTap, client::ToolListWatch};

/// Anything an embedder wants to keep with a service (for example the state its client handler
/// shares), handed back with every [`ToolTarget`](crate::ToolTarget).
#[derive(Clone)]
pub struct Extension(pub Arc<dyn Any + Send + Sync>);

impl Extension {
    /// The value, if it is a `T`.
    pub fn get<T: Any + Send + Sync>(&self) -> Option<Arc<T>> {
        self.0.clone().downcast::<T>().ok()
    }
}

impl fmt::Debug for Extension {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Extension(..)")
    }
}

/// How a service is put on the board by [`PegBoard::add_service_with`](crate::PegBoard::add_service_with).
///
/// ```
/// use std::time::Duration;
/// use pegboard::ServiceOptions;
///
/// let options = ServiceOptions::new()
///     .allow(["search", "fetch"])          // only these tools (by the server's own names)
///     .deny(["fetch"])                      // ... and never this one
///     .call_timeout(Duration::from_secs(10));
/// assert!(options.admits("search"));
/// assert!(!options.admits("fetch"));
/// assert!(!options.admits("delete"));
/// ```
#[derive(Clone, Default)]
#[non_exhaustive]
pub struct ServiceOptions {
    /// Only tools with these original names are registered (`None`: all).
    pub allow: Option<Vec<String>>,
    /// Tools with these original names are never registered.
    pub deny: Vec<String>,
    /// Timeout for calls to this service, overriding the board's default.
    pub call_timeout: Option<Duration>,
    /// Follow the service's `tools/list_changed` notifications (see [`crate::client::watch_tools`]).
    pub watch: Option<ToolListWatch>,
    /// Embedder state kept with the service (see [`Extension`]).
    pub extension: Option<Extension>,
    /// Sees every listing of the service's tools and prompts before the board takes them
    /// (see [`ListingFilter`]).
    pub filter: Option<Arc<dyn ListingFilter>>,
    /// Where the service's transport shows the `tools/list` answers it reads, so that members
    /// rmcp's `Tool` does not model reach the board (see [`ToolListTap`]).
    pub tool_list_tap: Option<ToolListTap>,
}

impl fmt::Debug for ServiceOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ServiceOptions")
            .field("allow", &self.allow)
            .field("deny", &self.deny)
            .field("call_timeout", &self.call_timeout)
            .field("watch", &self.watch)
            .field("extension", &self.extension)
            .field("filter", &self.filter.as_ref().map(|_| "ListingFilter"))
            .field("tool_list_tap", &self.tool_list_tap)
            .finish()
    }
}

impl ServiceOptions {
    /// No filter, the board's timeouts, no watching.
    pub fn new() -> Self {
        Self::default()
    }

    /// Register only the tools with these original names.
    #[must_use]
    pub fn allow<I, S>(mut self, names: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.allow = Some(names.into_iter().map(Into::into).collect());
        self
    }

    /// Never register the tools with these original names.
    #[must_use]
    pub fn deny<I, S>(mut self, names: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.deny = names.into_iter().map(Into::into).collect();
        self
    }

    /// Timeout for each call to this service.
    #[must_use]
    pub fn call_timeout(mut self, timeout: Duration) -> Self {
        self.call_timeout = Some(timeout);
        self
    }

    /// Re-list the service's tools whenever it says they changed.
    #[must_use]
    pub fn watch(mut self, watch: ToolListWatch) -> Self {
        self.watch = Some(watch);
        self
    }

    /// Keep `value` with the service; [`PegBoard::tool_target`](crate::PegBoard::tool_target) hands it back.
    #[must_use]
    pub fn extension<T: Any + Send + Sync>(mut self, value: Arc<T>) -> Self {
        self.extension = Some(Extension(value));
        self
    }

    /// Run every listing of the service's tools and prompts through `filter` before the board
    /// takes it: when the service is added, when it is re-listed (`tools/list_changed`,
    /// [`PegBoard::refresh_service`](crate::PegBoard::refresh_service)), and for prompts at each
    /// listing. It sees what passed the allow and deny lists.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use pegboard::{Listing, ListingFilter, ServiceOptions};
    ///
    /// struct Trim;
    /// impl ListingFilter for Trim {
    ///     fn tools(&self, listing: &mut Listing<'_, rmcp::model::Tool>) {
    ///         for tool in &mut listing.items {
    ///             if let Some(d) = &tool.description {
    ///                 tool.description = Some(d.trim().to_string().into());
    ///             }
    ///         }
    ///     }
    /// }
    /// let options = ServiceOptions::new().filter(Arc::new(Trim));
    /// assert!(options.filter.is_some());
    /// ```
    #[must_use]
    pub fn filter(mut self, filter: Arc<dyn ListingFilter>) -> Self {
        self.filter = Some(filter);
        self
    }

    /// Take the members of the service's tool definitions that rmcp's `Tool` does not model
    /// (`execution`, a vendor's own) from `tap`, which the service's transport feeds: without
    /// it, they are lost on the way (rmcp decodes every message into its types inside the
    /// transport). They are kept in [`ToolFields::extra`](crate::ToolFields::extra).
    ///
    /// ```
    /// # async fn demo(server_io: tokio::io::DuplexStream) -> Result<(), Box<dyn std::error::Error>> {
    /// use rmcp::ServiceExt;
    /// use pegboard::{ServiceOptions, ToolListTap};
    ///
    /// let tap = ToolListTap::new();
    /// let (read, write) = tokio::io::split(server_io);
    /// let service = ().into_dyn().serve((tap.reader(read), write)).await?;
    /// let board = pegboard::PegBoard::new();
    /// board.add_service_with(Some("files".into()), service, ServiceOptions::new().tool_list_tap(tap)).await?;
    /// # Ok(()) }
    /// ```
    #[must_use]
    pub fn tool_list_tap(mut self, tap: ToolListTap) -> Self {
        self.tool_list_tap = Some(tap);
        self
    }

    /// Whether a tool with this original name passes the allow and deny lists.
    pub fn admits(&self, original_name: &str) -> bool {
        let allowed = self
            .allow
            .as_ref()
            .is_none_or(|allow| allow.iter().any(|a| a == original_name));
        allowed && !self.deny.iter().any(|d| d == original_name)
    }
}

/// Options for one call, for [`PegBoard::call_tool_with`](crate::PegBoard::call_tool_with).
///
/// ```
/// use std::time::Duration;
/// let options = pegboard::CallOptions::new().timeout(Duration::from_millis(500));
/// assert_eq!(options.timeout, Some(Duration::from_millis(500)));
/// ```
#[derive(Clone, Debug, Default)]
#[non_exhaustive]
pub struct CallOptions {
    /// Timeout for this call, overriding the service's and the board's.
    pub timeout: Option<Duration>,
}

impl CallOptions {
    /// The service's or the board's timeout.
    pub fn new() -> Self {
        Self::default()
    }

    /// Give up (and cancel the request towards the server) after `timeout`.
    #[must_use]
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = Some(timeout);
        self
    }
}
