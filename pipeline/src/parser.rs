//! Ingress parser: the bytes of a frame → a header vector ([`Parsed`]) or a [`DropReason`].
//!
//! Ethernet, up to two VLAN tags (0x8100, 0x88A8, 0x9100; deeper stacks are classified at
//! L2 only), IPv4 (options included) or IPv6 (extension headers walked to find UDP/TCP),
//! UDP, TCP, the RoCEv2 BTH on UDP 4791 and MAC Control (PFC / 802.3x PAUSE), which
//! every MAC speaks. The UE link-control messages (EtherType 0x88B5,
//! [`crate::wire::link_control`]) are not read here: only a port that speaks CBFC or LLR
//! reads them ([`crate::link::LinkLayer::read_link_control`]); to the parser 0x88B5 is an
//! EtherType like any other, forwarded at L2. Layer headers are read through etherparse's slice types; lengths are checked against the
//! declared frame length, since simulated frames hold their headers only.

use crate::drop_reason::DropReason;
use crate::link::ControlFrame;
use crate::wire::pfc::ETHERTYPE_MAC_CONTROL;
use crate::wire::rocev2::{Aeth, Bth, BTH_LEN, OPCODE_ACKNOWLEDGE, ROCEV2_PORT};
use crate::wire::vlan;
use etherparse::{
    err, Ethernet2HeaderSlice, Ipv4HeaderSlice, Ipv6HeaderSlice, SingleVlanHeaderSlice,
    TcpHeaderSlice, UdpHeaderSlice,
};

/// EtherType of IPv4.
pub const ETHERTYPE_IPV4: u16 = 0x0800;
/// EtherType of IPv6.
pub const ETHERTYPE_IPV6: u16 = 0x86DD;
/// IP protocol number of UDP.
pub const IPPROTO_UDP: u8 = 17;
/// IP protocol number of TCP.
pub const IPPROTO_TCP: u8 = 6;

/// One parsed 802.1Q / 802.1ad tag.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Vlan {
    /// Tag protocol identifier (0x8100, 0x88A8, 0x9100).
    pub tpid: u16,
    /// Priority code point (802.1p priority).
    pub pcp: u8,
    /// Drop eligible indicator.
    pub dei: bool,
    /// VLAN id.
    pub vid: u16,
    /// Byte offset of the tag's TCI in the frame (for PCP rewrite).
    pub tci_offset: u16,
}

/// The network layer as parsed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum L3 {
    /// No IP header (or classified at L2 only).
    #[default]
    None,
    /// IPv4.
    V4 {
        /// Byte offset of the IPv4 header.
        offset: u16,
        /// DSCP (6 bits).
        dscp: u8,
        /// ECN (2 bits).
        ecn: u8,
        /// Time to live.
        ttl: u8,
        /// Protocol number.
        proto: u8,
        /// Source address.
        src: [u8; 4],
        /// Destination address.
        dst: [u8; 4],
    },
    /// IPv6.
    V6 {
        /// Byte offset of the IPv6 header.
        offset: u16,
        /// DSCP (upper 6 bits of the traffic class).
        dscp: u8,
        /// ECN (lower 2 bits of the traffic class).
        ecn: u8,
        /// Hop limit.
        hop_limit: u8,
        /// Upper-layer protocol after extension headers (or the first next header).
        proto: u8,
        /// Source address.
        src: [u8; 16],
        /// Destination address.
        dst: [u8; 16],
    },
}

/// The transport layer as parsed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum L4 {
    /// None, or not reachable (fragment, unknown protocol).
    #[default]
    None,
    /// UDP ports.
    Udp {
        /// Source port.
        src: u16,
        /// Destination port.
        dst: u16,
    },
    /// TCP ports.
    Tcp {
        /// Source port.
        src: u16,
        /// Destination port.
        dst: u16,
    },
}

/// RoCEv2 BTH fields.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct BthFields {
    /// Opcode (0x81 = CNP).
    pub opcode: u8,
    /// Destination QP.
    pub dest_qp: u32,
    /// Packet sequence number.
    pub psn: u32,
    /// BECN bit.
    pub becn: bool,
    /// AckReq bit: the requester asks for an acknowledgement.
    pub ack_req: bool,
    /// An Acknowledge packet's AETH: (syndrome, MSN), when the frame holds it.
    pub aeth: Option<(u8, u32)>,
}

