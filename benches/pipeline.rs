//! Criterion benches of the packet path: the parser alone, and a 64-byte frame through
//! `Switch::receive` → `Switch::poll_transmit` (parse, classify, FDB, MMU admit, enqueue,
//! schedule, release).

use criterion::{criterion_group, criterion_main, BatchSize, Criterion, Throughput};
use lossless_buffer_model::{Rate, Time};
use lossless_pipeline::buffers;
use lossless_pipeline::config::Forwarding;
use lossless_pipeline::parser::parse;
use lossless_pipeline::wire::build::FrameSpec;
use lossless_pipeline::{presets, Packet, Switch};
use std::hint::black_box;

fn spec(len: u32, bth: bool) -> FrameSpec {
    FrameSpec {
        src_mac: [2, 0, 0, 0, 0, 1],
        dst_mac: [2, 0, 0, 0, 0, 2],
        vlan: Some((10, 3)),
        src_ip: [198, 18, 0, 1],
        dst_ip: [198, 18, 0, 2],
        ipv6: false,
        dscp: 3,
        ecn: 2,
        src_port: 49_152,
        dst_port: 20_000,
        bth: bth.then_some((0x04, 17, 1)),
        len,
    }
}

fn bench_parser(c: &mut Criterion) {
    let mut g = c.benchmark_group("parser");
    g.throughput(Throughput::Elements(1));
    for (name, s) in [
        ("vlan_ipv4_udp", spec(64, false)),
        ("vlan_ipv4_udp_bth", spec(128, true)),
    ] {
        let mut b = Vec::new();
        s.write(&mut b).unwrap();
        g.bench_function(name, |bench| {
            bench.iter(|| parse(black_box(&b), black_box(s.len)))
        });
    }
    g.finish();
}

fn bench_switch(c: &mut Criterion) {
    let mut cfg = presets::basic(2, Rate::gbps(100));
    cfg.forwarding = Forwarding::L2 {
        static_fdb: vec![(10, [2, 0, 0, 0, 0, 1], 0), (10, [2, 0, 0, 0, 0, 2], 1)],
        fdb_size: 1024,
        fdb_aging: Time::ZERO,
    };
    let mut sw = Switch::new(cfg);
    let mut frame = Vec::new();
    spec(64, false).write(&mut frame).unwrap();
    let mut t = Time::ZERO;
    let step = Rate::gbps(100).wire_time(64);
    let mut g = c.benchmark_group("switch");
    g.throughput(Throughput::Elements(1));
    g.bench_function("receive_poll_transmit_64B", |bench| {
        bench.iter_batched_ref(
            || {
                let mut d = Vec::with_capacity(64);
                d.extend_from_slice(&frame);
                d
            },
            |data| {
                let pkt = Packet::new(core::mem::take(data), 64);
                sw.receive(0, pkt, t);
                t += step;
                let out = sw
                    .poll_transmit(1, t + Time::from_ns(500))
                    .unwrap_or_else(|| {
                        panic!(
                            "no frame at {t}: next {:?}, drops {:?}, enq {}",
                            sw.next_transmit(1),
                            sw.drops().nonzero().collect::<Vec<_>>(),
                            sw.ledger().queued
                        )
                    });
                buffers::give(black_box(out).data);
            },
            BatchSize::SmallInput,
        )
    });
    g.finish();
}

/// 64-byte frames in on every port of a 32-port switch, each to the port 16 away; one
/// receive and one poll_transmit per frame, the ports taken in turn.
fn bench_switch_32_ports(c: &mut Criterion) {
    const N: usize = 32;
    let host = |i: usize| [2, 0, 0, 0, 1, i as u8];
    let mut cfg = presets::basic(N, Rate::gbps(100));
    cfg.forwarding = Forwarding::L2 {
        static_fdb: (0..N).map(|i| (10, host(i), i as u16)).collect(),
        fdb_size: 1024,
        fdb_aging: Time::ZERO,
    };
    let mut sw = Switch::new(cfg);
    let frames: Vec<Vec<u8>> = (0..N)
        .map(|i| {
            let mut s = spec(64, false);
            s.src_mac = host(i);
            s.dst_mac = host((i + N / 2) % N);
            let mut f = Vec::new();
            s.write(&mut f).unwrap();
            f
        })
        .collect();
    // Each port receives one frame per wire time of 64 bytes, so no queue builds.
    let step = Rate::gbps(100).wire_time(64);
    let mut t = Time::ZERO;
    let mut port = 0;
    let mut g = c.benchmark_group("switch");
    g.throughput(Throughput::Elements(1));
    g.bench_function("receive_poll_transmit_64B_32_ports", |bench| {
        bench.iter(|| {
            // The engine's way: a buffer the switch gave back, filled with the frame.
            let mut data = buffers::take(64);
            data.extend_from_slice(&frames[port]);
            sw.receive(port, Packet::new(data, 64), t);
            let out = (port + N / 2) % N;
            let sent = sw
                .poll_transmit(out, t + Time::from_ns(500))
                .expect("a frame to send");
            buffers::give(black_box(sent).data);
            port += 1;
            if port == N {
                port = 0;
                t += step;
            }
        })
    });
    g.finish();
}

criterion_group!(benches, bench_parser, bench_switch, bench_switch_32_ports);
criterion_main!(benches);
