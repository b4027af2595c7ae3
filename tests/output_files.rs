//! Output files are checked when a command starts and are whole or absent when it ends: a
//! missing directory fails before a run or a switch starts, and a full disk is said in
//! words with the path and leaves no truncated file behind.

mod common;

use common::{lossless, root, scenario, tmp};
use std::process::Command;

fn stderr(o: &std::process::Output) -> String {
    String::from_utf8_lossy(&o.stderr).to_string()
}

#[test]
fn a_missing_directory_fails_before_the_switch_serves() {
    let cfg = scenario(
        "out-tap.yaml",
        "switches:\n  - name: s\n    ports: {count: 1, tap_prefix: lloutx}\n",
    );
    let o = lossless(&[
        "tap",
        cfg.to_str().unwrap(),
        "--json",
        "/nonexistent-lossless-dir/r.json",
        "--duration",
        "1s",
    ]);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains("--json /nonexistent-lossless-dir/r.json: No such file or directory"),
        "{err}"
    );
    // Before any device was made.
    assert!(!std::path::Path::new("/sys/class/net/lloutx0").exists());
    let o = lossless(&[
        "tap",
        cfg.to_str().unwrap(),
        "--stats-json",
        "/nonexistent-lossless-dir/s.jsonl",
    ]);
    assert!(
        stderr(&o).contains("--stats-json /nonexistent-lossless-dir/s.jsonl: "),
        "{}",
        stderr(&o)
    );
}

/// A 256 KiB tmpfs mounted for the test, unmounted on drop (also when the test fails).
struct SmallDisk(std::path::PathBuf);

impl SmallDisk {
    /// Mounted at the test's own directory `name` (tests run side by side).
    fn mount(name: &str) -> SmallDisk {
        common::needs::root("it mounts a small tmpfs to fill");
        let dir = tmp(name);
        std::fs::create_dir_all(&dir).unwrap();
        let ok = Command::new("mount")
            .args([
                "-t",
                "tmpfs",
                "-o",
                "size=256k",
                "lossless-test",
                dir.to_str().unwrap(),
            ])
            .status()
            .unwrap();
        assert!(ok.success(), "mount tmpfs");
        SmallDisk(dir)
    }
}

impl Drop for SmallDisk {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(&self.0).status();
        let _ = std::fs::remove_dir(&self.0);
    }
}

#[test]
#[ignore = "needs root, to mount a small tmpfs (scripts/test)"]
fn a_full_disk_is_named_and_leaves_no_truncated_file() {
    let disk = SmallDisk::mount("small-disk");
    let d = disk.0.to_str().unwrap().to_string();
    // Captures of every port of the incast: megabytes, on a 256 KiB disk.
    let o = Command::new(env!("CARGO_BIN_EXE_lossless"))
        .args(["run", "configs/labs/incast-pfc.yaml", "--quiet"])
        .args(["--json", &format!("{d}/r.json"), "--pcap-dir", &d])
        .current_dir(root())
        .output()
        .unwrap();
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains(&format!("{d}/")), "{err}");
    assert!(err.contains(": no space left on device"), "{err}");
    assert!(!err.contains("Error reading bytes"), "{err}");
    let left: Vec<String> = std::fs::read_dir(&disk.0)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().to_string())
        .collect();
    assert!(left.is_empty(), "files left on the full disk: {left:?}");
}

/// Outputs that fail at the end of a run (the disk filled up while it ran) lose nothing
/// else: the text report is printed whole, then each file that could not be written is
/// named, the status is 1, and no temporary or truncated file is left.
#[test]
#[ignore = "needs root, to mount a small tmpfs (scripts/test)"]
fn a_report_that_cannot_be_written_still_prints_the_text_report() {
    let disk = SmallDisk::mount("small-disk-at-the-end");
    let d = disk.0.to_str().unwrap().to_string();
    // All of the disk but two pages, taken before the run: the files open, and their
    // contents (tens of kilobytes) do not fit when the run ends.
    let filler = disk.0.join("filler");
    {
        use std::io::Write;
        let mut f = std::fs::File::create(&filler).unwrap();
        let chunk = [0u8; 4096];
        while f.write_all(&chunk).is_ok() {}
        let _ = f.flush();
    }
    let len = std::fs::metadata(&filler).unwrap().len();
    std::fs::OpenOptions::new()
        .write(true)
        .open(&filler)
        .unwrap()
        .set_len(len.saturating_sub(8192))
        .unwrap();
    let o = Command::new(env!("CARGO_BIN_EXE_lossless"))
        .args(["run", "configs/labs/incast-pfc.yaml"])
        .args([
            "--json",
            &format!("{d}/r.json"),
            "--pfc-log",
            &format!("{d}/pfc.log"),
        ])
        .current_dir(root())
        .output()
        .unwrap();
    let err = stderr(&o);
    let out = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(1), "{err}");
    // The text report, whole: its flows and its totals.
    assert!(
        out.contains("\nFlows") && out.contains("totals: lossless_drops 0"),
        "{out}"
    );
    assert!(!out.contains("JSON report:"), "{out}");
    assert!(
        err.contains("could not be written (the report above is whole)"),
        "{err}"
    );
    assert!(err.contains(&format!("{d}/r.json")), "{err}");
    assert!(err.contains("no space left on device"), "{err}");
    let left: Vec<String> = std::fs::read_dir(&disk.0)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().to_string())
        .filter(|n| n != "filler")
        .collect();
    assert!(left.is_empty(), "files left on the full disk: {left:?}");
}
