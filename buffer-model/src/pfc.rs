//! IEEE 802.1Qbb priority flow control state machines.
//!
//! * [`PauseTimers`]: the reaction side of one port. A PFC frame received at `t` takes
//!   effect at `t + response` (the port's response delay); until then the previous state
//!   holds. Taking effect, it (re)loads the timer of each enabled priority to
//!   `quanta × 512` bit times of the port's speed — a reload, not an addition — and time 0
//!   resumes. So a refresh of a running pause keeps the priority paused, an XON resumes
//!   only at `t + response`, and an XOFF received while unpaused pauses from
//!   `t + response`. Several frames may be pending at once. A paused priority stops
//!   *starting* frames; paused time counts exactly the intervals in which it may not.
//! * [`PfcGenerator`]: the generation side of one port. XOFF/XON requests become PFC frames
//!   sent ahead of all queues; while any priority is in XOFF the XOFF is refreshed every
//!   half pause time so the peer never resumes on its own.

use crate::mmu::{priorities_in, PRIORITIES};
use crate::units::{Rate, Time};
use std::collections::VecDeque;

/// What one received PFC frame does to one priority once it takes effect: from `at` the
/// priority is paused until `until` (`until == at` for an XON).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Effect {
    at: Time,
    until: Time,
}

/// Pending effects after a given time, in order.
type Later<'a> = std::iter::Peekable<std::collections::vec_deque::Iter<'a, Effect>>;

/// Walking the timeline: where the last pause ended (`since`) and whether the priority was
/// paused just before the current instant (`paused`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Edge {
    since: Time,
    paused: bool,
}

impl Edge {
    /// After effect `g` has been in force from `g.at` until `end` (≥ `g.at`). An effect
    /// replaced at the instant it took effect (several frames taking effect together)
    /// changes nothing.
    fn after(self, g: Effect, end: Time) -> Edge {
        if end <= g.at {
            return self;
        }
        let mut e = self;
        let paused_at_start = g.until > g.at;
        if e.paused && !paused_at_start {
            e.since = g.at;
        }
        if paused_at_start && g.until < end {
            e.since = g.until;
            e.paused = false;
        } else {
            e.paused = paused_at_start && end > g.at;
        }
        e
    }
}

/// Pause state of one priority on the receiving side: the timeline of effects.
#[derive(Clone, Debug, Default)]
struct PrioPause {
    /// The latest effect in force as of the last settle (the timer as loaded then).
    current: Effect,
    /// Paused time before `current.at`.
    accumulated: Time,
    /// Where the last pause before `current.at` ended, and whether one ran into it.
    edge: Edge,
    /// Effects of frames received but not yet settled, in order of `at`.
    pending: VecDeque<Effect>,
    /// Latest end of any pause known (settled or pending), as of the last frame.
    latest: Time,
}

impl PrioPause {
    /// Fold effects due at or before `t` into `current` (frames that have taken effect).
    fn settle(&mut self, t: Time) {
        while let Some(e) = self.pending.front().copied().filter(|e| e.at <= t) {
            self.accumulated += self.current.until.min(e.at).saturating_sub(self.current.at);
            self.edge = self.edge.after(self.current, e.at);
            self.current = e;
            self.pending.pop_front();
        }
    }

    /// The effect in force at `t` and the pending ones after it.
    fn at(&self, t: Time) -> (Effect, Later<'_>) {
        let mut g = self.current;
        let mut rest = self.pending.iter().peekable();
        while let Some(e) = rest.next_if(|e| e.at <= t) {
            g = *e;
        }
        (g, rest)
    }

    fn is_paused(&self, t: Time) -> bool {
        let (g, _) = self.at(t);
        g.at <= t && t < g.until
    }

    /// Earliest time at or after `t` at which the priority is not paused, given the frames
    /// received so far.
    fn resume_at(&self, t: Time) -> Time {
        let (mut g, mut rest) = self.at(t);
        let mut x = t;
        loop {
            if x >= g.until {
                return x;
            }
            // Paused from x until g.until, unless a pending frame takes effect first.
            match rest.peek() {
                Some(e) if e.at <= g.until => {
                    x = e.at;
                    while let Some(e) = rest.next_if(|e| e.at <= x) {
                        g = *e;
                    }
                }
                _ => return g.until,
            }
        }
    }

