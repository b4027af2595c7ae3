//! Random and mutated frames through `Switch::receive`: nothing panics, and every frame is
//! forwarded, consumed as PFC, or counted under exactly one drop reason.

use lossless_buffer_model::{Rate, Time};
use lossless_pipeline::config::{v4_key, Forwarding, NextHop, Route, RouteTarget, SwitchConfig};
use lossless_pipeline::drop_reason::DropReason;
use lossless_pipeline::parser::{parse, parse_for_forwarding, parse_into, Parsed};
use lossless_pipeline::presets;
use lossless_pipeline::wire::build::FrameSpec;
use lossless_pipeline::wire::pfc::emit_pfc;
use lossless_pipeline::{Packet, Switch};
use rand_core::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

fn seeds() -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    let base = FrameSpec {
        src_mac: [2, 0, 0, 0, 0, 1],
        dst_mac: [2, 0, 0, 0, 0, 2],
        vlan: None,
        src_ip: [198, 18, 0, 1],
        dst_ip: [198, 18, 0, 2],
        ipv6: false,
        dscp: 3,
        ecn: 2,
        src_port: 1000,
        dst_port: 2000,
        bth: None,
        len: 128,
    };
    for spec in [
        base,
        FrameSpec {
            vlan: Some((5, 3)),
            ..base
        },
        FrameSpec {
            bth: Some((0x04, 1, 2)),
            ..base
        },
        FrameSpec {
            bth: Some((0x81, 1, 2)),
            vlan: Some((7, 5)),
            ..base
        },
    ] {
        let mut b = Vec::new();
        spec.write(&mut b).unwrap();
        b.resize(124, 0xAB);
        out.push(b);
    }
    let mut pfc = Vec::new();
    emit_pfc(
        &mut pfc,
        [2, 0, 0, 0, 0, 3],
        0x18,
        &[0, 0, 0, 100, 200, 0, 0, 0],
    );
    out.push(pfc);
    // IPv6 / TCP via etherparse.
    let mut v6 = Vec::new();
    etherparse::PacketBuilder::ethernet2([2, 0, 0, 0, 0, 1], [2, 0, 0, 0, 0, 2])
        .double_vlan(
            etherparse::VlanId::try_new(10).unwrap(),
            etherparse::VlanId::try_new(20).unwrap(),
        )
        .ipv6([0x20; 16], [0x21; 16], 64)
        .tcp(80, 443, 1, 1000)
        .write(&mut v6, &[0u8; 40])
        .unwrap();
    out.push(v6);
    // ARP-like non-IP frame.
    let mut arp = vec![0xFF; 6];
    arp.extend_from_slice(&[2, 0, 0, 0, 0, 1, 0x08, 0x06]);
    arp.resize(60, 0);
    out.push(arp);
    out
}

fn mutate(rng: &mut Xoshiro256PlusPlus, seeds: &[Vec<u8>]) -> Packet {
    let kind = rng.next_u32() % 6;
    let mut data = if kind == 5 {
        let n = (rng.next_u32() % 200) as usize;
        (0..n).map(|_| rng.next_u32() as u8).collect()
    } else {
        seeds[rng.next_u32() as usize % seeds.len()].clone()
    };
    match kind {
        0 | 1 => {
            for _ in 0..1 + rng.next_u32() % 8 {
                if !data.is_empty() {
                    let i = rng.next_u32() as usize % data.len();
                    data[i] ^= 1 << (rng.next_u32() % 8);
                }
            }
        }
        2 => {
            let n = rng.next_u32() as usize % (data.len() + 1);
            data.truncate(n);
        }
        // Scribble over a header byte with any value (lengths, IHL, versions, opcodes).
        3 if !data.is_empty() => {
            let i = rng.next_u32() as usize % data.len().min(64);
            data[i] = rng.next_u32() as u8;
        }
        _ => {}
    }
    // Declared length: usually honest, sometimes a headers-only view, sometimes nonsense.
    let held = data.len() as u32;
    let len = match rng.next_u32() % 4 {
        0 => held + 4 + rng.next_u32() % 10_000,
        1 => rng.next_u32() % 10_000,
        _ => held + 4,
    };
    Packet::new(data, len)
}

