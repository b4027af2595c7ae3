//! sonic-mgmt's QoS SAI tests replayed on a Trident 2: a Force10-S6000 imported as written
//! from the config_db.json SONiC's templates give it (tests/data/sonic/force10-s6000-t1.json:
//! sonic-buildimage 086b03bd70, `device/common/profiles/td2/6000/BALANCED`), against the
//! counts a real one gave (sonic-mgmt b4ba9de3c9, `tests/qos/files/qos_params.td2.yaml`,
//! topo-any, 40000_300m; the S6000's lookup table has one profile for every speed and
//! cable). The chip comes from the HWSKU (`buffer.asic: trident2`); nothing here is set by
//! hand but the test's ports.
//!
//! What a Trident 2 plan means (`ingress_sizes: whole`, docs/physics.md "What a plan's sizes
//! mean"): ingress_lossless_pool's 12,766,208 B = 61,376 cells is the whole ingress buffer,
//! and the lossless profile's `size` 56,368 B includes its `xoff` 55,120 B. So a lossless PG
//! reserves 1,248 B = 6 cells and has 265 cells of headroom, and the shared space is what
//! the 32 ports' PGs 3–4 leave: 61,376 − 32 · 2 · 271 = 44,032 cells. The pool counts every
//! cell it holds, so the PG's 6 reserved cells in use count against the free space as its
//! shared ones do; with α = 2⁻³ a PG alone crosses when x > (44,032 − 6 − x) / 8, i.e.
//! 9x > 44,026: x = 4,892, packet 6 + 4,892 = 4,898 sends XOFF and stays in shared space
//! (as on Tomahawk 1), and packet 4,898 + 265 + 1 = 5,164 is the first dropped.
//! Read as Tomahawk's sizes (the pool shared, the profile's size its reserve) the same file
//! would send XOFF at packet 56,368 / 208 + ⌊61,376 / 9⌋ + 1 = 7,091, 45 % late.
//!
//! Each test asserts the emulator's count on paper and the hardware's within the test's
//! own margin (sai_qos_tests.py's assertions); here every count is the hardware's exactly.
//!
//! Sources: sonic-net/sonic-mgmt b4ba9de3c9bb57c0628bc4cb98b3ecf3a3932a43:
//!   `tests/saitests/py3/sai_qos_tests.py`,
//!   `tests/qos/files/qos_params.td2.yaml`;
//! sonic-net/sonic-buildimage 086b03bd70f9e211aaaf5f6aefe0790b508d2a94:
//!   `device/dell/x86_64-dell_s6000_s1220-r0/Force10-S6000` (the imported switch).

mod common;

use common::sonic::{egress_drops, ingress_drops, port, replay, send, xoffs, Setup, S6000_40G};
use common::{lossless, run, scenario, u};

const CELL: u64 = 208;
/// Cells of ingress_lossless_pool left shared by the 32 ports' lossless PGs.
const SHARED: u64 = 12_766_208 / CELL - 32 * 2 * (56_368 / CELL);
/// A lossless PG's reserve and headroom, cells.
const RESERVE: u64 = (56_368 - 55_120) / CELL;
const HEADROOM: u64 = 55_120 / CELL;
/// qos_params.td2.yaml, topo-any 40000_300m.
const TRIG_PFC: u64 = 4898;
const TRIG_INGR_DRP: u64 = 5164;
const DISMISS_PFC: u64 = 12;
const TRIG_EGR_DRP: u64 = 31_322;

/// The shared cell count at which a PG alone crosses its limit, on paper.
fn crossing() -> u64 {
    (1..)
        .find(|x| 8 * x > SHARED - RESERVE - x)
        .expect("a crossing")
}

fn one(name: &str, dscp: u8, n: u64) -> serde_json::Value {
    replay(name, &S6000_40G, &Setup::default(), &[send(1, dscp, n)])
}