    /// Start of the stretch without pause that `t` is in (`t` itself when paused then;
    /// time 0 when never paused).
    fn unpaused_since(&self, t: Time) -> Time {
        let mut edge = self.edge;
        let mut effects = std::iter::once(&self.current)
            .chain(self.pending.iter())
            .take_while(|e| e.at <= t)
            .peekable();
        while let Some(g) = effects.next() {
            match effects.peek() {
                Some(n) => edge = edge.after(*g, n.at),
                None if g.at <= t && t < g.until => return t,
                None => {
                    // Not paused at t: if a pause ran right up to t it ended at t.
                    let e = edge.after(*g, t);
                    return if e.paused { t } else { e.since };
                }
            }
        }
        edge.since
    }

    /// Paused time up to `now`.
    fn total(&self, now: Time) -> Time {
        let mut total = self.accumulated;
        let mut effects = std::iter::once(&self.current)
            .chain(self.pending.iter())
            .peekable();
        while let Some(e) = effects.next() {
            if e.at >= now {
                break;
            }
            let end = effects.peek().map_or(now, |n| n.at.min(now));
            total += e.until.min(end).saturating_sub(e.at);
        }
        total
    }

    /// Take a frame's effect: settle what is due at `arrival`, and know the latest end
    /// of any pause again.
    fn receive(&mut self, effect: Effect, arrival: Time) {
        self.pending.push_back(effect);
        self.settle(arrival);
        self.latest = self
            .pending
            .iter()
            .map(|e| e.until)
            .fold(self.current.until, Time::max);
    }
}

/// Per-priority pause timers of one port (what PFC frames received on it do).
///
/// Queries (`is_paused`, `resume_at`, `paused_total`) are about a time at or after the
/// latest frame received; they see frames still pending (received, not yet in effect).
#[derive(Clone, Debug)]
pub struct PauseTimers {
    speed: Rate,
    response: Time,
    prio: [PrioPause; PRIORITIES],
    /// Latest end of any pause: nothing is paused at or after it (fast path).
    latest_until: Time,
}

impl PauseTimers {
    /// Timers of a port of `speed` (a quantum is 512 bit times of it) that reacts to a
    /// frame `response` after its last bit arrived.
    pub fn new(speed: Rate, response: Time) -> PauseTimers {
        PauseTimers {
            speed,
            response,
            prio: Default::default(),
            latest_until: Time::ZERO,
        }
    }

    /// The response delay: how long after a frame arrives it takes effect.
    pub fn response(&self) -> Time {
        self.response
    }

    /// A PFC frame whose last bit arrived at `arrival`: for each priority whose bit is set
    /// in `enable` (already masked to the port's PFC-enabled priorities), the timer is
    /// reloaded to `quanta[p]` pause quanta at `arrival + response`.
    pub fn receive(&mut self, arrival: Time, enable: u8, quanta: &[u16; PRIORITIES]) {
        let at = arrival + self.response;
        for p in priorities_in(enable) {
            let until = at + self.speed.pause_time(quanta[p]);
            // Settles what has taken effect by now (this frame too, without a response
            // delay).
            self.prio[p].receive(Effect { at, until }, arrival);
        }
        // Only the priorities in `enable` changed; each keeps its own latest end.
        self.latest_until = self
            .prio
            .iter()
            .map(|s| s.latest)
            .fold(Time::ZERO, Time::max);
    }

    /// May priority `p` not start a frame at `t`?
    pub fn is_paused(&self, p: usize, t: Time) -> bool {
        t < self.prio[p].latest && self.prio[p].is_paused(t)
    }

    /// Earliest time at or after `t` at which priority `p` may start a frame, given the
    /// frames received so far (`t` itself when it is not paused then).
    pub fn resume_at(&self, p: usize, t: Time) -> Time {
        if t >= self.prio[p].latest {
            return t;
        }
        self.prio[p].resume_at(t)
    }

    /// Start of the stretch in which priority `p` has not been paused, up to `t` (`t`
    /// itself when paused at `t`): a wall-clock engine that wakes late must not date a
    /// frame back before it.
    pub fn unpaused_since(&self, p: usize, t: Time) -> Time {
        self.prio[p].unpaused_since(t)
    }

    /// Bitmap of priorities paused at `t`.
    pub fn paused_mask(&self, t: Time) -> u8 {
        if t >= self.latest_until {
            return 0;
        }
        // A priority whose every pause ends by `t` is not looked at further.
        (0..PRIORITIES).fold(0, |m, p| {
            let s = &self.prio[p];
            m | (((t < s.latest) && s.is_paused(t)) as u8) << p
        })
    }

    /// Total time priority `p` may not start frames, up to `now` (pfcstat pause duration).
    pub fn paused_total(&self, p: usize, now: Time) -> Time {
        self.prio[p].total(now)
    }

