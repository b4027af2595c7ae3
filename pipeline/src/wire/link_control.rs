//! This project's own encoding of the Ultra Ethernet link-layer control messages (CBFC's
//! CF_Update and CC_Update; LLR's ACK, NACK, INIT and INIT_ECHO) as Ethernet frames of the
//! IEEE 802 local experimental EtherType 0x88B5, so that two `lossless tap` switches can
//! speak them over a veth (docs/link-control.md). UE carries them as 8-byte control
//! ordered sets in the PCS stream, which no Linux interface can send; `lossless run`
//! gives a CF_Update and the LLR messages the 8-byte ordered set's wire time.
//!
//! Layout after the 14-byte Ethernet header (destination 03:4C:4C:00:00:01, a locally
//! administered group address bridges do not learn):
//!
//! ```text
//! 14  version (2)
//! 15  type: 1 CF_UPDATE, 2 CC_UPDATE, 8 CBFC_INIT, 9 CBFC_INIT_ECHO
//! CF_UPDATE: 16 VC; 17..20 freed count (24 bits, the low 20 used)
//! CC_UPDATE: 16..20 channels carried (u32, bit = VC); then per channel carried, in VC
//!            order, its consumed count (24 bits, the low 20 used)
//! CBFC_INIT: 16..20 generation (u32)
//! CBFC_INIT_ECHO: 16..20 generation answered; 20..24 channels carried; then per channel
//!            carried, the credits held (24 bits, the low 20 used)
//! 3 LLR_INIT, 4 LLR_INIT_ECHO, 5 LLR_ACK, 6 LLR_NACK: 16..19 sequence number (24 bits,
//!            the low 20 used)
//! then a CRC-32 (IEEE 802.3's, big-endian) over every byte from the version to the end
//! of the content: a veth has no FCS, and a bit flip must be a counted drop, never a
//! credit or a sequence number changed.
//! ```
//!
//! Frames are padded to 60 bytes (64 with the FCS).
//!
//! A data frame on an LLR link carries its sequence number (UE: in the preamble) in 8
//! bytes inserted after its MAC addresses, its own EtherType and payload following:
//!
//! ```text
//! 12..14 0x88B5, 14 version (2), 15 type 7 LLR_DATA, 16..19 sequence number (24 bits,
//!        the low 20 used), 19 flags (bit 0: poisoned), 20.. the frame from its EtherType
//! ```

use crate::link::cbfc::{CreditMessage, VCS};
use crate::link::llr::LlrMessage;
use crate::link::{ControlFrame, FrameClass};
use crate::packet::{Fcs, Hop};

/// EtherType of these messages (IEEE 802 local experimental 1).
pub const ETHERTYPE_LINK_CONTROL: u16 = 0x88B5;
/// Destination address of these messages.
pub const LINK_CONTROL_DESTINATION: [u8; 6] = [0x03, 0x4C, 0x4C, 0x00, 0x00, 0x01];
/// Version of the encoding (2: every message carries a CRC-32 of its own).
pub const VERSION: u8 = 2;
/// Message type of a CF_Update.
pub const TYPE_CF_UPDATE: u8 = 1;
/// Message type of a CC_Update.
pub const TYPE_CC_UPDATE: u8 = 2;
/// Message type of an LLR INIT.
pub const TYPE_LLR_INIT: u8 = 3;
/// Message type of an LLR INIT_ECHO.
pub const TYPE_LLR_INIT_ECHO: u8 = 4;
/// Message type of an LLR ACK.
pub const TYPE_LLR_ACK: u8 = 5;
/// Message type of an LLR NACK.
pub const TYPE_LLR_NACK: u8 = 6;
/// A data frame numbered for link-level retry (its header, not a message).
pub const TYPE_LLR_DATA: u8 = 7;
/// Message type of a CBFC INIT.
pub const TYPE_CBFC_INIT: u8 = 8;
/// Message type of a CBFC INIT_ECHO.
pub const TYPE_CBFC_INIT_ECHO: u8 = 9;
/// Bytes of a message's check value.
pub const CHECK_BYTES: usize = 4;
/// Bytes an LLR data header adds to a frame.
pub const LLR_DATA_HEADER: usize = 8;
/// Flag: the sender poisoned the frame (it must not be retried).
const LLR_DATA_POISONED: u8 = 1;
/// Bytes held of a message frame at least (64 on the wire with the FCS).
pub const MIN_HELD: usize = 60;

