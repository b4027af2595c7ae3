//! Every command of every lab guide (the ```sh blocks of docs/labs/*.md) runs as written,
//! from the repository's root, with `lossless` the binary under test: a guide whose
//! command fails (a metric path that names nothing, a file a step forgot to write) fails
//! here. Each block runs as one shell script, so a block's `sed … > /tmp/x.yaml` feeds the
//! command after it. What the commands print is checked by each guide's own test.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

/// The ```sh blocks of `guide`.
fn blocks(guide: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(guide).unwrap();
    let mut out = Vec::new();
    let mut cur: Option<String> = None;
    for line in text.lines() {
        match (&mut cur, line.trim_end()) {
            (None, "```sh") => cur = Some(String::new()),
            (Some(b), "```") => {
                out.push(std::mem::take(b));
                cur = None;
            }
            (Some(b), l) => {
                b.push_str(l);
                b.push('\n');
            }
            (None, _) => {}
        }
    }
    out
}

/// A directory whose `lossless` is the binary under test, to put first on the PATH.
fn bin_dir() -> PathBuf {
    let dir = common::tmp("guide-bin");
    std::fs::create_dir_all(&dir).unwrap();
    let link = dir.join("lossless");
    let _ = std::fs::remove_file(&link);
    std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_lossless"), &link).unwrap();
    dir
}

#[test]
fn every_command_of_every_lab_guide_runs_as_written() {
    let root = common::root();
    let path = format!(
        "{}:{}",
        bin_dir().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let mut guides: Vec<PathBuf> = std::fs::read_dir(root.join("docs/labs"))
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "md"))
        .collect();
    guides.sort();
    let mut ran = 0;
    let mut failed = Vec::new();
    for guide in &guides {
        for block in blocks(guide) {
            if !block.contains("lossless ") {
                continue;
            }
            ran += 1;
            let mut child = Command::new("bash")
                .args(["-euo", "pipefail", "-c", &block])
                .current_dir(&root)
                .env("PATH", &path)
                .stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap();
            let deadline = Instant::now() + Duration::from_secs(600);
            let status = loop {
                if let Some(st) = child.try_wait().unwrap() {
                    break Some(st);
                }
                if Instant::now() > deadline {
                    let _ = child.kill();
                    let _ = child.wait();
                    break None;
                }
                std::thread::sleep(Duration::from_millis(50));
            };
            let mut err = String::new();
            if let Some(mut e) = child.stderr.take() {
                use std::io::Read;
                let _ = e.read_to_string(&mut err);
            }
            if status.is_none_or(|s| !s.success()) {
                failed.push(format!(
                    "{}:\n{block}{}",
                    guide.display(),
                    err.lines().rev().take(5).collect::<Vec<_>>().join("\n")
                ));
            }
        }
    }
    // Each guide (README.md aside) has its commands.
    assert!(
        ran >= guides.len() - 1,
        "only {ran} blocks in {} guides",
        guides.len()
    );
    assert!(failed.is_empty(), "{}", failed.join("\n\n"));
}
