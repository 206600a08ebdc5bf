//! Prompts on the board: every server's prompts under the board's naming policy
//! (`everything` + `args-prompt` → `everything-args-prompt`), routed back under their own name.

use std::sync::Arc;

use rmcp::model::{GetPromptRequestParams, GetPromptResponse, GetPromptResult, JsonObject, Prompt};

use super::{PegBoard, catalog::Upstream};
use crate::{Extension, PegBoardError};

/// Where a board prompt goes: its server (by namespace and extension) and the prompt's own name
/// there (what a gateway's metrics and spans name before the request is sent).
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct PromptTarget {
    /// The prompt's name at its server.
    pub original: String,
    /// The namespace the service was added under.
    pub namespace: Option<Arc<str>>,
    /// What was given to [`ServiceOptions::extension`](crate::ServiceOptions::extension).
    pub extension: Option<Extension>,
}

impl PegBoard {
    /// Every prompt of every live server that offers prompts, named like tools
    /// (`namespace-prompt`), in board order. A server that fails to list is left out (logged);
    /// when two servers' prompts get the same name, the first one keeps it (logged).
    ///
    /// ```
    /// # async fn demo() {
    /// let board = pegboard::PegBoard::new();
    /// assert!(board.list_prompts().await.is_empty());
    /// # }
    /// ```
    pub async fn list_prompts(&self) -> Vec<Prompt> {
        // Who has each name: the first server added keeps it (see `prompt_route`).
        let mut seen = std::collections::HashMap::new();
        let mut prompts = Vec::new();
        for (up, listed) in self
            .gather(&self.prompt_servers(), |up| self.prompts_of(up))
            .await
        {
            let server = up.namespace().unwrap_or_else(|| "(no namespace)".into());
            for (name, mut prompt) in self.named(&up, listed) {
                match seen.entry(name.clone()) {
                    std::collections::hash_map::Entry::Vacant(slot) => {
                        slot.insert(server.clone());
                        prompt.name = name;
                        prompts.push(prompt);
                    }
                    std::collections::hash_map::Entry::Occupied(first) => tracing::warn!(
                        "prompt `{}` of server `{server}` (its `{}`) is left out: server `{}` \
                         offers a prompt of that name; give one of them another namespace",
                        crate::error::shown(&name),
                        crate::error::shown(&prompt.name),
                        first.get()
                    ),
                }
            }
        }
        prompts
    }

    /// Get the prompt the board lists as `name`, with its arguments, from its server. URIs in
    /// its messages are namespaced as in [`crate::uri`].
    ///
    /// # Errors
    /// [`PegBoardError::PromptNotFound`] (with close matches) when no server offers it,
    /// [`PegBoardError::PromptWithheld`] when its server's filter withheld it; else the server's
    /// error, a timeout or a closed service.
    ///
    /// ```
    /// # async fn demo() {
    /// let board = pegboard::PegBoard::new();
    /// let missing = board.get_prompt("web-greet", None).await.unwrap_err();
    /// assert!(missing.to_string().contains("not on the board"));
    /// # }
    /// ```
    pub async fn get_prompt(
        &self,
        name: &str,
        arguments: Option<JsonObject>,
    ) -> Result<GetPromptResult, PegBoardError> {
        let mut params = GetPromptRequestParams::new(name.to_string());
        if let Some(arguments) = arguments {
            params = params.with_arguments(arguments);
        }
        match self.prompt_once(params).await? {
            (_, GetPromptResponse::Complete(result)) => Ok(result),
            // `input_required` (2026-07-28): this call has no client to ask.
            (up, _) => Err(up.failed(
                format!("prompts/get `{}`", crate::error::shown(name)),
                rmcp::ServiceError::UnexpectedResponse,
            )),
        }
    }

    /// One `prompts/get` of the prompt the board lists as `params.name`, with the rest of
    /// `params` (arguments, and a retry's `inputResponses` and `requestState`) as given: a
    /// server of the 2026-07-28 generation may answer `input_required` (multi round-trip
    /// requests, SEP-2322), which the caller answers and retries with. URIs in a complete
    /// result's messages are namespaced as in [`crate::uri`].
    ///
    /// # Errors
    /// As [`PegBoard::get_prompt`].
    ///
    /// ```
    /// # async fn demo() {
    /// let board = pegboard::PegBoard::new();
    /// let params = rmcp::model::GetPromptRequestParams::new("web-greet");
    /// assert!(board.get_prompt_once(params).await.is_err());
    /// # }
    /// ```
    pub async fn get_prompt_once(
        &self,
        params: GetPromptRequestParams,
    ) -> Result<GetPromptResponse, PegBoardError> {
        Ok(self.prompt_once(params).await?.1)
    }

