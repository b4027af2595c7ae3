//! The link layer of one port, as a switch port and a host NIC both own it: the
//! [`Transmitter`] (wire, link state, counters) and the link protocol the port speaks
//! with its peer (PFC, 802.3x PAUSE, UE credit-based flow control, or none). It decides
//! which control frame goes next
//! ([`LinkLayer::poll_control`], ahead of every data frame), consumes the control frames
//! received ([`LinkLayer::receive_control`]), and answers whether a data frame of some
//! priorities may start ([`LinkLayer::gate`]: open, until a time, or blocked until an
//! event changes it).
//!
//! * [`control`]: what a frame is to the link ([`FrameClass`]) and the control frames
//!   ([`ControlFrame`], parsed and emitted).
//! * [`pause`]: PFC and PAUSE both ways.
//! * [`cbfc`]: credits both ways.
//! * [`llr`]: link-level retry both ways (composes with any of the above).
//!
//! What is queued behind the link layer differs (a switch port's eight queues and its
//! scheduler; a NIC's control frames and flows), so the owner says when its frames are
//! ready and which priorities they travel on; the link layer says when one may start
//! ([`LinkLayer::first_start`]).

pub mod cbfc;
pub mod control;
pub mod llr;
pub mod pause;

pub use control::{ControlFrame, FrameClass};
pub use pause::{Heard, PauseSetup, Unhonoured};

use crate::config::FlowControl;
use crate::counters::PortCounters;
use crate::drop_reason::DropReason;
use crate::packet::{Fcs, Hop, Packet};
use crate::transmitter::Transmitter;
use cbfc::{CbfcLink, CbfcSetup, CreditMessage};
use llr::{Admit, Arrival, LlrLink, LlrSetup, Outgoing};
use lossless_buffer_model::pfc::PfcRequest;
use lossless_buffer_model::{Rate, Time, PRIORITIES};
use pause::PauseLink;

/// May a frame start: what the link protocol says for its priorities at some time.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Gate {
    /// Now.
    Open,
    /// Not before this time (a pause that ends then, unless a frame received changes it).
    Until(Time),
    /// Not until something the link layer is told changes it (no time is known).
    Blocked,
}

/// A control frame the link layer started: the frame, and the PFC request it answers.
#[derive(Debug)]
pub struct Sent {
    /// The frame, its class in its metadata.
    pub pkt: Packet,
    /// The XOFF/XON request a PFC or PAUSE frame carries (None: a credit message).
    pub request: Option<PfcRequest>,
}

/// The link layer of one port.
#[derive(Clone, Debug)]
pub struct LinkLayer {
    /// The transmitter: wire, link and enable state, frame counters.
    pub tx: Transmitter,
    /// Source address of the control frames.
    mac: [u8; 6],
    /// Wire time of a control frame at this line rate.
    control_wire: Time,
    /// PFC or PAUSE, both ways.
    pause: PauseLink,
    /// Credits both ways, on a port that speaks CBFC.
    cbfc: Option<Box<CbfcLink>>,
    /// Link-level retry both ways, on a port that speaks LLR.
    llr: Option<Box<LlrLink>>,
    /// Line time of a control ordered set.
    ordered_set_wire: Time,
    /// When the link last went down (for LLR's PCS lost timeout).
    down_since: Time,
    /// What CBFC generations are drawn from (the MAC's low bytes unless set).
    generation_base: u32,
    /// Times CBFC's counters started again on this port.
    cbfc_starts: u32,
}

impl LinkLayer {
    /// The link layer of a port at `speed` with MAC `mac` (the source of its control
    /// frames), speaking PFC or PAUSE as `setup` says.
    pub fn new(speed: Rate, mac: [u8; 6], setup: PauseSetup) -> LinkLayer {
        LinkLayer {
            tx: Transmitter::new(speed),
            mac,
            control_wire: speed.wire_time(crate::wire::pfc::PFC_FRAME_LEN as u64),
            pause: PauseLink::new(speed, setup),
            cbfc: None,
            llr: None,
            down_since: Time::ZERO,
            ordered_set_wire: speed.time_for_bytes_ceil(control::ORDERED_SET_BYTES),
            generation_base: u32::from_be_bytes([mac[2], mac[3], mac[4], mac[5]]),
            cbfc_starts: 0,
        }
    }

