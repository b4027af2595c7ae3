//! One port's transmitter, as a switch port and a host NIC both have it: the wire (busy
//! until the frame being sent ends: `(len + 20) × 8` bit times), the pauses the peer asked
//! for (PFC received), the pauses this end asks for (PFC generated, sent ahead of every
//! other frame and never dated back), the port's frame counters, and — for a wall-clock
//! engine that wakes late — how far back a frame's start may be dated.
//!
//! What is queued behind the transmitter differs (a switch port's eight queues and its
//! scheduler; a NIC's control frames and flows), so the owner says when its frames are
//! ready and which priorities they travel on; the transmitter answers when one may start
//! ([`Transmitter::first_start`]) and keeps that answer until the owner [`touch`]es it.
//!
//! [`touch`]: Transmitter::touch

use crate::config::FlowControl;
use crate::counters::PortCounters;
use crate::packet::Packet;
use crate::wire::pfc::{pause_frame, pfc_frame, PFC_FRAME_LEN};
use lossless_buffer_model::pfc::{PauseTimers, PfcGenerator, PfcRequest};
use lossless_buffer_model::{Rate, Time, WireTimes, PRIORITIES};
use std::cell::Cell;

/// The transmit side of one port.
#[derive(Clone, Debug)]
pub struct Transmitter {
    /// The line rate, and the wire time of the last data frame's length.
    wire: WireTimes,
    /// Wire time of a PFC or PAUSE frame at this line rate.
    pfc_wire: Time,
    mac: [u8; 6],
    /// Link is up (frames can arrive and leave).
    pub link_up: bool,
    /// Transmitter enabled (`tx: disable` holds frames back).
    pub tx_enabled: bool,
    /// The frame being sent finishes at this time.
    pub busy_until: Time,
    /// Pause timers set by the PFC frames this port received (what the peer asked for).
    pub pause: PauseTimers,
    /// PFC generation: the priorities this port holds in XOFF toward its peer.
    pfc: PfcGenerator,
    /// Frame, byte and PFC counters.
    pub counters: PortCounters,
    /// How far back a late poll may date a frame's start (0: exact, the virtual-time case).
    catch_up: Time,
    /// PFC per priority, or 802.3x PAUSE of the whole link.
    flow_control: FlowControl,
    /// The owner's next possible start, as last computed; None once something changed.
    next: Cell<Option<Option<Time>>>,
}

impl Transmitter {
    /// The transmitter of a port at `speed` with MAC `mac` (the source of its PFC frames),
    /// reacting to PFC `pfc_response` after a frame arrives, sending XOFF with
    /// `pause_quanta` quanta.
    pub fn new(speed: Rate, mac: [u8; 6], pfc_response: Time, pause_quanta: u16) -> Transmitter {
        Transmitter {
            wire: WireTimes::new(speed),
            pfc_wire: speed.wire_time(PFC_FRAME_LEN as u64),
            mac,
            link_up: true,
            tx_enabled: true,
            busy_until: Time::ZERO,
            pause: PauseTimers::new(speed, pfc_response),
            pfc: PfcGenerator::new(speed, pause_quanta),
            counters: PortCounters::default(),
            catch_up: Time::ZERO,
            flow_control: FlowControl::Pfc,
            next: Cell::new(None),
        }
    }

    /// Speak 802.3x PAUSE instead of PFC (or back): the XOFF of any priority pauses the
    /// whole link, and the XON comes when no priority is held any more.
    pub fn with_flow_control(mut self, fc: FlowControl) -> Transmitter {
        self.flow_control = fc;
        self
    }

    /// PFC per priority, or 802.3x PAUSE.
    pub fn flow_control(&self) -> FlowControl {
        self.flow_control
    }

    /// Line rate.
    pub fn speed(&self) -> Rate {
        self.wire.speed()
    }

    /// Let a late poll date a frame's start up to `window` into the past (never before the
    /// wire was free, the frame was ready, or a pause of its priorities ended).
    pub fn set_catch_up(&mut self, window: Time) {
        self.catch_up = window;
    }

    /// May a frame start at `now`: link up, transmitter enabled, wire free?
    pub fn idle_at(&self, now: Time) -> bool {
        self.link_up && self.tx_enabled && self.busy_until <= now
    }

