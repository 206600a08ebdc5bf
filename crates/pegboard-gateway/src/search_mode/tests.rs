//! Settings parsing and mode switching.

use serde_json::json;

use super::{SearchSettings, ToolSearch};

#[test]
fn modes_parse_and_bad_values_say_what_is_allowed() {
    assert_eq!("ON".parse::<ToolSearch>(), Ok(ToolSearch::On));
    assert_eq!(" auto ".parse::<ToolSearch>(), Ok(ToolSearch::Auto));
    let err = "sometimes".parse::<ToolSearch>().unwrap_err();
    assert!(err.contains("off, on, auto"), "{err}");
}

#[test]
fn config_values_parse_or_name_the_bad_field() {
    let full =
        SearchSettings::from_json(&json!({"mode": "auto", "threshold": 3, "pinned": ["x-y"]}))
            .unwrap();
    assert_eq!((full.mode, full.threshold), (ToolSearch::Auto, 3));
    assert_eq!(
        SearchSettings::from_json(&json!(true)).unwrap().mode,
        ToolSearch::On
    );
    for (bad, says) in [
        (json!(7), "`toolSearch` must be"),
        (json!({"mode": 1}), "toolSearch.mode"),
        (json!({"threshold": -1}), "toolSearch.threshold"),
        (json!({"pinned": [1]}), "toolSearch.pinned"),
        (json!({"colour": "red"}), "toolSearch.colour"),
    ] {
        let err = SearchSettings::from_json(&bad).unwrap_err();
        assert!(err.contains(says), "{bad}: {err}");
    }
}

#[test]
fn auto_turns_on_above_the_threshold() {
    let auto = SearchSettings::default().with_mode(ToolSearch::Auto);
    assert!(!auto.active(40));
    assert!(auto.active(41));
    assert!(
        SearchSettings::default()
            .with_mode(ToolSearch::On)
            .active(0)
    );
    assert!(!SearchSettings::default().active(10_000));
}

#[test]
fn ranking_parses_and_needs_the_embed_feature_for_hybrid() {
    use crate::config::Ranking;
    let lexical = SearchSettings::from_json(&json!({"mode": "on", "ranking": "lexical"})).unwrap();
    assert_eq!(lexical.ranking, Ranking::Lexical);
    let err = SearchSettings::from_json(&json!({"ranking": "fuzzy"})).unwrap_err();
    assert!(err.contains("lexical, hybrid"), "{err}");
    let err = SearchSettings::from_json(&json!({"ranking": 3})).unwrap_err();
    assert!(err.contains("toolSearch.ranking"), "{err}");
    let hybrid = SearchSettings::from_json(&json!({"ranking": "hybrid"}));
    if cfg!(feature = "embed") {
        assert_eq!(hybrid.unwrap().ranking, Ranking::Hybrid);
        assert_eq!(SearchSettings::default().ranking, Ranking::Hybrid);
    } else {
        let err = hybrid.unwrap_err();
        assert!(err.contains("feature `embed`"), "{err}");
        assert_eq!(SearchSettings::default().ranking, Ranking::Lexical);
    }
}
