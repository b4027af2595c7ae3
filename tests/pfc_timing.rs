//! PFC timing through the CLI: a port told to pause does not start frames, for exactly as
//! long as it was told, with a response delay as well as without (docs/physics.md, "Pause quanta"). Expected
//! values are derived in the comments from docs/physics.md.

mod common;

use common::{f, named, run, scenario, u};

/// IEEE 802.3's bound at 100G: 394 quanta × 5.12 ns.
const IEEE_100G: &str = "2.01728us";

/// h1 sends greedy 1518-byte frames on priority 3 into a port whose transmitter is off, so
/// its PG fills, the switch sends XOFF to h1 and refreshes it every half pause time
/// (0xFFFF quanta at 100G = 335.5 µs, refreshed every 167.8 µs) for the rest of the run.
fn held_sender(response: &str) -> String {
    format!(
        "# a sender held by the switch's refreshed XOFF\nswitches:\n  - name: s\n    ports: {{count: 2, mtu: 1518}}\n\
         hosts:\n  - {{name: h0, attach: s:Ethernet0}}\n  - {{name: h1, attach: s:Ethernet1, nic: {{pfc_response: {response}}}}}\n\
         flows:\n  - {{name: f, src: h1, dst: h0, dscp: 3, pattern: greedy}}\n\
         events:\n  - {{at: 1us, port: s:Ethernet0, tx: disable}}\n"
    )
}

#[test]
fn a_refreshed_pause_with_a_response_delay_leaks_nothing() {
    let s = scenario("held.yaml", &held_sender(IEEE_100G));
    let one = run(&s, "held-1ms.json", &["--duration", "1ms"]);
    let two = run(&s, "held-2ms.json", &["--duration", "2ms"]);
    let (h1a, h1b) = (named(&one["hosts"], "h1"), named(&two["hosts"], "h1"));
    // The second millisecond brings 1 ms / 167.8 µs ≈ 6 refreshes…
    let refreshes = u(&h1b["pfc"]["rx_xoff"][3]) - u(&h1a["pfc"]["rx_xoff"][3]);
    assert!((5..=7).contains(&refreshes), "{refreshes} refreshes");
    // …and not one frame: a refresh of a running pause keeps it running.
    assert_eq!(u(&h1a["tx_packets"]), u(&h1b["tx_packets"]));
    // h1 is paused for all of that millisecond, exactly.
    assert_eq!(
        u(&h1b["paused_ps"][3]) - u(&h1a["paused_ps"][3]),
        1_000_000_000
    );
    // The default plan's headroom is the minimum for the IEEE response: nothing is lost.
    for r in [&one, &two] {
        assert_eq!(u(&r["totals"]["lossless_drops"]), 0);
        let pg = &r["switches"][0]["ports"][1]["pgs"][3];
        assert!(u(&pg["headroom_watermark_bytes"]) > 0);
    }
}

#[test]
fn the_frames_sent_after_xoff_are_those_of_the_response_window() {
    // On paper, after the switch decides XOFF: h1 is told at the end of the PFC frame's
    // wire time (84 B = 6.72 ns) plus 10 ns of cable and may start frames for the response
    // time r. Raising r by 2 µs lets h1 start 2 µs / 123.04 ns ≈ 16.3 more frames of 1518 B
    // (16 or 17), all of which must fit in headroom.
    let base = run(
        &scenario("held-r0.yaml", &held_sender("0ns")),
        "held-r0.json",
        &["--duration", "1ms"],
    );
    let slow = run(
        &scenario("held-r2.yaml", &held_sender("2us")),
        "held-r2.json",
        &["--duration", "1ms"],
    );
    let tx = |r: &serde_json::Value| u(&named(&r["hosts"], "h1")["tx_packets"]);
    let extra = tx(&slow) - tx(&base);
    assert!((16..=17).contains(&extra), "{extra} more frames");
    let hr = |r: &serde_json::Value| {
        u(&r["switches"][0]["ports"][1]["pgs"][3]["headroom_watermark_bytes"])
    };
    // Each extra frame takes six 256-byte cells of headroom.
    assert_eq!(hr(&slow) - hr(&base), extra * 6 * 256);
    assert_eq!(u(&slow["totals"]["lossless_drops"]), 0);
}

