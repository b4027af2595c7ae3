//! Guard rails of the command line: no flag can exhaust memory or disk, a path that names
//! nothing is an error that says what would, and files are created only where the user
//! asked. Each rule below has the error or warning a user sees.

mod common;

use common::{lossless, root, scenario, tmp};
use std::process::Output;

fn line_rate() -> String {
    root()
        .join("configs/labs/line-rate.yaml")
        .display()
        .to_string()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).to_string()
}

#[test]
fn plot_sampling_is_bounded() {
    let dir = tmp("guard-plot");
    let d = dir.to_str().unwrap();
    // 1 ms at 1 ps is 10⁹ samples: refused before the run, with an interval that fits.
    let o = lossless(&[
        "run",
        &line_rate(),
        "--quiet",
        "--plot",
        d,
        "--plot-interval",
        "1ps",
    ]);
    assert!(!o.status.success());
    let e = stderr(&o);
    assert!(
        e.contains("--plot-interval 1ps over 1ms is 1000000001 samples; at most 20000"),
        "{e}"
    );
    // The same interval over a window short enough is fine: 10 ns at 1 ps.
    let o = lossless(&[
        "run",
        &line_rate(),
        "--quiet",
        "--plot",
        d,
        "--plot-interval",
        "1ps",
        "--plot-window",
        "10us,10010ns",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let o = lossless(&["run", &line_rate(), "--plot", d, "--plot-interval", "0"]);
    assert!(stderr(&o).contains("an interval needs to be above 0, such as 20ns"));
    // A window after the end of the run: a warning, not a silent empty page.
    let o = lossless(&[
        "run",
        &line_rate(),
        "--quiet",
        "--plot",
        d,
        "--plot-window",
        "2ms,3ms",
    ]);
    assert!(o.status.success());
    assert!(
        stderr(&o).contains("warning: --plot-window 2ms,3ms starts after the run ended (1ms)"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn a_time_series_of_known_length_is_bounded() {
    let text = std::fs::read_to_string(line_rate()).unwrap()
        + "outputs: {timeseries: {interval: 1ps, ports: [sw:Ethernet0], priorities: [3]}}\n";
    let f = scenario("guard-ts.yaml", &text);
    for cmd in ["check", "run"] {
        let o = lossless(&[cmd, f.to_str().unwrap()]);
        assert!(!o.status.success(), "{cmd}");
        let e = stderr(&o);
        // One port, one priority: one row a sample, 10⁹ + 1 samples.
        assert!(
            e.contains("outputs.timeseries.interval: 1ps over 1ms writes 1000000001 rows (1 a sample); at most 2000000"),
            "{e}"
        );
    }
}

#[test]
fn an_unknown_metric_is_an_error_naming_the_nearest() {
    let o = lossless(&[
        "run",
        &line_rate(),
        "--sweep",
        "seed=1,2",
        "--metric",
        "totals.drop",
    ]);
    assert!(!o.status.success());
    assert!(
        stderr(&o)
            .contains("--metric totals.drop: the report has no such value (nearest: totals.drops"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn command_line_paths_create_no_directories() {
    let base = tmp("guard-paths");
    let _ = std::fs::remove_dir_all(&base);
    std::fs::create_dir_all(&base).unwrap();
    let json = base.join("no/such/dir/x.json");
    let o = lossless(&[
        "run",
        &line_rate(),
        "--quiet",
        "--json",
        json.to_str().unwrap(),
    ]);
    assert!(!o.status.success());
    assert!(
        stderr(&o).contains("no/such/dir does not exist"),
        "{}",
        stderr(&o)
    );
    assert!(!base.join("no").exists(), "nothing created");
    // --out-dir is explicit: the scenario's own outputs go under it, and it is created.
    let text = std::fs::read_to_string(line_rate()).unwrap()
        + "outputs: {timeseries: {interval: 100us}, json: r.json}\n";
    let f = scenario("guard-out.yaml", &text);
    let out = base.join("o");
    let o = lossless(&[
        "run",
        f.to_str().unwrap(),
        "--out-dir",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(out.join("r.json").is_file());
    assert!(out.join("out/guard-out-timeseries.csv").is_file());
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(
        text.contains(&format!("created directory {}", out.join("out").display())),
        "{text}"
    );
}

#[test]
fn check_refuses_what_run_refuses_and_reads_several_files() {
    let f = scenario(
        "guard-unbounded.yaml",
        "switches:\n  - name: s\n    ports: {count: 2}\nhosts:\n  - {name: a, attach: s:Ethernet0}\n  - {name: b, attach: s:Ethernet1}\nflows:\n  - {src: a, dst: b}\n",
    );
    let o = lossless(&["check", "--quiet", f.to_str().unwrap(), &line_rate()]);
    assert!(!o.status.success());
    assert!(
        stderr(&o).contains("has no duration and flows without size, packets, messages or stop"),
        "{}",
        stderr(&o)
    );
    // The other file is still checked.
    assert!(String::from_utf8_lossy(&o.stdout).contains("line-rate.yaml: OK"));
    let f = scenario(
        "guard-rate.yaml",
        "duration: 1ms\nswitches:\n  - name: s\n    ports: {count: 2}\nhosts:\n  - {name: a, attach: s:Ethernet0}\n  - {name: b, attach: s:Ethernet1}\nflows:\n  - {name: c, src: a, dst: b, pattern: cbr, rate: 200G}\n",
    );
    let o = lossless(&["check", f.to_str().unwrap()]);
    assert!(
        stderr(&o).contains(":9: flows.c.rate: 200G is above the 100G link of host a"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn errors_name_the_file_in_their_snippets_and_sweeps_name_the_value() {
    let f = scenario(
        "guard-snippet.yaml",
        "switches:\n  - name: s\n    ports: {count: 2, speeed: 10G}\n",
    );
    let e = stderr(&lossless(&["check", f.to_str().unwrap()]));
    assert!(
        e.contains(&format!("--> {}:3:", f.display())) && !e.contains("<input>"),
        "{e}"
    );
    let o = lossless(&[
        "run",
        &line_rate(),
        "--sweep",
        "switches.sw.ports.speed=10G,nope",
    ]);
    let e = stderr(&o);
    assert!(
        e.contains(
            "line-rate.yaml (switches.sw.ports.speed=nope): sw.ports.speed: `nope` is not a rate"
        ),
        "{e}"
    );
    assert!(
        !e.contains(":1:"),
        "no line of the re-written document: {e}"
    );
}

#[test]
fn an_onoff_flow_does_not_count_its_off_periods_as_skipped_slots() {
    // 10 µs on, 30 µs off at 10G over 1 ms: nothing pauses it, so no slot is skipped.
    let text = std::fs::read_to_string(line_rate()).unwrap().replace(
        "pattern: greedy}",
        "pattern: onoff, on: 10us, off: 30us, rate: 10G}",
    );
    let f = scenario("guard-onoff.yaml", &text);
    let r = common::run(&f, "guard-onoff.json", &[]);
    let flow = &r["flows"][0];
    assert_eq!(common::u(&flow["skipped_slots"]), 0, "{flow}");
    // 25 on periods of 10 µs at one frame per 1.2304 µs: 9 or 10 frames each (the first
    // at the period's start, the rest on the flow's slot grid).
    let tx = common::u(&flow["tx_packets"]);
    assert!((25 * 9..=25 * 10).contains(&tx), "{tx}");
}

#[test]
fn a_shorter_duration_cuts_the_files_windows_and_says_so() {
    // The file measures from 1 ms: a 500 µs look still runs, measures the whole run and
    // says why, instead of reporting an empty window; with --sweep too.
    let file = root().join("configs/labs/global-pause.yaml");
    let f = file.to_str().unwrap();
    let json = tmp("short-duration.json");
    let o = lossless(&[
        "run",
        f,
        "--quiet",
        "--duration",
        "500us",
        "--json",
        json.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let e = stderr(&o);
    assert!(
        e.contains("measure.from: 1ms is at or after the end of the run (500us, --duration): measuring the whole run"),
        "{e}"
    );
    let r: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(r["measure"]["from_ps"], 0);
    assert_eq!(r["measure"]["to_ps"], 500_000_000u64);
    let o = lossless(&[
        "run",
        f,
        "--quiet",
        "--duration",
        "500us",
        "--sweep",
        "seed=1,2",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stderr(&o).contains("measuring the whole run"));
    // A longer one makes room for windows the file's own 2 ms would refuse.
    let o = lossless(&[
        "run",
        f,
        "--quiet",
        "--duration",
        "3ms",
        "--sweep",
        "measure={from: 1ms, to: 3ms}",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
}

#[test]
fn endless_binary_and_huge_inputs_are_refused_with_the_limit_and_big_fabrics_load() {
    for args in [
        &["check", "/dev/zero"][..],
        &["check", "/dev/urandom"],
        &["import", "sonic", "/dev/zero"],
    ] {
        let o = lossless(args);
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(1), "{args:?}: {err}");
        assert!(
            err.contains("larger than 16 MiB, the most lossless reads from one file")
                || err.contains("is not UTF-8"),
            "{args:?}: {err}"
        );
    }
    // A scenario naming /dev/zero as its config_db: the key and the limit.
    let f = scenario(
        "sonic-zero.yaml",
        "switches:\n  - name: s\n    sonic: /dev/zero\n",
    );
    let o = lossless(&["check", f.to_str().unwrap()]);
    let err = stderr(&o);
    assert!(
        err.contains(":3: s.sonic: /dev/zero: larger than 16 MiB"),
        "{err}"
    );
    // 20,000 flows on 64 hosts (a 2 MB file): well within the budget.
    let mut text =
        String::from("duration: 10us\nswitches:\n  - name: s\n    ports: {count: 64}\nhosts:\n");
    for i in 0..64 {
        text += &format!("  - {{name: h{i}, attach: s:Ethernet{i}}}\n");
    }
    text += "flows:\n";
    for i in 0..20_000 {
        text += &format!(
            "  - {{name: f{i}, src: h{}, dst: h{}, protocol: udp, dscp: 3, frame: 1518B, pattern: cbr, rate: 1G, size: 1MB}}\n",
            i % 64,
            (i + 1) % 64
        );
    }
    let f = scenario("flows-20000.yaml", &text);
    let o = lossless(&["check", f.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
}

#[test]
fn sizes_have_one_range_however_they_are_written() {
    let f = |size: &str| {
        scenario(
            "size.yaml",
            &format!(
                "switches:\n  - name: s\n    ports: {{count: 2}}\nhosts:\n  - {{name: a, attach: s:Ethernet0}}\n  - {{name: b, attach: s:Ethernet1}}\nflows:\n  - {{src: a, dst: b, size: {size}}}\n"
            ),
        )
    };
    for too_big in ["18446744073709551615", "2TB", "1099511627777B"] {
        let o = lossless(&["check", f(too_big).to_str().unwrap()]);
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(1), "{too_big}: {err}");
        assert!(err.contains("at most 1TiB"), "{too_big}: {err}");
    }
}

#[test]
fn check_warns_when_a_lossless_priority_can_be_dropped_at_egress() {
    // The ingress pool raised to 1 GB: the PGs send XOFF far beyond what the lossless
    // queue takes, so an incast meets egress drops on a lossless priority. On paper: three
    // PGs at α = 1 in S = 1 GB settle at 3·S/4 = 750 MB together, plus each one's headroom
    // (128 KiB) and crossing packet (MTU 9216): 750,420,864 B.
    let plan = |ingress: &str| {
        scenario(
            "egress-limit.yaml",
            &format!(
                "switches:\n  - name: tor\n    ports: {{count: 4}}\n    buffer:\n      pools:\n\
                 \x20       ingress_lossless_pool: {{type: ingress, size: {ingress}}}\n\
                 \x20       egress_lossless_pool: {{type: egress, size: 16MB, mode: static}}\n\
                 \x20       ingress_lossy_pool: {{type: ingress, size: 4MB}}\n\
                 \x20       egress_lossy_pool: {{type: egress, size: 4MB}}\n\
                 \x20     profiles:\n\
                 \x20       pg_lossless: {{pool: ingress_lossless_pool, dynamic_th: 0, xoff: 128KiB}}\n\
                 \x20       q_lossless: {{pool: egress_lossless_pool, static_th: 16MB}}\n\
                 \x20     pg: {{\"3\": pg_lossless}}\n      queue: {{\"3\": q_lossless}}\n\
                 \x20   qos: {{pfc_enable: [3]}}\n"
            ),
        )
    };
    let o = lossless(&["check", plan("1GB").to_str().unwrap()]);
    let err = stderr(&o);
    assert!(o.status.success(), "{err}");
    assert!(
        err.contains(":12: tor.buffer.profiles.q_lossless: lossless priority 3 can be dropped at egress: the ingress PGs of the other ports (pg_lossless, in ingress_lossless_pool) hold up to 750.421MB together in an incast"),
        "{err}"
    );
    assert!(
        err.contains("queue 3 of Ethernet0 takes at most 16MB"),
        "{err}"
    );
    // With the pool the queue covers: three PGs at α = 1 settle at 3/4 of 16 MB, 12 MB,
    // plus their headroom: no warning.
    let o = lossless(&["check", plan("16MB").to_str().unwrap()]);
    assert!(!stderr(&o).contains("dropped at egress"), "{}", stderr(&o));
}
