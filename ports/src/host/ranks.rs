//! A host's ranks in collectives: they post messages on its RC flows as what they
//! receive and what is acknowledged allows.

use super::Host;
use crate::collective::Rank;
use lossless_buffer_model::Time;

impl Host {
    /// Take part in a collective as `rank`.
    pub fn add_rank(&mut self, rank: Rank) {
        self.ranks.push(rank);
    }

    /// The host's ranks in collectives.
    pub fn ranks(&self) -> &[Rank] {
        &self.ranks
    }

    /// Let the ranks post what the messages received and acknowledged by `now` allow.
    pub(super) fn progress_ranks(&mut self, now: Time) {
        if self.ranks.is_empty() {
            return;
        }
        let receivers = &self.receivers;
        let received = |id: u32| {
            receivers
                .binary_search_by_key(&id, |(i, ..)| *i)
                .ok()
                .and_then(|i| receivers[i].2.as_ref())
                .map_or(0, |s| s.responder.stats.messages)
        };
        let mut posted = false;
        for r in &mut self.ranks {
            posted |= r.progress(now, &mut self.flows, received);
        }
        if posted {
            self.tx.touch();
        }
    }
}