/// Byte offsets of the fields, from the destination MAC on.
pub mod field {
    use core::ops::Range;
    /// EtherType (0x88B5).
    pub const ETHERTYPE: Range<usize> = 12..14;
    /// Version.
    pub const VERSION: usize = 14;
    /// Message type.
    pub const TYPE: usize = 15;
    /// CF_Update: the channel.
    pub const CF_VC: usize = 16;
    /// CF_Update: the freed count.
    pub const CF_FREED: Range<usize> = 17..20;
    /// CC_Update: the channels carried.
    pub const CC_CHANNELS: Range<usize> = 16..20;
    /// CC_Update: the first consumed count.
    pub const CC_COUNTS: usize = 20;
    /// LLR messages: the sequence number.
    pub const LLR_SEQ: Range<usize> = 16..19;
    /// CBFC INIT and INIT_ECHO: the generation.
    pub const GENERATION: Range<usize> = 16..20;
    /// CBFC INIT_ECHO: the channels carried.
    pub const ECHO_CHANNELS: Range<usize> = 20..24;
    /// CBFC INIT_ECHO: the first credit count.
    pub const ECHO_COUNTS: usize = 24;
}

/// Why a message frame could not be read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Malformed {
    /// Shorter than its type needs (a CC_Update cut inside its counts).
    Truncated,
    /// A version other than [`VERSION`].
    Version,
    /// A message type this encoding does not define (or an LLR data header, which is
    /// not a message).
    UnknownType,
    /// A CF_Update for a channel beyond the 32 CBFC has.
    Channel,
    /// The CRC-32 does not match: bits changed on the way.
    Checksum,
}

/// Is `frame` (from the destination MAC on) of the link-control EtherType, untagged? Only
/// a port that speaks CBFC or LLR reads it as a message; behind a VLAN tag, or on any other
/// port, it is someone's experimental traffic, forwarded as data.
#[inline]
pub fn is_link_control(frame: &[u8]) -> bool {
    frame.get(field::ETHERTYPE) == Some(&ETHERTYPE_LINK_CONTROL.to_be_bytes()[..])
}

fn u24(b: &[u8]) -> u32 {
    u32::from_be_bytes([0, b[0], b[1], b[2]]) & 0xF_FFFF
}

/// The CRC-32 of IEEE 802.3 (reflected polynomial 0xEDB88320) of `bytes`.
pub fn crc32(bytes: &[u8]) -> u32 {
    const TABLE: [u32; 256] = {
        let mut t = [0u32; 256];
        let mut i = 0;
        while i < 256 {
            let mut c = i as u32;
            let mut k = 0;
            while k < 8 {
                c = if c & 1 != 0 {
                    0xEDB8_8320 ^ (c >> 1)
                } else {
                    c >> 1
                };
                k += 1;
            }
            t[i] = c;
            i += 1;
        }
        t
    };
    !bytes.iter().fold(!0u32, |c, b| {
        TABLE[((c ^ *b as u32) & 0xFF) as usize] ^ (c >> 8)
    })
}

/// The channels a channel bitmap at `at` names, and where its counts end.
fn counts_end(frame: &[u8], at: core::ops::Range<usize>) -> Result<(u32, usize), Malformed> {
    let b = frame.get(at.clone()).ok_or(Malformed::Truncated)?;
    let channels = u32::from_be_bytes(b.try_into().expect("4"));
    Ok((channels, at.end + 3 * channels.count_ones() as usize))
}

