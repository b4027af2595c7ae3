//! The sending end of an RC queue pair: messages into PSNs, and recovery.

use super::{unwrap_psn, RcConfig, Recovery};
use lossless_buffer_model::Time;
use lossless_pipeline::wire::rocev2::{
    OPCODE_SEND_FIRST, OPCODE_SEND_LAST, OPCODE_SEND_MIDDLE, OPCODE_SEND_ONLY,
};
use std::collections::{BTreeSet, VecDeque};

/// A message posted on the requester.
#[derive(Clone, Copy, Debug)]
struct Message {
    /// Its first PSN and the one after its last.
    first: u64,
    end: u64,
    /// Payload bytes.
    bytes: u64,
    /// When it was posted.
    posted: Time,
}

/// One packet of a message, as the requester builds it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PacketPlan {
    /// PSN (64-bit; the wire carries its low 24 bits).
    pub psn: u64,
    /// SEND First / Middle / Last / Only.
    pub opcode: u8,
    /// Payload bytes.
    pub payload: u32,
    /// The last packet of its message (the responder acknowledges it).
    pub last: bool,
    /// Sent before: a retransmission.
    pub retransmission: bool,
}

/// What the requester counted.
#[derive(Clone, Debug, Default)]
pub struct RequesterStats {
    /// Packets sent for the first time.
    pub new_packets: u64,
    /// Packets sent again.
    pub retransmitted_packets: u64,
    /// Payload bytes sent again.
    pub retransmitted_bytes: u64,
    /// NAKs received.
    pub naks_received: u64,
    /// Local ACK timeouts.
    pub timeouts: u64,
    /// Messages completed (every packet acknowledged).
    pub messages_completed: u64,
    /// Each completed message: (posted, completed).
    pub completions: Vec<(Time, Time)>,
    /// Payload bytes of the completed messages.
    pub completed_bytes: u64,
}

/// The sending end of an RC queue pair.
#[derive(Clone, Debug)]
pub struct Requester {
    cfg: RcConfig,
    /// Payload bytes per packet (the path MTU's).
    mtu: u32,
    /// Posted messages not yet completed, oldest first.
    messages: VecDeque<Message>,
    /// The PSN the next posted message starts at.
    posted_end: u64,
    /// Never sent before this.
    next_new: u64,
    /// The next PSN to send (below `next_new` while going back).
    send_next: u64,
    /// Oldest unacknowledged PSN.
    una: u64,
    /// Selective recovery: PSNs to send again, before new ones.
    resend: BTreeSet<u64>,
    /// The local ACK timer, when armed.
    deadline: Option<Time>,
    /// Timeouts since the last progress.
    retries: u32,
    /// When the QP went to the error state (retries exhausted).
    pub error_at: Option<Time>,
    /// Counters.
    pub stats: RequesterStats,
}

impl Requester {
    /// A requester with `mtu` payload bytes per packet whose first PSN is `start_psn`.
    pub fn new(cfg: RcConfig, mtu: u32, start_psn: u32) -> Requester {
        let start = start_psn as u64;
        Requester {
            cfg,
            mtu: mtu.max(1),
            messages: VecDeque::new(),
            posted_end: start,
            next_new: start,
            send_next: start,
            una: start,
            resend: BTreeSet::new(),
            deadline: None,
            retries: 0,
            error_at: None,
            stats: RequesterStats::default(),
        }
    }

    /// Settings.
    pub fn config(&self) -> &RcConfig {
        &self.cfg
    }

    /// Post a message of `bytes` payload bytes at `now` (at least one packet).
    pub fn post(&mut self, bytes: u64, now: Time) {
        let packets = bytes.div_ceil(self.mtu as u64).max(1);
        let first = self.posted_end;
        self.posted_end += packets;
        self.messages.push_back(Message {
            first,
            end: self.posted_end,
            bytes,
            posted: now,
        });
    }

    /// Messages posted and not completed.
    pub fn outstanding_messages(&self) -> usize {
        self.messages.len()
    }

    /// Every posted message completed (or the QP is in error)?
    pub fn idle(&self) -> bool {
        self.messages.is_empty() || self.error_at.is_some()
    }

    /// Packets sent and not acknowledged.
    pub fn in_flight(&self) -> u64 {
        self.next_new - self.una
    }

