//! The RC state machines against a brute-force go-back-N model: for random messages and
//! random patterns of lost data packets and lost replies, over a link of fixed delay,
//! every message is delivered exactly once and in order, and the requester re-sends
//! exactly as many packets as the plain model of the same rules predicts. Packets trimmed
//! on the way (their header arriving early, ahead of whole packets sent before them, as a
//! trim queue lets it) are recovered without a single local ACK timeout.

use lossless_buffer_model::Time;
use lossless_ports::rc::{RcConfig, Recovery, Reply, Requester, Responder};
use proptest::prelude::*;
use std::collections::BTreeSet;

const MTU: u32 = 100;
const TICK: u64 = 1_000_000; // 1 µs in ps

/// What a run over the lossy link gave.
#[derive(Debug)]
struct Run {
    retransmitted: u64,
    delivered_packets: u64,
    delivered_bytes: u64,
    messages: u64,
    timeouts: u64,
    done: bool,
}

/// Transmissions trimmed on the way: their indices, and how many ticks the trimmed copy
/// takes (it may overtake whole packets sent before it).
#[derive(Debug, Default)]
struct Trims {
    at: BTreeSet<usize>,
    delay: u64,
}

/// Requester and responder over a link of `delay` ticks each way; the requester sends at
/// most one packet a tick. Data transmissions whose index is in `lose_data`, and replies
/// whose index is in `lose_reply`, are lost. Each tick: data arrives at the responder,
/// replies at the requester, the timer is checked, one packet is sent.
fn run_link(
    cfg: RcConfig,
    sizes: &[u64],
    start_psn: u32,
    delay: u64,
    lose_data: &BTreeSet<usize>,
    lose_reply: &BTreeSet<usize>,
    trims: &Trims,
) -> Run {
    let mut req = Requester::new(cfg, MTU, start_psn);
    let mut rsp = Responder::new(cfg, start_psn);
    for s in sizes {
        req.post(*s, Time::ZERO);
    }
    // Prefix sums of payload per packet, to check in-order delivery at every step.
    let mut payloads = Vec::new();
    for s in sizes {
        let n = s.div_ceil(MTU as u64).max(1);
        for k in 0..n {
            payloads.push(if k + 1 == n {
                s - k * MTU as u64
            } else {
                MTU as u64
            });
        }
    }
    let prefix: Vec<u64> = std::iter::once(0)
        .chain(payloads.iter().scan(0, |a, p| {
            *a += p;
            Some(*a)
        }))
        .collect();
    let mut data: Vec<(u64, u32, u32, bool)> = Vec::new(); // (arrive, psn, payload, last)
    let mut trimmed: Vec<(u64, u32)> = Vec::new(); // (arrive, psn)
    let mut replies: Vec<(u64, Reply)> = Vec::new();
    let (mut tx, mut rx) = (0usize, 0usize);
    for t in 0..200_000u64 {
        let now = Time(t * TICK);
        let (due, later): (Vec<_>, Vec<_>) = data.drain(..).partition(|d| d.0 == t);
        data = later;
        let (cut, later): (Vec<_>, Vec<_>) = trimmed.drain(..).partition(|d| d.0 == t);
        trimmed = later;
        let arrivals = cut.into_iter().map(|(_, psn)| (psn, None)).chain(
            due.into_iter()
                .map(|(_, psn, pl, last)| (psn, Some((pl, last)))),
        );
        for (psn, whole) in arrivals {
            let reply = match whole {
                Some((payload, last)) => rsp.on_packet(psn, payload, last).reply,
                None => rsp.on_trimmed(psn),
            };
            // In order, exactly once: what was delivered is a prefix of the packets.
            let n = rsp.stats.delivered_packets as usize;
            assert_eq!(rsp.stats.delivered_bytes, prefix[n]);
            if let Some(r) = reply {
                if !lose_reply.contains(&rx) {
                    replies.push((t + delay, r));
                }
                rx += 1;
            }
        }
        let (due, later): (Vec<_>, Vec<_>) = replies.drain(..).partition(|r| r.0 == t);
        replies = later;
        for (_, r) in due {
            match r {
                Reply::Ack { psn, .. } => req.on_ack(psn, now),
                Reply::Nak { psn, .. } => req.on_nak(psn, now),
            }
        }
        if req.deadline().is_some_and(|d| d <= now) {
            req.on_timeout(now);
        }
        if let Some(p) = req.next_packet() {
            req.on_sent(&p, now);
            if trims.at.contains(&tx) {
                trimmed.push((t + trims.delay, (p.psn & 0xFF_FFFF) as u32));
            } else if !lose_data.contains(&tx) {
                data.push((t + delay, (p.psn & 0xFF_FFFF) as u32, p.payload, p.last));
            }
            tx += 1;
        }
        if req.idle() && data.is_empty() && trimmed.is_empty() && replies.is_empty() {
            break;
        }
    }
    Run {
        retransmitted: req.stats.retransmitted_packets,
        delivered_packets: rsp.stats.delivered_packets,
        delivered_bytes: rsp.stats.delivered_bytes,
        messages: rsp.stats.messages,
        timeouts: req.stats.timeouts,
        done: req.idle() && req.error_at.is_none(),
    }
}

