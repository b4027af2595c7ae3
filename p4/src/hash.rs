//! The hash and checksum algorithms a program names, over the bytes of its inputs packed
//! most significant bit first (a last partial byte padded with zeros), as BMv2 packs them.

use crate::program::{HashAlgo, Value};

/// Pack `inputs` (value, width in bits) into bytes, most significant bit first.
pub fn pack(inputs: impl Iterator<Item = (Value, u32)>, out: &mut Vec<u8>) {
    out.clear();
    let mut bits = Bits::default();
    for (v, w) in inputs {
        bits.push(v, w, out);
    }
    bits.finish(out);
}

/// Bits on their way into whole bytes: values pushed most significant bit first, the
/// full bytes gathered in a small buffer and appended to the output a block at a time.
pub struct Bits {
    /// The bits not yet a byte (the low `held` of them, fewer than 8).
    acc: u64,
    held: u32,
    block: [u8; 64],
    len: usize,
}

impl Default for Bits {
    fn default() -> Bits {
        Bits {
            acc: 0,
            held: 0,
            block: [0; 64],
            len: 0,
        }
    }
}

impl Bits {
    /// Append the low `width` bits of `v`.
    #[inline(always)]
    pub fn push(&mut self, v: Value, width: u32, out: &mut Vec<u8>) {
        // The accumulator takes 56 bits at a time past the 7 it may hold: a wider value
        // goes 32 bits at a time, its high part first.
        let mut width = width;
        while width > 56 {
            width -= 32;
            self.push_small((v >> width) as u64 & 0xFFFF_FFFF, 32, out);
        }
        self.push_small(v as u64, width, out);
    }

    /// Append the low `width` (≤ 56) bits of `v`.
    #[inline(always)]
    fn push_small(&mut self, v: u64, width: u32, out: &mut Vec<u8>) {
        self.acc = (self.acc << width) | (v & low(width));
        self.held += width;
        if self.held < 8 {
            return;
        }
        if self.len > self.block.len() - 8 {
            out.extend_from_slice(&self.block[..self.len]);
            self.len = 0;
        }
        // The whole bytes (at most 7), stored as one 8-byte word of which they lead.
        let n = self.held / 8;
        let rest = self.held - 8 * n;
        let word = (self.acc >> rest) << (64 - 8 * n);
        self.block[self.len..self.len + 8].copy_from_slice(&word.to_be_bytes());
        self.len += n as usize;
        self.held = rest;
        self.acc &= low(rest);
    }

    /// Append what is gathered and a last partial byte, padded with zeros.
    #[inline]
    pub fn finish(mut self, out: &mut Vec<u8>) {
        if self.held > 0 {
            self.block[self.len] = (self.acc << (8 - self.held)) as u8;
            self.len += 1;
        }
        out.extend_from_slice(&self.block[..self.len]);
    }
}

/// The Internet checksum of values packed most significant bit first, summed 16 bits at
/// a time as they come (what [`csum16`] of their [`pack`]ed bytes gives).
#[derive(Default)]
pub struct Csum16 {
    /// The bits not yet a word (the low `held` of them, fewer than 16).
    acc: u64,
    held: u32,
    sum: u64,
}

impl Csum16 {
    /// Add the low `width` bits of `v`.
    #[inline(always)]
    pub fn push(&mut self, v: Value, width: u32) {
        // 32 bits at a time past the 15 it may hold, the high part first.
        let mut width = width;
        while width > 32 {
            width -= 32;
            self.push_small((v >> width) as u64 & 0xFFFF_FFFF, 32);
        }
        self.push_small(v as u64, width);
    }

    /// Add the low `width` (≤ 32) bits of `v`.
    #[inline(always)]
    fn push_small(&mut self, v: u64, width: u32) {
        self.acc = (self.acc << width) | (v & low(width));
        self.held += width;
        while self.held >= 16 {
            self.held -= 16;
            self.sum += (self.acc >> self.held) & 0xFFFF;
        }
        self.acc &= low(self.held);
    }

