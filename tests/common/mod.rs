//! Helpers the CLI scenario tests share: temp files, running `lossless run`, JSON access.
#![allow(dead_code)]

pub mod lab;
pub mod ledger;
pub mod needs;
pub mod offload;
pub mod procs;
pub mod sonic;

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The repository root.
pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// This test process's own temp directory, `lossless-KIND-PID` in the system's. The first
/// call for a KIND removes the directories of that kind left by test processes that have
/// ended: a failed run's files stay for a look until the next run, and no more pile up.
pub fn own_dir(kind: &str) -> PathBuf {
    let prefix = format!("lossless-{kind}-");
    let tmp = std::env::temp_dir();
    static SWEPT: std::sync::Mutex<Vec<String>> = std::sync::Mutex::new(Vec::new());
    let mut swept = SWEPT.lock().unwrap_or_else(|e| e.into_inner());
    if !swept.contains(&prefix) {
        swept.push(prefix.clone());
        for e in std::fs::read_dir(&tmp).into_iter().flatten().flatten() {
            let name = e.file_name().to_string_lossy().to_string();
            let pid = name
                .strip_prefix(&prefix)
                .and_then(|p| p.parse::<u32>().ok());
            // Only a process that is gone: a live one (another test binary) keeps its own.
            if pid.is_some_and(|p| !Path::new(&format!("/proc/{p}")).exists()) {
                let _ = std::fs::remove_dir_all(e.path());
            }
        }
    }
    let d = tmp.join(format!("{prefix}{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// A path in this test process's own temp directory.
pub fn tmp(name: &str) -> PathBuf {
    own_dir("test").join(name)
}

/// Write a scenario to a temp file.
pub fn scenario(name: &str, text: &str) -> PathBuf {
    let p = tmp(name);
    std::fs::write(&p, text).unwrap();
    p
}

/// `lossless ARGS…` with its output.
pub fn lossless(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_lossless"))
        .args(args)
        .output()
        .unwrap()
}

/// With `LOSSLESS_RECORD_RUNS=DIR` (scripts/compare-outputs.sh), keep a copy of the
/// scenario `file` (paths into this test's temp directory made relative) and the arguments
/// it runs with, so that two builds can replay it.
fn record(file: &Path, args: &[&str]) {
    let Ok(dir) = std::env::var("LOSSLESS_RECORD_RUNS") else {
        return;
    };
    use std::io::Write;
    let dir = PathBuf::from(dir);
    let tmp_dir = format!("{}/", tmp("x").parent().unwrap().display());
    let text = std::fs::read_to_string(file).unwrap().replace(&tmp_dir, "");
    static N: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = N.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let name = format!(
        "t{}-{n:03}-{}",
        std::process::id(),
        file.file_name().unwrap().to_string_lossy()
    );
    std::fs::write(dir.join(&name), text).unwrap();
    let mut kept = Vec::new();
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match *a {
            "--pcap-dir" | "--json" => {
                it.next();
            }
            _ => kept.push(*a),
        }
    }
    let mut line = name;
    for a in kept {
        line.push('\t');
        line.push_str(a);
    }
    let mut f = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(dir.join("runs.tsv"))
        .unwrap();
    // One write(2) per line: O_APPEND keeps concurrent tests' lines whole.
    line.push('\n');
    f.write_all(line.as_bytes()).unwrap();
}

/// Run `lossless run FILE --json OUT --quiet ARGS…` and parse the JSON report.
pub fn run(file: &Path, out: &str, args: &[&str]) -> Value {
    record(file, args);
    let json = tmp(out);
    let o = Command::new(env!("CARGO_BIN_EXE_lossless"))
        .arg("run")
        .arg(file)
        .arg("--json")
        .arg(&json)
        .arg("--quiet")
        .args(args)
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "{}: {}",
        file.display(),
        String::from_utf8_lossy(&o.stderr)
    );
    serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap()
}

/// A JSON number as u64.
pub fn u(v: &Value) -> u64 {
    v.as_u64().unwrap_or_else(|| panic!("not a number: {v}"))
}

/// A JSON number as f64.
pub fn f(v: &Value) -> f64 {
    v.as_f64().unwrap_or_else(|| panic!("not a number: {v}"))
}

/// The entry of `list` (an array of objects) whose `name` is `name`.
pub fn named<'a>(list: &'a Value, name: &str) -> &'a Value {
    named_by(list, "name", name)
}

/// Port `name` of the `sw`-th switch of a report.
pub fn port<'a>(r: &'a Value, sw: usize, name: &str) -> &'a Value {
    named_by(&r["switches"][sw]["ports"], "port", name)
}

/// The entry of `list` whose `key` is `name`.
fn named_by<'a>(list: &'a Value, key: &str, name: &str) -> &'a Value {
    list.as_array()
        .unwrap()
        .iter()
        .find(|x| x[key] == name)
        .unwrap_or_else(|| panic!("no `{name}` in {list}"))
}

/// `lossless run FILE --quiet --sweep ARG --metric M…`: the JSON rows, written to `out`
/// (made unique per call: tests running at once may name the same file).
pub fn sweep_rows(file: &std::path::Path, arg: &str, metrics: &[&str], out: &str) -> Vec<Value> {
    static N: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = N.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let out = tmp(&format!("{n}-{out}"));
    let mut args = vec!["run", file.to_str().unwrap(), "--quiet", "--sweep", arg];
    for m in metrics {
        args.extend(["--metric", m]);
    }
    args.extend(["--json", out.to_str().unwrap()]);
    let o = lossless(&args);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let r: Value = serde_json::from_str(&std::fs::read_to_string(out).unwrap()).unwrap();
    r["rows"].as_array().unwrap().clone()
}

/// The flow named `name` of a report.
pub fn flow<'a>(r: &'a Value, name: &str) -> &'a Value {
    named(&r["flows"], name)
}

/// Each `(file text, key, rule)`: loading the text as `lab.yaml` fails at a line of the
/// file, on that key, with a message that says the rule.
pub fn expect_config_errors(cases: &[(String, &str, &str)]) {
    for (text, key, rule) in cases {
        let e = lossless::config::parse("lab.yaml", "lab", text).expect_err(key);
        let msg = e.to_string();
        assert!(msg.starts_with("lab.yaml:"), "{msg}");
        assert_eq!(e.key, *key, "{msg}");
        assert!(msg.contains(rule), "`{rule}` not in {msg}");
    }
}
