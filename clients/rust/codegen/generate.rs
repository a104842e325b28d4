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

    fn field_rust_type(f: &Field) -> String {
        if f.required && !f.nullable {
            f.ty.rust()
        } else {
            format!("Option<{}>", f.ty.rust())
        }
    }

    fn render(&self, meta: &Value, input: &HashSet<String>, defaultable: &HashSet<String>) -> String {
        let mut o = String::new();
        o.push_str(HEADER);
        for item in &self.items {
            o.push('\n');
            match item {
                Item::Alias { name, doc, ty } => {
                    writeln!(o, "/// {}", doc_escape(doc)).unwrap();
                    writeln!(o, "pub type {name} = {};", ty.rust()).unwrap();
                }
                Item::Enum { name, values } => render_enum(&mut o, name, values, &[]),
                Item::Struct { name, doc, fields, extra } => {
                    self.render_struct(&mut o, name, doc, fields, *extra, input.contains(name), defaultable.contains(name))
                }
                Item::Union { name, doc, variants, open } => {
                    let open = *open || !input.contains(name);
                    self.render_union(&mut o, name, doc, variants, open)
                }
            }
        }
        render_meta(&mut o, meta, self);
        o
    }

    #[allow(clippy::too_many_arguments)]
    fn render_struct(
        &self,
        o: &mut String,
        name: &str,
        doc: &str,
        fields: &[Field],
        extra: bool,
        input: bool,
        default: bool,
    ) {
        writeln!(o, "/// {}", doc_escape(doc)).unwrap();
        let d = if default { ", Default" } else { "" };
        writeln!(o, "#[derive(Debug, Clone, PartialEq{d}, Serialize, Deserialize)]").unwrap();
        if !input {
            // A result: the server may add members (results are open), so no struct literals.
            writeln!(o, "#[non_exhaustive]").unwrap();
        }
        writeln!(o, "pub struct {name} {{").unwrap();
        for f in fields {
            match (&f.doc, f.json.as_str()) {
                (Some(doc), _) => writeln!(o, "    /// {}", doc_escape(doc)).unwrap(),
                (None, "_meta") => writeln!(o, "    /// `_meta`: an extension point, opaque to the server (protocol §7).").unwrap(),
                (None, json) => writeln!(o, "    /// `{json}`").unwrap(),
            }
            let mut attrs = Vec::new();
            if f.rust != f.json {
                attrs.push(format!("rename = \"{}\"", f.json));
            }
            if !f.required {
                attrs.push("default".into());
                attrs.push("skip_serializing_if = \"Option::is_none\"".into());
                if f.ty == Ty::Value {
                    attrs.push("deserialize_with = \"present\"".into());
                }
            }
            if !attrs.is_empty() {
                writeln!(o, "    #[serde({})]", attrs.join(", ")).unwrap();
            }
            writeln!(o, "    pub {}: {},", f.rust, Gen::field_rust_type(f)).unwrap();
        }
        if extra {
            writeln!(o, "    /// Members this schema does not list (kept as sent).").unwrap();
            writeln!(o, "    #[serde(flatten)]").unwrap();
            writeln!(o, "    pub extra: Map<String, Value>,").unwrap();
        }
        writeln!(o, "}}").unwrap();
        if !input {
            return;
        }
        let req: Vec<&Field> = fields.iter().filter(|f| f.required).collect();
        let opt: Vec<&Field> = fields.iter().filter(|f| !f.required).collect();
        writeln!(o, "\nimpl {name} {{").unwrap();
        if default || !req.is_empty() {
            let args: Vec<String> = req.iter().map(|f| format!("{}: {}", f.rust, arg_type(f))).collect();
            writeln!(o, "    /// `{name}` with its required members set, the others unset.").unwrap();
            if args.len() > 6 {
                writeln!(o, "    #[allow(clippy::too_many_arguments)]").unwrap();
            }
            writeln!(o, "    pub fn new({}) -> Self {{", args.join(", ")).unwrap();
            writeln!(o, "        Self {{").unwrap();
            for f in fields {
                if f.required {
                    let conv = arg_conv(f, &f.rust);
                    if conv == f.rust {
                        writeln!(o, "            {},", f.rust).unwrap();
                    } else {
                        writeln!(o, "            {}: {conv},", f.rust).unwrap();
                    }
                } else {
                    writeln!(o, "            {}: None,", f.rust).unwrap();
                }
            }
            if extra {
                writeln!(o, "            extra: Map::new(),").unwrap();
            }
            writeln!(o, "        }}").unwrap();
            writeln!(o, "    }}").unwrap();
        }
        for f in opt {
            writeln!(o, "    /// Sets `{}`.", f.json).unwrap();
            writeln!(o, "    pub fn {}(mut self, value: {}) -> Self {{", f.rust, arg_type(f)).unwrap();
            writeln!(o, "        self.{} = Some({});", f.rust, arg_conv(f, "value")).unwrap();
            writeln!(o, "        self").unwrap();
            writeln!(o, "    }}").unwrap();
        }
        writeln!(o, "}}").unwrap();
    }

    fn render_union(&self, o: &mut String, name: &str, doc: &str, variants: &[(String, String)], open: bool) {
        writeln!(o, "/// {}", doc_escape(doc)).unwrap();
        writeln!(o, "///").unwrap();
        writeln!(o, "/// Serialized with its `kind` member first, then the variant's members.").unwrap();
        if open {
            writeln!(o, "/// A kind this version of the client does not know is kept as `Unknown`.").unwrap();
        }
        writeln!(o, "#[derive(Debug, Clone, PartialEq)]").unwrap();
        writeln!(o, "#[non_exhaustive]").unwrap();
        writeln!(o, "pub enum {name} {{").unwrap();
        for (kind, s) in variants {
            writeln!(o, "    /// `kind: \"{kind}\"`").unwrap();
            writeln!(o, "    {}({s}),", pascal(kind)).unwrap();
        }
        if open {
            writeln!(o, "    /// A record of a kind this client does not know, as received.").unwrap();
            writeln!(o, "    Unknown(Value),").unwrap();
        }
        writeln!(o, "}}").unwrap();
        // kind(), and accessors for the members every variant has with the same type.
        writeln!(o, "\nimpl {name} {{").unwrap();
        writeln!(o, "    /// The `kind` member.").unwrap();
        writeln!(o, "    pub fn kind(&self) -> &str {{").unwrap();
        writeln!(o, "        match self {{").unwrap();
        for (kind, _) in variants {
            writeln!(o, "            Self::{}(_) => \"{kind}\",", pascal(kind)).unwrap();
        }
        if open {
            writeln!(o, "            Self::Unknown(v) => v.get(\"kind\").and_then(Value::as_str).unwrap_or(\"\"),").unwrap();
        }
        writeln!(o, "        }}").unwrap();
        writeln!(o, "    }}").unwrap();
        let variant_fields: Vec<&Vec<Field>> = variants
            .iter()
            .map(|(_, s)| match self.item(s) {
                Some(Item::Struct { fields, .. }) => fields,
                _ => panic!("codegen: variant {s} is not a struct"),
            })
            .collect();
        for f in variant_fields[0] {
            let common = variant_fields.iter().all(|fs| {
                fs.iter().any(|g| g.json == f.json && g.ty == f.ty && g.required == f.required && g.nullable == f.nullable)
            });
            if !common || !f.required || f.nullable {
                continue;
            }
            let (ret, get, unknown) = match f.ty {
                Ty::U64 => ("u64", format!("r.{}", f.rust), format!("v.get(\"{}\").and_then(Value::as_u64).unwrap_or(0)", f.json)),
                Ty::String => ("&str", format!("&r.{}", f.rust), format!("v.get(\"{}\").and_then(Value::as_str).unwrap_or(\"\")", f.json)),
                _ => continue,
            };
            if let Some(doc) = &f.doc {
                writeln!(o, "    /// {}", doc_escape(doc)).unwrap();
            }
            if open {
                writeln!(o, "    ///\n    /// (`Unknown`: read from the raw record; 0 or \"\" when absent.)").unwrap();
            }
            writeln!(o, "    pub fn {}(&self) -> {ret} {{", f.rust).unwrap();
            writeln!(o, "        match self {{").unwrap();
            for (kind, _) in variants {
                writeln!(o, "            Self::{}(r) => {get},", pascal(kind)).unwrap();
            }
            if open {
                writeln!(o, "            Self::Unknown(v) => {unknown},").unwrap();
            }
            writeln!(o, "        }}").unwrap();
            writeln!(o, "    }}").unwrap();
        }
        writeln!(o, "}}").unwrap();
        // Serialize: {"kind": ..., ...members}.
        writeln!(o, "\nimpl Serialize for {name} {{").unwrap();
        writeln!(o, "    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {{").unwrap();
        writeln!(o, "        match self {{").unwrap();
        for (kind, _) in variants {
            writeln!(
                o,
                "            Self::{}(r) => Tagged {{ kind: \"{kind}\", inner: r }}.serialize(serializer),",
                pascal(kind)
            )
            .unwrap();
        }
        if open {
            writeln!(o, "            Self::Unknown(v) => v.serialize(serializer),").unwrap();
        }
        writeln!(o, "        }}").unwrap();
        writeln!(o, "    }}").unwrap();
        writeln!(o, "}}").unwrap();
        // Deserialize: by kind; a known kind must match its variant exactly.
        writeln!(o, "\nimpl<'de> Deserialize<'de> for {name} {{").unwrap();
        writeln!(o, "    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {{").unwrap();
        writeln!(o, "        let value = Value::deserialize(deserializer)?;").unwrap();
        writeln!(o, "        let kind = match value.get(\"kind\") {{").unwrap();
        writeln!(o, "            Some(Value::String(k)) => k.clone(),").unwrap();
        writeln!(o, "            _ => return Err(D::Error::missing_field(\"kind\")),").unwrap();
        writeln!(o, "        }};").unwrap();
        writeln!(o, "        match kind.as_str() {{").unwrap();
        for (kind, s) in variants {
            writeln!(
                o,
                "            \"{kind}\" => {s}::deserialize(value).map(Self::{}).map_err(D::Error::custom),",
                pascal(kind)
            )
            .unwrap();
        }
        if open {
            writeln!(o, "            _ => Ok(Self::Unknown(value)),").unwrap();
        } else {
            let kinds: Vec<&str> = variants.iter().map(|(k, _)| k.as_str()).collect();
            writeln!(o, "            other => Err(D::Error::unknown_variant(other, &{kinds:?})),").unwrap();
        }
        writeln!(o, "        }}").unwrap();
        writeln!(o, "    }}").unwrap();
        writeln!(o, "}}").unwrap();
        for (kind, s) in variants {
            writeln!(o, "\nimpl From<{s}> for {name} {{").unwrap();
            writeln!(o, "    fn from(r: {s}) -> Self {{").unwrap();
            writeln!(o, "        Self::{}(r)", pascal(kind)).unwrap();
            writeln!(o, "    }}").unwrap();
            writeln!(o, "}}").unwrap();
        }
    }
}

