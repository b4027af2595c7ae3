//! Design §4, rule by rule, through `Switch` with hand-picked timestamps.

use lossless_buffer_model::mmu::{Headroom, PoolKind, PoolSpec, ProfileSpec, Threshold};
use lossless_buffer_model::wred::{ColorPolicy, Curve, WredProfile};
use lossless_buffer_model::{Bytes, Rate, Time};
use lossless_pipeline::config::{Forwarding, SwitchConfig};
use lossless_pipeline::drop_reason::DropReason;
use lossless_pipeline::link::ControlFrame;
use lossless_pipeline::parser::parse;
use lossless_pipeline::presets;
use lossless_pipeline::wire::build::FrameSpec;
use lossless_pipeline::wire::edit::ipv4_checksum;
use lossless_pipeline::wire::pfc::emit_pfc;
use lossless_pipeline::{Packet, Switch};

fn host_mac(i: usize) -> [u8; 6] {
    [0x02, 0, 0, 0, 0, 0x10 + i as u8]
}

/// A preset switch where host i sits behind port i (static FDB).
fn config(n: usize, speed: Rate) -> SwitchConfig {
    let mut cfg = presets::basic(n, speed);
    cfg.forwarding = Forwarding::L2 {
        static_fdb: (0..n).map(|i| (0, host_mac(i), i as u16)).collect(),
        fdb_size: 1024,
        fdb_aging: Time::ZERO,
    };
    cfg
}

fn frame(src: usize, dst: usize, dscp: u8, ecn: u8, len: u32) -> Packet {
    let spec = FrameSpec {
        src_mac: host_mac(src),
        dst_mac: host_mac(dst),
        vlan: None,
        src_ip: [198, 18, 0, src as u8 + 1],
        dst_ip: [198, 18, 0, dst as u8 + 1],
        ipv6: false,
        dscp,
        ecn,
        src_port: 10_000,
        dst_port: 20_000,
        bth: None,
        len,
    };
    let mut data = Vec::new();
    spec.write(&mut data).unwrap();
    Packet::new(data, len)
}

fn pfc(enable: u8, quanta: [u16; 8]) -> Packet {
    let mut data = Vec::new();
    emit_pfc(&mut data, host_mac(9), enable, &quanta);
    Packet::new(data, 64)
}

fn quanta(p: usize, q: u16) -> [u16; 8] {
    let mut a = [0; 8];
    a[p] = q;
    a
}

/// Transmit everything port `port` has ready from `t`, returning (start time, packet).
fn drain(sw: &mut Switch, port: usize, mut t: Time, max: usize) -> Vec<(Time, Packet)> {
    let mut out = Vec::new();
    while out.len() < max {
        let Some(next) = sw.next_transmit(port) else {
            break;
        };
        t = t.max(next);
        match sw.poll_transmit(port, t) {
            Some(p) => out.push((t, p)),
            None => panic!("next_transmit promised a frame at {t}"),
        }
    }
    out
}

#[test]
fn pfc_1000_quanta_pauses_exactly_5_12_us_at_100g_and_20_48_us_at_25g() {
    for (speed, pause_ps) in [
        (Rate::gbps(100), 5_120_000u64),
        (Rate::gbps(25), 20_480_000),
    ] {
        let mut sw = Switch::new(config(2, speed));
        let t0 = Time::from_us(10);
        sw.receive(0, pfc(1 << 3, quanta(3, 1000)), t0);
        // Priority-3 and priority-1 traffic from port 1 toward port 0.
        sw.receive(1, frame(1, 0, 3, 0, 1518), t0);
        sw.receive(1, frame(1, 0, 0, 0, 1518), t0);
        let ready = t0 + Time::from_ns(500);
        // The other priority keeps sending.
        let first = sw
            .poll_transmit(0, ready)
            .expect("priority 1 is not paused");
        assert_eq!(first.meta.tc, 1);
        let end = t0 + Time(pause_ps);
        assert_eq!(sw.next_transmit(0), Some(end), "{speed}");
        assert!(sw.poll_transmit(0, end - Time(1)).is_none());
        let second = sw.poll_transmit(0, end).expect("pause over");
        assert_eq!(second.meta.tc, 3);
        assert_eq!(sw.paused_time(0, 3, Time::from_ms(1)), Time(pause_ps));
        let c = &sw.ports()[0].link.tx.counters.pfc;
        assert_eq!((c.rx_xoff[3], c.rx_xon[3]), (1, 0));
    }
}

