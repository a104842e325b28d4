//! The generator of `src/generated.rs` from `protocol/schema.json` and `protocol/meta.json`.
//!
//! A small, purpose-built JSON Schema → Rust translator: it covers exactly the constructs the
//! protocol's schema uses (objects, string enums, `anyOf` with `null` or with `BlobRef`, `oneOf`
//! discriminated by a `kind` constant, arrays, maps) and panics on anything else, so a schema
//! change it does not understand fails the drift test instead of generating something wrong.
//!
//! Used by `codegen/main.rs` (`cargo run --features codegen --bin session-sidecar-codegen`, which
//! writes the file) and by the drift test in `tests/it/codegen.rs` (which regenerates and
//! compares). Needs only `serde_json` with `preserve_order` (schema order is output order).

use serde_json::{Map, Value};
use std::collections::{BTreeSet, HashMap, HashSet};
use std::fmt::Write as _;

mod meta;
mod render;

use meta::type_of_ref;

/// Inline object schemas and enums that get a hand-picked name (path → Rust name). Paths are
/// `Def.member`, `/items` for array items, `|i` for the i-th member of a `oneOf`.
const INLINE_NAMES: &[(&str, &str)] = &[
    ("InitializeParams.clientInfo", "ClientInfo"),
    ("InitializeResult.serverInfo", "ServerInfo"),
    ("InitializeResult.store", "StoreInfo"),
    ("InterruptionRecord.toolResults/items", "ToolResult"),
    ("InvalidParamsErrorData.issues/items", "ParamsIssue"),
    ("ParentLink.summary", "ParentSummary"),
    ("ServerCapabilities.session", "SessionCapabilities"),
    ("SessionContextParams.prune", "ContextPrune"),
    ("SessionHistoryResult.generations/items", "HistoryGeneration"),
    ("SessionPruneResult.skipped/items", "PruneSkipped"),
    ("StoredCheckpointRecord.counters", "CheckpointCounters"),
    ("StoredCheckpointRecord.header", "CheckpointHeader"),
];

/// String enums, named by their set of values (sorted, joined by `,`).
const ENUM_NAMES: &[(&str, &str)] = &[
    ("request,response", "ApiDirection"),
    ("file,postgres", "StoreBackend"),
    ("always,never,onFailure", "KeepScratch"),
    ("continuation,fork", "ParentRelation"),
    ("lsp,ndjson", "Framing"),
    ("read,write", "OpenMode"),
    ("auto,manual", "TurnsMode"),
    ("gone,inTrash,open", "PruneSkipReason"),
    ("stderr,stdout", "OutputStream"),
    ("notWritten,unknown", "WriteOutcome"),
    ("fail,finish,phase,resume,start", "TurnEvent"),
    ("background,user", "TurnKind"),
    ("accepted,compacting,executingTools,providerStream", "TurnPhase"),
    ("abandoned,completed,interrupted,terminalFailure", "TurnOutcome"),
    ("abandoned,active,completed,interrupted,retryable,terminalFailure", "TurnStatus"),
];

const RUST_KEYWORDS: &[&str] = &[
    "as", "async", "await", "break", "const", "continue", "crate", "dyn", "else", "enum", "extern", "false", "fn", "for",
    "if", "impl", "in", "let", "loop", "match", "mod", "move", "mut", "pub", "ref", "return", "self", "static", "struct",
    "super", "trait", "true", "type", "unsafe", "use", "where", "while", "yield", "box", "try", "gen",
];

#[derive(Clone, Debug, PartialEq)]
enum Ty {
    String,
    I64,
    U64,
    F64,
    Bool,
    Value,
    Object,
    MapOf(Box<Ty>),
    Vec(Box<Ty>),
    Named(String),
    BlobOr(Box<Ty>),
}

impl Ty {
    fn rust(&self) -> String {
        match self {
            Ty::String => "String".into(),
            Ty::I64 => "i64".into(),
            Ty::U64 => "u64".into(),
            Ty::F64 => "f64".into(),
            Ty::Bool => "bool".into(),
            Ty::Value => "Value".into(),
            Ty::Object => "Map<String, Value>".into(),
            Ty::MapOf(t) => format!("BTreeMap<String, {}>", t.rust()),
            Ty::Vec(t) => format!("Vec<{}>", t.rust()),
            Ty::Named(n) => n.clone(),
            Ty::BlobOr(t) => format!("BlobOr<{}>", t.rust()),
        }
    }
}

