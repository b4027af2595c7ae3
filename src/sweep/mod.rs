//! `lossless run FILE --sweep KEY=V1,V2,…`: one scenario, run once per value of one key,
//! with chosen report metrics per run.
//!
//! KEY is a dotted path into the scenario file: map keys by name, list entries by index or
//! by their `name` (`switches.tor.ports.cable`, `links.0.cable`, `flows.a.rate`). The value
//! is put where the key is written in the file (or the key added beside its siblings),
//! nothing else is touched, and the result is loaded as the file would be.
//!
//! A sweep can be split into shares (`--shard I/N`: value k runs in share k mod N), run
//! by other processes or machines, and joined again ([`merge`]) into the rows one process
//! would have written.

pub mod merge;

pub use merge::merge;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::BTreeMap;

/// What `--sweep … --json` writes: the file, the key, and a row per value run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SweepReport {
    /// The scenario file.
    pub file: String,
    /// The dotted key swept.
    pub key: String,
    /// Every value of the sweep, in order (a share runs some of them).
    pub values: Vec<String>,
    /// The report values asked for (`--metric`), as given: a column's `metric` indexes
    /// this list.
    pub metric_paths: Vec<String>,
    /// Which share of the sweep this is (absent: all of it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shard: Option<Shard>,
    /// One row per value run, in the order of `values`.
    pub rows: Vec<SweepRow>,
    /// The signal that stopped the sweep before its end (`SIGINT` for Ctrl-C): `rows`
    /// holds the points that finished, the one under way is not among them (absent: the
    /// sweep ran to its end).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interrupted: Option<String>,
}

/// One run of a sweep.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SweepRow {
    /// Where the value stands in the sweep's `values`, from 0.
    pub index: usize,
    /// The value the key took, as written.
    pub value: String,
    /// The chosen report values, by column (a metric path with `*` expanded).
    pub metrics: BTreeMap<String, Value>,
    /// The row's columns in the order the report gave them, each with the metric it
    /// came from.
    pub columns: Vec<SweepColumn>,
}

/// One column of a row: a key of its `metrics`, from the metric path `metric` indexes.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SweepColumn {
    /// Index into the report's `metric_paths`.
    pub metric: usize,
    /// The column (the metric path with `*` expanded).
    pub name: String,
}

/// One share of a sweep (`--shard I/N`): the values at positions k with k mod N = I, so
/// that N processes (a GNU parallel run, a Slurm array, a Kubernetes indexed Job) each
/// take every N-th value and slow values spread over them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Shard {
    /// This share, from 0 (Slurm's `SLURM_ARRAY_TASK_ID` of an array 0..N−1, Kubernetes'
    /// `JOB_COMPLETION_INDEX`).
    pub index: usize,
    /// How many shares the sweep is split into.
    pub count: usize,
}

impl Shard {
    /// Does this share run the value at `position`?
    pub fn takes(&self, position: usize) -> bool {
        position % self.count == self.index
    }
}

impl std::str::FromStr for Shard {
    type Err = String;

    /// `I/N`, 0 ≤ I < N.
    fn from_str(s: &str) -> Result<Shard, String> {
        let bad = || {
            format!("`{s}` is not I/N: give the share's number from 0 and how many shares, e.g. 0/4 for the first of four")
        };
        let (i, n) = s.split_once('/').ok_or_else(bad)?;
        let index: usize = i.trim().parse().map_err(|_| bad())?;
        let count: usize = n.trim().parse().map_err(|_| bad())?;
        if count == 0 {
            return Err(format!("`{s}`: a sweep is split into at least 1 share"));
        }
        if index >= count {
            return Err(format!(
                "`{s}`: shares of {count} are numbered 0 to {}",
                count - 1
            ));
        }
        Ok(Shard { index, count })
    }
}

/// One key and the values it takes.
#[derive(Clone, Debug, PartialEq)]
pub struct Sweep {
    /// The dotted path.
    pub key: String,
    /// Values as written (YAML scalars: `2m`, `30`, `flowlet`).
    pub values: Vec<String>,
}

impl std::str::FromStr for Sweep {
    type Err = String;

