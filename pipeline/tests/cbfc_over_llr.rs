//! CBFC over LLR on one link, against a brute-force reference: a sender A and a receiver
//! B (two [`LinkLayer`]s speaking both) joined by a cable that, for a while, loses,
//! corrupts, duplicates and reorders data frames and control messages alike at random;
//! then the cable is clean and B drains everything.
//!
//! The order docs/link-control.md derives ("CBFC over LLR"): LLR replays what the wire
//! spoiled, so a frame in A's replay buffer is not lost whatever became of it on the
//! wire; A's CC_Update counts only the frames that left the replay buffer (acknowledged,
//! or given up in a FLUSH), and B counts a frame's credits when its MAC takes it (once:
//! LLR discards duplicates). Properties:
//!
//! * Delivered: every frame reaches B exactly once and in order (LLR, replays unlimited).
//! * Never overruns: the credits of the frames in B's buffer (the reference's own sum)
//!   never exceed what B gave the channel.
//! * Every credit back at idle: B's consumed and freed counts equal A's consumed, A holds
//!   none, and no message was refused as impossible (nothing counted twice).

use lossless_buffer_model::{Bytes, Rate, Time};
use lossless_pipeline::config::FlowControl;
use lossless_pipeline::link::cbfc::{CbfcSetup, CreditMode};
use lossless_pipeline::link::llr::LlrSetup;
use lossless_pipeline::link::{ControlFrame, LinkLayer, PauseSetup, Unhonoured};
use lossless_pipeline::packet::Fcs;
use lossless_pipeline::Packet;
use proptest::prelude::*;
use rand_core::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;
use std::collections::{BTreeMap, VecDeque};

const VC: u8 = 3;
const LENS: [u32; 5] = [64, 129, 1000, 1518, 4096];
const PROP: Time = Time::from_ns(100);

fn setups(credits: u32) -> (CbfcSetup, LlrSetup) {
    let mut c = CbfcSetup {
        credited: 1 << VC,
        mode: CreditMode::PerVc,
        cf_max_spacing: Bytes(64 * 1024),
        cc_interval: Time::from_us(10),
        ..CbfcSetup::default()
    };
    c.rx_credits[VC as usize] = credits;
    let l = LlrSetup {
        max_frames: 512,
        max_bytes: 1 << 20,
        replay_timer: Time::from_us(3),
        max_replay_count: 255,
        ..LlrSetup::default()
    };
    (c, l)
}

fn link(c: CbfcSetup, l: LlrSetup) -> LinkLayer {
    let mut x = LinkLayer::new(
        Rate::gbps(100),
        [2, 0, 0, 0, 0, 1],
        PauseSetup {
            mode: FlowControl::Cbfc,
            response: Time::ZERO,
            quanta: 0xFFFF,
            honoured: 0,
            obey: true,
            unhonoured: Unhonoured::Drop,
        },
    );
    x.enable_cbfc(c, &c);
    x.enable_llr(l);
    x
}

