//! Ultra Ethernet credit-based flow control (UE 1.0 §5.2, as SAI's CBFC proposal states
//! it) on one port, both ways (docs/physics.md, "Credit-based flow control").
//!
//! * The sender side ([`CreditSender`]) may start a frame on a credited virtual channel
//!   only while `used + cost ≤ limit`, `cost = ceil((len + overhead) / credit_size)`; it
//!   learns the credits freed from the receiver's CF_Updates, which carry the receiver's
//!   absolute freed count (20 bits, cyclic): a lost update is healed by the next one.
//!   Every `cc_interval` it sends a CC_Update with its consumed counts, so the receiver can
//!   give back credits of frames that never arrived (lost to a bad FCS).
//! * The receiver side ([`CreditReceiver`]) counts the credits of every frame it stores
//!   (consumed) and drains (freed), and sends a CF_Update for a channel whose freed count
//!   moved, no sooner than `cf_min_spacing` after the port's previous one, and a refresh
//!   of an unchanged count every `cf_max_spacing` for each credited channel, in a slot no
//!   moved count wants.
//!
//! Counters are kept as 64-bit totals (what the report shows, as SAI's statistics do); the
//! control messages carry them modulo 2^20.

use crate::counter_group;
use crate::link::control::ORDERED_SET_BYTES;
use lossless_buffer_model::{Bytes, Rate, Time, PRIORITIES};

/// Virtual channels a port may have (UE: up to 32).
pub const VCS: usize = 32;
/// Credit counters on the wire wrap at 2^20.
pub const COUNTER_MODULUS: u64 = 1 << 20;
/// The largest credit limit a port or channel may have (2^20 − 1).
pub const MAX_CREDITS: u64 = COUNTER_MODULUS - 1;

/// Which limit a sender's credits are checked against.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum CreditMode {
    /// Each channel has its own limit (the receiver's buffer for it).
    #[default]
    PerVc,
    /// One limit for all credited channels of the port (their buffers pooled).
    PerPort,
}

impl lossless_buffer_model::Named for CreditMode {
    const WORDS: &'static [(&'static str, CreditMode)] = &[
        ("per_vc", CreditMode::PerVc),
        ("per_port", CreditMode::PerPort),
    ];
}

/// When a port sends credit messages that say nothing new: a CC_Update whose consumed
/// counts are those of the last one with no credit held, a CF_Update of a count already
/// announced.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum IdleUpdates {
    /// As hardware does: a CC_Update every `cc_interval` and each credited channel's
    /// refresh every `cf_max_spacing`, busy or idle (an ordered set costs a link nothing).
    #[default]
    Periodic,
    /// Only while they can heal something: CC_Updates while the sender holds credits or
    /// its counts moved since the last one, and a channel's refresh only after a CC_Update
    /// arrived since its last CF_Update (its sender still holds credits, one of which a
    /// lost CF_Update may have kept). A busy link sends what `Periodic` sends; an idle one
    /// falls silent. The default on a `link:` port of `lossless tap`, where each message
    /// is a system call on both switches.
    OnDemand,
}

impl lossless_buffer_model::Named for IdleUpdates {
    const WORDS: &'static [(&'static str, IdleUpdates)] = &[
        ("periodic", IdleUpdates::Periodic),
        ("on_demand", IdleUpdates::OnDemand),
    ];
}

/// How a port's CBFC is set up (both ends of a link agree on the credit size and overhead).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CbfcSetup {
    /// Bytes one credit stands for (SAI default 128).
    pub credit_size: u32,
    /// Bytes added to a frame's length before it is costed (−16…127, default 0).
    pub overhead: i32,
    /// Credited (lossless) channels, bit = VC; the others send without credits.
    pub credited: u32,
    /// The channel of each traffic class (SAI's TC → VC map, at the receiver): a frame of
    /// TC t is stored on VC `tc_to_vc[t]`. Several classes may share a channel.
    pub tc_to_vc: [u8; PRIORITIES],
    /// The channel of each egress queue (SAI's queue → VC map, at the sender): a frame
    /// from queue q is sent on VC `queue_to_vc[q]`.
    pub queue_to_vc: [u8; PRIORITIES],
    /// Credits this port's receiver has for each channel (its buffer for it).
    pub rx_credits: [u32; VCS],
    /// Per channel or per port limits at the sender.
    pub mode: CreditMode,
    /// Least time between two CF_Updates this port sends (bytes at line rate; 6400 B).
    pub cf_min_spacing: Bytes,
    /// Most time a credited channel goes without a CF_Update (bytes at line rate; 256 KiB).
    pub cf_max_spacing: Bytes,
    /// How often the sender resynchronises the receiver with a CC_Update (256 µs).
    pub cc_interval: Time,
    /// Whether updates that say nothing new are sent at idle.
    pub idle_updates: IdleUpdates,
}

/// Each class on the channel of its own number (TC n and queue n on VC n).
pub const IDENTITY: [u8; PRIORITIES] = [0, 1, 2, 3, 4, 5, 6, 7];

