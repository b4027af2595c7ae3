//! A frame inside the switch: the header bytes it holds, its declared length, and the
//! metadata the pipeline attaches (the PSA "standard metadata" of this model).

use crate::link::FrameClass;
use lossless_buffer_model::wred::Color;
use lossless_buffer_model::Time;

/// Where the IP header sits in a packet's bytes, for the egress ECN rewrite.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum IpAt {
    /// No IP header was parsed.
    #[default]
    None,
    /// IPv4 header at this byte offset (at most 22: two VLAN tags; one byte keeps
    /// [`Meta`] in 48 bytes, so a queued frame's slot in 88).
    V4(u8),
    /// IPv6 header at this byte offset.
    V6(u8),
}

/// Per-packet metadata carried from ingress to egress.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Meta {
    /// Port the frame arrived on.
    pub in_port: u16,
    /// Port it leaves from.
    pub out_port: u16,
    /// Traffic class from the QoS maps.
    pub tc: u8,
    /// Ingress priority group (buffer accounting).
    pub pg: u8,
    /// Egress queue.
    pub queue: u8,
    /// Colour for WRED (green unless a policer says otherwise).
    pub color: Color,
    /// Buffer cells held while queued (a frame of at most 16,383 bytes holds fewer than
    /// 2^16 cells of any size).
    pub cells: u16,
    /// What packet trimming may do or did to the frame.
    pub trim: Trim,
    /// 5-tuple hash (ECMP, flowlets); set by the first L3 switch a frame crosses and kept
    /// by the next ones (0 until then: frames from hosts, TAPs and L2-only paths).
    pub flow_hash: u32,
    /// When the last bit was received by the switch.
    pub rx_time: Time,
    /// Location of the IP header, for CE marking.
    pub ip: IpAt,
    /// ECN field as received (0 not-ECT, 1 ECT(1), 2 ECT(0), 3 CE).
    pub ecn: u8,
    /// Engine-owned tag the switch carries untouched (e.g. generator flow id).
    pub flow: u32,
    /// Data, or a link-layer control frame (set by whoever made the frame).
    pub class: FrameClass,
    /// Engine-owned sequence number carried untouched.
    pub seq: u64,
    /// Engine-owned send timestamp (first bit sent by the source), carried untouched.
    pub sent_at: Time,
}

/// A frame's standing with packet trimming (SONiC `packet_discard_action: trim`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Trim {
    /// Trimmed instead of dropped if its queue trims and the buffer refuses it.
    #[default]
    Eligible,
    /// An ACL rule said `disable_trim`: dropped, never trimmed.
    Disabled,
    /// The trimmed copy of a frame refused on queue `.0` of its egress port (whose
    /// `tx_trim` and `dropped_trim` counters it counts on).
    From(u8),
}

// A queued frame is mostly its metadata: keep it in 48 bytes (see `switch::frames`).
const _: () = assert!(std::mem::size_of::<Meta>() <= 48);

/// A frame: the bytes held (headers, or the whole frame from a TAP) and the declared frame
/// length `len`, which counts the 4-byte FCS. Bytes beyond `data` are payload that is
/// never materialized.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Packet {
    /// Bytes held, starting at the destination MAC; never more than `len - 4`.
    pub data: Vec<u8>,
    /// Frame length in bytes including FCS.
    pub len: u32,
    /// Pipeline metadata.
    pub meta: Meta,
    /// What the link carrying the frame added to it and found about it.
    pub hop: Hop,
}

// A frame is its bytes' vector, its length, its metadata and its hop tag in 80 bytes (the
// tag fills what was padding).
const _: () = assert!(std::mem::size_of::<Packet>() <= 80);

/// The receiving MAC's verdict on a frame's FCS.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fcs {
    /// The FCS matches.
    Good,
    /// The frame was corrupted on the wire (a frame error): the FCS fails.
    Bad,
    /// The sender marked the frame bad on purpose (an LLR poisoned frame: it knew the
    /// frame was broken after starting it, so it must not be retried).
    Poisoned,
}

/// What one hop adds to a frame and finds about it: LLR's sequence number (UE carries it
/// in the preamble) and the FCS verdict, packed in 32 bits. Set by the link layer that
/// sends the frame and by the wire; a switch clears it when the frame leaves again.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Hop(u32);

impl Hop {
    const SEQ: u32 = (1 << 20) - 1;
    const LLR: u32 = 1 << 20;
    const BAD: u32 = 1 << 21;
    const POISONED: u32 = 1 << 22;

    /// A plain frame: no sequence number, FCS good.
    pub const PLAIN: Hop = Hop(0);

    /// An LLR frame with sequence number `seq` (20 bits).
    #[inline]
    pub fn llr(seq: u32) -> Hop {
        Hop(Hop::LLR | (seq & Hop::SEQ))
    }

    /// The LLR sequence number (None: a plain frame).
    #[inline]
    pub fn llr_seq(self) -> Option<u32> {
        (self.0 & Hop::LLR != 0).then_some(self.0 & Hop::SEQ)
    }

    /// The FCS verdict.
    #[inline]
    pub fn fcs(self) -> Fcs {
        if self.0 & Hop::BAD != 0 {
            Fcs::Bad
        } else if self.0 & Hop::POISONED != 0 {
            Fcs::Poisoned
        } else {
            Fcs::Good
        }
    }

    /// Corrupted on the wire: the FCS fails at the receiver.
    #[inline]
    pub fn corrupt(&mut self) {
        self.0 |= Hop::BAD;
    }

    /// Marked bad by its sender on purpose (LLR poison).
    #[inline]
    pub fn poison(&mut self) {
        self.0 |= Hop::POISONED;
    }
}

impl Packet {
    /// A frame holding `data` whose full length (FCS included) is `len`.
    pub fn new(data: Vec<u8>, len: u32) -> Packet {
        Packet {
            data,
            len,
            meta: Meta::default(),
            hop: Hop::PLAIN,
        }
    }

    /// A whole frame as read from a TAP or a pcap (no FCS): `len = data.len() + 4`.
    pub fn from_wire(data: Vec<u8>) -> Packet {
        let len = data.len() as u32 + 4;
        Packet::new(data, len)
    }
}
