//! `lossless bench pipeline`: the real `Switch` (parse, classify, FDB, MMU admit, enqueue,
//! schedule, release) fed by in-process generators as fast as it goes. Frames come in on
//! every port in turn and leave by the port opposite; virtual time advances one wire time
//! per round, so no queue builds and nothing is shaped away: the figure is the cost of the
//! pipeline per frame. With a P4 program (`--p4`) the program forwards instead of the FDB:
//! a frame for the port opposite port P is addressed to 198.19.0.P, so entries routing
//! each 198.19.0.P/32 to port P (configs/p4/bench-entries.txt for the shipped router) send
//! it there.

use super::Machine;
use hdrhistogram::Histogram;
use lossless_buffer_model::{Rate, Time};
use lossless_pipeline::buffers;
use lossless_pipeline::config::Forwarding;
use lossless_pipeline::wire::build::FrameSpec;
use lossless_pipeline::{presets, Node, Packet, Switch};
use serde::Serialize;
use std::time::{Duration, Instant};

/// What to run.
#[derive(Clone, Debug)]
pub struct Setup {
    /// Switch ports (2–256).
    pub ports: usize,
    /// Frame length, FCS included (64–9216).
    pub frame: u32,
    /// Distinct flows (source/destination MAC and UDP port pairs), spread over the ports.
    pub flows: usize,
    /// How long to run (wall clock), unless `frames` is given.
    pub duration: Duration,
    /// Run exactly this many frames instead (what instruction counts use).
    pub frames: Option<u64>,
    /// A P4 program in place of the fixed pipeline's forwarding.
    pub p4: Option<std::sync::Arc<lossless_p4::V1Model>>,
}

/// What a run measured.
#[derive(Clone, Debug, Serialize)]
pub struct Result {
    /// The machine.
    pub machine: Machine,
    /// Ports, frame length and flows.
    pub ports: usize,
    /// Frame length, bytes.
    pub frame_bytes: u32,
    /// Flows.
    pub flows: usize,
    /// Whether a P4 program forwarded.
    pub p4: bool,
    /// Frames into the switch.
    pub frames: u64,
    /// Frames the switch sent out (all of them, without drops).
    pub sent: u64,
    /// Frames the switch dropped (0 expected).
    pub drops: u64,
    /// Wall time, s.
    pub wall_s: f64,
    /// Million frames per second.
    pub mpps: f64,
    /// Frame bits per second, Gbit/s.
    pub gbps: f64,
    /// Mean ns per frame.
    pub ns_per_frame: f64,
    /// ns per frame over batches of 1024 frames: p50, p99, p99.9 and the max.
    pub batch_ns_per_frame: Percentiles,
    /// Instructions per frame (cachegrind), when measured.
    pub instructions_per_frame: Option<f64>,
}

/// Percentiles of a distribution.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct Percentiles {
    /// Median.
    pub p50: f64,
    /// 99th percentile.
    pub p99: f64,
    /// 99.9th percentile.
    pub p999: f64,
    /// Largest.
    pub max: f64,
}

const BATCH: u64 = 1024;

fn host_mac(i: usize) -> [u8; 6] {
    let b = (i as u32).to_be_bytes();
    [0x02, 0, b[0], b[1], b[2], b[3]]
}

/// Check the setup's ranges; the message says which rule is broken.
pub fn validate(s: &Setup) -> std::result::Result<(), String> {
    let max = lossless_pipeline::PortSet::MAX;
    if !(2..=max).contains(&s.ports) {
        return Err(format!("--ports {}: a switch has 2–{max} ports", s.ports));
    }
    if !(64..=9216).contains(&s.frame) {
        return Err(format!("--frame {}: frames are 64–9216 bytes", s.frame));
    }
    if s.flows == 0 || s.flows > 1 << 20 {
        return Err(format!("--flows {}: 1 to 1048576 flows", s.flows));
    }
    Ok(())
}

