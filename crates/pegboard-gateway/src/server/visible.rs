//! What a client may see of the board's prompts and resources (its `tools` patterns select
//! prompts by board name; it sees a server's resources when it may see at least one of that
//! server's tools or prompts, unless its `"resources"` is `false`). A prompt or resource it may
//! not see is answered exactly as one that is not on the board.

use pegboard::{PegBoard, PegBoardError};

use crate::identity::Client;

/// Whether `client` may see the prompt the board lists as `name`.
pub(crate) fn prompt(client: &Client, name: &str) -> bool {
    client.sees_everything() || client.may_see_prompt(name)
}

/// Whether `client` may see the resources of the server whose URIs carry `alias` on the board
/// (`None`: a server added without a namespace, whose URIs carry none).
pub(crate) fn resources_of(client: &Client, board: &PegBoard, alias: Option<&str>) -> bool {
    if client.sees_everything() {
        return true;
    }
    if !client.resources_allowed() {
        return false;
    }
    let view = client.view(board);
    match alias {
        Some(alias) => board.list_namespaces().iter().any(|namespace| {
            pegboard::uri::alias(namespace) == alias
                && view.may_see_resources_with_prompts(namespace, client.patterns(), [])
        }),
        // Servers without a namespace show URIs as they are: only a client that may see every
        // tool sees theirs (which of them serves a URI is not in it).
        None => client.patterns().sees_everything(),
    }
}

/// Whether `client` may see the resource (or template) the board shows as `uri`.
pub(crate) fn resource(client: &Client, board: &PegBoard, uri: &str) -> bool {
    client.sees_everything()
        || resources_of(
            client,
            board,
            pegboard::uri::split(uri).map(|(alias, _)| alias),
        )
}

/// The answer for a prompt `name` that `client` may not see: as one not on the board, its close
/// matches among the prompts it may see.
pub(crate) fn prompt_not_found(client: &Client, name: &str, prompts: &[String]) -> PegBoardError {
    let visible: Vec<&str> = prompts
        .iter()
        .map(String::as_str)
        .filter(|p| prompt(client, p))
        .collect();
    PegBoardError::PromptNotFound {
        name: name.to_string(),
        suggestions: pegboard::suggest::close_matches(name, visible.into_iter()),
    }
}