    /// Speak CBFC as `setup` says, with a peer whose receiver has the credits `peer` gives
    /// (the sender's limits; this port's own as long as the peer is not known).
    pub fn enable_cbfc(&mut self, setup: CbfcSetup, peer: &CbfcSetup) {
        self.cbfc = Some(Box::new(CbfcLink::new(self.speed(), setup, peer)));
        self.tx.touch();
    }

    /// CBFC state and counters (None: the port does not speak it).
    #[inline]
    pub fn cbfc(&self) -> Option<&CbfcLink> {
        self.cbfc.as_deref()
    }

    /// Speak LLR as `setup` says.
    pub fn enable_llr(&mut self, setup: LlrSetup) {
        self.llr = Some(Box::new(LlrLink::new(self.speed(), setup)));
        self.tx.touch();
    }

    /// LLR state and counters (None: the port does not speak it).
    #[inline]
    pub fn llr(&self) -> Option<&LlrLink> {
        self.llr.as_deref()
    }

    /// LLR state, to change (tests start it near the sequence wrap).
    pub fn llr_mut(&mut self) -> Option<&mut LlrLink> {
        self.llr.as_deref_mut()
    }

    /// Does anything besides pauses hold data frames back (credits, a full replay
    /// buffer)?
    #[inline(always)]
    pub fn gates_data(&self) -> bool {
        self.cbfc.is_some() || self.llr.is_some()
    }

    /// May a data frame of `len` bytes from egress queue `queue` start, as far as the
    /// credits of its channel and the replay buffer go (always, on a port with neither)?
    #[inline(always)]
    pub fn may_send(&self, queue: u8, len: u32) -> bool {
        self.cbfc.as_ref().is_none_or(|c| c.may_send(queue, len))
            && self
                .llr
                .as_ref()
                .is_none_or(|l| !l.covers(queue) || l.may_send(len))
    }

    /// A data frame `pkt` from egress queue `queue` starts at `start`: counted, the wire
    /// busy for it, its channel's credits consumed, numbered and kept for replay under
    /// LLR. False when LLR drops it instead (initialising or flushed, action `discard`):
    /// nothing was sent.
    #[inline(always)]
    pub fn start_data(&mut self, start: Time, pkt: &mut Packet, queue: u8) -> bool {
        match &mut self.llr {
            Some(l) if l.covers(queue) => {
                if l.start(pkt, queue, start) == Admit::Discard {
                    self.tx.touch();
                    return false;
                }
            }
            _ => pkt.hop = Hop::PLAIN,
        }
        self.tx.start(start, pkt.len);
        if let Some(c) = &mut self.cbfc {
            c.sent(queue, pkt.len);
        }
        true
    }

    /// The MAC takes a frame whose last bit arrived at `now`: its FCS checked and, under
    /// LLR, its sequence number. Refused for the reason given (a bad FCS counted in
    /// `rx_bad_fcs`); a NACK or an ACK may become due.
    #[inline(always)]
    pub fn arrive(&mut self, pkt: &Packet, now: Time) -> Result<(), DropReason> {
        if pkt.hop == Hop::PLAIN && self.llr.is_none() {
            return Ok(());
        }
        self.arrive_checked(pkt, now)
    }

    #[inline(never)]
    fn arrive_checked(&mut self, pkt: &Packet, now: Time) -> Result<(), DropReason> {
        let fcs = pkt.hop.fcs();
        if fcs == Fcs::Bad {
            self.tx.counters.rx_bad_fcs += 1;
        }
        if self.llr.is_none() && pkt.hop.llr_seq().is_some() {
            // Numbered by a peer that speaks LLR to a port that does not.
            return Err(DropReason::LlrNotEnabled);
        }
        let taken = match &mut self.llr {
            Some(l) if !pkt.meta.class.is_control() => {
                self.tx.touch();
                l.arrive(pkt.hop, pkt.len, now) == Arrival::Take
            }
            _ => fcs == Fcs::Good,
        };
        match (taken, fcs) {
            (true, _) => Ok(()),
            (false, Fcs::Good) => Err(DropReason::LlrDiscard),
            (false, Fcs::Bad) => Err(DropReason::BadFcs),
            (false, Fcs::Poisoned) => Err(DropReason::Poisoned),
        }
    }

    /// A received frame of traffic class `tc`, `len` bytes, was stored (its channel's
    /// credits counted).
    #[inline]
    pub fn stored(&mut self, tc: u8, len: u32) {
        if let Some(c) = &mut self.cbfc {
            c.stored(tc, len);
        }
    }