/// The header vector of one frame.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Parsed {
    /// Destination MAC.
    pub dst: [u8; 6],
    /// Source MAC.
    pub src: [u8; 6],
    /// Tags parsed, outermost first (`vlan_count` of them valid).
    pub vlans: [Vlan; 2],
    /// Number of valid entries in `vlans`.
    pub vlan_count: u8,
    /// More than two tags: classified at L2 only.
    pub deep_stack: bool,
    /// EtherType after the tags.
    pub ethertype: u16,
    /// Network layer.
    pub l3: L3,
    /// Transport layer.
    pub l4: L4,
    /// RoCEv2 BTH, on UDP port 4791.
    pub bth: Option<BthFields>,
    /// The link-layer control frame (PFC, PAUSE), if this is one.
    pub control: Option<ControlFrame>,
    /// The frame is shorter than its IP header says: a trimmed packet (a switch cut it
    /// to its headers and left the lengths as they were, docs/physics.md, "Packet
    /// trimming"). It is forwarded like any other; an RC receiver answers it with a NAK.
    pub cut: bool,
}

impl Parsed {
    /// Outer VLAN tag, if any.
    pub fn outer_vlan(&self) -> Option<&Vlan> {
        (self.vlan_count > 0).then_some(&self.vlans[0])
    }

    /// 5-tuple (or L2) flow hash: stable across runs, spreads well over ECMP members.
    pub fn flow_hash(&self) -> u32 {
        let mut h = Fnv::default();
        match self.l3 {
            L3::V4 {
                src, dst, proto, ..
            } => {
                h.write(&src);
                h.write(&dst);
                h.write(&[proto]);
            }
            L3::V6 {
                src, dst, proto, ..
            } => {
                h.write(&src);
                h.write(&dst);
                h.write(&[proto]);
            }
            L3::None => {
                h.write(&self.src);
                h.write(&self.dst);
                h.write(&self.ethertype.to_be_bytes());
            }
        }
        match self.l4 {
            L4::Udp { src, dst } | L4::Tcp { src, dst } => {
                h.write(&src.to_be_bytes());
                h.write(&dst.to_be_bytes());
            }
            L4::None => {}
        }
        h.finish()
    }
}

#[derive(Clone, Copy)]
struct Fnv(u32);
impl Default for Fnv {
    fn default() -> Self {
        Fnv(0x811C_9DC5)
    }
}
impl Fnv {
    fn write(&mut self, b: &[u8]) {
        for x in b {
            self.0 = (self.0 ^ *x as u32).wrapping_mul(0x0100_0193);
        }
    }
    fn finish(self) -> u32 {
        // Final avalanche so low bits (used by `% members`) depend on every input bit.
        let mut x = self.0;
        x ^= x >> 16;
        x = x.wrapping_mul(0x7FEB_352D);
        x ^= x >> 15;
        x
    }
}

/// Parse `data` (the frame from the destination MAC on), whose declared length including
/// FCS is `len`.
pub fn parse(data: &[u8], len: u32) -> Result<Parsed, DropReason> {
    let mut p = Parsed::default();
    parse_into(data, len, &mut p)?;
    Ok(p)
}

/// [`parse`] into `p`, which it overwrites (after an error, what `p` holds is not
/// meaningful): a switch parses every frame, and the header vector (~120 bytes) is then
/// written once, where the caller keeps it, instead of being moved out of a `Result`.
#[inline]
pub fn parse_into(data: &[u8], len: u32, p: &mut Parsed) -> Result<(), DropReason> {
    parse_headers::<true>(data, len, p)
}

/// [`parse_into`] for forwarding: the same checks and the same drop reasons, but a RoCEv2
/// BTH is only checked, not kept (`p.bth` stays `None`). Forwarding never reads the BTH;
/// only an ACL rule on the opcode does.
#[inline]
pub fn parse_for_forwarding(data: &[u8], len: u32, p: &mut Parsed) -> Result<(), DropReason> {
    parse_headers::<false>(data, len, p)
}

