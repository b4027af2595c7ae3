//! Fields on the wire: `width` bits at a bit offset, most significant bit first, read from
//! and written to a frame's bytes.

use crate::program::{mask, Value};

/// The `width` bits (1 to 128) at bit `offset` of `data`; None when the frame is shorter.
#[inline]
pub fn read(data: &[u8], offset: usize, width: u32) -> Option<Value> {
    let end = offset + width as usize;
    if end > data.len() * 8 {
        return None;
    }
    if width > 120 {
        // The bytes it spans may not fit 128 bits: two halves.
        let hi = read(data, offset, 64)?;
        let lo = read(data, offset + 64, width - 64)?;
        return Some((hi << (width - 64)) | lo);
    }
    if offset.is_multiple_of(8) && width.is_multiple_of(8) && width <= 64 {
        // Whole bytes, the common case of a header's fields.
        let n = width as usize / 8;
        let mut b = [0u8; 8];
        b[8 - n..].copy_from_slice(&data[offset / 8..offset / 8 + n]);
        return Some(u64::from_be_bytes(b) as Value);
    }
    let (first, last) = (offset / 8, (end - 1) / 8);
    let v = data[first..=last]
        .iter()
        .fold(0 as Value, |v, &b| (v << 8) | b as Value);
    let low_pad = ((last + 1) * 8 - end) as u32;
    Some((v >> low_pad) & mask(width))
}

/// Fields read one after another from whole bytes (a header's), most significant bit
/// first.
pub struct Unpack<'a> {
    data: &'a [u8],
    /// The next bit to read.
    bit: usize,
}

impl<'a> Unpack<'a> {
    /// Reading `data` from its first bit.
    pub fn new(data: &'a [u8]) -> Unpack<'a> {
        Unpack { data, bit: 0 }
    }

    /// The next `width` bits (the caller knows they are there).
    #[inline(always)]
    pub fn take(&mut self, width: u32) -> Value {
        if width <= 56 {
            return self.take_small(width) as Value;
        }
        // The high bits first, then 56 at a time.
        let mut left = width - width % 56;
        let mut v = self.take_small(width % 56) as Value;
        while left > 0 {
            v = (v << 56) | self.take_small(56) as Value;
            left -= 56;
        }
        v
    }

    /// The next `width` (≤ 56) bits: one 8-byte load where the data has 8 bytes left.
    #[inline(always)]
    fn take_small(&mut self, width: u32) -> u64 {
        if width == 0 {
            return 0;
        }
        let byte = self.bit / 8;
        let v = match self.data.get(byte..byte + 8) {
            Some(w) => {
                let w = u64::from_be_bytes(w.try_into().expect("8 bytes"));
                (w << (self.bit % 8)) >> (64 - width)
            }
            None => read(self.data, self.bit, width).expect("the caller checked") as u64,
        };
        self.bit += width as usize;
        v
    }
}

/// Write the low `width` bits of `value` at bit `offset` of `out` (which holds them).
#[inline]
pub fn write(out: &mut [u8], offset: usize, width: u32, value: Value) {
    if width == 0 {
        return;
    }
    if width > 120 {
        // The bytes it spans may not fit 128 bits: two halves.
        write(out, offset, 64, value >> (width - 64));
        write(out, offset + 64, width - 64, value & mask(width - 64));
        return;
    }
    let end = offset + width as usize;
    let (first, last) = (offset / 8, (end - 1) / 8);
    let span = &mut out[first..=last];
    if offset.is_multiple_of(8) && end.is_multiple_of(8) {
        // Whole bytes: the common case of a header's fields.
        let bytes = (value & mask(width)).to_be_bytes();
        span.copy_from_slice(&bytes[16 - span.len()..]);
        return;
    }
    let low_pad = ((last + 1) * 8 - end) as u32;
    let old = span.iter().fold(0 as Value, |v, &b| (v << 8) | b as Value);
    let m = mask(width) << low_pad;
    let new = (old & !m) | ((value << low_pad) & m);
    let bytes = new.to_be_bytes();
    span.copy_from_slice(&bytes[16 - span.len()..]);
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn an_ipv4_header_reads_field_by_field() {
        let h = [0x45u8, 0x00, 0x00, 0x54, 0x12, 0x34, 0x40, 0x00, 0x40, 0x11];
        assert_eq!(read(&h, 0, 4), Some(4));
        assert_eq!(read(&h, 4, 4), Some(5));
        assert_eq!(read(&h, 16, 16), Some(0x54));
        assert_eq!(read(&h, 48, 3), Some(0b010));
        assert_eq!(read(&h, 51, 13), Some(0));
        assert_eq!(read(&h, 64, 8), Some(0x40));
        assert_eq!(read(&h, 72, 16), None, "past the end");
    }

    proptest! {
        /// Whatever is written at any offset and width reads back, and the bits around it
        /// stay as they were.
        #[test]
        fn what_is_written_reads_back(
            bytes in proptest::collection::vec(any::<u8>(), 17..40),
            offset in 0usize..64,
            width in 1u32..=128,
            value in any::<u128>(),
        ) {
            let mut out = bytes.clone();
            prop_assume!(offset + width as usize <= out.len() * 8);
            write(&mut out, offset, width, value);
            prop_assert_eq!(read(&out, offset, width), Some(value & mask(width)));
            if offset % 8 == 0 {
                let mut u = Unpack::new(&out[offset / 8..]);
                prop_assert_eq!(u.take(width), value & mask(width));
            }
            for bit in (0..out.len() * 8).filter(|b| *b < offset || *b >= offset + width as usize) {
                prop_assert_eq!(read(&out, bit, 1), read(&bytes, bit, 1), "bit {}", bit);
            }
        }
    }
}