impl Default for CbfcSetup {
    /// SAI's defaults (128-byte credits, no overhead, per-VC limits, CF_Update spacing
    /// 6,400 B to 256 KiB, a CC_Update every 256 µs) and ours where SAI has none: VCs 3
    /// and 4 credited (SONiC's lossless priorities) with 1,024 credits each (128 KiB).
    fn default() -> Self {
        let mut rx_credits = [0; VCS];
        rx_credits[3] = 1024;
        rx_credits[4] = 1024;
        CbfcSetup {
            credit_size: 128,
            overhead: 0,
            credited: (1 << 3) | (1 << 4),
            tc_to_vc: IDENTITY,
            queue_to_vc: IDENTITY,
            rx_credits,
            mode: CreditMode::PerVc,
            cf_min_spacing: Bytes(6400),
            cf_max_spacing: Bytes(256 * 1024),
            cc_interval: Time::from_us(256),
            idle_updates: IdleUpdates::Periodic,
        }
    }
}

impl CbfcSetup {
    /// Credits a frame of `len` bytes (FCS counted) costs: `ceil((len + overhead) /
    /// credit_size)`, at least one.
    pub fn cost(&self, len: u32) -> u64 {
        let bytes = (len as i64 + self.overhead as i64).max(1) as u64;
        bytes.div_ceil(self.credit_size as u64)
    }

    /// Is channel `vc` credited?
    pub fn is_credited(&self, vc: u8) -> bool {
        (vc as usize) < VCS && self.credited & (1 << vc) != 0
    }

    /// The channel a received frame of traffic class `tc` is stored on.
    #[inline]
    pub fn vc_of_tc(&self, tc: u8) -> u8 {
        self.tc_to_vc[tc as usize % PRIORITIES]
    }

    /// The channel a frame from egress queue `queue` is sent on.
    #[inline]
    pub fn vc_of_queue(&self, queue: u8) -> u8 {
        self.queue_to_vc[queue as usize % PRIORITIES]
    }

    /// Is a received frame of traffic class `tc` on a credited channel?
    #[inline]
    pub fn is_credited_tc(&self, tc: u8) -> bool {
        self.is_credited(self.vc_of_tc(tc))
    }

    /// The credits one channel needs to run at line rate on a port of `speed` with
    /// `propagation` one way, frames up to `mtu` and a receiver that drains a frame
    /// `turnaround` after its last bit arrives (docs/physics.md, "Credits for line rate").
    pub fn need(&self, speed: Rate, propagation: Time, mtu: u32, turnaround: Time) -> CreditNeed {
        // A credit leaves with the frame's first bit and is back when the CF_Update that
        // frees it arrives: the frame's wire time, the cable, the receiver's turnaround,
        // the CF_Update's minimum spacing, one reverse frame it waits behind, its own
        // 8 bytes and the cable back.
        let round_trip = speed.wire_time(mtu as u64)
            + propagation
            + turnaround
            + speed.time_for_bytes(self.cf_min_spacing.get())
            + speed.wire_time(mtu as u64)
            + speed.time_for_bytes(ORDERED_SET_BYTES)
            + propagation;
        // Frames of `len` bytes arrive one per wire time and each costs `cost(len)`: the
        // credits in flight over the round trip, plus one frame's.
        let in_flight = |len: u32| -> u64 {
            let wire = speed.wire_time(len as u64).as_ps().max(1) as u128;
            let frames = (round_trip.as_ps() as u128).div_ceil(wire) as u64;
            frames * self.cost(len) + self.cost(mtu)
        };
        let mut worst = (in_flight(mtu), mtu);
        // The frame length that wastes most of a credit: one byte past a multiple of the
        // credit size (and the smallest frame).
        let mut len = 64u32;
        while len < mtu {
            let n = in_flight(len);
            if n > worst.0 {
                worst = (n, len);
            }
            let next =
                ((len as i64 + self.overhead as i64).max(0) as u64 / self.credit_size as u64 + 1)
                    * self.credit_size as u64;
            len = ((next as i64 - self.overhead as i64 + 1).max(len as i64 + 1)) as u32;
        }
        CreditNeed {
            round_trip,
            mtu_frames: in_flight(mtu),
            worst: worst.0,
            worst_frame: worst.1,
        }
    }

    /// Credits of all credited channels (the per-port limit).
    pub fn port_credits(&self) -> u64 {
        (0..VCS)
            .filter(|v| self.credited & (1 << v) != 0)
            .map(|v| self.rx_credits[v] as u64)
            .sum::<u64>()
            .min(MAX_CREDITS)
    }
}

/// What one credited channel needs to run at line rate ([`CbfcSetup::need`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CreditNeed {
    /// From a credit leaving with a frame to the CF_Update that returns it.
    pub round_trip: Time,
    /// Credits for a stream of MTU frames.
    pub mtu_frames: u64,
    /// Credits for a stream of the frame length that costs most per wire byte.
    pub worst: u64,
    /// That length.
    pub worst_frame: u32,
}

counter_group! {
    /// CBFC counters of one virtual channel of a port (SAI_VIRTUAL_CHANNEL_STAT_*).
    pub struct VcCounters {
        /// Credits the sender holds now (consumed, not yet freed).
        sender_credits_used: Gauge = "SAI_VIRTUAL_CHANNEL_STAT_SENDER_CREDITS_USED",
        /// Credits the sender has consumed (frames sent on the channel).
        sender_credits_consumed: Counter = "SAI_VIRTUAL_CHANNEL_STAT_SENDER_CREDITS_CONSUMED",
        /// Credits the receiver's CF_Updates have given back to the sender.
        sender_credits_freed: Counter = "SAI_VIRTUAL_CHANNEL_STAT_SENDER_CREDITS_FREED",
        /// Most credits the sender has held at once.
        sender_credits_used_watermark: Gauge = "SAI_VIRTUAL_CHANNEL_STAT_SENDER_CREDITS_USED_WATERMARK",
        /// Credits of the frames the receiver stored.
        receiver_credits_consumed: Counter = "SAI_VIRTUAL_CHANNEL_STAT_RECEIVER_CREDITS_CONSUMED",
        /// Credits the receiver freed (frames drained, and credits a CC_Update found lost).
        receiver_credits_freed: Counter = "SAI_VIRTUAL_CHANNEL_STAT_RECEIVER_CREDITS_FREED",
    }
}

