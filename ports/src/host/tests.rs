//! NIC unit tests: DCQCN between two NICs.

use super::*;
use crate::dcqcn::DcqcnParams;
use crate::flow::{FlowSpec, Limit, Pattern, Transport};
use lossless_pipeline::parser::parse;
use lossless_pipeline::wire::build::FrameSpec;
use lossless_pipeline::wire::rocev2::{CNP_LEN, OPCODE_SEND_ONLY, ROCEV2_PORT};

fn nic(dcqcn: bool) -> NicConfig {
    NicConfig {
        pfc: PfcMode::Honor,
        pfc_response: Time::ZERO,
        rx_buffer: None,
        pfc_enable: 1 << 3,
        pause_quanta: 0xFFFF,
        dcqcn: dcqcn.then(DcqcnParams::paper),
        cnp_priority: 6,
        ..NicConfig::default()
    }
}

fn flow(ecn: u8) -> FlowTx {
    FlowTx::new(FlowSpec {
        name: "f".into(),
        id: 1,
        headers: FrameSpec {
            src_mac: [2, 0, 0, 0, 0, 1],
            dst_mac: [2, 0, 0, 0, 0, 2],
            vlan: None,
            src_ip: [198, 18, 0, 1],
            dst_ip: [198, 18, 0, 2],
            ipv6: false,
            dscp: 3,
            ecn,
            src_port: 49_152,
            dst_port: ROCEV2_PORT,
            bth: Some((OPCODE_SEND_ONLY, 7, 0)),
            len: 1518,
        },
        priority: 3,
        pattern: Pattern::Greedy,
        limit: Limit::Unbounded,
        start: Time::ZERO,
        stop: None,
        transport: Transport::OpenLoop,
    })
    .unwrap()
}

/// A DCQCN sender (one flow of queue pair 7, ECN-capable) and its receiver.
fn dcqcn_pair() -> (Host, Host) {
    let sender = Host::new(
        "a".into(),
        [2, 0, 0, 0, 0, 1],
        Rate::gbps(100),
        nic(true),
        vec![flow(2)],
    );
    let receiver = Host::new(
        "r".into(),
        [2, 0, 0, 0, 0, 2],
        Rate::gbps(100),
        nic(true),
        vec![],
    );
    (sender, receiver)
}

#[test]
fn a_marked_frame_brings_back_one_cnp_that_cuts_the_senders_rate() {
    let (mut sender, mut receiver) = dcqcn_pair();
    // A CE-marked frame of queue pair 7 (as the switch would have marked it).
    let mut marked = flow(3);
    let pkt = marked.take(Time::ZERO, Vec::new());
    assert!(matches!(
        receiver.accept(pkt, Time::from_us(1), &mut Parsed::default()),
        Received::Data(..)
    ));
    let again = marked.take(Time::from_us(2), Vec::new());
    let _ = receiver.accept(again, Time::from_us(2), &mut Parsed::default());
    assert_eq!(receiver.np.sent, 1, "one CNP per 50 µs");
    let cnp = receiver
        .poll_transmit(Time::from_us(2))
        .expect("the CNP goes first");
    assert_eq!(cnp.len, CNP_LEN);
    let p = parse(&cnp.data, cnp.len).unwrap();
    let b = p.bth.unwrap();
    assert_eq!((b.opcode, b.dest_qp, b.becn), (OPCODE_CNP, 7, true));
    assert_eq!(p.dst, [2, 0, 0, 0, 0, 1]);
    assert!(matches!(
        p.l3,
        L3::V4 {
            dscp: 48,
            ecn: 0,
            src: [198, 18, 0, 2],
            dst: [198, 18, 0, 1],
            ..
        }
    ));
    // At the sender: α = 1, so the rate halves.
    assert!(matches!(
        sender.accept(cnp, Time::from_us(3), &mut Parsed::default()),
        Received::Cnp(_)
    ));
    let rp = sender.flows[0].dcqcn.as_ref().unwrap();
    assert_eq!((rp.cnps, rp.rate_bps()), (1, 50e9));
    assert_eq!(sender.cnps_received, 1);
    // Paced at 50G: two frames 2 × 123.04 ns apart.
    let t0 = Time::from_us(4);
    let _ = sender.poll_transmit(t0).unwrap();
    assert_eq!(sender.next_transmit(), Some(t0 + Time(246_080)));
}

