//! [`StaticModel`]: tokenize, add the tokens' rows, normalise.

use std::sync::OnceLock;

use crate::{EmbedError, table::Table, tokenizer::WordPiece};

static VOCAB: &str = include_str!("../data/vocab.txt");
static VECTORS: &[u8] = include_bytes!("../data/vectors.bin");

/// Tokens of a text read at most; the rest is ignored (a tool description rarely has 500).
pub const MAX_TOKENS: usize = 2048;

/// A static embedding: a vector for each token of a WordPiece vocabulary; a text's vector is
/// the normalised mean of its tokens' vectors. No neural network runs.
pub struct StaticModel {
    tokenizer: WordPiece,
    table: Table<'static>,
}

impl std::fmt::Debug for StaticModel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StaticModel")
            .field("tokens", &self.table.len())
            .field("dims", &self.table.dims)
            .finish()
    }
}

impl StaticModel {
    /// The model built into this crate (distilled from all-MiniLM-L6-v2), decoded once.
    ///
    /// # Errors
    /// [`EmbedError`] if the built-in table is damaged (a build problem, not a user's).
    pub fn builtin() -> Result<&'static StaticModel, EmbedError> {
        static MODEL: OnceLock<Result<StaticModel, EmbedError>> = OnceLock::new();
        MODEL
            .get_or_init(|| StaticModel::from_parts(VOCAB, VECTORS))
            .as_ref()
            .map_err(Clone::clone)
    }

    /// A model from a vocabulary (one token a line) and a table in `build/distill.py`'s format.
    ///
    /// # Errors
    /// [`EmbedError`] when the vocabulary has no `[UNK]` or the table is malformed or of
    /// another size than the vocabulary.
    pub fn from_parts(vocab: &str, vectors: &'static [u8]) -> Result<Self, EmbedError> {
        let tokenizer = WordPiece::new(vocab)
            .ok_or_else(|| EmbedError::Table("the vocabulary has no [UNK] token".into()))?;
        let table = Table::parse(vectors)?;
        if table.len() != tokenizer.len() {
            return Err(EmbedError::Table(format!(
                "{} rows for {} tokens",
                table.len(),
                tokenizer.len()
            )));
        }
        Ok(Self { tokenizer, table })
    }

    /// The vectors' length.
    pub fn dims(&self) -> usize {
        self.table.dims
    }

    /// The token ids of `text` (without `[CLS]`/`[SEP]`), at most [`MAX_TOKENS`].
    pub fn tokenize(&self, text: &str) -> Vec<u32> {
        let mut ids = Vec::new();
        self.tokenizer.encode(text, MAX_TOKENS, &mut ids);
        ids
    }

    /// `text`'s vector, of length 1; all zeros when no token of it has a vector (an empty
    /// text, only unknown words), so that its cosine with anything is 0.
    pub fn embed(&self, text: &str) -> Vec<f32> {
        let mut sum = vec![0.0f32; self.table.dims];
        let unk = self.tokenizer.unk();
        for id in self.tokenize(text) {
            if id != unk {
                self.table.add_row(id, &mut sum);
            }
        }
        normalize(&mut sum);
        sum
    }
}

/// Scales `v` to length 1 (a zero vector stays zero).
pub(crate) fn normalize(v: &mut [f32]) {
    let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    if norm > 0.0 && norm.is_finite() {
        v.iter_mut().for_each(|x| *x /= norm);
    }
}

/// The dot product (the cosine of two normalised vectors).
pub fn dot(a: &[f32], b: &[f32]) -> f32 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}