fn arg_type(f: &Field) -> String {
    match &f.ty {
        // Numbers and booleans by value: `impl Into<u64>` would not accept a bare literal.
        Ty::U64 | Ty::I64 | Ty::F64 | Ty::Bool => f.ty.rust(),
        Ty::Vec(inner) => format!("impl IntoIterator<Item = impl Into<{}>>", inner.rust()),
        t => format!("impl Into<{}>", t.rust()),
    }
}

fn arg_conv(f: &Field, var: &str) -> String {
    let conv = match &f.ty {
        Ty::U64 | Ty::I64 | Ty::F64 | Ty::Bool => var.to_owned(),
        Ty::Vec(_) => format!("{var}.into_iter().map(Into::into).collect()"),
        _ => format!("{var}.into()"),
    };
    if f.required && f.nullable {
        format!("Some({conv})")
    } else {
        conv
    }
}

fn render_enum(o: &mut String, name: &str, values: &[String], codes: &[i64]) {
    if codes.is_empty() {
        writeln!(o, "/// One of {}.", values.iter().map(|v| format!("`{v}`")).collect::<Vec<_>>().join(", ")).unwrap();
    } else {
        writeln!(o, "/// The domain error kinds of `protocol/meta.json` (`error.data.kind`), each with its code.").unwrap();
    }
    writeln!(o, "///").unwrap();
    writeln!(o, "/// `Unknown` stands for a value this version of the client does not know (it is never sent).").unwrap();
    writeln!(o, "#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]").unwrap();
    writeln!(o, "#[non_exhaustive]").unwrap();
    writeln!(o, "pub enum {name} {{").unwrap();
    for (i, v) in values.iter().enumerate() {
        if i == 0 {
            writeln!(o, "    #[default]").unwrap();
        }
        if codes.is_empty() {
            writeln!(o, "    /// `\"{v}\"`").unwrap();
        } else {
            writeln!(o, "    /// `{v}`: code {}.", codes[i]).unwrap();
        }
        if pascal(v) != *v {
            writeln!(o, "    #[serde(rename = \"{v}\")]").unwrap();
        }
        writeln!(o, "    {},", pascal(v)).unwrap();
    }
    writeln!(o, "    /// A value this version of the client does not know.").unwrap();
    writeln!(o, "    #[serde(other)]").unwrap();
    writeln!(o, "    Unknown,").unwrap();
    writeln!(o, "}}").unwrap();
    writeln!(o, "\nimpl {name} {{").unwrap();
    writeln!(o, "    /// Every known value, in schema order.").unwrap();
    let all: Vec<String> = values.iter().map(|v| format!("Self::{}", pascal(v))).collect();
    writeln!(o, "    pub const ALL: &'static [Self] = &[{}];", all.join(", ")).unwrap();
    writeln!(o, "\n    /// The value on the wire (`\"Unknown\"` for `Unknown`).").unwrap();
    writeln!(o, "    pub fn as_str(self) -> &'static str {{").unwrap();
    writeln!(o, "        match self {{").unwrap();
    for v in values {
        writeln!(o, "            Self::{} => \"{v}\",", pascal(v)).unwrap();
    }
    writeln!(o, "            Self::Unknown => \"Unknown\",").unwrap();
    writeln!(o, "        }}").unwrap();
    writeln!(o, "    }}").unwrap();
    writeln!(o, "\n    /// The value named `s` on the wire, if known.").unwrap();
    writeln!(o, "    pub fn from_wire(s: &str) -> Option<Self> {{").unwrap();
    writeln!(o, "        Self::ALL.iter().copied().find(|v| v.as_str() == s)").unwrap();
    writeln!(o, "    }}").unwrap();
    if !codes.is_empty() {
        writeln!(o, "\n    /// The JSON-RPC error code of this kind (0 for `Unknown`).").unwrap();
        writeln!(o, "    pub fn code(self) -> i64 {{").unwrap();
        writeln!(o, "        match self {{").unwrap();
        for (v, c) in values.iter().zip(codes) {
            writeln!(o, "            Self::{} => {c},", pascal(v)).unwrap();
        }
        writeln!(o, "            Self::Unknown => 0,").unwrap();
        writeln!(o, "        }}").unwrap();
        writeln!(o, "    }}").unwrap();
        writeln!(o, "\n    /// The kind with this code, if known.").unwrap();
        writeln!(o, "    pub fn from_code(code: i64) -> Option<Self> {{").unwrap();
        writeln!(o, "        Self::ALL.iter().copied().find(|v| v.code() == code)").unwrap();
        writeln!(o, "    }}").unwrap();
    }
    writeln!(o, "}}").unwrap();
    writeln!(o, "\nimpl std::fmt::Display for {name} {{").unwrap();
    writeln!(o, "    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {{").unwrap();
    writeln!(o, "        f.write_str(self.as_str())").unwrap();
    writeln!(o, "    }}").unwrap();
    writeln!(o, "}}").unwrap();
}