    /// When the wire is free, as of `now` (None: link down or transmitter disabled).
    pub fn free_from(&self, now: Time) -> Option<Time> {
        (self.link_up && self.tx_enabled).then(|| self.busy_until.max(now))
    }

    /// Ask the peer to stop sending the priorities in `mask` (an XOFF goes out next).
    pub fn send_xoff(&mut self, mask: u8) {
        self.pfc.send_xoff(mask);
        self.touch();
    }

    /// Let the peer resume the priorities in `mask` (an XON goes out next).
    pub fn send_xon(&mut self, mask: u8) {
        self.pfc.send_xon(mask);
        self.touch();
    }

    /// Priorities this port holds in XOFF toward its peer.
    pub fn xoff_mask(&self) -> u8 {
        self.pfc.xoff_mask()
    }

    /// Is a PFC frame waiting to go out (it goes before anything else)?
    pub fn has_pfc_pending(&self) -> bool {
        self.pfc.has_pending()
    }

    /// When the XOFF must next be refreshed (None: no priority in XOFF).
    pub fn pfc_refresh_at(&self) -> Option<Time> {
        self.pfc.poll_timeout()
    }

    /// Queue the refresh of the XOFF priorities if it is due at `now`; true if it was.
    pub fn refresh_pfc(&mut self, now: Time) -> bool {
        if self.pfc.poll_timeout().is_some_and(|t| t <= now) {
            self.pfc.handle_timeout(now);
            self.touch();
            return true;
        }
        false
    }

    /// Start the pending PFC frame at `now`, built in `buf`: counted, the wire busy for its
    /// 64 bytes. PFC frames answer the state now, so they are never dated back. With
    /// 802.3x PAUSE the frame is a PAUSE: the request's pause time if it pauses anything,
    /// 0 once no priority is held; none (and None) when a priority resumes while another
    /// still holds the link.
    pub fn start_pfc(&mut self, now: Time, buf: Vec<u8>) -> Option<(Packet, PfcRequest)> {
        let req = self.pfc.take_frame(now)?;
        self.touch();
        let pkt = match self.flow_control {
            FlowControl::Pfc => {
                self.counters.count_pfc_sent(req.enable, &req.quanta, now);
                pfc_frame(buf, self.mac, req.enable, &req.quanta)
            }
            FlowControl::Pause => {
                let quanta = if req.xoff_mask() != 0 {
                    req.quanta.iter().copied().max().unwrap_or(0)
                } else if self.pfc.xoff_mask() == 0 {
                    0
                } else {
                    return None;
                };
                self.counters.count_pause_sent();
                pause_frame(buf, self.mac, quanta)
            }
        };
        let wire = self.pfc_wire;
        self.busy_until = now + wire;
        self.counters.tx_busy += wire;
        Some((pkt, req))
    }

    /// A data frame of `len` bytes starts at `start`: counted, the wire busy for it.
    pub fn start(&mut self, start: Time, len: u32) {
        self.counters.tx_packets += 1;
        self.counters.tx_bytes += len as u64;
        let wire = self.wire.of(len as u64);
        self.busy_until = start + wire;
        self.counters.tx_busy += wire;
        self.touch();
    }

    /// The earliest a frame on priorities `prios` polled at `now` may be dated to: `now`
    /// itself, or with a catch-up window the latest of its start, the end of the frame
    /// before, and the end of the last pause of those priorities.
    pub fn earliest_start(&self, now: Time, prios: u8) -> Time {
        if self.catch_up == Time::ZERO {
            return now;
        }
        let mut lo = now.saturating_sub(self.catch_up).max(self.busy_until);
        for p in (0..PRIORITIES).filter(|p| prios & (1 << p) != 0) {
            lo = lo.max(self.pause.unpaused_since(p, now));
        }
        lo
    }

