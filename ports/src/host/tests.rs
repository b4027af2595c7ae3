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

#[test]
fn a_marked_frame_brings_back_one_cnp_that_cuts_the_senders_rate() {
    let mut sender = Host::new(
        "a".into(),
        [2, 0, 0, 0, 0, 1],
        Rate::gbps(100),
        nic(true),
        vec![flow(2)],
    );
    let mut receiver = Host::new(
        "r".into(),
        [2, 0, 0, 0, 0, 2],
        Rate::gbps(100),
        nic(true),
        vec![],
    );
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
