//! In-place header edits of egress and L3 forwarding: ECN CE marking, TTL / hop-limit
//! decrement, MAC and PCP rewrite. IPv4 checksums are updated incrementally (RFC 1624,
//! eqn. 3: HC' = ~(~HC + ~m + m')), so a frame with a wrong checksum stays exactly as wrong.

/// ECN codepoint "congestion experienced".
pub const ECN_CE: u8 = 0b11;

/// RFC 1624 incremental update of a one's-complement checksum for a 16-bit word `old` → `new`.
#[inline]
pub fn checksum_update(hc: u16, old: u16, new: u16) -> u16 {
    // Three 16-bit terms sum below 3·2¹⁶: one fold leaves at most 0xFFFF + 2, a second
    // leaves 16 bits.
    let sum = u32::from(!hc) + u32::from(!old) + u32::from(new);
    let sum = (sum & 0xFFFF) + (sum >> 16);
    let sum = (sum & 0xFFFF) + (sum >> 16);
    !(sum as u16)
}

/// The fixed 20 bytes of the IPv4 header at the start of `h` (which must hold them: the
/// parser checked it before any edit).
fn fixed_header(h: &mut [u8]) -> &mut [u8; 20] {
    (&mut h[..20]).try_into().expect("20 bytes")
}

fn word(b: &[u8; 20], o: usize) -> u16 {
    u16::from_be_bytes([b[o], b[o + 1]])
}

/// Rewrite the 16-bit word at `o` (< 20) of the IPv4 header `h` and fix its checksum.
#[inline]
fn ipv4_set_word(h: &mut [u8; 20], o: usize, new: u16) {
    let old = word(h, o);
    let hc = checksum_update(word(h, 10), old, new);
    [h[o], h[o + 1]] = new.to_be_bytes();
    [h[10], h[11]] = hc.to_be_bytes();
}

/// Set ECN to CE in the IPv4 header at the start of `h` (≥ 20 bytes), checksum updated.
pub fn ipv4_mark_ce(h: &mut [u8]) {
    let h = fixed_header(h);
    let old = word(h, 0);
    ipv4_set_word(h, 0, old | ECN_CE as u16);
}

/// Set the DSCP of the IPv4 header at the start of `h` (≥ 20 bytes), ECN kept, checksum
/// updated.
pub fn ipv4_set_dscp(h: &mut [u8], dscp: u8) {
    let h = fixed_header(h);
    let old = word(h, 0);
    ipv4_set_word(h, 0, (old & 0xFF03) | (u16::from(dscp & 0x3F) << 2));
}

/// Set ECN to CE in the IPv6 header at the start of `h` (≥ 40 bytes).
pub fn ipv6_mark_ce(h: &mut [u8]) {
    // Traffic class straddles bytes 0 and 1: ECN is bits 4–5 of byte 1.
    h[1] |= ECN_CE << 4;
}

/// Set the DSCP of the IPv6 header at the start of `h` (≥ 40 bytes), ECN kept.
pub fn ipv6_set_dscp(h: &mut [u8], dscp: u8) {
    // Traffic class = low nibble of byte 0 and high nibble of byte 1; DSCP is its top 6
    // bits: 4 in byte 0, 2 in byte 1 (above the two ECN bits).
    let d = dscp & 0x3F;
    h[0] = (h[0] & 0xF0) | (d >> 2);
    h[1] = (h[1] & 0x3F) | ((d & 0x03) << 6);
}

/// Decrement the IPv4 TTL (checksum updated). Returns false, changing nothing, if the TTL
/// is 0 or 1 (the packet must be dropped).
pub fn ipv4_decrement_ttl(h: &mut [u8]) -> bool {
    let h = fixed_header(h);
    if h[8] <= 1 {
        return false;
    }
    let old = word(h, 8);
    ipv4_set_word(h, 8, old - 0x0100);
    true
}

/// Decrement the IPv6 hop limit; false if it is 0 or 1.
pub fn ipv6_decrement_hop_limit(h: &mut [u8]) -> bool {
    if h[7] <= 1 {
        return false;
    }
    h[7] -= 1;
    true
}

/// Set the PCP of the VLAN tag whose TCI starts at byte `tci` of the frame.
pub fn set_pcp(frame: &mut [u8], tci: usize, pcp: u8) {
    frame[tci] = (frame[tci] & 0x1F) | (pcp << 5);
}

/// Rewrite destination and source MAC.
pub fn set_macs(frame: &mut [u8], dst: [u8; 6], src: [u8; 6]) {
    frame[0..6].copy_from_slice(&dst);
    frame[6..12].copy_from_slice(&src);
}

