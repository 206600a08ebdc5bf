//! `tools/list` from one serialisation per board generation.
//!
//! On rmcp's way every `tools/list` clones each tool out of the board and serialises the typed
//! list (for 1,000 tools, 9.2M instructions, two thirds of them serialising). The board changes
//! rarely and says so by its generation ([`PegBoard::generation`]), so the express lane keeps
//! the list's JSON with the generation it was built at and answers with those bytes until the
//! generation moves.

use std::sync::{Mutex, PoisonError};

use axum::body::Bytes;
use pegboard::{ListedTool, PegBoard};

use crate::identity::Client;

/// The serialised `tools/list` result of one board generation (see the module docs).
#[derive(Debug, Default)]
pub(crate) struct ToolsList {
    cached: Mutex<Option<(u64, Bytes)>>,
}

impl ToolsList {
    /// The answer for the board as it is now, but for its id and closing brace:
    /// `{"jsonrpc":"2.0","result":{...},"id":` (members in any order are one message; with the
    /// id last, the big part is written as it is kept, never copied into a new line).
    fn head(&self, board: &PegBoard) -> Bytes {
        // Read before building: a change while building makes the next call build again.
        let generation = board.generation();
        if let Some((built_at, json)) = &*self.cached.lock().unwrap_or_else(PoisonError::into_inner)
            && *built_at == generation
        {
            return json.clone();
        }
        let json = render(&board.listed_tools());
        *self.cached.lock().unwrap_or_else(PoisonError::into_inner) =
            Some((generation, json.clone()));
        json
    }

    /// [`ToolsList::head`] for `client`: the board's, or its view's (kept with the view, which
    /// lives as long as the board is unchanged).
    fn head_for(&self, board: &PegBoard, client: &Client) -> Bytes {
        if client.sees_everything() {
            return self.head(board);
        }
        let view = client.view(board);
        view.rendered(|view| render(&crate::definitions::listing_in(board, view)))
    }

    /// The answer line for request `id` (raw JSON) of `client` in two pieces: the kept head,
    /// and the id with the end of the line.
    pub(crate) fn answer_parts(
        &self,
        board: &PegBoard,
        client: &Client,
        id: &[u8],
    ) -> (Bytes, Vec<u8>) {
        let mut tail = Vec::with_capacity(id.len() + 2);
        tail.extend_from_slice(id);
        tail.extend_from_slice(b"}\n");
        (self.head_for(board, client), tail)
    }

    /// The answer for request `id` (raw JSON) of `client` without the line's end, as a body
    /// that sends the kept head as it is (see [`super::chunks`]).
    pub(crate) fn answer_body(
        &self,
        board: &PegBoard,
        client: &Client,
        id: &[u8],
    ) -> super::chunks::Chunks {
        let (head, mut tail) = self.answer_parts(board, client, id);
        tail.pop();
        super::chunks::Chunks::new(vec![head, Bytes::from(tail)])
    }
}

/// The answer's head for `tools`: `{"jsonrpc":"2.0","result":{...},"id":`.
fn render(tools: &[ListedTool]) -> Bytes {
    // The tools as the board lists them (`crate::definitions`), every member their servers sent
    // included (rmcp's `ListToolsResult` has no room for those). The lane serves legacy sessions only, which have
    // no `resultType`; the whole list fits one page, so there is no `nextCursor`.
    let mut head = br#"{"jsonrpc":"2.0","result":{"tools":"#.to_vec();
    // A list of tools made of JSON values serialises without fail.
    let _ = serde_json::to_writer(&mut head, tools);
    head.extend_from_slice(br#"},"id":"#);
    Bytes::from(head)
}