    /// Forget all pauses at `now`, pending ones included (link down: the peer's requests
    /// are gone with it).
    pub fn clear(&mut self, now: Time) {
        for s in &mut self.prio {
            s.settle(now);
            s.accumulated += s.current.until.min(now).saturating_sub(s.current.at);
            s.edge = s.edge.after(s.current, now);
            s.current = Effect {
                at: now,
                until: now,
            };
            s.pending.clear();
            s.latest = now;
        }
        self.latest_until = now;
    }
}

/// A PFC frame to send: which classes it enables and their pause times.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PfcRequest {
    /// Class-enable vector: bit p set means `quanta[p]` applies to priority p.
    pub enable: u8,
    /// Pause time per priority in quanta (0 = XON).
    pub quanta: [u16; PRIORITIES],
}

impl PfcRequest {
    /// Bitmap of priorities this frame pauses (enabled, time > 0).
    pub fn xoff_mask(&self) -> u8 {
        (0..PRIORITIES).fold(0, |m, p| {
            m | (((self.enable >> p) & 1 == 1 && self.quanta[p] > 0) as u8) << p
        })
    }
    /// Bitmap of priorities this frame resumes (enabled, time 0).
    pub fn xon_mask(&self) -> u8 {
        (0..PRIORITIES).fold(0, |m, p| {
            m | (((self.enable >> p) & 1 == 1 && self.quanta[p] == 0) as u8) << p
        })
    }
}

/// PFC generation state of one port.
#[derive(Clone, Debug)]
pub struct PfcGenerator {
    /// Quanta carried by XOFF frames (`qos.pause_quanta`, default 0xFFFF).
    quanta: u16,
    /// Refresh period: half the pause time at this port's speed.
    refresh: Time,
    /// Priorities in XOFF now.
    xoff: u8,
    /// Priorities whose XOFF must go out in the next frame.
    pending_xoff: u8,
    /// Priorities whose XON must go out in the next frame.
    pending_xon: u8,
    /// When the next refresh of the XOFF priorities is due (if any are in XOFF).
    next_refresh: Option<Time>,
}

impl PfcGenerator {
    /// A generator for a port of `speed` sending XOFF with `quanta` quanta.
    pub fn new(speed: Rate, quanta: u16) -> PfcGenerator {
        let refresh = Time((speed.pause_time(quanta).0 / 2).max(1));
        PfcGenerator {
            quanta,
            refresh,
            xoff: 0,
            pending_xoff: 0,
            pending_xon: 0,
            next_refresh: None,
        }
    }

    /// Ask the peer to stop sending on the priorities in `mask`.
    pub fn send_xoff(&mut self, mask: u8) {
        self.xoff |= mask;
        self.pending_xoff |= mask;
        self.pending_xon &= !mask;
    }

    /// Let the peer resume the priorities in `mask`.
    pub fn send_xon(&mut self, mask: u8) {
        let mask = mask & self.xoff;
        self.xoff &= !mask;
        self.pending_xon |= mask;
        self.pending_xoff &= !mask;
        if self.xoff == 0 {
            self.next_refresh = None;
        }
    }

    /// Priorities currently in XOFF.
    pub fn xoff_mask(&self) -> u8 {
        self.xoff
    }

    /// Is a frame waiting to be sent?
    pub fn has_pending(&self) -> bool {
        self.pending_xoff | self.pending_xon != 0
    }

    /// The refresh deadline, if any priority is in XOFF.
    pub fn poll_timeout(&self) -> Option<Time> {
        self.next_refresh
    }

    /// At `now`, queue a refresh of all XOFF priorities if it is due.
    pub fn handle_timeout(&mut self, now: Time) {
        if let Some(t) = self.next_refresh {
            if now >= t && self.xoff != 0 {
                self.pending_xoff |= self.xoff;
                self.next_refresh = None;
            }
        }
    }

