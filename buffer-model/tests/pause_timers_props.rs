//! `PauseTimers` against a brute-force reference model.
//!
//! The reference is the plain reading of 802.1Qbb with a response delay, simulated one
//! tick (40 ps) at a time: a frame received at tick `a` takes effect at tick `a + r`;
//! taking effect it loads the timer of each enabled priority with `quanta × 512` bit times
//! (a reload; 0 resumes); frames taking effect at the same tick act in arrival order; the
//! priority may not start a frame at tick `x` while `x` is before the timer's end. A link
//! down at tick `c` resumes every priority and forgets frames not yet in effect.
//!
//! Random frame sequences, quanta, response delays and speeds; at every tick the model and
//! `PauseTimers` must agree on "may start a frame now", on the paused total so far, on
//! where the latest pause ended, and on the earliest time a frame may start given the
//! frames received so far.

mod common;
use common::cases;
use lossless_buffer_model::pfc::PauseTimers;
use lossless_buffer_model::{Rate, Time, PRIORITIES};
use proptest::prelude::*;

/// Every standard speed's pause quantum is a whole number of 40 ps ticks.
const TICK: u64 = 40;
/// Arrivals fall in [0, ARRIVALS); pauses and responses are bounded so that everything
/// has ended before HORIZON.
const ARRIVALS: u64 = 6_000;
const MAX_RESPONSE: u64 = 2_000;
const MAX_PAUSE: u64 = 5_000;
const HORIZON: u64 = ARRIVALS + MAX_RESPONSE + MAX_PAUSE + 10;

#[derive(Clone, Debug)]
enum Op {
    /// A PFC frame arriving at a tick.
    Frame {
        at: u64,
        enable: u8,
        quanta: [u16; PRIORITIES],
    },
    /// Link down at a tick.
    Clear { at: u64 },
}

impl Op {
    fn at(&self) -> u64 {
        match self {
            Op::Frame { at, .. } | Op::Clear { at } => *at,
        }
    }
}

/// For each tick and priority, the first tick at or after it that is not paused.
fn resume_ticks(paused: &[[bool; PRIORITIES]]) -> Vec<[u64; PRIORITIES]> {
    let mut out = vec![[HORIZON; PRIORITIES]; paused.len()];
    let mut next = [HORIZON; PRIORITIES];
    for x in (0..paused.len()).rev() {
        for p in 0..PRIORITIES {
            if !paused[x][p] {
                next[p] = x as u64;
            }
        }
        out[x] = next;
    }
    out
}

/// The reference: per tick, per priority, "paused" (may not start a frame), given `ops`.
fn reference(ops: &[Op], response: u64, quantum: u64) -> Vec<[bool; PRIORITIES]> {
    let mut end = [0u64; PRIORITIES];
    // Frames received and not yet in effect: (takes effect at, enable, quanta).
    let mut pending: Vec<(u64, u8, [u16; PRIORITIES])> = Vec::new();
    let mut out = Vec::with_capacity(HORIZON as usize);
    let mut next_op = 0;
    for x in 0..HORIZON {
        // Frames received at x join the pending list (in arrival order); a link down at x
        // forgets everything pending and resumes.
        while next_op < ops.len() && ops[next_op].at() == x {
            match &ops[next_op] {
                Op::Frame { enable, quanta, .. } => pending.push((x + response, *enable, *quanta)),
                Op::Clear { .. } => {
                    // Whatever takes effect at x itself took effect before the link went.
                    let due: Vec<_> = pending.drain(..).filter(|(e, _, _)| *e <= x).collect();
                    apply(&mut end, &due, x, quantum);
                    end = [x; PRIORITIES];
                }
            }
            next_op += 1;
        }
        let due: Vec<_> = pending
            .iter()
            .filter(|(e, _, _)| *e == x)
            .cloned()
            .collect();
        pending.retain(|(e, _, _)| *e != x);
        apply(&mut end, &due, x, quantum);
        out.push(core::array::from_fn(|p| x < end[p]));
    }
    out
}