counter_group! {
    /// CBFC counters of one port (SAI_PORT_STAT_CBFC_*).
    pub struct CbfcCounters {
        /// Credits the sender holds now on all channels.
        sender_credits_used: Gauge = "SAI_PORT_STAT_CBFC_SENDER_CREDITS_USED",
        /// Most credits the sender has held at once on all channels.
        sender_credits_used_watermark: Gauge = "SAI_PORT_STAT_CBFC_SENDER_CREDITS_USED_WATERMARK",
        /// CC_Update messages sent.
        cc_update_tx: Counter = "SAI_PORT_STAT_CBFC_NUM_CC_UPDATE_MESSAGES_TX",
        /// CC_Update messages received.
        cc_update_rx: Counter = "SAI_PORT_STAT_CBFC_NUM_CC_UPDATE_MESSAGES_RX",
        /// CF_Update messages sent.
        cf_update_tx: Counter = "SAI_PORT_STAT_CBFC_NUM_CF_UPDATE_MESSAGES_TX",
        /// CF_Update messages received.
        cf_update_rx: Counter = "SAI_PORT_STAT_CBFC_NUM_CF_UPDATE_MESSAGES_RX",
        /// Resynchronisations: an INIT of the peer accepted, or this port's INIT answered.
        cbfc_resyncs: Counter = "lossless: CBFC INIT handshakes completed",
        /// INIT messages sent (this port's counters start again from zero).
        init_tx: Counter = "lossless: CBFC INIT messages sent",
        /// Credit messages refused as impossible (never applied): corrupted, forged, stale.
        implausible_rx: Counter = "lossless: CBFC messages refused as impossible",
        /// 1 while this port's INIT is unanswered (a peer restarting, or not speaking CBFC).
        awaiting_init: Gauge = "lossless: CBFC INIT unanswered (1) or answered (0)",
    }
}

/// The sender side of one port's CBFC: what it may send on each channel.
#[derive(Clone, Debug)]
pub struct CreditSender {
    /// Limit per channel (the peer receiver's credits for it).
    limit: [u64; VCS],
    /// Limit of the port in per-port mode.
    port_limit: u64,
    /// Consumed and freed totals per channel.
    consumed: [u64; VCS],
    freed: [u64; VCS],
    watermark: [u64; VCS],
    port_watermark: u64,
    /// Credits held on all channels.
    port_used: u64,
    /// When the next CC_Update is due.
    next_cc: Time,
    /// Consumed counts the last CC_Update carried.
    cc_consumed: [u64; VCS],
}

impl CreditSender {
    /// A sender whose peer's receiver has `peer` credits per channel.
    pub fn new(setup: &CbfcSetup, peer: &CbfcSetup) -> CreditSender {
        let mut limit = [0; VCS];
        for (v, l) in limit.iter_mut().enumerate() {
            *l = peer.rx_credits[v].min(MAX_CREDITS as u32) as u64;
        }
        CreditSender {
            limit,
            port_limit: peer.port_credits(),
            consumed: [0; VCS],
            freed: [0; VCS],
            watermark: [0; VCS],
            port_watermark: 0,
            port_used: 0,
            next_cc: setup.cc_interval,
            cc_consumed: [0; VCS],
        }
    }

    /// Credits the peer's receiver gave channel `vc` (the per-VC limit).
    pub fn limit(&self, vc: usize) -> u64 {
        self.limit[vc]
    }

    /// Credits held on channel `vc`.
    pub fn used(&self, vc: usize) -> u64 {
        self.consumed[vc] - self.freed[vc]
    }

    /// May a frame costing `cost` credits start on channel `vc`?
    pub fn may_send(&self, setup: &CbfcSetup, vc: u8, cost: u64) -> bool {
        match setup.mode {
            CreditMode::PerVc => self.used(vc as usize) + cost <= self.limit[vc as usize],
            CreditMode::PerPort => self.port_used + cost <= self.port_limit,
        }
    }

    /// A frame costing `cost` credits started on channel `vc`.
    pub fn consume(&mut self, vc: u8, cost: u64) {
        let v = vc as usize;
        self.consumed[v] += cost;
        self.port_used += cost;
        self.watermark[v] = self.watermark[v].max(self.used(v));
        self.port_watermark = self.port_watermark.max(self.port_used);
    }

    /// A CF_Update for channel `vc` carrying the receiver's freed count `wire` (mod 2^20):
    /// the credits it frees that the sender did not know of. One behind what the sender
    /// knows is stale (overtaken on the way, or a copy): Some(0). One that would free more
    /// than is held is impossible (corrupted, forged, or from a receiver whose counters
    /// restarted): None, and nothing is freed.
    pub fn credits_freed(&mut self, vc: u8, wire: u32) -> Option<u64> {
        let v = vc as usize;
        let known = self.freed[v] % COUNTER_MODULUS;
        let delta = (wire as u64 + COUNTER_MODULUS - known) % COUNTER_MODULUS;
        if delta >= COUNTER_MODULUS / 2 {
            return Some(0);
        }
        if delta > self.used(v) {
            return None;
        }
        self.freed[v] += delta;
        self.port_used -= delta;
        Some(delta)
    }

