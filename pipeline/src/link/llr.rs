//! Ultra Ethernet link-level retry (UE 1.0 §5.1, as SAI's LLR attributes and SONiC's LLR
//! HLD state it) on one port, both ways (docs/physics.md, "Link-level retry").
//!
//! * The sender side numbers every frame it sends on the hop (a 20-bit sequence number,
//!   carried in the preamble in UE and in [`Hop`] here) and keeps a copy in its replay
//!   buffer, bounded in frames and in bytes. A cumulative ACK frees the copies up to the
//!   sequence number it carries; a NACK frees those and replays every later one
//!   (go-back-N); so does the replay timer when no ACK makes progress. More replays
//!   without progress than `max_replay_count` allow, or a frame older than the data age
//!   timeout, FLUSH the buffer: its frames are lost, and with `re_init_on_flush` the
//!   sender starts again with an INIT.
//! * The receiver side expects the next sequence number. A good frame with it is taken
//!   and acknowledged (a cumulative ACK every `ctlos_spacing` bytes, and no later than
//!   that many bytes' line time after the first frame not yet acknowledged); a bad frame
//!   (FCS) or a gap sends one NACK naming the last good frame, and everything is then
//!   discarded until the expected frame comes back. A duplicate is discarded. A poisoned
//!   frame is taken off the sequence (the sender meant it to fail) but never retried.
//!
//! Sequence numbers are 20 bits: the sources disagree (SONiC's LLR test plan wraps a
//! sequence at 524,287, SAI's and SONiC's buffer bounds go up to 2^19 frames); 20 bits with
//! at most 2^19 frames outstanding is the reading under which both hold, and a window of at
//! most half the space is what lets a receiver tell a duplicate from a frame after a gap.

use crate::counter_group;
use crate::packet::{Fcs, Hop, Packet};
use lossless_buffer_model::{Bytes, Rate, Time};
use std::collections::VecDeque;

/// Sequence numbers wrap at 2^20.
pub const SEQ_MODULUS: u32 = 1 << 20;
/// At most this many frames may be outstanding (half the sequence space).
pub const MAX_OUTSTANDING_FRAMES: u32 = 1 << 19;
/// `max_replay_count` that means "replay without limit".
pub const UNLIMITED_REPLAYS: u8 = 255;

/// `a − b` in sequence space, as a signed distance (valid within half the space).
#[inline]
fn seq_diff(a: u32, b: u32) -> i32 {
    let d = a.wrapping_sub(b) & (SEQ_MODULUS - 1);
    if d >= SEQ_MODULUS / 2 {
        d as i32 - SEQ_MODULUS as i32
    } else {
        d as i32
    }
}

#[inline]
fn seq_add(a: u32, n: u32) -> u32 {
    a.wrapping_add(n) & (SEQ_MODULUS - 1)
}

/// What the sender does with a data frame while it cannot retry (initialising, flushed).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum FrameAction {
    /// Drop it (counted in `tx_discard`).
    Discard,
    /// Hold it back until the link can retry again.
    Block,
    /// Send it as a plain frame, without a sequence number (SAI's default).
    #[default]
    BestEffort,
}

impl lossless_buffer_model::Named for FrameAction {
    const WORDS: &'static [(&'static str, FrameAction)] = &[
        ("discard", FrameAction::Discard),
        ("block", FrameAction::Block),
        ("best_effort", FrameAction::BestEffort),
    ];
}

