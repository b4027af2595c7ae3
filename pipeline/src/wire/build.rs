//! Header builder for generated frames: Ethernet, optional VLAN tag, IPv4 or IPv6, UDP and
//! an optional RoCEv2 BTH, with length fields describing a frame of a declared size whose
//! payload is never materialized. Built on etherparse's header types.

use crate::wire::rocev2::{emit_bth, BTH_LEN, ICRC_LEN, ROCEV2_PORT};
use etherparse::{
    EtherType, Ethernet2Header, IpNumber, Ipv4Header, Ipv6Header, SingleVlanHeader, UdpHeader,
    VlanId, VlanPcp,
};

/// The IPv6 prefix generated frames use: 2001:db8::/96 (RFC 3849's documentation prefix)
/// with the host's IPv4 address in the last 32 bits.
pub const IPV6_PREFIX: [u8; 12] = [0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0];

/// The IPv6 address a host of IPv4 address `v4` has in generated frames.
pub fn ipv6_of(v4: [u8; 4]) -> [u8; 16] {
    let mut a = [0u8; 16];
    a[..12].copy_from_slice(&IPV6_PREFIX);
    a[12..].copy_from_slice(&v4);
    a
}

/// The headers of one generated frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FrameSpec {
    /// Source MAC.
    pub src_mac: [u8; 6],
    /// Destination MAC.
    pub dst_mac: [u8; 6],
    /// Optional 802.1Q tag: (VLAN id, PCP).
    pub vlan: Option<(u16, u8)>,
    /// Source IPv4 address.
    pub src_ip: [u8; 4],
    /// Destination IPv4 address.
    pub dst_ip: [u8; 4],
    /// Send over IPv6 instead: the addresses are then [`ipv6_of`] the IPv4 ones, DSCP and
    /// ECN in the traffic class, hop limit 64.
    pub ipv6: bool,
    /// DSCP (0–63).
    pub dscp: u8,
    /// ECN (0 not-ECT, 1 ECT(1), 2 ECT(0), 3 CE).
    pub ecn: u8,
    /// UDP source port.
    pub src_port: u16,
    /// UDP destination port (4791 when `bth` is set).
    pub dst_port: u16,
    /// RoCEv2 BTH: (opcode, destination QP, PSN).
    pub bth: Option<(u8, u32, u32)>,
    /// Frame length in bytes including FCS.
    pub len: u32,
}

/// Why a frame cannot be built.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BuildError {
    /// `len` is too small for the headers (value: the minimum).
    TooShort(u32),
    /// A field is out of range (VLAN id > 4095, PCP > 7, DSCP > 63, ECN > 3).
    FieldRange,
}

impl FrameSpec {
    /// Frame bytes besides the payload: Ethernet (and tag), IPv4 (or IPv6), UDP, BTH and
    /// ICRC when RoCEv2, FCS (62 bytes for untagged RoCEv2 over IPv4, 82 over IPv6).
    pub fn overhead(&self) -> u32 {
        let l2 = 14 + if self.vlan.is_some() { 4 } else { 0 };
        let l4 = 8 + if self.bth.is_some() {
            (BTH_LEN + ICRC_LEN) as u32
        } else {
            0
        };
        l2 + self.ip_header_len() + l4 + 4
    }

    /// Bytes of the IP header: 20 (IPv4) or 40 (IPv6).
    fn ip_header_len(&self) -> u32 {
        if self.ipv6 {
            40
        } else {
            20
        }
    }

    /// Smallest frame length (FCS included) these headers fit in (64 at least).
    pub fn min_len(&self) -> u32 {
        self.overhead().max(64)
    }

