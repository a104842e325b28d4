//! `session-sidecar-codegen`: writes `src/generated.rs` from `protocol/schema.json` and
//! `protocol/meta.json` (the repository's, two directories above this crate).
//!
//! ```sh
//! cargo run --manifest-path clients/rust/Cargo.toml --features codegen --bin session-sidecar-codegen
//! ```

mod generate;

use std::path::Path;

fn main() {
    let crate_dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let protocol = crate_dir.join("../../protocol");
    let read = |name: &str| -> serde_json::Value {
        let path = protocol.join(name);
        let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
        serde_json::from_str(&text).unwrap_or_else(|e| panic!("{} is not JSON: {e}", path.display()))
    };
    let out = generate::generate(&read("schema.json"), &read("meta.json"));
    let target = crate_dir.join("src/generated.rs");
    let old = std::fs::read_to_string(&target).unwrap_or_default();
    if old == out {
        println!("{} is up to date", target.display());
    } else {
        std::fs::write(&target, out).unwrap_or_else(|e| panic!("cannot write {}: {e}", target.display()));
        println!("wrote {}", target.display());
    }
}
