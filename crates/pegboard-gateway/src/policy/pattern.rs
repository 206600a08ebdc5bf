//! A client's `tools` patterns: globs over board names, `!` to exclude, compiled once.
//!
//! A name is visible when it matches at least one include pattern (or the list has only
//! exclusions) and no exclusion. `tools` absent means everything ([`ToolPatterns::all`]); an
//! empty list means nothing. Globs are [`globset`]'s: `*` (any run of characters, `-` and `/`
//! included), `?`, `[abc]`, `{a,b}`; matching is case-sensitive, as board names are.

use std::fmt;

use globset::{Glob, GlobBuilder, GlobSet, GlobSetBuilder};

/// The compiled `tools` list of one client.
#[derive(Clone)]
pub struct ToolPatterns {
    /// The patterns as written (`None`: `tools` absent, everything visible).
    source: Option<Vec<String>>,
    include: GlobSet,
    exclude: GlobSet,
    /// Whether any pattern includes (when none does, the list only excludes).
    has_include: bool,
}

/// A pattern that cannot be compiled.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("pattern `{pattern}` {reason}")]
pub struct PatternError {
    /// The pattern as written.
    pub pattern: String,
    /// What is wrong with it.
    pub reason: String,
}

impl ToolPatterns {
    /// Every name visible (`tools` absent).
    pub fn all() -> Self {
        Self {
            source: None,
            include: GlobSet::empty(),
            exclude: GlobSet::empty(),
            has_include: false,
        }
    }

    /// Compile `patterns` (`!` before a pattern excludes).
    ///
    /// # Errors
    /// A pattern that is empty, only `!`, or not a valid glob (an unclosed `[` or `{`).
    pub fn new<I, S>(patterns: I) -> Result<Self, PatternError>
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        let source: Vec<String> = patterns.into_iter().map(Into::into).collect();
        let mut include = GlobSetBuilder::new();
        let mut exclude = GlobSetBuilder::new();
        let mut has_include = false;
        for pattern in &source {
            let (negated, glob) = split(pattern);
            let compiled = compile(pattern, glob)?;
            if negated {
                exclude.add(compiled);
            } else {
                has_include = true;
                include.add(compiled);
            }
        }
        let build = |set: GlobSetBuilder| {
            set.build().map_err(|e| PatternError {
                pattern: source.join(", "),
                reason: format!("cannot be compiled: {e}"),
            })
        };
        Ok(Self {
            include: build(include)?,
            exclude: build(exclude)?,
            has_include,
            source: Some(source.clone()),
        })
    }

    /// Whether every name is visible (`tools` absent): callers skip filtering altogether.
    pub fn sees_everything(&self) -> bool {
        self.source.is_none()
    }

    /// The patterns as written (`None` when `tools` is absent).
    pub fn source(&self) -> Option<&[String]> {
        self.source.as_deref()
    }

    /// Whether the board name `name` (a tool's or a prompt's) is visible.
    pub fn is_visible(&self, name: &str) -> bool {
        if self.sees_everything() {
            return true;
        }
        // Only exclusions: everything else; no pattern at all (`[]`): nothing.
        let included = if self.has_include {
            self.include.is_match(name)
        } else {
            !self.exclude.is_empty()
        };
        included && !self.exclude.is_match(name)
    }

    /// The patterns (as written, `!` kept) that match none of `names`: each is a warning at
    /// start (a typo, or a server that has not joined yet).
    pub fn unmatched<'a>(&self, names: impl IntoIterator<Item = &'a str>) -> Vec<&str> {
        let Some(source) = &self.source else {
            return Vec::new();
        };
        let matchers: Vec<Option<globset::GlobMatcher>> = source
            .iter()
            .map(|p| compile(p, split(p).1).ok().map(|g| g.compile_matcher()))
            .collect();
        let mut hit = vec![false; source.len()];
        for name in names {
            for (i, m) in matchers.iter().enumerate() {
                if !hit[i] && m.as_ref().is_some_and(|m| m.is_match(name)) {
                    hit[i] = true;
                }
            }
        }
        source
            .iter()
            .zip(hit)
            .filter(|(_, hit)| !hit)
            .map(|(p, _)| p.as_str())
            .collect()
    }
}

/// `("!x")` -> `(true, "x")`.
fn split(pattern: &str) -> (bool, &str) {
    match pattern.strip_prefix('!') {
        Some(rest) => (true, rest),
        None => (false, pattern),
    }
}