    /// The packet to send next, if any (none while everything posted is in flight, or in
    /// error).
    pub fn next_packet(&self) -> Option<PacketPlan> {
        if self.error_at.is_some() {
            return None;
        }
        let psn = match self.resend.first() {
            Some(p) => *p,
            None if self.send_next < self.posted_end => self.send_next,
            None => return None,
        };
        Some(self.plan(psn))
    }

    fn plan(&self, psn: u64) -> PacketPlan {
        let i = self.messages.partition_point(|m| m.end <= psn);
        let m = self.messages[i];
        let k = psn - m.first;
        let n = m.end - m.first;
        let opcode = match (k == 0, k + 1 == n) {
            (true, true) => OPCODE_SEND_ONLY,
            (true, false) => OPCODE_SEND_FIRST,
            (false, true) => OPCODE_SEND_LAST,
            (false, false) => OPCODE_SEND_MIDDLE,
        };
        let payload = if k + 1 == n {
            (m.bytes - k * self.mtu as u64) as u32
        } else {
            self.mtu
        };
        PacketPlan {
            psn,
            opcode,
            payload,
            last: k + 1 == n,
            retransmission: psn < self.next_new,
        }
    }

    /// The packet `next_packet` gave was sent at `now`.
    pub fn on_sent(&mut self, p: &PacketPlan, now: Time) {
        if p.retransmission {
            self.stats.retransmitted_packets += 1;
            self.stats.retransmitted_bytes += p.payload as u64;
        } else {
            self.stats.new_packets += 1;
        }
        if !self.resend.remove(&p.psn) {
            self.send_next = p.psn + 1;
        }
        self.next_new = self.next_new.max(p.psn + 1);
        if self.deadline.is_none() {
            self.deadline = Some(now + self.cfg.rto);
        }
    }

    /// An ACK for every PSN up to and including the one whose low 24 bits are `psn`.
    pub fn on_ack(&mut self, psn: u32, now: Time) {
        let acked = unwrap_psn(self.una, psn) + 1;
        self.advance(acked.min(self.next_new), now);
    }

    /// A NAK "PSN sequence error": the responder has every PSN before `psn` and not `psn`.
    pub fn on_nak(&mut self, psn: u32, now: Time) {
        self.stats.naks_received += 1;
        let p = unwrap_psn(self.una, psn).min(self.next_new);
        self.advance(p, now);
        // A NAK older than what has since been acknowledged says nothing new.
        if self.error_at.is_some() || p < self.una || p >= self.next_new {
            return;
        }
        match self.cfg.recovery {
            Recovery::GoBackN => self.send_next = self.send_next.min(p),
            Recovery::Selective => {
                self.resend.insert(p);
            }
        }
    }

    /// Everything before `acked` was received.
    fn advance(&mut self, acked: u64, now: Time) {
        if acked <= self.una {
            return;
        }
        self.una = acked;
        self.retries = 0;
        self.send_next = self.send_next.max(acked);
        self.resend = self.resend.split_off(&acked);
        while let Some(m) = self.messages.front() {
            if m.end > acked {
                break;
            }
            self.stats.messages_completed += 1;
            self.stats.completions.push((m.posted, now));
            self.stats.completed_bytes += m.bytes;
            self.messages.pop_front();
        }
        self.deadline = (self.una < self.next_new).then(|| now + self.cfg.rto);
    }

    /// When the local ACK timer fires, if armed.
    pub fn deadline(&self) -> Option<Time> {
        self.deadline.filter(|_| self.error_at.is_none())
    }

    /// The local ACK timer fired at `now` (call when `now ≥ deadline()`): re-send from the
    /// oldest unacknowledged PSN on, in both recovery modes, or go to the error state
    /// when the retries are spent.
    pub fn on_timeout(&mut self, now: Time) {
        if self.deadline().is_none_or(|d| d > now) {
            return;
        }
        self.stats.timeouts += 1;
        self.deadline = None;
        if self.retries >= self.cfg.retry_count {
            self.error_at = Some(now);
            return;
        }
        self.retries += 1;
        // Either way: a timeout says nothing about which packets arrived, so everything
        // from the oldest unacknowledged one goes again (one at a time, a tail of k lost
        // packets would cost k timeouts). The responder acknowledges what it had kept.
        self.resend.clear();
        self.send_next = self.una;
    }
}
