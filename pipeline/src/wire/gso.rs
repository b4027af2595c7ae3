//! Cutting a host's segmentation-offload super-frame into the frames its NIC would have
//! sent. A host with TCP segmentation offload (TSO) or UDP segmentation offload (USO)
//! hands its NIC one frame of up to 64 KB, with one set of headers and a segment size; the
//! NIC sends it as frames of at most that much transport payload each, every header fixed
//! up. A switch port that reads such a frame (from a TAP or a packet socket that carries
//! the virtio-net header) cuts it the same way before the pipeline sees it, so buffer
//! cells, PFC thresholds, ECN marks, counters and shapers all count the frames the wire
//! would have carried.

use super::checksum::{
    complete_l4_checksum, ipv4_header_checksum, ETHERTYPE_IPV4, ETHERTYPE_IPV6, PROTO_TCP,
    PROTO_UDP,
};
use super::vlan::inner_ethertype;

const IPV6_HEADER: usize = 40;
const UDP_HEADER: usize = 8;
/// TCP flags a NIC keeps only on the last segment (FIN, PSH) and only on the first (CWR).
const TCP_FIN: u8 = 0x01;
const TCP_PSH: u8 = 0x08;
const TCP_CWR: u8 = 0x80;
/// Most segments one super-frame may become: 64 KB cut into 64-byte payloads. A host
/// declaring a smaller size is not cutting for a real wire.
pub const MAX_SEGMENTS: usize = 1024;

/// The transport a super-frame carries, as its host declared it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SegmentKind {
    /// TCP over IPv4 (TSO4).
    Tcp4,
    /// TCP over IPv6 (TSO6).
    Tcp6,
    /// UDP over IPv4 or IPv6, one datagram per segment (USO: Linux's `UDP_SEGMENT`).
    Udp,
}

/// What a host left to its NIC for one frame it handed over.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Offload {
    /// Nothing: the frame is as the wire carries it.
    None,
    /// The TCP or UDP checksum (its field holds only the pseudo-header sum).
    Checksum,
    /// Segmentation into frames of at most `payload` transport payload bytes each; the
    /// checksums are left to do too.
    Segment {
        /// What the frame carries.
        kind: SegmentKind,
        /// Transport payload bytes per segment (TCP's MSS).
        payload: u16,
    },
}

/// Why a super-frame could not be cut: it goes on whole, and a port whose MTU it exceeds
/// drops it as a giant.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SegmentError {
    /// A segment size of 0.
    NoSegmentSize,
    /// Not the IPv4 or IPv6 packet (without IPv6 extension headers) carrying TCP or UDP
    /// that its host declared.
    NotDeclaredTransport,
    /// Headers cut short.
    Truncated,
    /// More than [`MAX_SEGMENTS`] segments.
    TooManySegments,
}

fn be16(b: &[u8], at: usize) -> Result<u16, SegmentError> {
    b.get(at..at + 2)
        .map(|s| u16::from_be_bytes([s[0], s[1]]))
        .ok_or(SegmentError::Truncated)
}

/// Where a super-frame's headers lie.
struct Layout {
    /// Start of the IP header.
    l3: usize,
    /// IPv4 (else IPv6).
    v4: bool,
    /// Start of the TCP or UDP header.
    l4: usize,
    /// TCP (else UDP).
    tcp: bool,
    /// End of the headers: where the payload starts.
    payload: usize,
    /// End of the IP packet (padding after it is not payload).
    end: usize,
}

