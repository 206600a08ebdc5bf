//! [`SearchConfig`]: the ranking's knobs, fixed when an index is created.

/// The fields of a tool that search reads, in the order of [`FieldWeights`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Field {
    Name = 0,
    Title = 1,
    Description = 2,
    Namespace = 3,
    Parameters = 4,
    ParameterDescriptions = 5,
}

/// How many [`Field`]s there are.
pub(crate) const FIELDS: usize = 6;

/// How much a word counts in each field of a tool, relative to the description (BM25F weights).
///
/// A word in the tool's name says more about what the tool does than one in a parameter's
/// description; a weight of 0 ignores the field.
///
/// ```
/// use pegboard::search::FieldWeights;
///
/// let names_only = FieldWeights { description: 0.0, ..FieldWeights::default() };
/// assert_eq!(names_only.name, FieldWeights::default().name);
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FieldWeights {
    /// The tool's name, split into words (original name; the board name adds the namespace).
    pub name: f32,
    /// The human-readable title.
    pub title: f32,
    /// The description.
    pub description: f32,
    /// The namespace of the tool's server.
    pub namespace: f32,
    /// The names of the parameters (properties of the input schema, nested ones included).
    pub parameters: f32,
    /// The descriptions (and enumerated values) of the parameters.
    pub parameter_descriptions: f32,
}

impl Default for FieldWeights {
    fn default() -> Self {
        Self {
            name: 3.0,
            title: 2.0,
            description: 1.0,
            namespace: 1.0,
            parameters: 0.5,
            parameter_descriptions: 0.3,
        }
    }
}

impl FieldWeights {
    pub(crate) fn as_array(&self) -> [f32; FIELDS] {
        [
            self.name,
            self.title,
            self.description,
            self.namespace,
            self.parameters,
            self.parameter_descriptions,
        ]
        .map(|w| if w.is_finite() { w.max(0.0) } else { 0.0 })
    }
}

/// The ranking's settings. [`SearchConfig::default()`] is what the board uses; the other
/// settings exist to measure what each step of the ranking buys (see the `search_recall`
/// example) and to tune it for an unusual board.
///
/// ```
/// use pegboard::search::{SearchConfig, SearchIndex};
///
/// // Plain BM25F with stemming, without word forms.
/// let config = SearchConfig { word_forms: false, ..SearchConfig::default() };
/// let index = SearchIndex::with_config(config);
/// assert!(index.is_empty());
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct SearchConfig {
    /// Field weights (BM25F).
    pub weights: FieldWeights,
    /// BM25 term-frequency saturation (typically 0.9–2.0).
    pub k1: f32,
    /// BM25 length normalisation, 0 (none) to 1 (full).
    pub b: f32,
    /// Reduce words to their stem (Snowball English): `forecasts` finds `forecast`.
    pub stemming: bool,
    /// Also match words by their first letters, at a fraction of a word's weight, so that
    /// derivations that stemming keeps apart (`therapist`, `therapy`) still meet.
    pub word_forms: bool,
    /// Weight of a word-form match relative to a word match.
    pub word_form_weight: f32,
    /// Pseudo-relevance feedback: add the most telling words of the first few results to the
    /// query and rank again, which finds tools described in other words than the query's.
    /// Off by default: on the BFCL benchmark it moved the right tool out of first place more
    /// often than into it, and it doubles the cost of a search.
    pub feedback: bool,
    /// Weight of the feedback words relative to the query's own.
    pub feedback_weight: f32,
}

impl Default for SearchConfig {
    fn default() -> Self {
        Self {
            weights: FieldWeights::default(),
            k1: 1.2,
            b: 0.75,
            stemming: true,
            word_forms: true,
            word_form_weight: 0.3,
            feedback: false,
            feedback_weight: 0.3,
        }
    }
}
