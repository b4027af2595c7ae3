//! The YAML an import writes: the scenario schema serialized, nulls dropped, small maps and
//! lists of scalars on one line (`{pool: ingress_lossless_pool, size: 1248}`), keys in the
//! order docs/scenario.md gives them (numbers in numeric order), strings quoted only where
//! YAML would read them as something else.

use serde::Serialize;
use serde_json::Value;
use std::fmt::Write;

/// `v` as YAML, each line indented by `indent` spaces.
pub fn to_yaml<T: Serialize>(v: &T, indent: usize) -> String {
    let mut value = serde_json::to_value(v).expect("the schema serializes");
    prune(&mut value);
    let mut out = String::new();
    block(&mut out, &value, indent);
    out
}

/// Drop nulls, and maps and lists left empty.
fn prune(v: &mut Value) {
    match v {
        Value::Object(m) => {
            for x in m.values_mut() {
                prune(x);
            }
            m.retain(|_, x| !matches!(x, Value::Null) && !is_empty(x));
        }
        Value::Array(a) => a.iter_mut().for_each(prune),
        _ => {}
    }
}

fn is_empty(v: &Value) -> bool {
    match v {
        Value::Object(m) => m.is_empty(),
        _ => false,
    }
}

/// Keys in the order a reader expects them; others follow, numbers numerically.
const ORDER: &[&str] = &[
    "name",
    "seed",
    "duration",
    "switches",
    "sonic",
    "ports",
    "mac",
    "pipeline_latency",
    "buffer",
    "qos",
    "forwarding",
    "acl",
    "asic",
    "cell",
    "slices",
    "port_slices",
    "crossing_packet",
    "xon_limit",
    "total",
    "pools",
    "profiles",
    "pg",
    "queue",
    "type",
    "stage",
    "pool",
    "size",
    "mode",
    "xoff",
    "dynamic_th",
    "static_th",
    "xon",
    "xon_offset",
    "speed",
    "cable",
    "mtu",
    "tap",
    "trust",
    "dscp_to_tc",
    "dot1p_to_tc",
    "tc_to_pg",
    "tc_to_queue",
    "pfc_enable",
    "pfc_asym",
    "scheduler",
    "wred_profiles",
    "queue_wred",
    "pfcwd",
    "priority",
    "packet_action",
    "set_tc",
    "set_dscp",
    "rules",
    "default",
];

fn ordered(m: &serde_json::Map<String, Value>) -> Vec<(&String, &Value)> {
    let mut v: Vec<(&String, &Value)> = m.iter().collect();
    v.sort_by_key(|(k, _)| {
        (
            ORDER.iter().position(|o| o == k).unwrap_or(ORDER.len()),
            k.parse::<u64>().unwrap_or(u64::MAX),
            k.to_string(),
        )
    });
    v
}

/// A string as a plain scalar when YAML reads it back as that string, else quoted.
fn text(s: &str) -> String {
    let plain = !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "_./-".contains(c))
        && !s.starts_with(['-', '.'])
        && s.parse::<f64>().is_err()
        && !s.starts_with("0x")
        && !s.starts_with("0o")
        && !matches!(
            s.to_ascii_lowercase().as_str(),
            "true" | "false" | "null" | "yes" | "no" | "on" | "off" | "y" | "n" | "~"
        );
    if plain {
        s.to_string()
    } else {
        serde_json::to_string(s).expect("a string serializes")
    }
}

/// A map key: as [`text`], but a whole number stays plain (the loader reads `3: 3` keys as
/// text).
fn key(s: &str) -> String {
    if !s.is_empty() && s.chars().all(|c| c.is_ascii_digit()) {
        s.to_string()
    } else {
        text(s)
    }
}

fn scalar(v: &Value) -> Option<String> {
    match v {
        Value::String(s) => Some(text(s)),
        Value::Number(n) => Some(n.to_string()),
        Value::Bool(b) => Some(b.to_string()),
        _ => None,
    }
}

/// A map or list written on one line, when it is made of scalars and short enough.
fn flow(v: &Value) -> Option<String> {
    let s = match v {
        Value::Object(m) => {
            let items: Option<Vec<String>> = ordered(m)
                .into_iter()
                .map(|(k, x)| scalar(x).map(|x| format!("{}: {x}", key(k))))
                .collect();
            format!("{{{}}}", items?.join(", "))
        }
        Value::Array(a) => {
            let items: Option<Vec<String>> = a.iter().map(scalar).collect();
            format!("[{}]", items?.join(", "))
        }
        other => return scalar(other),
    };
    (s.len() <= 100).then_some(s)
}

fn block(out: &mut String, v: &Value, indent: usize) {
    let pad = " ".repeat(indent);
    match v {
        Value::Object(m) => {
            for (k, x) in ordered(m) {
                match flow(x) {
                    Some(f) => {
                        let _ = writeln!(out, "{pad}{}: {f}", key(k));
                    }
                    None => {
                        let _ = writeln!(out, "{pad}{}:", key(k));
                        block(out, x, indent + 2);
                    }
                }
            }
        }
        Value::Array(a) => {
            for x in a {
                match flow(x) {
                    Some(f) => {
                        let _ = writeln!(out, "{pad}- {f}");
                    }
                    None => {
                        // The item's first line shares the dash.
                        let mut inner = String::new();
                        block(&mut inner, x, indent + 2);
                        let _ = write!(out, "{pad}- {}", &inner[indent + 2..]);
                    }
                }
            }
        }
        other => {
            let _ = writeln!(out, "{pad}{}", scalar(other).unwrap_or_default());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strings_are_quoted_only_where_yaml_would_misread_them() {
        assert_eq!(text("ingress_lossless_pool"), "ingress_lossless_pool");
        assert_eq!(text("100G"), "100G");
        assert_eq!(text("198.18.0.0/16"), "198.18.0.0/16");
        assert_eq!(text("3-4"), "3-4");
        assert_eq!(text("1248"), "\"1248\"");
        assert_eq!(text("on"), "\"on\"");
        assert_eq!(text("Ethernet0|3-4"), "\"Ethernet0|3-4\"");
        assert_eq!(text("0x0800"), "\"0x0800\"");
    }

    #[test]
    fn nested_maps_lists_and_flow_lines() {
        let v = serde_json::json!({"a": {"b": {"x": 1, "w": "z"}, "c": null},
                                   "l": [{"q": 1}, {"m": {"deep": {"k": 2}}}]});
        assert_eq!(
            to_yaml(&v, 0),
            "a:\n  b: {w: z, x: 1}\nl:\n  - {q: 1}\n  - m:\n      deep: {k: 2}\n"
        );
    }
}
