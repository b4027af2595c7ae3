//! A frame inside the switch: the header bytes it holds, its declared length, and the
//! metadata the pipeline attaches (the PSA "standard metadata" of this model).

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
    /// Buffer cells held while queued.
    pub cells: u32,
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
    /// Engine-owned sequence number carried untouched.
    pub seq: u64,
    /// Engine-owned send timestamp (first bit sent by the source), carried untouched.
    pub sent_at: Time,
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
}

impl Packet {
    /// A frame holding `data` whose full length (FCS included) is `len`.
    pub fn new(data: Vec<u8>, len: u32) -> Packet {
        Packet {
            data,
            len,
            meta: Meta::default(),
        }
    }

    /// A whole frame as read from a TAP or a pcap (no FCS): `len = data.len() + 4`.
    pub fn from_wire(data: Vec<u8>) -> Packet {
        let len = data.len() as u32 + 4;
        Packet::new(data, len)
    }
}