/// Go-back-N with an ACK per packet, written plainly over packet indices 0..total, in the
/// same tick order: the number of packets sent more than once.
fn reference_go_back_n(
    total: u64,
    delay: u64,
    rto: u64,
    lose_data: &BTreeSet<usize>,
    lose_reply: &BTreeSet<usize>,
) -> u64 {
    #[derive(Clone, Copy)]
    enum R {
        Ack(u64),
        Nak(u64),
    }
    let (mut next, mut una, mut high) = (0u64, 0u64, 0u64);
    let mut deadline: Option<u64> = None;
    let (mut expected, mut nak_sent) = (0u64, false);
    let mut data: Vec<(u64, u64)> = Vec::new();
    let mut replies: Vec<(u64, R)> = Vec::new();
    let (mut tx, mut rx, mut resent) = (0usize, 0usize, 0u64);
    for t in 0..200_000u64 {
        let mut out = Vec::new();
        data.retain(|&(a, p)| {
            if a != t {
                return true;
            }
            if p == expected {
                expected += 1;
                nak_sent = false;
                out.push(R::Ack(expected - 1));
            } else if p > expected {
                if !nak_sent {
                    nak_sent = true;
                    out.push(R::Nak(expected));
                }
            } else {
                out.push(R::Ack(expected - 1));
            }
            false
        });
        for r in out {
            if !lose_reply.contains(&rx) {
                replies.push((t + delay, r));
            }
            rx += 1;
        }
        let mut arrived = Vec::new();
        replies.retain(|&(a, r)| {
            if a == t {
                arrived.push(r);
            }
            a != t
        });
        for r in arrived {
            let (to, rewind) = match r {
                R::Ack(a) => (a + 1, None),
                R::Nak(p) => (p, Some(p)),
            };
            if to > una {
                una = to;
                next = next.max(una);
                deadline = (una < high).then_some(t + rto);
            }
            if let Some(p) = rewind {
                if p >= una && p < high {
                    next = next.min(p);
                }
            }
        }
        if deadline.is_some_and(|d| d <= t) {
            deadline = None;
            next = una;
        }
        if next < total {
            if next < high {
                resent += 1;
            }
            high = high.max(next + 1);
            if !lose_data.contains(&tx) {
                data.push((t + delay, next));
            }
            tx += 1;
            next += 1;
            deadline.get_or_insert(t + rto);
        }
        if una == total && data.is_empty() && replies.is_empty() {
            break;
        }
    }
    resent
}

fn sizes() -> impl Strategy<Value = Vec<u64>> {
    prop::collection::vec(1u64..450, 1..6)
}

fn losses() -> impl Strategy<Value = BTreeSet<usize>> {
    prop::collection::btree_set(0usize..80, 0..12)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn go_back_n_delivers_once_in_order_and_resends_what_the_model_says(
        sizes in sizes(),
        lose_data in losses(),
        lose_reply in losses(),
        delay in 1u64..6,
        rto_extra in 0u64..30,
        start in prop_oneof![Just(0u32), Just(0xFF_FFF0u32), 0u32..0xFF_FFFF],
    ) {
        let rto = 2 * delay + 1 + rto_extra;
        let cfg = RcConfig {
            ack_every: 1,
            recovery: Recovery::GoBackN,
            rto: Time(rto * TICK),
            retry_count: 1_000,
        };
        let r = run_link(cfg, &sizes, start, delay, &lose_data, &lose_reply, &Trims::default());
        let packets: u64 = sizes.iter().map(|s| s.div_ceil(MTU as u64)).sum();
        prop_assert!(r.done, "{r:?}");
        prop_assert_eq!(r.delivered_packets, packets);
        prop_assert_eq!(r.delivered_bytes, sizes.iter().sum::<u64>());
        prop_assert_eq!(r.messages, sizes.len() as u64);
        let want = reference_go_back_n(packets, delay, rto, &lose_data, &lose_reply);
        prop_assert_eq!(r.retransmitted, want);
    }

    #[test]
    fn coalesced_acks_and_selective_repeat_deliver_once_in_order(
        sizes in sizes(),
        lose_data in losses(),
        lose_reply in losses(),
        delay in 1u64..6,
        ack_every in 1u32..9,
        selective in any::<bool>(),
        start in prop_oneof![Just(0xFF_FFF0u32), 0u32..0xFF_FFFF],
    ) {
        let cfg = RcConfig {
            ack_every,
            recovery: if selective { Recovery::Selective } else { Recovery::GoBackN },
            rto: Time((2 * delay + 20) * TICK),
            retry_count: 1_000,
        };
        let r = run_link(cfg, &sizes, start, delay, &lose_data, &lose_reply, &Trims::default());
        prop_assert!(r.done, "{r:?}");
        prop_assert_eq!(r.delivered_bytes, sizes.iter().sum::<u64>());
        prop_assert_eq!(r.messages, sizes.len() as u64);
        if lose_data.is_empty() && lose_reply.is_empty() {
            prop_assert_eq!(r.retransmitted, 0);
        }
    }

    /// Every loss a trim: the responder hears of each, so the sender never waits for its
    /// local ACK timeout, whether the trimmed copies overtake whole packets or not.
    #[test]
    fn trimmed_packets_are_recovered_without_a_timeout(
        sizes in sizes(),
        trimmed in losses(),
        delay in 2u64..6,
        trim_delay in 1u64..6,
        ack_every in 1u32..9,
        selective in any::<bool>(),
        start in prop_oneof![Just(0xFF_FFF0u32), 0u32..0xFF_FFFF],
    ) {
        let cfg = RcConfig {
            ack_every,
            recovery: if selective { Recovery::Selective } else { Recovery::GoBackN },
            rto: Time(1_000 * TICK),
            retry_count: 7,
        };
        let trims = Trims { at: trimmed, delay: trim_delay };
        let none = BTreeSet::new();
        let r = run_link(cfg, &sizes, start, delay, &none, &none, &trims);
        prop_assert!(r.done, "{r:?}");
        prop_assert_eq!(r.delivered_bytes, sizes.iter().sum::<u64>());
        prop_assert_eq!(r.messages, sizes.len() as u64);
        prop_assert_eq!(r.timeouts, 0, "{:?}", trims);
    }
}