#[test]
fn a_second_pfc_frame_reloads_the_timer_rather_than_adding() {
    let mut sw = Switch::new(config(2, Rate::gbps(100)));
    sw.receive(0, pfc(1 << 3, quanta(3, 1000)), Time::ZERO);
    sw.receive(0, pfc(1 << 3, quanta(3, 1000)), Time::from_us(2));
    sw.receive(1, frame(1, 0, 3, 0, 1518), Time::from_us(3));
    assert_eq!(sw.next_transmit(0), Some(Time(7_120_000)));
    assert_eq!(sw.ports()[0].link.tx.counters.pfc.rx_xoff[3], 2);
}

#[test]
fn time_zero_resumes_at_once() {
    let mut sw = Switch::new(config(2, Rate::gbps(100)));
    sw.receive(0, pfc(1 << 3, quanta(3, 0xFFFF)), Time::ZERO);
    sw.receive(1, frame(1, 0, 3, 0, 1518), Time::ZERO);
    assert!(sw.poll_transmit(0, Time::from_us(1)).is_none());
    sw.receive(0, pfc(1 << 3, quanta(3, 0)), Time::from_us(2));
    assert!(sw.poll_transmit(0, Time::from_us(2)).is_some());
    let c = &sw.ports()[0].link.tx.counters.pfc;
    assert_eq!((c.rx_xoff[3], c.rx_xon[3]), (1, 1));
    assert_eq!(sw.paused_time(0, 3, Time::from_ms(1)), Time::from_us(2));
}

#[test]
fn a_frame_already_on_the_wire_completes() {
    let speed = Rate::gbps(100);
    let mut sw = Switch::new(config(2, speed));
    sw.receive(1, frame(1, 0, 3, 0, 1518), Time::ZERO);
    sw.receive(1, frame(1, 0, 3, 0, 1518), Time::ZERO);
    let start = Time::from_ns(500);
    assert!(sw.poll_transmit(0, start).is_some());
    // Pause arrives mid-frame: the frame on the wire keeps its end time.
    sw.receive(0, pfc(1 << 3, quanta(3, 1000)), start + Time::from_ns(50));
    assert_eq!(
        sw.ports()[0].link.tx.busy_until,
        start + speed.wire_time(1518)
    );
    assert_eq!(sw.ports()[0].link.tx.counters.tx_packets, 1);
    // The next frame waits for the pause.
    assert_eq!(
        sw.next_transmit(0),
        Some(start + Time::from_ns(50) + Time::from_ns(5120))
    );
}

#[test]
fn pipeline_latency_holds_frames_until_ready() {
    let mut sw = Switch::new(config(2, Rate::gbps(100)));
    sw.receive(1, frame(1, 0, 0, 0, 64), Time::from_ns(100));
    assert_eq!(sw.next_transmit(0), Some(Time::from_ns(600)));
    assert!(sw.poll_transmit(0, Time::from_ns(600) - Time(1)).is_none());
    assert!(sw.poll_transmit(0, Time::from_ns(600)).is_some());
}

#[test]
fn transmitter_is_busy_for_the_wire_time() {
    let speed = Rate::gbps(100);
    let mut sw = Switch::new(config(2, speed));
    for _ in 0..3 {
        sw.receive(1, frame(1, 0, 0, 0, 1518), Time::ZERO);
    }
    let starts: Vec<Time> = drain(&mut sw, 0, Time::ZERO, 10)
        .into_iter()
        .map(|(t, _)| t)
        .collect();
    let w = speed.wire_time(1518);
    let t0 = Time::from_ns(500);
    assert_eq!(starts, vec![t0, t0 + w, t0 + w + w]);
}