    /// A received frame of traffic class `tc`, `len` bytes, left the buffer (its channel's
    /// credits freed: a CF_Update becomes due).
    #[inline]
    pub fn drained(&mut self, tc: u8, len: u32) {
        if let Some(c) = &mut self.cbfc {
            c.drained(tc, len);
            self.tx.touch();
        }
    }

    /// PFC per priority, or 802.3x PAUSE.
    pub fn flow_control(&self) -> FlowControl {
        self.pause.mode()
    }

    /// Line rate.
    pub fn speed(&self) -> Rate {
        self.tx.speed()
    }

    /// Frame, byte and PFC counters.
    pub fn counters(&self) -> &PortCounters {
        &self.tx.counters
    }

    /// Ask the peer to stop sending the priorities in `mask` (an XOFF goes out next).
    pub fn send_xoff(&mut self, mask: u8) {
        self.pause.send_xoff(mask);
        self.tx.touch();
    }

    /// Let the peer resume the priorities in `mask` (an XON goes out next).
    pub fn send_xon(&mut self, mask: u8) {
        self.pause.send_xon(mask);
        self.tx.touch();
    }

    /// Priorities this port holds in XOFF toward its peer.
    #[inline]
    pub fn xoff_mask(&self) -> u8 {
        self.pause.xoff_mask()
    }

    /// When the next control frame may go out (it goes before any data frame): at once
    /// for a PFC or PAUSE frame, when its spacing allows for a credit message.
    #[inline(always)]
    pub fn control_due(&self) -> Option<Time> {
        if self.pause.has_pending() {
            return Some(Time::ZERO);
        }
        let retry = self.llr.as_ref().and_then(|l| l.next_due());
        let credit = self.cbfc.as_ref().map(|c| c.next_due());
        match (retry, credit) {
            (Some(r), Some(c)) => Some(r.min(c)),
            (r, c) => r.or(c),
        }
    }

    /// Is a control frame due by `now`?
    #[inline(always)]
    pub fn control_due_by(&self, now: Time) -> bool {
        self.control_due().is_some_and(|t| t <= now)
    }

    /// Has the link layer nothing outstanding: no pause frame pending and, under CBFC, no
    /// credits held either way and every freed credit announced? What it still sends
    /// then (CF_Updates at the maximum spacing, CC_Updates) is upkeep that a run waiting
    /// for the network to go idle need not wait for.
    pub fn settled(&self) -> bool {
        !self.pause.has_pending()
            && self.cbfc.as_ref().is_none_or(|c| c.settled())
            && self.llr.as_ref().is_none_or(|l| l.settled())
    }

    /// When the link layer next has something to do on its own (an XOFF refresh).
    pub fn poll_timeout(&self) -> Option<Time> {
        self.pause.refresh_at()
    }

    /// Act on what is due at `now` (queue the XOFF refresh); true if anything was.
    pub fn handle_timeout(&mut self, now: Time) -> bool {
        let due = self.pause.refresh(now);
        if due {
            self.tx.touch();
        }
        due
    }

    /// Start the pending control frame at `now`, built in `buf`: counted, the wire busy
    /// for it. Control frames answer the state now, so they are never dated back. None
    /// when the request needs no frame (a PAUSE link with another priority still held).
    #[inline]
    pub fn poll_control(&mut self, now: Time, buf: Vec<u8>) -> Option<Sent> {
        if self.pause.has_pending() {
            self.tx.touch();
            if let Some((frame, request)) = self.pause.take_frame(now, &mut self.tx.counters) {
                let pkt = frame.emit(buf, self.mac);
                self.tx.start_control(now, self.control_wire);
                return Some(Sent {
                    pkt,
                    request: Some(request),
                });
            }
        }
        if let Some(l) = &mut self.llr {
            if let Some(out) = l.take(now) {
                self.tx.touch();
                return Some(match out {
                    Outgoing::Control(m) => {
                        let pkt = ControlFrame::Retry(m).emit(buf, self.mac);
                        self.tx.start_control(now, self.ordered_set_wire);
                        Sent { pkt, request: None }
                    }
                    Outgoing::Replay(pkt) => {
                        crate::buffers::give(buf);
                        let wire = self.speed().wire_time(pkt.len as u64);
                        self.tx.start_control(now, wire);
                        Sent { pkt, request: None }
                    }
                });
            }
        }
        // Under LLR a frame still in the replay buffer is not lost, whatever the wire did to
        // it: a replay may still bring it, and its receiver then stores it. A CC_Update
        // counts only what left the buffer (acknowledged, or flushed: lost for good), so
        // no frame is counted both as lost and as stored (docs/link-control.md).
        let in_replay = match (&self.llr, &self.cbfc) {
            (Some(l), Some(c)) => c.credits_by_channel(l.held()),
            _ => [0; cbfc::VCS],
        };
        let msg = self.cbfc.as_mut()?.take(now, &in_replay)?;
        self.tx.touch();
        let ordered_set = matches!(msg, CreditMessage::CfUpdate { .. });
        let pkt = ControlFrame::Credit(msg).emit(buf, self.mac);
        let wire = if ordered_set {
            self.ordered_set_wire
        } else {
            self.speed().wire_time(pkt.len as u64)
        };
        if !pkt.meta.class.is_ordered_set() {
            self.tx.counters.tx_packets += 1;
            self.tx.counters.tx_bytes += pkt.len as u64;
        }
        self.tx.start_control(now, wire);
        Some(Sent { pkt, request: None })
    }

