//! RoCEv2 transport headers (InfiniBand over UDP port 4791): the 12-byte Base Transport
//! Header (BTH), the 4-byte ACK Extended Transport Header (AETH) of acknowledgements, the
//! opcodes this project sends, and the frame sizes of its control packets. Views are
//! smoltcp-style: a `&[u8]` checked once, fields read through the byte ranges of [`field`],
//! which the emitters write through as well.

/// UDP destination port of RoCEv2.
pub const ROCEV2_PORT: u16 = 4791;
/// BTH length in bytes.
pub const BTH_LEN: usize = 12;
/// AETH length in bytes.
pub const AETH_LEN: usize = 4;
/// Length of the invariant CRC trailing a RoCEv2 packet.
pub const ICRC_LEN: usize = 4;

/// RC SEND Only: a whole message in one packet (what open-loop RoCEv2 frames carry: a BTH
/// and the payload, no extension header, so frames down to 64 bytes decode).
pub const OPCODE_SEND_ONLY: u8 = 0x04;
/// RC SEND First: the first packet of a message of several.
pub const OPCODE_SEND_FIRST: u8 = 0x00;
/// RC SEND Middle.
pub const OPCODE_SEND_MIDDLE: u8 = 0x01;
/// RC SEND Last: the last packet of a message of several (the responder acknowledges it).
pub const OPCODE_SEND_LAST: u8 = 0x02;
/// RC Acknowledge: a BTH and an AETH (ACK or NAK).
pub const OPCODE_ACKNOWLEDGE: u8 = 0x11;
/// Congestion notification packet (DCQCN).
pub const OPCODE_CNP: u8 = 0x81;

/// Length of a CNP frame: Ethernet 14 + IPv4 20 + UDP 8 + BTH 12 + 16 reserved bytes +
/// ICRC 4 + FCS 4.
pub const CNP_LEN: u32 = 78;
/// Length of an RC Acknowledge frame: Ethernet 14 + IPv4 20 + UDP 8 + BTH 12 + AETH 4 +
/// ICRC 4 + FCS 4.
pub const ACK_LEN: u32 = 66;

/// Byte ranges of the BTH and AETH fields, from the start of each header.
pub mod field {
    use core::ops::Range;
    /// BTH: opcode.
    pub const OPCODE: usize = 0;
    /// BTH: solicited event, migration, pad count, transport version.
    pub const FLAGS: usize = 1;
    /// BTH: partition key.
    pub const PKEY: Range<usize> = 2..4;
    /// BTH: FECN (bit 7) and BECN (bit 6).
    pub const ECN_FLAGS: usize = 4;
    /// BTH: destination queue pair (24 bits).
    pub const DEST_QP: Range<usize> = 5..8;
    /// BTH: AckReq (bit 7).
    pub const ACK_REQ: usize = 8;
    /// BTH: packet sequence number (24 bits).
    pub const PSN: Range<usize> = 9..12;
    /// AETH: syndrome.
    pub const SYNDROME: usize = 0;
    /// AETH: message sequence number (24 bits).
    pub const MSN: Range<usize> = 1..4;
}

/// FECN in the BTH's ECN byte.
pub const FECN: u8 = 0x80;
/// BECN in the BTH's ECN byte (a CNP sets it).
pub const BECN: u8 = 0x40;
/// AETH syndrome of an ACK (credit field 0b11111: no credit count).
pub const SYNDROME_ACK: u8 = 0x1F;
/// AETH syndrome of a NAK "PSN sequence error": the responder expected an earlier PSN.
pub const SYNDROME_NAK_PSN_SEQ: u8 = 0x60;

/// PSNs are 24 bits.
pub const PSN_MASK: u32 = 0x00FF_FFFF;

/// A read-only view of a BTH.
#[derive(Clone, Copy, Debug)]
pub struct Bth<'a> {
    /// Exactly the header's bytes, so the fixed offsets below need no bounds checks.
    buf: &'a [u8; BTH_LEN],
}

#[inline]
fn u24(b: &[u8]) -> u32 {
    u32::from_be_bytes([0, b[0], b[1], b[2]])
}

impl<'a> Bth<'a> {
    /// Wrap `buf` if it holds at least 12 bytes.
    #[inline]
    pub fn new_checked(buf: &'a [u8]) -> Option<Bth<'a>> {
        let buf = buf.get(..BTH_LEN)?.try_into().ok()?;
        Some(Bth { buf })
    }
    /// Opcode (0x81 = CNP).
    #[inline]
    pub fn opcode(&self) -> u8 {
        self.buf[field::OPCODE]
    }
    /// Partition key.
    #[inline]
    pub fn pkey(&self) -> u16 {
        u16::from_be_bytes([self.buf[field::PKEY.start], self.buf[field::PKEY.start + 1]])
    }
    /// Forward explicit congestion notification bit.
    #[inline]
    pub fn fecn(&self) -> bool {
        self.buf[field::ECN_FLAGS] & FECN != 0
    }
    /// Backward explicit congestion notification bit.
    #[inline]
    pub fn becn(&self) -> bool {
        self.buf[field::ECN_FLAGS] & BECN != 0
    }
    /// Destination queue pair (24 bits).
    #[inline]
    pub fn dest_qp(&self) -> u32 {
        u24(&self.buf[field::DEST_QP])
    }
    /// Ack request bit.
    #[inline]
    pub fn ack_req(&self) -> bool {
        self.buf[field::ACK_REQ] & 0x80 != 0
    }
    /// Packet sequence number (24 bits).
    #[inline]
    pub fn psn(&self) -> u32 {
        u24(&self.buf[field::PSN])
    }
}

/// A read-only view of an AETH (it follows the BTH of an Acknowledge packet).
#[derive(Clone, Copy, Debug)]
pub struct Aeth<'a> {
    /// Exactly the header's bytes.
    buf: &'a [u8; AETH_LEN],
}

