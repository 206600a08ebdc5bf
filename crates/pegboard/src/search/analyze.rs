//! Text analysis: identifiers and prose into index terms.
//!
//! Tool names are identifiers in every convention (`get_weather`, `getWeather`, `get-weather`,
//! `weather.get`, `HTTPRequest`), so words are split at case changes as well as at punctuation.
//! Words are lowercased, English stop words dropped, and the rest stemmed (Snowball English) so
//! that `forecasts` meets `forecast`. Word forms (an optional extra term per word: its first
//! [`FORM_PREFIX`] letters) let `therapist` meet `therapy`, where stemming alone does not.

use rust_stemmers::{Algorithm, Stemmer};

/// Letters kept by a word form: long enough to tell words apart, short enough to join derivations.
pub(crate) const FORM_PREFIX: usize = 5;

/// Words so common in requests and descriptions that they only cost time.
const STOP_WORDS: &[&str] = &[
    "a", "about", "after", "all", "also", "am", "an", "and", "any", "are", "as", "at", "be",
    "been", "but", "by", "can", "could", "did", "do", "does", "for", "from", "had", "has", "have",
    "he", "her", "here", "him", "his", "how", "i", "if", "in", "into", "is", "it", "its", "just",
    "me", "my", "no", "not", "of", "on", "or", "our", "please", "she", "should", "so", "some",
    "than", "that", "the", "their", "them", "then", "there", "these", "they", "this", "those",
    "to", "too", "us", "was", "we", "were", "what", "when", "where", "which", "who", "whom", "why",
    "will", "with", "would", "you", "your",
];

/// Turns text into terms; one per index, configured once.
pub(crate) struct Analyzer {
    stemmer: Option<Stemmer>,
    word_forms: bool,
}

impl Analyzer {
    pub(crate) fn new(stemming: bool, word_forms: bool) -> Self {
        Self {
            stemmer: stemming.then(|| Stemmer::create(Algorithm::English)),
            word_forms,
        }
    }

    /// Calls `emit(term, is_form)` for each term of `text`, in order, at most `max_words` words.
    /// A word form (`is_form`) follows the word it comes from; it counts for no length.
    pub(crate) fn terms(&self, text: &str, max_words: usize, mut emit: impl FnMut(&str, bool)) {
        words(text, max_words, |word| self.word_terms(word, &mut emit));
    }

    /// Calls `emit(term, is_form)` for the term of one word from [`words`], then its form if any.
    pub(crate) fn word_terms(&self, word: &str, mut emit: impl FnMut(&str, bool)) {
        match &self.stemmer {
            Some(stemmer) => emit(&stemmer.stem(word), false),
            None => emit(word, false),
        }
        if self.word_forms && word.chars().count() > FORM_PREFIX {
            let mut form = String::with_capacity(1 + 4 * FORM_PREFIX);
            form.push('~');
            form.extend(word.chars().take(FORM_PREFIX));
            emit(&form, true);
        }
    }
}

/// Calls `visit` with each meaningful lowercase word of `text`, reading at most `max_words` words.
pub(crate) fn words(text: &str, max_words: usize, mut visit: impl FnMut(&str)) {
    let mut seen = 0;
    split_words(text, |word| {
        if seen >= max_words {
            return false;
        }
        seen += 1;
        if !is_noise(word) {
            visit(word);
        }
        true
    });
}

/// Pure numbers, single letters and stop words carry no meaning for choosing a tool.
fn is_noise(word: &str) -> bool {
    word.chars().count() < 2
        || word.chars().all(|c| c.is_ascii_digit())
        || STOP_WORDS.binary_search(&word).is_ok()
}