fn l3_config() -> SwitchConfig {
    let mut cfg = presets::basic(2, Rate::gbps(100));
    cfg.forwarding = Forwarding::L3 {
        routes: vec![Route {
            prefix: v4_key([198, 18, 0, 0]),
            len: 96 + 15,
            target: RouteTarget::NextHop(NextHop {
                port: 1,
                mac: [2, 0, 0, 0, 0, 2],
            }),
        }],
        groups: vec![],
    };
    cfg
}

fn run(cfg: SwitchConfig, n: u64, seed: u64) -> Switch {
    let seeds = seeds();
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
    let mut sw = Switch::new(cfg);
    let mut t = Time::ZERO;
    let mut sent_out = 0u64;
    for i in 0..n {
        let port = (rng.next_u32() % 2) as usize;
        sw.receive(port, mutate(&mut rng, &seeds), t);
        t += Time::from_ns(10);
        if i % 64 == 0 {
            sw.handle_timeout(t);
            for p in 0..2 {
                // Send what the port could have started by now.
                while let Some(at) = sw.next_transmit(p).filter(|at| *at <= t) {
                    let f = sw.poll_transmit(p, at).expect("promised frame");
                    // Whatever leaves must itself parse.
                    assert!(parse(&f.data, f.len).is_ok());
                    sent_out += 1;
                    lossless_pipeline::buffers::give(f.data);
                }
            }
        }
    }
    let rx: u64 = sw
        .ports()
        .iter()
        .map(|p| p.link.tx.counters.rx_packets)
        .sum();
    let pfc: u64 = sw
        .ports()
        .iter()
        .map(|p| p.link.tx.counters.rx_pfc_frames)
        .sum();
    assert_eq!(rx, n);
    assert_eq!(
        rx,
        sw.drops().total() + pfc + sw.ledger().queued,
        "every frame accounted once"
    );
    assert!(sent_out > 0);
    // The ledger's books balance, and what left is what it says was sent (plus PFC).
    sw.ledger()
        .check(sw.queued_frames(), sw.drops().total())
        .unwrap();
    let pfc_tx: u64 = sw
        .ports()
        .iter()
        .map(|p| p.link.tx.counters.tx_pfc_frames)
        .sum();
    assert_eq!(sent_out, sw.ledger().sent + pfc_tx);
    sw
}

#[test]
fn hundred_thousand_mutated_frames_l2() {
    let sw = run(presets::basic(2, Rate::gbps(100)), 100_000, 1);
    // The mutations reach many distinct reasons.
    let reasons: Vec<_> = sw.drops().nonzero().map(|(r, _)| r.name()).collect();
    assert!(reasons.len() >= 12, "{reasons:?}");
    for r in [
        DropReason::Runt,
        DropReason::Giant,
        DropReason::BadLength,
        DropReason::Ipv4BadTotalLength,
        DropReason::TruncatedIpv4,
    ] {
        assert!(sw.drops().get(r) > 0, "{}", r.name());
    }
}

/// The forwarding parse makes the same checks as the full one: the same verdict on every
/// frame, the same header vector but for the BTH, which it does not keep.
#[test]
fn the_forwarding_parse_differs_from_the_full_one_only_in_the_bth() {
    let seeds = seeds();
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(3);
    let mut with_bth = 0;
    for _ in 0..100_000 {
        let pkt = mutate(&mut rng, &seeds);
        let (mut full, mut fwd) = (Parsed::default(), Parsed::default());
        let a = parse_into(&pkt.data, pkt.len, &mut full);
        let b = parse_for_forwarding(&pkt.data, pkt.len, &mut fwd);
        assert_eq!(a, b, "{:02x?} len {}", pkt.data, pkt.len);
        if a.is_ok() {
            with_bth += full.bth.is_some() as u32;
            assert_eq!(fwd.bth, None);
            assert_eq!(Parsed { bth: None, ..full }, fwd, "{:02x?}", pkt.data);
        }
    }
    assert!(with_bth > 1000, "the frames reach the BTH: {with_bth}");
}

#[test]
fn fifty_thousand_mutated_frames_l3() {
    let sw = run(l3_config(), 50_000, 2);
    assert!(sw.drops().get(DropReason::NotIp) > 0);
    assert!(sw.drops().get(DropReason::NoRoute) > 0);
}

