//! Requester and responder unit tests.

use super::*;
use lossless_pipeline::wire::rocev2::{
    OPCODE_SEND_FIRST, OPCODE_SEND_LAST, OPCODE_SEND_MIDDLE, OPCODE_SEND_ONLY,
};

fn cfg(recovery: Recovery) -> RcConfig {
    RcConfig {
        ack_every: 1,
        recovery,
        rto: Time::from_us(100),
        retry_count: 7,
    }
}

#[test]
fn psns_unwrap_across_24_bits() {
    assert_eq!(unwrap_psn(5, 7), 7);
    assert_eq!(unwrap_psn(5, 3), 3);
    assert_eq!(unwrap_psn(0xFF_FFFE, 1), 0x100_0001);
    assert_eq!(unwrap_psn(0x100_0001, 0xFF_FFFE), 0xFF_FFFE);
    assert_eq!(unwrap_psn(0, 0xFF_FFFF), 0, "no PSN below 0");
    assert_eq!(ib_timeout(20), Time(4_294_967_296_000));
    assert_eq!(ib_timeout(14), Time(67_108_864_000));
}

#[test]
fn a_message_is_split_into_first_middle_last() {
    let mut r = Requester::new(cfg(Recovery::GoBackN), 1000, 0);
    r.post(2500, Time::ZERO);
    r.post(10, Time::ZERO);
    let mut got = Vec::new();
    while let Some(p) = r.next_packet() {
        r.on_sent(&p, Time::ZERO);
        got.push((p.psn, p.opcode, p.payload, p.last));
    }
    assert_eq!(
        got,
        [
            (0, OPCODE_SEND_FIRST, 1000, false),
            (1, OPCODE_SEND_MIDDLE, 1000, false),
            (2, OPCODE_SEND_LAST, 500, true),
            (3, OPCODE_SEND_ONLY, 10, true),
        ]
    );
    r.on_ack(2, Time::from_us(1));
    assert_eq!(r.stats.messages_completed, 1);
    r.on_ack(3, Time::from_us(2));
    assert!(r.idle());
}

#[test]
fn go_back_n_resends_from_the_hole_and_the_responder_naks_once() {
    let mut r = Requester::new(cfg(Recovery::GoBackN), 100, 0xFF_FFFE);
    let mut s = Responder::new(cfg(Recovery::GoBackN), 0xFF_FFFE);
    r.post(600, Time::ZERO);
    let mut sent = Vec::new();
    while let Some(p) = r.next_packet() {
        r.on_sent(&p, Time::ZERO);
        sent.push(p);
    }
    // The second packet is lost: the third NAKs, the rest are dropped silently.
    let mut replies = Vec::new();
    for (i, p) in sent.iter().enumerate() {
        if i != 1 {
            let w = (p.psn & PSN_MASK as u64) as u32;
            replies.push(s.on_packet(w, p.payload, p.last).reply);
        }
    }
    assert_eq!(s.stats.naks_sent, 1);
    assert_eq!(
        replies[1],
        Some(Reply::Nak {
            psn: 0xFF_FFFF,
            msn: 0
        }),
        "the hole's PSN, across the wrap"
    );
    r.on_nak(0xFF_FFFF, Time::from_us(1));
    let mut again = Vec::new();
    while let Some(p) = r.next_packet() {
        r.on_sent(&p, Time::from_us(1));
        again.push(p.psn);
        let w = (p.psn & PSN_MASK as u64) as u32;
        if let Some(Reply::Ack { psn, .. }) = s.on_packet(w, p.payload, p.last).reply {
            r.on_ack(psn, Time::from_us(2));
        }
    }
    assert_eq!(again, (0xFF_FFFF..0x100_0004).collect::<Vec<u64>>());
    assert_eq!(r.stats.retransmitted_packets, 5);
    assert!(r.idle());
    assert_eq!(s.stats.delivered_bytes, 600);
}

