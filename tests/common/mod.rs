//! Helpers the CLI scenario tests share: temp files, running `lossless run`, JSON access.
#![allow(dead_code)]

pub mod lab;

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The repository root.
pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// A path in this test process's own temp directory.
pub fn tmp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("lossless-test-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d.join(name)
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

/// Run `lossless run FILE --json OUT --quiet ARGS…` and parse the JSON report.
pub fn run(file: &Path, out: &str, args: &[&str]) -> Value {
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
    list.as_array()
        .unwrap()
        .iter()
        .find(|x| x["name"] == name)
        .unwrap_or_else(|| panic!("no `{name}` in {list}"))
}
