//! The driver against a scripted node and scripted ports: what a turn hands the node, in
//! what order and at what time, what it gives the ports back, and how long it waits.

use super::*;
use lossless_buffer_model::Rate;
use std::collections::VecDeque;

/// A node that records what it is given and starts the frames it was told to.
#[derive(Default)]
struct Recorder {
    /// What reached it: ("frame", port, first byte) or ("link", port, up).
    seen: Vec<(&'static str, usize, u8)>,
    /// When each input reached it.
    at: Vec<Time>,
    /// Frames to start at the next poll, per port.
    due: VecDeque<(usize, u8)>,
    /// Its next deadline.
    timeout: Option<Time>,
}

impl Node for Recorder {
    fn receive(&mut self, port: usize, pkt: Packet, now: Time) {
        self.seen.push(("frame", port, pkt.data[0]));
        self.at.push(now);
    }

    fn poll_due(&mut self, _now: Time, emit: &mut dyn FnMut(usize, Packet)) {
        for (port, b) in self.due.drain(..) {
            emit(port, Packet::new(vec![b; 60], 64));
        }
    }

    fn poll_timeout(&mut self) -> Option<Time> {
        self.timeout
    }

    fn port_speed(&self, _port: usize) -> Rate {
        Rate::gbps(1)
    }

    fn set_link(&mut self, port: usize, up: bool, now: Time) {
        self.seen.push(("link", port, up as u8));
        self.at.push(now);
    }
}

/// Ports that bring scripted inputs, one batch a turn, and record the rest.
#[derive(Default)]
struct Script {
    /// Each turn's inputs: frames (port, first byte) or link changes (port, up).
    turns: VecDeque<Vec<Input>>,
    /// What each turn was asked to wait.
    waits: Vec<Wait>,
    /// Frames sent: (port, first byte).
    sent: Vec<(usize, u8)>,
    /// Each flush's count of started frames, and how many frames had been sent by then.
    flushes: Vec<(usize, usize)>,
    more: bool,
}

impl Ports for Script {
    fn take(&mut self, wait: Wait, max: usize, into: &mut Vec<Input>) -> Duration {
        self.waits.push(wait);
        let mut batch = self.turns.pop_front().unwrap_or_default();
        self.more = batch.len() > max;
        let rest = batch.split_off(batch.len().min(max));
        if !rest.is_empty() {
            self.turns.push_front(rest);
        }
        into.extend(batch);
        Duration::ZERO
    }

    fn more_waiting(&self) -> bool {
        self.more
    }

    fn send(&mut self, port: usize, pkt: Packet) {
        self.sent.push((port, pkt.data[0]));
    }