/// Where the content of the message in `frame` ends, by its version and type; the CRC-32
/// follows it and must match.
fn checked(frame: &[u8]) -> Result<usize, Malformed> {
    if frame.len() <= field::TYPE {
        return Err(Malformed::Truncated);
    }
    if frame[field::VERSION] != VERSION {
        return Err(Malformed::Version);
    }
    let end = match frame[field::TYPE] {
        TYPE_CF_UPDATE | TYPE_CBFC_INIT => 20,
        TYPE_LLR_INIT..=TYPE_LLR_NACK => field::LLR_SEQ.end,
        TYPE_CC_UPDATE => counts_end(frame, field::CC_CHANNELS)?.1,
        TYPE_CBFC_INIT_ECHO => counts_end(frame, field::ECHO_CHANNELS)?.1,
        _ => return Err(Malformed::UnknownType),
    };
    let check = frame
        .get(end..end + CHECK_BYTES)
        .ok_or(Malformed::Truncated)?;
    if crc32(&frame[field::VERSION..end]).to_be_bytes() != check {
        return Err(Malformed::Checksum);
    }
    Ok(end)
}

/// Per channel carried by the bitmap at `at`, its count (24 bits, the low 20 used).
fn counts(frame: &[u8], at: core::ops::Range<usize>) -> (u32, Box<[u32; VCS]>) {
    let (channels, _) = counts_end(frame, at.clone()).expect("checked");
    let mut out = [0u32; VCS];
    let mut i = at.end;
    for (v, c) in out.iter_mut().enumerate() {
        if channels & (1 << v) != 0 {
            *c = u24(&frame[i..i + 3]);
            i += 3;
        }
    }
    (channels, Box::new(out))
}

/// Read a credit message from `frame` (from the destination MAC on).
pub fn parse_credit(frame: &[u8]) -> Result<CreditMessage, Malformed> {
    checked(frame)?;
    match frame[field::TYPE] {
        TYPE_CF_UPDATE => {
            let vc = frame[field::CF_VC];
            if vc as usize >= VCS {
                return Err(Malformed::Channel);
            }
            Ok(CreditMessage::CfUpdate {
                vc,
                freed: u24(&frame[field::CF_FREED]),
            })
        }
        TYPE_CC_UPDATE => {
            let (credited, consumed) = counts(frame, field::CC_CHANNELS);
            Ok(CreditMessage::CcUpdate { credited, consumed })
        }
        TYPE_CBFC_INIT => Ok(CreditMessage::Init {
            generation: u32::from_be_bytes(frame[field::GENERATION].try_into().expect("4")),
        }),
        TYPE_CBFC_INIT_ECHO => {
            let (credited, held) = counts(frame, field::ECHO_CHANNELS);
            Ok(CreditMessage::InitEcho {
                generation: u32::from_be_bytes(frame[field::GENERATION].try_into().expect("4")),
                credited,
                held,
            })
        }
        _ => Err(Malformed::UnknownType),
    }
}

/// Read any message from `frame`: a credit message or an LLR one.
pub fn parse(frame: &[u8]) -> Result<ControlFrame, Malformed> {
    checked(frame)?;
    let seq = || u24(&frame[field::LLR_SEQ]);
    Ok(match frame[field::TYPE] {
        TYPE_LLR_INIT => ControlFrame::Retry(LlrMessage::Init { seq: seq() }),
        TYPE_LLR_INIT_ECHO => ControlFrame::Retry(LlrMessage::InitEcho { seq: seq() }),
        TYPE_LLR_ACK => ControlFrame::Retry(LlrMessage::Ack { seq: seq() }),
        TYPE_LLR_NACK => ControlFrame::Retry(LlrMessage::Nack { seq: seq() }),
        _ => ControlFrame::Credit(parse_credit(frame)?),
    })
}

/// What a frame read from a wire is to its link, by a glance at its EtherType and type:
/// a CF_Update or an LLR message is what UE sends as a control ordered set (not counted
/// among the port's frames), a CC_Update a control frame; anything else is data (a
/// malformed message is found so when the frame is parsed).
pub fn class_of(frame: &[u8]) -> FrameClass {
    if frame.len() <= field::TYPE || frame[field::ETHERTYPE] != ETHERTYPE_LINK_CONTROL.to_be_bytes()
    {
        return FrameClass::Data;
    }
    match frame[field::TYPE] {
        TYPE_CF_UPDATE => FrameClass::CreditUpdate,
        TYPE_CC_UPDATE | TYPE_CBFC_INIT | TYPE_CBFC_INIT_ECHO => FrameClass::CreditResync,
        TYPE_LLR_INIT..=TYPE_LLR_NACK => FrameClass::Retry,
        _ => FrameClass::Data,
    }
}