/// How a port's LLR is set up (SONiC `LLR_PROFILE`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LlrSetup {
    /// Frames the replay buffer holds at most (`max_outstanding_frames`).
    pub max_frames: u32,
    /// Bytes the replay buffer holds at most (`max_outstanding_bytes`).
    pub max_bytes: u64,
    /// Replay the whole buffer when no ACK made progress for this long (ZERO: never).
    pub replay_timer: Time,
    /// Replays allowed without progress before a FLUSH (255: no limit).
    pub max_replay_count: u8,
    /// Bytes received between two ACKs (`ctlos_spacing_bytes`).
    pub ctlos_spacing: Bytes,
    /// FLUSH when the oldest frame in the buffer is older than this (ZERO: never).
    pub data_age_timeout: Time,
    /// What data frames get while the link initialises.
    pub init_action: FrameAction,
    /// What data frames get while the link is flushed and not yet initialised again.
    pub flush_action: FrameAction,
    /// Initialise again at once after a FLUSH (SONiC always does).
    pub re_init_on_flush: bool,
    /// FLUSH when the link was down longer than this (ZERO: never).
    pub pcs_lost_timeout: Time,
    /// The egress queues (and a NIC's priorities) whose frames LLR numbers and replays,
    /// bit = queue: the traffic classes eligible for retry. Other frames go out plain,
    /// past the replay buffer: a bad one is lost.
    pub eligible: u8,
}

impl Default for LlrSetup {
    /// SAI's and SONiC's defaults where they have one (one replay, ACKs every 2,048
    /// bytes, best effort while initialising or flushed, re-INIT on FLUSH); a buffer of
    /// 128 frames and 64 KiB and a 5 µs replay timer (SONiC's examples) where they have
    /// none.
    fn default() -> Self {
        LlrSetup {
            max_frames: 128,
            max_bytes: 64 * 1024,
            replay_timer: Time::from_us(5),
            max_replay_count: 1,
            ctlos_spacing: Bytes(2048),
            data_age_timeout: Time::ZERO,
            init_action: FrameAction::BestEffort,
            flush_action: FrameAction::BestEffort,
            re_init_on_flush: true,
            pcs_lost_timeout: Time::ZERO,
            eligible: 0xFF,
        }
    }
}

/// What a link needs of its replay buffer to run at line rate ([`LlrSetup::need`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ReplayNeed {
    /// From a frame's first bit leaving to the ACK that frees it.
    pub round_trip: Time,
    /// Bytes sent in that time, plus one frame.
    pub bytes: u64,
    /// Frames of the smallest size sent in that time, plus one.
    pub frames: u64,
}

impl LlrSetup {
    /// What the replay buffer needs to hold to keep a port of `speed` with `propagation`
    /// one way and frames up to `mtu` at line rate (docs/physics.md, "Replay buffer for
    /// line rate"): a frame's copy stays until the ACK that covers it arrives, which is
    /// sent once `ctlos_spacing` bytes more have arrived (or their line time passed),
    /// may wait behind one frame the other way, and crosses the cable back.
    pub fn need(&self, speed: Rate, propagation: Time, mtu: u32) -> ReplayNeed {
        let round_trip = speed.wire_time(mtu as u64)
            + propagation
            + speed.time_for_bytes(self.ctlos_spacing.get())
            + speed.wire_time(mtu as u64)
            + speed.time_for_bytes(crate::link::control::ORDERED_SET_BYTES)
            + propagation;
        let bytes = speed.bytes_in(round_trip) + mtu as u64;
        let min_wire = speed.wire_time(64).as_ps().max(1);
        let frames = round_trip.as_ps().div_ceil(min_wire) + 1;
        ReplayNeed {
            round_trip,
            bytes,
            frames,
        }
    }
}

/// An LLR control ordered set.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LlrMessage {
    /// The sender starts (again): its next frame has sequence number `seq`.
    Init {
        /// Sequence number of the sender's next frame.
        seq: u32,
    },
    /// The receiver answers an INIT: it now expects `seq`.
    InitEcho {
        /// The sequence number it expects.
        seq: u32,
    },
    /// Every frame up to and including `seq` arrived good.
    Ack {
        /// The last good frame.
        seq: u32,
    },
    /// Frames after `seq` were lost or bad: replay them.
    Nack {
        /// The last good frame.
        seq: u32,
    },
}

/// The sender's state (SAI `sai_port_llr_tx_status_t`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum TxState {
    /// Sending INIT until the peer echoes it.
    Init,
    /// Sending new frames, each numbered and kept.
    #[default]
    Advance,
    /// Sending the buffer again.
    Replay,
    /// Gave up: the buffer was dropped (and not initialised again).
    Flush,
}

