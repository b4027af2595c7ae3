//! sonic-mgmt's egress QoS SAI tests replayed on the imported Tomahawk switches (see
//! tests/sonic_qos_ingress.rs for the setup): the lossy queue's drop point and its
//! watermarks, and WRRtest's dequeue order. WRRtest passes; the lossy queue's drop comes
//! three packets before Tomahawk's, and each test says what that does to SONiC's
//! assertions, asserting what the model does.
//!
//! Lossy queue, on paper: DSCP 8 → class 0 → PG 0 (ingress_lossy_profile, α = 8, no binding
//! limit) and queue 0 (egress_lossy_profile: 1518 B reserved = 8 cells, α = 8). The slice's
//! share of egress_lossy_pool is 9,243,812 / 4 / 208 = 11,110 cells; queue 0 takes shared
//! cells while x ≤ 8·(11,110 − x), so x ≤ 9,875: 8 + 9,875 = 9,883 packets are queued and
//! the 9,884th is dropped. Tomahawk dropped at 9,887 (qos_params.th.yaml lossy_queue_1).
//! The three packets are not explained by the plan: 9,887 would need a shared share of
//! 11,113 cells, or a limit tested against the pool use before the packet is counted (which
//! gives 9,885) while the ingress XOFF counts (tests/sonic_qos_ingress.rs) fit only the use
//! after it. The model keeps one rule for both; this egress detail is not modelled.

mod common;

use common::sonic::{egress_drops, pool_watermarks, port, replay, Send, Setup, TOMAHAWK};
use common::{tmp, u};
use pcap_file::pcap::PcapReader;

const CELL: u64 = 208;
/// The emulator's first lossy-queue drop, derived above.
const FIRST_DROP: u64 = 8 + 9_875 + 1;
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
/// asserts no egress drop, then 5 more and asserts one. The emulator drops the 9,884th, so
/// SONiC's first assertion fails by one packet on every speed (see the file's comment).
#[test]
fn lossy_queue_drops_three_packets_before_tomahawk() {
    assert_eq!(FIRST_DROP, 9884);
    for r in lossy("lossy-queue-before", FIRST_DROP - 1) {
        assert_eq!(egress_drops(&r), 0);
        assert_eq!(u(&port(&r, 0)["queues"][0]["drop_packets"]), 0);
    }
    for r in lossy("lossy-queue-at", FIRST_DROP) {
        assert_eq!(egress_drops(&r), 1);
        // A lossy PG over its queue's limit: no PFC, nothing lossless lost.
        assert_eq!(u(&r["totals"]["pfc_tx_frames"]), 0);
        assert_eq!(u(&r["totals"]["lossless_drops"]), 0);
    }
    // The hardware's count is 3 further: the gap this file documents.
    assert_eq!(TRIG_EGR_DRP - FIRST_DROP, 3);
}

/// The lossy watermark tests at pkts_num_trig_egr_drp + margin packets, where every
/// watermark has stopped: queue 0's shared watermark is 9,875 cells (+ 8 reserved), PG 0's
/// 9,883 (it reserves none; egress-dropped packets are never charged at ingress), the
/// egress_lossy_pool slice's 9,875. Against SONiC's bounds: QSharedWatermarkTest lossy
/// (margin 8: ≥ 9,878 − 8) and PGSharedWatermarkTest lossy (upper bounds only on Broadcom)
/// pass; BufferPoolWatermarkTest lossy wants ≥ 9,878 − 1 cells and fails by two.
#[test]
fn lossy_watermarks_stop_where_the_queue_drops() {
    for r in lossy("lossy-wm", TRIG_EGR_DRP + 8) {
        let q = u(&port(&r, 0)["queues"][0]["watermark_bytes"]);
        assert_eq!(q, (8 + 9_875) * CELL);
        let pg = u(&port(&r, 1)["pgs"][0]["shared_watermark_bytes"]);
        assert_eq!(pg, 9_883 * CELL);
        // The destination (kept port 0) is in slice 0.
        let (pool, _) = pool_watermarks(&r, "egress_lossy_pool", 0);
        assert_eq!(pool, 9_875 * CELL);
        let total_shared = TRIG_EGR_DRP - 8 - 1;
        assert!(
            q - 8 * CELL >= (total_shared - 8) * CELL,
            "QShared lossy within margin 8"
        );
        assert!(
            pool < (total_shared - 1) * CELL,
            "BufferPool lossy: two cells short"
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
