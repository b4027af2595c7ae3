//! sonic-mgmt's ingress QoS SAI tests replayed on Tomahawk switches imported from SONiC's
//! own config_db (tests/data/sonic: Force10-S6100 at 40G, Arista-7060CX-32S-C32 at 50G
//! and 100G), against the counts real Tomahawk switches gave (`qos_params.th.yaml` at
//! sonic-mgmt b4ba9de3c9, topology t1-64-lag, 300 m profiles). The chip comes from the
//! HWSKU (`buffer.asic: tomahawk`: 208-byte cells, four slices, the crossing packet kept in
//! shared space); nothing here is tuned to a count. Each test states on paper what the
//! emulator does, then asserts that and the hardware's count within the test's own margin
//! (sai_qos_tests.py's assertions, with its margins, which here are all 0 but where noted).
//!
//! Paper values, one 64-byte packet = one cell: a lossless PG reserves 1248 B = 6 cells;
//! its slice of ingress_lossless_pool holds 10,875,072 / 4 / 208 = 13,071 cells; with α = 1
//! one PG alone takes shared cells while x ≤ 13,071 − x, so x = 6,536 crosses: the 6,542nd
//! packet sends XOFF and stays in shared space; headroom is the profile's xoff in cells
//! (108,160 / 141,856 / 268,736 B = 520 / 682 / 1,292), so the first drop is packet 6,542 +
//! 520 + 1 = 7,063 (7,225, 7,835). The slice's share of the shared headroom pool is
//! 4,194,112 / 4 / 208 = 5,041 cells.
//!
//! Sources: sonic-net/sonic-mgmt b4ba9de3c9bb57c0628bc4cb98b3ecf3a3932a43:
//!   `tests/saitests/py3/sai_qos_tests.py`,
//!   `tests/qos/files/qos_params.th.yaml`;
//! sonic-net/sonic-buildimage 086b03bd70f9e211aaaf5f6aefe0790b508d2a94:
//!   `device/dell/x86_64-dell_s6100_c2538-r0/Force10-S6100` and
//!   `device/arista/x86_64-arista_7060_cx32s/Arista-7060CX-32S-C32` (the imported switches).

mod common;

use common::sonic::{
    egress_drops, ingress_drops, pool_watermarks, port, replay, send, xoffs, Setup, Sku, TOMAHAWK,
};
use common::u;

/// qos_params.th.yaml's counts per row (t1-64-lag; the same under topo-any and t0-64).
struct Row {
    pkts_num_trig_pfc: u64,
    pkts_num_trig_ingr_drp: u64,
    /// hdrm_pool_size: (PGs filled, pkts_num_trig_pfc, pkts_num_hdrm_full,
    /// pkts_num_hdrm_partial).
    hdrm_pool: (u64, u64, u64, u64),
}

fn row(sku: &Sku) -> Row {
    match sku.gbps {
        40 => Row {
            pkts_num_trig_pfc: 6542,
            pkts_num_trig_ingr_drp: 7063,
            hdrm_pool: (10, 1194, 520, 361),
        },
        50 => Row {
            pkts_num_trig_pfc: 6542,
            pkts_num_trig_ingr_drp: 7225,
            hdrm_pool: (8, 1458, 682, 267),
        },
        _ => Row {
            pkts_num_trig_pfc: 6542,
            pkts_num_trig_ingr_drp: 7835,
            hdrm_pool: (4, 2620, 1292, 1165),
        },
    }
}

/// Cells in one slice of ingress_lossless_pool, and of its shared headroom pool.
const SLICE_CELLS: u64 = 10_875_072 / 4 / 208;
const HEADROOM_POOL_CELLS: u64 = 4_194_112 / 4 / 208;
const CELL: u64 = 208;

/// PFCtest xoff_1 (DSCP 3, PG 3) and xoff_2 (DSCP 4, PG 4): one packet fewer than
/// pkts_num_trig_pfc sends no XOFF, that many does; one fewer than pkts_num_trig_ingr_drp
/// drops nothing, that many drops one.
#[test]
fn pfctest_xoff_and_first_drop_at_the_hardware_packet_counts() {
    for sku in TOMAHAWK {
        let r = row(sku);
        assert_eq!(r.pkts_num_trig_pfc, 6 + SLICE_CELLS / 2 + 1);
        for dscp in [3u8, 4] {
            let p = dscp as usize;
            let run = |n: u64| {
                replay(
                    &format!("pfctest-{dscp}-{n}"),
                    sku,
                    &Setup::default(),
                    &[send(1, dscp, n)],
                )
            };
            let before = run(r.pkts_num_trig_pfc - 1);
            assert_eq!(xoffs(&before, 1, p), 0, "{} DSCP {dscp}", sku.row);
            let at = run(r.pkts_num_trig_pfc);
            assert!(xoffs(&at, 1, p) >= 1, "{} DSCP {dscp}", sku.row);
            let before = run(r.pkts_num_trig_ingr_drp - 1);
            assert_eq!(ingress_drops(&before), 0, "{} DSCP {dscp}", sku.row);
            let at = run(r.pkts_num_trig_ingr_drp);
            assert_eq!(ingress_drops(&at), 1, "{} DSCP {dscp}", sku.row);
            assert_eq!(u(&at["totals"]["lossless_drops"]), 1);
        }
    }
}