/// One hand-made frame per parser reason: each lands on exactly its counter.
#[test]
fn each_malformation_has_its_own_reason() {
    let s = seeds();
    let (udp, tagged, roce, pfc, v6) = (&s[0], &s[1], &s[2], &s[4], &s[5]);
    let with = |b: &Vec<u8>, f: &dyn Fn(&mut Vec<u8>)| {
        let mut b = b.clone();
        f(&mut b);
        b
    };
    let cases: Vec<(DropReason, Vec<u8>, u32)> = vec![
        (DropReason::Runt, udp[..56].to_vec(), 60),
        (DropReason::Giant, udp.clone(), 9217),
        (DropReason::BadLength, udp.clone(), 100),
        (DropReason::TruncatedEthernet, udp[..12].to_vec(), 64),
        (DropReason::TruncatedVlan, tagged[..16].to_vec(), 128),
        (DropReason::TruncatedIpv4, udp[..30].to_vec(), 128),
        (
            DropReason::Ipv4BadVersion,
            with(udp, &|b| b[14] = 0x55),
            128,
        ),
        (DropReason::Ipv4BadIhl, with(udp, &|b| b[14] = 0x43), 128),
        (
            DropReason::Ipv4BadTotalLength,
            with(udp, &|b| b[16..18].copy_from_slice(&[0, 10])),
            128,
        ),
        (DropReason::TruncatedIpv6, v6[..40].to_vec(), 200),
        (
            DropReason::Ipv6BadVersion,
            with(v6, &|b| b[22] = 0x45),
            v6.len() as u32 + 4,
        ),
        (DropReason::TruncatedUdp, udp[..38].to_vec(), 128),
        (
            DropReason::UdpBadLength,
            with(udp, &|b| b[38..40].copy_from_slice(&[0, 4])),
            128,
        ),
        (
            DropReason::TruncatedTcp,
            v6[..70].to_vec(),
            v6.len() as u32 + 4,
        ),
        (
            DropReason::TcpBadDataOffset,
            with(v6, &|b| b[62 + 12] = 0x20),
            v6.len() as u32 + 4,
        ),
        (DropReason::TruncatedBth, roce[..46].to_vec(), 128),
        (DropReason::TruncatedMacControl, pfc[..15].to_vec(), 64),
        (
            DropReason::PfcBadDestination,
            with(pfc, &|b| b[0] = 0x03),
            64,
        ),
        (DropReason::PfcNotEnabled, with(pfc, &|b| b[17] = 0x01), 64),
        (
            DropReason::Pause8023xIgnored,
            with(pfc, &|b| b[14..16].copy_from_slice(&[0x00, 0x01])),
            64,
        ),
        (
            DropReason::MacControlUnknownOpcode,
            with(pfc, &|b| b[15] = 0x02),
            64,
        ),
        (
            DropReason::MacControlTagged,
            with(tagged, &|b| b[16..18].copy_from_slice(&[0x88, 0x08])),
            128,
        ),
    ];
    for (reason, data, len) in cases {
        let mut sw = Switch::new(presets::basic(2, Rate::gbps(100)));
        sw.receive(0, Packet::new(data, len), Time::ZERO);
        assert_eq!(sw.drops().get(reason), 1, "{}", reason.name());
        assert_eq!(sw.drops().total(), 1, "{} counted once", reason.name());
    }
}

/// What a MAC Control frame means, decoded by hand from its bytes (the reference the
/// parser is held to): None where the frame must be dropped, with its reason.
fn mac_control_by_hand(
    data: &[u8],
    len: u32,
) -> Result<lossless_pipeline::link::ControlFrame, DropReason> {
    use lossless_pipeline::link::ControlFrame;
    let be = |i: usize| u16::from_be_bytes([data[i], data[i + 1]]);
    if data.len() < 16 {
        return Err(DropReason::TruncatedMacControl);
    }
    match be(14) {
        0x0101 => {
            if data[..6] != [0x01, 0x80, 0xC2, 0x00, 0x00, 0x01] {
                return Err(DropReason::PfcBadDestination);
            }
            if len < 64 {
                return Err(DropReason::PfcTooShort);
            }
            if data.len() < 34 {
                return Err(DropReason::TruncatedMacControl);
            }
            Ok(ControlFrame::Pfc {
                // The high byte of the vector is reserved.
                enable: data[17],
                quanta: core::array::from_fn(|i| be(18 + 2 * i)),
            })
        }
        0x0001 => {
            if data.len() < 18 {
                return Err(DropReason::TruncatedMacControl);
            }
            Ok(ControlFrame::Pause { quanta: be(16) })
        }
        _ => Err(DropReason::MacControlUnknownOpcode),
    }
}