impl TxState {
    /// Its name in reports.
    pub fn name(self) -> &'static str {
        match self {
            TxState::Init => "init",
            TxState::Advance => "advance",
            TxState::Replay => "replay",
            TxState::Flush => "flush",
        }
    }
}

/// The receiver's state (SAI `sai_port_llr_rx_status_t`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum RxState {
    /// Taking frames in order and acknowledging them.
    #[default]
    SendAcks,
    /// A NACK was sent; discarding until the expected frame comes back.
    NackSent,
}

impl RxState {
    /// Its name in reports.
    pub fn name(self) -> &'static str {
        match self {
            RxState::SendAcks => "send_acks",
            RxState::NackSent => "nack_sent",
        }
    }
}

counter_group! {
    /// LLR counters of one port (SAI_PORT_STAT_LLR_*; SONiC's CLI drops the prefix).
    pub struct LlrCounters {
        /// LLR frames sent for the first time.
        tx_ok: Counter = "SAI_PORT_STAT_LLR_TX_OK",
        /// Data frames dropped because the link could not retry (INIT or FLUSH, action `discard`).
        tx_discard: Counter = "SAI_PORT_STAT_LLR_TX_DISCARD",
        /// Replays completed (every frame of the buffer sent again).
        tx_replay: Counter = "SAI_PORT_STAT_LLR_TX_REPLAY",
        /// Frames sent again in replays.
        tx_replayed_frames: Counter = "lossless: frames replayed",
        /// FLUSHes: the replay buffer given up.
        tx_flush: Counter = "lossless: SAI_PORT_ERROR_STATUS_LLR_TX_FLUSH events",
        /// Frames lost in FLUSHes (in the buffer, not yet acknowledged).
        tx_flushed_frames: Counter = "lossless: frames dropped by FLUSH",
        /// Most frames the replay buffer has held.
        tx_buffer_frames_watermark: Gauge = "lossless: replay buffer frames watermark",
        /// Most bytes the replay buffer has held.
        tx_buffer_bytes_watermark: Gauge = "lossless: replay buffer bytes watermark",
        /// INIT ordered sets sent.
        tx_init_ctl_os: Counter = "SAI_PORT_STAT_LLR_TX_INIT_CTL_OS",
        /// INIT_ECHO ordered sets sent.
        tx_init_echo_ctl_os: Counter = "SAI_PORT_STAT_LLR_TX_INIT_ECHO_CTL_OS",
        /// ACK ordered sets sent.
        tx_ack_ctl_os: Counter = "SAI_PORT_STAT_LLR_TX_ACK_CTL_OS",
        /// NACK ordered sets sent.
        tx_nack_ctl_os: Counter = "SAI_PORT_STAT_LLR_TX_NACK_CTL_OS",
        /// INIT ordered sets received.
        rx_init_ctl_os: Counter = "SAI_PORT_STAT_LLR_RX_INIT_CTL_OS",
        /// INIT_ECHO ordered sets received.
        rx_init_echo_ctl_os: Counter = "SAI_PORT_STAT_LLR_RX_INIT_ECHO_CTL_OS",
        /// ACK ordered sets received.
        rx_ack_ctl_os: Counter = "SAI_PORT_STAT_LLR_RX_ACK_CTL_OS",
        /// NACK ordered sets received.
        rx_nack_ctl_os: Counter = "SAI_PORT_STAT_LLR_RX_NACK_CTL_OS",
        /// ACKs or NACKs naming a frame the sender does not hold.
        rx_ack_nack_seq_error: Counter = "SAI_PORT_STAT_LLR_RX_ACK_NACK_SEQ_ERROR",
        /// LLR frames received good (any sequence number).
        rx_ok: Counter = "SAI_PORT_STAT_LLR_RX_OK",
        /// LLR frames received poisoned.
        rx_poisoned: Counter = "SAI_PORT_STAT_LLR_RX_POISONED",
        /// LLR frames received with a bad FCS.
        rx_bad: Counter = "SAI_PORT_STAT_LLR_RX_BAD",
        /// Good frames with the expected sequence number (taken).
        rx_expected_seq_good: Counter = "SAI_PORT_STAT_LLR_RX_EXPECTED_SEQ_GOOD",
        /// Poisoned frames with the expected sequence number (taken off the sequence, dropped).
        rx_expected_seq_poisoned: Counter = "SAI_PORT_STAT_LLR_RX_EXPECTED_SEQ_POISONED",
        /// Bad frames with the expected sequence number.
        rx_expected_seq_bad: Counter = "SAI_PORT_STAT_LLR_RX_EXPECTED_SEQ_BAD",
        /// Frames after a gap (a sequence number past the expected one).
        rx_missing_seq: Counter = "SAI_PORT_STAT_LLR_RX_MISSING_SEQ",
        /// Frames already received (a sequence number before the expected one).
        rx_duplicate_seq: Counter = "SAI_PORT_STAT_LLR_RX_DUPLICATE_SEQ",
        /// Replays detected: the expected frame back after a NACK.
        rx_replay: Counter = "SAI_PORT_STAT_LLR_RX_REPLAY",
    }
}