    /// Has a CC_Update nothing to tell: no credit held on any channel, and every consumed
    /// count what the last CC_Update carried?
    fn has_nothing_to_resync(&self) -> bool {
        self.port_used == 0 && self.consumed == self.cc_consumed
    }

    /// Start counting again from `held` per channel: what the peer's receiver still holds
    /// of this sender's frames (0 after a peer that restarted with an empty buffer).
    fn restart(&mut self, held: &[u64; VCS]) {
        self.consumed = *held;
        self.cc_consumed = [u64::MAX; VCS];
        self.freed = [0; VCS];
        self.port_used = held.iter().sum();
    }

    /// Consumed count of channel `vc`, as a CC_Update carries it (mod 2^20).
    pub fn consumed_wire(&self, vc: usize) -> u32 {
        (self.consumed[vc] % COUNTER_MODULUS) as u32
    }

    /// Counters of channel `vc` (the sender's half).
    fn fill(&self, vc: usize, c: &mut VcCounters) {
        c.sender_credits_used = self.used(vc);
        c.sender_credits_consumed = self.consumed[vc];
        c.sender_credits_freed = self.freed[vc];
        c.sender_credits_used_watermark = self.watermark[vc];
    }
}

/// The receiver side of one port's CBFC: the credits of what it stored and drained.
#[derive(Clone, Debug)]
pub struct CreditReceiver {
    /// Credits of frames in the buffer that belong to no count (they arrived while this
    /// port's INIT was unanswered): their drain is not announced.
    uncounted: [u64; VCS],
    consumed: [u64; VCS],
    freed: [u64; VCS],
    /// Most credits held at once per channel (never above its credits: the property).
    watermark: [u64; VCS],
    /// Freed count each channel's last CF_Update carried.
    announced: [u64; VCS],
    /// When each channel's last CF_Update went out.
    announced_at: [Time; VCS],
    /// When the port last sent a CF_Update.
    last_cf: Option<Time>,
    /// Next channel to look at first (round robin among those due).
    next_vc: usize,
    /// Channels whose refresh a CC_Update asked for since their last CF_Update (bit = VC;
    /// what `IdleUpdates::OnDemand` refreshes).
    refresh_wanted: u32,
}

impl CreditReceiver {
    /// A receiver with nothing stored.
    pub fn new() -> CreditReceiver {
        CreditReceiver {
            uncounted: [0; VCS],
            consumed: [0; VCS],
            freed: [0; VCS],
            watermark: [0; VCS],
            announced: [0; VCS],
            announced_at: [Time::ZERO; VCS],
            last_cf: None,
            next_vc: 0,
            refresh_wanted: 0,
        }
    }

    /// Credits held on channel `vc` (stored, not drained).
    pub fn held(&self, vc: usize) -> u64 {
        self.consumed[vc] - self.freed[vc]
    }

    /// Most credits channel `vc` has held at once (stored frames' credits).
    pub fn held_watermark(&self, vc: usize) -> u64 {
        self.watermark[vc]
    }

    /// A frame costing `cost` credits was stored on channel `vc`.
    pub fn store(&mut self, vc: u8, cost: u64) {
        let v = vc as usize;
        self.consumed[v] += cost;
        self.watermark[v] = self.watermark[v].max(self.held(v));
    }

    /// A frame costing `cost` credits left channel `vc`'s buffer (frames that belong to no
    /// count leave first: the buffer is drained in order).
    pub fn drain(&mut self, vc: u8, cost: u64) {
        let v = vc as usize;
        let uncounted = cost.min(self.uncounted[v]);
        self.uncounted[v] -= uncounted;
        self.freed[v] += cost - uncounted;
    }

    /// A CC_Update: channel `vc`'s sender has consumed `wire` (mod 2^20). Credits of frames
    /// it sent that were never stored (lost on the wire) count as freed; returns them.
    /// `credits` is what the channel gave its sender: frames lost and not yet given back
    /// hold the sender's credits, so no more than that can be lost; a count more than
    /// that ahead of ours is impossible (corrupted, forged): None, not applied. A count
    /// behind ours loses nothing: frames stored after the update was sent (under LLR, not
    /// yet acknowledged), or a stale update overtaken on the way.
    pub fn resync(&mut self, vc: u8, wire: u32, credits: u64) -> Option<u64> {
        let v = vc as usize;
        let known = self.consumed[v] % COUNTER_MODULUS;
        let lost = (wire as u64 + COUNTER_MODULUS - known) % COUNTER_MODULUS;
        if lost >= COUNTER_MODULUS / 2 {
            return Some(0);
        }
        if lost > credits {
            return None;
        }
        self.consumed[v] += lost;
        self.freed[v] += lost;
        Some(lost)
    }

    /// Start counting again from zero: what is in the buffer now is `held`, its frames
    /// freed as they drain, so that the peer's sender, told `held`, sees them come back.
    fn restart(&mut self) -> [u64; VCS] {
        let held: [u64; VCS] = core::array::from_fn(|v| self.held(v));
        self.consumed = held;
        self.freed = [0; VCS];
        self.announced = [0; VCS];
        held
    }