/// α = 1, one lossless PG, 32,768-cell pool, 16 reserved cells, 200 headroom cells.
fn acceptance_config() -> SwitchConfig {
    let mut cfg = config(2, Rate::gbps(100));
    cfg.pools = vec![
        PoolSpec {
            name: "ingress_lossless_pool".into(),
            kind: PoolKind::Ingress,
            size: Bytes(32_768 * 256),
            xoff: Bytes(0),
        },
        PoolSpec {
            name: "egress_pool".into(),
            kind: PoolKind::Egress,
            size: Bytes(1 << 30),
            xoff: Bytes(0),
        },
    ];
    let pg = ProfileSpec {
        pool: 0,
        reserved: Bytes(16 * 256),
        threshold: Threshold::Dynamic(0),
        headroom: Some(Headroom {
            xoff: Bytes(200 * 256),
            xon: Bytes(0),
            xon_offset: Bytes(2 * 256),
        }),
    };
    let q = ProfileSpec {
        pool: 1,
        reserved: Bytes(0),
        threshold: Threshold::Static(Bytes(1 << 30)),
        headroom: None,
    };
    cfg.pg_profiles = vec![pg; 16];
    cfg.queue_profiles = vec![q; 16];
    cfg
}

#[test]
fn xoff_with_packet_16401_headroom_to_16600_first_drop_16601_then_xon_after_hysteresis() {
    let mut sw = Switch::new(acceptance_config());
    sw.set_tx_enabled(0, false, Time::ZERO);
    let mut xoff_at = None;
    let mut first_drop = None;
    for n in 1..=17_000u64 {
        sw.receive(1, frame(1, 0, 3, 0, 64), Time(n));
        if xoff_at.is_none() && sw.ports()[1].xoff_mask() != 0 {
            xoff_at = Some(n);
            // The PFC frame leaves port 1 ahead of everything, at once.
            let f = sw.poll_transmit(1, Time(n)).expect("PFC frame pending");
            assert_eq!(f.len, 64);
            match parse(&f.data, f.len).unwrap().control {
                Some(ControlFrame::Pfc { enable, quanta }) => {
                    assert_eq!(enable, 1 << 3);
                    assert_eq!(quanta[3], 0xFFFF);
                }
                other => panic!("not a PFC frame: {other:?}"),
            }
        }
        if first_drop.is_none() && sw.lossless_drops() > 0 {
            first_drop = Some(n);
        }
    }
    assert_eq!(xoff_at, Some(16_401));
    assert_eq!(first_drop, Some(16_601));
    assert_eq!(sw.lossless_drops(), 400);
    assert_eq!(sw.drops().get(DropReason::HeadroomFull), 400);
    let pg = &sw.mmu().pg(1, 3);
    assert_eq!(
        (pg.reserved_used, pg.shared_used, pg.headroom_used),
        (16, 16_384, 200)
    );
    assert_eq!(sw.ports()[1].link.tx.counters.pfc.tx_xoff[3], 1);

    // Drain: headroom empties first (200 frames), then XON once shared use is below
    // limit − xon_offset: 2·x < 32768 − 2 ⇔ x ≤ 16382, i.e. after frame 202.
    sw.set_tx_enabled(0, true, Time::from_us(1));
    let mut t = Time::from_us(100);
    let mut xon_after = None;
    for n in 1..=300 {
        let next = sw.next_transmit(0).unwrap();
        t = t.max(next);
        sw.poll_transmit(0, t).unwrap();
        if sw.ports()[1].xoff_mask() == 0 {
            xon_after = Some(n);
            break;
        }
    }
    assert_eq!(xon_after, Some(202));
    let f = sw.poll_transmit(1, t).expect("XON frame");
    assert_eq!(
        parse(&f.data, f.len).unwrap().control,
        Some(ControlFrame::Pfc {
            enable: 1 << 3,
            quanta: [0; 8]
        })
    );
    assert_eq!(sw.ports()[1].link.tx.counters.pfc.tx_xon[3], 1);
}

#[test]
fn xoff_is_refreshed_every_half_pause_time_while_congested() {
    let speed = Rate::gbps(100);
    let mut sw = Switch::new(acceptance_config());
    sw.set_tx_enabled(0, false, Time::ZERO);
    for n in 1..=16_401u64 {
        sw.receive(1, frame(1, 0, 3, 0, 64), Time(n));
    }
    let t = Time(16_401);
    assert!(sw.poll_transmit(1, t).is_some());
    let half = Time(speed.pause_time(0xFFFF).0 / 2);
    assert_eq!(sw.poll_timeout(), Some(t + half));
    sw.handle_timeout(t + half);
    assert!(sw.poll_transmit(1, t + half).is_some());
    assert_eq!(sw.ports()[1].link.tx.counters.pfc.tx_xoff[3], 2);
}

