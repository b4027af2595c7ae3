//! Completing a transport checksum a sender left to offload. A host whose NIC (or veth)
//! offers checksum offload hands its frames over with only the pseudo-header sum in the
//! TCP or UDP checksum field (Linux's `CHECKSUM_PARTIAL`); the NIC would finish it on the
//! way out. A switch port that reads such a frame from a packet socket must finish it in
//! its place before the frame goes on, or the receiving host drops it.

use super::vlan::inner_ethertype;

pub(super) const ETHERTYPE_IPV4: u16 = 0x0800;
pub(super) const ETHERTYPE_IPV6: u16 = 0x86DD;
pub(super) const PROTO_TCP: u8 = 6;
pub(super) const PROTO_UDP: u8 = 17;
/// Where the checksum sits in a TCP and in a UDP header.
const TCP_CHECKSUM_AT: usize = 16;
const UDP_CHECKSUM_AT: usize = 6;

/// One's-complement sum of `b` as big-endian 16-bit words (an odd last byte padded).
fn sum16(b: &[u8], mut sum: u64) -> u64 {
    let mut chunks = b.chunks_exact(2);
    for c in &mut chunks {
        sum += u16::from_be_bytes([c[0], c[1]]) as u64;
    }
    if let [last] = chunks.remainder() {
        sum += (*last as u64) << 8;
    }
    sum
}

fn fold(mut sum: u64) -> u16 {
    while sum > 0xFFFF {
        sum = (sum & 0xFFFF) + (sum >> 16);
    }
    sum as u16
}

/// The IPv4 header checksum of `header` (options included), its own field taken as 0.
pub fn ipv4_header_checksum(header: &[u8]) -> u16 {
    !fold(sum16(&header[12..], sum16(&header[..10], 0)))
}

/// Compute the TCP or UDP checksum of the IPv4 or IPv6 packet in Ethernet frame `frame`
/// (VLAN tags allowed; IPv6 without extension headers) from scratch and write it. Returns
/// false, leaving the frame as it was, when the frame is not such a packet or is cut short.
pub fn complete_l4_checksum(frame: &mut [u8]) -> bool {
    let Some((ethertype, l3)) = inner_ethertype(frame) else {
        return false;
    };
    let (proto, l4, l4_len, pseudo) = match ethertype {
        ETHERTYPE_IPV4 => {
            let Some(h) = frame.get(l3..l3 + 20) else {
                return false;
            };
            let ihl = (h[0] & 0x0F) as usize * 4;
            let total = u16::from_be_bytes([h[2], h[3]]) as usize;
            // A fragment's checksum covers the whole datagram: not ours to finish.
            let fragmented = u16::from_be_bytes([h[6], h[7]]) & 0x3FFF != 0;
            if h[0] >> 4 != 4 || ihl < 20 || total < ihl || fragmented {
                return false;
            }
            let pseudo = sum16(&h[12..20], 0);
            (h[9], l3 + ihl, total - ihl, pseudo)
        }
        ETHERTYPE_IPV6 => {
            let Some(h) = frame.get(l3..l3 + 40) else {
                return false;
            };
            let len = u16::from_be_bytes([h[4], h[5]]) as usize;
            (h[6], l3 + 40, len, sum16(&h[8..40], 0))
        }
        _ => return false,
    };
    let at = match proto {
        PROTO_TCP => TCP_CHECKSUM_AT,
        PROTO_UDP => UDP_CHECKSUM_AT,
        _ => return false,
    };
    if l4 + l4_len > frame.len() || l4_len < at + 2 {
        return false;
    }
    let seg = &mut frame[l4..l4 + l4_len];
    seg[at..at + 2].fill(0);
    let sum = sum16(seg, pseudo + proto as u64 + l4_len as u64);
    let mut c = !fold(sum);
    if proto == PROTO_UDP && c == 0 {
        // UDP sends a computed zero as all ones (zero means "no checksum").
        c = 0xFFFF;
    }
    seg[at..at + 2].copy_from_slice(&c.to_be_bytes());
    true
}

#[cfg(test)]
mod tests {
    use super::*;
    use etherparse::PacketBuilder;

    fn udp_v4(vlan: bool) -> Vec<u8> {
        let b = PacketBuilder::ethernet2([2, 0, 0, 0, 0, 1], [2, 0, 0, 0, 0, 2]);
        let mut out = Vec::new();
        if vlan {
            b.single_vlan(etherparse::VlanId::try_new(5).unwrap())
                .ipv4([198, 18, 0, 1], [198, 18, 0, 2], 64)
                .udp(4791, 4791)
                .write(&mut out, &[7; 333])
                .unwrap();
        } else {
            b.ipv4([198, 18, 0, 1], [198, 18, 0, 2], 64)
                .tcp(40000, 5201, 1, 65000)
                .write(&mut out, &[9; 1001])
                .unwrap();
        }
        out
    }

    fn tcp_v6() -> Vec<u8> {
        let mut out = Vec::new();
        PacketBuilder::ethernet2([2, 0, 0, 0, 0, 1], [2, 0, 0, 0, 0, 2])
            .ipv6([0x20; 16], [0x21; 16], 64)
            .tcp(1, 2, 3, 4)
            .write(&mut out, &[1, 2, 3])
            .unwrap();
        out
    }

    #[test]
    fn a_partial_checksum_becomes_the_one_etherparse_computes() {
        for good in [udp_v4(false), udp_v4(true), tcp_v6()] {
            let mut f = good.clone();
            // What an offloading sender leaves: another value in the checksum field.
            let (l4, field) = match [f[12], f[13]] {
                [0x81, 0x00] => (14 + 4 + 20, UDP_CHECKSUM_AT),
                [0x86, 0xDD] => (14 + 40, TCP_CHECKSUM_AT),
                _ => (14 + 20, TCP_CHECKSUM_AT),
            };
            f[l4 + field] ^= 0x5A;
            f[l4 + field + 1] ^= 0xA5;
            assert_ne!(f, good);
            assert!(complete_l4_checksum(&mut f));
            assert_eq!(f, good);
        }
    }

    #[test]
    fn other_frames_are_left_alone() {
        let mut arp = vec![0xFF; 14];
        arp[12] = 0x08;
        arp[13] = 0x06;
        arp.extend([0; 28]);
        let before = arp.clone();
        assert!(!complete_l4_checksum(&mut arp));
        assert_eq!(arp, before);
        // Cut short: the IPv4 total length runs past the frame.
        let mut f = udp_v4(false);
        f.truncate(f.len() - 10);
        let before = f.clone();
        assert!(!complete_l4_checksum(&mut f));
        assert_eq!(f, before);
        assert!(!complete_l4_checksum(&mut [0u8; 5]));
    }
}