/// PFCtest xoff_1 (DSCP 3) and xoff_2 (DSCP 4), margin 2: one packet fewer than the count
/// sends no XOFF, the count does; one fewer than pkts_num_trig_ingr_drp drops nothing, that
/// many drops one — the hardware's counts exactly.
#[test]
fn pfctest_xoff_and_first_drop_at_the_s6000_counts() {
    assert_eq!((SHARED, RESERVE, HEADROOM), (44_032, 6, 265));
    assert_eq!(RESERVE + crossing(), TRIG_PFC);
    assert_eq!(TRIG_PFC + HEADROOM + 1, TRIG_INGR_DRP);
    for dscp in [3u8, 4] {
        let p = dscp as usize;
        let r = one(&format!("td2-pfc-{dscp}-a"), dscp, TRIG_PFC - 1);
        assert_eq!(xoffs(&r, 1, p), 0, "DSCP {dscp}");
        let r = one(&format!("td2-pfc-{dscp}-b"), dscp, TRIG_PFC);
        assert!(xoffs(&r, 1, p) >= 1, "DSCP {dscp}");
        let r = one(&format!("td2-pfc-{dscp}-c"), dscp, TRIG_INGR_DRP - 1);
        assert_eq!(ingress_drops(&r), 0, "DSCP {dscp}");
        let r = one(&format!("td2-pfc-{dscp}-d"), dscp, TRIG_INGR_DRP);
        assert_eq!(ingress_drops(&r), 1, "DSCP {dscp}");
        assert_eq!(u(&r["totals"]["lossless_drops"]), 1);
    }
}

/// PFCXonTest xon_1 (margin 1, as sai_qos_tests.py sends it): transmit off on three
/// destinations; trig − dismiss − margin = 4,885 packets to the first, dismiss + 2·margin
/// − 1 = 13 to the second (the last of them sends XOFF), 1 to the third (into headroom);
/// then the second destination's transmit on at 400 µs, the third's at 700 µs. The test
/// asserts PFC still on after the second drains and off after the third.
///
/// On paper (XON level latched at XOFF, `buffer.asic: trident2`): XOFF latched the limit
/// (44,032 − 6 − 4,892) / 8 = 4,891.75 cells, so XON needs shared use under 4,891.75 −
/// 12 (xon_offset 2,496 B) = 4,879.75 cells (xon 18,432 B is below it). The second
/// destination's 13 packets leave 1 from headroom and 12 from shared: 4,880, still XOFF;
/// the third's one makes it 4,879: XON.
#[test]
fn pfc_xon_test_holds_xoff_until_the_third_destination_drains() {
    let margin = 1;
    let (n1, n2, n3) = (
        TRIG_PFC - DISMISS_PFC - margin,
        DISMISS_PFC + 2 * margin - 1,
        1,
    );
    assert_eq!(n1 + n2, TRIG_PFC);
    let data = common::root().join("tests/data/sonic/force10-s6000-t1.json");
    let ports = ["Ethernet0", "Ethernet4", "Ethernet8", "Ethernet12"];
    let text = format!(
        "# sonic-mgmt PFCXonTest replay on a Force10-S6000 (tests/sonic_qos_td2.rs)\n\
         duration: 1ms\n\
         switches:\n  - name: td2\n    pipeline_latency: 0ns\n    sonic: {{file: {}, ports: [{}]}}\n\
         hosts:\n  - {{name: h0, attach: td2:Ethernet0, nic: {{pfc: ignore}}}}\n\
         \x20 - {{name: h1, attach: td2:Ethernet4}}\n  - {{name: h2, attach: td2:Ethernet8}}\n\
         \x20 - {{name: h3, attach: td2:Ethernet12}}\n\
         flows:\n  - {{src: h0, dst: h1, dscp: 3, frame: 68, packets: {n1}}}\n\
         \x20 - {{src: h0, dst: h2, dscp: 3, frame: 68, packets: {n2}, start: 200us}}\n\
         \x20 - {{src: h0, dst: h3, dscp: 3, frame: 68, packets: {n3}, start: 300us}}\n\
         events:\n  - {{at: 0ns, port: td2:Ethernet4, tx: disable}}\n\
         \x20 - {{at: 0ns, port: td2:Ethernet8, tx: disable}}\n\
         \x20 - {{at: 0ns, port: td2:Ethernet12, tx: disable}}\n\
         \x20 - {{at: 400us, port: td2:Ethernet8, tx: enable}}\n\
         \x20 - {{at: 700us, port: td2:Ethernet12, tx: enable}}\n",
        data.display(),
        ports.join(", ")
    );
    let j = run(
        &scenario("td2-pfcxontest.yaml", &text),
        "td2-pfcxontest.json",
        &[],
    );
    let pfc = &j["switches"][0]["ports"][0]["pfc"];
    assert!(u(&pfc["tx_xoff"][3]) >= 1, "XOFF: {pfc}");
    assert_eq!(u(&j["totals"]["lossless_drops"]), 0);
    let xon = pfc["first_tx_xon_ps"][3]
        .as_u64()
        .or(pfc["last_tx_xon_ps"][3].as_u64())
        .expect("XON once the third destination drains");
    assert!(
        xon >= 700_000_000,
        "XON at {xon} ps, before the third destination drained"
    );
}