#[test]
fn pfc_edge_behaviours() {
    let mut sw = Switch::new(config(2, Rate::gbps(100)));
    let t = Time::from_us(1);
    // Wrong destination: counted, not acted on.
    let mut bad_da = pfc(1 << 3, quanta(3, 1000));
    bad_da.data[5] = 0x02;
    sw.receive(0, bad_da, t);
    // Under 64 bytes: dropped before anything else.
    let mut short = pfc(1 << 3, quanta(3, 1000));
    short.data.truncate(59);
    short.len = 63;
    sw.receive(0, short, t);
    // Only priority 1 (PFC not enabled on it).
    sw.receive(0, pfc(1 << 1, quanta(1, 1000)), t);
    // 802.3x PAUSE.
    let mut pause = pfc(0, [0; 8]);
    pause.data[14..18].copy_from_slice(&[0x00, 0x01, 0xFF, 0xFF]);
    sw.receive(0, pause, t);
    // Unknown opcode.
    let mut unknown = pfc(1 << 3, quanta(3, 1000));
    unknown.data[15] = 0x07;
    sw.receive(0, unknown, t);
    assert_eq!(
        sw.ports()[0].link.paused_mask(t),
        0,
        "none of them paused anything"
    );
    let d = sw.drops();
    assert_eq!(d.get(DropReason::PfcBadDestination), 1);
    assert_eq!(d.get(DropReason::Runt), 1);
    assert_eq!(d.get(DropReason::PfcNotEnabled), 1);
    assert_eq!(d.get(DropReason::Pause8023xIgnored), 1);
    assert_eq!(d.get(DropReason::MacControlUnknownOpcode), 1);
    // Reserved high byte of the vector ignored; priorities 1 and 3 set: only 3 acts.
    let mut f = pfc((1 << 3) | (1 << 1), [0, 1000, 0, 1000, 0, 0, 0, 0]);
    f.data[16] = 0xFF;
    sw.receive(0, f, t);
    assert_eq!(sw.ports()[0].link.paused_mask(t), 1 << 3);
    let c = &sw.ports()[0].link.tx.counters.pfc;
    assert_eq!((c.rx_xoff[1], c.rx_xoff[3]), (0, 1));
    // MAC Control frames are never forwarded.
    assert_eq!(sw.next_transmit(1), None);
    assert_eq!(sw.ports()[1].link.tx.counters.tx_packets, 0);
}

#[test]
fn runts_and_giants_are_dropped_before_buffer_accounting() {
    let mut sw = Switch::new(config(2, Rate::gbps(100)));
    sw.set_tx_enabled(0, false, Time::ZERO);
    let mut runt = frame(1, 0, 3, 0, 64);
    runt.len = 63;
    sw.receive(1, runt, Time::ZERO);
    sw.receive(1, frame(1, 0, 3, 0, 9217), Time::ZERO);
    sw.receive(1, frame(1, 0, 3, 0, 9216), Time::ZERO);
    assert_eq!(sw.drops().get(DropReason::Runt), 1);
    assert_eq!(sw.drops().get(DropReason::Giant), 1);
    assert_eq!(sw.mmu().pg(1, 3).used(), 9216u64.div_ceil(256));
}