    /// When the next CF_Update may go out, and for which channel. A channel whose freed
    /// count moved since its last CF_Update goes first (round robin among those, no sooner
    /// than the minimum spacing after the port's last one). Only when none moved does a
    /// credited channel that has gone the maximum spacing without one get its refresh: a
    /// refresh of an unchanged count never takes the slot of a count that moved (with
    /// several credited channels and one busy, the idle ones' refreshes would otherwise
    /// hold the busy one's credits back once per maximum spacing each). While counts move
    /// at every slot, refreshes wait; what they heal (a lost CF_Update of a channel that
    /// has since gone idle) the first free slot heals. With `IdleUpdates::OnDemand` only
    /// the channels a CC_Update asked about get refreshes.
    fn due(&self, setup: &CbfcSetup, min: Time, max: Time) -> Option<(Time, usize)> {
        let earliest = self.last_cf.map_or(Time::ZERO, |t| t + min);
        let credited = |v: usize| setup.is_credited(v as u8);
        let refreshed = |v: usize| match setup.idle_updates {
            IdleUpdates::Periodic => true,
            IdleUpdates::OnDemand => self.refresh_wanted & (1 << v) != 0,
        };
        let channels = (0..VCS).map(|i| (self.next_vc + i) % VCS);
        if let Some(v) = channels
            .clone()
            .find(|&v| credited(v) && self.freed[v] != self.announced[v])
        {
            return Some((earliest, v));
        }
        channels
            .filter(|&v| credited(v) && refreshed(v))
            .map(|v| ((self.announced_at[v] + max).max(earliest), v))
            .min_by_key(|&(at, _)| at)
    }

    /// Counters of channel `vc` (the receiver's half).
    fn fill(&self, vc: usize, c: &mut VcCounters) {
        c.receiver_credits_consumed = self.consumed[vc];
        c.receiver_credits_freed = self.freed[vc];
    }
}

impl Default for CreditReceiver {
    fn default() -> Self {
        CreditReceiver::new()
    }
}

/// CBFC on one port, both ways.
#[derive(Clone, Debug)]
pub struct CbfcLink {
    /// The settings.
    pub setup: CbfcSetup,
    /// What this port may send.
    pub sender: CreditSender,
    /// What this port holds for its peer.
    pub receiver: CreditReceiver,
    /// Port counters.
    pub counters: CbfcCounters,
    /// The INIT handshake: where this port and its peer start counting.
    sync: Sync,
    min_spacing: Time,
    max_spacing: Time,
}

/// The INIT handshake of one port (docs/link-control.md, "Starting again"). A port whose
/// counters start from zero (a switch that started, a link that came up) sends INIT with
/// a generation of its own, every `cc_interval` until its peer answers. A peer that hears
/// an INIT of a generation it has not seen starts its own counters again for this link —
/// its sender from zero, its receiver from the credits it still holds of the INIT's
/// sender — and answers INIT_ECHO with those credits. Until its INIT is answered a port
/// sends no credited frame and does not count the frames it receives: frames its peer
/// sent before hearing the INIT arrive before the ECHO (the wire keeps order), and belong
/// to no count. The ECHO tells its sender how much of its buffer the peer still holds.
#[derive(Clone, Debug, Default)]
struct Sync {
    /// This port's generation (its counters' epoch).
    generation: u32,
    /// The INIT is unanswered: when the next is due, and since when it has waited.
    awaiting: Option<(Time, Time)>,
    /// The peer's generation whose INIT this port accepted last.
    peer: Option<u32>,
    /// An ECHO to send: the generation it answers and the credits held per channel.
    echo: Option<(u32, Box<[u32; VCS]>)>,
}

impl CbfcLink {
    /// CBFC on a port at `speed` set up as `setup`, whose peer's receiver has the
    /// credits `peer` gives.
    pub fn new(speed: Rate, setup: CbfcSetup, peer: &CbfcSetup) -> CbfcLink {
        CbfcLink {
            sender: CreditSender::new(&setup, peer),
            receiver: CreditReceiver::new(),
            counters: CbfcCounters::default(),
            sync: Sync::default(),
            min_spacing: speed.time_for_bytes_ceil(setup.cf_min_spacing.get()),
            max_spacing: speed.time_for_bytes_ceil(setup.cf_max_spacing.get()),
            setup,
        }
    }

    /// May a frame of `len` bytes start from egress queue `queue` (on its channel)? Not
    /// on a credited channel while this port's INIT is unanswered.
    pub fn may_send(&self, queue: u8, len: u32) -> bool {
        let vc = self.setup.vc_of_queue(queue);
        !self.setup.is_credited(vc)
            || (self.sync.awaiting.is_none()
                && self.sender.may_send(&self.setup, vc, self.setup.cost(len)))
    }

    /// Start counting again from zero as generation `generation` at `now` (a switch that
    /// started, a link that came up): both halves reset, an INIT due at once, and until
    /// it is answered no credited frame sent and none received counted. What the buffer
    /// still holds drains without being announced.
    pub fn restart(&mut self, generation: u32, now: Time) {
        self.sender.restart(&[0; VCS]);
        let held = self.receiver.restart();
        self.receiver.uncounted = held;
        self.receiver.consumed = [0; VCS];
        self.sync.generation = generation;
        self.sync.awaiting = Some((now, now));
        self.sync.echo = None;
    }