/// PGHeadroomWatermarkTest (wm_pg_headroom): 0 at XOFF (the crossing packet stays in
/// shared space), then one cell per packet up to trig_ingr_drp − trig_pfc − 1 = 265 — the
/// PG's whole xoff — checked after 1 and then in quarters, as the test steps.
#[test]
fn pg_headroom_watermark_follows_each_packet_into_headroom() {
    let total = TRIG_INGR_DRP - TRIG_PFC - 1;
    assert_eq!(total, HEADROOM);
    let wm = |extra: u64| {
        let r = one(&format!("td2-hdrm-wm-{extra}"), 3, TRIG_PFC + extra);
        u(&port(&r, 1)["pgs"][3]["headroom_watermark_bytes"])
    };
    assert_eq!(wm(0), 0);
    let (mut expected, mut step) = (0, 1);
    while expected < total {
        expected = (expected + step).min(total);
        assert_eq!(wm(expected), expected * CELL);
        step = total >> 2;
    }
}

/// PGSharedWatermarkTest (wm_pg_shared_lossless: fill_min 6, fill_shared = trig_pfc): 0
/// after the 6 reserved cells, then every packet, first 1 + margin (2) then quarters, up
/// to 4,892 (the crossing packet is the 4,898th, still shared); the test's Broadcom bound
/// is ≤ (fill_min + expected + margin) cells.
#[test]
fn pg_shared_watermark_follows_each_packet_into_shared_space() {
    let (fill_min, margin) = (6u64, 2u64);
    let total = TRIG_PFC - fill_min;
    let wm = |n: u64| {
        let r = one(&format!("td2-pg-shared-wm-{n}"), 3, n);
        u(&port(&r, 1)["pgs"][3]["shared_watermark_bytes"])
    };
    assert_eq!(wm(fill_min), 0);
    let (mut expected, mut step) = (0, 1 + margin);
    while expected < total {
        expected = (expected + step).min(total);
        let got = wm(fill_min + expected);
        assert_eq!(got, expected * CELL);
        assert!(got <= (fill_min + expected + margin) * CELL);
        step = total >> 2;
    }
    assert_eq!(
        wm(TRIG_PFC + 10),
        total * CELL,
        "later packets go to headroom"
    );
}

/// QSharedWatermarkTest (wm_q_shared_lossless: queue 3, fill_min 0 — the egress lossless
/// profile reserves nothing): every admitted packet waits in queue 3, so its watermark
/// reaches trig_ingr_drp − 1 = 5,163 cells once ingress drops start (margin 8 above).
#[test]
fn queue_shared_watermark_stops_where_ingress_drops_start() {
    let r = one("td2-q-shared-wm", 3, TRIG_INGR_DRP + 8);
    assert_eq!(ingress_drops(&r), 9);
    let q = &port(&r, 0)["queues"][3];
    assert_eq!(u(&q["watermark_bytes"]), (TRIG_INGR_DRP - 1) * CELL);
    assert_eq!(u(&q["shared_watermark_bytes"]), (TRIG_INGR_DRP - 1) * CELL);
}