    /// Earliest time at or after `t` at which none of `prios` is paused, given the PFC
    /// frames received so far (frames still pending may extend or end a pause).
    pub fn resume_at(&self, prios: u8, mut t: Time) -> Time {
        loop {
            let paused = self.pause.paused_mask(t) & prios;
            if paused == 0 {
                return t;
            }
            t = (0..PRIORITIES)
                .filter(|p| paused & (1 << p) != 0)
                .map(|p| self.pause.resume_at(p, t))
                .max()
                .unwrap_or(t);
        }
    }

    /// The first time at or after `from` at which a source whose frames are ready at
    /// `ready_at(t)` (the earliest time ≥ t it allows one; None: it is done) may start a
    /// frame on priorities `prios`.
    pub fn first_start(
        &self,
        from: Time,
        prios: u8,
        ready_at: impl Fn(Time) -> Option<Time>,
    ) -> Option<Time> {
        let mut t = from;
        loop {
            let ready = ready_at(t)?;
            let start = self.resume_at(prios, ready);
            if start == ready {
                return Some(ready);
            }
            t = start;
        }
    }

    /// The owner's next possible start: the cached answer, or `compute()`'s (kept until
    /// the next [`Self::touch`]).
    pub fn next_start(&self, compute: impl FnOnce() -> Option<Time>) -> Option<Time> {
        if let Some(t) = self.next.get() {
            return t;
        }
        let t = compute();
        self.next.set(Some(t));
        t
    }

    /// Is the owner's next start kept (not touched since it was last computed)?
    pub fn next_start_kept(&self) -> bool {
        self.next.get().is_some()
    }

    /// Something behind the transmitter changed: the next start is computed again.
    pub fn touch(&self) {
        self.next.set(None);
    }

    /// Take a PFC frame received at `now`: reload the pause timers of the priorities in
    /// `enable` (already masked to those this port honours) and count it.
    pub fn receive_pfc(&mut self, now: Time, enable: u8, quanta: &[u16; PRIORITIES]) {
        self.pause.receive(now, enable, quanta);
        self.counters.count_pfc_received(enable, quanta);
        self.touch();
    }

    /// Take an 802.3x PAUSE frame received at `now`: every priority's timer is (re)loaded to
    /// `quanta`, so the whole link stops (0: it resumes).
    pub fn receive_pause(&mut self, now: Time, quanta: u16) {
        self.pause.receive(now, 0xFF, &[quanta; PRIORITIES]);
        self.counters.rx_pause_frames += 1;
        self.touch();
    }

    /// Bring the link up or down at `now`; down forgets the pauses the peer asked for.
    pub fn set_link(&mut self, up: bool, now: Time) {
        self.link_up = up;
        if !up {
            self.pause.clear(now);
        }
        self.touch();
    }

    /// Enable or disable the transmitter.
    pub fn set_enabled(&mut self, enabled: bool) {
        self.tx_enabled = enabled;
        self.touch();
    }

    /// Time the wire was busy before `t` (at or after the latest frame's start).
    pub fn busy_time(&self, t: Time) -> Time {
        self.counters.busy_before(t, self.busy_until)
    }

