//! A NIC's TCP side: the host's smoltcp stack, the frames it makes (wrapped in Ethernet,
//! at most 64 KiB of them ahead of the transmitter), and the segments that arrive.

use super::{Host, TCP_RING};
use crate::tcp::TcpStack;
use lossless_buffer_model::Time;
use lossless_pipeline::buffers;
use lossless_pipeline::Packet;

impl Host {
    /// The host's TCP stack at `ip` (IP MTU `mtu`, smoltcp seeded with `seed`), made on
    /// first use; add its flows' ends, then call [`Host::tcp_ready`].
    pub fn tcp_stack(&mut self, ip: [u8; 4], mtu: u32, seed: u64) -> &mut TcpStack {
        self.tcp
            .get_or_insert_with(|| Box::new(TcpStack::new(ip, mtu, seed)))
    }

    /// The TCP stack's flows are all added: note when it first needs polling.
    pub fn tcp_ready(&mut self) {
        if let Some(t) = &mut self.tcp {
            self.tcp_wake = t.poll_at(self.now);
        }
    }

    /// The host's TCP stack, if it has one.
    pub fn tcp(&self) -> Option<&TcpStack> {
        self.tcp.as_deref()
    }

    /// Run the TCP stack at `now` (with an IP packet that arrived, if any) and queue the
    /// frames it made.
    pub(super) fn run_tcp(&mut self, ip: Option<&[u8]>, now: Time) {
        let Some(stack) = &mut self.tcp else { return };
        match ip {
            Some(ip) => stack.receive(ip, now),
            None => stack.poll(now),
        }
        self.tcp_wake = stack.poll_at(now);
        self.refill_tcp(now);
        self.link.tx.touch();
    }

    /// Take frames from the TCP stack while the NIC's ring has room.
    pub(super) fn refill_tcp(&mut self, now: Time) {
        let Some(stack) = &mut self.tcp else { return };
        let mut queued: u64 = self.tcp_out.iter().map(|(_, p)| p.len as u64).sum();
        while queued < TCP_RING {
            let Some((ip, flow)) = stack.take(now) else {
                break;
            };
            let Some((spec, tcp, sender)) = flow else {
                continue;
            };
            let h = &spec.headers;
            let (src, dst) = if sender {
                (h.src_mac, h.dst_mac)
            } else {
                (self.mac, tcp.reply_mac)
            };
            let mut buf = buffers::take(buffers::SMALL);
            crate::tcp::frame(&mut buf, (src, dst), h.vlan, h.dscp, &ip);
            let len = (buf.len() as u32 + 4).max(64);
            let mut pkt = Packet::new(buf, len);
            pkt.meta.flow = spec.id;
            pkt.meta.sent_at = now;
            let prio = spec.priority;
            if sender {
                if let Some(f) = self.flows.iter_mut().find(|f| f.spec.id == spec.id) {
                    pkt.meta.seq = f.tx_packets;
                    f.tx_packets += 1;
                    f.tx_bytes += len as u64;
                    f.first_tx.get_or_insert(now);
                }
            }
            queued += len as u64;
            self.tcp_out.push_back((prio, pkt));
        }
    }

    /// A TCP segment arrived at `now`: counted against its flow (the data direction, at
    /// the receiver) and handed to the stack.
    pub(super) fn deliver_tcp(&mut self, pkt: Packet, now: Time) {
        let id = pkt.meta.flow;
        let at = self.receivers.binary_search_by_key(&id, |(i, ..)| *i);
        if let Ok(i) = at {
            let wire = self.rx_wire.of(pkt.len as u64);
            self.receivers[i].1.record(&pkt, now, wire);
        }
        self.run_tcp(Some(crate::tcp::ip_of(&pkt.data)), now);
        // What arrived or was acknowledged may let a rank post its next step.
        if self.progress_ranks(now) {
            self.run_tcp(None, now);
        }
        let read = self.tcp.as_ref().and_then(|t| t.stats(id, false));
        if let (Some(read), Ok(i)) = (read.map(|s| s.delivered_bytes), at) {
            let rx = &mut self.receivers[i].1;
            let new = read.saturating_sub(rx.delivered_bytes);
            rx.record_delivered(new, now);
        }
        buffers::give(pkt.data);
    }
}