#[test]
fn selective_resends_only_the_hole() {
    let mut r = Requester::new(cfg(Recovery::Selective), 100, 0);
    let mut s = Responder::new(cfg(Recovery::Selective), 0);
    r.post(600, Time::ZERO);
    let mut sent = Vec::new();
    while let Some(p) = r.next_packet() {
        r.on_sent(&p, Time::ZERO);
        sent.push(p);
    }
    let mut nak = None;
    for p in sent.iter().filter(|p| p.psn != 2) {
        if let Some(Reply::Nak { psn, .. }) = s.on_packet(p.psn as u32, p.payload, p.last).reply {
            nak = Some(psn);
        }
    }
    r.on_nak(nak.unwrap(), Time::from_us(1));
    let p = r.next_packet().unwrap();
    assert_eq!((p.psn, p.retransmission), (2, true));
    r.on_sent(&p, Time::from_us(1));
    assert!(r.next_packet().is_none());
    let d = s.on_packet(2, p.payload, p.last);
    assert_eq!((d.bytes, d.messages), (400, 1));
    assert_eq!(d.reply, Some(Reply::Ack { psn: 5, msn: 1 }));
    r.on_ack(5, Time::from_us(2));
    assert!(r.idle());
    assert_eq!(r.stats.retransmitted_packets, 1);
}

/// A trimmed tail: the responder heard of PSNs 4 and 5 (trimmed), NAKed 4; when 4's copy
/// fills the hole it NAKs 5 at once, instead of leaving the sender to its timeout.
#[test]
fn selective_naks_the_next_trimmed_psn_once_the_hole_fills() {
    let mut r = Requester::new(cfg(Recovery::Selective), 100, 0);
    let mut s = Responder::new(cfg(Recovery::Selective), 0);
    r.post(600, Time::ZERO);
    while let Some(p) = r.next_packet() {
        r.on_sent(&p, Time::ZERO);
        if p.psn < 4 {
            s.on_packet(p.psn as u32, p.payload, p.last);
        }
    }
    assert_eq!(s.on_trimmed(4), Some(Reply::Nak { psn: 4, msn: 0 }));
    assert_eq!(s.on_trimmed(5), None, "one NAK per hole");
    r.on_nak(4, Time::from_us(1));
    let p = r.next_packet().unwrap();
    assert_eq!(p.psn, 4);
    r.on_sent(&p, Time::from_us(1));
    let d = s.on_packet(4, p.payload, p.last);
    assert_eq!(d.reply, Some(Reply::Nak { psn: 5, msn: 0 }));
    r.on_nak(5, Time::from_us(2));
    let p = r.next_packet().unwrap();
    assert_eq!((p.psn, p.last), (5, true));
    r.on_sent(&p, Time::from_us(2));
    let d = s.on_packet(5, p.payload, p.last);
    assert_eq!(d.reply, Some(Reply::Ack { psn: 5, msn: 1 }));
    r.on_ack(5, Time::from_us(3));
    assert!(r.idle());
    assert_eq!(r.stats.timeouts, 0);
}

/// A trimmed copy overtakes whole packets queued before it (it leaves from the trim
/// queue): the responder does not NAK them, and NAKs the trimmed PSN once they are in.
#[test]
fn a_trimmed_copy_that_overtakes_is_naked_when_reached() {
    for recovery in [Recovery::GoBackN, Recovery::Selective] {
        let mut s = Responder::new(cfg(recovery), 0);
        s.on_packet(0, 100, false);
        assert_eq!(s.on_trimmed(3), None, "1 and 2 may still be on their way");
        assert!(matches!(
            s.on_packet(1, 100, false).reply,
            Some(Reply::Ack { psn: 1, .. })
        ));
        assert_eq!(
            s.on_packet(2, 100, false).reply,
            Some(Reply::Nak { psn: 3, msn: 0 })
        );
        assert_eq!(s.stats.naks_sent, 1);
    }
}

