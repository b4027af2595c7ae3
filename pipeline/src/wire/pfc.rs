//! IEEE 802.1Qbb PFC and 802.3x PAUSE frames (MAC Control, EtherType 0x8808).
//!
//! Layout after the 14-byte Ethernet header: opcode (u16, 0x0101 PFC / 0x0001 PAUSE);
//! PFC: class-enable vector (u16, low 8 bits = priorities 0–7, the high byte reserved) and
//! eight u16 pause times in quanta; PAUSE: one u16 pause time. Padded to 60 bytes + FCS.

/// EtherType of MAC Control frames.
pub const ETHERTYPE_MAC_CONTROL: u16 = 0x8808;
/// MAC Control opcode of 802.1Qbb PFC.
pub const OPCODE_PFC: u16 = 0x0101;
/// MAC Control opcode of 802.3x PAUSE.
pub const OPCODE_PAUSE: u16 = 0x0001;
/// Reserved multicast address PFC and PAUSE frames are sent to.
pub const PFC_DESTINATION: [u8; 6] = [0x01, 0x80, 0xC2, 0x00, 0x00, 0x01];
/// Bytes of a PFC frame as held (60; the FCS makes it 64 on the wire).
pub const PFC_FRAME_HELD: usize = 60;
/// Length of a PFC frame including FCS.
pub const PFC_FRAME_LEN: u32 = 64;

/// Byte offsets of the MAC Control fields, from the destination MAC on.
pub mod field {
    use core::ops::Range;
    /// Destination MAC.
    pub const DESTINATION: Range<usize> = 0..6;
    /// Source MAC.
    pub const SOURCE: Range<usize> = 6..12;
    /// EtherType (0x8808).
    pub const ETHERTYPE: Range<usize> = 12..14;
    /// MAC Control opcode.
    pub const OPCODE: Range<usize> = 14..16;
    /// PFC class-enable vector (the high byte is reserved).
    pub const CLASS_ENABLE: Range<usize> = 16..18;
    /// PFC pause times: eight u16 quanta, priority 0 first.
    pub const QUANTA: Range<usize> = 18..34;
    /// 802.3x PAUSE time.
    pub const PAUSE_TIME: Range<usize> = 16..18;
}

fn u16_at(buf: &[u8], r: core::ops::Range<usize>) -> u16 {
    u16::from_be_bytes([buf[r.start], buf[r.start + 1]])
}

/// A read-only view of a MAC Control frame (`Packet<&[u8]>` style, smoltcp-like): the
/// Ethernet header and the opcode; [`MacControlFrame::pfc`] and
/// [`MacControlFrame::pause`] check for the rest.
#[derive(Clone, Copy, Debug)]
pub struct MacControlFrame<'a> {
    buf: &'a [u8],
}

impl<'a> MacControlFrame<'a> {
    /// Wrap `buf` (a whole frame from the destination MAC on) if it holds the Ethernet
    /// header and the opcode (16 bytes).
    pub fn new_checked(buf: &'a [u8]) -> Option<MacControlFrame<'a>> {
        (buf.len() >= field::OPCODE.end).then_some(MacControlFrame { buf })
    }
    /// Destination MAC.
    pub fn destination(&self) -> [u8; 6] {
        self.buf[field::DESTINATION].try_into().expect("6 bytes")
    }
    /// MAC Control opcode.
    pub fn opcode(&self) -> u16 {
        u16_at(self.buf, field::OPCODE)
    }
    /// The PFC fields, if the frame holds the vector and all eight pause times (34 bytes).
    pub fn pfc(&self) -> Option<PfcFields<'a>> {
        (self.buf.len() >= field::QUANTA.end).then_some(PfcFields { buf: self.buf })
    }
    /// The 802.3x PAUSE field, if the frame holds it (18 bytes).
    pub fn pause(&self) -> Option<PauseFields<'a>> {
        (self.buf.len() >= field::PAUSE_TIME.end).then_some(PauseFields { buf: self.buf })
    }
}

/// The fields of a PFC frame (checked to be held).
#[derive(Clone, Copy, Debug)]
pub struct PfcFields<'a> {
    buf: &'a [u8],
}

impl PfcFields<'_> {
    /// PFC class-enable vector (priorities 0–7; the reserved high byte is dropped).
    pub fn class_enable(&self) -> u8 {
        self.buf[field::CLASS_ENABLE.end - 1]
    }
    /// PFC pause time of priority `p` in quanta.
    pub fn quanta(&self, p: usize) -> u16 {
        let at = field::QUANTA.start + 2 * p;
        u16_at(self.buf, at..at + 2)
    }
    /// All eight PFC pause times.
    pub fn all_quanta(&self) -> [u16; 8] {
        // One bounds check for the whole field (held: `pfc()` checked it), not one each.
        let q = &self.buf[field::QUANTA];
        core::array::from_fn(|p| u16::from_be_bytes([q[2 * p], q[2 * p + 1]]))
    }
}