fn layout(frame: &[u8], kind: SegmentKind) -> Result<Layout, SegmentError> {
    let (ethertype, l3) = inner_ethertype(frame).ok_or(SegmentError::Truncated)?;
    let first = *frame.get(l3).ok_or(SegmentError::Truncated)?;
    let (v4, l4, proto, end) = match ethertype {
        ETHERTYPE_IPV4 if first >> 4 == 4 => {
            let ihl = (first & 0x0F) as usize * 4;
            let total = be16(frame, l3 + 2)? as usize;
            let proto = *frame.get(l3 + 9).ok_or(SegmentError::Truncated)?;
            if ihl < 20 || total < ihl {
                return Err(SegmentError::NotDeclaredTransport);
            }
            (true, l3 + ihl, proto, l3 + total)
        }
        ETHERTYPE_IPV6 if first >> 4 == 6 => {
            let len = be16(frame, l3 + 4)? as usize;
            let proto = *frame.get(l3 + 6).ok_or(SegmentError::Truncated)?;
            // A payload length of 0 is a jumbogram (BIG TCP): the frame says how long.
            let end = if len == 0 {
                frame.len()
            } else {
                l3 + IPV6_HEADER + len
            };
            (false, l3 + IPV6_HEADER, proto, end)
        }
        _ => return Err(SegmentError::NotDeclaredTransport),
    };
    let tcp = match (kind, v4, proto) {
        (SegmentKind::Tcp4, true, PROTO_TCP) | (SegmentKind::Tcp6, false, PROTO_TCP) => true,
        (SegmentKind::Udp, _, PROTO_UDP) => false,
        _ => return Err(SegmentError::NotDeclaredTransport),
    };
    let header = if tcp {
        let offset = *frame.get(l4 + 12).ok_or(SegmentError::Truncated)?;
        (offset >> 4) as usize * 4
    } else {
        UDP_HEADER
    };
    let payload = l4 + header;
    if header < UDP_HEADER || payload > frame.len() || end > frame.len() || end < payload {
        return Err(SegmentError::Truncated);
    }
    Ok(Layout {
        l3,
        v4,
        l4,
        tcp,
        payload,
        end,
    })
}

/// Cut `frame`, which its host declared as `kind` with `payload` transport bytes per
/// segment, into the frames a NIC would send, handing each to `emit` in order: headers
/// copied, IP lengths set (IPv4 identification counted up, header checksum recomputed),
/// TCP sequence numbers advanced, FIN and PSH on the last segment only and CWR on the
/// first only, UDP lengths set, and every TCP or UDP checksum computed. Returns the number
/// of segments (1 for a frame with no payload, handed on with its checksum done).
pub fn segment(
    frame: &[u8],
    kind: SegmentKind,
    payload: u16,
    mut emit: impl FnMut(Vec<u8>),
) -> Result<usize, SegmentError> {
    if payload == 0 {
        return Err(SegmentError::NoSegmentSize);
    }
    let at = layout(frame, kind)?;
    let data = &frame[at.payload..at.end];
    let headers = &frame[..at.payload];
    if data.is_empty() {
        let mut f = frame.to_vec();
        complete_l4_checksum(&mut f);
        emit(f);
        return Ok(1);
    }
    let id = be16(frame, at.l3 + 4)?;
    let seq = frame
        .get(at.l4 + 4..at.l4 + 8)
        .map(|s| u32::from_be_bytes([s[0], s[1], s[2], s[3]]))
        .ok_or(SegmentError::Truncated)?;
    let mss = payload as usize;
    let count = data.len().div_ceil(mss);
    if count > MAX_SEGMENTS {
        return Err(SegmentError::TooManySegments);
    }
    for (i, chunk) in data.chunks(mss).enumerate() {
        let mut s = Vec::with_capacity(headers.len() + chunk.len());
        s.extend_from_slice(headers);
        s.extend_from_slice(chunk);
        let ip_len = (s.len() - at.l3) as u16;
        if at.v4 {
            s[at.l3 + 2..at.l3 + 4].copy_from_slice(&ip_len.to_be_bytes());
            let seg_id = id.wrapping_add(i as u16);
            s[at.l3 + 4..at.l3 + 6].copy_from_slice(&seg_id.to_be_bytes());
            let ihl = at.l4 - at.l3;
            let c = ipv4_header_checksum(&s[at.l3..at.l3 + ihl]);
            s[at.l3 + 10..at.l3 + 12].copy_from_slice(&c.to_be_bytes());
        } else {
            let len = ip_len - IPV6_HEADER as u16;
            s[at.l3 + 4..at.l3 + 6].copy_from_slice(&len.to_be_bytes());
        }
        if at.tcp {
            let n = seq.wrapping_add((i * mss) as u32);
            s[at.l4 + 4..at.l4 + 8].copy_from_slice(&n.to_be_bytes());
            let flags = &mut s[at.l4 + 13];
            if i > 0 {
                *flags &= !TCP_CWR;
            }
            if i + 1 < count {
                *flags &= !(TCP_FIN | TCP_PSH);
            }
        } else {
            let len = (s.len() - at.l4) as u16;
            s[at.l4 + 4..at.l4 + 6].copy_from_slice(&len.to_be_bytes());
        }
        complete_l4_checksum(&mut s);
        emit(s);
    }
    Ok(count)
}

