//! Every file in configs/ resolves without errors and builds a working `Switch`.

use lossless_pipeline::Switch;
use std::path::{Path, PathBuf};

fn yaml_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            yaml_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "yaml" || x == "yml") {
            out.push(p);
        }
    }
}

#[test]
fn every_shipped_config_checks_and_builds() {
    let mut files = Vec::new();
    yaml_files(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("configs"),
        &mut files,
    );
    assert!(!files.is_empty());
    for f in files {
        let loaded = lossless::config::load(&f).unwrap_or_else(|e| panic!("{e}"));
        let text = std::fs::read_to_string(&f).unwrap();
        assert!(
            text.starts_with('#'),
            "{}: start with a comment that says what to look at",
            f.display()
        );
        for sw in loaded.scenario.switches {
            let plan = lossless::report::plan::render(&sw);
            // Each port block says what its flow control needs from the buffer.
            assert!(
                plan.contains("minimum headroom") || plan.contains("line rate needs"),
                "{}",
                f.display()
            );
            let s = Switch::new(sw.config);
            assert!(!s.ports().is_empty());
        }
    }
}

#[test]
fn check_command_reports_errors_with_exit_status_1() {
    let dir = std::env::temp_dir().join(format!("lossless-check-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let bad = dir.join("bad.yaml");
    std::fs::write(
        &bad,
        "switches:\n  - name: s\n    ports: {count: 2, speed: fast}\n",
    )
    .unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_lossless"))
        .arg("check")
        .arg(&bad)
        .output()
        .unwrap();
    std::fs::remove_dir_all(&dir).ok();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("bad.yaml:3: s.ports.speed: `fast` is not a rate"),
        "{err}"
    );
    let good = Path::new(env!("CARGO_MANIFEST_DIR")).join("configs/switches/tor-4port.yaml");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_lossless"))
        .arg("check")
        .arg(&good)
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("minimum headroom for 1518-byte frames: 30.1KB"),
        "{text}"
    );
    assert!(
        text.contains("applies: the larger, 325 cells = 83.2KB (64-byte frames)"),
        "{text}"
    );
    assert!(text.contains("OK (0 warnings)"));
}
