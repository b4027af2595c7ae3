//! `lossless run --pfc-log PATH`: the PFC event log agrees with the report and the lab's
//! derivation (configs/labs/pause-spreading.yaml).

mod common;

use common::{root, tmp, u};
use serde_json::Value;

#[test]
fn the_pfc_log_tells_each_decision_and_frame_in_time_order() {
    let log = tmp("pfc.jsonl");
    let r = common::run(
        &root().join("configs/labs/pause-spreading.yaml"),
        "pfc-log.json",
        &["--pfc-log", log.to_str().unwrap()],
    );
    assert_eq!(r["outputs"]["pfc_log"], log.to_str().unwrap());
    let lines: Vec<Value> = std::fs::read_to_string(&log)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let t = |v: &Value| u(&v["t_ps"]);
    assert!(lines.windows(2).all(|w| t(&w[0]) <= t(&w[1])), "time order");
    // Every PFC frame a switch port sent is a `sent` line (the report counts frames).
    for sw in r["switches"].as_array().unwrap() {
        for p in sw["ports"].as_array().unwrap() {
            let name = format!(
                "{}:{}",
                sw["name"].as_str().unwrap(),
                p["port"].as_str().unwrap()
            );
            let sent = lines
                .iter()
                .filter(|l| l["event"] == "sent" && l["port"] == name.as_str())
                .count() as u64;
            assert_eq!(sent, u(&p["pfc"]["tx_frames"]), "{name}");
            // The first XOFF decision is when the first XOFF left (the port was idle).
            if let Some(first) = p["pfc"]["first_tx_xoff_ps"][3].as_u64() {
                let d = lines
                    .iter()
                    .find(|l| l["event"] == "xoff_decided" && l["port"] == name.as_str())
                    .expect("a decision before the frame");
                assert_eq!(t(d), first, "{name}");
                // 190 cells of 256 B; the crossing frame (6 cells of A's 1518 B, 1 of V's
                // 64 B) went to headroom: within the limit without it, over it with it.
                let (sh, hr) = (u(&d["shared_bytes"]), u(&d["headroom_bytes"]));
                assert_eq!(u(&d["limit_bytes"]), 48_640);
                assert!([256, 1536].contains(&hr), "{d}");
                assert!(sh <= 48_640 && sh + hr > 48_640, "{d}");
            }
        }
    }
    // A received frame takes effect the lab's 1 µs later; s3 heard r's XOFF at 20 µs.
    let rx: Vec<&Value> = lines.iter().filter(|l| l["event"] == "received").collect();
    assert!(rx.iter().all(|l| u(&l["effect_ps"]) == t(l) + 1_000_000));
    assert_eq!(
        (rx[0]["port"].as_str(), t(rx[0])),
        (Some("s3:Ethernet1"), 20_000_000)
    );
    // Each XON decision precedes an XON frame on the same port.
    for d in lines.iter().filter(|l| l["event"] == "xon_decided") {
        assert!(lines.iter().any(|l| l["event"] == "sent"
            && l["kind"] == "xon"
            && l["port"] == d["port"]
            && t(l) >= t(d)));
    }
}