#[test]
fn wred_marks_ect_with_valid_checksum_and_never_drops_lossless() {
    let mut cfg = config(2, Rate::gbps(100));
    let mut w = WredProfile::default();
    w.colors[0] = ColorPolicy {
        curve: Some(Curve {
            min: Bytes(0),
            max: Bytes(1),
            max_probability: 100,
        }),
        wred: true,
        ecn: true,
    };
    cfg.qos.queue_wred[3] = Some(w);
    cfg.qos.queue_wred[1] = Some(w);
    let mut sw = Switch::new(cfg);
    sw.set_tx_enabled(0, false, Time::ZERO);
    for _ in 0..5 {
        sw.receive(1, frame(1, 0, 3, 2, 1518), Time::ZERO); // lossless, ECT(0)
        sw.receive(1, frame(1, 0, 3, 0, 1518), Time::ZERO); // lossless, not-ECT
        sw.receive(1, frame(1, 0, 0, 0, 1518), Time::ZERO); // lossy, not-ECT
    }
    // The first packet of each queue finds it empty (depth 0): no hit.
    let q = &sw.ports()[0].queue_counters;
    assert_eq!(q[3].ecn_marked, 4);
    assert_eq!(q[3].drop_packets, 0, "WRED never drops lossless traffic");
    assert_eq!(q[1].wred_drops, 4);
    assert_eq!(sw.lossless_drops(), 0);
    sw.set_tx_enabled(0, true, Time::ZERO);
    let out = drain(&mut sw, 0, Time::ZERO, 100);
    let marked: Vec<_> = out.iter().filter(|(_, p)| p.meta.ecn == 3).collect();
    assert_eq!(marked.len(), 4);
    for (_, p) in marked {
        assert_eq!(p.data[15] & 3, 3);
        assert_eq!(ipv4_checksum(&p.data[14..34]), 0, "checksum still valid");
    }
}

#[test]
fn l2_learns_and_floods_unknown_destinations() {
    let mut sw = Switch::new(presets::basic(3, Rate::gbps(100)));
    sw.receive(0, frame(0, 1, 0, 0, 64), Time::ZERO);
    assert!(sw.next_transmit(1).is_some() && sw.next_transmit(2).is_some());
    sw.receive(1, frame(1, 0, 0, 0, 64), Time::ZERO);
    assert_eq!(
        sw.ports()[0].queue_len(1),
        1,
        "learned: host 0 is on port 0"
    );
    assert_eq!(
        sw.ports()[2].queue_len(1),
        1,
        "only the first frame flooded"
    );
    assert_eq!(sw.fdb().unwrap().len(), 2);
}

#[test]
fn watchdog_drops_a_stormed_queue() {
    use lossless_buffer_model::watchdog::{WatchdogAction, WatchdogConfig};
    let mut cfg = config(2, Rate::gbps(100));
    cfg.qos.pfcwd = Some(WatchdogConfig {
        action: WatchdogAction::Drop,
        detection_time: Time::from_ms(1),
        restoration_time: Time::from_ms(1),
        polling_interval: Time::from_us(100),
    });
    let mut sw = Switch::new(cfg);
    sw.receive(1, frame(1, 0, 3, 0, 1518), Time::ZERO);
    let mut t = Time::ZERO;
    // A storm: XOFF every 50 µs for 3 ms.
    while t < Time::from_ms(3) {
        sw.receive(0, pfc(1 << 3, quanta(3, 0xFFFF)), t);
        if let Some(d) = sw.poll_timeout() {
            if d <= t {
                sw.handle_timeout(t);
            }
        }
        t += Time::from_us(50);
    }
    assert_eq!(sw.ports()[0].watchdog[3].storms, 1);
    assert_eq!(sw.ports()[0].queue_len(3), 0);
    assert_eq!(sw.drops().get(DropReason::Watchdog), 1);
    sw.receive(1, frame(1, 0, 3, 0, 1518), t);
    assert_eq!(
        sw.drops().get(DropReason::Watchdog),
        2,
        "arrivals dropped during the storm"
    );
}

#[test]
fn asymmetric_pfc_honours_every_priority_but_sends_for_none_it_does_not_enable() {
    let mut cfg = config(3, Rate::gbps(100));
    cfg.qos.pfc_enable = 0;
    cfg.qos.pfc_asym = true;
    let mut sw = Switch::new(cfg);
    let t = Time::from_us(1);
    // A pause for priority 3 (not enabled here) holds queue 3 of port 0.
    sw.receive(0, pfc(1 << 3, quanta(3, 1000)), t);
    assert_eq!(sw.ports()[0].link.paused_mask(t), 1 << 3);
    assert_eq!(sw.drops().get(DropReason::PfcNotEnabled), 0);
    sw.receive(1, frame(1, 0, 3, 0, 1518), t);
    assert!(sw.poll_transmit(0, t + Time::from_ns(500)).is_none());
    assert_eq!(
        sw.next_transmit(0),
        Some(t + Time::from_ns(5_120)),
        "held for 1000 quanta"
    );
    // Priority 3 is lossy here: a flood toward the paused port drops; no XOFF is sent.
    for i in 0..100_000u64 {
        sw.receive(2, frame(2, 0, 3, 0, 1518), t + Time(i));
    }
    assert!(sw.drops().total() > 0);
    assert_eq!(sw.ports()[2].link.tx.counters.tx_pfc_frames, 0);
    assert_eq!(sw.next_transmit(2), None);
}

