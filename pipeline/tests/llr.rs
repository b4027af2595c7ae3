//! Link-level retry between two link layers over a modelled cable: the SONiC scale-up
//! test standard's LLR cases that are about the link itself (LLR-01…06, 08), and a
//! property test against a brute-force reference (every frame delivered once and in
//! order under any seeded error pattern within the replay limits; FLUSH reported
//! otherwise).
//!
//! The cable delays every frame and ordered set by its wire time plus the propagation;
//! what it does to each (good, corrupted, lost whole, poisoned) comes from a script.

use lossless_buffer_model::{Rate, Time};
use lossless_pipeline::config::FlowControl;
use lossless_pipeline::link::llr::{FrameAction, LlrSetup, TxState, SEQ_MODULUS};
use lossless_pipeline::link::{LinkLayer, PauseSetup, Unhonoured};
use lossless_pipeline::packet::Fcs;
use lossless_pipeline::Packet;
use proptest::prelude::*;
use std::collections::BTreeMap;

/// What the cable does to a frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Fate {
    Good,
    Corrupt,
    Lose,
    Poison,
}

/// What the cable does to the n-th data frame A sends.
type DataFate = Box<dyn FnMut(u64, &Packet) -> Fate>;
/// What the cable does to B's n-th ordered set, sent at a time.
type ControlFate = Box<dyn FnMut(u64, Time) -> Fate>;

/// Two link layers, A sending data to B, over a cable of `prop` one way.
struct Bench {
    a: LinkLayer,
    b: LinkLayer,
    prop: Time,
    now: Time,
    /// Frames in flight: (arrival, order) → (to B?, frame).
    flight: BTreeMap<(Time, u64), (bool, Packet)>,
    order: u64,
    /// Data frames still to send (ids in `meta.seq`), and their length.
    next_id: u64,
    total: u64,
    len: u32,
    /// What becomes of the n-th data frame A puts on the wire (first sends and replays).
    data_fate: DataFate,
    data_sent: u64,
    /// What becomes of B's n-th ordered set (ACK, NACK, INIT_ECHO).
    control_fate: ControlFate,
    controls_sent: u64,
    /// Ids B's MAC took, in order.
    delivered: Vec<u64>,
}

fn link(setup: LlrSetup) -> LinkLayer {
    let mut l = LinkLayer::new(
        Rate::gbps(100),
        [2, 0, 0, 0, 0, 1],
        PauseSetup {
            mode: FlowControl::Pfc,
            response: Time::ZERO,
            quanta: 0xFFFF,
            honoured: 0,
            obey: true,
            unhonoured: Unhonoured::Drop,
        },
    );
    l.enable_llr(setup);
    l
}

impl Bench {
    fn new(setup: LlrSetup, total: u64, len: u32, prop: Time) -> Bench {
        Bench {
            a: link(setup),
            b: link(setup),
            prop,
            now: Time::ZERO,
            flight: BTreeMap::new(),
            order: 0,
            next_id: 0,
            total,
            len,
            data_fate: Box::new(|_, _| Fate::Good),
            data_sent: 0,
            control_fate: Box::new(|_, _| Fate::Good),
            controls_sent: 0,
            delivered: Vec::new(),
        }
    }

    fn put(&mut self, to_b: bool, mut pkt: Packet, fate: Fate) {
        let line = if pkt.meta.class.is_ordered_set() {
            Time::from_ps(640)
        } else {
            Rate::gbps(100).wire_time(pkt.len as u64)
        };
        match fate {
            Fate::Good => {}
            Fate::Lose => return,
            Fate::Corrupt => pkt.hop.corrupt(),
            Fate::Poison => pkt.hop.poison(),
        }
        self.order += 1;
        self.flight
            .insert((self.now + line + self.prop, self.order), (to_b, pkt));
    }

    /// A's turn at `now`: an ordered set or a replay first, then a new data frame.
    fn send_a(&mut self) -> bool {
        if !self.a.tx.idle_at(self.now) {
            return false;
        }
        if self.a.control_due_by(self.now) {
            if let Some(s) = self.a.poll_control(self.now, Vec::new()) {
                let fate = if s.pkt.meta.class.is_control() {
                    Fate::Good
                } else {
                    self.data_sent += 1;
                    (self.data_fate)(self.data_sent, &s.pkt)
                };
                self.put(true, s.pkt, fate);
                return true;
            }
        }
        if self.next_id < self.total && self.a.may_send(0, self.len) {
            let mut pkt = Packet::new(vec![0; 60], self.len);
            pkt.meta.seq = self.next_id;
            if self.a.start_data(self.now, &mut pkt, 0) {
                self.data_sent += 1;
                let fate = (self.data_fate)(self.data_sent, &pkt);
                self.put(true, pkt, fate);
            }
            self.next_id += 1;
            return true;
        }
        false
    }