/// HdrmPoolSizeTest: N (port, PG) pairs from five (40G), four (50G) or two (100G) source
/// ports — ports of one XPE, as the test chooses them (`port_slices`) — each sent
/// pkts_num_trig_pfc packets, then packets one at a time until its PFC counter moves (the
/// test allows 10), then pkts_num_hdrm_full each (the last pkts_num_hdrm_partial) with no
/// ingress drop, then one more on the last PG, which must drop, with no egress drop.
///
/// On paper: N PGs fill x = ⌊13,071 / (N + 1)⌋ shared cells each (6 + x = the test's
/// pkts_num_trig_pfc); the first PG then needs 2 packets to cross when the remainder
/// 13,071 − (N + 1)·x is 3 (40G, 50G), 1 when it is 1 (100G), every later one 1. Each
/// crossing packet stays in shared space, so the headroom fill meets only the headroom:
/// (N − 1)·hdrm_full + hdrm_partial = 5,041 cells, exactly the slice's headroom pool,
/// and the next packet finds it full.
#[test]
fn hdrm_pool_size_test_fills_the_slices_headroom_pool_to_the_packet() {
    for sku in TOMAHAWK {
        let (n, trig, full, partial) = row(sku).hdrm_pool;
        let srcs = n / 2;
        let x = SLICE_CELLS / (n + 1);
        assert_eq!(
            trig,
            6 + x,
            "{}: pkts_num_trig_pfc is the fair share",
            sku.row
        );
        assert_eq!((n - 1) * full + partial, HEADROOM_POOL_CELLS, "{}", sku.row);
        // (source port index, DSCP) in the test's order: each source's DSCP 3 then 4.
        let pairs: Vec<(usize, u8)> = (1..=srcs as usize)
            .flat_map(|s| [(s, 3u8), (s, 4u8)])
            .collect();
        let mut sends: Vec<_> = pairs.iter().map(|&(s, d)| send(s, d, trig)).collect();
        // Packets to trigger PFC, on paper.
        let mut use_shared = n * x;
        for (i, &(s, d)) in pairs.iter().enumerate() {
            let mut k = 0;
            loop {
                k += 1;
                use_shared += 1;
                let mine = x + k;
                if mine > SLICE_CELLS - use_shared {
                    break;
                }
            }
            assert!(k <= 10, "the test gives up after 10");
            assert_eq!(
                k,
                if i == 0 && SLICE_CELLS - (n + 1) * x == 3 {
                    2
                } else {
                    1
                }
            );
            sends.push(send(s, d, k));
        }
        for (i, &(s, d)) in pairs.iter().enumerate() {
            let last = i as u64 == n - 1;
            sends.push(send(s, d, if last { partial } else { full }));
        }
        let setup = Setup {
            ports: Some(srcs as usize + 1),
            port_slices: Some(vec![0; srcs as usize + 1]),
            ..Setup::default()
        };
        let filled = replay("hdrm-pool", sku, &setup, &sends);
        for (i, &(s, d)) in pairs.iter().enumerate() {
            assert!(xoffs(&filled, s, d as usize) >= 1, "{} PG {i} PFC", sku.row);
        }
        assert_eq!(
            ingress_drops(&filled),
            0,
            "{}: headroom filled without a drop",
            sku.row
        );
        let (_, hdrm_wm) = pool_watermarks(&filled, "ingress_lossless_pool", 0);
        assert_eq!(hdrm_wm, HEADROOM_POOL_CELLS * CELL, "{}", sku.row);
        // The extra packet on the last PG.
        let (s, d) = pairs[pairs.len() - 1];
        sends.push(send(s, d, 1));
        let over = replay("hdrm-pool-over", sku, &setup, &sends);
        assert_eq!(ingress_drops(&over), 1, "{}", sku.row);
        assert_eq!(egress_drops(&over), 0, "{}", sku.row);
    }
}

/// PGHeadroomWatermarkTest: pkts_num_trig_pfc packets leave the PG's headroom watermark at
/// 0 (the crossing packet stays in shared space), then (pkts_num_trig_ingr_drp −
/// pkts_num_trig_pfc) − 1 more fill it packet by packet — checked after 1, then in steps
/// of a quarter, as the test does, exactly (margin 0) — and a last step changes nothing.
#[test]
fn pg_headroom_watermark_follows_each_packet_into_headroom() {
    for sku in TOMAHAWK {
        let r = row(sku);
        let total = r.pkts_num_trig_ingr_drp - r.pkts_num_trig_pfc - 1;
        let inc = total >> 2;
        let wm = |extra: u64| {
            let rep = replay(
                &format!("pg-hdrm-wm-{extra}"),
                sku,
                &Setup::default(),
                &[send(1, 3, r.pkts_num_trig_pfc + extra)],
            );
            u(&port(&rep, 1)["pgs"][3]["headroom_watermark_bytes"])
        };
        assert_eq!(wm(0), 0, "{}: nothing in headroom at XOFF", sku.row);
        let mut expected = 0;
        let mut step = 1;
        while expected < total {
            expected = (expected + step).min(total);
            assert_eq!(wm(expected), expected * CELL, "{}", sku.row);
            step = inc;
        }
        assert_eq!(
            wm(expected + inc),
            total * CELL,
            "{}: full stays full",
            sku.row
        );
    }
}