    /// Since when this port's INIT has waited for an answer, if it waits (a peer that
    /// never answers does not speak CBFC).
    pub fn unanswered_since(&self) -> Option<Time> {
        self.sync.awaiting.map(|(_, since)| since)
    }

    /// A frame of `len` bytes starts from egress queue `queue` (on its channel).
    pub fn sent(&mut self, queue: u8, len: u32) {
        let vc = self.setup.vc_of_queue(queue);
        if self.setup.is_credited(vc) {
            self.sender.consume(vc, self.setup.cost(len));
        }
    }

    /// A frame of traffic class `tc`, `len` bytes, was stored (on the class's channel,
    /// counted if credited — unless this port's INIT is unanswered: the frame belongs to
    /// no count, and drains without being announced).
    pub fn stored(&mut self, tc: u8, len: u32) {
        let vc = self.setup.vc_of_tc(tc);
        if self.setup.is_credited(vc) {
            let cost = self.setup.cost(len);
            if self.sync.awaiting.is_some() {
                self.receiver.uncounted[vc as usize] += cost;
            } else {
                self.receiver.store(vc, cost);
            }
        }
    }

    /// A frame of traffic class `tc`, `len` bytes, stored earlier left the buffer.
    pub fn drained(&mut self, tc: u8, len: u32) {
        let vc = self.setup.vc_of_tc(tc);
        if self.setup.is_credited(vc) {
            self.receiver.drain(vc, self.setup.cost(len));
        }
    }

    /// When a control message is next due: an INIT_ECHO (at once), an INIT, a CF_Update
    /// or a CC_Update (none of the last two while this port's INIT is unanswered).
    pub fn next_due(&self) -> Time {
        if self.sync.echo.is_some() {
            return Time::ZERO;
        }
        if let Some((due, _)) = self.sync.awaiting {
            return due;
        }
        let cf = self
            .receiver
            .due(&self.setup, self.min_spacing, self.max_spacing)
            .map_or(Time::MAX, |(t, _)| t);
        cf.min(self.cc_due())
    }

    /// When the next CC_Update is due: every `cc_interval`, unless it would say nothing
    /// (`IdleUpdates::OnDemand`, nothing held and no count moved): never until a frame is
    /// sent.
    fn cc_due(&self) -> Time {
        match self.setup.idle_updates {
            IdleUpdates::OnDemand if self.sender.has_nothing_to_resync() => Time::MAX,
            _ => self.sender.next_cc,
        }
    }

    /// The credits of `frames` (each as the queue it left from and its length) per
    /// credited channel.
    pub fn credits_by_channel(&self, frames: impl Iterator<Item = (u8, u32)>) -> [u64; VCS] {
        let mut out = [0u64; VCS];
        for (queue, len) in frames {
            let vc = self.setup.vc_of_queue(queue);
            if self.setup.is_credited(vc) {
                out[vc as usize] += self.setup.cost(len);
            }
        }
        out
    }

    /// The control message to send at `now`, if one is due: the CC_Update first (it is
    /// rare), then one channel's CF_Update. A CC_Update carries each channel's consumed
    /// count less `in_flight[vc]`: the credits of frames that may still arrive (under LLR,
    /// those in the replay buffer), which its receiver must not count as lost.
    pub fn take(&mut self, now: Time, in_flight: &[u64; VCS]) -> Option<CreditMessage> {
        if let Some((generation, held)) = self.sync.echo.take() {
            return Some(CreditMessage::InitEcho {
                generation,
                credited: self.setup.credited,
                held,
            });
        }
        if let Some((due, since)) = self.sync.awaiting {
            if now < due {
                return None;
            }
            self.sync.awaiting = Some((now + self.setup.cc_interval, since));
            self.counters.init_tx += 1;
            return Some(CreditMessage::Init {
                generation: self.sync.generation,
            });
        }
        if now >= self.cc_due() {
            self.sender.next_cc = now + self.setup.cc_interval;
            self.sender.cc_consumed = self.sender.consumed;
            self.counters.cc_update_tx += 1;
            let mut consumed = [0u32; VCS];
            for (v, c) in consumed.iter_mut().enumerate() {
                let settled = self.sender.consumed[v] - in_flight[v].min(self.sender.used(v));
                *c = (settled % COUNTER_MODULUS) as u32;
            }
            return Some(CreditMessage::CcUpdate {
                credited: self.setup.credited,
                consumed: Box::new(consumed),
            });
        }
        let (at, v) = self
            .receiver
            .due(&self.setup, self.min_spacing, self.max_spacing)?;
        if at > now {
            return None;
        }
        let r = &mut self.receiver;
        r.announced[v] = r.freed[v];
        r.announced_at[v] = now;
        r.last_cf = Some(now);
        r.next_vc = (v + 1) % VCS;
        r.refresh_wanted &= !(1 << v);
        self.counters.cf_update_tx += 1;
        Some(CreditMessage::CfUpdate {
            vc: v as u8,
            freed: (r.freed[v] % COUNTER_MODULUS) as u32,
        })
    }

