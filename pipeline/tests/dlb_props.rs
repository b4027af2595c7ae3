//! The flowlet state machines against brute-force reference models: the past-load meter
//! (closed-form roll over idle intervals) against one that closes every interval one by one,
//! and the flow table against a plain list scanned in full.

use lossless_buffer_model::{Rate, Time};
use lossless_pipeline::dlb::{FlowTable, LoadMeter, Lookup, EWMA_WEIGHT};
use proptest::prelude::*;

/// Closes every interval explicitly: EWMA ← EWMA + w·(bytes − EWMA) per interval.
struct RefMeter {
    interval: u64,
    ewma: f64,
    /// Bytes per interval index.
    bytes: std::collections::BTreeMap<u64, u64>,
}

impl RefMeter {
    fn past(&self, now: u64) -> f64 {
        let closed = now / self.interval; // intervals [0, closed) are over
        let mut e = self.ewma;
        for k in 0..closed {
            let b = *self.bytes.get(&k).unwrap_or(&0) as f64;
            e += (b - e) * EWMA_WEIGHT;
        }
        e
    }
}

/// Every flow ever seen with its member and last packet; "full" counts active ones only.
struct RefTable {
    max: usize,
    idle: u64,
    flows: Vec<(u32, u16, u64)>,
}

impl RefTable {
    fn lookup(&mut self, hash: u32, now: u64) -> Lookup {
        if let Some(f) = self.flows.iter_mut().find(|f| f.0 == hash) {
            let idle = now - f.2 > self.idle;
            f.2 = now;
            return if idle {
                Lookup::NewFlowlet(Some(f.1))
            } else {
                Lookup::Continue(f.1)
            };
        }
        if self.flows.len() >= self.max {
            let idle = self.idle;
            self.flows.retain(|f| now - f.2 <= idle);
            if self.flows.len() >= self.max {
                return Lookup::Full;
            }
        }
        Lookup::NewFlowlet(None)
    }
    fn assign(&mut self, hash: u32, member: u16, now: u64) {
        self.flows.retain(|f| f.0 != hash);
        self.flows.push((hash, member, now));
    }
}

fn cases() -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(256)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases()))]

    #[test]
    fn load_meter_matches_interval_by_interval(
        interval_ns in 1u64..50,
        events in prop::collection::vec((0u64..400, 0u64..20_000), 1..60),
        probes in prop::collection::vec(0u64..600, 1..10),
    ) {
        let interval = Time::from_ns(interval_ns);
        let mut m = LoadMeter::new(Rate::gbps(100), interval);
        let mut r = RefMeter { interval: interval.as_ps(), ewma: 0.0, bytes: Default::default() };
        let mut t = 0u64;
        let mut probes = probes;
        probes.sort();
        for (dt, bytes) in events {
            t += dt * 1_000; // ps, at 1 ns steps
            m.record(Time(t), bytes);
            *r.bytes.entry(t / r.interval).or_default() += bytes;
            let (a, b) = (m.past(Time(t)), r.past(t));
            prop_assert!((a - b).abs() <= 1e-6 * b.max(1.0), "at {t}: {a} vs {b}");
        }
        for p in probes {
            let at = t + p * 1_000;
            let (a, b) = (m.past(Time(at)), r.past(at));
            prop_assert!((a - b).abs() <= 1e-6 * b.max(1.0), "probe {at}: {a} vs {b}");
        }
    }

    #[test]
    fn flow_table_matches_a_plain_list(
        max in 1u32..6,
        idle in 1u64..20,
        packets in prop::collection::vec((0u32..10, 0u64..8, 0u16..4), 1..200),
    ) {
        let mut t = FlowTable::new(max, Time(idle));
        let mut r = RefTable { max: max as usize, idle, flows: Vec::new() };
        let mut now = 0u64;
        for (hash, dt, member) in packets {
            now += dt;
            let got = t.lookup(hash, Time(now));
            prop_assert_eq!(got, r.lookup(hash, now), "flow {} at {}", hash, now);
            if let Lookup::NewFlowlet(_) = got {
                t.assign(hash, member, Time(now));
                r.assign(hash, member, now);
            }
            let active = r.flows.iter().filter(|f| now - f.2 <= idle).count();
            prop_assert_eq!(t.active(Time(now)), active);
        }
    }
}
