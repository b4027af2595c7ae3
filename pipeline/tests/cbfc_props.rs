//! CBFC on one link against a brute-force reference: a sender and a receiver
//! ([`CbfcLink`]) joined by a wire that loses data frames, CF_Updates and CC_Updates at
//! random, and a receiver that drains its buffer at random. The reference keeps every
//! stored frame in a list and its credits in a plain sum.
//!
//! * Never overruns: whatever is lost, the credits of the frames in the receiver's buffer
//!   never exceed the credits it gave the channel (per VC, or the port's in per-port mode).
//! * Never deadlocks: once the losses stop and the buffer drains, every credit comes back
//!   within two CC_Update intervals and a channel's maximum CF_Update spacing; the sender
//!   may start an MTU frame on every channel again, and the receiver's counters equal the
//!   sender's (the scale-up test standard's CBFC-03 criterion).

use lossless_buffer_model::{Bytes, Rate, Time};
use lossless_pipeline::link::cbfc::{CbfcLink, CbfcSetup, CreditMessage, CreditMode, IdleUpdates};
use proptest::prelude::*;
use rand_core::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;
use std::collections::VecDeque;

/// What travels from the sender to the receiver.
enum Down {
    Data { vc: u8, len: u32 },
    Credit(CreditMessage),
}

const VCS: [u8; 2] = [3, 4];
const LENS: [u32; 6] = [64, 128, 129, 1518, 4096, 9216];
const STEP: Time = Time::from_ns(50);
const CABLE: Time = Time::from_ns(300);

struct Case {
    seed: u64,
    credits: u32,
    mode: CreditMode,
    overhead: i32,
    loss: f64,
    drain: f64,
    idle: IdleUpdates,
}

