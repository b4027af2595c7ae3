//! sonic-mgmt's egress QoS SAI tests replayed on the imported Tomahawk switches (see
//! tests/sonic_qos_ingress.rs for the setup): the lossy queue's drop point and its
//! watermarks, and WRRtest's dequeue order, each within the test's own margins.
//!
//! Lossy queue, on paper: DSCP 8 → class 0 → PG 0 (ingress_lossy_profile, α = 8, no binding
//! limit) and queue 0 (egress_lossy_profile: 1518 B reserved = 8 cells, α = 8). The slice's
//! share of egress_lossy_pool is 9,243,812 / 4 = 2,310,953 B = 11,110.35 cells, which the
//! chip counts as 11,111 (`pool_cells: up`, as a reserve's bytes round). Queue 0 takes a
//! shared cell while its shared use before the packet x ≤ 8·(11,111 − x)
//! (`queue_admission: before`): up to x = 9,876, so the last admitted packet makes it 9,877
//! and 8 + 9,877 = 9,885 packets are queued; the 9,886th is dropped. Tomahawk's nominal is
//! 9,887 (qos_params.th.yaml lossy_queue_1): one packet later, within every test's margin.
//! Both rules are the chip's, not this file's: on a Trident 2 they give LossyQueueTest's
//! count exactly (tests/sonic_qos_td2.rs); tests/sonic_qos.rs's ingress counts are
//! unchanged by them (the ingress pools are whole cells, XOFF is decided with the packet
//! counted). Without them (the generic rules) the drop came at 9,884, and LossyQueueTest
//! failed by one packet.
//!
//! Sources: sonic-net/sonic-mgmt b4ba9de3c9bb57c0628bc4cb98b3ecf3a3932a43:
//!   `tests/saitests/py3/sai_qos_tests.py`,
//!   `tests/qos/files/qos_params.th.yaml`;
//! sonic-net/sonic-buildimage 086b03bd70f9e211aaaf5f6aefe0790b508d2a94:
//!   `device/dell/x86_64-dell_s6100_c2538-r0/Force10-S6100` and
//!   `device/arista/x86_64-arista_7060_cx32s/Arista-7060CX-32S-C32` (the imported switches).

mod common;

use common::sonic::{egress_drops, pool_watermarks, port, replay, Send, Setup, TOMAHAWK};
use common::{tmp, u};
use pcap_file::pcap::PcapReader;

const CELL: u64 = 208;
/// The slice's egress_lossy_pool in whole cells, rounded up.
const POOL: u64 = (9_243_812 / 4u64).div_ceil(CELL);
/// Queue 0's largest shared use: the last x (before the packet) within 8·(POOL − x), plus
/// that packet.
fn max_shared() -> u64 {
    (0..POOL)
        .take_while(|x| *x <= 8 * (POOL - x))
        .last()
        .unwrap()
        + 1
}
/// Tomahawk's (pkts_num_trig_egr_drp).
const TRIG_EGR_DRP: u64 = 9887;

fn lossy(name: &str, n: u64) -> Vec<serde_json::Value> {
    TOMAHAWK
        .iter()
        .map(|sku| {
            replay(
                name,
                sku,
                &Setup::default(),
                &[common::sonic::send(1, 8, n)],
            )
        })
        .collect()
}

/// LossyQueueTest (margin 2): it sends pkts_num_trig_egr_drp − 1 − 2 = 9,884 packets and
/// asserts no egress drop, then 5 more and asserts one. The emulator drops the 9,886th
/// first: both assertions hold on every speed. The packet before the first drop is
/// checked too, so the count is exact, not just inside the margin.
#[test]
fn lossy_queue_drops_within_the_tests_margin_one_before_tomahawks_nominal() {
    assert_eq!((POOL, max_shared()), (11_111, 9_877));
    let first = 8 + max_shared() + 1;
    assert_eq!(first, 9_886);
    let margin = 2;
    for r in lossy("lossy-queue-short", TRIG_EGR_DRP - 1 - margin) {
        assert_eq!(egress_drops(&r), 0, "SONiC: no drop short of the count");
    }
    for r in lossy("lossy-queue-before", first - 1) {
        assert_eq!(egress_drops(&r), 0);
        assert_eq!(u(&port(&r, 0)["queues"][0]["drop_packets"]), 0);
    }
    for r in lossy("lossy-queue-at", first) {
        assert_eq!(egress_drops(&r), 1);
        // A lossy PG over its queue's limit: no PFC, nothing lossless lost.
        assert_eq!(u(&r["totals"]["pfc_tx_frames"]), 0);
        assert_eq!(u(&r["totals"]["lossless_drops"]), 0);
    }
    for r in lossy(
        "lossy-queue-over",
        TRIG_EGR_DRP - 1 - margin + 1 + 2 * margin,
    ) {
        assert!(egress_drops(&r) >= 1, "SONiC: a drop past the count");
    }
}

