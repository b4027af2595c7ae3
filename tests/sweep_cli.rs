//! `lossless run FILE --sweep KEY=V1,V2,…`: one run per value, metrics per row, JSON rows.

mod common;

use common::{lossless, root, tmp, u};

#[test]
fn a_sweep_of_headroom_finds_where_lossless_drops_stop() {
    let file = root().join("configs/labs/headroom-too-small.yaml");
    let out = tmp("sweep.json");
    let o = lossless(&[
        "run",
        file.to_str().unwrap(),
        "--sweep",
        "switches.tor.buffer.profiles.pg_lossless.xoff=8KiB,30144B",
        "--metric",
        "totals.lossless_drops",
        "--metric",
        "flows.*.rx_packets",
        "--json",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(
        text.contains("lossless_drops") && text.contains("30144B"),
        "{text}"
    );
    let r: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    let rows = r["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 2);
    assert_eq!(rows[0]["value"], "8KiB");
    assert!(u(&rows[0]["metrics"]["totals.lossless_drops"]) > 0);
    assert_eq!(u(&rows[1]["metrics"]["totals.lossless_drops"]), 0);
    // The same as a plain run of the edited file.
    let plain = common::run(&file, "sweep-plain.json", &[]);
    assert_eq!(
        rows[0]["metrics"]["totals.lossless_drops"],
        plain["totals"]["lossless_drops"]
    );
    assert!(rows[1]["metrics"]
        .as_object()
        .unwrap()
        .keys()
        .any(|k| k.starts_with("flows.")));
}

/// A sweep split into three shares run by GNU parallel, merged, is byte for byte what
/// one process writes, table included; merging without a share names what is missing.
#[test]
#[ignore = "needs GNU parallel (Debian package parallel; scripts/test)"]
fn a_sweep_split_into_shares_through_gnu_parallel_merges_into_the_single_run() {
    common::needs::tools(&[("parallel", "parallel")]);
    let file = root().join("configs/labs/headroom-too-small.yaml");
    let f = file.to_str().unwrap();
    let sweep = "switches.tor.buffer.profiles.pg_lossless.xoff=8KiB,12KiB,16KiB,24KiB,30144B";
    let args = [
        "run",
        f,
        "--sweep",
        sweep,
        "--metric",
        "totals.lossless_drops",
        "--metric",
        "flows.*.rx_packets",
    ];
    let full = tmp("shards-full.json");
    let mut one = args.to_vec();
    one.extend(["--json", full.to_str().unwrap()]);
    let o = lossless(&one);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let table = String::from_utf8_lossy(&o.stdout).to_string();
    let part = |k: &str| tmp(&format!("shards-part{k}.json"));
    let pattern = part("{}");
    let mut cmd = std::process::Command::new("parallel");
    // -q: every argument reaches lossless as it is (no shell globbing of `*`).
    cmd.args(["--will-cite", "--halt", "now,fail=1", "-q"])
        .arg(env!("CARGO_BIN_EXE_lossless"))
        .args(args)
        .args(["--shard", "{}/3", "--quiet", "--json"])
        .arg(&pattern)
        .args([":::", "0", "1", "2"]);
    let o = cmd.output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let share1: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(part("1")).unwrap()).unwrap();
    let values: Vec<&str> = share1["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["value"].as_str().unwrap())
        .collect();
    assert_eq!(
        values,
        ["12KiB", "30144B"],
        "share 1 of 3: positions 1 and 4"
    );
    assert_eq!(share1["shard"]["count"], 3);
    let merged = tmp("shards-merged.json");
    let (p0, p1, p2) = (part("0"), part("1"), part("2"));
    let o = lossless(&[
        "sweep",
        "merge",
        p2.to_str().unwrap(),
        p0.to_str().unwrap(),
        p1.to_str().unwrap(),
        "--json",
        merged.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(String::from_utf8_lossy(&o.stdout), table);
    assert_eq!(
        std::fs::read(&merged).unwrap(),
        std::fs::read(&full).unwrap(),
        "merged rows differ from one process's"
    );
    let o = lossless(&["sweep", "merge", p0.to_str().unwrap(), p1.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    let e = String::from_utf8_lossy(&o.stderr);
    assert!(e.contains("16KiB (share 2/3)"), "{e}");
}

#[test]
fn a_sweep_names_a_wrong_key_and_a_bad_value() {
    let file = root().join("configs/labs/headroom-too-small.yaml");
    let f = file.to_str().unwrap();
    let o = lossless(&["run", f, "--sweep", "switches.tor.bufer.cell=128B"]);
    assert_eq!(o.status.code(), Some(1));
    let e = String::from_utf8_lossy(&o.stderr);
    assert!(e.contains("`switches.tor.bufer`: no such key"), "{e}");
    let o = lossless(&["run", f, "--sweep", "switches.tor.ports.speed=fast"]);
    assert_eq!(o.status.code(), Some(1));
    let e = String::from_utf8_lossy(&o.stderr);
    assert!(
        e.contains("speed=fast") && e.contains("tor.ports.speed"),
        "{e}"
    );
    let o = lossless(&["run", f, "--sweep", "nokey"]);
    assert_eq!(o.status.code(), Some(2), "clap rejects the form");
}

/// Every shipped file, and the deadlock guide's lossy-hop variant (`pfc_asym: on`), runs
/// with a sweep of its seed: the file is edited in place, so its words stay its own.
#[test]
fn every_shipped_config_runs_with_a_seed_sweep() {
    let mut files: Vec<std::path::PathBuf> = Vec::new();
    for dir in [
        "configs",
        "configs/labs",
        "configs/switches",
        "configs/bench",
        "deploy/containerlab",
    ] {
        for e in std::fs::read_dir(root().join(dir)).unwrap() {
            let p = e.unwrap().path();
            if p.extension().is_some_and(|x| x == "yaml") {
                files.push(p);
            }
        }
    }
    files.sort();
    let deadlock = std::fs::read_to_string(root().join("configs/labs/deadlock.yaml")).unwrap();
    let lossy_hop = deadlock.replacen(
        "  - name: s3\n    ports: *ports\n    qos: {pfc_enable: [3, 4]}",
        "  - name: s3\n    ports: *ports\n    qos: {pfc_enable: [], pfc_asym: on}",
        1,
    );
    assert_ne!(lossy_hop, deadlock);
    files.push(common::scenario("deadlock-lossy-hop.yaml", &lossy_hop));
    assert!(files.len() >= 30, "{}", files.len());
    for f in &files {
        let o = lossless(&[
            "run",
            f.to_str().unwrap(),
            "--sweep",
            "seed=1,2",
            "--duration",
            "20us",
            "--quiet",
        ]);
        assert!(
            o.status.success(),
            "{}: {}",
            f.display(),
            String::from_utf8_lossy(&o.stderr)
        );
    }
}

/// Every value is read before the first run: a bad one at the end of a sweep is named at
/// once, and nothing ran.
#[test]
fn a_bad_value_at_the_end_of_a_sweep_fails_before_the_first_run() {
    let file = root().join("configs/labs/headroom-too-small.yaml");
    let o = lossless(&[
        "run",
        file.to_str().unwrap(),
        "--sweep",
        "switches.tor.ports.speed=100G,40G,25G,banana",
    ]);
    assert_eq!(o.status.code(), Some(1));
    let e = String::from_utf8_lossy(&o.stderr);
    assert!(e.contains("speed=banana"), "{e}");
    assert!(
        !e.contains("ran switches"),
        "a point ran before the bad value was read: {e}"
    );
}

/// Ctrl-C during a sweep: the point under way stops, every finished one is written (the
/// table, and the JSON marked `interrupted`), the status is 130 as a shell reports it,
/// and no temporary file is left beside the JSON.
#[test]
fn ctrl_c_during_a_sweep_keeps_the_points_that_finished() {
    use std::io::{BufRead, BufReader};
    use std::process::{Command, Stdio};
    let file = root().join("configs/labs/incast-pfc.yaml");
    let dir = tmp("sweep-ctrl-c");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let out = dir.join("rows.json");
    let seeds: Vec<String> = (1..=200).map(|s| s.to_string()).collect();
    let mut child = Command::new(env!("CARGO_BIN_EXE_lossless"))
        .args(["run", file.to_str().unwrap(), "--sweep"])
        .arg(format!("seed={}", seeds.join(",")))
        .args(["--json", out.to_str().unwrap()])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Two points done (their "ran" lines), then Ctrl-C.
    let mut err = BufReader::new(child.stderr.take().unwrap());
    let mut said = String::new();
    let mut ran = 0;
    while ran < 2 {
        let mut line = String::new();
        if err.read_line(&mut line).unwrap() == 0 {
            break;
        }
        ran += usize::from(line.starts_with("ran seed="));
        said += &line;
    }
    assert_eq!(ran, 2, "{said}");
    let ok = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(ok.success());
    let mut rest = String::new();
    std::io::Read::read_to_string(&mut err, &mut rest).unwrap();
    let o = child.wait_with_output().unwrap();
    let said = said + &rest;
    assert_eq!(o.status.code(), Some(130), "{said}");
    assert!(said.contains("stopped by SIGINT during seed="), "{said}");
    let r: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    assert_eq!(r["interrupted"], "SIGINT");
    let rows = r["rows"].as_array().unwrap();
    assert!((2..200).contains(&rows.len()), "{} rows", rows.len());
    for (k, row) in rows.iter().enumerate() {
        assert_eq!(row["value"], seeds[k]);
        assert!(row["metrics"].as_object().is_some_and(|m| !m.is_empty()));
    }
    let table = String::from_utf8_lossy(&o.stdout);
    assert!(table.starts_with("seed"), "{table}");
    assert_eq!(
        table
            .lines()
            .filter(|l| l.starts_with(|c: char| c.is_ascii_digit()))
            .count(),
        rows.len(),
        "{table}"
    );
    assert!(
        table.contains(&format!(
            "(stopped by SIGINT: {} of 200 points ran)",
            rows.len()
        )),
        "{table}"
    );
    let left: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().to_string())
        .collect();
    assert_eq!(left, ["rows.json"], "{left:?}");
}