fn type_of_ref(r: &Value) -> String {
    if r.get("type").and_then(Value::as_str) == Some("null") {
        return "()".into();
    }
    r["$ref"].as_str().and_then(|s| s.strip_prefix("schema.json#/$defs/")).expect("meta.json $ref").to_owned()
}

fn client_fn_name(method: &str) -> String {
    match method.split_once('/') {
        Some(("session", rest)) => snake(rest),
        Some((domain, rest)) => format!("{}_{}", snake(domain), snake(rest)),
        None => snake(method),
    }
}

fn render_meta(o: &mut String, meta: &Value, g: &Gen<'_>) {
    let version = meta["protocolVersion"].as_u64().expect("protocolVersion");
    writeln!(o, "\n// ---- protocol/meta.json ------------------------------------------------------------------").unwrap();
    writeln!(o, "\n/// The protocol version this client speaks (sent in `initialize`).").unwrap();
    writeln!(o, "pub const PROTOCOL_VERSION: i64 = {version};").unwrap();
    let kinds: Vec<String> =
        meta["recordKinds"].as_array().expect("recordKinds").iter().map(|k| format!("{k}")).collect();
    writeln!(o, "\n/// The record kinds a client may append (`capabilities.recordKinds` of this version).").unwrap();
    writeln!(o, "pub const RECORD_KINDS: &[&str] = &[{}];", kinds.join(", ")).unwrap();

    writeln!(o, "\n/// JSON-RPC 2.0 and LSP error codes the server answers with.").unwrap();
    writeln!(o, "pub mod jsonrpc_code {{").unwrap();
    for (name, code) in meta["errors"]["jsonRpc"].as_object().expect("errors.jsonRpc") {
        writeln!(o, "    /// `{name}`").unwrap();
        writeln!(o, "    pub const {}: i64 = {};", snake(name).to_uppercase(), code.as_i64().expect("code")).unwrap();
    }
    writeln!(o, "}}").unwrap();

    let domain = meta["errors"]["domain"].as_array().expect("errors.domain");
    let names: Vec<String> = domain.iter().map(|e| e["kind"].as_str().expect("kind").to_owned()).collect();
    let codes: Vec<i64> = domain.iter().map(|e| e["code"].as_i64().expect("code")).collect();
    if let Some(Item::Struct { fields, .. }) = g.item("DomainErrorData") {
        assert!(fields.iter().any(|f| f.ty == Ty::Named("ErrorKind".into())), "DomainErrorData.kind is ErrorKind");
    }
    o.push('\n');
    render_enum(o, "ErrorKind", &names, &codes);

    let methods = meta["methods"].as_array().expect("methods");
    writeln!(o, "\n/// What `protocol/meta.json` says of a method.").unwrap();
    writeln!(o, "#[derive(Debug, Clone, Copy, PartialEq, Eq)]").unwrap();
    writeln!(o, "pub struct MethodInfo {{").unwrap();
    writeln!(o, "    /// The method name, e.g. `session/append`.").unwrap();
    writeln!(o, "    pub name: &'static str,").unwrap();
    writeln!(o, "    /// A request (answered) or a notification.").unwrap();
    writeln!(o, "    pub request: bool,").unwrap();
    writeln!(o, "    /// Sent by the client (else by the server).").unwrap();
    writeln!(o, "    pub client_to_server: bool,").unwrap();
    writeln!(o, "    /// Whether the params may be omitted.").unwrap();
    writeln!(o, "    pub params_optional: bool,").unwrap();
    writeln!(o, "    /// The capability that announces it, if any (a path in `capabilities`).").unwrap();
    writeln!(o, "    pub capability: Option<&'static str>,").unwrap();
    writeln!(o, "    /// The protocol version that introduced it.").unwrap();
    writeln!(o, "    pub since: u64,").unwrap();
    writeln!(o, "    /// One line on what it does.").unwrap();
    writeln!(o, "    pub summary: &'static str,").unwrap();
    writeln!(o, "}}").unwrap();
    writeln!(o, "\n/// Every method and notification of the protocol, in `meta.json` order.").unwrap();
    writeln!(o, "pub const METHODS: &[MethodInfo] = &[").unwrap();
    for m in methods {
        let cap = match m.get("capability").and_then(Value::as_str) {
            Some(c) => format!("Some({c:?})"),
            None => "None".into(),
        };
        writeln!(
            o,
            "    MethodInfo {{ name: {:?}, request: {}, client_to_server: {}, params_optional: {}, capability: {cap}, since: {}, summary: {:?} }},",
            m["method"].as_str().expect("method"),
            m["kind"] == "request",
            m["direction"] == "clientToServer",
            m["params"]["optional"].as_bool().unwrap_or(false),
            m["since"].as_u64().expect("since"),
            m["summary"].as_str().expect("summary"),
        )
        .unwrap();
    }
    writeln!(o, "];").unwrap();

    // One marker type per request, implementing Method.
    writeln!(o, "\n/// One marker type per request method, for `Client::call`, `Client::send` and their async twins.").unwrap();
    writeln!(o, "pub mod method {{").unwrap();
    writeln!(o, "    use super::*;").unwrap();
    let requests: Vec<&Value> = methods.iter().filter(|m| m["kind"] == "request").collect();
    for m in &requests {
        let name = m["method"].as_str().expect("method");
        let params = type_of_ref(&m["params"]);
        let result = type_of_ref(&m["result"]);
        writeln!(o, "\n    /// `{name}`: {}", doc_escape(m["summary"].as_str().unwrap_or(""))).unwrap();
        writeln!(o, "    #[derive(Debug, Clone, Copy, PartialEq, Eq)]").unwrap();
        writeln!(o, "    pub struct {};", pascal(name)).unwrap();
        writeln!(o, "\n    impl crate::Method for {} {{", pascal(name)).unwrap();
        writeln!(o, "        const NAME: &'static str = {name:?};").unwrap();
        writeln!(o, "        type Params = {params};").unwrap();
        writeln!(o, "        type Result = {result};").unwrap();
        writeln!(o, "    }}").unwrap();
    }
    writeln!(o, "}}").unwrap();

    // Server notifications.
    let notes: Vec<&Value> =
        methods.iter().filter(|m| m["kind"] == "notification" && m["direction"] == "serverToClient").collect();
    writeln!(o, "\n/// A notification from the server (only for a `session/subscribe` the client made).").unwrap();
    writeln!(o, "#[derive(Debug, Clone, PartialEq)]").unwrap();
    writeln!(o, "#[non_exhaustive]").unwrap();
    writeln!(o, "pub enum Notification {{").unwrap();
    for m in &notes {
        let name = m["method"].as_str().expect("method");
        writeln!(o, "    /// `{name}`: {}", doc_escape(m["summary"].as_str().unwrap_or(""))).unwrap();
        writeln!(o, "    {}({}),", pascal(name), type_of_ref(&m["params"])).unwrap();
    }
    writeln!(o, "    /// A notification this client does not know, or whose params it could not decode").unwrap();
    writeln!(o, "    /// (`error` says why; `None` for an unknown method).").unwrap();
    writeln!(o, "    Unknown {{").unwrap();
    writeln!(o, "        /// The notification's method.").unwrap();
    writeln!(o, "        method: String,").unwrap();
    writeln!(o, "        /// Its params, as received.").unwrap();
    writeln!(o, "        params: Value,").unwrap();
    writeln!(o, "        /// Why the params could not be decoded, for a known method.").unwrap();
    writeln!(o, "        error: Option<String>,").unwrap();
    writeln!(o, "    }},").unwrap();
    writeln!(o, "}}").unwrap();
    writeln!(o, "\nimpl Notification {{").unwrap();
    writeln!(o, "    /// Decodes a notification from its method and params (never fails: see `Unknown`).").unwrap();
    writeln!(o, "    pub fn from_message(method: &str, params: Value) -> Self {{").unwrap();
    writeln!(o, "        let decoded = match method {{").unwrap();
    for m in &notes {
        let name = m["method"].as_str().expect("method");
        writeln!(
            o,
            "            {name:?} => serde_json::from_value(params.clone()).map(Self::{}),",
            pascal(name)
        )
        .unwrap();
    }
    writeln!(o, "            _ => return Self::Unknown {{ method: method.to_owned(), params, error: None }},").unwrap();
    writeln!(o, "        }};").unwrap();
    writeln!(o, "        decoded.unwrap_or_else(|e| Self::Unknown {{ method: method.to_owned(), params, error: Some(e.to_string()) }})").unwrap();
    writeln!(o, "    }}").unwrap();
    writeln!(o, "\n    /// The notification's method name.").unwrap();
    writeln!(o, "    pub fn method(&self) -> &str {{").unwrap();
    writeln!(o, "        match self {{").unwrap();
    for m in &notes {
        let name = m["method"].as_str().expect("method");
        writeln!(o, "            Self::{}(_) => {name:?},", pascal(name)).unwrap();
    }
    writeln!(o, "            Self::Unknown {{ method, .. }} => method,").unwrap();
    writeln!(o, "        }}").unwrap();
    writeln!(o, "    }}").unwrap();
    writeln!(o, "}}").unwrap();

    // Typed client functions.
    let lifecycle = ["initialize", "shutdown"];
    let typed: Vec<&&Value> = requests.iter().filter(|m| !lifecycle.contains(&m["method"].as_str().unwrap_or(""))).collect();
    writeln!(o, "\n/// The request methods with a typed function on `Client` and `AsyncClient` (all but `initialize`,").unwrap();
    writeln!(o, "/// run by `spawn`, and `shutdown`, run by `Client::shutdown`), with the function's name.").unwrap();
    writeln!(o, "pub const TYPED_METHODS: &[(&str, &str)] = &[").unwrap();
    for m in &typed {
        let name = m["method"].as_str().expect("method");
        writeln!(o, "    ({name:?}, {:?}),", client_fn_name(name)).unwrap();
    }
    writeln!(o, "];").unwrap();
    for (asynchronous, ty) in [(false, "crate::Client"), (true, "crate::AsyncClient")] {
        writeln!(o).unwrap();
        if asynchronous {
            writeln!(o, "#[cfg(feature = \"tokio\")]").unwrap();
        }
        writeln!(o, "impl {ty} {{").unwrap();
        for (i, m) in typed.iter().enumerate() {
            let name = m["method"].as_str().expect("method");
            let params = type_of_ref(&m["params"]);
            let result = type_of_ref(&m["result"]);
            if i > 0 {
                o.push('\n');
            }
            writeln!(o, "    /// `{name}`: {}", doc_escape(m["summary"].as_str().unwrap_or(""))).unwrap();
            if let Some(c) = m.get("capability").and_then(Value::as_str) {
                writeln!(o, "    ///\n    /// Capability: `{c}`.").unwrap();
            }
            if asynchronous {
                writeln!(o, "    ///\n    /// The request is written at once (in call order); await the answer.").unwrap();
                writeln!(o, "    pub fn {}(&self, params: {params}) -> crate::AsyncPending<{result}> {{", client_fn_name(name)).unwrap();
                writeln!(o, "        self.send::<method::{}>(params)", pascal(name)).unwrap();
            } else {
                writeln!(o, "    pub fn {}(&self, params: {params}) -> crate::Result<{result}> {{", client_fn_name(name)).unwrap();
                writeln!(o, "        self.call::<method::{}>(params)", pascal(name)).unwrap();
            }
            writeln!(o, "    }}").unwrap();
        }
        writeln!(o, "}}").unwrap();
    }
}

const HEADER: &str = r#"// @generated by clients/rust/codegen (session-sidecar-codegen) from protocol/schema.json and
// protocol/meta.json. DO NOT EDIT: change the protocol (npm run gen:protocol), then run
//     cargo run --manifest-path clients/rust/Cargo.toml --features codegen --bin session-sidecar-codegen
// The drift test (tests/it/codegen.rs) fails when this file differs from what the generator writes.

//! Types and method table generated from `protocol/schema.json` and `protocol/meta.json`.

#![allow(clippy::large_enum_variant, clippy::derivable_impls)]

use crate::BlobOr;
use serde::de::Error as _;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{Map, Value};
use std::collections::BTreeMap;

/// An optional member of any JSON type: present (even `null`) is `Some`, absent is `None`.
fn present<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<Value>, D::Error> {
    Value::deserialize(deserializer).map(Some)
}

/// A union variant serialized with its `kind` first.
#[derive(Serialize)]
struct Tagged<'a, T: Serialize> {
    kind: &'static str,
    #[serde(flatten)]
    inner: &'a T,
}
"#;