    /// B's turn: its ACKs, NACKs and INIT_ECHOs.
    fn send_b(&mut self) -> bool {
        if !self.b.tx.idle_at(self.now) || !self.b.control_due_by(self.now) {
            return false;
        }
        let Some(s) = self.b.poll_control(self.now, Vec::new()) else {
            return false;
        };
        self.controls_sent += 1;
        let fate = (self.control_fate)(self.controls_sent, self.now);
        self.put(false, s.pkt, fate);
        true
    }

    fn arrive(&mut self, to_b: bool, pkt: Packet) {
        let l = if to_b { &mut self.b } else { &mut self.a };
        if pkt.meta.class.is_control() {
            if pkt.hop.fcs() == Fcs::Good {
                let f = lossless_pipeline::link::ControlFrame::parse_link_control(&pkt.data)
                    .expect("ours");
                l.receive_control(self.now, f).expect("both speak LLR");
            }
            return;
        }
        if l.arrive(&pkt, self.now).is_ok() {
            assert_eq!(pkt.hop.fcs(), Fcs::Good, "a bad frame was taken");
            self.delivered.push(pkt.meta.seq);
        }
    }

    /// Run until nothing is left to do or `until`; true if every frame was sent and the
    /// link settled.
    fn run(&mut self, until: Time) -> bool {
        loop {
            while self.send_a() | self.send_b() {}
            // The next thing that happens.
            let mut next = Time::MAX;
            if let Some((&(t, _), _)) = self.flight.first_key_value() {
                next = next.min(t);
            }
            for l in [&self.a, &self.b] {
                if let Some(t) = l.control_due() {
                    next = next.min(t.max(l.tx.busy_until).max(self.now));
                }
            }
            if self.next_id < self.total && self.a.may_send(0, self.len) {
                next = next.min(self.a.tx.busy_until.max(self.now));
            }
            if next == Time::MAX || next > until {
                return self.next_id >= self.total && self.a.settled() && self.b.settled();
            }
            if next == self.now
                && self
                    .flight
                    .first_key_value()
                    .is_none_or(|(k, _)| k.0 > next)
            {
                // Something due now that neither end could start: let the wire free.
                next = self.a.tx.busy_until.min(self.b.tx.busy_until).max(self.now);
                if next == self.now {
                    next = self.now + Time::from_ps(1);
                }
            }
            self.now = next;
            while let Some(e) = self.flight.first_entry() {
                if e.key().0 > self.now {
                    break;
                }
                let (to_b, pkt) = e.remove();
                self.arrive(to_b, pkt);
            }
        }
    }

    fn llr_a(&self) -> &lossless_pipeline::link::llr::LlrLink {
        self.a.llr().unwrap()
    }

    fn llr_b(&self) -> &lossless_pipeline::link::llr::LlrLink {
        self.b.llr().unwrap()
    }
}

fn setup() -> LlrSetup {
    LlrSetup {
        max_frames: 64,
        max_bytes: 64 * 1024,
        replay_timer: Time::from_us(2),
        ..LlrSetup::default()
    }
}

const M: Time = Time::from_ms(10);

/// LLR-01: 100 good frames: LLR_TX_OK = LLR_RX_OK = 100, none lost, ACKs carry them.
#[test]
fn llr_01_good_frames_are_numbered_and_acknowledged() {
    let mut b = Bench::new(setup(), 100, 1024, Time::from_ns(10));
    assert!(b.run(M));
    assert_eq!(b.delivered, (0..100).collect::<Vec<_>>());
    let (a, r) = (b.llr_a().counters, b.llr_b().counters);
    assert_eq!((a.tx_ok, r.rx_ok, r.rx_expected_seq_good), (100, 100, 100));
    assert_eq!((a.tx_replay, r.tx_nack_ctl_os, r.rx_missing_seq), (0, 0, 0));
    // An ACK every 2,048 bytes (two frames) and one for the tail: 50.
    assert_eq!((r.tx_ack_ctl_os, a.rx_ack_ctl_os), (50, 50));
    assert_eq!(b.llr_a().outstanding(), 0);
}

