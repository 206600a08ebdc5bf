//! `completion/complete` on the board: a prompt argument or a resource-template argument is
//! completed by the server that offers the prompt or template.

use rmcp::model::{CompleteRequestParams, CompleteResult, Reference};

use super::PegBoard;
use crate::PegBoardError;

impl PegBoard {
    /// Complete an argument of a board prompt (`Reference::Prompt` with the board's name) or of
    /// a board resource template (`Reference::Resource` with the board's URI template). The
    /// argument, context and result pass unchanged.
    ///
    /// # Errors
    /// [`PegBoardError::PromptNotFound`] or [`PegBoardError::ResourceNotFound`] for a reference
    /// to nothing on the board; else the server's error, a timeout or a closed service.
    ///
    /// ```
    /// # async fn demo() {
    /// use rmcp::model::{ArgumentInfo, CompleteRequestParams, Reference};
    /// let board = pegboard::PegBoard::new();
    /// let request = CompleteRequestParams::new(
    ///     Reference::for_prompt("web-greet"),
    ///     ArgumentInfo::new("city", "Pa"),
    /// );
    /// assert!(board.complete(request).await.is_err());
    /// # }
    /// ```
    pub async fn complete(
        &self,
        mut request: CompleteRequestParams,
    ) -> Result<CompleteResult, PegBoardError> {
        let (up, what) = match &mut request.r#ref {
            Reference::Prompt(prompt) => {
                let what = format!(
                    "completion/complete of prompt `{}`",
                    crate::error::shown(&prompt.name)
                );
                let (up, original) = self.prompt_route(&prompt.name).await?;
                prompt.name = original;
                (up, what)
            }
            Reference::Resource(template) => {
                let what = format!(
                    "completion/complete of `{}`",
                    crate::error::shown(&template.uri)
                );
                let (up, original) = self.resource_route(&template.uri)?;
                template.uri = original;
                (up, what)
            }
            other => {
                return Err(PegBoardError::InvalidArguments {
                    tool: "completion/complete".to_string(),
                    reason: format!(
                        "a reference of type `{}` is not supported",
                        other.reference_type()
                    ),
                });
            }
        };
        if up
            .peer
            .peer_info()
            .is_none_or(|info| info.capabilities.completions.is_none())
        {
            // The board offers completions when any server does; one that offers none has
            // nothing to suggest, which is an empty completion, not an error.
            return Ok(CompleteResult::default());
        }
        let peer = up.peer.clone();
        up.ask(|| what.clone(), peer.complete(request)).await
    }
}
