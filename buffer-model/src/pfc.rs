//! IEEE 802.1Qbb priority flow control state machines.
//!
//! * [`PauseTimers`]: the reaction side of one port. A received frame (re)loads the timer of
//!   each enabled priority to `quanta × 512` bit times of the port's speed — a reload, not an
//!   addition — and time 0 resumes at once. A paused priority stops *starting* frames.
//! * [`PfcGenerator`]: the generation side of one port. XOFF/XON requests become PFC frames
//!   sent ahead of all queues; while any priority is in XOFF the XOFF is refreshed every
//!   half pause time so the peer never resumes on its own.

use crate::mmu::PRIORITIES;
use crate::units::{Rate, Time};

/// Pause state of one priority on the receiving side.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Pause {
    /// The current (or last) pause interval is [start, until).
    start: Time,
    until: Time,
    /// Paused time of intervals already closed.
    accumulated: Time,
}

/// Per-priority pause timers of one port (what a PFC frame received on it does).
#[derive(Clone, Debug, Default)]
pub struct PauseTimers {
    prio: [Pause; PRIORITIES],
    /// Latest end of any pause: nothing is paused at or after it (fast path).
    latest_until: Time,
}

impl PauseTimers {
    /// Apply a received PFC frame that takes effect at `at` (arrival + response delay):
    /// for each priority whose bit is set in `enable` (already masked to the port's
    /// PFC-enabled priorities), reload its timer to `quanta[p]` pause quanta at `speed`.
    pub fn apply(&mut self, at: Time, enable: u8, quanta: &[u16; PRIORITIES], speed: Rate) {
        for (p, q) in quanta.iter().enumerate() {
            if enable & (1 << p) == 0 {
                continue;
            }
            let s = &mut self.prio[p];
            // Close the running interval at `at` (or at its natural end).
            let end = s.until.min(at).max(s.start);
            s.accumulated += end - s.start;
            s.start = at;
            s.until = at + speed.pause_time(*q);
        }
        self.latest_until = self
            .prio
            .iter()
            .map(|s| s.until)
            .max()
            .unwrap_or(Time::ZERO);
    }

    /// Is priority `p` paused at `now`?
    pub fn is_paused(&self, p: usize, now: Time) -> bool {
        let s = &self.prio[p];
        s.start <= now && now < s.until
    }

    /// When priority `p`'s current pause ends, if it is paused at `now`.
    pub fn paused_until(&self, p: usize, now: Time) -> Option<Time> {
        self.is_paused(p, now).then_some(self.prio[p].until)
    }

    /// When priority `p`'s pause begins, if one is scheduled after `now` (response delay).
    pub fn pause_starts(&self, p: usize, now: Time) -> Option<Time> {
        let s = &self.prio[p];
        (s.start > now && s.until > s.start).then_some(s.start)
    }

    /// Bitmap of priorities paused at `now`.
    pub fn paused_mask(&self, now: Time) -> u8 {
        if now >= self.latest_until {
            return 0;
        }
        (0..PRIORITIES).fold(0, |m, p| m | ((self.is_paused(p, now) as u8) << p))
    }

    /// Total time priority `p` has been paused up to `now`.
    pub fn paused_total(&self, p: usize, now: Time) -> Time {
        let s = &self.prio[p];
        s.accumulated + s.until.min(now).saturating_sub(s.start)
    }

    /// Forget all pauses (link down: the peer's timers are gone with it).
    pub fn clear(&mut self, now: Time) {
        for s in &mut self.prio {
            let end = s.until.min(now).max(s.start);
            s.accumulated += end - s.start;
            s.start = now;
            s.until = now;
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
        for (p, q) in quanta.iter_mut().enumerate() {
            if self.pending_xoff & (1 << p) != 0 {
                *q = self.quanta;
            }
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

    #[test]
    fn thousand_quanta_pause_exactly_5_12_us_at_100g_and_20_48_us_at_25g() {
        for (speed, len) in [
            (Rate::gbps(100), 5_120_000u64),
            (Rate::gbps(25), 20_480_000),
        ] {
            let mut t = PauseTimers::default();
            let t0 = Time::from_us(10);
            t.apply(t0, 1 << 3, &q(3, 1000), speed);
            assert!(t.is_paused(3, t0));
            assert!(t.is_paused(3, t0 + Time(len - 1)));
            assert!(!t.is_paused(3, t0 + Time(len)));
            assert_eq!(t.paused_until(3, t0), Some(t0 + Time(len)));
            assert_eq!(t.paused_total(3, t0 + Time(10 * len)), Time(len));
            assert!(!t.is_paused(4, t0), "other priorities keep sending");
        }
    }

    #[test]
    fn second_frame_reloads_rather_than_adds() {
        let mut t = PauseTimers::default();
        let speed = Rate::gbps(100);
        t.apply(Time::ZERO, 1 << 3, &q(3, 1000), speed);
        t.apply(Time::from_us(2), 1 << 3, &q(3, 1000), speed);
        // Reload: ends at 2 + 5.12 µs, not 10.24 µs.
        assert_eq!(t.paused_until(3, Time::from_us(3)), Some(Time(7_120_000)));
        assert_eq!(t.paused_total(3, Time::from_ms(1)), Time(7_120_000));
    }

    #[test]
    fn time_zero_resumes_at_once() {
        let mut t = PauseTimers::default();
        let speed = Rate::gbps(100);
        t.apply(Time::ZERO, 1 << 3, &q(3, 0xFFFF), speed);
        t.apply(Time::from_us(1), 1 << 3, &q(3, 0), speed);
        assert!(!t.is_paused(3, Time::from_us(1)));
        assert_eq!(t.paused_total(3, Time::from_ms(5)), Time::from_us(1));
    }

    #[test]
    fn generator_refreshes_every_half_pause_and_sends_xon() {
        let speed = Rate::gbps(100);
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
