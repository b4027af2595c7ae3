//! The receiving end of an RC queue pair: the expected PSN, ACKs and NAKs.

use super::{unwrap_psn, RcConfig, Recovery};
use lossless_pipeline::wire::rocev2::PSN_MASK;
use std::collections::BTreeMap;

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
    /// lost, and the responder says so at once instead of waiting for a gap to show. The
    /// NAK names the first PSN still missing — never a later one, as a NAK acknowledges
    /// everything before the PSN it carries — and goes out once per hole, as for a gap,
    /// and again whenever the missing packet itself arrives trimmed.
    /// A trimmed copy of a packet already delivered is a duplicate.
    pub fn on_trimmed(&mut self, psn: u32) -> Option<Reply> {
        let p = unwrap_psn(self.expected, psn);
        self.stats.trimmed += 1;
        if p < self.expected {
            self.stats.duplicates += 1;
            return Some(self.ack());
        }
        // The packet the responder waits for, trimmed (again, if it was the re-sent one):
        // the sender must hear it. A later one is covered by a NAK already sent.
        if self.nak_sent && p > self.expected {
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
        d.reply = if !self.kept.is_empty() {
            // Another hole right behind: the packets kept past it say it is lost.
            Some(self.nak())
        } else if d.messages > 0 || self.since_ack >= self.cfg.ack_every {
            Some(self.ack())
        } else {
            None
        };
        d
    }
}
