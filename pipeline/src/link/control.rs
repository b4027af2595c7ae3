//! What a frame is to the link that carries it ([`FrameClass`], kept in each frame's
//! metadata so no engine reads bytes to find out), and the control frames two link layers
//! exchange ([`ControlFrame`]: parsed from the wire and emitted onto it, smoltcp's
//! `Repr::parse`/`emit` over the typed views in [`crate::wire::pfc`]).

use crate::drop_reason::DropReason;
use crate::link::cbfc::CreditMessage;
use crate::link::llr::LlrMessage;
use crate::packet::Packet;
use crate::wire::link_control::{self, Malformed};
use crate::wire::pfc::{
    self, MacControlFrame, OPCODE_PAUSE, OPCODE_PFC, PFC_DESTINATION, PFC_FRAME_LEN,
};
use lossless_buffer_model::PRIORITIES;

/// What a frame is to the link carrying it: data for the next pipeline, or a control
/// frame one end's link layer sends the other's, which is consumed there and never
/// forwarded. Set by whoever makes the frame (a link layer emitting a control frame, a
/// receiver that parsed one); engines read it instead of the bytes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum FrameClass {
    /// A frame for the pipeline (everything a host or a TAP sends).
    #[default]
    Data,
    /// An IEEE 802.1Qbb PFC frame.
    Pfc,
    /// An IEEE 802.3x PAUSE frame.
    Pause,
    /// A CBFC CF_Update: an 8-byte control ordered set in UE (a 64-byte frame of EtherType
    /// 0x88B5 between `lossless tap` switches).
    CreditUpdate,
    /// A CBFC CC_Update: a 64-byte frame.
    CreditResync,
    /// An LLR ACK, NACK, INIT or INIT_ECHO: an 8-byte control ordered set in UE (a
    /// 64-byte frame of EtherType 0x88B5 between `lossless tap` switches).
    Retry,
}

/// Bytes of line time a control ordered set takes (no preamble, no gap: it replaces idle).
pub const ORDERED_SET_BYTES: u64 = 8;

impl FrameClass {
    /// Is this a link-layer control frame (consumed by the next hop, never forwarded)?
    pub fn is_control(self) -> bool {
        self != FrameClass::Data
    }

    /// Is this a control ordered set (8 bytes of line time, not a frame: not in the
    /// port's frame counters)?
    pub fn is_ordered_set(self) -> bool {
        matches!(self, FrameClass::CreditUpdate | FrameClass::Retry)
    }

    /// Is this a CBFC credit message (a CF_Update or a CC_Update)?
    #[inline]
    pub fn is_credit(self) -> bool {
        matches!(self, FrameClass::CreditUpdate | FrameClass::CreditResync)
    }
}

/// A control frame's meaning: what the receiving link layer acts on.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ControlFrame {
    /// IEEE 802.1Qbb PFC: the priorities it speaks for and their pause times.
    Pfc {
        /// Class-enable vector: bit p set means `quanta[p]` applies to priority p.
        enable: u8,
        /// Pause time per priority in quanta (0 resumes).
        quanta: [u16; PRIORITIES],
    },
    /// IEEE 802.3x PAUSE: one pause time for the whole link.
    Pause {
        /// Pause time in quanta (0 resumes).
        quanta: u16,
    },
    /// A CBFC credit message.
    Credit(CreditMessage),
    /// An LLR control ordered set.
    Retry(LlrMessage),
}

impl ControlFrame {
    /// Parse the MAC Control frame `data` whose declared length (FCS counted) is `len`: a
    /// PFC frame must go to the reserved multicast address and be a full 64 bytes.
    pub fn parse(data: &[u8], len: u32) -> Result<ControlFrame, DropReason> {
        let f = MacControlFrame::new_checked(data).ok_or(DropReason::TruncatedMacControl)?;
        match f.opcode() {
            OPCODE_PFC => {
                if f.destination() != PFC_DESTINATION {
                    return Err(DropReason::PfcBadDestination);
                }
                if len < 64 {
                    return Err(DropReason::PfcTooShort);
                }
                let f = f.pfc().ok_or(DropReason::TruncatedMacControl)?;
                Ok(ControlFrame::Pfc {
                    enable: f.class_enable(),
                    quanta: f.all_quanta(),
                })
            }
            OPCODE_PAUSE => {
                let f = f.pause().ok_or(DropReason::TruncatedMacControl)?;
                Ok(ControlFrame::Pause {
                    quanta: f.pause_time(),
                })
            }
            _ => Err(DropReason::MacControlUnknownOpcode),
        }
    }

