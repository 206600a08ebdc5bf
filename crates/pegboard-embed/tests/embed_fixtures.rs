//! The Rust tokenizer and embedding against the Python side: `build/distill.py` stores, for the
//! texts in `build/fixture_texts.txt`, the Hugging Face tokenizer's ids and the sentence vector
//! computed from the float table; the built-in (int8) model must give the same ids and a vector
//! whose cosine with the stored one is above 0.999.

use pegboard_embed::{StaticModel, dot};
use serde_json::Value;

fn cases() -> Vec<Value> {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/embed_cases.json"
    );
    let text = std::fs::read_to_string(path).expect("fixture");
    let json: Value = serde_json::from_str(&text).expect("fixture JSON");
    json["cases"].as_array().expect("cases").clone()
}

#[test]
fn tokenizer_matches_the_reference_tokenizer() {
    let model = StaticModel::builtin().expect("built-in model");
    let cases = cases();
    assert!(cases.len() >= 20, "the fixture holds the texts");
    for case in &cases {
        let text = case["text"].as_str().expect("text");
        let expected: Vec<u32> = case["ids"]
            .as_array()
            .expect("ids")
            .iter()
            .map(|v| u32::try_from(v.as_u64().expect("id")).expect("u32"))
            .collect();
        assert_eq!(model.tokenize(text), expected, "tokens of {text:?}");
    }
}

#[test]
fn embedding_matches_the_python_side() {
    let model = StaticModel::builtin().expect("built-in model");
    for case in cases() {
        let text = case["text"].as_str().expect("text");
        let expected: Vec<f32> = case["vector"]
            .as_array()
            .expect("vector")
            .iter()
            .map(|v| v.as_f64().expect("number") as f32)
            .collect();
        let got = model.embed(text);
        assert_eq!(got.len(), expected.len());
        if expected.iter().all(|&x| x == 0.0) {
            assert!(
                got.iter().all(|&x| x == 0.0),
                "{text:?}: no known token, zero vector"
            );
            continue;
        }
        let cosine = dot(&got, &expected);
        assert!(cosine > 0.999, "{text:?}: cosine {cosine}");
    }
}

#[test]
fn blank_and_unknown_text_embed_to_zero() {
    let model = StaticModel::builtin().expect("built-in model");
    assert!(model.embed("").iter().all(|&x| x == 0.0));
    assert!(model.embed("   \t\n").iter().all(|&x| x == 0.0));
    // A 5,000-character word is one [UNK]: nothing known, nothing found.
    assert!(model.embed(&"x".repeat(5000)).iter().all(|&x| x == 0.0));
    // A huge text reads at most MAX_TOKENS tokens and stays a unit vector.
    let long = "convert miles to kilometres ".repeat(20_000);
    let v = model.embed(&long);
    assert!((dot(&v, &v) - 1.0).abs() < 1e-4);
}