impl<'a> Aeth<'a> {
    /// Wrap `buf` if it holds at least 4 bytes.
    #[inline]
    pub fn new_checked(buf: &'a [u8]) -> Option<Aeth<'a>> {
        let buf = buf.get(..AETH_LEN)?.try_into().ok()?;
        Some(Aeth { buf })
    }
    /// Syndrome: ACK (0b000xxxxx), RNR NAK (0b001xxxxx) or NAK (0b011xxxxx, low bits the code).
    #[inline]
    pub fn syndrome(&self) -> u8 {
        self.buf[field::SYNDROME]
    }
    /// Is this an ACK (not a NAK)?
    #[inline]
    pub fn is_ack(&self) -> bool {
        self.syndrome() >> 5 == 0
    }
    /// Message sequence number (24 bits).
    #[inline]
    pub fn msn(&self) -> u32 {
        u24(&self.buf[field::MSN])
    }
}

/// Write a BTH (`opcode`, partition key 0xFFFF, `dest_qp`, `psn`, ack request off).
pub fn emit_bth(out: &mut Vec<u8>, opcode: u8, dest_qp: u32, psn: u32) {
    let at = out.len();
    out.resize(at + BTH_LEN, 0);
    let b = &mut out[at..];
    b[field::OPCODE] = opcode;
    b[field::PKEY].copy_from_slice(&0xFFFFu16.to_be_bytes());
    b[field::DEST_QP].copy_from_slice(&dest_qp.to_be_bytes()[1..]);
    b[field::PSN].copy_from_slice(&(psn & PSN_MASK).to_be_bytes()[1..]);
}

/// Write an AETH with `syndrome` and message sequence number `msn`.
pub fn emit_aeth(out: &mut Vec<u8>, syndrome: u8, msn: u32) {
    let at = out.len();
    out.resize(at + AETH_LEN, 0);
    let a = &mut out[at..];
    a[field::SYNDROME] = syndrome;
    a[field::MSN].copy_from_slice(&(msn & PSN_MASK).to_be_bytes()[1..]);
}

/// Rewrite the PSN of the BTH starting at `bth` in `frame`.
pub fn set_psn(frame: &mut [u8], bth: usize, psn: u32) {
    let r = field::PSN;
    frame[bth + r.start..bth + r.end].copy_from_slice(&(psn & PSN_MASK).to_be_bytes()[1..]);
}

/// Set (or clear) flag bits `bits` (`FECN`, `BECN`) of the BTH starting at `bth`.
pub fn set_ecn_flags(frame: &mut [u8], bth: usize, bits: u8) {
    frame[bth + field::ECN_FLAGS] |= bits;
}

/// Set or clear the AckReq bit of the BTH starting at `bth`.
pub fn set_ack_req(frame: &mut [u8], bth: usize, on: bool) {
    let b = &mut frame[bth + field::ACK_REQ];
    *b = if on { *b | 0x80 } else { *b & 0x7F };
}

/// Set the opcode of the BTH starting at `bth`.
pub fn set_opcode(frame: &mut [u8], bth: usize, opcode: u8) {
    frame[bth + field::OPCODE] = opcode;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bth_round_trip() {
        let mut b = Vec::new();
        emit_bth(&mut b, OPCODE_CNP, 0x00AB_CDEF, 0x0012_3456);
        let v = Bth::new_checked(&b).unwrap();
        assert_eq!(
            (v.opcode(), v.dest_qp(), v.psn(), v.pkey()),
            (0x81, 0xAB_CDEF, 0x12_3456, 0xFFFF)
        );
        assert!(!v.becn() && !v.fecn());
        set_ecn_flags(&mut b, 0, BECN);
        set_psn(&mut b, 0, 0x0100_0007);
        let v = Bth::new_checked(&b).unwrap();
        assert!(v.becn());
        assert_eq!(v.psn(), 7, "PSNs wrap at 24 bits");
    }

    #[test]
    fn aeth_round_trip() {
        let mut b = Vec::new();
        emit_aeth(&mut b, SYNDROME_NAK_PSN_SEQ, 42);
        let a = Aeth::new_checked(&b).unwrap();
        assert!(!a.is_ack());
        assert_eq!((a.syndrome(), a.msn()), (0x60, 42));
        b.clear();
        emit_aeth(&mut b, SYNDROME_ACK, 1);
        assert!(Aeth::new_checked(&b).unwrap().is_ack());
        assert!(Aeth::new_checked(&b[..3]).is_none());
    }
}
