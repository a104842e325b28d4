//! Rendering what `protocol/meta.json` gives: the protocol version, record kinds, error codes
//! and `ErrorKind`, the method table, the `method::*` marker types, `Notification`, and the
//! typed functions of `Client` and `AsyncClient`.

use super::render::render_enum;
use super::*;

pub(super) fn type_of_ref(r: &Value) -> String {
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

pub(super) fn render_meta(o: &mut String, meta: &Value, g: &Gen<'_>) {
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