    /// Take the frame to send now, if any; starts the refresh clock for XOFF priorities.
    pub fn take_frame(&mut self, now: Time) -> Option<PfcRequest> {
        if !self.has_pending() {
            return None;
        }
        let mut quanta = [0u16; PRIORITIES];
        for p in priorities_in(self.pending_xoff) {
            quanta[p] = self.quanta;
        }
        let req = PfcRequest {
            enable: self.pending_xoff | self.pending_xon,
            quanta,
        };
        if self.pending_xoff != 0 {
            self.next_refresh = Some(now + self.refresh);
        }
        self.pending_xoff = 0;
        self.pending_xon = 0;
        Some(req)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn q(p: usize, v: u16) -> [u16; 8] {
        let mut a = [0; 8];
        a[p] = v;
        a
    }

    const G100: Rate = Rate::gbps(100);

    #[test]
    fn thousand_quanta_pause_exactly_5_12_us_at_100g_and_20_48_us_at_25g() {
        for (speed, len) in [(G100, 5_120_000u64), (Rate::gbps(25), 20_480_000)] {
            let mut t = PauseTimers::new(speed, Time::ZERO);
            let t0 = Time::from_us(10);
            t.receive(t0, 1 << 3, &q(3, 1000));
            assert!(t.is_paused(3, t0));
            assert!(t.is_paused(3, t0 + Time(len - 1)));
            assert!(!t.is_paused(3, t0 + Time(len)));
            assert_eq!(t.resume_at(3, t0), t0 + Time(len));
            assert_eq!(t.paused_total(3, t0 + Time(10 * len)), Time(len));
            assert!(!t.is_paused(4, t0), "other priorities keep sending");
            assert_eq!(t.resume_at(4, t0), t0);
        }
    }

    #[test]
    fn second_frame_reloads_rather_than_adds() {
        let mut t = PauseTimers::new(G100, Time::ZERO);
        t.receive(Time::ZERO, 1 << 3, &q(3, 1000));
        t.receive(Time::from_us(2), 1 << 3, &q(3, 1000));
        // Reload: ends at 2 + 5.12 µs, not 10.24 µs.
        assert_eq!(t.resume_at(3, Time::from_us(3)), Time(7_120_000));
        assert_eq!(t.paused_total(3, Time::from_ms(1)), Time(7_120_000));
    }

    #[test]
    fn time_zero_resumes_at_once() {
        let mut t = PauseTimers::new(G100, Time::ZERO);
        t.receive(Time::ZERO, 1 << 3, &q(3, 0xFFFF));
        t.receive(Time::from_us(1), 1 << 3, &q(3, 0));
        assert!(!t.is_paused(3, Time::from_us(1)));
        assert_eq!(t.paused_total(3, Time::from_ms(5)), Time::from_us(1));
    }

    /// IEEE's 394 quanta at 100G: 2.01728 µs.
    const R: Time = Time(2_017_280);

    #[test]
    fn with_a_response_delay_an_xoff_pauses_from_arrival_plus_response() {
        let mut t = PauseTimers::new(G100, R);
        let t0 = Time::from_us(1);
        t.receive(t0, 1 << 3, &q(3, 1000));
        // Frames may still start until t0 + R; then 5.12 µs of pause.
        assert!(!t.is_paused(3, t0));
        assert!(!t.is_paused(3, t0 + R - Time(1)));
        assert!(t.is_paused(3, t0 + R));
        assert_eq!(t.resume_at(3, t0), t0);
        assert_eq!(t.resume_at(3, t0 + R), t0 + R + Time(5_120_000));
        assert_eq!(t.paused_total(3, t0 + R), Time::ZERO);
        assert_eq!(t.paused_total(3, Time::from_ms(1)), Time(5_120_000));
    }

    #[test]
    fn a_refresh_of_a_running_pause_keeps_the_priority_paused() {
        let mut t = PauseTimers::new(G100, R);
        t.receive(Time::ZERO, 1 << 3, &q(3, 1000)); // paused [R, R + 5.12 µs)
        let refresh = Time::from_us(4); // arrives while paused
        t.receive(refresh, 1 << 3, &q(3, 1000)); // reloads at 4 µs + R
        for x in [
            refresh,
            refresh + Time(1),
            refresh + R - Time(1),
            refresh + R,
        ] {
            assert!(t.is_paused(3, x), "paused at {x}");
        }
        let end = refresh + R + Time(5_120_000);
        assert_eq!(t.resume_at(3, refresh), end);
        assert!(!t.is_paused(3, end));
        // One continuous pause from R to the end of the reloaded timer.
        assert_eq!(t.paused_total(3, Time::from_ms(1)), end - R);
    }

    #[test]
    fn an_xon_resumes_only_after_the_response_delay() {
        let mut t = PauseTimers::new(G100, R);
        t.receive(Time::ZERO, 1 << 3, &q(3, 0xFFFF));
        let xon = Time::from_us(10);
        t.receive(xon, 1 << 3, &q(3, 0));
        assert!(t.is_paused(3, xon));
        assert!(t.is_paused(3, xon + R - Time(1)));
        assert!(!t.is_paused(3, xon + R));
        assert_eq!(t.resume_at(3, xon), xon + R);
        // Paused from R to 10 µs + R: exactly 10 µs.
        assert_eq!(t.paused_total(3, Time::from_ms(1)), Time::from_us(10));
        assert_eq!(t.paused_total(3, xon), xon - R);
    }

    #[test]
    fn an_expired_pause_refreshed_late_leaves_a_gap_of_the_response_time() {
        // XOFF of 100 quanta (512 ns) at 0, expiring at R + 512 ns; the next XOFF arrives
        // at 3 µs and takes effect at 3 µs + R: unpaused in between.
        let mut t = PauseTimers::new(G100, R);
        t.receive(Time::ZERO, 1 << 3, &q(3, 100));
        t.receive(Time::from_us(3), 1 << 3, &q(3, 100));
        let first_end = R + Time(512_000);
        assert!(!t.is_paused(3, Time::from_us(3)));
        assert_eq!(t.resume_at(3, Time::from_us(3)), Time::from_us(3));
        assert!(t.is_paused(3, Time::from_us(3) + R));
        assert_eq!(
            t.paused_total(3, Time::from_ms(1)),
            (first_end - R) + Time(512_000)
        );
    }

    #[test]
    fn several_frames_may_be_pending_at_once() {
        // XOFF at 0, XON at 1 µs, XOFF at 1.5 µs, all within one response time of 2 µs.
        let mut t = PauseTimers::new(G100, Time::from_us(2));
        t.receive(Time::ZERO, 1 << 3, &q(3, 1000));
        t.receive(Time::from_us(1), 1 << 3, &q(3, 0));
        t.receive(Time::from_ns(1500), 1 << 3, &q(3, 1000));
        assert!(!t.is_paused(3, Time::from_ns(1999)));
        assert!(t.is_paused(3, Time::from_us(2)));
        assert!(!t.is_paused(3, Time::from_us(3)));
        assert!(t.is_paused(3, Time::from_ns(3500)));
        assert_eq!(t.resume_at(3, Time::from_us(2)), Time::from_us(3));
        assert_eq!(
            t.resume_at(3, Time::from_ns(3500)),
            Time::from_ns(3500) + Time(5_120_000)
        );
        assert_eq!(
            t.paused_total(3, Time::from_ms(1)),
            Time::from_us(1) + Time(5_120_000)
        );
    }

    #[test]
    fn clear_forgets_pending_frames_and_keeps_the_past() {
        let mut t = PauseTimers::new(G100, R);
        t.receive(Time::ZERO, 1 << 3, &q(3, 0xFFFF));
        t.receive(Time::from_us(5), 1 << 3, &q(3, 0xFFFF));
        t.clear(Time::from_us(6));
        assert!(!t.is_paused(3, Time::from_us(6)));
        assert!(!t.is_paused(3, Time::from_us(8)));
        assert_eq!(t.paused_total(3, Time::from_ms(1)), Time::from_us(6) - R);
    }

    #[test]
    fn a_refresh_and_an_xon_together_as_a_pause_expires_end_it_there() {
        // At 10G a quantum is 51.2 ns. 3 quanta from 0 end at 153.6 ns; at that instant a
        // 1-quantum refresh and an XON take effect together, in that order: the pause
        // ended at 153.6 ns (found by the property test against the tick reference).
        let g10 = Rate::gbps(10);
        let mut t = PauseTimers::new(g10, Time::ZERO);
        let end = g10.pause_time(3);
        t.receive(Time::ZERO, 1 << 2, &q(2, 3));
        t.receive(end, 1 << 2, &q(2, 1));
        t.receive(end, 1 << 2, &q(2, 0));
        assert!(!t.is_paused(2, end));
        assert_eq!(t.unpaused_since(2, end), end);
        assert_eq!(t.unpaused_since(2, end + Time::from_us(1)), end);
        assert_eq!(t.paused_total(2, end + Time::from_us(1)), end);
    }

    #[test]
    fn generator_refreshes_every_half_pause_and_sends_xon() {
        let speed = G100;
        let mut g = PfcGenerator::new(speed, 0xFFFF);
        g.send_xoff(1 << 3);
        let f = g.take_frame(Time::ZERO).unwrap();
        assert_eq!((f.enable, f.quanta[3]), (1 << 3, 0xFFFF));
        let half = Time(speed.pause_time(0xFFFF).0 / 2);
        assert_eq!(g.poll_timeout(), Some(half));
        g.handle_timeout(half - Time(1));
        assert!(!g.has_pending());
        g.handle_timeout(half);
        let f = g.take_frame(half).unwrap();
        assert_eq!(f.xoff_mask(), 1 << 3);
        g.send_xon(1 << 3);
        let f = g.take_frame(half + Time(5)).unwrap();
        assert_eq!((f.enable, f.quanta[3], f.xon_mask()), (1 << 3, 0, 1 << 3));
        assert_eq!(g.poll_timeout(), None);
    }
}
