//! 802.1Q / 802.1ad VLAN tags: the tag protocol identifiers a switch recognises and where
//! the outer tag's TCI (PCP, DEI, VID) sits, for the parser and the egress PCP rewrite.

/// Offset of the EtherType (or the outer TPID) in an Ethernet frame.
pub const ETHERTYPE_AT: usize = 12;
/// Offset of the outer tag's TCI, right after its TPID.
pub const OUTER_TCI_AT: usize = 14;
/// Length of one tag (TPID + TCI).
pub const TAG_LEN: usize = 4;

/// Is `tpid` a VLAN tag's protocol id: 802.1Q (0x8100), 802.1ad (0x88A8) or the older
/// stacked-VLAN 0x9100?
pub fn is_tpid(tpid: u16) -> bool {
    matches!(tpid, 0x8100 | 0x88A8 | 0x9100)
}

/// Offset of the outer VLAN tag's TCI in `frame`, if the frame is tagged.
pub fn outer_tci_offset(frame: &[u8]) -> Option<usize> {
    let tpid = u16::from_be_bytes([*frame.get(ETHERTYPE_AT)?, *frame.get(ETHERTYPE_AT + 1)?]);
    (is_tpid(tpid) && frame.len() >= OUTER_TCI_AT + 2).then_some(OUTER_TCI_AT)
}

/// The EtherType under every VLAN tag of `frame`, and where the network header after it
/// starts; None if the tags or the EtherType are cut short.
pub fn inner_ethertype(frame: &[u8]) -> Option<(u16, usize)> {
    let mut at = ETHERTYPE_AT;
    loop {
        let t = u16::from_be_bytes([*frame.get(at)?, *frame.get(at + 1)?]);
        if !is_tpid(t) {
            return Some((t, at + 2));
        }
        at += TAG_LEN;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_inner_ethertype_lies_under_every_tag() {
        let mut f = vec![0u8; 22];
        f[12..14].copy_from_slice(&0x0800u16.to_be_bytes());
        assert_eq!(inner_ethertype(&f), Some((0x0800, 14)));
        f[12..14].copy_from_slice(&0x88A8u16.to_be_bytes());
        f[16..18].copy_from_slice(&0x8100u16.to_be_bytes());
        f[20..22].copy_from_slice(&0x86DDu16.to_be_bytes());
        assert_eq!(inner_ethertype(&f), Some((0x86DD, 22)));
        assert_eq!(inner_ethertype(&f[..21]), None);
    }

    #[test]
    fn only_tagged_frames_have_a_tci() {
        let mut f = vec![0u8; 18];
        assert_eq!(outer_tci_offset(&f), None);
        f[12..14].copy_from_slice(&0x88A8u16.to_be_bytes());
        assert_eq!(outer_tci_offset(&f), Some(14));
        assert_eq!(outer_tci_offset(&f[..15]), None);
    }
}