/// Run the benchmark.
pub fn run(s: &Setup) -> std::result::Result<Result, String> {
    validate(s)?;
    let n = s.ports;
    let speed = Rate::gbps(100);
    let mut cfg = presets::basic(n, speed);
    cfg.pipeline_latency = Time::ZERO;
    // Flow f: host f on port f % n toward host f + 1 behind the port opposite.
    let port_of = |host: usize| host % n;
    let dst_of = |f: usize| f + n / 2;
    cfg.forwarding = Forwarding::L2 {
        static_fdb: (0..s.flows + n)
            .map(|h| (0, host_mac(h), port_of(h) as u16))
            .collect(),
        fdb_size: s.flows + n + 16,
        fdb_aging: Time::ZERO,
    };
    cfg.p4 = s.p4.as_ref().map(|model| lossless_pipeline::p4::P4Spec {
        model: model.clone(),
        file: String::new(),
        depth_unit: Default::default(),
    });
    let mut sw = Switch::new(cfg);
    let frames: Vec<(usize, Vec<u8>)> = (0..s.flows)
        .map(|f| {
            let spec = FrameSpec {
                src_mac: host_mac(f),
                dst_mac: host_mac(dst_of(f)),
                vlan: None,
                src_ip: [198, 18, (f >> 8) as u8, f as u8],
                // The port it leaves by (for a program's routes).
                dst_ip: [198, 19, 0, port_of(dst_of(f)) as u8],
                ipv6: false,
                dscp: 0,
                ecn: 0,
                src_port: 49_152 + (f % 16_384) as u16,
                dst_port: 5001,
                bth: None,
                len: s.frame,
            };
            let mut b = Vec::new();
            spec.write(&mut b)
                .map_err(|e| format!("a {}-byte frame: {e:?}", s.frame))?;
            Ok((port_of(f), b))
        })
        .collect::<std::result::Result<_, String>>()?;
    let step = speed.wire_time(s.frame as u64);
    let mut hist = Histogram::<u64>::new_with_bounds(1, 1_000_000_000, 3).expect("bounds");
    let mut t = Time::ZERO;
    let mut done = 0u64;
    let mut f = 0usize;
    let mut per_round = 0usize;
    let start = Instant::now();
    let deadline = start + s.duration;
    let want = s.frames.unwrap_or(u64::MAX);
    let mut batch_start = Instant::now();
    let mut sent: Vec<Vec<u8>> = Vec::with_capacity(n);
    while done < want {
        let (inp, data) = &frames[f];
        let mut buf = buffers::take(data.len());
        buf.extend_from_slice(data);
        // The engines' path: the node interface, every port due served.
        Node::receive(&mut sw, *inp, Packet::new(buf, s.frame), t);
        Node::poll_due(&mut sw, t, &mut |_, p| sent.push(p.data));
        for b in sent.drain(..) {
            buffers::give(b);
        }
        done += 1;
        f = (f + 1) % frames.len();
        per_round += 1;
        if per_round == n {
            per_round = 0;
            t += step;
        }
        if done.is_multiple_of(BATCH) {
            let now = Instant::now();
            let ns = (now - batch_start).as_nanos() as u64 / BATCH;
            let _ = hist.record(ns.max(1));
            batch_start = now;
            if s.frames.is_none() && now >= deadline {
                break;
            }
        }
    }
    let wall = start.elapsed().as_secs_f64();
    let q = |x: f64| hist.value_at_quantile(x) as f64;
    Ok(Result {
        machine: Machine::here(),
        ports: n,
        frame_bytes: s.frame,
        flows: s.flows,
        p4: s.p4.is_some(),
        frames: done,
        sent: sw.ledger().sent,
        drops: sw.drops().total(),
        wall_s: wall,
        mpps: done as f64 / wall / 1e6,
        gbps: done as f64 * s.frame as f64 * 8.0 / wall / 1e9,
        ns_per_frame: wall * 1e9 / done.max(1) as f64,
        batch_ns_per_frame: Percentiles {
            p50: q(0.5),
            p99: q(0.99),
            p999: q(0.999),
            max: hist.max() as f64,
        },
        instructions_per_frame: None,
    })
}

/// The text summary.
pub fn render(r: &Result) -> String {
    let mut o = format!(
        "bench pipeline{}: {} ports, {} B frames, {} flows, {} frames in {:.2} s on {} ({} CPUs)\n",
        if r.p4 { " (P4 program)" } else { "" },
        r.ports,
        r.frame_bytes,
        r.flows,
        r.frames,
        r.wall_s,
        r.machine.cpu_model,
        r.machine.cpus
    );
    o += &format!(
        "  {:.2} Mpps, {:.2} Gbit/s of frames, {:.1} ns per frame (batches of {BATCH}: p50 {:.0}, p99 {:.0}, p99.9 {:.0}, max {:.0} ns)\n",
        r.mpps, r.gbps, r.ns_per_frame, r.batch_ns_per_frame.p50, r.batch_ns_per_frame.p99,
        r.batch_ns_per_frame.p999, r.batch_ns_per_frame.max
    );
    match r.instructions_per_frame {
        Some(i) => o += &format!("  {i:.0} instructions per frame (cachegrind)\n"),
        None => o += "  instructions per frame: add --instructions (runs valgrind)\n",
    }
    if r.drops > 0 {
        o += &format!("  note: the switch dropped {} frames\n", r.drops);
    }
    o
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_fixed_count_goes_through_without_drops() {
        let r = run(&Setup {
            ports: 4,
            frame: 64,
            flows: 8,
            duration: Duration::from_secs(10),
            frames: Some(10_000),
            p4: None,
        })
        .unwrap();
        // Each frame is forwarded to the port opposite and leaves at once: one out per in.
        assert_eq!((r.sent, r.drops), (10_000, 0));
        let bad = Setup {
            ports: 1,
            frame: 64,
            flows: 1,
            duration: Duration::from_secs(1),
            frames: None,
            p4: None,
        };
        assert!(run(&bad).unwrap_err().contains("2–256 ports"));
    }

    #[test]
    fn the_shipped_router_with_its_bench_entries_forwards_every_frame() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
        let model = crate::config::switch::p4::load_files(
            &root.join("configs/p4/router.json"),
            Some(&root.join("configs/p4/bench-entries.txt")),
        )
        .unwrap();
        for ports in [2, 4, 256] {
            let r = run(&Setup {
                ports,
                frame: 64,
                flows: 512,
                duration: Duration::from_secs(10),
                frames: Some(5_000),
                p4: Some(std::sync::Arc::new(model.clone())),
            })
            .unwrap();
            assert_eq!((r.sent, r.drops), (5_000, 0), "{ports} ports");
        }
        // Without entries the router drops every frame: the program, not the FDB, forwards.
        let bare =
            crate::config::switch::p4::load_files(&root.join("configs/p4/router.json"), None)
                .unwrap();
        let r = run(&Setup {
            ports: 2,
            frame: 64,
            flows: 2,
            duration: Duration::from_secs(10),
            frames: Some(100),
            p4: Some(std::sync::Arc::new(bare)),
        })
        .unwrap();
        assert_eq!((r.sent, r.drops), (0, 100));
    }
}