    /// Parse the link-control message `data` (EtherType 0x88B5, untagged), refused for
    /// what is wrong with it.
    pub fn parse_link_control(data: &[u8]) -> Result<ControlFrame, DropReason> {
        link_control::parse(data).map_err(|e| match e {
            Malformed::Truncated => DropReason::TruncatedLinkControl,
            Malformed::Version => DropReason::LinkControlBadVersion,
            Malformed::UnknownType => DropReason::LinkControlUnknownType,
            Malformed::Channel => DropReason::LinkControlBadChannel,
            Malformed::Checksum => DropReason::LinkControlBadCheck,
        })
    }

    /// The frame from `source` in the reused buffer `buf`, its class in its metadata.
    #[inline]
    pub fn emit(&self, mut buf: Vec<u8>, source: [u8; 6]) -> Packet {
        match self {
            ControlFrame::Pfc { enable, quanta } => {
                pfc::emit_pfc(&mut buf, source, *enable, quanta)
            }
            ControlFrame::Pause { quanta } => pfc::emit_pause(&mut buf, source, *quanta),
            ControlFrame::Credit(m) => link_control::emit_credit(&mut buf, source, m),
            ControlFrame::Retry(m) => link_control::emit_retry(&mut buf, source, m),
        }
        let len = buf.len() as u32 + 4;
        let mut pkt = Packet::new(buf, len.max(PFC_FRAME_LEN));
        pkt.meta.class = self.class();
        pkt
    }

    /// The class a frame carrying this has.
    #[inline]
    pub fn class(&self) -> FrameClass {
        match self {
            ControlFrame::Pfc { .. } => FrameClass::Pfc,
            ControlFrame::Pause { .. } => FrameClass::Pause,
            ControlFrame::Credit(CreditMessage::CfUpdate { .. }) => FrameClass::CreditUpdate,
            ControlFrame::Credit(
                CreditMessage::CcUpdate { .. }
                | CreditMessage::Init { .. }
                | CreditMessage::InitEcho { .. },
            ) => FrameClass::CreditResync,
            ControlFrame::Retry(_) => FrameClass::Retry,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_reads_what_emit_writes() {
        let frames = [
            ControlFrame::Pfc {
                enable: 0b1001_1000,
                quanta: [0, 0, 0, 0xFFFF, 0x1234, 0, 0, 7],
            },
            ControlFrame::Pause { quanta: 0xFFFF },
            ControlFrame::Pause { quanta: 0 },
        ];
        for f in frames {
            let pkt = f.emit(Vec::new(), [2, 0, 0, 0, 0, 9]);
            assert_eq!((pkt.len, pkt.data.len()), (64, 60));
            assert_eq!(pkt.meta.class, f.class());
            assert!(pkt.meta.class.is_control());
            assert_eq!(ControlFrame::parse(&pkt.data, pkt.len), Ok(f));
        }
    }

    #[test]
    fn a_pfc_frame_elsewhere_or_short_is_refused() {
        let f = ControlFrame::Pfc {
            enable: 1 << 3,
            quanta: [0; 8],
        };
        let mut pkt = f.emit(Vec::new(), [2, 0, 0, 0, 0, 9]);
        assert_eq!(
            ControlFrame::parse(&pkt.data, 63),
            Err(DropReason::PfcTooShort)
        );
        pkt.data[5] = 2;
        assert_eq!(
            ControlFrame::parse(&pkt.data, 64),
            Err(DropReason::PfcBadDestination)
        );
        pkt.data[15] = 9;
        assert_eq!(
            ControlFrame::parse(&pkt.data, 64),
            Err(DropReason::MacControlUnknownOpcode)
        );
        assert_eq!(
            ControlFrame::parse(&pkt.data[..15], 64),
            Err(DropReason::TruncatedMacControl)
        );
    }
}