    /// The checksum: a last partial word padded with zeros, the sum folded, complemented.
    #[inline]
    pub fn finish(mut self) -> u16 {
        if self.held > 0 {
            self.sum += (self.acc << (16 - self.held)) & 0xFFFF;
        }
        while self.sum > 0xFFFF {
            self.sum = (self.sum & 0xFFFF) + (self.sum >> 16);
        }
        !(self.sum as u16)
    }
}

/// The low `n` bits set (n ≤ 63).
#[inline]
fn low(n: u32) -> u64 {
    (1u64 << n) - 1
}

/// `algo` over `data`.
pub fn compute(algo: HashAlgo, data: &[u8]) -> Value {
    match algo {
        HashAlgo::Csum16 => csum16(data) as Value,
        HashAlgo::Crc16 => crc16_arc(data) as Value,
        HashAlgo::Crc32 => crc32(data) as Value,
        HashAlgo::Identity => data
            .iter()
            .take(8)
            .fold(0 as Value, |v, &b| (v << 8) | b as Value),
    }
}

/// The Internet checksum (RFC 1071): ones' complement of the ones' complement sum of
/// the 16-bit big-endian words (an odd last byte padded with zero).
pub fn csum16(data: &[u8]) -> u16 {
    let mut sum: u32 = 0;
    for c in data.chunks(2) {
        let w = u16::from_be_bytes([c[0], *c.get(1).unwrap_or(&0)]);
        sum += w as u32;
        sum = (sum & 0xFFFF) + (sum >> 16);
    }
    !(sum as u16)
}

/// CRC-16/ARC (polynomial 0x8005, reflected, initial 0, no final xor): BMv2's `crc16`.
pub fn crc16_arc(data: &[u8]) -> u16 {
    let mut crc: u16 = 0;
    for &b in data {
        crc ^= b as u16;
        for _ in 0..8 {
            crc = if crc & 1 != 0 {
                (crc >> 1) ^ 0xA001
            } else {
                crc >> 1
            };
        }
    }
    crc
}

/// CRC-32 (IEEE 802.3: polynomial 0x04C11DB7 reflected, initial and final xor all ones):
/// BMv2's `crc32`.
pub fn crc32(data: &[u8]) -> u32 {
    let mut crc: u32 = !0;
    for &b in data {
        crc ^= b as u32;
        for _ in 0..8 {
            crc = if crc & 1 != 0 {
                (crc >> 1) ^ 0xEDB8_8320
            } else {
                crc >> 1
            };
        }
    }
    !crc
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn check_values_of_the_catalogue() {
        // The standard check input "123456789".
        assert_eq!(crc16_arc(b"123456789"), 0xBB3D);
        assert_eq!(crc32(b"123456789"), 0xCBF4_3926);
        // RFC 1071's example words 0001 f203 f4f5 f6f7: sum 0xddf2, checksum 0x220d.
        assert_eq!(
            csum16(&[0x00, 0x01, 0xf2, 0x03, 0xf4, 0xf5, 0xf6, 0xf7]),
            0x220d
        );
    }

    #[test]
    fn fields_pack_most_significant_bit_first() {
        let mut out = Vec::new();
        pack([(4, 4), (5, 4), (0x1234, 16), (1, 1)].into_iter(), &mut out);
        assert_eq!(out, [0x45, 0x12, 0x34, 0x80]);
    }

    proptest::proptest! {
        /// Packing equals writing each field at its bit offset into zeroed bytes.
        #[test]
        fn packing_equals_writing_field_by_field(
            fields in proptest::collection::vec((proptest::prelude::any::<u128>(), 0u32..=128), 0..12),
        ) {
            let mut packed = Vec::new();
            pack(fields.iter().copied(), &mut packed);
            let total: usize = fields.iter().map(|f| f.1 as usize).sum();
            let mut want = vec![0u8; total.div_ceil(8)];
            let mut at = 0;
            for &(v, w) in &fields {
                crate::bits::write(&mut want, at, w, v);
                at += w as usize;
            }
            proptest::prop_assert_eq!(&packed, &want);
            // And the checksum summed on the way equals the one of the packed bytes.
            let mut sum = Csum16::default();
            for &(v, w) in &fields {
                sum.push(v, w);
            }
            proptest::prop_assert_eq!(sum.finish(), csum16(&packed));
        }
    }
}
