//! RoCEv2 Base Transport Header (InfiniBand BTH, 12 bytes after UDP port 4791).

/// UDP destination port of RoCEv2.
pub const ROCEV2_PORT: u16 = 4791;
/// BTH length in bytes.
pub const BTH_LEN: usize = 12;
/// Opcode of a congestion notification packet (CNP).
pub const OPCODE_CNP: u8 = 0x81;
/// Length of the invariant CRC trailing a RoCEv2 packet.
pub const ICRC_LEN: usize = 4;

/// A read-only view of a BTH.
#[derive(Clone, Copy, Debug)]
pub struct Bth<'a> {
    buf: &'a [u8],
}

impl<'a> Bth<'a> {
    /// Wrap `buf` if it holds at least 12 bytes.
    pub fn new_checked(buf: &'a [u8]) -> Option<Bth<'a>> {
        (buf.len() >= BTH_LEN).then_some(Bth { buf })
    }
    /// Opcode (0x81 = CNP).
    pub fn opcode(&self) -> u8 {
        self.buf[0]
    }
    /// Partition key.
    pub fn pkey(&self) -> u16 {
        u16::from_be_bytes([self.buf[2], self.buf[3]])
    }
    /// Forward explicit congestion notification bit.
    pub fn fecn(&self) -> bool {
        self.buf[4] & 0x80 != 0
    }
    /// Backward explicit congestion notification bit.
    pub fn becn(&self) -> bool {
        self.buf[4] & 0x40 != 0
    }
    /// Destination queue pair (24 bits).
    pub fn dest_qp(&self) -> u32 {
        u32::from_be_bytes([0, self.buf[5], self.buf[6], self.buf[7]])
    }
    /// Ack request bit.
    pub fn ack_req(&self) -> bool {
        self.buf[8] & 0x80 != 0
    }
    /// Packet sequence number (24 bits).
    pub fn psn(&self) -> u32 {
        u32::from_be_bytes([0, self.buf[9], self.buf[10], self.buf[11]])
    }
}

/// Write a BTH (`opcode`, partition key 0xFFFF, `dest_qp`, `psn`, ack request off).
pub fn emit_bth(out: &mut Vec<u8>, opcode: u8, dest_qp: u32, psn: u32) {
    out.push(opcode);
    out.push(0); // SE, M, pad count, transport version
    out.extend_from_slice(&0xFFFFu16.to_be_bytes());
    out.push(0); // FECN, BECN, reserved
    out.extend_from_slice(&dest_qp.to_be_bytes()[1..]);
    out.push(0); // AckReq, reserved
    out.extend_from_slice(&psn.to_be_bytes()[1..]);
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
    }
}