    /// Does this port speak a UE link protocol (CBFC or LLR), and so read frames of the
    /// link-control EtherType 0x88B5 as its messages?
    #[inline]
    pub fn speaks_link_control(&self) -> bool {
        self.cbfc.is_some() || self.llr.is_some()
    }

    /// The link-control message `data` (a received frame, from its destination MAC)
    /// carries, if this port reads it as one: None on a port that speaks neither CBFC nor
    /// LLR, and for any frame not of EtherType 0x88B5 untagged — those are data, forwarded
    /// as any other EtherType. A malformed message is refused for what is wrong with it.
    #[inline]
    pub fn read_link_control(&self, data: &[u8]) -> Option<Result<ControlFrame, DropReason>> {
        if !self.speaks_link_control() || !crate::wire::link_control::is_link_control(data) {
            return None;
        }
        Some(ControlFrame::parse_link_control(data))
    }

    /// Take a control frame received at `now`; refused for the reason given when this
    /// port does not speak it.
    #[inline]
    pub fn receive_control(&mut self, now: Time, frame: ControlFrame) -> Result<Heard, DropReason> {
        if let ControlFrame::Credit(msg) = frame {
            let c = self.cbfc.as_mut().ok_or(DropReason::CbfcNotEnabled)?;
            let refused = c.counters.implausible_rx;
            c.receive(msg);
            if c.counters.implausible_rx > refused {
                // The two ends' counts disagree (a forged or replayed message moved the
                // peer's, or ours): no update can bring them back, so both start again
                // from what each holds, as on link up (docs/link-control.md).
                self.restart_cbfc(now);
            }
            self.tx.touch();
            return Ok(Heard::Credit);
        }
        if let ControlFrame::Retry(msg) = frame {
            let l = self.llr.as_mut().ok_or(DropReason::LlrNotEnabled)?;
            l.receive(msg, now);
            self.tx.touch();
            return Ok(Heard::Retry);
        }
        let heard = self.pause.receive(now, frame, &mut self.tx.counters);
        if heard.is_ok() {
            self.tx.touch();
        }
        heard
    }

    /// Priorities the peer holds paused at `t`.
    #[inline]
    pub fn paused_mask(&self, t: Time) -> u8 {
        self.pause.timers.paused_mask(t)
    }

    /// May a frame on priorities `prios` start at `t`, given the frames received so far?
    #[inline]
    pub fn gate(&self, prios: u8, t: Time) -> Gate {
        let at = self.resume_at(prios, t);
        if at == t {
            Gate::Open
        } else {
            Gate::Until(at)
        }
    }

    /// Earliest time at or after `t` at which none of `prios` is paused, given the
    /// frames received so far (frames still pending may extend or end a pause).
    #[inline]
    pub fn resume_at(&self, prios: u8, mut t: Time) -> Time {
        let timers = &self.pause.timers;
        loop {
            let paused = timers.paused_mask(t) & prios;
            if paused == 0 {
                return t;
            }
            t = (0..PRIORITIES)
                .filter(|p| paused & (1 << p) != 0)
                .map(|p| timers.resume_at(p, t))
                .max()
                .unwrap_or(t);
        }
    }