#[derive(Clone, Debug)]
struct Field {
    json: String,
    rust: String,
    ty: Ty,
    required: bool,
    nullable: bool,
    doc: Option<String>,
}

#[derive(Clone, Debug)]
enum Item {
    Struct { name: String, doc: String, fields: Vec<Field>, extra: bool },
    Enum { name: String, values: Vec<String> },
    Union { name: String, doc: String, variants: Vec<(String, String)>, open: bool },
    Alias { name: String, doc: String, ty: Ty },
}

impl Item {
    fn name(&self) -> &str {
        match self {
            Item::Struct { name, .. } | Item::Enum { name, .. } | Item::Union { name, .. } | Item::Alias { name, .. } => name,
        }
    }
}

struct Gen<'a> {
    defs: &'a Map<String, Value>,
    items: Vec<Item>,
    names: HashSet<String>,
    /// Inline object schemas already named, by their shape (descriptions stripped).
    shapes: HashMap<String, String>,
    enums: HashMap<String, String>,
    /// Structs that are variants of a `oneOf` union (their `kind` member is the union's tag).
    variant_of: HashMap<String, String>,
    /// Definitions that are variants of a `oneOf` union, known before any is generated.
    variant_defs: HashSet<String>,
}

/// Generates `src/generated.rs`.
pub fn generate(schema: &Value, meta: &Value) -> String {
    let defs = schema["$defs"].as_object().expect("schema.json has $defs");
    let mut g = Gen {
        defs,
        items: Vec::new(),
        names: HashSet::new(),
        shapes: HashMap::new(),
        enums: HashMap::new(),
        variant_of: HashMap::new(),
        variant_defs: HashSet::new(),
    };
    for def in defs.values() {
        for m in def.get("oneOf").and_then(Value::as_array).into_iter().flatten() {
            if let Some(r) = m.get("$ref").and_then(Value::as_str) {
                g.variant_defs.insert(r.trim_start_matches("#/$defs/").to_owned());
            }
        }
    }
    // Shapes of the named object definitions, so an inline copy of one reuses its name.
    for (name, def) in defs {
        if def.get("type").and_then(Value::as_str) == Some("object") && def.get("properties").is_some() {
            g.shapes.entry(shape_key(def)).or_insert_with(|| name.clone());
        }
    }
    for (name, def) in defs {
        g.def(name, def);
    }
    g.check_variants();
    let input = g.input_types(meta);
    let defaultable = g.defaultable();
    g.render(meta, &input, &defaultable)
}

fn shape_key(schema: &Value) -> String {
    fn strip(v: &Value) -> Value {
        match v {
            Value::Object(m) => Value::Object(
                m.iter()
                    .filter(|(k, _)| k.as_str() != "description")
                    .map(|(k, v)| (k.clone(), strip(v)))
                    .collect(),
            ),
            Value::Array(a) => Value::Array(a.iter().map(strip).collect()),
            other => other.clone(),
        }
    }
    strip(schema).to_string()
}

fn pascal(s: &str) -> String {
    let mut out = String::new();
    let mut up = true;
    for c in s.chars() {
        if c.is_ascii_alphanumeric() {
            if up {
                out.extend(c.to_uppercase());
                up = false;
            } else {
                out.push(c);
            }
        } else {
            up = true;
        }
    }
    out
}

fn snake(s: &str) -> String {
    let mut out = String::new();
    let chars: Vec<char> = s.chars().collect();
    for (i, &c) in chars.iter().enumerate() {
        if c.is_ascii_uppercase() {
            let prev_lower = i > 0 && (chars[i - 1].is_ascii_lowercase() || chars[i - 1].is_ascii_digit());
            let next_lower = chars.get(i + 1).is_some_and(|n| n.is_ascii_lowercase());
            let prev_upper = i > 0 && chars[i - 1].is_ascii_uppercase();
            if !out.is_empty() && !out.ends_with('_') && (prev_lower || (prev_upper && next_lower)) {
                out.push('_');
            }
            out.push(c.to_ascii_lowercase());
        } else if c.is_ascii_alphanumeric() {
            out.push(c);
        } else if !out.is_empty() && !out.ends_with('_') {
            out.push('_');
        }
    }
    let out = out.trim_end_matches('_').to_string();
    if RUST_KEYWORDS.contains(&out.as_str()) {
        format!("{out}_")
    } else {
        out
    }
}

