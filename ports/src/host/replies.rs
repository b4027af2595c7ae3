//! The control frames a NIC sends back to a peer: CNPs (DCQCN's notification point) and
//! RC ACKs and NAKs (its responders), queued ahead of data.

use super::Host;
use crate::rc::{Reply, Responder};
use lossless_buffer_model::Time;
use lossless_pipeline::buffers;
use lossless_pipeline::parser::{Parsed, L3};
use lossless_pipeline::wire::build::FrameSpec;
use lossless_pipeline::wire::rocev2::{
    self, ACK_LEN, BTH_LEN, CNP_LEN, OPCODE_ACKNOWLEDGE, OPCODE_CNP, ROCEV2_PORT, SYNDROME_ACK,
    SYNDROME_NAK_PSN_SEQ,
};
use lossless_pipeline::Packet;

/// The receiving side of an RC flow at its destination NIC.
#[derive(Clone, Debug)]
pub struct RcSink {
    /// Expected PSN, NAK state, what was delivered.
    pub responder: Responder,
    /// Frame bytes besides the payload in the flow's frames.
    pub overhead: u32,
    /// DSCP of its ACKs and NAKs.
    pub ack_dscp: u8,
    /// The priority the NIC queues them on.
    pub ack_priority: u8,
}

impl Host {
    /// Queue a CNP toward the sender of a CE-marked frame: from `ip` to `peer_ip` at
    /// `peer_mac`, for queue pair `qp`, BECN set.
    pub(super) fn queue_cnp(
        &mut self,
        peer_mac: [u8; 6],
        ip: [u8; 4],
        peer_ip: [u8; 4],
        qp: u32,
        dscp: u8,
        now: Time,
    ) {
        let spec = self.reply_spec(peer_mac, ip, peer_ip, dscp, (OPCODE_CNP, qp, 0), CNP_LEN);
        let mut buf = buffers::take(buffers::SMALL);
        if spec.write(&mut buf).is_err() {
            return;
        }
        // The BTH ends the written headers.
        let bth = buf.len() - BTH_LEN;
        rocev2::set_ecn_flags(&mut buf, bth, rocev2::BECN);
        let mut pkt = Packet::new(buf, CNP_LEN);
        pkt.meta.sent_at = now;
        self.control.push_back((self.nic.cnp_priority, pkt));
        self.link.tx.touch();
    }

    /// Headers of a control frame this NIC sends back to a peer (CNP, ACK, NAK).
    fn reply_spec(
        &self,
        peer_mac: [u8; 6],
        ip: [u8; 4],
        peer_ip: [u8; 4],
        dscp: u8,
        bth: (u8, u32, u32),
        len: u32,
    ) -> FrameSpec {
        FrameSpec {
            src_mac: self.mac,
            dst_mac: peer_mac,
            vlan: None,
            src_ip: ip,
            dst_ip: peer_ip,
            ipv6: false,
            dscp,
            ecn: 0,
            src_port: 49_152,
            dst_port: ROCEV2_PORT,
            bth: Some(bth),
            len,
        }
    }

    /// Queue an RC ACK or NAK for queue pair `qp`, answering the data frame `to`.
    pub(super) fn queue_reply(
        &mut self,
        to: &Parsed,
        qp: u32,
        reply: Reply,
        sink: (u8, u8),
        now: Time,
    ) {
        let L3::V4 { src, dst, .. } = to.l3 else {
            return;
        };
        let (psn, syndrome, msn) = match reply {
            Reply::Ack { psn, msn } => (psn, SYNDROME_ACK, msn),
            Reply::Nak { psn, msn } => (psn, SYNDROME_NAK_PSN_SEQ, msn),
        };
        let (dscp, priority) = sink;
        let spec = self.reply_spec(
            to.src,
            dst,
            src,
            dscp,
            (OPCODE_ACKNOWLEDGE, qp, psn),
            ACK_LEN,
        );
        // The headers and the AETH (no ICRC, no FCS held).
        let mut buf = buffers::take(ACK_LEN as usize - rocev2::ICRC_LEN - 4);
        if spec.write(&mut buf).is_err() {
            return;
        }
        rocev2::emit_aeth(&mut buf, syndrome, msn);
        let mut pkt = Packet::new(buf, ACK_LEN);
        pkt.meta.sent_at = now;
        self.control.push_back((priority, pkt));
        self.link.tx.touch();
    }
}