    /// The first time at or after `from` at which a source whose frames are ready at
    /// `ready_at(t)` (the earliest time ≥ t it allows one; None: it is done) may start a
    /// frame on priorities `prios`, as far as pauses go.
    pub fn first_start(
        &self,
        from: Time,
        prios: u8,
        ready_at: impl Fn(Time) -> Option<Time>,
    ) -> Option<Time> {
        let mut t = from;
        loop {
            let ready = ready_at(t)?;
            match self.gate(prios, ready) {
                Gate::Open => return Some(ready),
                Gate::Until(u) => t = u,
                Gate::Blocked => return None,
            }
        }
    }

    /// The earliest a frame on priorities `prios` polled at `now` may be dated to: `now`
    /// itself, or with a catch-up window the latest of its start, the end of the frame
    /// before, and the end of the last pause of those priorities.
    #[inline]
    pub fn earliest_start(&self, now: Time, prios: u8) -> Time {
        let Some(mut lo) = self.tx.catch_up_from(now) else {
            return now;
        };
        for p in (0..PRIORITIES).filter(|p| prios & (1 << p) != 0) {
            lo = lo.max(self.pause.timers.unpaused_since(p, now));
        }
        lo
    }

    /// Bring the link up or down at `now`; down forgets the pauses the peer asked for.
    pub fn set_link(&mut self, up: bool, now: Time) {
        let was = self.tx.link_up;
        self.tx.link_up = up;
        if !up {
            self.pause.timers.clear(now);
            if was {
                self.down_since = now;
            }
        }
        if let Some(l) = &mut self.llr {
            match up {
                false => l.link_down(),
                true if !was => l.link_up(now.saturating_sub(self.down_since), now),
                true => {}
            }
        }
        if up && !was {
            // Credits start again with the link: frames in flight were lost with it, and
            // what either end holds is said in the INIT handshake.
            self.restart_cbfc(now);
        }
        self.tx.touch();
    }

    /// Start CBFC's counters again from zero at `now` with the INIT handshake (a link that
    /// came up, a switch that started): each time a new generation, from this port's MAC
    /// and how many times it has started.
    pub fn restart_cbfc(&mut self, now: Time) {
        self.cbfc_starts = self.cbfc_starts.wrapping_add(1);
        let generation = self.generation_base ^ self.cbfc_starts.rotate_left(24);
        if let Some(c) = &mut self.cbfc {
            c.restart(generation, now);
            self.tx.touch();
        }
    }

    /// Set what this port's CBFC generations are drawn from (a switch process that starts
    /// again gives a new base, so its INIT is told from the last one's).
    pub fn set_generation_base(&mut self, base: u32) {
        self.generation_base = base;
    }

    /// Start LLR again with its INIT at `now` (a switch that started: its peer's receiver
    /// expects a sequence it no longer knows).
    pub fn restart_llr(&mut self, now: Time) {
        if let Some(l) = &mut self.llr {
            l.reinit(now);
            self.tx.touch();
        }
    }

