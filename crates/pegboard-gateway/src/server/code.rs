//! Code mode's part in the MCP handler (`crate::code_mode`); built without the `code-mode`
//! feature, code mode is never on and each of these says so.

use rmcp::{
    ErrorData, RoleServer,
    model::{CallToolRequestParams, CallToolResponse, Tool},
    service::RequestContext,
};

use super::BoardServer;
use crate::identity::Client;

/// What the handler does with a `tools/call`: route this request to the board, or answer this.
pub(super) type Routed = Result<CallToolRequestParams, Result<CallToolResponse, ErrorData>>;

#[cfg(feature = "code-mode")]
impl BoardServer {
    /// Whether code mode is on.
    pub(super) fn code_mode_on(&self) -> bool {
        self.code.is_some()
    }

    /// The server's instructions in code mode.
    pub(super) fn code_instructions(&self) -> Option<String> {
        self.code
            .as_ref()
            .map(crate::code_mode::CodeMode::instructions)
    }

    /// What `tools/list` holds for `client` in code mode.
    pub(super) fn code_list(&self, client: &Client) -> Option<Vec<Tool>> {
        self.code.as_ref().map(|mode| mode.list(client))
    }

    /// A code-mode tool's definition, by name.
    pub(super) fn code_tool(&self, name: &str) -> Option<Tool> {
        self.code.as_ref().and_then(|mode| mode.get_tool(name))
    }

    /// A `tools/call` in code mode: the code-mode tools answered (a script run), any other
    /// name passed on.
    pub(super) async fn code_call(
        &self,
        request: CallToolRequestParams,
        context: &RequestContext<RoleServer>,
    ) -> Routed {
        let Some(mode) = &self.code else {
            return Ok(request);
        };
        match mode.intercept(request, self.client_of(context)) {
            crate::code_mode::Intercept::Call(request) => Ok(request),
            crate::code_mode::Intercept::Answer(answer) => Err(answer.map(Into::into)),
            crate::code_mode::Intercept::Run(code) => {
                Err(Ok(mode.run(self, &code, context).await.into()))
            }
        }
    }
}

#[cfg(not(feature = "code-mode"))]
impl BoardServer {
    /// Whether code mode is on: never, in this build.
    pub(super) fn code_mode_on(&self) -> bool {
        false
    }

    pub(super) fn code_instructions(&self) -> Option<String> {
        None
    }

    pub(super) fn code_list(&self, _client: &Client) -> Option<Vec<Tool>> {
        None
    }

    pub(super) fn code_tool(&self, _name: &str) -> Option<Tool> {
        None
    }

    #[expect(
        clippy::unused_async,
        reason = "the same signature as with the feature"
    )]
    pub(super) async fn code_call(
        &self,
        request: CallToolRequestParams,
        _context: &RequestContext<RoleServer>,
    ) -> Routed {
        Ok(request)
    }
}
