//! protocol/vectors.json, the language-neutral test vectors (protocol/README.md §16.1 "Test
//! vectors"): every scenario replayed through [`Client::call_raw`] (the generic request) against
//! a fresh sidecar on a fresh, empty store, in each framing; each answer normalized as §16.1
//! says and compared with the file's `expect` as parsed JSON (the reference:
//! test/vectors/normalize.ts). Error answers are compared as received: code, message and
//! [`session_sidecar::Error::raw_data`].
//!
//! Member order: the crate's serde_json has the `preserve_order` feature, so a `Map` keeps an
//! answer's members in the order received and ULIDs are numbered `<id:N>` in that order.
//!
//! The sidecar: `$SESSION_SIDECAR_COMMAND` when set, else the repository's `dist/src/cli.js`.

use serde_json::{Map, Value};
use session_sidecar::{Builder, Client, Framing, Stderr};
use std::collections::HashMap;
use std::path::PathBuf;

use crate::common::{command, repo_root, TempDir};

/// The scenarios of protocol/vectors.json (`$SIDECAR_PROTOCOL_VECTORS` when set), in order.
fn scenarios() -> Vec<(String, Vec<Value>)> {
    let path = std::env::var_os("SIDECAR_PROTOCOL_VECTORS")
        .map(PathBuf::from)
        .unwrap_or_else(|| repo_root().join("protocol/vectors.json"));
    let file: Value = serde_json::from_slice(&std::fs::read(&path).expect("protocol/vectors.json")).expect("JSON");
    let Some(Value::Object(s)) = file.get("scenarios") else { panic!("no scenarios in {}", path.display()) };
    s.iter().map(|(name, steps)| (name.clone(), steps.as_array().expect("steps").clone())).collect()
}

/// §16.1's normalization of one scenario's answers, and the substitution into its requests.
#[derive(Default)]
struct Normalizer {
    ids: HashMap<String, String>,    // ULID -> <id:N>
    actual: HashMap<String, String>, // <id:N> -> ULID
    root: Option<String>,
}

fn is_ulid_char(c: u8) -> bool {
    c.is_ascii_digit() || (c.is_ascii_uppercase() && !matches!(c, b'I' | b'L' | b'O' | b'U'))
}

/// Replaces every match of `width`-byte windows accepted by `is_match`, leftmost first and not
/// overlapping (as a regex's replace-all does), by `f(match)`.
fn replace_windows(s: &str, width: usize, is_match: impl Fn(&[u8]) -> bool, mut f: impl FnMut(&str) -> String) -> String {
    let b = s.as_bytes();
    let (mut out, mut last, mut i) = (String::new(), 0, 0);
    while i + width <= b.len() {
        if is_match(&b[i..i + width]) {
            out.push_str(&s[last..i]);
            out.push_str(&f(&s[i..i + width]));
            i += width;
            last = i;
        } else {
            i += 1;
        }
    }
    out.push_str(&s[last..]);
    out
}

/// `\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z`
fn is_ts(w: &[u8]) -> bool {
    const SHAPE: &[u8; 24] = b"dddd-dd-ddTdd:dd:dd.dddZ";
    w.iter().zip(SHAPE).all(|(c, s)| if *s == b'd' { c.is_ascii_digit() } else { c == s })
}

impl Normalizer {
    fn string(&mut self, v: &str, key: &str, parent: &str) -> String {
        if key == "version" && parent == "serverInfo" {
            return "<version>".into();
        }
        let s = match &self.root {
            Some(root) if !root.is_empty() => v.replace(root.as_str(), "<root>"),
            _ => v.to_owned(),
        };
        let s = replace_windows(&s, 26, |w| w.iter().all(|c| is_ulid_char(*c)), |u| {
            let n = self.ids.len() + 1;
            let id = self.ids.entry(u.to_owned()).or_insert_with(|| format!("<id:{n}>")).clone();
            self.actual.insert(id.clone(), u.to_owned());
            id
        });
        replace_windows(&s, 24, is_ts, |_| "<ts>".into())
    }

    /// Walks the answer in the order received (members as the `Map` holds them).
    fn normalize(&mut self, v: &Value, key: &str, parent: &str) -> Value {
        match v {
            Value::String(s) => Value::String(self.string(s, key, parent)),
            Value::Array(a) => Value::Array(a.iter().map(|x| self.normalize(x, "", parent)).collect()),
            Value::Object(m) => Value::Object(m.iter().map(|(k, x)| (k.clone(), self.normalize(x, k, key))).collect()),
            other => other.clone(),
        }
    }