/// Number the data frame `frame` (from its destination MAC on) for the link: insert the
/// LLR data header carrying `hop`'s sequence number and poison mark after the MACs.
/// A frame without a sequence number is left as it is.
pub fn wrap_llr_data(frame: &mut Vec<u8>, hop: Hop) {
    let Some(seq) = hop.llr_seq() else {
        return;
    };
    if frame.len() < field::ETHERTYPE.start {
        return;
    }
    let s = (seq & 0xF_FFFF).to_be_bytes();
    let flags = if hop.fcs() == Fcs::Poisoned {
        LLR_DATA_POISONED
    } else {
        0
    };
    let at = field::ETHERTYPE.start;
    let [e0, e1] = ETHERTYPE_LINK_CONTROL.to_be_bytes();
    frame.splice(
        at..at,
        [e0, e1, VERSION, TYPE_LLR_DATA, s[1], s[2], s[3], flags],
    );
}

/// If `frame` is an LLR data frame, take its header off and return what it said about
/// the hop (sequence number, poison); None for any other frame, left as it is.
pub fn unwrap_llr_data(frame: &mut Vec<u8>) -> Option<Hop> {
    let at = field::ETHERTYPE.start;
    if frame.len() < at + LLR_DATA_HEADER + 2
        || frame[field::ETHERTYPE] != ETHERTYPE_LINK_CONTROL.to_be_bytes()
        || frame[field::VERSION] != VERSION
        || frame[field::TYPE] != TYPE_LLR_DATA
    {
        return None;
    }
    let mut hop = Hop::llr(u24(&frame[field::LLR_SEQ]));
    if frame[field::LLR_SEQ.end] & LLR_DATA_POISONED != 0 {
        hop.poison();
    }
    frame.drain(at..at + LLR_DATA_HEADER);
    Some(hop)
}

/// Write the LLR message `msg` from `source` into `out` (cleared first; padded to 60
/// bytes, FCS not held).
pub fn emit_retry(out: &mut Vec<u8>, source: [u8; 6], msg: &LlrMessage) {
    out.clear();
    out.extend_from_slice(&LINK_CONTROL_DESTINATION);
    out.extend_from_slice(&source);
    out.extend_from_slice(&ETHERTYPE_LINK_CONTROL.to_be_bytes());
    out.push(VERSION);
    let (kind, seq) = match *msg {
        LlrMessage::Init { seq } => (TYPE_LLR_INIT, seq),
        LlrMessage::InitEcho { seq } => (TYPE_LLR_INIT_ECHO, seq),
        LlrMessage::Ack { seq } => (TYPE_LLR_ACK, seq),
        LlrMessage::Nack { seq } => (TYPE_LLR_NACK, seq),
    };
    out.push(kind);
    out.extend_from_slice(&(seq & 0xF_FFFF).to_be_bytes()[1..]);
    seal(out);
}

/// Append the CRC-32 of the message in `out` (from its version on), and pad to 60 bytes.
fn seal(out: &mut Vec<u8>) {
    let crc = crc32(&out[field::VERSION..]);
    out.extend_from_slice(&crc.to_be_bytes());
    if out.len() < MIN_HELD {
        out.resize(MIN_HELD, 0);
    }
}

/// Append a channel bitmap and each carried channel's count (24 bits, the low 20 used).
fn push_counts(out: &mut Vec<u8>, channels: u32, counts: &[u32; VCS]) {
    out.extend_from_slice(&channels.to_be_bytes());
    for (v, c) in counts.iter().enumerate() {
        if channels & (1 << v) != 0 {
            out.extend_from_slice(&(c & 0xF_FFFF).to_be_bytes()[1..]);
        }
    }
}