    /// Time priority `p` has been paused up to `now` (pfcstat pause duration).
    pub fn paused_time(&self, p: usize, now: Time) -> Time {
        self.pause.paused_total(p, now)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tx() -> Transmitter {
        Transmitter::new(Rate::gbps(100), [2, 0, 0, 0, 0, 1], Time::ZERO, 0xFFFF)
    }

    #[test]
    fn a_frame_busies_the_wire_for_its_wire_time() {
        let mut t = tx();
        assert!(t.idle_at(Time::ZERO));
        t.start(Time::ZERO, 1518);
        assert_eq!(t.busy_until, Time::from_ps(123_040));
        assert!(!t.idle_at(Time::from_ps(123_039)));
        assert_eq!(t.free_from(Time::ZERO), Some(Time::from_ps(123_040)));
        t.set_enabled(false);
        assert_eq!(t.free_from(Time::ZERO), None);
    }

    #[test]
    fn a_pause_of_any_of_the_priorities_holds_the_start() {
        let mut t = tx();
        let mut q = [0u16; PRIORITIES];
        q[3] = 100; // 512 ns at 100G
        q[4] = 200; // 1024 ns
        t.receive_pfc(Time::ZERO, 0b1_1000, &q);
        assert_eq!(t.resume_at(1 << 3, Time::ZERO), Time::from_ns(512));
        assert_eq!(t.resume_at(0b1_1000, Time::ZERO), Time::from_ns(1024));
        assert_eq!(t.resume_at(1 << 1, Time::ZERO), Time::ZERO);
        // A source ready every 300 ns from 0: the first slot at or after the pause's end.
        let slots = |x: Time| Some(Time::from_ns(x.as_ps().div_ceil(300_000) * 300));
        assert_eq!(
            t.first_start(Time::ZERO, 1 << 3, slots),
            Some(Time::from_ns(600))
        );
    }

    #[test]
    fn pfc_frames_go_first_and_are_counted() {
        let mut t = tx();
        t.send_xoff(1 << 3);
        assert!(t.has_pfc_pending());
        let (pkt, req) = t.start_pfc(Time::from_ns(5), Vec::new()).unwrap();
        assert_eq!((pkt.len, req.xoff_mask()), (64, 1 << 3));
        assert_eq!(t.counters.tx_pfc_frames, 1);
        assert_eq!(t.busy_until, Time::from_ns(5) + Time::from_ps(6_720));
        // Refreshed every half pause time: 0xFFFF × 5.12 ns = 335,539.2 ns at 100G.
        assert_eq!(
            t.pfc_refresh_at(),
            Some(Time::from_ns(5) + Time::from_ps(167_769_600))
        );
    }

    #[test]
    fn with_pause_one_frame_stops_the_link_and_the_last_xon_resumes_it() {
        let mut t = tx().with_flow_control(FlowControl::Pause);
        t.send_xoff(1 << 3);
        let (pkt, _) = t.start_pfc(Time::ZERO, Vec::new()).unwrap();
        assert_eq!(
            &pkt.data[14..18],
            &[0x00, 0x01, 0xFF, 0xFF],
            "PAUSE, 0xFFFF quanta"
        );
        t.send_xoff(1 << 4);
        assert!(
            t.start_pfc(Time::from_us(1), Vec::new()).is_some(),
            "a refresh"
        );
        // One priority resumes, the other still holds the link: no frame.
        t.send_xon(1 << 3);
        assert!(t.has_pfc_pending());
        assert!(t.start_pfc(Time::from_us(2), Vec::new()).is_none());
        t.send_xon(1 << 4);
        let (pkt, _) = t.start_pfc(Time::from_us(3), Vec::new()).unwrap();
        assert_eq!(&pkt.data[16..18], &[0, 0], "PAUSE 0: resume");
        assert_eq!(
            (t.counters.tx_pause_frames, t.counters.tx_pfc_frames),
            (3, 0)
        );
        // A PAUSE received stops every priority.
        let mut r = tx().with_flow_control(FlowControl::Pause);
        r.receive_pause(Time::ZERO, 100);
        assert_eq!(r.resume_at(1 << 0, Time::ZERO), Time::from_ns(512));
        assert_eq!(r.resume_at(1 << 7, Time::ZERO), Time::from_ns(512));
    }

    #[test]
    fn the_next_start_is_kept_until_touched() {
        let t = tx();
        assert_eq!(
            t.next_start(|| Some(Time::from_ns(1))),
            Some(Time::from_ns(1))
        );
        assert_eq!(t.next_start(|| None), Some(Time::from_ns(1)));
        t.touch();
        assert_eq!(t.next_start(|| None), None);
    }

    #[test]
    fn catch_up_dates_back_to_the_wire_and_the_pause() {
        let mut t = tx();
        t.set_catch_up(Time::from_us(10));
        t.start(Time::from_us(1), 1518);
        let now = Time::from_us(20);
        assert_eq!(t.earliest_start(now, 0), Time::from_us(10));
        // A pause of 100 quanta (512 ns) from 12 µs: frames of priority 3 start after it.
        let mut q = [0u16; PRIORITIES];
        q[3] = 100;
        t.receive_pfc(Time::from_us(12), 1 << 3, &q);
        assert_eq!(t.earliest_start(now, 1 << 3), Time::from_ns(12_512));
        assert_eq!(t.earliest_start(now, 1 << 4), Time::from_us(10));
    }
}