#[cfg(test)]
mod tests {
    use super::*;
    use etherparse::{PacketBuilder, SlicedPacket, TransportSlice};

    fn tcp4(payload: &[u8], psh_fin: bool) -> Vec<u8> {
        let mut out = Vec::new();
        let b = PacketBuilder::ethernet2([2, 0, 0, 0, 0, 1], [2, 0, 0, 0, 0, 2])
            .ipv4([198, 18, 0, 1], [198, 18, 0, 2], 64)
            .tcp(40000, 5201, 1000, 65000)
            .ack(77)
            .cwr();
        let b = if psh_fin { b.psh().fin() } else { b };
        b.write(&mut out, payload).unwrap();
        out
    }

    fn cut(frame: &[u8], kind: SegmentKind, mss: u16) -> Vec<Vec<u8>> {
        let mut out = Vec::new();
        let n = segment(frame, kind, mss, |s| out.push(s)).unwrap();
        assert_eq!(n, out.len());
        out
    }

    /// What a NIC would have sent: each segment built from scratch by etherparse.
    #[test]
    fn tcp4_segments_are_the_frames_a_nic_sends() {
        let data: Vec<u8> = (0..4000u32).map(|i| i as u8).collect();
        let segs = cut(&tcp4(&data, true), SegmentKind::Tcp4, 1448);
        assert_eq!(segs.len(), 3);
        let mut seen = Vec::new();
        for (i, s) in segs.iter().enumerate() {
            let p = SlicedPacket::from_ethernet(s).unwrap();
            let Some(etherparse::NetSlice::Ipv4(ip)) = &p.net else {
                panic!("not IPv4")
            };
            let h = ip.header();
            assert_eq!(
                h.to_header().calc_header_checksum(),
                h.header_checksum(),
                "IPv4 header checksum of segment {i}"
            );
            let Some(TransportSlice::Tcp(t)) = &p.transport else {
                panic!("not TCP")
            };
            assert_eq!(t.sequence_number(), 1000 + (i * 1448) as u32);
            assert_eq!(t.cwr(), i == 0, "CWR on the first only");
            assert_eq!(t.psh(), i == 2, "PSH on the last only");
            assert_eq!(t.fin(), i == 2, "FIN on the last only");
            let want = t
                .to_header()
                .calc_checksum_ipv4(&h.to_header(), t.payload())
                .unwrap();
            assert_eq!(t.checksum(), want, "TCP checksum of segment {i}");
            seen.extend_from_slice(t.payload());
        }
        assert_eq!(seen, data);
        assert_eq!(segs[0].len(), 14 + 20 + 20 + 1448);
        assert_eq!(segs[2].len(), 14 + 20 + 20 + 4000 - 2 * 1448);
        // IPv4 identification counts up from the super-frame's.
        let id = |f: &[u8]| u16::from_be_bytes([f[18], f[19]]);
        assert_eq!(id(&segs[1]), id(&segs[0]).wrapping_add(1));
    }