/// A PFC storm injected on Ethernet0 (XOFF 0xFFFF every 100 µs from 100 µs to 2.9 ms)
/// while h1 sends 10G CBR to h0 on priority 3, with the switch's response delay `response`.
fn storm(response: &str) -> String {
    let mut events = String::from("events:\n");
    for t in (100..3_000).step_by(100) {
        events.push_str(&format!(
            "  - {{at: {t}us, port: s:Ethernet0, inject: {{pfc: {{3: 65535}}}}}}\n"
        ));
    }
    format!(
        "# storm\nduration: 6ms\nswitches:\n  - name: s\n    ports: {{count: 2, mtu: 1518}}\n\
         \x20   qos: {{pfc_enable: [3], pfc_response: {response}, pfcwd: {{action: drop, detection_time: 1ms, restoration_time: 1ms, polling_interval: 100us}}}}\n\
         hosts:\n  - {{name: h0, attach: s:Ethernet0}}\n  - {{name: h1, attach: s:Ethernet1}}\n\
         flows:\n  - {{name: f, src: h1, dst: h0, dscp: 3, pattern: cbr, rate: 10G}}\n{events}"
    )
}

#[test]
fn a_storm_with_a_response_delay_trips_the_watchdog() {
    let r = run(
        &scenario("storm-r.yaml", &storm(IEEE_100G)),
        "storm-r.json",
        &[],
    );
    let p0 = &r["switches"][0]["ports"][0];
    // Each refresh arrives while the pause runs and keeps it running: the queue is stuck
    // from 102 µs, the watchdog sees it at every 100 µs poll and fires after 1 ms.
    let wd = &p0["pfcwd"][0];
    assert_eq!(u(&wd["queue"]), 3);
    assert_eq!(u(&wd["storms"]), 1);
    assert_eq!(u(&wd["restorations"]), 1);
    assert!(u(&wd["dropped_packets"]) > 0);
    // Paused from 100 µs + r until the watchdog takes the queue over: the rest of the
    // storm is "forwarded" (dropped) without waiting, so the pause counter runs on to the
    // last frame's end, 2.9 ms + r + 65535 × 5.12 ns.
    let paused = u(&p0["pfc"]["rx_pause_ps"][3]);
    let expect = 2_900_000_000 + 335_539_200 - 100_000_000;
    assert_eq!(paused, expect);
    // 10G CBR of 1518-byte frames is one per 1.2304 µs: about 81 frames before the storm
    // and, after restoration at ≈ 4 ms, about 1,600 more.
    let rx = u(&r["flows"][0]["rx_packets"]);
    assert!(rx > 1_500, "{rx}");
}

#[test]
fn a_slow_receiver_pauses_its_link_for_the_time_it_cannot_drain() {
    // h0's software drains 80G of the 98.70 Gb/s of frame bytes a 100G link carries in
    // 1518-byte frames; the port toward it is always backlogged (h1 sends greedy), so it is
    // busy 80/98.70 of the time and paused the rest: 1 − 80/98.70 = 18.95 %.
    let s = scenario(
        "slow80.yaml",
        &format!(
            "# slow receiver\nduration: 2ms\nmeasure: {{from: 500us, to: 2ms}}\n\
             switches:\n  - name: s\n    ports: {{count: 2, mtu: 1518}}\n    qos: {{pfc_response: {IEEE_100G}}}\n\
             hosts:\n  - {{name: h0, attach: s:Ethernet0, nic: {{rx_buffer: 256KiB, drain: 80G, pfc_xoff: 128KiB, pfc_xon: 64KiB}}}}\n\
             \x20 - {{name: h1, attach: s:Ethernet1, nic: {{pfc_response: {IEEE_100G}}}}}\n\
             flows:\n  - {{name: f, src: h1, dst: h0, dscp: 3, pattern: greedy}}\n"
        ),
    );
    let r = run(&s, "slow80.json", &[]);
    let p0 = &r["switches"][0]["ports"][0];
    let window = 1.5e9; // ps
    let paused = f(&p0["pfc"]["rx_pause_fraction"][3]);
    assert!(
        (paused - (1.0 - 80.0 / 98.70)).abs() < 0.005,
        "paused {paused}"
    );
    let busy = f(&p0["tx_utilization"]);
    // Busy and paused overlap only while a frame that had started finishes after a pause
    // took effect: at most one frame (123.04 ns) per XOFF received.
    let xoffs = u(&p0["pfc"]["rx_xoff"][3]) as f64;
    assert!(
        busy + paused <= 1.0 + xoffs * 123_040.0 / window,
        "busy {busy} + paused {paused}"
    );
    assert!(busy + paused > 0.995, "busy {busy} + paused {paused}");
    assert_eq!(u(&r["totals"]["lossless_drops"]), 0);
    assert_eq!(u(&named(&r["hosts"], "h0")["rx_drops"]), 0);
}