fn apply(end: &mut [u64; PRIORITIES], due: &[(u64, u8, [u16; PRIORITIES])], x: u64, quantum: u64) {
    for (_, enable, quanta) in due {
        for p in 0..PRIORITIES {
            if enable & (1 << p) != 0 {
                end[p] = x + quanta[p] as u64 * quantum;
            }
        }
    }
}

fn ops_strategy() -> impl Strategy<Value = Vec<Op>> {
    let frame = (
        0..ARRIVALS,
        any::<u8>(),
        // Often XON, often short, sometimes long: quanta in units scaled below.
        proptest::array::uniform8(prop_oneof![3 => Just(0u16), 5 => 1u16..40, 2 => 40u16..400]),
    )
        .prop_map(|(at, enable, quanta)| Op::Frame { at, enable, quanta });
    let clear = (0..ARRIVALS).prop_map(|at| Op::Clear { at });
    proptest::collection::vec(prop_oneof![12 => frame, 1 => clear], 1..14).prop_map(|mut v| {
        v.sort_by_key(Op::at);
        v
    })
}

const SPEEDS: [u64; 8] = [10, 25, 40, 50, 100, 200, 400, 800];

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases(200)))]

    #[test]
    fn pause_timers_match_the_tick_by_tick_reference(
        ops in ops_strategy(),
        speed_i in 0..SPEEDS.len(),
        response in prop_oneof![1 => Just(0u64), 3 => 0..MAX_RESPONSE],
    ) {
        let speed = Rate::gbps(SPEEDS[speed_i]);
        let quantum = speed.pause_time(1).as_ps() / TICK;
        prop_assert_eq!(quantum * TICK, speed.pause_time(1).as_ps());
        // Keep every pause under MAX_PAUSE ticks whatever the speed.
        let cap = (MAX_PAUSE / quantum).max(1) as u16;
        let ops: Vec<Op> = ops
            .into_iter()
            .map(|o| match o {
                Op::Frame { at, enable, quanta } => Op::Frame {
                    at,
                    enable,
                    quanta: quanta.map(|q| q.min(cap)),
                },
                c => c,
            })
            .collect();
        let full = reference(&ops, response, quantum);
        let mut timers = PauseTimers::new(speed, Time(response * TICK));
        let mut next_op = 0;
        // What the model says given only the ops seen so far (for resume_at).
        let mut known = resume_ticks(&reference(&[], response, quantum));
        let mut totals = [0u64; PRIORITIES];
        // Where the latest pause ended (tick), per priority.
        let mut since = [0u64; PRIORITIES];
        for x in 0..HORIZON {
            let t = Time(x * TICK);
            let mut changed = false;
            while next_op < ops.len() && ops[next_op].at() == x {
                match &ops[next_op] {
                    Op::Frame { enable, quanta, .. } => timers.receive(t, *enable, quanta),
                    Op::Clear { .. } => timers.clear(t),
                }
                next_op += 1;
                changed = true;
            }
            if changed {
                known = resume_ticks(&reference(&ops[..next_op], response, quantum));
            }
            let mask = timers.paused_mask(t);
            for p in 0..PRIORITIES {
                prop_assert_eq!(timers.is_paused(p, t), full[x as usize][p], "paused p{} at tick {}", p, x);
                prop_assert_eq!((mask >> p) & 1 == 1, full[x as usize][p]);
                prop_assert_eq!(timers.paused_total(p, t), Time(totals[p] * TICK), "total p{} at tick {}", p, x);
                if x > 0 && full[x as usize - 1][p] && !full[x as usize][p] {
                    since[p] = x;
                }
                let expect_since = if full[x as usize][p] { x } else { since[p] };
                prop_assert_eq!(timers.unpaused_since(p, t), Time(expect_since * TICK), "unpaused since p{} at tick {}", p, x);
                let resume = known[x as usize][p];
                prop_assert!(resume < HORIZON, "pauses end");
                prop_assert_eq!(timers.resume_at(p, t), Time(resume * TICK), "resume p{} from tick {}", p, x);
            }
            for p in 0..PRIORITIES {
                totals[p] += full[x as usize][p] as u64;
            }
        }
    }
}