/// Splits `text` into lowercase words, breaking at every non-alphanumeric character and at case
/// changes inside identifiers (`getHTTPResponse` -> `get`, `http`, `response`). `visit` returns
/// `false` to stop early, which bounds the work on huge inputs.
pub(crate) fn split_words(text: &str, mut visit: impl FnMut(&str) -> bool) {
    let mut word = String::new();
    let mut prev: Option<char> = None;
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if !c.is_alphanumeric() {
            if !word.is_empty() && !visit(&word) {
                return;
            }
            word.clear();
            prev = None;
            continue;
        }
        if let Some(p) = prev {
            // lower->Upper starts a word (getWeather); so does the last capital of a run that a
            // lowercase letter follows (HTTPResponse -> HTTP | Response).
            let camel = p.is_lowercase() && c.is_uppercase();
            let acronym_end = p.is_uppercase()
                && c.is_uppercase()
                && chars.peek().is_some_and(|n| n.is_lowercase());
            if (camel || acronym_end) && !word.is_empty() {
                if !visit(&word) {
                    return;
                }
                word.clear();
            }
        }
        word.extend(c.to_lowercase());
        prev = Some(c);
    }
    if !word.is_empty() {
        visit(&word);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(text: &str) -> Vec<String> {
        let mut out = Vec::new();
        split_words(text, |w| {
            out.push(w.to_string());
            true
        });
        out
    }

    fn terms(analyzer: &Analyzer, text: &str) -> Vec<String> {
        let mut out = Vec::new();
        analyzer.terms(text, usize::MAX, |t, _| out.push(t.to_string()));
        out
    }

    #[test]
    fn stop_words_are_sorted_for_binary_search() {
        assert!(STOP_WORDS.windows(2).all(|w| w[0] < w[1]));
    }

    #[test]
    fn splits_snake_camel_kebab_and_dotted_names() {
        assert_eq!(words("get_current_weather"), ["get", "current", "weather"]);
        assert_eq!(words("getCurrentWeather"), ["get", "current", "weather"]);
        assert_eq!(words("get-current-weather"), ["get", "current", "weather"]);
        assert_eq!(words("weather.current.get"), ["weather", "current", "get"]);
        assert_eq!(words("GetCurrentWeather"), ["get", "current", "weather"]);
    }

    #[test]
    fn splits_acronyms_and_mixed_conventions() {
        assert_eq!(words("getHTTPResponse"), ["get", "http", "response"]);
        assert_eq!(words("HTTPServer"), ["http", "server"]);
        assert_eq!(
            words("api.UserApi.delete_ldap_user"),
            ["api", "user", "api", "delete", "ldap", "user"]
        );
        assert_eq!(
            words("Flights_4_SearchOnewayFlight"),
            ["flights", "4", "search", "oneway", "flight"]
        );
        assert_eq!(words("web-search"), ["web", "search"]);
        assert_eq!(words("URL"), ["url"]);
    }

    #[test]
    fn handles_unicode_and_punctuation_only_input() {
        assert_eq!(words("Überprüfe Straße"), ["überprüfe", "straße"]);
        assert_eq!(words("  --__..  "), Vec::<String>::new());
        assert_eq!(words(""), Vec::<String>::new());
    }

    #[test]
    fn drops_noise_and_stems() {
        let analyzer = Analyzer::new(true, false);
        assert_eq!(
            terms(&analyzer, "Get the forecasts for 3 cities"),
            ["get", "forecast", "citi"]
        );
    }

    #[test]
    fn word_forms_join_derivations_that_stemming_keeps_apart() {
        let analyzer = Analyzer::new(true, true);
        let a = terms(&analyzer, "therapists");
        let b = terms(&analyzer, "therapy");
        assert_ne!(a[0], b[0]);
        assert_eq!(a[1], "~thera");
        assert_eq!(a[1], b[1]);
    }

    #[test]
    fn stops_after_max_words() {
        let analyzer = Analyzer::new(false, false);
        let mut out = Vec::new();
        analyzer.terms("alpha beta gamma delta", 2, |t, _| out.push(t.to_string()));
        assert_eq!(out, ["alpha", "beta"]);
    }
}
