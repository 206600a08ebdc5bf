//! Property tests of the naming policy.

use pegboard::{NamingPolicy, naming::is_llm_safe};
use proptest::prelude::*;

/// The providers' rule, written out here independently of the crate:
/// `^[A-Za-z_][A-Za-z0-9_-]{0,63}$`.
fn provider_rule(name: &str) -> bool {
    let mut chars = name.chars();
    let first_ok = chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_');
    first_ok && name.len() <= 64 && chars.all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
}

fn namespace() -> impl Strategy<Value = String> {
    "[A-Za-z0-9_-]{1,20}".prop_filter("not only separators", |s| !s.chars().all(|c| c == '-'))
}

proptest! {
    #[test]
    fn llm_safe_names_always_match_the_providers_rule(ns in namespace(), tool in "\\PC{1,120}") {
        let name = NamingPolicy::default().full_name(Some(&ns), &tool).unwrap();
        prop_assert!(provider_rule(&name) && is_llm_safe(&name), "{name:?}");
        let unprefixed = NamingPolicy::default().full_name(None, &tool).unwrap();
        prop_assert!(provider_rule(&unprefixed) && is_llm_safe(&unprefixed), "{unprefixed:?}");
    }

    #[test]
    fn the_same_input_always_gives_the_same_name(ns in namespace(), tool in "\\PC{1,120}") {
        let a = NamingPolicy::default().full_name(Some(&ns), &tool).unwrap();
        let b = NamingPolicy::default().full_name(Some(&ns), &tool).unwrap();
        prop_assert_eq!(a, b);
    }

    /// Injective over (namespace, tool) for namespaces without the separator: two different
    /// pairs never share a board name, and every name made obeys the providers' rule, however
    /// hostile the tool name. (`a-b` + `c` and `a` + `b-c` do read alike: the board refuses the
    /// second, see registration.rs `namespaces_containing_the_separator_cannot_shadow_each_other`.)
    #[test]
    fn distinct_pairs_never_share_a_name(
        pairs in proptest::collection::vec(("[A-Za-z0-9_]{1,20}", "\\PC{1,90}"), 2..16)
    ) {
        let policy = NamingPolicy::default();
        let mut seen: std::collections::HashMap<String, (String, String)> = Default::default();
        for (ns, tool) in pairs {
            let name = policy.full_name(Some(&ns), &tool).unwrap();
            prop_assert!(provider_rule(&name), "{name:?} from {ns:?} + {tool:?}");
            let canonical = (ns.trim().to_string(), tool.clone());
            if let Some(earlier) = seen.insert(name.clone(), canonical.clone()) {
                prop_assert_eq!(&earlier, &canonical, "{} made by two pairs", name);
            }
        }
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
