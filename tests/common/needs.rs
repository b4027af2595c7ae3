//! Tests that need more than a fresh machine has: root (network namespaces, TAP devices, a
//! tmpfs mount) or a program from a Debian package (tshark, valgrind, chromium, …).
//!
//! Such a test is marked `#[ignore = "needs …"]`, so that a plain `cargo test` lists it
//! among the *ignored* tests with what it needs, never as passed. `scripts/test` installs
//! the packages and runs every test with `--include-ignored`; so does
//! `cargo test --workspace --release -- --include-ignored` on a machine that has them.
//! Once it runs, such a test requires what it needs: a missing program or root is a
//! failure that names the Debian package, not a skip.

use std::process::Command;

/// Is `program` on the PATH?
pub fn have(program: &str) -> bool {
    Command::new("sh")
        .arg("-c")
        .arg(format!("command -v {program}"))
        .output()
        .is_ok_and(|o| o.status.success())
}

/// Fail unless every `(program, Debian package)` of `tools` is installed.
pub fn tools(tools: &[(&str, &str)]) {
    let missing: Vec<String> = tools
        .iter()
        .filter(|(program, _)| !have(program))
        .map(|(program, package)| format!("`{program}` (Debian package {package})"))
        .collect();
    assert!(
        missing.is_empty(),
        "this test needs {} (scripts/test installs it)",
        missing.join(", ")
    );
}

/// Is this process root?
pub fn is_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
}

/// Fail unless this process is root, saying what for.
pub fn root(what_for: &str) {
    assert!(
        is_root(),
        "this test needs root: {what_for} (run it as root, e.g. through scripts/test)"
    );
}

/// Fail unless Prometheus's linter (`promtool check metrics`) passes `exposition`.
pub fn promtool_check(exposition: &str) {
    tools(&[("promtool", "prometheus")]);
    let f = super::tmp(&format!("lint-{}.prom", exposition.len()));
    std::fs::write(&f, exposition).unwrap();
    let o = Command::new("promtool")
        .args(["check", "metrics"])
        .stdin(std::fs::File::open(&f).unwrap())
        .output()
        .expect("promtool runs");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
}
