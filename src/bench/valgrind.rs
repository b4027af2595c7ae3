//! Instruction counts from valgrind's cachegrind: this binary re-run under it, the
//! `summary:` line of its output read back. Deterministic, so comparisons hold on a noisy
//! machine; the figure per unit of work is the difference of two runs of different sizes,
//! so start-up cancels out.

use std::path::Path;
use std::process::{Command, Stdio};

/// Is valgrind installed?
pub fn available() -> bool {
    Command::new("valgrind")
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// Instructions this binary executes with `args`, under cachegrind; `scratch` holds its
/// output file.
pub fn instructions(args: &[String], scratch: &Path) -> Result<u64, String> {
    let exe = std::env::current_exe().map_err(|e| format!("this binary: {e}"))?;
    let out = scratch.join(format!("cachegrind.{}", std::process::id()));
    let status = Command::new("valgrind")
        .args(["--tool=cachegrind", "--cache-sim=no"])
        .arg(format!("--cachegrind-out-file={}", out.display()))
        .arg(&exe)
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .output()
        .map_err(|e| format!("valgrind: {e}"))?;
    if !status.status.success() {
        return Err(format!(
            "valgrind {} {}: {}",
            exe.display(),
            args.join(" "),
            String::from_utf8_lossy(&status.stderr)
                .lines()
                .last()
                .unwrap_or("failed")
        ));
    }
    let text = std::fs::read_to_string(&out).map_err(|e| format!("{}: {e}", out.display()))?;
    let _ = std::fs::remove_file(&out);
    summary(&text).ok_or_else(|| format!("{}: no summary line", out.display()))
}

/// The instruction count on cachegrind's `summary:` line.
fn summary(text: &str) -> Option<u64> {
    text.lines()
        .find_map(|l| l.strip_prefix("summary:"))
        .and_then(|s| s.split_whitespace().next())
        .and_then(|n| n.parse().ok())
}

#[cfg(test)]
mod tests {
    #[test]
    fn reads_the_summary_line() {
        let text = "events: Ir\nfl=x\n0 1\nsummary: 117336367\n";
        assert_eq!(super::summary(text), Some(117_336_367));
        assert_eq!(super::summary("events: Ir\n"), None);
    }
}