/// True with probability `p`.
fn chance(rng: &mut Xoshiro256PlusPlus, p: f64) -> bool {
    ((rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64) < p
}

fn run(c: &Case) -> Result<(), TestCaseError> {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(c.seed);
    let mut setup = CbfcSetup {
        credited: (1 << 3) | (1 << 4),
        mode: c.mode,
        overhead: c.overhead,
        cf_max_spacing: Bytes(64 * 1024),
        cc_interval: Time::from_us(20),
        idle_updates: c.idle,
        ..CbfcSetup::default()
    };
    setup.rx_credits[3] = c.credits;
    setup.rx_credits[4] = c.credits;
    let speed = Rate::gbps(100);
    let mut tx = CbfcLink::new(speed, setup, &setup);
    let mut rx = CbfcLink::new(speed, setup, &setup);
    let mut down: VecDeque<(Time, Down)> = VecDeque::new();
    let mut up: VecDeque<(Time, CreditMessage)> = VecDeque::new();
    // The reference: frames in the receiver's buffer, per channel, and their credits.
    let mut buffer: [VecDeque<u32>; 32] = std::array::from_fn(|_| VecDeque::new());
    let mut held = [0u64; 32];
    let limit = |vc: usize, held: &[u64; 32]| match c.mode {
        CreditMode::PerVc => held[vc] <= c.credits as u64,
        CreditMode::PerPort => held.iter().sum::<u64>() <= 2 * c.credits as u64,
    };
    let lossy_until = Time::from_us(400);
    let end = Time::from_us(600);
    let mut now = Time::ZERO;
    let mut wire_free = Time::ZERO;
    let mut next_vc = 0;
    // Credit messages sent once the link has long been idle.
    let quiet_from = Time::from_us(560);
    let mut sent_when_idle = 0;
    while now < end {
        let lossy = now < lossy_until;
        // The sender starts a frame when its wire is free and a channel has credits.
        if lossy && now >= wire_free {
            let vc = VCS[next_vc % 2];
            next_vc += 1;
            let len = LENS[(rng.next_u64() % LENS.len() as u64) as usize];
            if tx.may_send(vc, len) {
                tx.sent(vc, len);
                wire_free = now + speed.wire_time(len as u64);
                if !chance(&mut rng, c.loss) {
                    down.push_back((wire_free + CABLE, Down::Data { vc, len }));
                }
            }
        }
        while let Some(m) = tx.take(now, &[0; 32]) {
            sent_when_idle += u32::from(now >= quiet_from);
            if !(lossy && chance(&mut rng, c.loss)) {
                down.push_back((now.max(wire_free) + CABLE, Down::Credit(m)));
            }
        }
        // Arrivals at the receiver, in order.
        while down.front().is_some_and(|(t, _)| *t <= now) {
            match down.pop_front().unwrap().1 {
                Down::Data { vc, len } => {
                    let v = vc as usize;
                    rx.stored(vc, len);
                    held[v] += setup.cost(len);
                    buffer[v].push_back(len);
                    prop_assert!(
                        limit(v, &held),
                        "VC {vc} holds {} credits, above its {} (at {now})",
                        held[v],
                        c.credits
                    );
                }
                Down::Credit(m) => rx.receive(m),
            }
        }
        // The receiver drains at random (always, once the losses stop).
        for vc in VCS {
            let v = vc as usize;
            if (!lossy || chance(&mut rng, c.drain)) && !buffer[v].is_empty() {
                let len = buffer[v].pop_front().unwrap();
                held[v] -= setup.cost(len);
                rx.drained(vc, len);
            }
        }
        while let Some(m) = rx.take(now, &[0; 32]) {
            sent_when_idle += u32::from(now >= quiet_from);
            if !(lossy && chance(&mut rng, c.loss)) {
                up.push_back((now + CABLE, m));
            }
        }
        while up.front().is_some_and(|(t, _)| *t <= now) {
            tx.receive(up.pop_front().unwrap().1);
        }
        now += STEP;
    }
    for vc in VCS {
        let v = vc as usize;
        let (s, r) = (tx.vc_counters(v), rx.vc_counters(v));
        prop_assert_eq!(
            s.sender_credits_used,
            0,
            "VC {} never got its credits back",
            vc
        );
        prop_assert!(tx.may_send(vc, 9216), "VC {} is stuck", vc);
        prop_assert_eq!(r.receiver_credits_consumed, s.sender_credits_consumed);
        prop_assert_eq!(r.receiver_credits_freed, s.sender_credits_freed);
        prop_assert!(rx.receiver.held_watermark(v) <= c.credits as u64 * 2);
    }
    prop_assert_eq!(tx.port_counters().sender_credits_used, 0);
    // On demand, an idle link falls silent; periodic, it never does.
    match c.idle {
        IdleUpdates::OnDemand => prop_assert_eq!(sent_when_idle, 0),
        IdleUpdates::Periodic => prop_assert!(sent_when_idle > 0),
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn never_overruns_never_deadlocks(
        seed in any::<u64>(),
        credits in 72u32..400,
        per_port in any::<bool>(),
        overhead in -16i32..=127,
        loss in 0.0f64..0.3,
        drain in 0.05f64..1.0,
        on_demand in any::<bool>(),
    ) {
        let idle = if on_demand { IdleUpdates::OnDemand } else { IdleUpdates::Periodic };
        let mode = if per_port { CreditMode::PerPort } else { CreditMode::PerVc };
        // A 9216-byte frame must fit: at most 72 + (overhead ≥ 0: 1) credits of 128 B.
        let credits = credits.max(CbfcSetup { overhead, ..CbfcSetup::default() }.cost(9216) as u32);
        run(&Case { seed, credits, mode, overhead, loss, drain, idle })?;
    }
}

#[test]
fn a_lossless_link_returns_every_credit() {
    run(&Case {
        seed: 1,
        credits: 100,
        mode: CreditMode::PerVc,
        overhead: 0,
        loss: 0.0,
        drain: 0.5,
        idle: IdleUpdates::Periodic,
    })
    .unwrap();
}

/// On demand, a link that lost a fifth of its frames and messages still gets every credit
/// back (a sender holding credits keeps sending CC_Updates, each of which asks for the
/// refreshes a lost CF_Update needs), then falls silent.
#[test]
fn a_lossy_link_on_demand_returns_every_credit_then_falls_silent() {
    run(&Case {
        seed: 7,
        credits: 100,
        mode: CreditMode::PerVc,
        overhead: 0,
        loss: 0.2,
        drain: 0.5,
        idle: IdleUpdates::OnDemand,
    })
    .unwrap();
}