fn compile(pattern: &str, glob: &str) -> Result<Glob, PatternError> {
    if glob.trim().is_empty() {
        return Err(PatternError {
            pattern: pattern.to_string(),
            reason: "is empty; write a tool name or a glob such as `docs-*`".into(),
        });
    }
    GlobBuilder::new(glob)
        // Board names are not paths: `*` crosses `/` (MCP allows it in names).
        .literal_separator(false)
        .build()
        .map_err(|e| PatternError {
            pattern: pattern.to_string(),
            reason: format!("is not a valid glob: {}", e.kind()),
        })
}

impl PartialEq for ToolPatterns {
    /// Equal when written the same (the compiled sets follow from the source).
    fn eq(&self, other: &Self) -> bool {
        self.source == other.source
    }
}

impl fmt::Debug for ToolPatterns {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.source {
            None => f.write_str("ToolPatterns(all)"),
            Some(s) => f.debug_tuple("ToolPatterns").field(s).finish(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(list: &[&str]) -> ToolPatterns {
        ToolPatterns::new(list.iter().copied()).unwrap()
    }

    #[test]
    fn issue_example_includes_and_excludes() {
        let ci = p(&["units-*", "!units-list_units"]);
        assert!(ci.is_visible("units-convert"));
        assert!(!ci.is_visible("units-list_units"));
        assert!(!ci.is_visible("docs-search"));
        let readers = p(&["*-search", "*-read"]);
        assert!(readers.is_visible("docs-search"));
        assert!(readers.is_visible("notes-read"));
        assert!(!readers.is_visible("notes-write"));
    }

    #[test]
    fn only_exclusions_means_everything_else() {
        let p = p(&["!*-delete*"]);
        assert!(p.is_visible("files-read"));
        assert!(!p.is_visible("files-delete_all"));
    }

    #[test]
    fn empty_list_sees_nothing_and_absent_sees_everything() {
        let none = p(&[]);
        assert!(!none.sees_everything());
        assert!(!none.is_visible("docs-search"));
        assert!(ToolPatterns::all().is_visible("docs-search"));
    }

    #[test]
    fn exact_names_are_not_prefixes() {
        let p = p(&["notes-search"]);
        assert!(p.is_visible("notes-search"));
        assert!(!p.is_visible("notes-search2"));
        assert!(!p.is_visible("xnotes-search"));
    }

    #[test]
    fn star_crosses_slash_and_question_mark_is_one_character() {
        let p = p(&["a-*", "b-?"]);
        assert!(p.is_visible("a-x/y"));
        assert!(p.is_visible("b-1"));
        assert!(!p.is_visible("b-12"));
    }

    #[test]
    fn matching_is_case_sensitive() {
        assert!(!p(&["Docs-*"]).is_visible("docs-search"));
    }

    #[test]
    fn bad_patterns_are_errors_naming_the_pattern() {
        for bad in ["", "!", "  ", "docs-[a", "x-{a,b"] {
            let e = ToolPatterns::new([bad]).unwrap_err();
            assert!(e.to_string().contains(&format!("`{bad}`")), "{e}");
        }
    }

    #[test]
    fn unmatched_lists_includes_and_exclusions_that_match_nothing() {
        let p = p(&["units-*", "!units-reset", "dcos-*", "docs-search"]);
        assert_eq!(
            p.unmatched(["units-convert", "docs-search"]),
            ["!units-reset", "dcos-*"]
        );
        assert!(ToolPatterns::all().unmatched(["x"]).is_empty());
    }
}

#[cfg(test)]
mod examples {
    //! What the docs of these items showed when they were public, as tests.

    #[test]
    fn all() {
        let all = crate::policy::ToolPatterns::all();
        assert!(all.sees_everything() && all.is_visible("any-tool"));
    }

    #[test]
    fn new() {
        use crate::policy::ToolPatterns;
        let p = ToolPatterns::new(["units-*", "!units-list_units"]).unwrap();
        assert!(p.is_visible("units-convert"));
        assert!(!p.is_visible("units-list_units"));
        assert!(!p.is_visible("docs-search"));
    }

    #[test]
    fn unmatched() {
        use crate::policy::ToolPatterns;
        let p = ToolPatterns::new(["units-*", "!units-reset", "dcos-*"]).unwrap();
        assert_eq!(
            p.unmatched(["units-convert", "docs-search"]),
            ["!units-reset", "dcos-*"]
        );
    }
}
