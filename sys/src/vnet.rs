//! The virtio-net header (`struct virtio_net_hdr`, 10 bytes) that a TAP opened with
//! `IFF_VNET_HDR` puts before every frame it hands over and expects before every frame
//! written to it: what the host left to its NIC (a checksum, segmentation) for that frame.
//! Its 16-bit fields are in the machine's byte order (a legacy, not "virtio 1.0", header).

use lossless_pipeline::wire::gso::{Offload, SegmentKind};

/// Bytes of the header.
pub const LEN: usize = 10;

/// `flags`: the TCP or UDP checksum is left to do (`VIRTIO_NET_HDR_F_NEEDS_CSUM`).
const F_NEEDS_CSUM: u8 = 1;
/// `gso_type` values (`VIRTIO_NET_HDR_GSO_*`), without the ECN bit.
const GSO_NONE: u8 = 0;
const GSO_TCPV4: u8 = 1;
const GSO_TCPV6: u8 = 4;
const GSO_UDP_L4: u8 = 5;
/// `gso_type` bit: the TCP stream uses ECN (CWR goes on the first segment only).
const GSO_ECN: u8 = 0x80;

/// The header of a frame that leaves nothing to do: written before every frame the
/// switch sends to a host.
pub const COMPLETE: [u8; LEN] = [0; LEN];

/// What the header `h` says was left to do. A kind of segmentation this switch does not
/// cut (UFO: IP fragmentation) is handed on as a frame with its checksum to finish: it is
/// longer than the port's MTU, and dropped as a giant.
pub fn offload(h: &[u8; LEN]) -> Offload {
    let size = u16::from_ne_bytes([h[4], h[5]]);
    let kind = match h[1] & !GSO_ECN {
        GSO_TCPV4 => Some(SegmentKind::Tcp4),
        GSO_TCPV6 => Some(SegmentKind::Tcp6),
        GSO_UDP_L4 => Some(SegmentKind::Udp),
        _ => None,
    };
    match kind {
        Some(kind) => Offload::Segment {
            kind,
            payload: size,
        },
        None if h[0] & F_NEEDS_CSUM != 0 || h[1] != GSO_NONE => Offload::Checksum,
        None => Offload::None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_header_says_what_was_left_to_do() {
        let mut h = COMPLETE;
        assert_eq!(offload(&h), Offload::None);
        h[0] = F_NEEDS_CSUM;
        assert_eq!(offload(&h), Offload::Checksum);
        h[1] = GSO_TCPV4 | GSO_ECN;
        h[4..6].copy_from_slice(&1448u16.to_ne_bytes());
        assert_eq!(
            offload(&h),
            Offload::Segment {
                kind: SegmentKind::Tcp4,
                payload: 1448
            }
        );
        h[1] = GSO_TCPV6;
        assert!(matches!(
            offload(&h),
            Offload::Segment {
                kind: SegmentKind::Tcp6,
                ..
            }
        ));
        h[1] = 3; // UFO
        assert_eq!(offload(&h), Offload::Checksum);
    }
}