/// `next_transmit` is a cached answer, worked out again only when something it reads changes
/// (a queue's head, a pause, the wire); `poll_transmit` looks at the queues afresh. Over
/// random arrivals on several queues, PFC frames and polls (a brute-force check against the
/// uncached decision): a frame can start at `t` exactly when `next_transmit` said so by `t`,
/// and at the end every queued frame drains (none is left behind in a queue the port no
/// longer looks at).
#[test]
fn next_transmit_agrees_with_poll_transmit_over_random_arrivals_and_pauses() {
    const OUT: usize = 3;
    for seed in 1..=300u64 {
        let mut state = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
        let mut r = move |n: u64| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state % n
        };
        let mut sw = Switch::new(config(4, Rate::gbps(100)));
        let mut now = Time::ZERO;
        for step in 0..300 {
            now += Time::from_ns(r(400));
            match r(5) {
                0..=1 => {
                    let src = r(3) as usize;
                    let dscp = [0, 3, 4, 8, 46][r(5) as usize];
                    let len = [64, 512, 1518][r(3) as usize];
                    sw.receive(src, frame(src, OUT, dscp, 0, len), now);
                }
                2 => {
                    let enable = [1 << 3, 1 << 4, 1 << 3 | 1 << 4][r(3) as usize];
                    let q = r(2000) as u16;
                    sw.receive(OUT, pfc(enable, [q; 8]), now);
                }
                _ => {
                    let promised = sw.next_transmit(OUT);
                    let t = now + Time::from_ns(r(2000));
                    let started = sw.poll_transmit(OUT, t).is_some();
                    assert_eq!(
                        started,
                        promised.is_some_and(|p| p <= t),
                        "seed {seed}, step {step}: next_transmit said {promised:?}, polled at {t}"
                    );
                    now = t;
                }
            }
            // As an engine does after every event: the answer is now cached.
            sw.next_transmit(OUT);
        }
        drain(&mut sw, OUT, now, 10_000);
        assert_eq!(sw.queued_frames(), 0, "seed {seed}: frames left behind");
    }
}

#[test]
fn a_deadline_said_unchanged_is_unchanged() {
    use lossless_pipeline::Node;
    // Random traffic between 4 ports (overloading some), PFC frames received now and then,
    // every deadline acted on at its own time as the simulator does. After each arrival,
    // `poll_timeout` is asked anyway (the reference): when the switch said its deadline
    // was unchanged, the answer must be the last one.
    let mut sw = Switch::new(config(4, Rate::gbps(100)));
    let mut last = sw.poll_timeout();
    let (mut x, mut clock, mut floor) = (11u64, Time::ZERO, Time::ZERO);
    let (mut kept, mut arrivals, mut sent) = (0, 0, 0);
    for _ in 0..20_000 {
        x = x
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        clock += Time::from_ps((x >> 40) % 100_000);
        for _ in 0..1_000 {
            let Some(d) = last.filter(|d| *d <= clock) else {
                break;
            };
            floor = d.max(floor);
            sw.poll_due(floor, &mut |_, _| sent += 1);
            last = sw.poll_timeout();
        }
        floor = clock;
        let port = (x >> 20) as usize % 4;
        let pkt = if (x >> 10) % 16 == 0 {
            pfc(1 << 3, quanta(3, ((x >> 30) % 2_000) as u16))
        } else {
            let dst = (port + 1 + (x >> 8) as usize % 3) % 4;
            frame(port, dst, 3, 0, 1518)
        };
        sw.receive(port, pkt, clock);
        let said = Node::deadline_unchanged(&sw);
        let answer = sw.poll_timeout();
        if said {
            assert_eq!(answer, last, "at {clock}: said unchanged");
            kept += 1;
        }
        last = answer;
        arrivals += 1;
    }
    assert!(sent > 5_000, "{sent} frames sent");
    assert!(
        kept > arrivals / 4 && kept < arrivals,
        "{kept} of {arrivals}"
    );
}