/// LLR-02: one frame of 100 lost whole: the receiver sees a gap, NACKs once, the sender
/// replays once, and all 100 arrive in order.
#[test]
fn llr_02_a_lost_frame_is_replayed_on_nack() {
    let mut b = Bench::new(setup(), 100, 1000, Time::from_ns(10));
    b.data_fate = Box::new(|n, _| if n == 50 { Fate::Lose } else { Fate::Good });
    assert!(b.run(M));
    assert_eq!(b.delivered, (0..100).collect::<Vec<_>>());
    let (a, r) = (b.llr_a().counters, b.llr_b().counters);
    assert_eq!((a.rx_nack_ctl_os, a.tx_replay, r.rx_replay), (1, 1, 1));
    assert_eq!(r.tx_nack_ctl_os, 1);
    assert!(r.rx_missing_seq >= 1);
    assert_eq!(a.tx_flush, 0);
}

/// LLR-03: ACKs lost, REPLAY_COUNT_MAX = 3: three timer replays, then FLUSH.
#[test]
fn llr_03_no_acks_means_three_replays_then_flush() {
    let s = LlrSetup {
        max_replay_count: 3,
        re_init_on_flush: false,
        ..setup()
    };
    let mut b = Bench::new(s, 100, 1000, Time::from_ns(10));
    b.control_fate = Box::new(|_, _| Fate::Lose);
    b.run(M);
    let a = b.llr_a().counters;
    assert_eq!(a.tx_replay, 3);
    assert_eq!(a.tx_flush, 1);
    assert_eq!(b.llr_a().tx_state(), TxState::Flush);
    assert!(a.tx_flushed_frames > 0);
}

/// LLR-04: one frame of 1,000 with a bad CRC: RX_EXPECTED_SEQ_BAD = 1, one NACK, one
/// replay detected, none lost, in order.
#[test]
fn llr_04_a_bad_frame_is_nacked_and_replayed() {
    let mut b = Bench::new(setup(), 1000, 512, Time::from_ns(10));
    b.data_fate = Box::new(|n, _| if n == 500 { Fate::Corrupt } else { Fate::Good });
    assert!(b.run(M));
    assert_eq!(b.delivered, (0..1000).collect::<Vec<_>>());
    let r = b.llr_b().counters;
    assert_eq!(
        (r.rx_expected_seq_bad, r.tx_nack_ctl_os, r.rx_replay),
        (1, 1, 1)
    );
    assert_eq!(r.rx_bad, 1);
    assert_eq!(b.b.counters().rx_bad_fcs, 1);
}

/// LLR-05: a poisoned frame is dropped, never NACKed nor replayed.
#[test]
fn llr_05_a_poisoned_frame_is_not_retried() {
    let mut b = Bench::new(setup(), 100, 1000, Time::from_ns(10));
    b.data_fate = Box::new(|n, _| if n == 30 { Fate::Poison } else { Fate::Good });
    assert!(b.run(M));
    let want: Vec<u64> = (0..100).filter(|&i| i != 29).collect();
    assert_eq!(b.delivered, want);
    let r = b.llr_b().counters;
    assert_eq!(
        (r.rx_expected_seq_poisoned, r.tx_nack_ctl_os, r.rx_replay),
        (1, 0, 0)
    );
    assert_eq!(b.llr_a().counters.tx_replay, 0);
}

/// LLR-06: OUTSTANDING_FRAMES_MAX = 4, flush action discard, ACKs lost: the sender stops
/// at 4 frames, replays those 4, then FLUSHes and discards what comes while flushed.
#[test]
fn llr_06_a_full_buffer_replays_its_frames_then_flushes() {
    let s = LlrSetup {
        max_frames: 4,
        flush_action: FrameAction::Discard,
        re_init_on_flush: false,
        ..setup()
    };
    let mut b = Bench::new(s, 100, 1000, Time::from_ns(10));
    b.control_fate = Box::new(|_, _| Fate::Lose);
    b.run(M);
    let a = b.llr_a().counters;
    assert_eq!((a.tx_ok, a.tx_replayed_frames, a.tx_replay), (4, 4, 1));
    assert_eq!((a.tx_flush, a.tx_flushed_frames), (1, 4));
    assert_eq!(a.tx_discard, 96, "everything after the FLUSH is discarded");
    assert_eq!(a.tx_buffer_frames_watermark, 4);
}

