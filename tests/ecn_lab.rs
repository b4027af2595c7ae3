//! The ecn-vs-pfc lab (docs/labs/ecn-vs-pfc.md): DCQCN against PFC alone, and the guide's
//! table of parameter changes over seeds 1–20, cell by cell.

mod common;

use common::{flow, root, sweep_rows, u};
use serde_json::Value;

/// The lab's NIC settings: the `, nic: &nic {dcqcn: {…}}` of the first host.
fn nic_settings(text: &str) -> &str {
    let s = text
        .find(", nic: &nic {dcqcn: {")
        .expect("the lab names its NIC settings");
    let e = s + text[s..].find("}}").unwrap() + 2;
    &text[s..e]
}

/// Flow throughputs (Gb/s) of fa and fb in each row of a seed sweep.
fn seed_gaps(file: &std::path::Path, seeds: &str) -> Vec<f64> {
    let out = format!(
        "evp-seeds-{}.json",
        file.file_stem().unwrap().to_str().unwrap()
    );
    let seeds = format!("seed={seeds}");
    sweep_rows(file, &seeds, &["flows.*.throughput_bps"], &out)
        .iter()
        .map(|row| {
            let m = &row["metrics"];
            let a = common::f(&m["flows.fa.throughput_bps"]);
            let b = common::f(&m["flows.fb.throughput_bps"]);
            (a - b).abs() / ((a + b) / 2.0)
        })
        .collect()
}

#[test]
fn ecn_vs_pfc_dcqcn_replaces_pauses_with_rate_cuts() {
    // docs/labs/ecn-vs-pfc.md, answers 1–4.
    let file = root().join("configs/labs/ecn-vs-pfc.yaml");
    let with = common::run(&file, "evp-on.json", &[]);
    let text = std::fs::read_to_string(&file).unwrap();
    assert_eq!(text.matches(", nic: *nic").count(), 2);
    let off = text
        .replace(nic_settings(&text), "")
        .replace(", nic: *nic", "");
    let without = common::run(&common::scenario("evp-off.yaml", &off), "evp-off.json", &[]);
    // 1. Without DCQCN: PFC holds the queue, per-port fair: 98.70 / 2 Gb/s each.
    let pfc_off = u(&without["totals"]["pfc_tx_frames"]);
    assert!(pfc_off > 1000, "{pfc_off}");
    for f in ["fa", "fb"] {
        let t = common::f(&flow(&without, f)["throughput_bps"]) / 1e9;
        assert!((t - 98.70 / 2.0).abs() < 0.1, "{f}: {t}");
    }
    let q_off = &without["switches"][0]["ports"][0]["queues"][3];
    assert!(u(&q_off["watermark_bytes"]) > 1_000_000, "{q_off}");
    // 3. With it: PFC frames at most 10 % of that (here none), nothing dropped.
    let pfc_on = u(&with["totals"]["pfc_tx_frames"]);
    assert!(pfc_on * 10 <= pfc_off, "{pfc_on} vs {pfc_off}");
    assert_eq!(u(&with["totals"]["drops"]), 0);
    // In the window the queue stays under Kmax (400 KB), so a frame waits at most
    // 400,000 B at 12.5 B/ns on top of the empty path (2 × 123.04 ns + 2 × 10 ns + 500 ns)
    // and its own serialisation.
    let bound_ps = 2 * 123_040 + 2 * 10_000 + 500_000 + 400_000 * 80 + 123_040;
    for f in ["fa", "fb"] {
        let x = flow(&with, f);
        assert!(
            u(&x["latency_ps"]["max"]) <= bound_ps,
            "{f}: bound {bound_ps}"
        );
        let d = &x["dcqcn"];
        assert!(u(&d["cnps"]) > 0, "{f}: {d}");
        assert!(common::f(&d["rate_bps"]) < 100e9);
    }
    // Every CNP the receiver sent reached a sender (none in flight at the end here).
    let sent = u(&common::named(&with["hosts"], "r")["cnps_sent"]);
    let got: u64 = ["fa", "fb"]
        .iter()
        .map(|f| u(&flow(&with, f)["dcqcn"]["cnps"]))
        .sum();
    assert_eq!(sent, got);
    // The link stays busy: the two share at least 95 Gb/s.
    let rate = |r: &Value, f: &str| common::f(&flow(r, f)["throughput_bps"]);
    let total = rate(&with, "fa") + rate(&with, "fb");
    assert!(total > 95e9, "{total}");
    // 4. … and within 10 % of each other, for the shipped seed (seeds 1 to 20: the table
    //    in ecn_vs_pfc_paper_parameters_stay_apart_at_100g).
    let gap = (rate(&with, "fa") - rate(&with, "fb")).abs() / (total / 2.0);
    assert!(gap < 0.10, "{gap}");
}

