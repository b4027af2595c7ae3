//! `--threads N` splits the fabric into shares run side by side (src/sim/threads.rs): every
//! node still sees exactly the events it would on one thread, in the same order, so the
//! JSON report (but for `wall_time_s`) and every pcap file are byte-identical for every N.
//! Three fabrics: an incast on one switch (with more threads than switches its hosts run
//! in shares of their own, so every host link crosses between threads), the K=4 fat tree
//! (its switches split, 1 µs links between shares), and a ring of three switches whose
//! PFC deadlocks (2 m cables between shares: windows of about 10 ns).

mod common;

use common::{lossless, root, tmp};
use std::path::Path;

/// The JSON report's text with the value of `wall_time_s` blanked, the only key that
/// depends on the machine.
fn without_wall_time(json: &str) -> String {
    let at = json.find("\"wall_time_s\":").expect("a wall time") + "\"wall_time_s\":".len();
    let end = at + json[at..].find([',', '\n', '}']).expect("the value ends");
    format!("{}0{}", &json[..at], &json[end..])
}

/// Files by name, with their bytes.
type Files = Vec<(String, Vec<u8>)>;

/// Every file under `dir` (name, bytes), sorted by name.
fn files(dir: &Path) -> Files {
    let mut out: Files = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap())
        .map(|e| {
            (
                e.file_name().to_string_lossy().into_owned(),
                std::fs::read(e.path()).unwrap(),
            )
        })
        .collect();
    out.sort();
    out
}

/// Runs `file` for `duration` at `--threads` 1, 2 and 3 (with `capture`, every switch
/// port captured): the reports and the captures are the same bytes, and the text report
/// says how many threads ran (so that the comparison is not of three one-thread runs).
fn same_on_any_thread_count(file: &Path, tag: &str, duration: &str, capture: bool) {
    let mut first: Option<(String, Files)> = None;
    for n in [1usize, 2, 3] {
        let json = tmp(&format!("{tag}-{n}.json"));
        // One directory for every run (the report names the files), emptied between them.
        let pcaps = tmp(&format!("{tag}-pcap"));
        let _ = std::fs::remove_dir_all(&pcaps);
        let threads = n.to_string();
        let mut args = vec![
            "run",
            file.to_str().unwrap(),
            "--duration",
            duration,
            "--threads",
            &threads,
            "--force-threads",
            "--progress",
            "off",
            "--json",
            json.to_str().unwrap(),
        ];
        if capture {
            args.extend(["--pcap-dir", pcaps.to_str().unwrap()]);
        }
        let o = lossless(&args);
        let used = n;
        let stdout = String::from_utf8_lossy(&o.stdout);
        assert!(
            o.status.success(),
            "{tag} at {n}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        let says = format!("on {used} thread{}", if used == 1 { "" } else { "s" });
        assert!(
            stdout.contains(&says),
            "{tag} at {n}: wants '{says}' in:\n{stdout}"
        );
        let report = without_wall_time(&std::fs::read_to_string(&json).unwrap());
        let captures = if capture { files(&pcaps) } else { Vec::new() };
        assert_eq!(captures.is_empty(), !capture, "{tag}: captures written");
        match &first {
            None => first = Some((report, captures)),
            Some((r1, c1)) => {
                assert!(
                    report == *r1,
                    "{tag}: the JSON at --threads {n} differs from 1"
                );
                assert_eq!(captures.len(), c1.len(), "{tag}: capture files");
                for ((name, bytes), (_, one)) in captures.iter().zip(c1) {
                    assert!(
                        bytes == one,
                        "{tag}: {name} at --threads {n} differs from 1"
                    );
                }
            }
        }
    }
}

#[test]
fn an_incast_is_the_same_on_one_two_and_three_threads() {
    // One switch: at 2 threads it runs alone and its 9 hosts in a share of their own; at
    // 3 the hosts in two.
    let file = root().join("configs/bench/incast-8to1.yaml");
    same_on_any_thread_count(&file, "th-incast", "500us", true);
}

#[test]
fn a_fat_tree_is_the_same_on_one_two_and_three_threads() {
    let file = root().join("configs/bench/fat-tree-k4.yaml");
    same_on_any_thread_count(&file, "th-k4", "200us", true);
}

#[test]
fn a_pfc_deadlock_is_the_same_on_one_two_and_three_threads() {
    // The lab's ring locks up at 0.81 ms; with the indicator's deadlock_time at 1 ms it
    // reports the cycle at 1.81 ms. (No captures: 0.8 ms of three ports at line rate.)
    let text = std::fs::read_to_string(root().join("configs/labs/deadlock.yaml")).unwrap();
    let text = text.replacen(
        "\nduration: 30ms\n",
        "\nduration: 30ms\ndeadlock_time: 1ms\n",
        1,
    );
    assert!(
        text.contains("deadlock_time: 1ms"),
        "the lab's duration line moved"
    );
    let file = common::scenario("th-deadlock.yaml", &text);
    same_on_any_thread_count(&file, "th-deadlock", "2500us", false);
    let r: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(tmp("th-deadlock-3.json")).unwrap()).unwrap();
    let found = r["deadlocks"]["found"].as_array().map_or(0, Vec::len);
    assert_eq!(found, 1, "the ring deadlocks once: {}", r["deadlocks"]);
}

/// `--threads N` where threads cannot pay off (one switch: each window holds less work
/// than the threads' meeting costs) says why and runs on one thread, with the same
/// outcome; `--force-threads` takes them.
#[test]
fn threads_that_cannot_pay_off_are_said_and_not_taken() {
    let file = root().join("configs/bench/incast-8to1.yaml");
    let f = file.to_str().unwrap();
    let o = lossless(&[
        "run",
        f,
        "--duration",
        "100us",
        "--threads",
        "4",
        "--progress",
        "off",
    ]);
    assert!(o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("note: --threads 4: its fabric has 1 switch (threads pay off from 16")
            && err.contains("so it runs on one thread (--force-threads takes 4 anyway"),
        "{err}"
    );
    assert!(String::from_utf8_lossy(&o.stdout).contains("on 1 thread"));
    let o = lossless(&[
        "run",
        f,
        "--duration",
        "100us",
        "--threads",
        "2",
        "--force-threads",
        "--progress",
        "off",
    ]);
    assert!(o.status.success());
    assert!(!String::from_utf8_lossy(&o.stderr).contains("note: --threads"));
    assert!(String::from_utf8_lossy(&o.stdout).contains("on 2 threads"));
}