/// The parser; `KEEP_BTH` says whether a BTH's fields are stored or only checked.
#[inline(always)]
fn parse_headers<const KEEP_BTH: bool>(
    data: &[u8],
    len: u32,
    p: &mut Parsed,
) -> Result<(), DropReason> {
    let eth = Ethernet2HeaderSlice::from_slice(data).map_err(|_| DropReason::TruncatedEthernet)?;
    *p = Parsed {
        dst: eth.destination(),
        src: eth.source(),
        ..Parsed::default()
    };
    let mut ethertype = eth.ether_type().0;
    let mut off = 14usize;
    while vlan::is_tpid(ethertype) {
        if p.vlan_count == 2 {
            p.deep_stack = true;
            p.ethertype = ethertype;
            return Ok(());
        }
        let tag = SingleVlanHeaderSlice::from_slice(&data[off..])
            .map_err(|_| DropReason::TruncatedVlan)?;
        p.vlans[p.vlan_count as usize] = Vlan {
            tpid: ethertype,
            pcp: tag.priority_code_point().value(),
            dei: tag.drop_eligible_indicator(),
            vid: tag.vlan_identifier().value(),
            tci_offset: off as u16,
        };
        p.vlan_count += 1;
        ethertype = tag.ether_type().0;
        off += 4;
    }
    p.ethertype = ethertype;
    // Bytes of the frame after the L2 header, by the declared length (FCS excluded).
    let l2_payload = (len as usize).saturating_sub(4).saturating_sub(off);
    match ethertype {
        ETHERTYPE_MAC_CONTROL => {
            if p.vlan_count > 0 {
                return Err(DropReason::MacControlTagged);
            }
            p.control = Some(ControlFrame::parse(data, len)?);
        }
        ETHERTYPE_IPV4 => parse_ipv4::<KEEP_BTH>(p, data, off, l2_payload)?,
        ETHERTYPE_IPV6 => parse_ipv6::<KEEP_BTH>(p, data, off, l2_payload)?,
        _ => {}
    }
    Ok(())
}

#[inline]
fn parse_ipv4<const KEEP_BTH: bool>(
    p: &mut Parsed,
    data: &[u8],
    off: usize,
    avail: usize,
) -> Result<(), DropReason> {
    use err::ipv4::{HeaderError, HeaderSliceError};
    let h = Ipv4HeaderSlice::from_slice(&data[off..]).map_err(|e| match e {
        HeaderSliceError::Len(_) => DropReason::TruncatedIpv4,
        HeaderSliceError::Content(HeaderError::UnexpectedVersion { .. }) => {
            DropReason::Ipv4BadVersion
        }
        HeaderSliceError::Content(HeaderError::HeaderLengthSmallerThanHeader { .. }) => {
            DropReason::Ipv4BadIhl
        }
    })?;
    let hlen = h.ihl() as usize * 4;
    let total = h.total_len() as usize;
    if total < hlen {
        return Err(DropReason::Ipv4BadTotalLength);
    }
    p.cut = total > avail;
    let proto = h.protocol().0;
    p.l3 = L3::V4 {
        offset: off as u16,
        dscp: h.dcp().value(),
        ecn: h.ecn().value(),
        ttl: h.ttl(),
        proto,
        src: h.source(),
        dst: h.destination(),
    };
    // Only the first fragment carries the transport header.
    if h.fragments_offset().value() == 0 {
        parse_l4::<KEEP_BTH>(p, data, off + hlen, total - hlen, proto, false)?;
    }
    Ok(())
}

fn parse_ipv6<const KEEP_BTH: bool>(
    p: &mut Parsed,
    data: &[u8],
    off: usize,
    avail: usize,
) -> Result<(), DropReason> {
    use err::ipv6::{HeaderError, HeaderSliceError};
    let h = Ipv6HeaderSlice::from_slice(&data[off..]).map_err(|e| match e {
        HeaderSliceError::Len(_) => DropReason::TruncatedIpv6,
        HeaderSliceError::Content(HeaderError::UnexpectedVersion { .. }) => {
            DropReason::Ipv6BadVersion
        }
    })?;
    let payload = h.payload_length() as usize;
    // Payload length 0 is a jumbogram (RFC 2675): its length lives in an option.
    p.cut = 40 + payload > avail;
    let jumbo = payload == 0;
    let payload = if jumbo { avail - 40 } else { payload };
    let tc = h.traffic_class();
    // Walk up to four extension headers that are fully held.
    let mut next = h.next_header().0;
    let mut at = off + 40;
    let mut left = payload;
    for _ in 0..4 {
        let ext_len = match next {
            0 | 43 | 60 => match data.get(at + 1) {
                Some(l) => (*l as usize + 1) * 8,
                None => break,
            },
            44 => 8,
            _ => break,
        };
        if ext_len > left || data.len() < at + ext_len {
            break;
        }
        let is_later_fragment =
            next == 44 && (u16::from_be_bytes([data[at + 2], data[at + 3]]) >> 3) != 0;
        next = data[at];
        at += ext_len;
        left -= ext_len;
        if is_later_fragment {
            next = 59; // no transport header in this fragment
            break;
        }
    }
    p.l3 = L3::V6 {
        offset: off as u16,
        dscp: tc >> 2,
        ecn: tc & 3,
        hop_limit: h.hop_limit(),
        proto: next,
        src: h.source(),
        dst: h.destination(),
    };
    parse_l4::<KEEP_BTH>(p, data, at, left, next, jumbo)
}