/// 100,000 structure-aware MAC Control frames — opcodes, destinations, vectors, quanta,
/// truncations, declared lengths — decoded by the parser exactly as by hand.
#[test]
fn hundred_thousand_mac_control_frames_decode_as_by_hand() {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(0x5EED_0004);
    let mut decoded = [0u32; 2];
    for i in 0..100_000 {
        let mut f = Vec::new();
        let dst = match rng.next_u32() % 8 {
            0 => [0x01, 0x80, 0xC2, 0x00, 0x00, rng.next_u32() as u8],
            1 => [rng.next_u32() as u8; 6],
            _ => [0x01, 0x80, 0xC2, 0x00, 0x00, 0x01],
        };
        let mut quanta = [0u16; 8];
        for q in &mut quanta {
            *q = match rng.next_u32() % 4 {
                0 => 0,
                1 => 0xFFFF,
                _ => rng.next_u32() as u16,
            };
        }
        emit_pfc(&mut f, [2, 0, 0, 0, 0, 9], rng.next_u32() as u8, &quanta);
        f[..6].copy_from_slice(&dst);
        // Reserved high byte of the vector, other opcodes.
        f[16] = if rng.next_u32() % 4 == 0 {
            rng.next_u32() as u8
        } else {
            0
        };
        match rng.next_u32() % 8 {
            0 => f[14..16].copy_from_slice(&[0x00, 0x01]),
            1 => f[14..16].copy_from_slice(&(rng.next_u32() as u16).to_be_bytes()),
            _ => {}
        }
        if rng.next_u32() % 3 == 0 {
            f.truncate(rng.next_u32() as usize % (f.len() + 1));
        }
        let len = match rng.next_u32() % 4 {
            0 => rng.next_u32() % 80,
            _ => (f.len() as u32 + 4).max(64),
        };
        if f.len() < 14 || f.len() as u32 + 4 > len {
            continue; // not a MAC Control frame to the parser, or a bad length
        }
        let got = parse(&f, len);
        let want = mac_control_by_hand(&f, len);
        match (got, want) {
            (Ok(p), Ok(m)) => {
                assert_eq!(p.control, Some(m.clone()), "case {i}: {f:02x?} len {len}");
                decoded[matches!(m, lossless_pipeline::link::ControlFrame::Pfc { .. }) as usize] +=
                    1;
            }
            (Err(a), Err(b)) => assert_eq!(a, b, "case {i}: {f:02x?} len {len}"),
            (a, b) => panic!("case {i}: {f:02x?} len {len}: parser {a:?}, by hand {b:?}"),
        }
    }
    assert!(decoded[0] > 1000 && decoded[1] > 10_000, "{decoded:?}");
}

/// A frame shorter than its IP header says — what a trimming switch sends on — is not
/// malformed: it parses with `cut` set and is forwarded (IPv4 and IPv6 alike).
#[test]
fn a_cut_frame_is_forwarded_not_dropped() {
    let s = seeds();
    let (udp, v6) = (&s[0], &s[5]);
    let mut a = udp.clone();
    a[16..18].copy_from_slice(&[5, 0]); // total length 1280 in a 128-byte frame
    let mut b = v6.clone();
    b[26..28].copy_from_slice(&[0x7F, 0]);
    for (data, len) in [(a, 128u32), (b.clone(), b.len() as u32 + 4)] {
        let mut p = Parsed::default();
        parse_into(&data, len, &mut p).unwrap();
        assert!(p.cut);
        let mut sw = Switch::new(presets::basic(2, Rate::gbps(100)));
        sw.receive(0, Packet::new(data, len), Time::ZERO);
        assert_eq!(sw.drops().total(), 0);
        assert_eq!(sw.ledger().queued, 1);
    }
}
