//! `outputs.timeseries`: chosen ports and priorities, a window, rows every interval or at
//! each change, long or wide CSV. Expected values come from the pause-storm lab's
//! derivation (docs/labs/pause-storm.md): r's first XOFF at the 85th frame after 1 ms,
//! effective at the switch one PFC frame (84 B on the wire, 6.72 ns) and one 2 m cable
//! (10 ns) later.

mod common;

use common::{lossless, root, scenario, tmp, u};

/// The pause-storm lab with `outputs.timeseries: {SPEC, csv: …}`: the CSV's lines and
/// the JSON report.
fn storm_series(name: &str, spec: &str) -> (Vec<String>, serde_json::Value) {
    let csv = tmp(&format!("{name}.csv"));
    let text = std::fs::read_to_string(root().join("configs/labs/pause-storm.yaml")).unwrap()
        + &format!(
            "outputs:\n  timeseries: {{{spec}, csv: {}}}\n",
            csv.display()
        );
    let r = common::run(
        &scenario(&format!("{name}.yaml"), &text),
        &format!("{name}.json"),
        &[],
    );
    let data = std::fs::read_to_string(&csv).unwrap();
    (data.lines().map(str::to_string).collect(), r)
}

fn r_xoff_ps(r: &serde_json::Value) -> u64 {
    u(&common::named(&r["hosts"], "r")["pfc"]["first_tx_xoff_ps"][3])
}

#[test]
fn on_change_wide_rows_catch_the_pause_at_the_picosecond() {
    let (lines, r) = storm_series(
        "ts-change-wide",
        "sample: change, ports: [tor:Ethernet0, r], priorities: [3], from: 1015us, to: 1030us, format: wide",
    );
    assert_eq!(
        lines[0],
        "time_ps,tor:Ethernet0:3:queue_bytes,tor:Ethernet0:3:pg_shared_bytes,\
         tor:Ethernet0:3:pg_headroom_bytes,tor:Ethernet0:3:paused,tor:Ethernet0:3:xoff,\
         r:rx_buffer_bytes,r:3:paused"
    );
    let rows: Vec<Vec<u64>> = lines[1..]
        .iter()
        .map(|l| l.split(',').map(|x| x.parse().unwrap()).collect())
        .collect();
    // The first row is the state at the window's start; then only rows that differ from
    // the one before, at strictly increasing times, all inside the window.
    assert_eq!(rows[0][0], 1_015_000_000);
    for w in rows.windows(2) {
        assert!(w[1][0] > w[0][0]);
        assert_ne!(w[1][1..], w[0][1..]);
    }
    assert!(rows.iter().all(|r| r[0] <= 1_030_000_000));
    // The switch's queue 3 is paused from r's XOFF + 6.72 ns + 10 ns, exactly.
    let xoff = r_xoff_ps(&r);
    let first_paused = rows.iter().find(|r| r[4] == 1).unwrap();
    assert_eq!(first_paused[0], xoff + 6_720 + 10_000);
    // r's buffer holds 85 frames when it sends XOFF.
    let at_xoff = rows.iter().rfind(|r| r[0] <= xoff).unwrap();
    assert_eq!(at_xoff[6], 85 * 1518);
    // Every frame of a adds 1518 B to r's buffer (it does not read): the buffer column
    // only grows in the window after 1 ms, in steps of 1518.
    let buf: Vec<u64> = rows.iter().map(|r| r[6]).collect();
    for w in buf.windows(2) {
        assert!(w[1] == w[0] || w[1] == w[0] + 1518, "{w:?}");
    }
}

#[test]
fn interval_long_rows_cover_only_the_chosen_ports_priorities_and_window() {
    let (lines, _) = storm_series(
        "ts-interval-long",
        "interval: 5us, ports: [tor:Ethernet0, r], priorities: [3, 4], from: 1015us, to: 1030us",
    );
    assert_eq!(
        lines[0],
        "time_ps,node,port,prio,queue_bytes,pg_shared_bytes,pg_headroom_bytes,paused,xoff"
    );
    // 1015, 1020, 1025, 1030 µs × (one port + one host) × 2 priorities.
    assert_eq!(lines.len() - 1, 4 * 2 * 2);
    for (i, l) in lines[1..].iter().enumerate() {
        let f: Vec<&str> = l.split(',').collect();
        assert_eq!(
            f[0],
            format!("{}", 1_015_000_000 + (i / 4) as u64 * 5_000_000)
        );
        assert!(
            matches!((f[1], f[2]), ("tor", "Ethernet0") | ("r", "nic")),
            "{l}"
        );
        assert!(f[3] == "3" || f[3] == "4", "{l}");
    }
}

#[test]
fn on_change_long_rows_are_only_those_that_changed() {
    let (lines, _) = storm_series(
        "ts-change-long",
        "sample: change, ports: [tor:Ethernet1, s], priorities: [3], from: 1440us, to: 1460us",
    );
    let rows: Vec<Vec<&str>> = lines[1..].iter().map(|l| l.split(',').collect()).collect();
    // The window starts with both nodes' rows; after that each node's rows differ from
    // its previous one.
    assert_eq!((rows[0][1], rows[1][1]), ("tor", "s"));
    for node in ["tor", "s"] {
        let mine: Vec<&Vec<&str>> = rows.iter().filter(|r| r[1] == node).collect();
        for w in mine.windows(2) {
            assert_ne!(w[0][4..], w[1][4..], "{node}");
        }
    }
    // The switch sends XOFF to s in this window (1.447 ms, the lab's answer 2): the xoff
    // column of Ethernet1 goes to 1, and s is paused after it.
    let xoff = rows.iter().find(|r| r[1] == "tor" && r[8] == "1").unwrap();
    let paused = rows.iter().find(|r| r[1] == "s" && r[7] == "1").unwrap();
    assert!(paused[0].parse::<u64>().unwrap() > xoff[0].parse::<u64>().unwrap());
}