/// LLR-08: RE_INIT_ON_FLUSH: after a FLUSH the link initialises again by itself (INIT,
/// INIT_ECHO) and carries the rest without loss.
#[test]
fn llr_08_re_init_on_flush_recovers_the_link() {
    let s = LlrSetup {
        max_replay_count: 1,
        ..setup()
    };
    let mut b = Bench::new(s, 200, 1000, Time::from_ns(10));
    // B's ordered sets lost for the first 20 µs: the replay runs out, the buffer is
    // flushed, INITs go unanswered until then.
    b.control_fate = Box::new(|_, t| {
        if t < Time::from_us(20) {
            Fate::Lose
        } else {
            Fate::Good
        }
    });
    assert!(b.run(M));
    let (a, r) = (b.llr_a().counters, b.llr_b().counters);
    assert!(a.tx_flush >= 1);
    assert!(a.tx_init_ctl_os >= 1 && r.rx_init_ctl_os >= 1);
    assert!(r.tx_init_echo_ctl_os >= 1 && a.rx_init_echo_ctl_os >= 1);
    assert_eq!(b.llr_a().tx_state(), TxState::Advance);
    // What was not flushed arrived once, in order.
    assert!(b.delivered.windows(2).all(|w| w[0] < w[1]));
    assert_eq!(b.delivered.last(), Some(&199));
}

/// Sequence numbers wrap at 2^20 without a false duplicate (the LLR test plan's case).
#[test]
fn sequence_numbers_wrap_without_a_false_duplicate() {
    let mut b = Bench::new(setup(), 300, 256, Time::from_ns(10));
    b.a.llr_mut().unwrap().start_at(SEQ_MODULUS - 100);
    b.b.llr_mut().unwrap().start_at(SEQ_MODULUS - 100);
    b.data_fate = Box::new(|n, _| if n == 100 { Fate::Corrupt } else { Fate::Good });
    assert!(b.run(M));
    assert_eq!(b.delivered, (0..300).collect::<Vec<_>>());
    assert_eq!(b.llr_b().counters.rx_duplicate_seq, 0);
}

/// The replay buffer bounds what is outstanding: bytes as well as frames.
#[test]
fn the_buffer_holds_no_more_bytes_than_allowed() {
    let s = LlrSetup {
        max_bytes: 10_000,
        ..setup()
    };
    let mut b = Bench::new(s, 200, 1500, Time::from_us(1));
    assert!(b.run(M));
    let a = b.llr_a().counters;
    assert_eq!(
        a.tx_buffer_frames_watermark, 6,
        "6 × 1500 ≤ 10,000 < 7 × 1500"
    );
    assert!(a.tx_buffer_bytes_watermark <= 10_000);
    assert_eq!(b.delivered.len(), 200);
}

/// A seeded stream of draws in 0..1000 (xorshift64).
fn per_mille(seed: u64) -> impl FnMut() -> u32 {
    let mut x = seed | 1;
    move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        (x % 1000) as u32
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// Within the replay limits (unlimited replays, a replay timer), any pattern of
    /// corrupted and lost data frames and lost ACKs/NACKs delivers every frame exactly
    /// once and in order; with one replay allowed, either the same holds or a FLUSH was
    /// reported, and what arrived is still in order without duplicates.
    #[test]
    fn every_frame_once_in_order_or_a_flush(
        seed in any::<u64>(),
        data_err in 0u32..300,   // per mille
        ctl_err in 0u32..200,
        frames in 1u64..300,
        len in 64u32..2000,
        prop_ns in 0u64..2000,
        unlimited in any::<bool>(),
        buffer in 2u32..80,
    ) {
        let s = LlrSetup {
            max_frames: buffer,
            max_bytes: 256 * 1024,
            replay_timer: Time::from_ns(2 * prop_ns + 3000),
            max_replay_count: if unlimited { 255 } else { 1 },
            re_init_on_flush: true,
            ..LlrSetup::default()
        };
        let mut b = Bench::new(s, frames, len, Time::from_ns(prop_ns));
        let mut draw = per_mille(seed);
        let mut draw2 = per_mille(seed.rotate_left(17));
        b.data_fate = Box::new(move |_, _| match draw() {
            x if x < data_err / 2 => Fate::Corrupt,
            x if x < data_err => Fate::Lose,
            _ => Fate::Good,
        });
        b.control_fate = Box::new(move |_, _| if draw2() < ctl_err { Fate::Lose } else { Fate::Good });
        let done = b.run(Time::from_ms(200));
        let a = b.llr_a().counters;
        // Never a duplicate, never out of order.
        prop_assert!(b.delivered.windows(2).all(|w| w[0] < w[1]), "{:?}", b.delivered);
        if a.tx_flush == 0 && a.tx_discard == 0 {
            // No FLUSH: everything arrived, once, in order, and the link settled.
            prop_assert!(done, "not settled: {:?}", a);
            prop_assert_eq!(b.delivered.clone(), (0..frames).collect::<Vec<_>>());
        } else {
            prop_assert!(!unlimited || a.tx_discard > 0 || a.tx_flush == 0);
        }
        if unlimited {
            prop_assert_eq!(a.tx_flush, 0);
        }
    }
}