/// Transport header at `at`, with `ip_payload` bytes of IP payload by the IP length fields
/// (`jumbo`: an IPv6 jumbogram, whose length the IPv6 header does not give).
///
/// One rule for a transport header: it must be held and lie within the IP payload, or the
/// frame is dropped as truncated (`truncated_udp`, `truncated_tcp`) — bytes past the IP
/// payload are padding, never a header.
#[inline]
fn parse_l4<const KEEP_BTH: bool>(
    p: &mut Parsed,
    data: &[u8],
    at: usize,
    ip_payload: usize,
    proto: u8,
    jumbo: bool,
) -> Result<(), DropReason> {
    let held = data.get(at..).unwrap_or(&[]);
    match proto {
        IPPROTO_UDP => {
            if ip_payload < 8 {
                return Err(DropReason::TruncatedUdp);
            }
            let u = UdpHeaderSlice::from_slice(held).map_err(|_| DropReason::TruncatedUdp)?;
            let ulen = u.length() as usize;
            // Length 0 is allowed only for UDP over IPv6 jumbograms (RFC 2675).
            if (ulen == 0 && !jumbo) || (ulen != 0 && (ulen < 8 || ulen > ip_payload)) {
                return Err(DropReason::UdpBadLength);
            }
            p.l4 = L4::Udp {
                src: u.source_port(),
                dst: u.destination_port(),
            };
            if u.destination_port() == ROCEV2_PORT {
                let b = held
                    .get(8..)
                    .and_then(Bth::new_checked)
                    .ok_or(DropReason::TruncatedBth)?;
                if ip_payload < 8 + BTH_LEN {
                    return Err(DropReason::TruncatedBth);
                }
                if !KEEP_BTH {
                    return Ok(());
                }
                let aeth = (b.opcode() == OPCODE_ACKNOWLEDGE)
                    .then(|| held.get(8 + BTH_LEN..).and_then(Aeth::new_checked))
                    .flatten()
                    .map(|a| (a.syndrome(), a.msn()));
                p.bth = Some(BthFields {
                    opcode: b.opcode(),
                    dest_qp: b.dest_qp(),
                    psn: b.psn(),
                    becn: b.becn(),
                    ack_req: b.ack_req(),
                    aeth,
                });
            }
        }
        IPPROTO_TCP => {
            use err::tcp::{HeaderError, HeaderSliceError};
            if ip_payload < 20 {
                return Err(DropReason::TruncatedTcp);
            }
            let t = TcpHeaderSlice::from_slice(held).map_err(|e| match e {
                HeaderSliceError::Len(_) => DropReason::TruncatedTcp,
                HeaderSliceError::Content(HeaderError::DataOffsetTooSmall { .. }) => {
                    DropReason::TcpBadDataOffset
                }
            })?;
            if t.slice().len() > ip_payload {
                return Err(DropReason::TruncatedTcp);
            }
            p.l4 = L4::Tcp {
                src: t.source_port(),
                dst: t.destination_port(),
            };
        }
        _ => {}
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::rocev2::{emit_bth, ICRC_LEN};
    use etherparse::PacketBuilder;

    fn udp_frame(dport: u16, payload: &[u8]) -> Vec<u8> {
        let b = PacketBuilder::ethernet2([2, 0, 0, 0, 0, 1], [2, 0, 0, 0, 0, 2])
            .single_vlan(etherparse::VlanId::try_new(100).unwrap())
            .ipv4([198, 18, 0, 1], [198, 18, 0, 2], 64)
            .udp(49152, dport);
        let mut out = Vec::new();
        b.write(&mut out, payload).unwrap();
        out
    }

    #[test]
    fn parses_vlan_ipv4_udp_bth() {
        let mut bth = Vec::new();
        emit_bth(&mut bth, 0x04, 0x11, 42);
        bth.extend_from_slice(&[0; ICRC_LEN]);
        let mut f = udp_frame(ROCEV2_PORT, &bth);
        f[14] = (3 << 5) | f[14] & 0x1F; // PCP 3
        f[19] = (26 << 2) | 2; // DSCP 26, ECT(0)
        let len = f.len() as u32 + 4;
        let p = parse(&f, len).unwrap();
        assert_eq!(p.vlan_count, 1);
        assert_eq!((p.vlans[0].pcp, p.vlans[0].vid), (3, 100));
        assert!(matches!(
            p.l3,
            L3::V4 {
                dscp: 26,
                ecn: 2,
                ttl: 64,
                ..
            }
        ));
        assert_eq!(
            p.l4,
            L4::Udp {
                src: 49152,
                dst: ROCEV2_PORT
            }
        );
        assert_eq!(p.bth.unwrap().psn, 42);
    }

    #[test]
    fn truncation_and_bad_fields_have_reasons() {
        let f = udp_frame(1000, &[0; 20]);
        let len = f.len() as u32 + 4;
        assert_eq!(parse(&f[..10], len), Err(DropReason::TruncatedEthernet));
        assert_eq!(parse(&f[..16], len), Err(DropReason::TruncatedVlan));
        assert_eq!(parse(&f[..30], len), Err(DropReason::TruncatedIpv4));
        let mut g = f.clone();
        g[18] = 0x44; // IHL 4
        assert_eq!(parse(&g, len), Err(DropReason::Ipv4BadIhl));
        g[18] = 0x65; // version 6 under 0x0800
        assert_eq!(parse(&g, len), Err(DropReason::Ipv4BadVersion));
        let mut g = f.clone();
        g[20] = 0x10; // total length 4096+ beyond the frame: a trimmed packet
        assert!(parse(&g, len).unwrap().cut);
        assert!(!parse(&f, len).unwrap().cut);
        g[20] = 0;
        g[21] = 19; // total length below the header
        assert_eq!(parse(&g, len), Err(DropReason::Ipv4BadTotalLength));
        assert_eq!(parse(&f[..40], len), Err(DropReason::TruncatedUdp));
        let bth_short = udp_frame(ROCEV2_PORT, &[0; 6]);
        assert_eq!(
            parse(&bth_short, bth_short.len() as u32 + 4),
            Err(DropReason::TruncatedBth)
        );
    }

    /// An IPv4 frame (VLAN-tagged, as `udp_frame` makes them) whose IP payload is the first
    /// `kept` bytes of a UDP header, padded with zeros to 60 bytes as a MAC pads it.
    fn udp_cut_to(kept: usize) -> Vec<u8> {
        let mut f = udp_frame(1000, &[]);
        f.truncate(18 + 20 + kept);
        let total = (20 + kept) as u16;
        f[20..22].copy_from_slice(&total.to_be_bytes());
        f.resize(60, 0);
        f
    }

    #[test]
    fn a_transport_header_must_lie_within_the_ip_payload() {
        // 0, 4 or 6 bytes of UDP header: one rule, however the padding reads.
        for kept in [0, 4, 6] {
            let f = udp_cut_to(kept);
            assert_eq!(parse(&f, 64), Err(DropReason::TruncatedUdp), "{kept} bytes");
        }
        assert!(parse(&udp_cut_to(8), 64).is_ok());
        // UDP length 0 is a jumbogram's, not IPv4's.
        let mut f = udp_frame(1000, &[0; 20]);
        f[18 + 20 + 4..18 + 20 + 6].copy_from_slice(&[0, 0]);
        assert_eq!(parse(&f, f.len() as u32 + 4), Err(DropReason::UdpBadLength));
    }

    #[test]
    fn headers_only_frames_use_the_declared_length() {
        let f = udp_frame(1000, &[0; 1000]);
        let held = &f[..18 + 28];
        assert!(parse(held, f.len() as u32 + 4).is_ok());
    }

    #[test]
    fn three_tags_classify_at_l2_only() {
        let mut f = vec![0u8; 64];
        f[12..14].copy_from_slice(&0x88A8u16.to_be_bytes());
        f[16..18].copy_from_slice(&0x8100u16.to_be_bytes());
        f[20..22].copy_from_slice(&0x8100u16.to_be_bytes());
        f[24..26].copy_from_slice(&0x0800u16.to_be_bytes());
        let p = parse(&f, 68).unwrap();
        assert!(p.deep_stack);
        assert_eq!(p.vlan_count, 2);
        assert_eq!(p.l3, L3::None);
    }
}