#[test]
fn bad_timeseries_keys_are_errors_that_name_them() {
    let base = "duration: 1ms\nswitches:\n  - name: s\n    ports: {count: 2}\nhosts:\n  - {name: h, attach: s:Ethernet0}\noutputs:\n  timeseries: ";
    for (spec, expect) in [
        ("{sample: change, interval: 1us}", "outputs.timeseries.interval: `sample: change` writes a row at each change: no interval"),
        ("{ports: [s:Ethernet0]}", "outputs.timeseries.interval: needed (such as 10us), or `sample: change`"),
        ("{sample: sometimes}", "outputs.timeseries.sample: `sometimes`"),
        ("{interval: 1us, priorities: [9]}", "outputs.timeseries.priorities[0]: 9 is not a priority 0–7"),
        ("{interval: 1us, ports: [x:Ethernet0]}", "outputs.timeseries.ports[0]"),
        ("{interval: 1us, ports: [h, h]}", "outputs.timeseries.ports[1]: `h` is listed twice"),
        ("{interval: 1us, from: 2us, to: 1us}", "outputs.timeseries.to: 1us is not after `from` (2us)"),
        ("{interval: 1us, from: 1ms}", "outputs.timeseries.from: 1ms is at or after the end of the run"),
        ("{interval: 1us, format: tall}", "outputs.timeseries.format: `tall`"),
    ] {
        let f = scenario("ts-bad.yaml", &format!("{base}{spec}\n"));
        let o = lossless(&["check", f.to_str().unwrap()]);
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(!o.status.success() && err.contains(expect), "{spec}: {err}");
    }
}

/// CBFC credit counters ride along in the rows of a run where a recorded port speaks CBFC:
/// per priority the channel its queue sends on, as the sender counts it. In the
/// cbfc-vs-pfc lab (100 µs), tor:Ethernet0's priority 3 (VC 3) and h1 (the sender of the
/// incast flow a on VC 3 and the victim on VC 4), every 10 µs: in every row, credits in
/// use = consumed − freed, consumed never falls, and h1 holds at most the 1,024 credits
/// the switch gave VC 3. Priority 1 (uncredited) has empty fields. The long layout's
/// last row of tor:Ethernet0 at 100 µs agrees with the JSON report's counters.
#[test]
fn credit_counters_ride_along_where_ports_speak_cbfc() {
    let csv = tmp("ts-credits.csv");
    let wide = tmp("ts-credits-wide.csv");
    let lab = std::fs::read_to_string(root().join("configs/labs/cbfc-vs-pfc.yaml"))
        .unwrap()
        .replace("duration: 2ms\nmeasure: {from: 1ms}\n", "duration: 100us\n");
    let text = format!(
        "{lab}outputs:\n  timeseries: {{interval: 10us, ports: [tor:Ethernet0, h1], priorities: [1, 3], csv: {}}}\n",
        csv.display()
    );
    let r = common::run(&scenario("ts-credits.yaml", &text), "ts-credits.json", &[]);
    let lines: Vec<String> = std::fs::read_to_string(&csv)
        .unwrap()
        .lines()
        .map(str::to_string)
        .collect();
    assert_eq!(
        lines[0],
        "time_ps,node,port,prio,queue_bytes,pg_shared_bytes,pg_headroom_bytes,paused,xoff,credits_used,credits_consumed,credits_freed"
    );
    let mut last_consumed = std::collections::HashMap::new();
    let mut last_tor = None;
    for l in &lines[1..] {
        let f: Vec<&str> = l.split(',').collect();
        assert_eq!(f.len(), 12, "{l}");
        if f[3] == "1" {
            assert_eq!(&f[9..], ["", "", ""], "{l}");
            continue;
        }
        let n = |i: usize| f[i].parse::<u64>().unwrap();
        let (used, consumed, freed) = (n(9), n(10), n(11));
        assert_eq!(used, consumed - freed, "{l}");
        let prev = last_consumed
            .insert(f[1].to_string(), consumed)
            .unwrap_or(0);
        assert!(consumed >= prev, "{l}");
        if f[1] == "h1" {
            assert!(used <= 1024, "{l}");
        } else {
            last_tor = Some((n(0), used, consumed, freed));
        }
    }
    assert!(last_consumed["h1"] > 0);
    let (t, used, consumed, freed) = last_tor.unwrap();
    assert_eq!(t, 100_000_000);
    let v = common::port(&r, 0, "Ethernet0")["cbfc"]["vcs"]
        .as_array()
        .unwrap()
        .iter()
        .find(|v| v["vc"] == 3)
        .unwrap()
        .clone();
    assert_eq!(
        (used, consumed, freed),
        (
            u(&v["sender_credits_used"]),
            u(&v["sender_credits_consumed"]),
            u(&v["sender_credits_freed"])
        )
    );
    // The wide layout names the series.
    let text = format!(
        "{lab}outputs:\n  timeseries: {{interval: 50us, ports: [tor:Ethernet0], priorities: [3], format: wide, csv: {}}}\n",
        wide.display()
    );
    common::run(
        &scenario("ts-credits-wide.yaml", &text),
        "ts-credits-wide.json",
        &[],
    );
    let header = std::fs::read_to_string(&wide).unwrap();
    assert!(
        header.lines().next().unwrap().ends_with(
            "tor:Ethernet0:3:xoff,tor:Ethernet0:3:credits_used,tor:Ethernet0:3:credits_consumed,tor:Ethernet0:3:credits_freed"
        ),
        "{header}"
    );
}