fn field_name(json: &str) -> String {
    match json {
        "_meta" => "meta".into(),
        "$blob" => "blob".into(),
        "$attach" => "attach".into(),
        other => snake(other),
    }
}

fn doc_escape(s: &str) -> String {
    let mut out = String::new();
    for c in s.trim().chars() {
        if matches!(c, '[' | ']' | '<' | '>' | '*') {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

fn description(schema: &Value) -> Option<String> {
    schema.get("description").and_then(Value::as_str).map(str::to_owned)
}

fn const_kind(schema: &Value) -> Option<String> {
    schema
        .get("properties")
        .and_then(|p| p.get("kind"))
        .and_then(|k| k.get("const"))
        .and_then(Value::as_str)
        .map(str::to_owned)
}

impl Gen<'_> {
    fn push(&mut self, item: Item) {
        assert!(self.names.insert(item.name().to_owned()), "codegen: two types named {}", item.name());
        self.items.push(item);
    }

    fn def(&mut self, name: &str, def: &Value) {
        if def.get("oneOf").is_some() {
            self.union(name, def);
            return;
        }
        match def.get("type").and_then(Value::as_str) {
            Some("object") => {
                if def.get("properties").is_none() {
                    panic!("codegen: $defs/{name} is an object without properties");
                }
                if self.names.contains(name) {
                    return; // already generated as a union variant
                }
                self.object(name, name, def);
            }
            Some("string") if def.get("enum").is_some() => {
                let n = self.enum_type(name, def);
                assert_eq!(n, name, "codegen: $defs/{name} is an enum named {n} in ENUM_NAMES; use the def's name");
            }
            Some("string") => {
                let doc = description(def).unwrap_or_default();
                self.push(Item::Alias { name: name.to_owned(), doc, ty: Ty::String });
            }
            other => panic!("codegen: $defs/{name} has type {other:?}, which this generator does not handle"),
        }
    }

    fn union(&mut self, name: &str, def: &Value) {
        let members = def["oneOf"].as_array().expect("oneOf is an array");
        let prefix = name.strip_suffix("Record").unwrap_or(name).to_owned();
        let mut variants = Vec::new();
        for (i, m) in members.iter().enumerate() {
            let (kind, struct_name) = if let Some(r) = m.get("$ref").and_then(Value::as_str) {
                let target = r.strip_prefix("#/$defs/").expect("local $ref");
                let tdef = &self.defs[target];
                let kind = const_kind(tdef).unwrap_or_else(|| panic!("codegen: {name}|{i} ({target}) has no const kind"));
                if !self.names.contains(target) {
                    self.object(target, target, tdef);
                }
                (kind, target.to_owned())
            } else {
                let kind = const_kind(m).unwrap_or_else(|| panic!("codegen: {name}|{i} has no const kind"));
                let sname = format!("{prefix}{}Record", pascal(&kind));
                self.object_as(&sname, &format!("{name}|{i}"), m, true);
                (kind, sname)
            };
            self.variant_of.insert(struct_name.clone(), name.to_owned());
            variants.push((kind, struct_name));
        }
        let doc = description(def).unwrap_or_else(|| format!("One of the `{name}` kinds, by its `kind` member."));
        self.push(Item::Union { name: name.to_owned(), doc, variants, open: false });
    }

    fn enum_type(&mut self, path: &str, schema: &Value) -> String {
        let values: Vec<String> = schema["enum"]
            .as_array()
            .expect("enum is an array")
            .iter()
            .map(|v| v.as_str().expect("string enum").to_owned())
            .collect();
        let mut sorted = values.clone();
        sorted.sort();
        let key = sorted.join(",");
        if let Some(n) = self.enums.get(&key) {
            return n.clone();
        }
        if key.contains("SessionNotFound") {
            // error.data.kind: the ErrorKind enum generated from meta.json (with codes).
            self.enums.insert(key, "ErrorKind".into());
            return "ErrorKind".into();
        }
        let name = ENUM_NAMES
            .iter()
            .find(|(k, _)| *k == key)
            .map(|(_, n)| (*n).to_owned())
            .unwrap_or_else(|| panic!("codegen: no name for the enum {key:?} at {path}: add it to ENUM_NAMES"));
        self.enums.insert(key, name.clone());
        self.push(Item::Enum { name: name.clone(), values });
        name
    }

    /// An object schema as a struct named `name`; `path` locates it for INLINE_NAMES.
    fn object(&mut self, name: &str, path: &str, schema: &Value) {
        let variant = self.variant_defs.contains(name);
        self.object_as(name, path, schema, variant);
    }

    /// As `object`; `variant`: a union variant, whose constant `kind` is the union's tag.
    fn object_as(&mut self, name: &str, path: &str, schema: &Value, variant: bool) {
        let props = schema["properties"].as_object().expect("properties");
        let required: BTreeSet<&str> = schema
            .get("required")
            .and_then(Value::as_array)
            .map(|a| a.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        let extra = match schema.get("additionalProperties") {
            Some(Value::Bool(false)) => false,
            Some(Value::Object(o)) if o.is_empty() => true,
            None => true,
            other => panic!("codegen: {path}: additionalProperties {other:?} is not handled"),
        };
        let mut fields = Vec::new();
        for (json, prop) in props {
            if variant && json == "kind" && prop.get("const").is_some() {
                continue; // the union's tag
            }
            let (ty, nullable) = self.resolve(&format!("{path}.{json}"), name, json, prop);
            let rust = field_name(json);
            assert!(rust != "extra", "codegen: {path} has a member named extra");
            fields.push(Field {
                json: json.clone(),
                rust,
                ty,
                required: required.contains(json.as_str()),
                nullable,
                doc: description(prop),
            });
        }
        let doc = description(schema).unwrap_or_else(|| {
            if path.contains(['.', '|', '/']) {
                format!("`{}` in `protocol/schema.json`.", path.replace('|', " variant "))
            } else {
                format!("`{path}` (`protocol/schema.json#/$defs/{path}`).")
            }
        });
        self.push(Item::Struct { name: name.to_owned(), doc, fields, extra });
    }

    /// The type of the member `json` of the struct `owner` (at `path`), and whether it is nullable.
    fn resolve(&mut self, path: &str, owner: &str, json: &str, schema: &Value) -> (Ty, bool) {
        if let Some(r) = schema.get("$ref").and_then(Value::as_str) {
            let target = r.strip_prefix("#/$defs/").expect("local $ref").to_owned();
            return (Ty::Named(target), false);
        }
        if let Some(any) = schema.get("anyOf").and_then(Value::as_array) {
            let non_null: Vec<&Value> =
                any.iter().filter(|s| s.get("type").and_then(Value::as_str) != Some("null")).collect();
            let nullable = non_null.len() < any.len();
            if non_null.len() == 1 {
                let (ty, _) = self.resolve(path, owner, json, non_null[0]);
                return (ty, nullable);
            }
            let is_blob = |s: &Value| s.get("$ref").and_then(Value::as_str) == Some("#/$defs/BlobRef");
            if non_null.len() == 2 && is_blob(non_null[1]) {
                let (ty, _) = self.resolve(path, owner, json, non_null[0]);
                return (Ty::BlobOr(Box::new(ty)), nullable);
            }
            // Scalars of several types (a request id: integer or string) stay a JSON value.
            let scalar = |s: &Value| matches!(s.get("type").and_then(Value::as_str), Some("integer" | "string" | "number" | "boolean"));
            if non_null.iter().all(|s| scalar(s)) {
                return (Ty::Value, nullable);
            }
            panic!("codegen: {path}: anyOf {any:?} is not handled");
        }
        let ty = match schema.get("type").and_then(Value::as_str) {
            None => {
                assert!(
                    schema.as_object().is_none_or(|o| o.keys().all(|k| k == "description")),
                    "codegen: {path}: untyped schema {schema} is not handled"
                );
                Ty::Value
            }
            Some("string") if schema.get("enum").is_some() => Ty::Named(self.enum_type(path, schema)),
            Some("string") => Ty::String,
            Some("integer") => {
                if schema.get("minimum").and_then(Value::as_f64).is_some_and(|m| m >= 0.0) {
                    Ty::U64
                } else {
                    Ty::I64
                }
            }
            Some("number") => {
                if schema.get("const").and_then(Value::as_u64).is_some() {
                    Ty::U64
                } else {
                    Ty::F64
                }
            }
            Some("boolean") => Ty::Bool,
            Some("array") => {
                let items = schema.get("items").unwrap_or(&Value::Null);
                let items = if items.is_null() { &Value::Object(Map::new()) } else { items };
                let (ty, _) = self.resolve(&format!("{path}/items"), owner, &format!("{json}Item"), items);
                Ty::Vec(Box::new(ty))
            }
            Some("object") => {
                if schema.get("properties").is_some() {
                    Ty::Named(self.inline_object(path, owner, json, schema))
                } else {
                    match schema.get("additionalProperties") {
                        None => Ty::Object,
                        Some(Value::Object(o)) if o.is_empty() => Ty::Object,
                        Some(ap @ Value::Object(_)) => {
                            let (ty, _) = self.resolve(&format!("{path}/values"), owner, json, ap);
                            Ty::MapOf(Box::new(ty))
                        }
                        Some(other) => panic!("codegen: {path}: map of {other} is not handled"),
                    }
                }
            }
            Some(other) => panic!("codegen: {path}: type {other} is not handled"),
        };
        (ty, false)
    }

    fn inline_object(&mut self, path: &str, owner: &str, json: &str, schema: &Value) -> String {
        let key = shape_key(schema);
        if let Some(n) = self.shapes.get(&key) {
            let n = n.clone();
            if !self.names.contains(&n) {
                if let Some(def) = self.defs.get(&n) {
                    let def = def.clone();
                    self.object(&n, &n, &def);
                }
            }
            return n;
        }
        let name = INLINE_NAMES
            .iter()
            .find(|(p, _)| *p == path)
            .map(|(_, n)| (*n).to_owned())
            .unwrap_or_else(|| format!("{owner}{}", pascal(json)));
        self.shapes.insert(key, name.clone());
        self.object(&name, path, schema);
        name
    }

    /// Every struct that is a union variant is used only through its union.
    fn check_variants(&self) {
        for item in &self.items {
            if let Item::Struct { name, fields, .. } = item {
                for f in fields {
                    let mut t = &f.ty;
                    while let Ty::Vec(inner) | Ty::MapOf(inner) | Ty::BlobOr(inner) = t {
                        t = inner;
                    }
                    if let Ty::Named(n) = t {
                        assert!(
                            !self.variant_of.contains_key(n),
                            "codegen: {name}.{} uses {n}, a variant of {}, directly",
                            f.json,
                            self.variant_of[n]
                        );
                    }
                }
            }
        }
    }

    fn item(&self, name: &str) -> Option<&Item> {
        self.items.iter().find(|i| i.name() == name)
    }

    fn named_in(ty: &Ty, out: &mut Vec<String>) {
        match ty {
            Ty::Named(n) => out.push(n.clone()),
            Ty::Vec(t) | Ty::MapOf(t) | Ty::BlobOr(t) => Gen::named_in(t, out),
            _ => {}
        }
    }

    /// Types a client sends: reachable from the params of a client-to-server method (and
    /// `Attachment`, which goes inside a message's `content`). They get `new` and setters, and
    /// no `#[non_exhaustive]`, so struct literals with `..Default::default()` work.
    fn input_types(&self, meta: &Value) -> HashSet<String> {
        let mut seen = HashSet::new();
        let mut stack: Vec<String> = meta["methods"]
            .as_array()
            .expect("methods")
            .iter()
            .filter(|m| m["direction"] == "clientToServer")
            .map(|m| type_of_ref(&m["params"]))
            .chain(["Attachment".to_owned()])
            .collect();
        while let Some(n) = stack.pop() {
            if !seen.insert(n.clone()) {
                continue;
            }
            match self.item(&n) {
                Some(Item::Struct { fields, .. }) => {
                    for f in fields {
                        Gen::named_in(&f.ty, &mut stack);
                    }
                }
                Some(Item::Union { variants, .. }) => stack.extend(variants.iter().map(|(_, s)| s.clone())),
                _ => {}
            }
        }
        seen
    }

    /// Types that can derive Default (unions cannot).
    fn defaultable(&self) -> HashSet<String> {
        let mut ok: HashSet<String> = HashSet::new();
        loop {
            let before = ok.len();
            for item in &self.items {
                let yes = match item {
                    Item::Enum { .. } | Item::Alias { .. } => true,
                    Item::Union { .. } => false,
                    Item::Struct { fields, .. } => fields.iter().all(|f| {
                        !f.required || f.nullable || {
                            let mut names = Vec::new();
                            Gen::named_in(&f.ty, &mut names);
                            matches!(f.ty, Ty::Vec(_) | Ty::MapOf(_))
                                || names.iter().all(|n| ok.contains(n) || n == "ErrorKind")
                        }
                    }),
                };
                if yes {
                    ok.insert(item.name().to_owned());
                }
            }
            if ok.len() == before {
                return ok;
            }
        }
    }
}