/// Write `msg` from `source` into `out` (cleared first; padded to 60 bytes, FCS not held).
pub fn emit_credit(out: &mut Vec<u8>, source: [u8; 6], msg: &CreditMessage) {
    out.clear();
    out.extend_from_slice(&LINK_CONTROL_DESTINATION);
    out.extend_from_slice(&source);
    out.extend_from_slice(&ETHERTYPE_LINK_CONTROL.to_be_bytes());
    out.push(VERSION);
    match msg {
        CreditMessage::CfUpdate { vc, freed } => {
            out.push(TYPE_CF_UPDATE);
            out.push(*vc);
            out.extend_from_slice(&(freed & 0xF_FFFF).to_be_bytes()[1..]);
        }
        &CreditMessage::CcUpdate {
            credited,
            ref consumed,
        } => {
            out.push(TYPE_CC_UPDATE);
            push_counts(out, credited, consumed);
        }
        CreditMessage::Init { generation } => {
            out.push(TYPE_CBFC_INIT);
            out.extend_from_slice(&generation.to_be_bytes());
        }
        &CreditMessage::InitEcho {
            generation,
            credited,
            ref held,
        } => {
            out.push(TYPE_CBFC_INIT_ECHO);
            out.extend_from_slice(&generation.to_be_bytes());
            push_counts(out, credited, held);
        }
    }
    seal(out);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crc32_is_ieee_802_3s() {
        // The check value every CRC-32 catalogue gives for "123456789".
        assert_eq!(crc32(b"123456789"), 0xCBF4_3926);
        assert_eq!(crc32(b""), 0);
    }

    #[test]
    fn a_cf_update_is_byte_exact_and_reads_back() {
        let mut out = Vec::new();
        let m = CreditMessage::CfUpdate {
            vc: 3,
            freed: 0xF_1234,
        };
        emit_credit(&mut out, [2, 0, 0, 0, 0, 9], &m);
        assert_eq!(out.len(), 60);
        assert_eq!(
            &out[12..20],
            &[0x88, 0xB5, 2, TYPE_CF_UPDATE, 3, 0x0F, 0x12, 0x34]
        );
        assert_eq!(&out[20..24], &crc32(&out[14..20]).to_be_bytes());
        assert_eq!(parse_credit(&out), Ok(m));
    }

    #[test]
    fn a_cc_update_carries_each_credited_channel() {
        let mut consumed = [0u32; VCS];
        consumed[3] = 1;
        consumed[4] = 0xF_FFFF;
        consumed[31] = 77;
        let m = CreditMessage::CcUpdate {
            credited: (1 << 3) | (1 << 4) | (1 << 31),
            consumed: Box::new(consumed),
        };
        let mut out = Vec::new();
        emit_credit(&mut out, [0; 6], &m);
        assert_eq!(parse_credit(&out), Ok(m));
        // Cut short inside the counts or its check, a bad version or type, a bit flipped:
        // malformed, saying how.
        assert_eq!(parse_credit(&out[..24]), Err(Malformed::Truncated));
        assert_eq!(parse_credit(&out[..30]), Err(Malformed::Truncated));
        assert_eq!(parse(&out[..15]), Err(Malformed::Truncated));
        let mut flipped = out.clone();
        flipped[21] ^= 0x10;
        assert_eq!(parse_credit(&flipped), Err(Malformed::Checksum));
        out[14] = 1;
        assert_eq!(parse_credit(&out), Err(Malformed::Version));
        out[14] = VERSION;
        out[15] = 10;
        assert_eq!(parse_credit(&out), Err(Malformed::UnknownType));
        out[15] = TYPE_LLR_DATA;
        assert_eq!(parse(&out), Err(Malformed::UnknownType));
        let mut cf = Vec::new();
        emit_credit(
            &mut cf,
            [0; 6],
            &CreditMessage::CfUpdate { vc: 3, freed: 1 },
        );
        cf[16] = 32;
        let crc = crc32(&cf[14..20]).to_be_bytes();
        cf[20..24].copy_from_slice(&crc);
        assert_eq!(parse(&cf), Err(Malformed::Channel));
        assert!(is_link_control(&out));
        out[12] = 0x81;
        assert!(!is_link_control(&out));
        assert!(!is_link_control(&out[..13]));
    }

    #[test]
    fn init_and_its_echo_read_back() {
        let mut held = [0u32; VCS];
        held[3] = 1008;
        for m in [
            CreditMessage::Init {
                generation: 0xDEAD_BEEF,
            },
            CreditMessage::InitEcho {
                generation: 7,
                credited: 1 << 3,
                held: Box::new(held),
            },
        ] {
            let mut out = Vec::new();
            emit_credit(&mut out, [2, 0, 0, 0, 0, 9], &m);
            assert_eq!(out.len(), 60);
            assert_eq!(class_of(&out), FrameClass::CreditResync);
            assert_eq!(parse(&out), Ok(ControlFrame::Credit(m)));
        }
    }

    /// Any one bit flipped anywhere in the message, its check value included, is caught.
    #[test]
    fn every_single_bit_flip_is_caught() {
        let mut out = Vec::new();
        emit_retry(&mut out, [0; 6], &LlrMessage::Ack { seq: 0x1_2345 });
        let end = field::LLR_SEQ.end + CHECK_BYTES;
        for byte in field::VERSION..end {
            for bit in 0..8 {
                let mut f = out.clone();
                f[byte] ^= 1 << bit;
                assert!(parse(&f).is_err(), "byte {byte} bit {bit}");
            }
        }
    }

    #[test]
    fn an_llr_data_header_goes_on_and_comes_off() {
        let frame: Vec<u8> = (0..64u8).collect();
        let mut out = frame.clone();
        wrap_llr_data(&mut out, Hop::llr(0xA_BCDE));
        assert_eq!(out.len(), 72);
        assert_eq!(&out[..12], &frame[..12]);
        assert_eq!(
            &out[12..20],
            &[0x88, 0xB5, 2, TYPE_LLR_DATA, 0x0A, 0xBC, 0xDE, 0]
        );
        assert_eq!(&out[20..], &frame[12..]);
        assert_eq!(unwrap_llr_data(&mut out), Some(Hop::llr(0xA_BCDE)));
        assert_eq!(out, frame);
        // Poisoned, and a plain frame: left alone.
        let mut hop = Hop::llr(5);
        hop.poison();
        wrap_llr_data(&mut out, hop);
        assert_eq!(out[19], 1);
        assert_eq!(unwrap_llr_data(&mut out), Some(hop));
        wrap_llr_data(&mut out, Hop::PLAIN);
        assert_eq!(out, frame);
        assert_eq!(unwrap_llr_data(&mut out), None);
        assert_eq!(out, frame);
    }

    #[test]
    fn llr_messages_read_back() {
        for m in [
            LlrMessage::Init { seq: 0 },
            LlrMessage::InitEcho { seq: 0xF_FFFF },
            LlrMessage::Ack { seq: 524_287 },
            LlrMessage::Nack { seq: 17 },
        ] {
            let mut out = Vec::new();
            emit_retry(&mut out, [2, 0, 0, 0, 0, 9], &m);
            assert_eq!(out.len(), 60);
            assert_eq!(parse(&out), Ok(ControlFrame::Retry(m)));
        }
        let mut out = Vec::new();
        assert_eq!(class_of(&out), FrameClass::Data);
        emit_retry(&mut out, [0; 6], &LlrMessage::Nack { seq: 0x1_2345 });
        assert_eq!(&out[14..19], &[2, TYPE_LLR_NACK, 0x01, 0x23, 0x45]);
        assert_eq!(class_of(&out), FrameClass::Retry);
        emit_credit(
            &mut out,
            [0; 6],
            &CreditMessage::CfUpdate { vc: 3, freed: 1 },
        );
        assert_eq!(class_of(&out), FrameClass::CreditUpdate);
        out[15] = TYPE_LLR_DATA;
        assert_eq!(class_of(&out), FrameClass::Data);
    }
}
