//! The record contract, machine-readable: `records.schema.json` (JSON Schema 2020-12) says
//! which fields the ready line, client, server, generator and server-thread records, a
//! `primitives` operation and a host reference carry (and what `info` prints),
//! their types and which are always written. Engines that do not share this crate (the Go
//! engine) are held to it by the same file: every engine integration test checks each line
//! it reads with `violations` (chainlab-test-support), the Python contract test with a full
//! JSON Schema validator, and `tests/schema.rs` checks the file against this crate's types.
//!
//! `violations` knows the subset of JSON Schema the file uses: `type`, `const`, `enum`,
//! `items` by `$ref`, `required`, `additionalProperties: false` and `dependentRequired`
//! (`pattern` is left to the full validator).

use serde_json::{Map, Value};

/// The schema, as shipped beside this crate.
pub const SCHEMA_JSON: &str = include_str!("../records.schema.json");

/// The schema's definition named `name` (`ready`, `client`, `server`, `generator`,
/// `server_thread`, `certificate`, `primitive`, `reference`, `info`).
pub fn definition(name: &str) -> Value {
    let schema: Value = serde_json::from_str(SCHEMA_JSON).expect("records.schema.json is JSON");
    schema["$defs"][name].clone()
}

/// The definition a line is held to: the ready line, a `primitives` operation and a host
/// reference by their `event`, a record by its `side`; `None` for a line the contract does
/// not cover.
pub fn kind_of(line: &Value) -> Option<&'static str> {
    match line.get("event").and_then(Value::as_str) {
        Some("ready") => return Some("ready"),
        Some("primitive") => return Some("primitive"),
        Some("reference") => return Some("reference"),
        _ => {}
    }
    match line.get("side").and_then(Value::as_str)? {
        "client" => Some("client"),
        "server" => Some("server"),
        "generator" => Some("generator"),
        "server_thread" => Some("server_thread"),
        _ => None,
    }
}

/// What is wrong with one line under the contract (empty: nothing). A line with a `side`
/// the contract does not know is itself a violation.
pub fn violations(line: &Value) -> Vec<String> {
    let Some(object) = line.as_object() else {
        return vec![format!("a record is a JSON object, not {line}")];
    };
    match kind_of(line) {
        Some(kind) => problems(&definition(kind), object),
        None if line.get("side").is_some() => vec![format!("unknown side in {line}")],
        None => Vec::new(),
    }
}

/// What is wrong with `record` under one of the schema's object definitions.
pub fn problems(def: &Value, record: &Map<String, Value>) -> Vec<String> {
    let mut out = Vec::new();
    let properties = def["properties"].as_object().expect("properties");
    for name in def["required"].as_array().expect("required") {
        let name = name.as_str().expect("a name");
        if !record.contains_key(name) {
            out.push(format!("missing {name}"));
        }
    }
    for (name, value) in record {
        match properties.get(name) {
            None if def["additionalProperties"] == Value::Bool(false) => {
                out.push(format!("extra {name}"))
            }
            None => {}
            Some(rule) if !fits(rule, value) => {
                out.push(format!("{name}: {value} does not fit {rule}"))
            }
            Some(_) => {}
        }
    }
    if let Some(deps) = def.get("dependentRequired").and_then(Value::as_object) {
        for (name, needs) in deps {
            if record.contains_key(name) {
                for need in needs.as_array().expect("names") {
                    if !record.contains_key(need.as_str().expect("a name")) {
                        out.push(format!("{name} without {need}"));
                    }
                }
            }
        }
    }
    out
}

fn fits(rule: &Value, value: &Value) -> bool {
    if let Some(c) = rule.get("const") {
        return c == value;
    }
    if let Some(options) = rule.get("enum").and_then(Value::as_array) {
        return options.contains(value);
    }
    if let Some(r) = rule.get("$ref").and_then(Value::as_str) {
        let name = r.rsplit('/').next().expect("a name");
        return value
            .as_object()
            .is_some_and(|o| problems(&definition(name), o).is_empty());
    }
    let types: Vec<&str> = match &rule["type"] {
        Value::String(t) => vec![t.as_str()],
        Value::Array(ts) => ts.iter().filter_map(Value::as_str).collect(),
        other => panic!("a rule without a type: {other}"),
    };
    types.iter().any(|t| match *t {
        "null" => value.is_null(),
        "boolean" => value.is_boolean(),
        "string" => value.is_string(),
        "integer" => value.is_u64(),
        "number" => value.is_number(),
        "array" => value
            .as_array()
            .is_some_and(|items| items.iter().all(|i| fits(&rule["items"], i))),
        "object" => value
            .as_object()
            .is_some_and(|o| rule.get("properties").is_none() || problems(rule, o).is_empty()),
        other => panic!("a type this check does not know: {other}"),
    })
}
