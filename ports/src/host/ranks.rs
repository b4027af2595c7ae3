//! A host's ranks in collectives: they post messages on its RC flows (or bytes on its TCP
//! connections) as what they receive and what is acknowledged allows.

use super::{Host, RcSink};
use crate::collective::{Connections, Rank};
use crate::flow::{FlowRx, FlowTx};
use crate::tcp::TcpStack;
use lossless_buffer_model::Time;

/// The host's connections as a rank sees them.
struct Qps<'a> {
    flows: &'a mut [FlowTx],
    receivers: &'a [(u32, FlowRx, Option<RcSink>)],
    tcp: Option<&'a mut TcpStack>,
}

impl Connections for Qps<'_> {
    fn post(&mut self, send: usize, bytes: u64, now: Time) {
        let f = &mut self.flows[send];
        match (&mut f.rc, &mut self.tcp) {
            (Some(_), _) => f.post(bytes, now),
            (None, Some(tcp)) => tcp.post(f.spec.id, bytes),
            (None, None) => {}
        }
    }

    fn received(&self, recv: u32) -> u64 {
        if let Some(s) = self.tcp.as_ref().and_then(|t| t.stats(recv, false)) {
            return s.delivered_bytes;
        }
        let Ok(i) = self.receivers.binary_search_by_key(&recv, |(i, ..)| *i) else {
            return 0;
        };
        self.receivers[i]
            .2
            .as_ref()
            .map_or(0, |s| s.responder.stats.delivered_bytes)
    }

    fn acknowledged(&self, send: usize) -> u64 {
        let f = &self.flows[send];
        if let Some(rc) = &f.rc {
            return rc.stats.completed_bytes;
        }
        self.tcp.as_ref().map_or(0, |t| t.acknowledged(f.spec.id))
    }

    fn resent(&self, send: usize) -> u64 {
        let f = &self.flows[send];
        if let Some(rc) = &f.rc {
            return rc.stats.retransmitted_packets;
        }
        let tcp = self.tcp.as_ref().and_then(|t| t.stats(f.spec.id, true));
        tcp.map_or(0, |s| s.retransmitted_segments)
    }
}

impl Host {
    /// Take part in a collective as `rank`.
    pub fn add_rank(&mut self, rank: Rank) {
        self.ranks.push(rank);
    }

    /// The host's ranks in collectives.
    pub fn ranks(&self) -> &[Rank] {
        &self.ranks
    }

    /// Let the ranks post what was received and acknowledged by `now` allows; true if
    /// any posted.
    pub(super) fn progress_ranks(&mut self, now: Time) -> bool {
        if self.ranks.is_empty() {
            return false;
        }
        let mut qps = Qps {
            flows: &mut self.flows,
            receivers: &self.receivers,
            tcp: self.tcp.as_deref_mut(),
        };
        let mut posted = false;
        for r in &mut self.ranks {
            posted |= r.progress(now, &mut qps);
        }
        if posted {
            self.link.tx.touch();
        }
        posted
    }
}