#[test]
fn a_lost_last_packet_waits_for_the_timeout_and_retries_run_out() {
    let mut r = Requester::new(cfg(Recovery::GoBackN), 100, 0);
    r.post(100, Time::ZERO);
    let p = r.next_packet().unwrap();
    r.on_sent(&p, Time::ZERO);
    assert_eq!(r.deadline(), Some(Time::from_us(100)));
    assert!(
        r.next_packet().is_none(),
        "nothing to send until the timer fires"
    );
    for k in 1..=7 {
        let t = r.deadline().unwrap();
        r.on_timeout(t);
        let p = r.next_packet().unwrap();
        assert!(p.retransmission);
        r.on_sent(&p, t);
        assert_eq!(r.stats.timeouts, k);
    }
    let t = r.deadline().unwrap();
    r.on_timeout(t);
    assert_eq!(r.error_at, Some(Time::from_us(800)));
    assert!(r.next_packet().is_none() && r.idle());
}

#[test]
fn acks_are_coalesced_but_every_message_end_is_acknowledged() {
    let mut c = cfg(Recovery::GoBackN);
    c.ack_every = 4;
    let mut s = Responder::new(c, 0);
    let replies: Vec<bool> = (0..10u32)
        .map(|i| s.on_packet(i, 100, i == 5 || i == 9).reply.is_some())
        .collect();
    // ACKs after packets 3 (4th), 5 (message end), 9 (4th since, and an end).
    assert_eq!(
        replies,
        [false, false, false, true, false, true, false, false, false, true]
    );
    // A duplicate is acknowledged at once.
    assert_eq!(
        s.on_packet(2, 100, false).reply,
        Some(Reply::Ack { psn: 9, msn: 2 })
    );
}

/// A message of 4 packets (PSNs 0–3) whose first copies all arrive trimmed, before the NAK
/// of PSN 0 reaches the requester; the re-sent copies arrive whole. Each reply reaches the
/// requester before the responder sees anything the requester sent after it, and the
/// requester sends what it may after each reply (the wire is idle).
///
/// Go-back-N: the NAK of 0 brings 0–3 again, so the trims of 1–3 need no NAK of their own:
/// 1 NAK, 4 re-sent packets, 0 duplicates. Selective repeat re-sends only the PSN a NAK
/// names, so each trimmed PSN needs its own NAK, sent when the one before it fills: 4 NAKs,
/// 4 re-sent packets, 0 duplicates.
#[test]
fn trims_behind_an_outstanding_nak_are_naked_only_under_selective_repeat() {
    for (recovery, naks) in [(Recovery::GoBackN, 1), (Recovery::Selective, 4)] {
        let mut r = Requester::new(cfg(recovery), 100, 0);
        let mut s = Responder::new(cfg(recovery), 0);
        r.post(400, Time::ZERO);
        let mut replies = std::collections::VecDeque::new();
        while let Some(p) = r.next_packet() {
            r.on_sent(&p, Time::ZERO);
            replies.extend(s.on_trimmed(p.psn as u32));
        }
        let mut t = 1;
        while let Some(reply) = replies.pop_front() {
            let now = Time::from_us(t);
            t += 1;
            match reply {
                Reply::Ack { psn, .. } => r.on_ack(psn, now),
                Reply::Nak { psn, .. } => r.on_nak(psn, now),
            }
            while let Some(p) = r.next_packet() {
                r.on_sent(&p, now);
                replies.extend(s.on_packet(p.psn as u32, p.payload, p.last).reply);
            }
        }
        assert!(r.idle(), "{recovery:?}");
        assert_eq!(s.stats.delivered_packets, 4, "{recovery:?}");
        assert_eq!(
            (
                s.stats.naks_sent,
                r.stats.retransmitted_packets,
                s.stats.duplicates
            ),
            (naks, 4, 0),
            "{recovery:?}: NAKs, re-sent packets, duplicates"
        );
    }
}