/// True with probability `p`.
fn chance(rng: &mut Xoshiro256PlusPlus, p: f64) -> bool {
    ((rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64) < p
}

struct Case {
    seed: u64,
    credits: u32,
    frames: u64,
    loss: f64,
    corrupt: f64,
    duplicate: f64,
    reorder: f64,
    drain: f64,
}

fn run(c: &Case) -> Result<(), TestCaseError> {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(c.seed);
    let (cs, ls) = setups(c.credits);
    let (mut a, mut b) = (link(cs, ls), link(cs, ls));
    let speed = Rate::gbps(100);
    // In flight: (arrival, order) → (to B?, frame).
    let mut flight: BTreeMap<(Time, u64), (bool, Packet)> = BTreeMap::new();
    let mut order = 0u64;
    // The reference: B's buffer (id, length) in order, its credits, what B's MAC took.
    let mut buffer: VecDeque<(u64, u32)> = VecDeque::new();
    let mut held = 0u64;
    let mut delivered: Vec<u64> = Vec::new();
    let lossy_until = Time::from_us(300);
    let end = Time::from_ms(3);
    let mut now = Time::ZERO;
    let mut next_id = 0u64;
    let mut lens: Vec<u32> = Vec::new();
    let step = Time::from_ns(20);
    while now < end {
        let lossy = now < lossy_until;
        // Each end: a control message or replay first, then (A) a new data frame.
        for from_a in [true, false] {
            let x = if from_a { &mut a } else { &mut b };
            if !x.tx.idle_at(now) {
                continue;
            }
            let mut out: Option<Packet> = None;
            if x.control_due_by(now) {
                out = x.poll_control(now, Vec::new()).map(|s| s.pkt);
            }
            if out.is_none() && from_a && next_id < c.frames {
                let len = LENS[(rng.next_u64() % LENS.len() as u64) as usize];
                if x.may_send(VC, len) {
                    let mut pkt = Packet::new(vec![0; 60], len);
                    pkt.meta.seq = next_id;
                    pkt.meta.queue = VC;
                    if x.start_data(now, &mut pkt, VC) {
                        lens.push(len);
                        next_id += 1;
                        out = Some(pkt);
                    }
                }
            }
            let Some(mut pkt) = out else { continue };
            let line = if pkt.meta.class.is_ordered_set() {
                Time::from_ps(640)
            } else {
                speed.wire_time(pkt.len as u64)
            };
            let mut at = now + line + PROP;
            if lossy {
                if chance(&mut rng, c.loss) {
                    continue;
                }
                if chance(&mut rng, c.corrupt) {
                    pkt.hop.corrupt();
                }
                if chance(&mut rng, c.reorder) {
                    // Late by up to a few frames' time: it arrives after later ones.
                    at += Time::from_ns(rng.next_u64() % 2000);
                }
                if chance(&mut rng, c.duplicate) {
                    order += 1;
                    let copy = Packet {
                        data: pkt.data.clone(),
                        ..pkt.clone()
                    };
                    flight.insert((at + Time::from_ns(50), order), (from_a, copy));
                }
            }
            order += 1;
            flight.insert((at, order), (from_a, pkt));
        }
        // Arrivals.
        while let Some((&(t, o), _)) = flight.first_key_value() {
            if t > now {
                break;
            }
            let (to_b, pkt) = flight.remove(&(t, o)).unwrap();
            let x = if to_b { &mut b } else { &mut a };
            if pkt.meta.class.is_control() {
                if pkt.hop.fcs() == Fcs::Good {
                    let f = ControlFrame::parse_link_control(&pkt.data).expect("ours");
                    x.receive_control(now, f).expect("both speak CBFC and LLR");
                }
                continue;
            }
            if x.arrive(&pkt, now).is_ok() {
                prop_assert!(to_b, "only A sends data");
                prop_assert_eq!(pkt.hop.fcs(), Fcs::Good, "a bad frame was taken");
                x.stored(VC, pkt.len);
                buffer.push_back((pkt.meta.seq, pkt.len));
                held += cs.cost(pkt.len);
                delivered.push(pkt.meta.seq);
                prop_assert!(
                    held <= c.credits as u64,
                    "B holds {} credits of its {} (at {})",
                    held,
                    c.credits,
                    now
                );
            }
        }
        // B drains at random (always, once the cable is clean).
        if !buffer.is_empty() && (!lossy || chance(&mut rng, c.drain)) {
            let (_, len) = buffer.pop_front().unwrap();
            held -= cs.cost(len);
            b.drained(VC, len);
        }
        now += step;
    }
    // Delivered once each, in order.
    let want: Vec<u64> = (0..next_id).collect();
    prop_assert_eq!(&delivered, &want, "every frame once, in order");
    prop_assert!(next_id == c.frames, "sent {} of {}", next_id, c.frames);
    // Every credit back, nothing counted twice, nothing refused.
    let (ac, bc) = (a.cbfc().unwrap(), b.cbfc().unwrap());
    let (av, bv) = (ac.vc_counters(VC as usize), bc.vc_counters(VC as usize));
    let sent: u64 = lens.iter().map(|l| cs.cost(*l)).sum();
    prop_assert_eq!(av.sender_credits_consumed, sent);
    prop_assert_eq!(av.sender_credits_used, 0, "A holds credits at idle");
    prop_assert_eq!(
        bv.receiver_credits_consumed,
        sent,
        "B counted each frame once"
    );
    prop_assert_eq!(bv.receiver_credits_freed, sent);
    prop_assert_eq!(ac.port_counters().implausible_rx, 0);
    prop_assert_eq!(bc.port_counters().implausible_rx, 0);
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn cbfc_over_llr_delivers_never_overruns_and_returns_every_credit(
        seed in any::<u64>(),
        credits in 72u32..400,
        frames in 200u64..800,
        loss in 0.0f64..0.05,
        corrupt in 0.0f64..0.05,
        duplicate in 0.0f64..0.05,
        reorder in 0.0f64..0.05,
        drain in 0.2f64..1.0,
    ) {
        run(&Case { seed, credits, frames, loss, corrupt, duplicate, reorder, drain })?;
    }
}

/// The case issue 55 found: with LLR on, a CC_Update counted a frame that was missing
/// when it came (corrupted, its replay on the way) as lost, the replay then delivered it,
/// and B counted its credits twice.
#[test]
fn a_frame_replayed_after_a_cc_update_is_counted_once() {
    for seed in 0..20 {
        run(&Case {
            seed,
            credits: 200,
            frames: 600,
            loss: 0.0,
            corrupt: 0.05,
            duplicate: 0.0,
            reorder: 0.0,
            drain: 0.5,
        })
        .unwrap_or_else(|e| panic!("seed {seed}: {e}"));
    }
}