    /// A credit message from the peer arrived. While this port's INIT is unanswered only
    /// INIT and INIT_ECHO count: updates of the peer's old counters mean nothing now.
    pub fn receive(&mut self, msg: CreditMessage) {
        match msg {
            CreditMessage::CfUpdate { vc, freed } => {
                self.counters.cf_update_rx += 1;
                if self.sync.awaiting.is_none()
                    && self.setup.is_credited(vc)
                    && self.sender.credits_freed(vc, freed).is_none()
                {
                    self.counters.implausible_rx += 1;
                }
            }
            CreditMessage::CcUpdate { credited, consumed } => {
                self.counters.cc_update_rx += 1;
                if self.sync.awaiting.is_some() {
                    return;
                }
                // The peer's sender holds credits or has just sent: what a lost CF_Update
                // kept from it, each credited channel's next refresh gives back.
                self.receiver.refresh_wanted |= credited & self.setup.credited;
                for (v, &c) in consumed.iter().enumerate() {
                    if credited & (1 << v) != 0 && self.setup.is_credited(v as u8) {
                        let credits = self.own_credits(v);
                        if self.receiver.resync(v as u8, c, credits).is_none() {
                            self.counters.implausible_rx += 1;
                        }
                    }
                }
            }
            CreditMessage::Init { generation } => self.hear_init(generation),
            CreditMessage::InitEcho {
                generation,
                credited,
                held,
            } => {
                let answers = self.sync.awaiting.is_some() && generation == self.sync.generation;
                if answers {
                    let held: [u64; VCS] = core::array::from_fn(|v| {
                        if credited & (1 << v) != 0 {
                            held[v] as u64
                        } else {
                            0
                        }
                    });
                    self.sender.restart(&held);
                    self.sync.awaiting = None;
                    self.counters.cbfc_resyncs += 1;
                }
            }
        }
    }

    /// The peer's INIT of `generation`: a new one starts this port's counters for the
    /// link again (its sender from zero, its receiver from what it holds of the peer's
    /// frames); any one is answered with those credits.
    fn hear_init(&mut self, generation: u32) {
        if self.sync.peer != Some(generation) {
            self.sync.peer = Some(generation);
            self.sender.restart(&[0; VCS]);
            let held = self.receiver.restart();
            let wire: [u32; VCS] = core::array::from_fn(|v| (held[v] % COUNTER_MODULUS) as u32);
            self.sync.echo = Some((generation, Box::new(wire)));
            self.counters.cbfc_resyncs += 1;
        } else if self.sync.echo.is_none() {
            // The same INIT again (the ECHO was lost): the same answer.
            let wire: [u32; VCS] =
                core::array::from_fn(|v| (self.receiver.consumed[v] % COUNTER_MODULUS) as u32);
            self.sync.echo = Some((generation, Box::new(wire)));
        }
    }

    /// The credits this port's receiver gave channel `v` (its share of the port's in
    /// per-port mode: the port's).
    fn own_credits(&self, v: usize) -> u64 {
        match self.setup.mode {
            CreditMode::PerVc => self.setup.rx_credits[v] as u64,
            CreditMode::PerPort => self.setup.port_credits(),
        }
    }

    /// No credits held either way, every freed credit announced, no handshake under way.
    pub fn settled(&self) -> bool {
        let r = &self.receiver;
        self.sender.port_used == 0
            && r.consumed == r.freed
            && r.freed == r.announced
            && r.uncounted == [0; VCS]
            && self.sync.awaiting.is_none()
            && self.sync.echo.is_none()
    }

    /// Port counters as of now.
    pub fn port_counters(&self) -> CbfcCounters {
        let mut c = self.counters;
        c.sender_credits_used = self.sender.port_used;
        c.sender_credits_used_watermark = self.sender.port_watermark;
        c.awaiting_init = u64::from(self.sync.awaiting.is_some());
        c
    }

    /// Counters of channel `vc`.
    pub fn vc_counters(&self, vc: usize) -> VcCounters {
        let mut c = VcCounters::default();
        self.sender.fill(vc, &mut c);
        self.receiver.fill(vc, &mut c);
        c
    }
}

