//! Property tests of the naming policy.

use pegboard::{NamingPolicy, naming::is_llm_safe};
use proptest::prelude::*;

fn namespace() -> impl Strategy<Value = String> {
    "[A-Za-z0-9_-]{1,20}".prop_filter("not only separators", |s| !s.chars().all(|c| c == '-'))
}

proptest! {
    #[test]
    fn llm_safe_names_always_match_the_providers_rule(ns in namespace(), tool in "\\PC{1,120}") {
        let name = NamingPolicy::default().full_name(Some(&ns), &tool).unwrap();
        prop_assert!(is_llm_safe(&name), "{name:?}");
        let unprefixed = NamingPolicy::default().full_name(None, &tool).unwrap();
        prop_assert!(is_llm_safe(&unprefixed), "{unprefixed:?}");
    }

    #[test]
    fn the_same_input_always_gives_the_same_name(ns in namespace(), tool in "\\PC{1,120}") {
        let a = NamingPolicy::default().full_name(Some(&ns), &tool).unwrap();
        let b = NamingPolicy::default().full_name(Some(&ns), &tool).unwrap();
        prop_assert_eq!(a, b);
    }

    #[test]
    fn distinct_raw_names_never_merge(ns in namespace(), a in "[a-z._ -]{1,80}", b in "[a-z._ -]{1,80}") {
        prop_assume!(a != b);
        let policy = NamingPolicy::default();
        prop_assert_ne!(policy.full_name(Some(&ns), &a).unwrap(), policy.full_name(Some(&ns), &b).unwrap());
    }

    #[test]
    fn names_already_safe_are_left_alone(ns in "[A-Za-z_][A-Za-z0-9_]{0,10}", tool in "[A-Za-z0-9_-]{1,40}") {
        let name = NamingPolicy::default().full_name(Some(&ns), &tool).unwrap();
        prop_assert_eq!(name, format!("{ns}-{tool}"));
    }

    #[test]
    fn verbatim_is_plain_concatenation(ns in "\\PC{1,20}", tool in "\\PC{1,40}", sep in "[-_.:]{1,2}") {
        prop_assume!(!ns.trim().is_empty() && !ns.trim().split(sep.as_str()).all(str::is_empty));
        let name = NamingPolicy::verbatim().with_separator(sep.clone()).full_name(Some(&ns), &tool).unwrap();
        prop_assert_eq!(name, format!("{}{sep}{tool}", ns.trim()));
    }
}