/// What the link does with a data frame about to start.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Admit {
    /// Numbered and kept for replay.
    Retry,
    /// Sent as a plain frame (initialising or flushed, best effort).
    Plain,
    /// Dropped (initialising or flushed, action `discard`).
    Discard,
}

/// What the receiver does with a frame that arrived.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Arrival {
    /// Hand it to the pipeline.
    Take,
    /// Drop it: bad, poisoned, a duplicate, or after a gap (LLR brings it back if it
    /// was an LLR frame).
    Discard,
}

/// What the link sends next, ahead of any new data frame.
#[derive(Debug)]
pub enum Outgoing {
    /// A control ordered set.
    Control(LlrMessage),
    /// A frame sent again, numbered as it was.
    Replay(Packet),
}

/// A copy kept for replay.
#[derive(Clone, Debug)]
struct Kept {
    seq: u32,
    sent: Time,
    /// The egress queue (a NIC's priority) it left from: its CBFC channel.
    queue: u8,
    pkt: Packet,
}

/// LLR on one port: the sender toward the peer and the receiver of the peer's frames.
#[derive(Clone, Debug)]
pub struct LlrLink {
    setup: LlrSetup,
    speed: Rate,
    // Sender.
    tx_state: TxState,
    next_seq: u32,
    buffer: VecDeque<Kept>,
    buffer_bytes: u64,
    /// Index in `buffer` of the next frame a replay sends.
    replay_at: usize,
    /// Replays since the last progress.
    replays: u8,
    /// The replay timer runs from here (progress, a replay's end, the buffer filling).
    timer_from: Time,
    /// An INIT is due at this time.
    init_due: Option<Time>,
    /// Since when the sender has initialised (its INIT unanswered).
    init_since: Option<Time>,
    // Receiver.
    rx_state: RxState,
    expected: u32,
    /// A NACK to send (the last good frame).
    nack_due: Option<u32>,
    /// An INIT_ECHO to send.
    echo_due: Option<u32>,
    /// Bytes taken since the last ACK, and when the ACK for them is due.
    unacked: Option<(u64, Time)>,
    /// The last good frame (what an ACK names).
    last_good: u32,
    /// When the NACK of the present wait went out (the receiver discards until the
    /// expected frame comes back).
    nack_sent_at: Option<Time>,
    /// Counters.
    pub counters: LlrCounters,
}

impl LlrLink {
    /// LLR on a port of `speed` set up as `setup`, initialised (both ends at sequence 0,
    /// as when a run starts with its links trained).
    pub fn new(speed: Rate, setup: LlrSetup) -> LlrLink {
        LlrLink {
            setup,
            speed,
            tx_state: TxState::Advance,
            next_seq: 0,
            buffer: VecDeque::new(),
            buffer_bytes: 0,
            replay_at: 0,
            replays: 0,
            timer_from: Time::ZERO,
            init_due: None,
            init_since: None,
            rx_state: RxState::SendAcks,
            expected: 0,
            nack_due: None,
            echo_due: None,
            unacked: None,
            last_good: SEQ_MODULUS - 1,
            nack_sent_at: None,
            counters: LlrCounters::default(),
        }
    }