/// Full IPv4 header checksum of `h` (checksum field included: 0 means valid).
pub fn ipv4_checksum(h: &[u8]) -> u16 {
    let mut sum: u32 = h
        .chunks(2)
        .map(|c| u16::from_be_bytes([c[0], *c.get(1).unwrap_or(&0)]) as u32)
        .sum();
    while sum > 0xFFFF {
        sum = (sum & 0xFFFF) + (sum >> 16);
    }
    !(sum as u16)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn header() -> Vec<u8> {
        let h = etherparse::Ipv4Header::new(
            100,
            64,
            etherparse::IpNumber::UDP,
            [198, 18, 0, 1],
            [198, 18, 0, 2],
        )
        .unwrap();
        let mut b = h.to_bytes().to_vec();
        b[1] = (26 << 2) | 0b10; // DSCP 26, ECT(0)
        let c = ipv4_checksum(&{
            let mut z = b.clone();
            z[10] = 0;
            z[11] = 0;
            z
        });
        b[10..12].copy_from_slice(&c.to_be_bytes());
        b
    }

    #[test]
    fn ce_mark_keeps_ipv4_checksum_valid() {
        let mut h = header();
        assert_eq!(ipv4_checksum(&h), 0);
        ipv4_mark_ce(&mut h);
        assert_eq!(h[1] & 3, ECN_CE);
        assert_eq!(h[1] >> 2, 26);
        assert_eq!(ipv4_checksum(&h), 0);
    }

    #[test]
    fn dscp_rewrite_keeps_ecn_and_the_checksum_valid() {
        let mut h = header();
        ipv4_set_dscp(&mut h, 3);
        assert_eq!(h[1], (3 << 2) | 0b10);
        assert_eq!(h[0], 0x45);
        assert_eq!(ipv4_checksum(&h), 0);
    }

    #[test]
    fn ttl_decrement_keeps_checksum_valid_and_stops_at_one() {
        let mut h = header();
        assert!(ipv4_decrement_ttl(&mut h));
        assert_eq!(h[8], 63);
        assert_eq!(ipv4_checksum(&h), 0);
        h[8] = 1;
        assert!(!ipv4_decrement_ttl(&mut h));
    }

    /// RFC 1624 eqn. 3 as written: fold until 16 bits remain.
    fn checksum_update_reference(hc: u16, old: u16, new: u16) -> u16 {
        let mut sum = (!hc as u32) + (!old as u32) + new as u32;
        while sum > 0xFFFF {
            sum = (sum & 0xFFFF) + (sum >> 16);
        }
        !(sum as u16)
    }

    proptest::proptest! {
        #[test]
        fn incremental_update_matches_the_folding_loop(hc: u16, old: u16, new: u16) {
            proptest::prop_assert_eq!(
                checksum_update(hc, old, new),
                checksum_update_reference(hc, old, new)
            );
        }

        /// Any 20-byte header, its checksum right or wrong: each edit leaves the full
        /// checksum's verdict as it was (0 stays 0; a wrong one stays exactly as wrong, up to
        /// one's-complement's two zeros).
        #[test]
        fn edits_keep_the_checksum_as_right_or_wrong_as_it_was(
            bytes: [u8; 20], fix: bool, dscp in 0u8..64
        ) {
            let mut h = bytes.to_vec();
            if fix {
                h[10] = 0;
                h[11] = 0;
                let c = ipv4_checksum(&h);
                h[10..12].copy_from_slice(&c.to_be_bytes());
            }
            let zero = |c: u16| if c == 0xFFFF { 0 } else { c };
            let before = zero(ipv4_checksum(&h));
            let ttl = h[8];
            proptest::prop_assert_eq!(ipv4_decrement_ttl(&mut h), ttl > 1);
            proptest::prop_assert_eq!(zero(ipv4_checksum(&h)), before);
            ipv4_set_dscp(&mut h, dscp);
            proptest::prop_assert_eq!(h[1] >> 2, dscp);
            proptest::prop_assert_eq!(zero(ipv4_checksum(&h)), before);
            ipv4_mark_ce(&mut h);
            proptest::prop_assert_eq!(h[1] & 3, ECN_CE);
            proptest::prop_assert_eq!(zero(ipv4_checksum(&h)), before);
        }
    }

    #[test]
    fn ipv6_dscp_rewrite_keeps_version_ecn_and_flow_label() {
        // Version 6, traffic class 0x03 (DSCP 0, CE), flow label 0xABCDE.
        let mut h = [0x60, 0x3A, 0xBC, 0xDE, 0, 0, 17, 64];
        ipv6_set_dscp(&mut h, 46);
        let tc = ((h[0] & 0x0F) << 4) | (h[1] >> 4);
        assert_eq!((h[0] >> 4, tc >> 2, tc & 3), (6, 46, 3));
        assert_eq!(u32::from_be_bytes([0, h[1] & 0x0F, h[2], h[3]]), 0xABCDE);
    }

    #[test]
    fn ipv6_ce_sets_only_ecn_bits() {
        let mut h = vec![0u8; 40];
        h[0] = 0x6B; // version 6, TC high nibble 0xB
        h[1] = 0x8F; // TC low nibble 0x8 → TC = 0xB8 (DSCP 46, not-ECT), flow label bits
        ipv6_mark_ce(&mut h);
        let tc = ((h[0] & 0x0F) << 4) | (h[1] >> 4);
        assert_eq!(tc, 0xBB);
        assert_eq!(h[1] & 0x0F, 0x0F, "flow label untouched");
    }
}
