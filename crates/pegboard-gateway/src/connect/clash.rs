//! What a refused registration says when one of the server's tool names is taken: the board's
//! error names the namespace holding it, which need not be a config entry's name (`"namespace"`,
//! `"prefix": false`); this names both entries and the tool.

use pegboard::{PegBoard, PegBoardError};

use crate::upstream::Hub;

/// The message for a clash of `server`'s tools with one on `board` (`None`: `error` is no clash
/// with a server on the board, e.g. two tools of the same server, or the holder has gone since).
pub(super) fn described(board: &PegBoard, server: &str, error: &PegBoardError) -> Option<String> {
    let PegBoardError::DuplicateTool { name, .. } = error else {
        return None;
    };
    let holder = board.tool_target(name).ok()?;
    let hub = holder.extension.as_ref()?.get::<Hub>()?;
    let entry = hub.entry()?;
    Some(format!(
        "tool `{name}` clashes: server `{entry}` lists it already (its tool `{}`), and server \
         `{server}` would list a tool under the same name; give one of the two another \
         \"namespace\", or leave the tool out of one with \"deny\"",
        holder.original
    ))
}