    fn flush(&mut self, started: usize) {
        self.flushes.push((started, self.sent.len()));
    }
}

fn frame(port: usize, b: u8) -> Input {
    Input::Frame(port, Packet::new(vec![b; 60], 64))
}

const TEST_PACING: Pacing = Pacing {
    min_wait: Duration::from_micros(5),
    max_wait: Duration::from_millis(50),
    slack: Duration::ZERO,
    moderation: Some(Moderation {
        busy_wait: Duration::from_micros(100),
        light_turn: 2,
    }),
    batch: 3,
};

#[test]
fn inputs_reach_the_node_in_order_at_one_time_and_started_frames_are_flushed_once_a_turn() {
    let ports = Script {
        turns: VecDeque::from([vec![frame(1, 0xa), Input::Link(2, false), frame(0, 0xb)]]),
        ..Script::default()
    };
    let node = Recorder {
        due: VecDeque::from([(2, 0xc), (0, 0xd)]),
        ..Recorder::default()
    };
    let mut d = Driver::new(node, ports, TEST_PACING);
    d.turn(None);
    assert_eq!(
        d.node.seen,
        [("frame", 1, 0xa), ("link", 2, 0), ("frame", 0, 0xb)]
    );
    assert!(d.node.at.iter().all(|&t| t == d.node.at[0]));
    assert_eq!(d.ports.sent, [(2, 0xc), (0, 0xd)]);
    assert_eq!(d.ports.flushes, [(2, 2)]);
    assert_eq!(d.turns().count(), 1);
    // A turn with nothing to move still flushes (nothing).
    d.turn(None);
    assert_eq!(d.ports.flushes, [(2, 2), (0, 2)]);
}

#[test]
fn an_idle_node_waits_for_its_deadline_or_an_arrival_within_the_bounds() {
    let mut d = Driver::new(Recorder::default(), Script::default(), TEST_PACING);
    // Nothing pending: the longest wait.
    d.turn(None);
    // A deadline 1 ms ahead (it has not moved): about 1 ms.
    d.node.timeout = Some(d.now() + Time::from_ms(1));
    d.turn(None);
    // A deadline 1 µs ahead: the shortest timed wait.
    d.node.timeout = Some(d.now() + Time::from_ns(1_000));
    d.turn(None);
    // A deadline passed: no wait.
    d.node.timeout = Some(Time::ZERO);
    d.turn(None);
    let w = &d.ports.waits;
    assert_eq!(w[0], Wait::Arrival(Duration::from_millis(50)));
    let Wait::Arrival(ms) = w[1] else {
        panic!("{:?}", w[1])
    };
    assert!(ms <= Duration::from_millis(1) && ms > Duration::from_micros(500));
    assert_eq!(w[2], Wait::Arrival(Duration::from_micros(5)));
    assert_eq!(w[3], Wait::Arrival(Duration::ZERO));
}

#[test]
fn under_load_turns_gather_and_a_light_turn_waits_at_most_the_gathering_time() {
    let ports = Script {
        turns: VecDeque::from([
            // Three frames (more than a light turn): the next turn gathers.
            vec![frame(0, 1), frame(0, 2), frame(1, 3)],
            // One frame: light, the next wakes on an arrival or its deadline.
            vec![frame(0, 4)],
            // Five frames, more than a turn's batch of 3: the rest is taken at once.
            vec![
                frame(0, 5),
                frame(0, 6),
                frame(0, 7),
                frame(0, 8),
                frame(0, 9),
            ],
            vec![],
            vec![],
        ]),
        ..Script::default()
    };
    let mut d = Driver::new(Recorder::default(), ports, TEST_PACING);
    d.node.timeout = None;
    for _ in 0..6 {
        d.turn(None);
    }
    let busy = Duration::from_micros(100);
    assert_eq!(
        d.ports.waits,
        [
            Wait::Arrival(Duration::from_millis(50)),
            Wait::Gather(busy),
            Wait::Arrival(busy),
            Wait::Arrival(Duration::ZERO),
            Wait::Arrival(busy),
            Wait::Arrival(Duration::from_millis(50)),
        ]
    );
    let firsts: Vec<u8> = d.node.seen.iter().map(|s| s.2).collect();
    assert_eq!(firsts, [1, 2, 3, 4, 5, 6, 7, 8, 9]);
}

#[test]
fn no_wait_runs_past_the_end_and_run_stops_at_it_or_when_asked() {
    let mut d = Driver::new(Recorder::default(), Script::default(), TEST_PACING);
    let until = Instant::now() + Duration::from_millis(2);
    d.turn(Some(until));
    let Wait::Arrival(w) = d.ports.waits[0] else {
        panic!()
    };
    assert!(w <= Duration::from_millis(2), "{w:?}");
    // The scripted ports do not sleep: `run` ends by the clock, after some turns.
    let stop = AtomicBool::new(false);
    d.run(
        &stop,
        Some(Instant::now() + Duration::from_millis(5)),
        |_| ControlFlow::Continue(()),
    );
    assert!(d.turns().count() > 1);
    let n = d.turns().count();
    d.run(&stop, None, |_| ControlFlow::Break(()));
    assert_eq!(d.turns().count(), n + 1);
    stop.store(true, Ordering::Relaxed);
    d.run(&stop, None, |_| ControlFlow::Continue(()));
    assert_eq!(d.turns().count(), n + 1);
}