/// A CBFC control message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CreditMessage {
    /// Receiver → sender: channel `vc`'s freed count (mod 2^20). An 8-byte ordered set.
    CfUpdate {
        /// The channel.
        vc: u8,
        /// Its freed count, mod 2^20.
        freed: u32,
    },
    /// Sender → receiver: the consumed count of each credited channel (mod 2^20). A
    /// 64-byte frame.
    CcUpdate {
        /// Channels carried, bit = VC.
        credited: u32,
        /// Consumed count per channel, mod 2^20 (out of line: every parsed frame has room
        /// for a control message, and a rare CC_Update must not make that room 128 bytes).
        consumed: Box<[u32; VCS]>,
    },
    /// Either way: this port's counters start again from zero, as generation
    /// `generation` (a switch that started, a link that came up). A 64-byte frame.
    Init {
        /// The sender's generation.
        generation: u32,
    },
    /// The answer to an INIT: this port started its counters for the link again too, and
    /// still holds `held` credits of the INIT's sender's frames per channel. A 64-byte
    /// frame.
    InitEcho {
        /// The generation it answers.
        generation: u32,
        /// Channels carried, bit = VC.
        credited: u32,
        /// Credits held per channel, mod 2^20.
        held: Box<[u32; VCS]>,
    },
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::counter_group::CounterGroup;

    #[test]
    fn the_cost_of_a_frame_is_its_credits_rounded_up() {
        let s = CbfcSetup::default();
        // beyond-pfc.md's arithmetic: 64 B → 1, 129 B → 2, 1518 B → 12, 9216 B → 72.
        for (len, credits) in [(64, 1), (128, 1), (129, 2), (1518, 12), (9216, 72)] {
            assert_eq!(s.cost(len), credits, "{len} B");
        }
        let s = CbfcSetup { overhead: -16, ..s };
        assert_eq!((s.cost(144), s.cost(145)), (1, 2));
        let s = CbfcSetup { overhead: 127, ..s };
        assert_eq!(s.cost(1), 1);
        assert_eq!(s.cost(2), 2);
    }

    #[test]
    fn a_sender_stops_at_its_limit_and_a_cf_update_frees_what_it_carries() {
        let mut setup = CbfcSetup::default();
        setup.rx_credits[3] = 24;
        let mut link = CbfcLink::new(Rate::gbps(100), setup, &setup);
        assert!(link.may_send(3, 1518));
        link.sent(3, 1518);
        link.sent(3, 1518);
        assert!(!link.may_send(3, 64), "24 of 24 credits held");
        assert!(link.may_send(0, 9216), "VC 0 is not credited");
        // A stale update (freed 0) frees nothing; freed 12 frees one frame's credits.
        assert_eq!(link.sender.credits_freed(3, 0), Some(0));
        link.receive(CreditMessage::CfUpdate { vc: 3, freed: 12 });
        assert_eq!(link.sender.used(3), 12);
        assert!(link.may_send(3, 1518));
        // The same update again (a duplicate) frees nothing more.
        link.receive(CreditMessage::CfUpdate { vc: 3, freed: 12 });
        assert_eq!(link.sender.used(3), 12);
        let c = link.vc_counters(3);
        assert_eq!(
            (
                c.sender_credits_consumed,
                c.sender_credits_freed,
                c.sender_credits_used_watermark
            ),
            (24, 12, 24)
        );
        assert_eq!(link.port_counters().cf_update_rx, 2);
    }

    #[test]
    fn counters_wrap_at_two_to_the_twentieth() {
        let setup = CbfcSetup::default();
        let mut s = CreditSender::new(&setup, &setup);
        // Run the counters past 2^20 in steps of 1000 credits freed by absolute updates.
        let mut total = 0u64;
        while total < 3 * COUNTER_MODULUS {
            s.consume(3, 1000);
            total += 1000;
            let wire = (total % COUNTER_MODULUS) as u32;
            assert_eq!(s.credits_freed(3, wire), Some(1000), "at {total}");
        }
        assert_eq!(s.used(3), 0);
        assert_eq!(s.consumed_wire(3) as u64, total % COUNTER_MODULUS);
    }

    #[test]
    fn a_cc_update_frees_the_credits_of_frames_lost_on_the_wire() {
        let setup = CbfcSetup::default();
        let mut tx = CbfcLink::new(Rate::gbps(100), setup, &setup);
        let mut rx = CbfcLink::new(Rate::gbps(100), setup, &setup);
        for i in 0..10 {
            tx.sent(3, 1518);
            if i != 4 {
                rx.stored(3, 1518); // frame 4 had a bad FCS
            }
        }
        for _ in 0..9 {
            rx.drained(3, 1518);
        }
        assert_eq!(rx.receiver.held(3), 0);
        let cc = tx
            .take(setup.cc_interval, &[0; VCS])
            .expect("a CC_Update is due");
        rx.receive(cc);
        let now = setup.cc_interval + Time::from_us(1);
        // The receiver's own CC_Update is due too; the CF_Update follows it.
        let cf = std::iter::from_fn(|| rx.take(now, &[0; VCS]))
            .find(|m| matches!(m, CreditMessage::CfUpdate { .. }))
            .expect("freed moved");
        assert_eq!(cf, CreditMessage::CfUpdate { vc: 3, freed: 120 });
        tx.receive(cf);
        assert_eq!(tx.sender.used(3), 0, "all 120 credits back");
        let c = rx.vc_counters(3);
        assert_eq!(
            (c.receiver_credits_consumed, c.receiver_credits_freed),
            (120, 120)
        );
        assert_eq!(VcCounters::DEFS.len(), 6);
    }

    #[test]
    fn cf_updates_keep_their_minimum_spacing_and_repeat_at_the_maximum() {
        let setup = CbfcSetup::default();
        let mut rx = CbfcLink::new(Rate::gbps(100), setup, &setup);
        // Nothing freed: each credited channel is announced every 256 KiB of line time
        // (20,971.52 ns at 100G), the second the minimum spacing after the first.
        let max = Rate::gbps(100).time_for_bytes_ceil(256 * 1024);
        let min = Rate::gbps(100).time_for_bytes_ceil(6400);
        assert_eq!(min, Time::from_ns(512));
        assert!(rx.take(Time::ZERO, &[0; VCS]).is_none());
        assert_eq!(rx.next_due(), max);
        assert_eq!(
            rx.take(max, &[0; VCS]),
            Some(CreditMessage::CfUpdate { vc: 3, freed: 0 })
        );
        assert_eq!(rx.next_due(), max + min);
        assert_eq!(
            rx.take(max + min, &[0; VCS]),
            Some(CreditMessage::CfUpdate { vc: 4, freed: 0 })
        );
        assert_eq!(rx.next_due(), max + max);
        rx.stored(3, 1518);
        rx.drained(3, 1518);
        let at = max + min + min;
        assert_eq!(rx.next_due(), at, "the spacing after the last update");
        assert_eq!(
            rx.take(at, &[0; VCS]),
            Some(CreditMessage::CfUpdate { vc: 3, freed: 12 })
        );
    }
}