/// Gaps of seeds 1–20 sorted, as (gap, seed): the median (mean of the 10th and 11th) and
/// the widest, in percent to one decimal as the guide prints them.
fn median_and_widest(gaps: &[f64]) -> (String, String) {
    let mut by: Vec<(f64, usize)> = gaps.iter().copied().zip(1..).collect();
    by.sort_by(|a, b| a.0.total_cmp(&b.0));
    let median = (by[9].0 + by[10].0) / 2.0;
    let (w, seed) = by[19];
    (
        format!("{:.1} %", median * 100.0),
        format!("{:.1} % ({seed})", w * 100.0),
    )
}

#[test]
fn ecn_vs_pfc_paper_parameters_stay_apart_at_100g() {
    // docs/labs/ecn-vs-pfc.md, answer 5: with the paper's 40G parameters the two flows
    // do not converge within the run; the guide's table of single changes is what seeds
    // 1–20 give, cell by cell.
    let file = root().join("configs/labs/ecn-vs-pfc.yaml");
    let text = std::fs::read_to_string(&file).unwrap();
    let paper = text.replace(nic_settings(&text), ", nic: &nic {dcqcn: {}}");
    let r = common::run(
        &common::scenario("evp-paper.yaml", &paper),
        "evp-paper.json",
        &[],
    );
    assert_eq!(u(&r["totals"]["pfc_tx_frames"]), 0);
    let t = |f: &str| common::f(&flow(&r, f)["throughput_bps"]);
    let gap = (t("fa") - t("fb")).abs() / ((t("fa") + t("fb")) / 2.0);
    // Not converged: more than twice the 10 % the tuned lab meets (the guide's 57 / 41).
    assert!(gap > 0.20, "{gap}");
    let guide = std::fs::read_to_string(root().join("docs/labs/ecn-vs-pfc.md")).unwrap();
    let cells = |row: &str| -> (String, String) {
        let line = guide
            .lines()
            .find(|l| l.trim_start().starts_with(&format!("| {row} |")))
            .unwrap_or_else(|| panic!("the guide's table has a row `{row}`"));
        let c: Vec<&str> = line.split('|').map(str::trim).collect();
        (c[2].to_string(), c[3].to_string())
    };
    let rows = [
        ("none (the paper's)", "{}"),
        ("F = 1", "{fast_recovery: 1}"),
        ("T = K = 20 µs", "{rate_timer: 20us, alpha_timer: 20us}"),
        ("g = 1/16", "{g: 0.0625}"),
        ("R_AI = 200 Mb/s", "{rai: 200Mb/s}"),
        ("all five (this lab)", ""),
    ];
    let seeds: Vec<String> = (1..=20).map(|s| s.to_string()).collect();
    let mut medians = Vec::new();
    for (i, (row, dcqcn)) in rows.iter().enumerate() {
        let file = if dcqcn.is_empty() {
            file.clone()
        } else {
            let t = text.replace(
                nic_settings(&text),
                &format!(", nic: &nic {{dcqcn: {dcqcn}}}"),
            );
            common::scenario(&format!("evp-change-{i}.yaml"), &t)
        };
        let got = median_and_widest(&seed_gaps(&file, &seeds.join(",")));
        assert_eq!(got, cells(row), "{row}");
        medians.push(got.0.trim_end_matches(" %").parse::<f64>().unwrap());
    }
    // Answer 4: with all five, every seed of 1–20 within 10 %.
    let widest: f64 = cells(rows[5].0)
        .1
        .split(' ')
        .next()
        .unwrap()
        .parse()
        .unwrap();
    assert!(widest < 10.0, "{widest}");
    // "The timers matter most": the smallest median of the single changes.
    let single = &medians[1..5];
    assert_eq!(
        single.iter().copied().fold(f64::INFINITY, f64::min),
        medians[2]
    );
    // The paper's widest seed is this file's.
    assert!(text.contains("seed: 3\n"));
    assert!(cells(rows[0].0).1.ends_with("(3)"));
}