    /// Write the headers into `out` (cleared first).
    pub fn write(&self, out: &mut Vec<u8>) -> Result<(), BuildError> {
        if self.len < self.min_len() {
            return Err(BuildError::TooShort(self.min_len()));
        }
        if self.dscp > 63 || self.ecn > 3 {
            return Err(BuildError::FieldRange);
        }
        out.clear();
        // The bytes held: no ICRC, no FCS (exactly, so a new 56-byte buffer grows once).
        let icrc = if self.bth.is_some() {
            ICRC_LEN as u32
        } else {
            0
        };
        out.reserve_exact((self.overhead() - icrc - 4) as usize);
        let l2 = 14 + if self.vlan.is_some() { 4 } else { 0 };
        let ip_total = self.len - 4 - l2;
        let ip_type = if self.ipv6 {
            EtherType::IPV6
        } else {
            EtherType::IPV4
        };
        let eth = Ethernet2Header {
            source: self.src_mac,
            destination: self.dst_mac,
            ether_type: if self.vlan.is_some() {
                EtherType::VLAN_TAGGED_FRAME
            } else {
                ip_type
            },
        };
        out.extend_from_slice(&eth.to_bytes());
        if let Some((vid, pcp)) = self.vlan {
            let tag = SingleVlanHeader {
                pcp: VlanPcp::try_new(pcp).map_err(|_| BuildError::FieldRange)?,
                drop_eligible_indicator: false,
                vlan_id: VlanId::try_new(vid).map_err(|_| BuildError::FieldRange)?,
                ether_type: ip_type,
            };
            out.extend_from_slice(&tag.to_bytes());
        }
        let udp_len = ip_total - self.ip_header_len();
        if self.ipv6 {
            let ip = Ipv6Header {
                traffic_class: (self.dscp << 2) | self.ecn,
                flow_label: Default::default(),
                payload_length: udp_len as u16,
                next_header: IpNumber::UDP,
                hop_limit: 64,
                source: ipv6_of(self.src_ip),
                destination: ipv6_of(self.dst_ip),
            };
            out.extend_from_slice(&ip.to_bytes());
        } else {
            let mut ip =
                Ipv4Header::new(udp_len as u16, 64, IpNumber::UDP, self.src_ip, self.dst_ip)
                    .map_err(|_| BuildError::FieldRange)?;
            ip.dscp = etherparse::IpDscp::try_new(self.dscp).map_err(|_| BuildError::FieldRange)?;
            ip.ecn = etherparse::IpEcn::try_new(self.ecn).map_err(|_| BuildError::FieldRange)?;
            ip.dont_fragment = true;
            ip.header_checksum = ip.calc_header_checksum();
            out.extend_from_slice(&ip.to_bytes());
        }
        let udp = UdpHeader {
            source_port: self.src_port,
            destination_port: if self.bth.is_some() {
                ROCEV2_PORT
            } else {
                self.dst_port
            },
            length: udp_len as u16,
            checksum: 0,
        };
        out.extend_from_slice(&udp.to_bytes());
        if let Some((opcode, qp, psn)) = self.bth {
            emit_bth(out, opcode, qp, psn);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parser::{parse, L3, L4};

    #[test]
    fn built_frames_parse_back() {
        let spec = FrameSpec {
            src_mac: [2, 0, 0, 0, 0, 1],
            dst_mac: [2, 0, 0, 0, 0, 2],
            vlan: Some((10, 3)),
            src_ip: [198, 18, 0, 1],
            dst_ip: [198, 18, 0, 2],
            ipv6: false,
            dscp: 3,
            ecn: 2,
            src_port: 1234,
            dst_port: 0,
            bth: Some((0x04, 7, 99)),
            len: 1518,
        };
        let mut b = Vec::new();
        spec.write(&mut b).unwrap();
        assert_eq!(b.len(), 14 + 4 + 20 + 8 + 12);
        let p = parse(&b, 1518).unwrap();
        assert!(matches!(
            p.l3,
            L3::V4 {
                dscp: 3,
                ecn: 2,
                ..
            }
        ));
        assert_eq!(
            p.l4,
            L4::Udp {
                src: 1234,
                dst: ROCEV2_PORT
            }
        );
        assert_eq!(p.bth.unwrap().psn, 99);
        assert_eq!(
            FrameSpec { len: 63, ..spec }.write(&mut b),
            Err(BuildError::TooShort(66))
        );
    }
}