/// Deliver `pkt` to `node` at `now`, as the simulator does; when the node says its deadline
/// is unchanged, `poll_timeout` (asked anyway: the reference) must answer as it did last
/// time (`last`, brought up to date). True when the node said so.
fn arrive_and_check(node: &mut Host, pkt: Packet, now: Time, last: &mut Option<Time>) -> bool {
    Node::receive(node, 0, pkt, now);
    let said = Node::deadline_unchanged(node);
    let answer = Node::poll_timeout(node);
    if said {
        assert_eq!(answer, *last, "{} at {now}: said unchanged", node.name);
    }
    *last = answer;
    said
}

/// Run `node`'s wake-ups due by `until` at their own times (never before `floor`, the
/// time of its last event), returning the frames it sent.
fn wake_until(
    node: &mut Host,
    until: Time,
    floor: &mut Time,
    last: &mut Option<Time>,
) -> Vec<Packet> {
    let mut out = Vec::new();
    for _ in 0..1_000 {
        let Some(d) = last.filter(|d| *d <= until) else {
            break;
        };
        *floor = d.max(*floor);
        Node::poll_due(node, *floor, &mut |_, p| out.push(p));
        *last = Node::poll_timeout(node);
    }
    out
}

#[test]
fn a_deadline_said_unchanged_is_unchanged() {
    use lossless_pipeline::wire::pfc::emit_pfc;
    // A DCQCN sender taking PFC frames and CNPs, and its receiver counting data frames
    // (some CE-marked, which it answers with CNPs).
    let (mut sender, mut receiver) = dcqcn_pair();
    receiver.add_receiver(1, FlowRx::new(Time::ZERO, Time::MAX), None);
    let mut marked = flow(3);
    let mut last = [
        Node::poll_timeout(&mut sender),
        Node::poll_timeout(&mut receiver),
    ];
    let mut floor = [Time::ZERO; 2];
    let (mut x, mut clock) = (3u64, Time::ZERO);
    let (mut kept, mut arrivals) = (0, 0);
    for _ in 0..4_000 {
        x = x
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        clock += Time::from_ps((x >> 40) % 300_000);
        let sent = wake_until(&mut sender, clock, &mut floor[0], &mut last[0]);
        let cnps = wake_until(&mut receiver, clock, &mut floor[1], &mut last[1]);
        floor = [clock; 2];
        let mut to_receiver = sent;
        if (x >> 20) % 8 == 0 {
            to_receiver.push(marked.take(clock, Vec::new()));
        }
        for pkt in to_receiver {
            kept += usize::from(arrive_and_check(&mut receiver, pkt, clock, &mut last[1]));
            arrivals += 1;
        }
        let mut to_sender = cnps;
        if (x >> 24) % 4 == 0 {
            let mut data = Vec::new();
            let quanta = [0, 0, 0, ((x >> 30) % 3_000) as u16, 0, 0, 0, 0];
            emit_pfc(&mut data, [2, 0, 0, 0, 0, 9], 1 << 3, &quanta);
            to_sender.push(Packet::new(data, 64));
        }
        for pkt in to_sender {
            kept += usize::from(arrive_and_check(&mut sender, pkt, clock, &mut last[0]));
            arrivals += 1;
        }
    }
    // Most data frames change nothing; PFC frames and CNPs always do.
    assert!(
        kept > arrivals / 4 && kept < arrivals,
        "{kept} of {arrivals}"
    );
}