/// The field of an 802.3x PAUSE frame (checked to be held).
#[derive(Clone, Copy, Debug)]
pub struct PauseFields<'a> {
    buf: &'a [u8],
}

impl PauseFields<'_> {
    /// 802.3x PAUSE time in quanta.
    pub fn pause_time(&self) -> u16 {
        u16_at(self.buf, field::PAUSE_TIME)
    }
}

/// Write a PFC frame from `source` into `out` (cleared first; 60 bytes, FCS not held).
#[inline]
pub fn emit_pfc(out: &mut Vec<u8>, source: [u8; 6], enable: u8, quanta: &[u16; 8]) {
    // Built on the stack and copied once: a push per field checked the capacity each time.
    let mut f = [0u8; PFC_FRAME_HELD];
    f[field::DESTINATION].copy_from_slice(&PFC_DESTINATION);
    f[field::SOURCE].copy_from_slice(&source);
    f[field::ETHERTYPE].copy_from_slice(&ETHERTYPE_MAC_CONTROL.to_be_bytes());
    f[field::OPCODE].copy_from_slice(&OPCODE_PFC.to_be_bytes());
    f[field::CLASS_ENABLE.end - 1] = enable;
    for (p, q) in quanta.iter().enumerate() {
        let at = field::QUANTA.start + 2 * p;
        f[at..at + 2].copy_from_slice(&q.to_be_bytes());
    }
    out.clear();
    out.extend_from_slice(&f);
}

/// Write an 802.3x PAUSE frame from `source` into `out` (cleared first; 60 bytes, FCS not
/// held): `quanta` for the whole link, 0 to resume.
pub fn emit_pause(out: &mut Vec<u8>, source: [u8; 6], quanta: u16) {
    out.clear();
    out.reserve_exact(PFC_FRAME_HELD);
    out.extend_from_slice(&PFC_DESTINATION);
    out.extend_from_slice(&source);
    out.extend_from_slice(&ETHERTYPE_MAC_CONTROL.to_be_bytes());
    out.extend_from_slice(&OPCODE_PAUSE.to_be_bytes());
    out.extend_from_slice(&quanta.to_be_bytes());
    out.resize(PFC_FRAME_HELD, 0);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pfc_encoding_is_byte_exact() {
        let mut out = Vec::new();
        let q = [0, 0, 0, 0xFFFF, 0x1234, 0, 0, 7];
        emit_pfc(&mut out, [2, 0, 0, 0, 0, 9], 0b1001_1000, &q);
        let mut want = vec![
            0x01, 0x80, 0xC2, 0x00, 0x00, 0x01, // DA
            0x02, 0x00, 0x00, 0x00, 0x00, 0x09, // SA
            0x88, 0x08, // MAC Control
            0x01, 0x01, // PFC opcode
            0x00, 0x98, // class-enable vector: priorities 3, 4, 7
            0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0xFF, 0xFF, // quanta 0–3
            0x12, 0x34, 0x00, 0x00, 0x00, 0x00, 0x00, 0x07, // quanta 4–7
        ];
        want.resize(60, 0);
        assert_eq!(out, want);
        let f = MacControlFrame::new_checked(&out).unwrap();
        assert_eq!(f.destination(), PFC_DESTINATION);
        assert_eq!(f.opcode(), OPCODE_PFC);
        let p = f.pfc().unwrap();
        assert_eq!(p.class_enable(), 0x98);
        assert_eq!(p.all_quanta(), q);
    }

    #[test]
    fn pause_encoding_is_byte_exact() {
        let mut out = Vec::new();
        emit_pause(&mut out, [2, 0, 0, 0, 0, 9], 0xFFFF);
        assert_eq!(out.len(), 60);
        assert_eq!(&out[12..18], &[0x88, 0x08, 0x00, 0x01, 0xFF, 0xFF]);
        let f = MacControlFrame::new_checked(&out).unwrap();
        assert_eq!(
            (f.opcode(), f.pause().unwrap().pause_time()),
            (OPCODE_PAUSE, 0xFFFF)
        );
    }

    #[test]
    fn reserved_high_byte_of_the_vector_is_ignored() {
        let mut out = Vec::new();
        emit_pfc(&mut out, [0; 6], 0x08, &[0; 8]);
        out[16] = 0xFF;
        let f = MacControlFrame::new_checked(&out).unwrap();
        assert_eq!(f.pfc().unwrap().class_enable(), 0x08);
        assert!(MacControlFrame::new_checked(&out[..33])
            .unwrap()
            .pfc()
            .is_none());
        assert!(MacControlFrame::new_checked(&out[..15]).is_none());
    }
}
