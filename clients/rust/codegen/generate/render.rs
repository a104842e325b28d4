//! Rendering the collected types as Rust: structs (with `new` and setters for what a client
//! sends), string enums, `kind`-tagged unions, and the file header.

use super::meta::render_meta;
use super::*;

impl Gen<'_> {
    pub(super) fn field_rust_type(f: &Field) -> String {
        if f.required && !f.nullable {
            f.ty.rust()
        } else {
            format!("Option<{}>", f.ty.rust())
        }
    }

    pub(super) fn render(&self, meta: &Value, input: &HashSet<String>, defaultable: &HashSet<String>) -> String {
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

pub(super) fn render_enum(o: &mut String, name: &str, values: &[String], codes: &[i64]) {
    if codes.is_empty() {
        writeln!(o, "/// One of {}.", values.iter().map(|v| format!("`{v}`")).collect::<Vec<_>>().join(", ")).unwrap();
    } else {
        writeln!(o, "/// The domain error kinds of `protocol/meta.json` (`error.data.kind`), each with its code.").unwrap();
    }
    // The catch-all is `Unknown`, or `Other` when a value of the enum is itself "unknown".
    let other = if values.iter().any(|v| pascal(v) == "Unknown") { "Other" } else { "Unknown" };
    writeln!(o, "///").unwrap();
    writeln!(o, "/// `{other}` stands for a value this version of the client does not know (it is never sent).").unwrap();
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
    writeln!(o, "    {other},").unwrap();
    writeln!(o, "}}").unwrap();
    writeln!(o, "\nimpl {name} {{").unwrap();
    writeln!(o, "    /// Every known value, in schema order.").unwrap();
    let all: Vec<String> = values.iter().map(|v| format!("Self::{}", pascal(v))).collect();
    writeln!(o, "    pub const ALL: &'static [Self] = &[{}];", all.join(", ")).unwrap();
    writeln!(o, "\n    /// The value on the wire (`\"{other}\"` for `{other}`).").unwrap();
    writeln!(o, "    pub fn as_str(self) -> &'static str {{").unwrap();
    writeln!(o, "        match self {{").unwrap();
    for v in values {
        writeln!(o, "            Self::{} => \"{v}\",", pascal(v)).unwrap();
    }
    writeln!(o, "            Self::{other} => \"{other}\",").unwrap();
    writeln!(o, "        }}").unwrap();
    writeln!(o, "    }}").unwrap();
    writeln!(o, "\n    /// The value named `s` on the wire, if known.").unwrap();
    writeln!(o, "    pub fn from_wire(s: &str) -> Option<Self> {{").unwrap();
    writeln!(o, "        Self::ALL.iter().copied().find(|v| v.as_str() == s)").unwrap();
    writeln!(o, "    }}").unwrap();
    if !codes.is_empty() {
        writeln!(o, "\n    /// The JSON-RPC error code of this kind (0 for `{other}`).").unwrap();
        writeln!(o, "    pub fn code(self) -> i64 {{").unwrap();
        writeln!(o, "        match self {{").unwrap();
        for (v, c) in values.iter().zip(codes) {
            writeln!(o, "            Self::{} => {c},", pascal(v)).unwrap();
        }
        writeln!(o, "            Self::{other} => 0,").unwrap();
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

pub(super) const HEADER: &str = r#"// @generated by clients/rust/codegen (session-sidecar-codegen) from protocol/schema.json and
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