    /// Start from sequence number `seq` both ways (a test of wrap-around).
    pub fn start_at(&mut self, seq: u32) {
        self.next_seq = seq & (SEQ_MODULUS - 1);
        self.expected = self.next_seq;
        self.last_good = seq_add(self.next_seq, SEQ_MODULUS - 1);
    }

    /// The setup.
    pub fn setup(&self) -> &LlrSetup {
        &self.setup
    }

    /// The sender's state.
    pub fn tx_state(&self) -> TxState {
        self.tx_state
    }

    /// The receiver's state.
    pub fn rx_state(&self) -> RxState {
        self.rx_state
    }

    /// Are frames of egress queue (or priority) `queue` numbered and replayed?
    #[inline]
    pub fn covers(&self, queue: u8) -> bool {
        self.setup.eligible & (1 << (queue & 7)) != 0
    }

    /// The frames in the replay buffer, each as (the queue it left from, its length): sent,
    /// not yet acknowledged — the receiver may not have them yet, and a replay may still
    /// bring them.
    pub fn held(&self) -> impl Iterator<Item = (u8, u32)> + '_ {
        self.buffer.iter().map(|k| (k.queue, k.pkt.len))
    }

    /// Frames in the replay buffer.
    pub fn outstanding(&self) -> usize {
        self.buffer.len()
    }

    /// Does the sender replay on its own, without a NACK: by its replay timer, or by
    /// flushing a frame past the data age timeout? Without either, a lost NACK (or a
    /// replayed frame lost again) leaves the peer's receiver waiting for good.
    pub fn recovers_on_its_own(&self) -> bool {
        self.setup.replay_timer > Time::ZERO || self.setup.data_age_timeout > Time::ZERO
    }

    /// Since when the receiver has waited for the frame its NACK asked for (the NACK
    /// gone out), if it waits.
    pub fn waiting_since(&self) -> Option<Time> {
        (self.rx_state == RxState::NackSent)
            .then_some(self.nack_sent_at)
            .flatten()
    }

    /// Does the sender hold frames, advancing (not replaying, initialising or flushed),
    /// with nothing of its own due but ACKs, and since when (its last progress: an ACK
    /// that freed frames, the end of a replay)?
    pub fn holding_since(&self) -> Option<Time> {
        (self.tx_state == TxState::Advance && !self.buffer.is_empty()).then_some(self.timer_from)
    }

    fn action(&self) -> Option<FrameAction> {
        match self.tx_state {
            TxState::Advance | TxState::Replay => None,
            TxState::Init => Some(self.setup.init_action),
            TxState::Flush => Some(self.setup.flush_action),
        }
    }

    /// May a data frame of `len` bytes start: not while the replay buffer has no room
    /// for it, a replay is under way, or the link blocks frames while it cannot retry.
    #[inline]
    pub fn may_send(&self, len: u32) -> bool {
        match self.action() {
            Some(FrameAction::Block) => false,
            Some(_) => true,
            None => {
                self.tx_state == TxState::Advance
                    && (self.buffer.len() as u32) < self.setup.max_frames
                    && self.buffer_bytes + len as u64 <= self.setup.max_bytes
            }
        }
    }

    /// What becomes of a data frame about to start (see [`LlrLink::may_send`]).
    pub fn admit(&self) -> Admit {
        match self.action() {
            None => Admit::Retry,
            Some(FrameAction::Discard) => Admit::Discard,
            Some(_) => Admit::Plain,
        }
    }

    /// A data frame starts at `now`: numbered and kept, sent plain, or dropped, as
    /// [`LlrLink::admit`] says (returned).
    pub fn start(&mut self, pkt: &mut Packet, queue: u8, now: Time) -> Admit {
        let admit = self.admit();
        match admit {
            Admit::Retry => {
                pkt.hop = Hop::llr(self.next_seq);
                if self.buffer.is_empty() {
                    self.timer_from = now;
                }
                self.buffer.push_back(Kept {
                    seq: self.next_seq,
                    sent: now,
                    queue,
                    pkt: pkt.clone(),
                });
                self.buffer_bytes += pkt.len as u64;
                self.next_seq = seq_add(self.next_seq, 1);
                let c = &mut self.counters;
                c.tx_ok += 1;
                c.tx_buffer_frames_watermark =
                    c.tx_buffer_frames_watermark.max(self.buffer.len() as u64);
                c.tx_buffer_bytes_watermark = c.tx_buffer_bytes_watermark.max(self.buffer_bytes);
            }
            Admit::Plain => pkt.hop = Hop::PLAIN,
            Admit::Discard => self.counters.tx_discard += 1,
        }
        admit
    }

    /// When the link next has something to send or do on its own: at once for a NACK,
    /// an INIT_ECHO or a replay under way; at its time for an ACK, an INIT, the replay
    /// timer or the data age timeout.
    pub fn next_due(&self) -> Option<Time> {
        if self.nack_due.is_some()
            || self.echo_due.is_some()
            || (self.tx_state == TxState::Replay && self.replay_at < self.buffer.len())
        {
            return Some(Time::ZERO);
        }
        let mut due: Option<Time> = None;
        let mut consider = |t: Time| due = Some(due.map_or(t, |d: Time| d.min(t)));
        if let Some(t) = self.ack_due() {
            consider(t);
        }
        if let Some(t) = self.init_due {
            consider(t);
        }
        if let Some(front) = self.buffer.front() {
            if self.tx_state == TxState::Advance && self.setup.replay_timer > Time::ZERO {
                consider(self.timer_from + self.setup.replay_timer);
            }
            if self.setup.data_age_timeout > Time::ZERO {
                consider(front.sent + self.setup.data_age_timeout);
            }
        }
        due
    }

    /// Has the link nothing outstanding: no frame unacknowledged either way, nothing due
    /// but upkeep?
    pub fn settled(&self) -> bool {
        self.buffer.is_empty()
            && self.nack_due.is_none()
            && self.echo_due.is_none()
            && self.unacked.is_none()
            && self.init_due.is_none()
    }

    /// What to send at `now` (timers that ran out acted on first): a NACK, an INIT_ECHO,
    /// an INIT, a replayed frame, or an ACK that is due.
    pub fn take(&mut self, now: Time) -> Option<Outgoing> {
        self.run_timers(now);
        if let Some(seq) = self.nack_due.take() {
            self.counters.tx_nack_ctl_os += 1;
            self.nack_sent_at = Some(now);
            return Some(Outgoing::Control(LlrMessage::Nack { seq }));
        }
        if let Some(seq) = self.echo_due.take() {
            self.counters.tx_init_echo_ctl_os += 1;
            return Some(Outgoing::Control(LlrMessage::InitEcho { seq }));
        }
        if self.init_due.is_some_and(|t| t <= now) {
            self.init_due = Some(now + self.init_interval());
            self.counters.tx_init_ctl_os += 1;
            return Some(Outgoing::Control(LlrMessage::Init { seq: self.next_seq }));
        }
        if self.tx_state == TxState::Replay {
            if let Some(k) = self.buffer.get(self.replay_at) {
                let pkt = k.pkt.clone();
                self.replay_at += 1;
                self.counters.tx_replayed_frames += 1;
                if self.replay_at == self.buffer.len() {
                    self.end_replay(now);
                }
                return Some(Outgoing::Replay(pkt));
            }
            self.end_replay(now);
        }
        if self.ack_due().is_some_and(|t| t <= now) {
            return Some(Outgoing::Control(self.ack()));
        }
        None
    }

    /// When the next ACK is due (none while a NACK waits for the expected frame).
    fn ack_due(&self) -> Option<Time> {
        let (_, due) = self.unacked?;
        (self.rx_state == RxState::SendAcks).then_some(due)
    }

    fn ack(&mut self) -> LlrMessage {
        self.unacked = None;
        self.counters.tx_ack_ctl_os += 1;
        LlrMessage::Ack {
            seq: self.last_good,
        }
    }

    fn end_replay(&mut self, now: Time) {
        self.tx_state = TxState::Advance;
        self.replay_at = 0;
        self.timer_from = now;
        self.counters.tx_replay += 1;
    }

    /// INITs are sent again this often until echoed: the replay timer, or 5 µs without one.
    fn init_interval(&self) -> Time {
        if self.setup.replay_timer > Time::ZERO {
            self.setup.replay_timer
        } else {
            Time::from_us(5)
        }
    }

    /// Act on the replay timer and the data age timeout at `now`.
    fn run_timers(&mut self, now: Time) {
        let Some(front) = self.buffer.front() else {
            return;
        };
        if !matches!(self.tx_state, TxState::Advance | TxState::Replay) {
            return;
        }
        if self.setup.data_age_timeout > Time::ZERO
            && front.sent + self.setup.data_age_timeout <= now
        {
            self.flush(now);
            return;
        }
        if self.tx_state == TxState::Advance
            && self.setup.replay_timer > Time::ZERO
            && self.timer_from + self.setup.replay_timer <= now
        {
            self.replay(now);
        }
    }

    /// Go back to the first frame not acknowledged and send the buffer again; past the
    /// replay limit, FLUSH.
    fn replay(&mut self, now: Time) {
        if self.setup.max_replay_count != UNLIMITED_REPLAYS
            && self.replays >= self.setup.max_replay_count
        {
            self.flush(now);
            return;
        }
        self.replays = self.replays.saturating_add(1);
        self.tx_state = TxState::Replay;
        self.replay_at = 0;
        self.timer_from = now;
    }

    /// Give up the buffer: its frames are lost; initialise again if set up to.
    fn flush(&mut self, now: Time) {
        self.counters.tx_flush += 1;
        self.counters.tx_flushed_frames += self.buffer.len() as u64;
        self.buffer.clear();
        self.buffer_bytes = 0;
        self.replay_at = 0;
        self.replays = 0;
        self.tx_state = TxState::Flush;
        if self.setup.re_init_on_flush {
            self.reinit(now);
        }
    }

    /// Start an INIT (after a FLUSH, or the link coming back up).
    pub fn reinit(&mut self, now: Time) {
        self.tx_state = TxState::Init;
        self.init_due = Some(now);
        self.init_since.get_or_insert(now);
    }

    /// Since when the sender has sent INITs without an answer, if it has (a peer that
    /// never answers does not speak LLR).
    pub fn initialising_since(&self) -> Option<Time> {
        (self.tx_state == TxState::Init)
            .then_some(self.init_since)
            .flatten()
    }

    /// Take an LLR ordered set received at `now`.
    pub fn receive(&mut self, msg: LlrMessage, now: Time) {
        match msg {
            LlrMessage::Init { seq } => {
                self.counters.rx_init_ctl_os += 1;
                self.expected = seq & (SEQ_MODULUS - 1);
                self.last_good = seq_add(self.expected, SEQ_MODULUS - 1);
                self.rx_state = RxState::SendAcks;
                self.unacked = None;
                self.nack_due = None;
                self.nack_sent_at = None;
                self.echo_due = Some(self.expected);
            }
            LlrMessage::InitEcho { seq } => {
                self.counters.rx_init_echo_ctl_os += 1;
                if self.tx_state == TxState::Init && seq == self.next_seq {
                    self.tx_state = TxState::Advance;
                    self.init_due = None;
                    self.init_since = None;
                    self.timer_from = now;
                }
            }
            LlrMessage::Ack { seq } => {
                self.counters.rx_ack_ctl_os += 1;
                self.acknowledge(seq, now);
            }
            LlrMessage::Nack { seq } => {
                self.counters.rx_nack_ctl_os += 1;
                if self.acknowledge(seq, now) && !self.buffer.is_empty() {
                    self.replay(now);
                }
            }
        }
    }

    /// Free the copies up to and including `seq`; false (counted) if `seq` names no frame
    /// sent and not yet freed, or the one before the oldest held.
    fn acknowledge(&mut self, seq: u32, now: Time) -> bool {
        if !matches!(self.tx_state, TxState::Advance | TxState::Replay) {
            return false;
        }
        let oldest = self.buffer.front().map_or(self.next_seq, |k| k.seq);
        let ahead = seq_diff(seq, oldest);
        if ahead < -1 || seq_diff(self.next_seq, seq) < 1 {
            self.counters.rx_ack_nack_seq_error += 1;
            return false;
        }
        let freed = (ahead + 1) as usize;
        if freed > 0 {
            for k in self.buffer.drain(..freed) {
                self.buffer_bytes -= k.pkt.len as u64;
            }
            self.replay_at = self.replay_at.saturating_sub(freed);
            self.replays = 0;
            self.timer_from = now;
            if self.tx_state == TxState::Replay && self.replay_at >= self.buffer.len() {
                self.end_replay(now);
            }
        }
        true
    }

    /// A frame of `len` bytes with hop tag `hop` arrived at `now`: take it or discard it
    /// (a NACK or an ACK becomes due as the rules say).
    pub fn arrive(&mut self, hop: Hop, len: u32, now: Time) -> Arrival {
        let Some(seq) = hop.llr_seq() else {
            return match hop.fcs() {
                Fcs::Good => Arrival::Take,
                Fcs::Bad | Fcs::Poisoned => Arrival::Discard,
            };
        };
        let c = &mut self.counters;
        match hop.fcs() {
            Fcs::Good => c.rx_ok += 1,
            Fcs::Bad => c.rx_bad += 1,
            Fcs::Poisoned => c.rx_poisoned += 1,
        }
        let d = seq_diff(seq, self.expected);
        if d < 0 {
            // A replay of frames already taken: the ACK that named them was lost, so one
            // is due again at once.
            c.rx_duplicate_seq += 1;
            if self.rx_state == RxState::SendAcks {
                self.ack_now(now);
            }
            return Arrival::Discard;
        }
        if d > 0 {
            c.rx_missing_seq += 1;
            self.ask_replay();
            return Arrival::Discard;
        }
        match hop.fcs() {
            Fcs::Bad => {
                c.rx_expected_seq_bad += 1;
                self.ask_replay();
                Arrival::Discard
            }
            Fcs::Poisoned => {
                c.rx_expected_seq_poisoned += 1;
                self.advance(len, now);
                Arrival::Discard
            }
            Fcs::Good => {
                c.rx_expected_seq_good += 1;
                self.advance(len, now);
                Arrival::Take
            }
        }
    }

    /// The expected frame arrived: the next is expected, and an ACK is due once
    /// `ctlos_spacing` bytes are taken.
    fn advance(&mut self, len: u32, now: Time) {
        if self.rx_state == RxState::NackSent {
            self.counters.rx_replay += 1;
            self.rx_state = RxState::SendAcks;
            self.nack_sent_at = None;
        }
        self.last_good = self.expected;
        self.expected = seq_add(self.expected, 1);
        // The first frame not acknowledged starts the spacing's line time.
        let spacing = self.setup.ctlos_spacing.get();
        let (bytes, due) = self
            .unacked
            .unwrap_or((0, now + self.speed.time_for_bytes(spacing)));
        let bytes = bytes + len as u64;
        self.unacked = Some((bytes, due));
        if bytes >= spacing {
            self.ack_now(now);
        }
    }

    /// An ACK is due at `now`.
    fn ack_now(&mut self, now: Time) {
        let bytes = self.unacked.map_or(0, |u| u.0);
        self.unacked = Some((bytes, now));
    }

    /// A gap or a bad frame: one NACK naming the last good frame, then silence until the
    /// expected frame is back.
    fn ask_replay(&mut self) {
        if self.rx_state == RxState::SendAcks {
            self.rx_state = RxState::NackSent;
            self.nack_due = Some(self.last_good);
            self.unacked = None;
        }
    }

    /// The link went down: frames in flight are gone; the buffer stays for the replay the
    /// receiver will ask for when frames arrive again.
    pub fn link_down(&mut self) {
        self.unacked = None;
    }

    /// The link came back up at `now` after being down for `down`: past the PCS lost
    /// timeout the buffer is flushed (and the link initialised again if set up to).
    pub fn link_up(&mut self, down: Time, now: Time) {
        if self.setup.pcs_lost_timeout > Time::ZERO && down > self.setup.pcs_lost_timeout {
            self.flush(now);
        }
    }
}