/// The lossy watermark tests at pkts_num_trig_egr_drp + margin packets, where every
/// watermark has stopped: queue 0's 9,877 shared cells (+ 8 reserved), the
/// egress_lossy_pool slice's 9,877, and PG 0's 9,886: it reserves none, and it counts a
/// packet before the queue's limit is met (`first_limit: ingress`), so its watermark saw
/// the first packet the queue dropped, the 9,886th. SONiC expects 9,887 − 1 − 8 = 9,878
/// shared cells: QSharedWatermarkTest lossy (margin 8) and BufferPoolWatermarkTest lossy
/// (−1 … +2 cells) hold. PGSharedWatermarkTest lossy (fill_min 0, fill_shared = 9,887 − 1
/// = 9,886, one cell a packet, margin 2) asserts only an upper bound where the platform is
/// `broadcom` (the Force10-S6100), but the Arista-7060CX's is `broadcom-legacy-th`
/// (sonic-buildimage device/arista/x86_64-arista_7060_cx32s/platform_asic), which takes the
/// generic branch: 9,886 ≤ watermark ≤ 9,886 + 2 + 1 cells once the pool overflows. The
/// watermark that never saw the dropped packet (9,885) missed that lower bound by a cell.
#[test]
fn lossy_watermarks_stop_where_the_queue_drops() {
    let shared = max_shared();
    let expected = TRIG_EGR_DRP - 1 - 8;
    for r in lossy("lossy-wm", TRIG_EGR_DRP + 8) {
        let q = u(&port(&r, 0)["queues"][0]["watermark_bytes"]);
        assert_eq!(q, (8 + shared) * CELL);
        let pg = u(&port(&r, 1)["pgs"][0]["shared_watermark_bytes"]);
        assert_eq!(pg, (8 + shared + 1) * CELL);
        // The destination (kept port 0) is in slice 0.
        let (pool, _) = pool_watermarks(&r, "egress_lossy_pool", 0);
        assert_eq!(pool, shared * CELL);
        assert!(
            q - 8 * CELL >= (expected - 8) * CELL && q - 8 * CELL <= (expected + 8) * CELL,
            "QShared lossy within margin 8"
        );
        assert!(
            pool >= (expected - 1) * CELL && pool <= (expected + 2) * CELL,
            "BufferPool lossy within −1 … +2 cells"
        );
        let fill_shared = TRIG_EGR_DRP - 1;
        assert!(
            pg >= fill_shared * CELL && pg <= (fill_shared + 2 + 1) * CELL,
            "PGShared lossy, the generic bounds (broadcom-legacy-th)"
        );
    }
}

/// WRRtest (qos_params.th.yaml wrr): with transmit off, 1500-byte packets (1504 with FCS)
/// of DSCP 3, 4, 8, 0, 5, 46, 48 — queues 3, 4, 0, 1, 2, 5, 6 — 150, 150, 140, 140, 140,
/// 140, 140 of them; then transmit on. For each queue the test counts the packets that
/// leave after its last one and asserts fewer than 80 (`limit`). SONiC's schedulers weigh
/// the lossless queues 15 and the others 14, so every queue drains in the same round.
///
/// On paper: the emulator's DWRR credits 1536 bytes per unit of weight each round
/// (`QUANTUM_PER_WEIGHT`, buffer-model/src/scheduler.rs), 21,504 B = 14.30 frames for weight 14 and 23,040 B = 15.32 for 15;
/// after 9 rounds a queue has sent ⌊9 × 14.30⌋ = 128 (or ⌊9 × 15.32⌋ = 137), so the last
/// round carries 12 from each lossy queue and 13 from each lossless one, 86 in all, served
/// from queue 0 up. Queue 0's last packet leaves 86 − 12 = 74 before the end, the largest
/// count: under SONiC's 80.
#[test]
fn wrr_drains_every_queue_in_the_same_last_round() {
    let sku = TOMAHAWK[2];
    let order: [(u8, u64, usize); 7] = [
        (3, 150, 3),
        (4, 150, 4),
        (8, 140, 0),
        (0, 140, 1),
        (5, 140, 2),
        (46, 140, 5),
        (48, 140, 6),
    ];
    let sends: Vec<Send> = order
        .iter()
        .map(|&(dscp, packets, _)| Send {
            from: 1,
            dscp,
            packets,
            frame: 1504,
        })
        .collect();
    let dir = tmp("wrr-pcap");
    let setup = Setup {
        tx_enable_us: Some(200),
        pcap_dir: Some(dir.clone()),
        ..Setup::default()
    };
    let r = replay("wrr", sku, &setup, &sends);
    for &(_, packets, q) in &order {
        assert_eq!(u(&port(&r, 0)["queues"][q]["tx_packets"]), packets);
    }
    // The order the packets left in, by DSCP, from the destination port's capture.
    let pcap = dir.join(format!("th-{}.pcap", sku.ports[0]));
    let mut rd = PcapReader::new(std::fs::File::open(&pcap).unwrap()).unwrap();
    let mut dscps = Vec::new();
    while let Some(p) = rd.next_packet() {
        let p = p.unwrap();
        let ip = etherparse::Ipv4HeaderSlice::from_slice(&p.data[14..]).unwrap();
        dscps.push(ip.dcp().value());
    }
    let total: u64 = order.iter().map(|o| o.1).sum();
    assert_eq!(dscps.len() as u64, total);
    // Paper: frames in the last round per queue, served in queue order.
    let quantum = lossless_buffer_model::scheduler::QUANTUM_PER_WEIGHT as u64;
    let last_round = |weight: u64, packets: u64| packets - 9 * weight * quantum / 1504;
    let mut by_queue: Vec<(usize, u8, u64)> = order
        .iter()
        .map(|&(dscp, n, q)| {
            (
                q,
                dscp,
                last_round(if q == 3 || q == 4 { 15 } else { 14 }, n),
            )
        })
        .collect();
    by_queue.sort();
    let round: u64 = by_queue.iter().map(|x| x.2).sum();
    assert_eq!(round, 86);
    let mut served = 0;
    for (q, dscp, n) in by_queue {
        served += n;
        let expected = round - served;
        let last = dscps.iter().rposition(|d| *d == dscp).unwrap() as u64;
        let diff = total - 1 - last;
        assert_eq!(diff, expected, "queue {q} (DSCP {dscp})");
        assert!(diff < 80, "SONiC's limit, queue {q}");
    }
}