    fn substitute(&self, v: &Value) -> Value {
        match v {
            Value::String(s) => {
                let mut out = String::new();
                let mut rest = s.as_str();
                while let Some(at) = rest.find("<id:") {
                    out.push_str(&rest[..at]);
                    let tail = &rest[at..];
                    match tail.find('>').map(|end| &tail[..=end]).filter(|id| id[4..id.len() - 1].bytes().all(|c| c.is_ascii_digit()) && id.len() > 5) {
                        Some(id) => {
                            out.push_str(self.actual.get(id).map_or(id, String::as_str));
                            rest = &tail[id.len()..];
                        }
                        None => {
                            out.push_str("<id:");
                            rest = &tail[4..];
                        }
                    }
                }
                out.push_str(rest);
                Value::String(out)
            }
            Value::Array(a) => Value::Array(a.iter().map(|x| self.substitute(x)).collect()),
            Value::Object(m) => Value::Object(m.iter().map(|(k, x)| (k.clone(), self.substitute(x))).collect()),
            other => other.clone(),
        }
    }
}

/// The answer through `call_raw` as the file's `expect` holds it: `{"result": …}`, or
/// `{"error": {code, message, data?}}` as the client received it.
fn answer(client: &Client, method: &str, params: Option<Value>) -> Value {
    let mut out = Map::new();
    match client.call_raw(method, params) {
        Ok(result) => {
            out.insert("result".into(), result);
        }
        Err(e) => {
            let (Some(code), Some(message)) = (e.code(), e.server_message()) else { panic!("{method}: {e}") };
            let mut err = Map::new();
            err.insert("code".into(), code.into());
            err.insert("message".into(), message.into());
            if let Some(data) = e.raw_data() {
                err.insert("data".into(), data.clone());
            }
            out.insert("error".into(), Value::Object(err));
        }
    }
    Value::Object(out)
}

/// Replays one scenario on a fresh store; the steps whose answer differs, described.
fn replay(framing: Framing, name: &str, steps: &[Value]) -> Vec<String> {
    assert_eq!(steps.first().and_then(|s| s["method"].as_str()), Some("initialize"), "{name} begins with initialize");
    let dir = TempDir::new();
    let client = Builder::new()
        .command(command())
        .store(dir.store())
        .framing(framing)
        .stderr(Stderr::Capture)
        .spawn_uninitialized()
        .expect("spawn");
    let mut norm = Normalizer::default();
    let mut failures = Vec::new();
    for (i, step) in steps.iter().enumerate() {
        let method = step["method"].as_str().expect("method");
        let params = step.get("params").map(|p| norm.substitute(p));
        let got = answer(&client, method, params);
        if i == 0 {
            norm.root = got["result"]["store"]["root"].as_str().map(str::to_owned);
            assert!(norm.root.is_some(), "initialize: no store.root in {got}");
            client.notify("initialized", &Map::new()).expect("initialized");
        }
        let got = norm.normalize(&got, "", "");
        if got != step["expect"] {
            failures.push(format!("{name} ({framing:?}) step {i} ({method}):\n  got  {got}\n  want {}", step["expect"]));
        }
    }
    let _ = client.kill();
    failures
}

#[test]
fn every_scenario_of_protocol_vectors_json_in_both_framings() {
    let scenarios = scenarios();
    assert!(scenarios.len() >= 10, "protocol/vectors.json has {} scenarios", scenarios.len());
    let failures: Vec<String> = std::thread::scope(|s| {
        let runs: Vec<_> = [Framing::Ndjson, Framing::Lsp]
            .into_iter()
            .flat_map(|framing| scenarios.iter().map(move |(name, steps)| (framing, name, steps)))
            .map(|(framing, name, steps)| s.spawn(move || replay(framing, name, steps)))
            .collect();
        runs.into_iter().flat_map(|r| r.join().expect("replay panicked")).collect()
    });
    assert!(failures.is_empty(), "{} answers differ from protocol/vectors.json:\n{}", failures.len(), failures.join("\n"));
}

#[test]
fn ids_are_numbered_by_first_appearance_in_member_order() {
    let (a, b) = ("01ARZ3NDEKTSV4RRFFQ69G5FAV", "01BX5ZZKBKACTAV9WEVGEMMVRY");
    let mut norm = Normalizer::default();
    let v: Value = serde_json::from_str(&format!(r#"{{"z": "x {b}", "a": ["{a}", "{b}"], "at": "2026-01-02T03:04:05.678Z"}}"#)).unwrap();
    let got = norm.normalize(&v, "", "");
    assert_eq!(got.to_string(), r#"{"z":"x <id:1>","a":["<id:2>","<id:1>"],"at":"<ts>"}"#);
    let sub = norm.substitute(&serde_json::json!({"s": ["<id:2>", "<id:9>", "<id:", "a<id:x>"]}));
    assert_eq!(sub, serde_json::json!({"s": [a, "<id:9>", "<id:", "a<id:x>"]}));
}
