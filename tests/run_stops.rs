//! A long `lossless run` that is stopped, or watched: Ctrl-C writes the report of the time
//! simulated so far, marked interrupted, and exits 130; without a terminal, progress is a
//! line on stderr every few seconds with the pace and when the run will end.

mod common;

use common::{root, tmp};
use serde_json::Value;
use std::io::Read;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The K=4 fat tree for far longer than a test runs (it simulates ~2 ms per wall second).
fn long_run(json: &std::path::Path, extra: &[&str]) -> std::process::Child {
    Command::new(env!("CARGO_BIN_EXE_lossless"))
        .args([
            "run",
            "configs/bench/fat-tree-k4.yaml",
            "--duration",
            "100s",
        ])
        .arg("--json")
        .arg(json)
        .args(extra)
        .current_dir(root())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// Wait (bounded) for `child` to end; its status code and stderr.
fn wait(mut child: std::process::Child, limit: Duration) -> (Option<i32>, String, String) {
    let deadline = Instant::now() + limit;
    loop {
        if let Some(st) = child.try_wait().unwrap() {
            let mut err = String::new();
            let mut out = String::new();
            child
                .stderr
                .take()
                .unwrap()
                .read_to_string(&mut err)
                .unwrap();
            child
                .stdout
                .take()
                .unwrap()
                .read_to_string(&mut out)
                .unwrap();
            return (st.code(), out, err);
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("the run did not stop within {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn sigint(child: &std::process::Child) {
    let ok = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(ok.success());
}

#[test]
fn ctrl_c_writes_the_report_so_far_marked_interrupted_and_exits_130() {
    let json = tmp("interrupted.json");
    let _ = std::fs::remove_file(&json);
    let child = long_run(&json, &[]);
    std::thread::sleep(Duration::from_millis(1500));
    sigint(&child);
    let (code, out, err) = wait(child, Duration::from_secs(60));
    assert_eq!(code, Some(130), "{err}");
    assert!(err.contains("stopped by SIGINT"), "{err}");
    let r: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(r["interrupted"]["by"], "SIGINT");
    assert_eq!(r["interrupted"]["planned_end_ps"], 100_000_000_000_000u64);
    let t = r["sim_time_ps"].as_u64().unwrap();
    assert!(t > 0 && t < 100_000_000_000_000, "{t}");
    // The report covers the time simulated: the window ends there too, and traffic moved.
    assert_eq!(r["measure"]["to_ps"].as_u64(), Some(t));
    assert!(r["packet_hops"].as_u64().unwrap() > 0);
    assert!(out.contains("INTERRUPTED by SIGINT"), "{out}");
    // Nothing half-written beside it.
    let dir = json.parent().unwrap();
    let leftovers: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .filter(|e| {
            e.file_name()
                .to_string_lossy()
                .contains("interrupted.json.")
        })
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
}

#[test]
fn without_a_terminal_progress_is_a_line_every_few_seconds_with_pace_and_end() {
    let json = tmp("progress.json");
    let child = long_run(&json, &["--progress", "lines"]);
    // The first line comes after 5 s of wall time.
    std::thread::sleep(Duration::from_millis(6500));
    sigint(&child);
    let (code, _, err) = wait(child, Duration::from_secs(60));
    assert_eq!(code, Some(130), "{err}");
    let line = err
        .lines()
        .find(|l| l.starts_with("lossless run: ") && l.contains("simulated"))
        .unwrap_or_else(|| panic!("no progress line: {err}"));
    assert!(line.contains(" of 100s simulated), "), "{line}");
    assert!(line.contains(" per wall second, ends in about "), "{line}");
    // Quiet runs say nothing.
    let child = long_run(&json, &["--quiet"]);
    std::thread::sleep(Duration::from_millis(6000));
    sigint(&child);
    let (code, out, err) = wait(child, Duration::from_secs(60));
    assert_eq!(code, Some(130));
    assert!(out.is_empty(), "{out}");
    assert!(!err.contains("per wall second"), "{err}");
}
