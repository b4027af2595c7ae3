//! Criterion benches of the lookup tables and the MMU: an FDB of 4k learned entries, an LPM
//! of 10k IPv4 routes, and one packet's admit + release.

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use lossless_buffer_model::mmu::Mmu;
use lossless_buffer_model::{Rate, Time};
use lossless_pipeline::config::{v4_key, NextHop, Route, RouteTarget};
use lossless_pipeline::forward::{Fdb, Lpm};
use lossless_pipeline::presets;
use std::hint::black_box;

fn mac(i: u32) -> [u8; 6] {
    let b = i.to_be_bytes();
    [0x02, 0, b[0], b[1], b[2], b[3]]
}

fn bench_fdb(c: &mut Criterion) {
    let mut fdb = Fdb::new(16_384, Time::ZERO, &[]);
    for i in 0..4096u32 {
        fdb.learn(0, mac(i), (i % 32) as u16, Time::ZERO);
    }
    let mut g = c.benchmark_group("fdb");
    g.throughput(Throughput::Elements(1));
    let mut i = 0u32;
    g.bench_function("lookup_4k_entries", |b| {
        b.iter(|| {
            i = (i + 1597) % 4096;
            black_box(fdb.lookup(0, mac(i), Time::ZERO))
        })
    });
    g.bench_function("learn_refresh_4k_entries", |b| {
        b.iter(|| {
            i = (i + 1597) % 4096;
            fdb.learn(0, mac(i), (i % 32) as u16, Time::ZERO)
        })
    });
    g.finish();
}

fn bench_lpm(c: &mut Criterion) {
    // 10k routes: /24s, /16s and /32s spread over 198.18.0.0/15 and 10.0.0.0/8.
    let routes: Vec<Route> = (0..10_000u32)
        .map(|i| {
            let (addr, len) = match i % 3 {
                0 => ([10, (i >> 8) as u8, i as u8, 0], 24),
                1 => ([10, i as u8, 0, 0], 16),
                _ => ([198, 18 + (i & 1) as u8, (i >> 8) as u8, i as u8], 32),
            };
            Route {
                prefix: v4_key(addr),
                len: 96 + len,
                target: RouteTarget::NextHop(NextHop {
                    port: (i % 32) as u16,
                    mac: mac(i),
                }),
            }
        })
        .collect();
    let lpm = Lpm::new(&routes);
    let mut g = c.benchmark_group("lpm");
    g.throughput(Throughput::Elements(1));
    let mut i = 0u32;
    g.bench_function("lookup_10k_routes", |b| {
        b.iter(|| {
            i = i.wrapping_add(2_654_435_761);
            let a = [10, (i >> 24) as u8, (i >> 16) as u8, (i >> 8) as u8];
            black_box(lpm.lookup(v4_key(a)))
        })
    });
    g.finish();
}

fn bench_mmu(c: &mut Criterion) {
    let cfg = presets::basic(32, Rate::gbps(100));
    let mut mmu = Mmu::new(
        cfg.cell,
        cfg.pools.clone(),
        &cfg.pg_profiles,
        &cfg.queue_profiles,
    );
    let mut g = c.benchmark_group("mmu");
    g.throughput(Throughput::Elements(1));
    let mut i = 0usize;
    g.bench_function("admit_release_1518B", |b| {
        b.iter(|| {
            i = (i + 7) % 32;
            let out = (i + 16) % 32;
            let a = mmu.admit(i, 3, out, 3, 1518).expect("room");
            black_box(mmu.release(i, 3, out, 3, a.cells))
        })
    });
    g.finish();
}

criterion_group!(benches, bench_fdb, bench_lpm, bench_mmu);
criterion_main!(benches);