    /// Time priority `p` has been paused up to `now` (pfcstat pause duration).
    pub fn paused_time(&self, p: usize, now: Time) -> Time {
        self.pause.timers.paused_total(p, now)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn link(mode: FlowControl) -> LinkLayer {
        LinkLayer::new(
            Rate::gbps(100),
            [2, 0, 0, 0, 0, 1],
            PauseSetup {
                mode,
                response: Time::ZERO,
                quanta: 0xFFFF,
                honoured: 0xFF,
                obey: true,
                unhonoured: Unhonoured::Drop,
            },
        )
    }

    fn pfc(enable: u8, quanta: [u16; 8]) -> ControlFrame {
        ControlFrame::Pfc { enable, quanta }
    }

    #[test]
    fn a_pause_of_any_of_the_priorities_holds_the_start() {
        let mut t = link(FlowControl::Pfc);
        let mut q = [0u16; PRIORITIES];
        q[3] = 100; // 512 ns at 100G
        q[4] = 200; // 1024 ns
        t.receive_control(Time::ZERO, pfc(0b1_1000, q)).unwrap();
        assert_eq!(t.gate(1 << 3, Time::ZERO), Gate::Until(Time::from_ns(512)));
        assert_eq!(
            t.gate(0b1_1000, Time::ZERO),
            Gate::Until(Time::from_ns(1024))
        );
        assert_eq!(t.gate(1 << 1, Time::ZERO), Gate::Open);
        // A source ready every 300 ns from 0: the first slot at or after the pause's end.
        let slots = |x: Time| Some(Time::from_ns(x.as_ps().div_ceil(300_000) * 300));
        assert_eq!(
            t.first_start(Time::ZERO, 1 << 3, slots),
            Some(Time::from_ns(600))
        );
    }

    #[test]
    fn pfc_frames_go_first_and_are_counted() {
        let mut t = link(FlowControl::Pfc);
        t.send_xoff(1 << 3);
        assert!(t.control_due_by(Time::ZERO));
        let s = t.poll_control(Time::from_ns(5), Vec::new()).unwrap();
        assert_eq!((s.pkt.len, s.request.unwrap().xoff_mask()), (64, 1 << 3));
        assert_eq!(s.pkt.meta.class, FrameClass::Pfc);
        assert_eq!(t.counters().tx_pfc_frames, 1);
        assert_eq!(t.tx.busy_until, Time::from_ns(5) + Time::from_ps(6_720));
        // Refreshed every half pause time: 0xFFFF × 5.12 ns = 335,539.2 ns at 100G.
        assert_eq!(
            t.poll_timeout(),
            Some(Time::from_ns(5) + Time::from_ps(167_769_600))
        );
    }

    #[test]
    fn with_pause_one_frame_stops_the_link_and_the_last_xon_resumes_it() {
        let mut t = link(FlowControl::Pause);
        t.send_xoff(1 << 3);
        let s = t.poll_control(Time::ZERO, Vec::new()).unwrap();
        assert_eq!(
            &s.pkt.data[14..18],
            &[0x00, 0x01, 0xFF, 0xFF],
            "PAUSE, 0xFFFF quanta"
        );
        assert_eq!(s.pkt.meta.class, FrameClass::Pause);
        t.send_xoff(1 << 4);
        assert!(
            t.poll_control(Time::from_us(1), Vec::new()).is_some(),
            "a refresh"
        );
        // One priority resumes, the other still holds the link: no frame.
        t.send_xon(1 << 3);
        assert!(t.control_due_by(Time::ZERO));
        assert!(t.poll_control(Time::from_us(2), Vec::new()).is_none());
        t.send_xon(1 << 4);
        let s = t.poll_control(Time::from_us(3), Vec::new()).unwrap();
        assert_eq!(&s.pkt.data[16..18], &[0, 0], "PAUSE 0: resume");
        assert_eq!(
            (t.counters().tx_pause_frames, t.counters().tx_pfc_frames),
            (3, 0)
        );
        // A PAUSE received stops every priority.
        let mut r = link(FlowControl::Pause);
        r.receive_control(Time::ZERO, ControlFrame::Pause { quanta: 100 })
            .unwrap();
        assert_eq!(r.gate(1 << 0, Time::ZERO), Gate::Until(Time::from_ns(512)));
        assert_eq!(r.gate(1 << 7, Time::ZERO), Gate::Until(Time::from_ns(512)));
    }

    #[test]
    fn a_frame_the_port_does_not_speak_is_refused() {
        let mut t = link(FlowControl::Pfc);
        assert_eq!(
            t.receive_control(Time::ZERO, ControlFrame::Pause { quanta: 1 }),
            Err(DropReason::Pause8023xIgnored)
        );
        let mut p = link(FlowControl::Pause);
        assert_eq!(
            p.receive_control(Time::ZERO, pfc(1 << 3, [1; 8])),
            Err(DropReason::PfcNotEnabled)
        );
        assert_eq!(t.counters().rx_pfc_frames + p.counters().rx_pause_frames, 0);
    }

    #[test]
    fn catch_up_dates_back_to_the_wire_and_the_pause() {
        let mut t = link(FlowControl::Pfc);
        t.tx.set_catch_up(Time::from_us(10));
        t.tx.start(Time::from_us(1), 1518);
        let now = Time::from_us(20);
        assert_eq!(t.earliest_start(now, 0), Time::from_us(10));
        // A pause of 100 quanta (512 ns) from 12 µs: frames of priority 3 start after it.
        let mut q = [0u16; PRIORITIES];
        q[3] = 100;
        t.receive_control(Time::from_us(12), pfc(1 << 3, q))
            .unwrap();
        assert_eq!(t.earliest_start(now, 1 << 3), Time::from_ns(12_512));
        assert_eq!(t.earliest_start(now, 1 << 4), Time::from_us(10));
    }
}