/// BufferPoolWatermarkTest (wm_buf_pool_lossless: fill_ingr_min 6, fill_shared = trig_pfc
/// − 1): the ingress_lossless_pool watermark counts shared cells only — 0 after the 6
/// reserved (the test's bound: ≤ margin 2 cells), then every packet up to 4,891 (bounds
/// −1 … +2 cells).
#[test]
fn buffer_pool_watermark_counts_the_shared_cells() {
    let fill_min = 6u64;
    let total = TRIG_PFC - 1 - fill_min;
    let wm = |n: u64| {
        let r = one(&format!("td2-pool-wm-{n}"), 3, n);
        let pools = r["switches"][0]["pools"].as_array().unwrap();
        let p = pools
            .iter()
            .find(|p| p["name"] == "ingress_lossless_pool")
            .unwrap();
        assert_eq!(
            u(&p["size_bytes"]),
            SHARED * CELL,
            "the pool's shared space"
        );
        u(&p["watermark_bytes"])
    };
    assert_eq!(wm(fill_min), 0);
    let (mut expected, mut step) = (0, 1);
    while expected < total {
        expected = (expected + step).min(total);
        assert_eq!(wm(fill_min + expected), expected * CELL);
        step = (total >> 2).max(1);
    }
}

/// LossyQueueTest (lossy_queue_1: DSCP 1 → queue 1, margin 2). The egress lossy pool is
/// shared space on Trident 2 too (only ingress sizes are whole): 7,326,924 B = 35,225.6
/// cells, counted as 35,226 (`pool_cells: up`). Queue 1 takes 8 reserved cells, then a
/// shared cell while its shared use before the packet x ≤ 8·(35,226 − x)
/// (`queue_admission: before`): up to x = 31,312, which the last admitted packet makes
/// 31,313. So 8 + 31,313 = 31,321 packets are queued and the 31,322nd is dropped: the
/// hardware's count exactly. (The generic rules — the packet counted, the pool rounded down
/// — drop the 31,320th.)
#[test]
fn lossy_queue_drops_at_the_s6000_count() {
    let pool = 7_326_924u64.div_ceil(CELL);
    let last_x = (0..pool)
        .take_while(|x| *x <= 8 * (pool - x))
        .last()
        .unwrap();
    let first = 8 + last_x + 1 + 1;
    assert_eq!((pool, first), (35_226, TRIG_EGR_DRP));
    let r = one("td2-lossy-a", 1, first - 1);
    assert_eq!(egress_drops(&r), 0);
    let q = &port(&r, 0)["queues"][1];
    assert_eq!(u(&q["watermark_bytes"]), (first - 1) * CELL);
    let r = one("td2-lossy-b", 1, first);
    assert_eq!(egress_drops(&r), 1);
    assert_eq!(u(&r["totals"]["pfc_tx_frames"]), 0);
}

/// `lossless import sonic --ports` on a whole-buffer chip: the PGs of the 30 ports left out
/// still hold their share of the pool on the switch, so the written pool is 12,766,208 −
/// 30 · 2 · 56,368 = 9,384,128 B, and the import says so.
#[test]
fn import_of_some_ports_keeps_the_others_reserves_out_of_the_pool() {
    let data = common::root().join("tests/data/sonic/force10-s6000-t1.json");
    let o = lossless(&[
        "import",
        "sonic",
        data.to_str().unwrap(),
        "--ports",
        "Ethernet0,Ethernet4",
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("the ports not imported hold 3382080 bytes"),
        "{err}"
    );
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("9384128"), "{out}");
    assert!(out.contains("asic: trident2"), "{out}");
}