    /// The server of the prompt the board lists as `name`, as [`PegBoard::get_prompt_once`]
    /// would route it.
    ///
    /// # Errors
    /// As [`PegBoard::get_prompt`] before anything is sent.
    ///
    /// ```
    /// # async fn demo() {
    /// let board = pegboard::PegBoard::new();
    /// assert!(board.prompt_target("web-greet").await.is_err());
    /// # }
    /// ```
    pub async fn prompt_target(&self, name: &str) -> Result<PromptTarget, PegBoardError> {
        let (up, original) = self.prompt_route(name).await?;
        Ok(PromptTarget {
            original,
            namespace: up.namespace,
            extension: up.extension,
        })
    }

    async fn prompt_once(
        &self,
        mut params: GetPromptRequestParams,
    ) -> Result<(Upstream, GetPromptResponse), PegBoardError> {
        let name = params.name.clone();
        let (up, original) = self.prompt_route(&name).await?;
        params.name = original;
        let peer = up.peer.clone();
        let mut response = up
            .ask(
                || format!("prompts/get `{}`", crate::error::shown(&name)),
                peer.get_prompt_once(params),
            )
            .await?;
        if let (GetPromptResponse::Complete(result), Some(alias)) = (&mut response, up.alias()) {
            crate::uri::encode_prompt_messages(&mut result.messages, &alias);
        }
        Ok((up, response))
    }

    /// The server of the prompt the board lists as `name`, and the prompt's own name there.
    ///
    /// Names are made by the naming policy, which may shorten or sanitise them, so a name is
    /// not split: it is matched against what the servers list, in the order they were added,
    /// as [`PegBoard::list_prompts`] does, so that when two servers' prompts get the same name
    /// (`a-b` + `c` and `a` + `b-c`), the one listed is the one got.
    pub(super) async fn prompt_route(
        &self,
        name: &str,
    ) -> Result<(Upstream, String), PegBoardError> {
        let mut names = Vec::new();
        for up in self.prompt_servers() {
            let Ok((listed, withheld)) = self.prompt_listing(up.clone()).await else {
                continue;
            };
            let naming = &self.inner.naming;
            if let Some(held) = withheld.iter().find(|w| {
                naming
                    .full_name(up.namespace.as_deref(), &w.name)
                    .is_ok_and(|shown| shown == name)
            }) {
                return Err(PegBoardError::PromptWithheld {
                    name: name.to_string(),
                    reason: held.reason.to_string(),
                });
            }
            for (shown, prompt) in self.named(&up, listed) {
                if shown == name {
                    return Ok((up, prompt.name));
                }
                names.push(shown);
            }
        }
        Err(PegBoardError::PromptNotFound {
            name: name.to_string(),
            suggestions: crate::suggest::close_matches(name, names.iter().map(String::as_str)),
        })
    }

    fn prompt_servers(&self) -> Vec<Upstream> {
        self.upstreams(|caps| caps.prompts.is_some())
    }

    /// A server's prompts, through its [`ListingFilter`](crate::ListingFilter).
    async fn prompts_of(&self, up: Upstream) -> Result<Vec<Prompt>, PegBoardError> {
        Ok(self.prompt_listing(up).await?.0)
    }

    /// A server's prompts through its filter, and what the filter withheld.
    async fn prompt_listing(
        &self,
        up: Upstream,
    ) -> Result<(Vec<Prompt>, Vec<crate::Withheld>), PegBoardError> {
        let prompts = up
            .list_all("prompts/list", self.limits(), |peer, params| async move {
                let page = peer.list_prompts(params).await?;
                Ok((page.prompts, page.next_cursor))
            })
            .await?;
        let info = up.peer.peer_info();
        let server = info.as_deref().and_then(|info| info.server_info.as_ref());
        Ok(crate::listing::apply(
            up.filter.as_ref(),
            up.namespace.as_deref(),
            server,
            &self.inner.naming,
            prompts,
            None,
            |filter, listing| filter.prompts(listing),
        ))
    }

    /// Each prompt with the name the board shows; prompts whose name the policy refuses are
    /// left out (logged).
    fn named(&self, up: &Upstream, prompts: Vec<Prompt>) -> Vec<(String, Prompt)> {
        prompts
            .into_iter()
            .filter_map(|prompt| {
                match self
                    .inner
                    .naming
                    .full_name(up.namespace.as_deref(), &prompt.name)
                {
                    Ok(name) => Some((name, prompt)),
                    Err(error) => {
                        tracing::warn!(%error, "prompt left off the board");
                        None
                    }
                }
            })
            .collect()
    }
}