/// PGSharedWatermarkTest (wm_pg_shared_lossless: pkts_num_fill_min 6, pkts_num_fill_shared
/// = pkts_num_trig_pfc 6542): after the 6 reserved cells the shared watermark is 0, then
/// it follows every packet, first 1 + margin (2) at a time then a quarter of 6,536; the
/// test's bound for Broadcom is watermark ≤ (fill_min + expected + margin) cells, and the
/// emulator's is exactly `expected` (the crossing packet is the 6,542nd, still in shared).
#[test]
fn pg_shared_watermark_follows_each_packet_into_shared_space() {
    let (fill_min, fill_shared, margin) = (6u64, 6542u64, 2u64);
    let total = fill_shared - fill_min;
    let inc = total >> 2;
    for sku in TOMAHAWK {
        let wm = |n: u64| {
            let rep = replay(
                &format!("pg-shared-wm-{n}"),
                sku,
                &Setup::default(),
                &[send(1, 3, n)],
            );
            u(&port(&rep, 1)["pgs"][3]["shared_watermark_bytes"])
        };
        assert_eq!(wm(fill_min), 0, "{}", sku.row);
        let (mut expected, mut step) = (0, 1 + margin);
        while expected < total {
            expected = (expected + step).min(total);
            let got = wm(fill_min + expected);
            assert_eq!(got, expected * CELL, "{}", sku.row);
            assert!(got <= (fill_min + expected + margin) * CELL);
            step = inc;
        }
        // Overflow: later packets go to headroom; the shared watermark stays.
        assert_eq!(wm(fill_min + expected + inc), total * CELL, "{}", sku.row);
    }
}

/// QSharedWatermarkTest (wm_q_shared_lossless: queue 3, pkts_num_fill_min 8 = the
/// egress_lossless_profile's 1518 B reserve in cells, pkts_num_trig_ingr_drp): the queue's
/// shared watermark is 0 after 8 packets and `pkts_num_trig_ingr_drp − 8 − 1` cells once
/// ingress drops start (every admitted packet waits in the queue). The test's margin is 8
/// with a bound of (expected + margin) cells; the emulator is exact.
#[test]
fn queue_shared_watermark_stops_where_ingress_drops_start() {
    for sku in TOMAHAWK {
        let r = row(sku);
        let q3 = |n: u64| {
            let rep = replay(
                &format!("q-shared-wm-{n}"),
                sku,
                &Setup::default(),
                &[send(1, 3, n)],
            );
            u(&port(&rep, 0)["queues"][3]["watermark_bytes"])
        };
        // The report's queue watermark counts the reserved cells too: 8 of them.
        let reserved = 8 * CELL;
        assert_eq!(q3(8), reserved, "{}", sku.row);
        let total = r.pkts_num_trig_ingr_drp - 8 - 1;
        assert_eq!(
            q3(r.pkts_num_trig_ingr_drp + 8),
            reserved + total * CELL,
            "{}",
            sku.row
        );
    }
}

/// BufferPoolWatermarkTest (wm_buf_pool_lossless: pkts_num_fill_ingr_min 6,
/// pkts_num_fill_shared = pkts_num_trig_pfc − 1): the ingress_lossless_pool watermark of the
/// port's slice counts shared cells only: 0 after the 6 reserved, then every packet, up to
/// 6,541 − 6 = 6,535 (the test's margins: −1 … +0 cells).
#[test]
fn buffer_pool_watermark_counts_the_shared_cells() {
    let (fill_min, fill_shared) = (6u64, 6541u64);
    let total = fill_shared - fill_min;
    for sku in TOMAHAWK {
        let wm = |n: u64| {
            let rep = replay(
                &format!("pool-wm-{n}"),
                sku,
                &Setup::default(),
                &[send(1, 3, n)],
            );
            // Two kept ports: the source is in slice 2 of 4 (ports split evenly).
            pool_watermarks(&rep, "ingress_lossless_pool", 2).0
        };
        assert_eq!(wm(fill_min), 0, "{}", sku.row);
        let mut expected = 0;
        let mut step = 1;
        while expected < total {
            expected = (expected + step).min(total);
            assert_eq!(wm(fill_min + expected), expected * CELL, "{}", sku.row);
            step = (total >> 2).max(1);
        }
    }
}
