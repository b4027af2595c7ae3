//! Packet trimming's counters conserve, under any seeded incast into a small lossy pool:
//! once every queue has drained, each queue's trimmed frames are exactly its trimmed
//! copies sent plus those dropped (SAI: TRIM = TX_TRIM + DROPPED_TRIM), every copy sent
//! is at most the trim size, on the trim queue, with the trim DSCP, and the switch's
//! ledger balances (every frame received is forwarded, consumed or dropped; every copy
//! made is sent or dropped).

use lossless_buffer_model::{Bytes, Rate, Time, PRIORITIES};
use lossless_pipeline::config::{TrimDscp, TrimQueue, Trimming};
use lossless_pipeline::packet::Packet;
use lossless_pipeline::{presets, Switch};
use proptest::prelude::*;

const RECEIVER: [u8; 6] = [2, 0, 0, 0, 0, 0x99];

/// An IPv4/UDP frame of `len` bytes from MAC `src` to the receiver, DSCP `dscp`.
fn frame(src: u8, len: u32, dscp: u8) -> Packet {
    let mut d = Vec::with_capacity(42);
    d.extend_from_slice(&RECEIVER);
    d.extend_from_slice(&[2, 0, 0, 0, 0, src]);
    d.extend_from_slice(&[0x08, 0x00]);
    let ip_len = (len - 18) as u16;
    d.extend_from_slice(&[0x45, dscp << 2]);
    d.extend_from_slice(&ip_len.to_be_bytes());
    d.extend_from_slice(&[
        0, 0, 0x40, 0, 64, 17, 0, 0, 198, 18, 0, src, 198, 18, 0, 0x99,
    ]);
    d.extend_from_slice(&[0x12, 0x34, 0x12, 0x35]);
    d.extend_from_slice(&(ip_len - 20).to_be_bytes());
    d.extend_from_slice(&[0, 0]);
    Packet::new(d, len)
}

fn switch(pool: u64) -> Switch {
    let mut cfg = presets::basic(4, Rate::gbps(100));
    cfg.pools[1].size = Bytes(pool);
    cfg.pools[3].size = Bytes(pool);
    cfg.trimming = Some(Trimming {
        size: 128,
        dscp: TrimDscp::Value(48),
        queue: TrimQueue::Queue(6),
    });
    for p in &mut cfg.ports {
        p.trim_queues = 0b0010_0111; // the lossy queues 0, 1, 2 and 5
    }
    Switch::new(cfg)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn trimming_counters_conserve(
        arrivals in prop::collection::vec((0usize..3, 64u32..1519, 0u64..40, 0u8..3), 1..600),
        pool in 16_000u64..200_000,
    ) {
        let mut sw = switch(pool);
        // The receiver speaks first, so the switch learns it is on port 3.
        sw.receive(3, frame(0x99, 64, 0), Time::ZERO);
        let mut now = Time::from_ns(100);
        let mut sent = Vec::new();
        let mut emit = |port: usize, pkt: Packet| sent.push((port, pkt));
        for (port, len, gap, class) in arrivals {
            // DSCP 0, 8 and 16: the lossy classes 1, 0 and 2 of SONiC's map.
            let dscp = [0, 8, 16][class as usize];
            sw.receive(port, frame(port as u8 + 1, len, dscp), now);
            sw.poll_due(now, &mut emit);
            now += Time::from_ns(gap);
        }
        // Drain: a millisecond of polling empties any queue.
        for _ in 0..200_000 {
            now += Time::from_ns(10);
            sw.poll_due(now, &mut emit);
            if sw.ledger().queued == sw.ledger().sent + sw.ledger().dropped_from_queue {
                break;
            }
        }
        for p in sw.ports() {
            for q in 0..PRIORITIES {
                let t = &p.queue_counters[q].trim;
                prop_assert_eq!(t.trim_packets, t.tx_trim_packets + t.dropped_trim_packets, "queue {}", q);
            }
        }
        let copies: Vec<_> = sent
            .iter()
            .filter(|(_, p)| matches!(p.meta.trim, lossless_pipeline::packet::Trim::From(_)))
            .collect();
        let tx_trim: u64 = sw.ports().iter().flat_map(|p| p.queue_counters.iter()).map(|c| c.trim.tx_trim_packets).sum();
        prop_assert_eq!(copies.len() as u64, tx_trim);
        // Each copy: on the receiver's port, the trim queue, DSCP 48, at most 128 bytes.
        prop_assert!(copies
            .iter()
            .all(|(port, p)| *port == 3 && p.meta.queue == 6 && p.data[15] >> 2 == 48 && p.len <= 128));
        let l = sw.ledger();
        prop_assert_eq!(l.queued, l.sent + l.dropped_from_queue);
        prop_assert_eq!(l.check(0, sw.drops().total()), Ok(()));
    }
}

/// One case that certainly overflows: 400 back-to-back 1500-byte frames from three ports
/// into a 32 KB pool trim, and the counters conserve.
#[test]
fn an_overflowing_incast_trims() {
    let mut sw = switch(32_000);
    sw.receive(3, frame(0x99, 64, 0), Time::ZERO);
    let mut now = Time::from_ns(100);
    let mut n = 0;
    for i in 0..400u32 {
        sw.receive((i % 3) as usize, frame((i % 3) as u8 + 1, 1500, 0), now);
        sw.poll_due(now, &mut |_, _| n += 1);
        now += Time::from_ns(40);
    }
    for _ in 0..100_000 {
        now += Time::from_ns(10);
        sw.poll_due(now, &mut |_, _| n += 1);
    }
    let t = &sw.ports()[3].queue_counters[1].trim;
    assert!(t.trim_packets > 100, "{t:?}");
    assert_eq!(t.trim_packets, t.tx_trim_packets + t.dropped_trim_packets);
    assert!(n > 0);
}