    #[test]
    fn tcp6_and_udp_segments_carry_their_lengths_and_checksums() {
        let data = vec![0xA5u8; 3000];
        let mut f6 = Vec::new();
        PacketBuilder::ethernet2([2, 0, 0, 0, 0, 1], [2, 0, 0, 0, 0, 2])
            .single_vlan(etherparse::VlanId::try_new(7).unwrap())
            .ipv6([0x20; 16], [0x21; 16], 64)
            .tcp(1, 2, 5, 1000)
            .write(&mut f6, &data)
            .unwrap();
        let segs = cut(&f6, SegmentKind::Tcp6, 1000);
        assert_eq!(segs.len(), 3);
        for s in &segs {
            let p = SlicedPacket::from_ethernet(s).unwrap();
            let Some(etherparse::NetSlice::Ipv6(ip)) = &p.net else {
                panic!("not IPv6")
            };
            let Some(TransportSlice::Tcp(t)) = &p.transport else {
                panic!("not TCP")
            };
            assert_eq!(ip.header().payload_length() as usize, 20 + 1000);
            let want = t
                .to_header()
                .calc_checksum_ipv6(&ip.header().to_header(), t.payload())
                .unwrap();
            assert_eq!(t.checksum(), want);
        }
        let mut fu = Vec::new();
        PacketBuilder::ethernet2([2, 0, 0, 0, 0, 1], [2, 0, 0, 0, 0, 2])
            .ipv4([198, 18, 0, 1], [198, 18, 0, 2], 64)
            .udp(4791, 4791)
            .write(&mut fu, &data)
            .unwrap();
        let segs = cut(&fu, SegmentKind::Udp, 1400);
        assert_eq!(segs.len(), 3);
        for s in &segs {
            let p = SlicedPacket::from_ethernet(s).unwrap();
            let Some(etherparse::NetSlice::Ipv4(ip)) = &p.net else {
                panic!("not IPv4")
            };
            let Some(TransportSlice::Udp(u)) = &p.transport else {
                panic!("not UDP")
            };
            assert_eq!(u.length() as usize, 8 + u.payload().len());
            let want = u
                .to_header()
                .calc_checksum_ipv4(&ip.header().to_header(), u.payload())
                .unwrap();
            assert_eq!(u.checksum(), want);
        }
    }

    #[test]
    fn a_frame_not_what_its_host_declared_is_not_cut() {
        let f = tcp4(&[1; 3000], false);
        let mut n = 0;
        assert_eq!(
            segment(&f, SegmentKind::Tcp6, 1000, |_| n += 1),
            Err(SegmentError::NotDeclaredTransport)
        );
        assert_eq!(
            segment(&f, SegmentKind::Udp, 1000, |_| n += 1),
            Err(SegmentError::NotDeclaredTransport)
        );
        assert_eq!(
            segment(&f, SegmentKind::Tcp4, 0, |_| n += 1),
            Err(SegmentError::NoSegmentSize)
        );
        assert_eq!(
            segment(&f[..40], SegmentKind::Tcp4, 1000, |_| n += 1),
            Err(SegmentError::Truncated)
        );
        assert_eq!(
            segment(&tcp4(&[1; 1025], false), SegmentKind::Tcp4, 1, |_| n += 1),
            Err(SegmentError::TooManySegments)
        );
        assert_eq!(n, 0);
    }

    #[test]
    fn cutting_never_panics_on_arbitrary_bytes() {
        // A small deterministic generator: every length and byte pattern up to 120 bytes,
        // with a valid-looking IPv4/TCP prefix mutated.
        let base = tcp4(&[3; 64], false);
        let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
        for _ in 0..20_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let mut f = base.clone();
            let len = (x as usize) % (f.len() + 1);
            f.truncate(len);
            if !f.is_empty() {
                let k = (x >> 20) as usize % f.len();
                f[k] = (x >> 40) as u8;
            }
            for kind in [SegmentKind::Tcp4, SegmentKind::Tcp6, SegmentKind::Udp] {
                let _ = segment(&f, kind, ((x >> 8) as u16 % 100) + 1, |s| {
                    assert!(
                        s.len() <= f.len(),
                        "a segment is never longer than the frame"
                    );
                });
            }
        }
    }
}
