//! Packet trimming (SONiC `packet_discard_action: trim`): a frame the buffer refuses on a
//! queue that trims is dropped as before, and a cut copy — its first `size` bytes, the
//! DSCP re-marked (the IPv4 header checksum with it), every length field as it was, so a
//! receiver can tell it was cut — goes to the trim queue of the same port
//! (docs/physics.md, "Packet trimming").

use super::Switch;
use crate::config::{TrimDscp, TrimQueue};
use crate::packet::{IpAt, Packet, Trim};
use crate::wire::edit;

impl Switch {
    /// Does queue `q` of port `out` trim `pkt` when the buffer refuses it? Only frames
    /// with an IP header are trimmed (SONiC: IPv4 and IPv6 unicast), never a trimmed copy
    /// or one an ACL rule exempted.
    #[inline]
    pub(super) fn trims(&self, out: usize, q: usize, pkt: &Packet) -> bool {
        self.cfg.ports[out].trim_queues & (1 << q) != 0
            && pkt.meta.trim == Trim::Eligible
            && pkt.meta.ip != IpAt::None
            && self.cfg.trimming.is_some()
    }

    /// The cut copy of `pkt`, refused on queue `q` of port `out`, classed for its trim
    /// queue.
    pub(super) fn trimmed_copy(&self, out: usize, q: usize, pkt: &Packet) -> Packet {
        let t = self.cfg.trimming.expect("trims() said the switch trims");
        let len = pkt.len.min(t.size);
        let keep = (len as usize - 4).min(pkt.data.len());
        let mut data = crate::buffers::take(keep);
        data.extend_from_slice(&pkt.data[..keep]);
        let dscp = match t.dscp {
            TrimDscp::Value(d) => d,
            TrimDscp::FromTc(tc) => self.cfg.ports[out]
                .tc_to_dscp
                .expect("the loader gives every port a map under from_tc")[tc as usize],
        };
        match pkt.meta.ip {
            IpAt::V4(o) => edit::ipv4_set_dscp(&mut data[o as usize..], dscp),
            IpAt::V6(o) => edit::ipv6_set_dscp(&mut data[o as usize..], dscp),
            IpAt::None => {}
        }
        // The copy is of its new DSCP's class: that class's PG holds it at ingress (the
        // original's PG has just refused a frame), the trim queue or the class's queue at
        // egress.
        let qos = &self.cfg.qos;
        let mut meta = pkt.meta;
        meta.trim = Trim::From(q as u8);
        meta.tc = qos.dscp_to_tc[dscp as usize];
        meta.pg = qos.tc_to_pg[meta.tc as usize];
        meta.queue = match t.queue {
            TrimQueue::Queue(n) => n,
            TrimQueue::Dynamic => qos.tc_to_queue[meta.tc as usize],
        };
        Packet {
            data,
            len,
            meta,
            hop: crate::packet::Hop::PLAIN,
        }
    }
}
