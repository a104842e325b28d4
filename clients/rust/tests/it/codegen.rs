//! Drift: `src/generated.rs` is exactly what the checked-in generator writes from the
//! repository's `protocol/schema.json` and `protocol/meta.json`; and the generated method table
//! covers every method of `meta.json`.

#[path = "../../codegen/generate/mod.rs"]
#[allow(dead_code)]
mod generate;

use super::common::repo_root;
use serde_json::Value;

fn protocol(name: &str) -> Value {
    let path = repo_root().join("protocol").join(name);
    serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap()
}

#[test]
fn generated_rs_is_what_the_generator_writes() {
    let expected = generate::generate(&protocol("schema.json"), &protocol("meta.json"));
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src/generated.rs");
    let actual = std::fs::read_to_string(&path).unwrap();
    if actual != expected {
        let line = actual.lines().zip(expected.lines()).position(|(a, b)| a != b).map_or(0, |i| i + 1);
        panic!(
            "src/generated.rs differs from the generator's output (first at line {line}); regenerate with\n  \
             cargo run --manifest-path clients/rust/Cargo.toml --features codegen --bin session-sidecar-codegen"
        );
    }
}

#[test]
fn every_method_of_meta_json_is_in_the_tables() {
    let meta = protocol("meta.json");
    let methods: Vec<&str> = meta["methods"].as_array().unwrap().iter().map(|m| m["method"].as_str().unwrap()).collect();
    let table: Vec<&str> = session_sidecar::METHODS.iter().map(|m| m.name).collect();
    assert_eq!(table, methods);
    let requests: Vec<&str> = meta["methods"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["kind"] == "request" && m["method"] != "initialize" && m["method"] != "shutdown")
        .map(|m| m["method"].as_str().unwrap())
        .collect();
    let typed: Vec<&str> = session_sidecar::TYPED_METHODS.iter().map(|(m, _)| *m).collect();
    assert_eq!(typed, requests);
    let kinds: Vec<String> = session_sidecar::ErrorKind::ALL.iter().map(|k| k.as_str().to_owned()).collect();
    let meta_kinds: Vec<String> =
        meta["errors"]["domain"].as_array().unwrap().iter().map(|e| e["kind"].as_str().unwrap().to_owned()).collect();
    assert_eq!(kinds, meta_kinds);
    for e in meta["errors"]["domain"].as_array().unwrap() {
        let kind = session_sidecar::ErrorKind::from_wire(e["kind"].as_str().unwrap()).unwrap();
        assert_eq!(kind.code(), e["code"].as_i64().unwrap());
    }
}
