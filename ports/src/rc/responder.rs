//! The receiving end of an RC queue pair: the expected PSN, ACKs and NAKs.

use super::{unwrap_psn, RcConfig, Recovery};
use lossless_pipeline::wire::rocev2::PSN_MASK;
use std::collections::{BTreeMap, BTreeSet};

/// What the responder answers a packet with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reply {
    /// ACK of every PSN up to this one (24 bits), with the messages completed so far.
    Ack { psn: u32, msn: u32 },
    /// NAK "PSN sequence error": this PSN is the one expected.
    Nak { psn: u32, msn: u32 },
}

/// What one packet did at the responder.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Delivery {
    /// Payload bytes delivered in order (this packet and any it unblocked).
    pub bytes: u64,
    /// Messages completed.
    pub messages: u64,
    /// The answer to send, if any.
    pub reply: Option<Reply>,
}

/// What the responder counted.
#[derive(Clone, Copy, Debug, Default)]
pub struct ResponderStats {
    /// Payload bytes delivered in order, once each.
    pub delivered_bytes: u64,
    /// Packets delivered in order.
    pub delivered_packets: u64,
    /// Messages delivered.
    pub messages: u64,
    /// NAKs sent.
    pub naks_sent: u64,
    /// ACKs sent.
    pub acks_sent: u64,
    /// Packets that arrived a second time (dropped, acknowledged).
    pub duplicates: u64,
    /// Packets that arrived ahead of a hole (go-back-N: dropped; selective: kept).
    pub out_of_order: u64,
    /// Trimmed packets (their payload cut on the way), each answered as lost.
    pub trimmed: u64,
}

/// The receiving end of an RC queue pair.
#[derive(Clone, Debug)]
pub struct Responder {
    cfg: RcConfig,
    expected: u64,
    /// A NAK was sent for the hole at `expected`.
    nak_sent: bool,
    since_ack: u32,
    /// Selective: packets kept beyond the hole: PSN → (payload, last of its message).
    kept: BTreeMap<u64, (u32, bool)>,
    /// PSNs past the expected one that arrived trimmed: known lost, NAKed when the
    /// responder reaches them. A trimmed copy leaves the switch from the trim queue and
    /// may overtake whole packets still queued before it, so it says nothing about them.
    trimmed_ahead: BTreeSet<u64>,
    /// PSNs past the expected one heard of (whole or trimmed): a later copy of one of
    /// them is a re-send.
    heard_ahead: BTreeSet<u64>,
    /// Counters.
    pub stats: ResponderStats,
}

impl Responder {
    /// A responder expecting `start_psn` first.
    pub fn new(cfg: RcConfig, start_psn: u32) -> Responder {
        Responder {
            cfg,
            expected: start_psn as u64,
            nak_sent: false,
            since_ack: 0,
            kept: BTreeMap::new(),
            trimmed_ahead: BTreeSet::new(),
            heard_ahead: BTreeSet::new(),
            stats: ResponderStats::default(),
        }
    }

    fn msn(&self) -> u32 {
        (self.stats.messages & PSN_MASK as u64) as u32
    }

    fn ack(&mut self) -> Reply {
        self.since_ack = 0;
        self.stats.acks_sent += 1;
        Reply::Ack {
            psn: (self.expected.wrapping_sub(1) & PSN_MASK as u64) as u32,
            msn: self.msn(),
        }
    }

    fn nak(&mut self) -> Reply {
        self.nak_sent = true;
        if self.cfg.recovery == Recovery::GoBackN {
            // The sender re-sends everything from here on: what was trimmed before is
            // coming again.
            self.trimmed_ahead.clear();
        }
        self.stats.naks_sent += 1;
        Reply::Nak {
            psn: (self.expected & PSN_MASK as u64) as u32,
            msn: self.msn(),
        }
    }

    fn deliver(&mut self, payload: u32, last: bool, d: &mut Delivery) {
        self.expected += 1;
        self.since_ack += 1;
        self.stats.delivered_packets += 1;
        self.stats.delivered_bytes += payload as u64;
        d.bytes += payload as u64;
        if last {
            self.stats.messages += 1;
            d.messages += 1;
        }
    }

    /// A trimmed data packet with PSN `psn`: its payload was cut on the way, so it is
    /// lost. If it is the PSN the responder waits for (the first it still misses), the
    /// responder NAKs it at once, every time a copy of it arrives trimmed. A later PSN is
    /// remembered and NAKed as soon as the packets before it have arrived: a NAK
    /// acknowledges everything before the PSN it carries, so it can never name a later
    /// one, and the packets before may still be queued behind the trimmed copy (NAKing
    /// them would make a go-back-N sender re-send what was never lost). Under go-back-N, the
    /// first copy heard of a later PSN, arriving trimmed while the NAK of the hole is
    /// outstanding, needs no NAK of its own: it is the original, and the sender re-sends
    /// everything from the hole, it included. A later copy of a PSN already heard of is
    /// that re-send, lost again: it is NAKed when reached. A trimmed copy of a packet
    /// already delivered is a duplicate.
    pub fn on_trimmed(&mut self, psn: u32) -> Option<Reply> {
        let p = unwrap_psn(self.expected, psn);
        self.stats.trimmed += 1;
        if p < self.expected {
            self.stats.duplicates += 1;
            return Some(self.ack());
        }
        if p > self.expected {
            let first = self.heard_ahead.insert(p);
            let resend_coming = first && self.nak_sent && self.cfg.recovery == Recovery::GoBackN;
            if !resend_coming {
                self.trimmed_ahead.insert(p);
            }
            return None;
        }
        Some(self.nak())
    }

    /// A data packet with PSN `psn` (24 bits), `payload` bytes, `last` of its message.
    pub fn on_packet(&mut self, psn: u32, payload: u32, last: bool) -> Delivery {
        let p = unwrap_psn(self.expected, psn);
        let mut d = Delivery::default();
        if p < self.expected || self.kept.contains_key(&p) {
            self.stats.duplicates += 1;
            d.reply = Some(self.ack());
            return d;
        }
        if p > self.expected {
            self.stats.out_of_order += 1;
            self.heard_ahead.insert(p);
            if self.cfg.recovery == Recovery::Selective {
                self.kept.insert(p, (payload, last));
            }
            if !self.nak_sent {
                d.reply = Some(self.nak());
            }
            return d;
        }
        self.nak_sent = false;
        self.deliver(payload, last, &mut d);
        while let Some((payload, last)) = self.kept.remove(&self.expected) {
            self.deliver(payload, last, &mut d);
        }
        self.trimmed_ahead = self.trimmed_ahead.split_off(&self.expected);
        self.heard_ahead = self.heard_ahead.split_off(&self.expected);
        d.reply = if self.trimmed_ahead.contains(&self.expected) || !self.kept.is_empty() {
            // Another hole right behind: it arrived trimmed, or the packets kept past it
            // say it is lost.
            Some(self.nak())
        } else if d.messages > 0 || self.since_ack >= self.cfg.ack_every {
            Some(self.ack())
        } else {
            None
        };
        d
    }
}