    /// `KEY=V1,V2,…`.
    fn from_str(s: &str) -> Result<Sweep, String> {
        let (key, values) = s
            .split_once('=')
            .ok_or_else(|| format!("`{s}`: write KEY=V1,V2,… (e.g. links.0.cable=2m,50m,100m)"))?;
        let key = key.trim();
        if key.is_empty() || key.split('.').any(str::is_empty) {
            return Err(format!(
                "`{key}`: a dotted key such as switches.tor.ports.cable"
            ));
        }
        let values: Vec<String> = split_values(values)
            .into_iter()
            .map(|v| v.trim().to_string())
            .filter(|v| !v.is_empty())
            .collect();
        if values.is_empty() {
            return Err(format!("`{s}`: no values after `=`"));
        }
        Ok(Sweep {
            key: key.to_string(),
            values,
        })
    }
}

/// Split `V1,V2,…` at the commas outside brackets and braces, so that a value may be a YAML
/// flow map or list: `{from: 0.5ms, to: 1ms},{from: 1.2ms, to: 2ms}` is two values.
fn split_values(s: &str) -> Vec<&str> {
    let (mut out, mut depth, mut start) = (Vec::new(), 0i32, 0);
    for (i, c) in s.char_indices() {
        match c {
            '{' | '[' => depth += 1,
            '}' | ']' => depth -= 1,
            ',' if depth == 0 => {
                out.push(&s[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    out.push(&s[start..]);
    out
}

/// The scenario text `yaml` with `key` set to `value` (YAML, as written on the command
/// line), edited in place ([`crate::config::yaml_edit`]): every other byte of the file stays
/// as it was, so every rule of the loader applies to the file as written.
pub fn apply(yaml: &str, key: &str, value: &str) -> Result<String, String> {
    let mut doc = crate::config::yaml_edit::Doc::parse(yaml)
        .map_err(|e| format!("reading the scenario: {e}"))?;
    doc.set(key, value.trim())?;
    Ok(doc.finish())
}

/// Load a document [`apply`] produced: an error names `name` (the file and what was
/// applied), the key and the rule (its line would be the edited text's, so it is left out).
pub fn parse_applied(name: &str, stem: &str, json: &str) -> Result<crate::config::Loaded, String> {
    crate::config::parse(name, stem, json).map_err(|mut e| {
        e.line = None;
        e.message = e.message.lines().next().unwrap_or_default().to_string();
        e.to_string()
    })
}

/// The metrics a sweep shows by default: drops, PFC frames and each flow's throughput.
pub const DEFAULT_METRICS: &[&str] = &[
    "totals.lossless_drops",
    "totals.drops",
    "totals.pfc_tx_frames",
    "flows.*.throughput_bps",
];

/// How a metric folds the values of a path into one: `max(flows.*.fct_ps)`, the tail FCT.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fold {
    Max,
    Min,
    Sum,
    Mean,
}

/// A metric path and the fold around it, if any: `sum(flows.*.x)` → (Sum, `flows.*.x`).
pub fn fold_of(path: &str) -> (Option<Fold>, &str) {
    for (name, fold) in [
        ("max", Fold::Max),
        ("min", Fold::Min),
        ("sum", Fold::Sum),
        ("mean", Fold::Mean),
    ] {
        if let Some(inner) = path
            .strip_prefix(name)
            .and_then(|p| p.strip_prefix('('))
            .and_then(|p| p.strip_suffix(')'))
        {
            return (Some(fold), inner);
        }
    }
    (None, path)
}

/// The fold of `values`: null when one of them is not a number (a flow that did not
/// complete has no FCT, so neither has the tail); whole numbers stay whole except the mean.
fn fold(how: Fold, values: &[Value]) -> Value {
    let whole: Option<Vec<u64>> = values.iter().map(Value::as_u64).collect();
    let real: Option<Vec<f64>> = values.iter().map(Value::as_f64).collect();
    match (how, whole, real) {
        (_, _, None) => Value::Null,
        (Fold::Max, Some(w), _) => w.into_iter().max().into(),
        (Fold::Min, Some(w), _) => w.into_iter().min().into(),
        (Fold::Sum, Some(w), _) => w.into_iter().sum::<u64>().into(),
        (Fold::Max, None, Some(r)) => r.into_iter().fold(f64::MIN, f64::max).into(),
        (Fold::Min, None, Some(r)) => r.into_iter().fold(f64::MAX, f64::min).into(),
        (Fold::Sum, None, Some(r)) => r.into_iter().sum::<f64>().into(),
        (Fold::Mean, _, Some(r)) => (r.iter().sum::<f64>() / r.len() as f64).into(),
    }
}

/// The values at a dotted `path` of a report: `*` takes every entry of a list (named by its
/// `name`), a name picks the entry with that `name`; `max(…)`, `min(…)`, `sum(…)` or
/// `mean(…)` around a path folds its values into one. Returns (column, value) pairs.
pub fn metric(report: &Value, path: &str) -> Vec<(String, Value)> {
    match fold_of(path) {
        (Some(how), inner) => {
            let values: Vec<Value> = walk(report, inner).into_iter().map(|(_, v)| v).collect();
            if values.is_empty() {
                return Vec::new();
            }
            vec![(path.to_string(), fold(how, &values))]
        }
        (None, _) => walk(report, path),
    }
}

/// What names an entry of a list in a path: its `name` (switches, flows, hosts) or, for a
/// switch's ports, its `port` (`Ethernet0`).
fn entry_name(e: &Value) -> Option<&str> {
    e.get("name")
        .or_else(|| e.get("port"))
        .and_then(Value::as_str)
}

/// The values at a dotted `path`, one per entry a `*` expands to.
fn walk(report: &Value, path: &str) -> Vec<(String, Value)> {
    let mut out = vec![(String::new(), report.clone())];
    for seg in path.split('.') {
        let mut next = Vec::new();
        for (label, v) in out {
            let join = |l: &str, s: &str| {
                if l.is_empty() {
                    s.to_string()
                } else {
                    format!("{l}.{s}")
                }
            };
            match (v, seg) {
                (Value::Array(a), "*") => {
                    for (i, e) in a.into_iter().enumerate() {
                        let name = entry_name(&e).map_or(i.to_string(), String::from);
                        next.push((join(&label, &name), e));
                    }
                }
                (Value::Array(a), s) => {
                    let hit = match s.parse::<usize>() {
                        Ok(k) => a.into_iter().nth(k),
                        Err(_) => a.into_iter().find(|e| entry_name(e) == Some(s)),
                    };
                    if let Some(e) = hit {
                        next.push((join(&label, s), e));
                    }
                }
                (Value::Object(mut m), s) => {
                    if let Some(e) = m.remove(s) {
                        next.push((join(&label, s), e));
                    }
                }
                _ => {}
            }
        }
        out = next;
    }
    out
}

/// Every dotted path into `report` (lists as `*`), for suggestions.
fn paths(report: &Value) -> Vec<String> {
    fn walk(v: &Value, at: String, out: &mut Vec<String>) {
        let join = |s: &str| {
            if at.is_empty() {
                s.to_string()
            } else {
                format!("{at}.{s}")
            }
        };
        match v {
            Value::Object(m) => {
                for (k, x) in m {
                    out.push(join(k));
                    walk(x, join(k), out);
                }
            }
            Value::Array(a) => {
                if let Some(first) = a.first() {
                    walk(first, join("*"), out);
                }
            }
            _ => {}
        }
    }
    let mut out = Vec::new();
    walk(report, String::new(), &mut out);
    out.sort();
    out.dedup();
    out
}

/// Levenshtein distance between two paths.
fn distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut prev = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let cur = row[j + 1];
            row[j + 1] = (prev + usize::from(ca != *cb)).min(row[j] + 1).min(cur + 1);
            prev = cur;
        }
    }
    row[b.len()]
}

/// An error for a metric `path` that names nothing in `report`: the nearest paths it has.
pub fn unknown_metric(report: &Value, path: &str) -> String {
    let mut all: Vec<(usize, String)> = paths(report)
        .into_iter()
        .map(|p| (distance(path, &p), p))
        .collect();
    all.sort();
    let near: Vec<String> = all.into_iter().take(5).map(|(_, p)| p).collect();
    format!(
        "--metric {path}: the report has no such value (nearest: {}; lists take `*`, an index, or a name: a switch's, flow's or host's `name`, a port's `port` such as Ethernet0)",
        near.join(", ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_unknown_metric_names_the_nearest_paths() {
        let r: Value = serde_json::json!({"totals": {"drops": 0, "lossless_drops": 0}, "flows": [{"name": "a", "throughput_bps": 1.0}]});
        assert!(metric(&r, "totals.nope").is_empty());
        let e = unknown_metric(&r, "totals.drop");
        assert!(e.contains("nearest: totals.drops"), "{e}");
        let e = unknown_metric(&r, "flows.*.throughput");
        assert!(e.contains("flows.*.throughput_bps"), "{e}");
    }

    #[test]
    fn a_port_is_named_by_its_port_name_in_a_metric_path() {
        let r: Value = serde_json::json!({"switches": [{"name": "tor", "ports": [
            {"port": "Ethernet0", "queues": [{"tx_packets": 5}]},
            {"port": "Ethernet1", "queues": [{"tx_packets": 7}]}]}]});
        let v = metric(&r, "switches.tor.ports.Ethernet1.queues.0.tx_packets");
        assert_eq!(v.len(), 1);
        assert_eq!(v[0].1, serde_json::json!(7));
        let all = metric(&r, "switches.tor.ports.*.queues.0.tx_packets");
        let labels: Vec<&str> = all.iter().map(|(l, _)| l.as_str()).collect();
        assert_eq!(
            labels,
            [
                "switches.tor.ports.Ethernet0.queues.0.tx_packets",
                "switches.tor.ports.Ethernet1.queues.0.tx_packets"
            ]
        );
    }

    const YAML: &str = "name: x\nswitches:\n  - &s\n    name: a\n    ports: {count: 2, cable: 2m}\n  - {<<: *s, name: b}\nlinks:\n  - {a: a:Ethernet1, b: b:Ethernet0}\n";

    #[test]
    fn keys_by_name_and_index_and_errors_that_say_where() {
        let t = apply(YAML, "switches.a.ports.cable", "30m").unwrap();
        assert_eq!(t, YAML.replace("cable: 2m", "cable: 30m"));
        let t = apply(YAML, "links.0.cable", "100m").unwrap();
        assert!(
            t.contains("{a: a:Ethernet1, b: b:Ethernet0, cable: 100m}"),
            "{t}"
        );
        let t = apply(YAML, "seed", "7").unwrap();
        assert!(t.ends_with("\nseed: 7\n"), "{t}");
        assert!(apply(YAML, "switches.c.ports", "1")
            .unwrap_err()
            .contains("no entry named `c`"));
        assert!(apply(YAML, "links.3.cable", "1m")
            .unwrap_err()
            .contains("index 3, but the list has 1"));
        assert!(apply(YAML, "switches.a.port.count", "1")
            .unwrap_err()
            .contains("no such key (there are: name, ports)"));
        // A key that a merge brings: set where the anchor is written, or written itself.
        let e = apply(YAML, "switches.b.ports.cable", "30m").unwrap_err();
        assert!(e.contains("`switches.b` merges another map"), "{e}");
        // The file's words stay its own: `on` is not made a boolean.
        let t = apply(
            "switches:\n  - {name: s, qos: {pfc_asym: on}}\n",
            "seed",
            "2",
        )
        .unwrap();
        assert!(t.contains("pfc_asym: on"), "{t}");
    }

    #[test]
    fn sweeps_parse_and_metrics_expand_lists() {
        let s: Sweep = "links.0.cable = 2m, 50m".parse().unwrap();
        assert_eq!(s.values, ["2m", "50m"]);
        let s: Sweep = "measure={from: 0.5ms, to: 1ms},{from: 1ms}"
            .parse()
            .unwrap();
        assert_eq!(s.values, ["{from: 0.5ms, to: 1ms}", "{from: 1ms}"]);
        let s: Sweep = "qos.pfc_enable=[3, 4],[3]".parse().unwrap();
        assert_eq!(s.values, ["[3, 4]", "[3]"]);
        assert!("cable".parse::<Sweep>().is_err());
        assert!("a..b=1".parse::<Sweep>().is_err());
        let r: Value = serde_json::json!({"totals": {"drops": 3}, "flows": [{"name": "a", "x": 1}, {"name": "b", "x": 2}]});
        assert_eq!(
            metric(&r, "totals.drops"),
            vec![("totals.drops".into(), Value::from(3))]
        );
        let m = metric(&r, "flows.*.x");
        assert_eq!(m[1], ("flows.b.x".into(), Value::from(2)));
        assert_eq!(metric(&r, "flows.a.x")[0].1, Value::from(1));
        assert!(metric(&r, "nothing.here").is_empty());
        assert_eq!(metric(&r, "max(flows.*.x)")[0].1, Value::from(2));
        assert_eq!(metric(&r, "sum(flows.*.x)")[0].1, Value::from(3));
        assert_eq!(metric(&r, "min(flows.*.x)")[0].1, Value::from(1));
        assert_eq!(metric(&r, "mean(flows.*.x)")[0].1, Value::from(1.5));
        assert!(metric(&r, "max(flows.*.y)").is_empty());
        let r: Value = serde_json::json!({"flows": [{"fct_ps": 5}, {"fct_ps": null}]});
        assert_eq!(metric(&r, "max(flows.*.fct_ps)")[0].1, Value::Null);
    }
}
