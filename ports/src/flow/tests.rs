//! Sender and receiver unit tests.

use super::*;
use lossless_pipeline::wire::rocev2::OPCODE_SEND_ONLY;

fn spec(pattern: Pattern, limit: Limit) -> FlowSpec {
    FlowSpec {
        name: "f".into(),
        id: 0,
        headers: FrameSpec {
            src_mac: [2, 0, 0, 0, 0, 1],
            dst_mac: [2, 0, 0, 0, 0, 2],
            vlan: None,
            src_ip: [198, 18, 0, 1],
            dst_ip: [198, 18, 0, 2],
            ipv6: false,
            dscp: 3,
            ecn: 2,
            src_port: 1,
            dst_port: 2,
            bth: Some((OPCODE_SEND_ONLY, 1, 0)),
            len: 1518,
        },
        priority: 3,
        pattern,
        limit,
        start: Time::ZERO,
        stop: None,
        transport: Transport::OpenLoop,
    }
}

#[test]
fn cbr_skips_missed_slots_without_catching_up() {
    let mut f = FlowTx::new(spec(
        Pattern::Cbr {
            rate: Rate::gbps(10),
        },
        Limit::Unbounded,
    ))
    .unwrap();
    let iv = Rate::gbps(10).wire_time(1518);
    assert_eq!(f.ready_at(Time::ZERO), Some(Time::ZERO));
    f.take(Time::ZERO, Vec::new());
    assert_eq!(f.ready_at(Time::ZERO), Some(iv));
    // Paused for 10 slots: the flow sends once, then resumes the grid.
    let late = Time(iv.as_ps() * 11 + 5);
    f.take(late, Vec::new());
    assert_eq!(f.skipped_slots, 10);
    assert_eq!(f.ready_at(late), Some(Time(iv.as_ps() * 12)));
}

#[test]
fn byte_limit_shortens_the_last_frame_and_psn_increments() {
    let mut f = FlowTx::new(spec(Pattern::Greedy, Limit::Bytes(3000))).unwrap();
    let a = f.take(Time::ZERO, Vec::new());
    let b = f.take(Time::ZERO, Vec::new());
    assert_eq!((a.len, b.len), (1518, 1482));
    assert!(f.finished(Time::ZERO));
    let p = lossless_pipeline::parser::parse(&b.data, b.len).unwrap();
    assert_eq!(p.bth.unwrap().psn, 1);
}

#[test]
fn bits_count_over_their_wire_time() {
    let speed = Rate::gbps(100);
    let wire = speed.wire_time(1518); // 123.04 ns
    let mut rx = FlowRx::default();
    rx.track_wire_time(wire);
    let mut f = FlowTx::new(spec(Pattern::Greedy, Limit::Unbounded)).unwrap();
    // Back to back: frame k's last bit at (k + 1) wire times.
    for k in 1..=4u64 {
        let pkt = f.take(Time::ZERO, Vec::new());
        rx.record(
            &pkt,
            Time(wire.as_ps() * k),
            speed.wire_time(pkt.len as u64),
        );
    }
    let bits = 1518.0 * 8.0;
    let at = |x: f64| rx.bits_by(Time((x * wire.as_ps() as f64) as u64));
    // Within the horizon: 3.5 frames by 3.5 wire times; never more than the link.
    assert!((at(3.5) - 3.5 * bits).abs() < 1e-6);
    assert!((at(4.0) - 4.0 * bits).abs() < 1e-6);
    // Any interval carries at most its length at line rate of frame bits.
    let (a, b) = (at(3.2), at(3.9));
    assert!(b - a <= 0.7 * bits + 1e-6, "{}", b - a);
}

#[test]
fn onoff_counts_only_the_slots_of_its_on_periods() {
    // 10 µs on, 30 µs off at a rate of one slot per 1 µs (so 10 slots per on period).
    let rate = Rate(((1518 + 20) * 8) as u64 * 1_000_000);
    let mut f = FlowTx::new(spec(
        Pattern::OnOff {
            on: Time::from_us(10),
            off: Time::from_us(30),
            rate: Some(rate),
        },
        Limit::Unbounded,
    ))
    .unwrap();
    assert_eq!(f.slot_interval(rate), Time::from_us(1));
    // Every slot of the first on period used, then the next frame at the next on start.
    for k in 0..10 {
        f.take(Time::from_us(k), Vec::new());
    }
    let next = f.ready_at(Time::from_us(10)).unwrap();
    assert_eq!(next, Time::from_us(40));
    f.take(next, Vec::new());
    assert_eq!(f.skipped_slots, 0, "off-period slots are not missed slots");
    // Held from 41 µs to 45.5 µs (a pause): slots 41–44 are missed, 45 is late.
    f.take(Time(45_500_000), Vec::new());
    assert_eq!(f.skipped_slots, 4);
}

#[test]
fn onoff_waits_for_the_next_on_period() {
    let f = FlowTx::new(spec(
        Pattern::OnOff {
            on: Time::from_us(10),
            off: Time::from_us(30),
            rate: None,
        },
        Limit::Unbounded,
    ))
    .unwrap();
    assert_eq!(f.ready_at(Time::from_us(5)), Some(Time::from_us(5)));
    assert_eq!(f.ready_at(Time::from_us(15)), Some(Time::from_us(40)));
}
