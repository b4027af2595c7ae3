//! Tools for TAP labs and tests, on an `AF_PACKET` socket inside a namespace:
//!
//! * `send-pfc`: send 802.1Qbb frames (Linux cannot: it has no PFC).
//! * `gen`: a PFC-honouring traffic generator — what an RDMA NIC does and a Linux host does
//!   not. It paces UDP or RoCEv2 frames at a rate, stops a priority while it is paused
//!   (per-priority timers, as the switch keeps them), and prints a JSON summary.

use lossless_buffer_model::pfc::PauseTimers;
use lossless_buffer_model::{Rate, Time, PRIORITIES};
use lossless_pipeline::counters::PfcCounters;
use lossless_pipeline::parser::{parse, MacControl};
use lossless_pipeline::wire::build::FrameSpec;
use lossless_pipeline::wire::pfc::emit_pfc;
use lossless_ports::flow::OPCODE_RDMA_WRITE_ONLY;
use lossless_ports::sys::{if_mac, PacketSocket};
use serde_json::{json, Value};
use std::io;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Send `count` PFC frames on `iface`, `interval` apart, pausing `prios` for `quanta`
/// (0 = XON). Returns how many were sent.
pub fn send_pfc(
    iface: &str,
    prios: u8,
    quanta: u16,
    count: u64,
    interval: Duration,
) -> io::Result<u64> {
    let sock = PacketSocket::open(iface)?;
    let src = if_mac(iface)?;
    let mut q = [0u16; 8];
    for (p, v) in q.iter_mut().enumerate() {
        if prios & (1 << p) != 0 {
            *v = quanta;
        }
    }
    let mut frame = Vec::new();
    emit_pfc(&mut frame, src, prios, &q);
    let mut sent = 0;
    for i in 0..count {
        if i > 0 && !interval.is_zero() {
            std::thread::sleep(interval);
        }
        sock.send(&frame)?;
        sent += 1;
    }
    Ok(sent)
}

/// Settings of `gen`.
#[derive(Clone, Debug)]
pub struct GenConfig {
    /// Interface (inside the sender's namespace).
    pub iface: String,
    /// Destination MAC.
    pub dst_mac: [u8; 6],
    /// Destination IPv4.
    pub dst_ip: [u8; 4],
    /// Source IPv4.
    pub src_ip: [u8; 4],
    /// DSCP.
    pub dscp: u8,
    /// ECN field.
    pub ecn: u8,
    /// PFC priority this traffic is queued on (paused by PFC for this priority).
    pub priority: u8,
    /// Offered rate (line-rate bits: frame + preamble + IFG).
    pub rate: Rate,
    /// Frame length, FCS included.
    pub frame: u32,
    /// How long to send.
    pub duration: Duration,
    /// RoCEv2 (BTH) instead of plain UDP.
    pub rocev2: bool,
    /// Link speed that converts pause quanta to time.
    pub link_speed: Rate,
    /// UDP destination port (plain UDP).
    pub dst_port: u16,
}

/// How far a late sender may catch up on slots it missed because the OS woke it late
/// (a bounded burst, 500 µs = 40 frames of 1518 B at 1G); slots missed while paused are
/// skipped and counted instead.
const GEN_CATCH_UP: Duration = Duration::from_micros(500);
/// How far past its next slot the sender sleeps, to send a few frames per wake-up.
const PACE_BATCH: Time = Time::from_us(50);
/// While paused, look at the pause timers this often (an XON may come any time).
const PAUSE_RECHECK: Time = Time::from_us(20);

/// Run the generator; returns its JSON summary.
pub fn gen(cfg: &GenConfig) -> io::Result<Value> {
    // Frame spacing is microseconds: the default 50 µs timer slack would make every sleep late.
    let _ = lossless_ports::sys::set_timer_slack(1_000);
    let sock = Arc::new(PacketSocket::open(&cfg.iface)?);
    let src_mac = if_mac(&cfg.iface)?;
    let spec = FrameSpec {
        src_mac,
        dst_mac: cfg.dst_mac,
        vlan: None,
        src_ip: cfg.src_ip,
        dst_ip: cfg.dst_ip,
        dscp: cfg.dscp,
        ecn: cfg.ecn,
        src_port: 49_152,
        dst_port: cfg.dst_port,
        bth: cfg.rocev2.then_some((OPCODE_RDMA_WRITE_ONLY, 1, 0)),
        len: cfg.frame,
    };
    let mut frame = Vec::new();
    spec.write(&mut frame)
        .map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, format!("frame: {e:?}")))?;
    frame.resize(cfg.frame as usize - 4, 0);
    let start = Instant::now();
    let clock = move || Time(start.elapsed().as_nanos() as u64 * 1000);
    // Receiver: PFC frames reload the pause timers.
    let pause = Arc::new(Mutex::new((
        PauseTimers::new(cfg.link_speed, Time::ZERO),
        PfcCounters::default(),
        0u64,
    )));
    let stop = Arc::new(AtomicBool::new(false));
    let rx_thread = {
        let (sock, pause, stop) = (Arc::clone(&sock), Arc::clone(&pause), Arc::clone(&stop));
        std::thread::spawn(move || {
            let mut buf = vec![0u8; 65_536];
            while !stop.load(Ordering::Relaxed) {
                let Ok(Some(n)) = sock.recv(&mut buf, Duration::from_millis(20)) else {
                    continue;
                };
                if n == 0 {
                    continue;
                }
                if let Ok(p) = parse(&buf[..n], n as u32 + 4) {
                    if let Some(MacControl::Pfc { enable, quanta }) = p.mac_control {
                        let now = clock();
                        let mut g = pause.lock().expect("pause lock");
                        let (timers, counters, frames) = &mut *g;
                        timers.receive(now, enable, &quanta);
                        PfcCounters::count(
                            &mut counters.rx_xoff,
                            &mut counters.rx_xon,
                            enable,
                            &quanta,
                        );
                        *frames += 1;
                    }
                }
            }
        })
    };
    let interval = cfg.rate.wire_time(cfg.frame as u64);
    let (mut sent, mut bytes, mut skipped, mut errors) = (0u64, 0u64, 0u64, 0u64);
    let mut next = Time::ZERO;
    let mut paused_since: Option<Time> = None;
    let end = Time(cfg.duration.as_nanos() as u64 * 1000);
    let catch_up = Time(GEN_CATCH_UP.as_nanos() as u64 * 1000);
    loop {
        let now = clock();
        if now >= end {
            break;
        }
        let resume = pause
            .lock()
            .expect("pause lock")
            .0
            .resume_at(cfg.priority as usize, now);
        if resume > now {
            // Wait in short steps: an XON (time 0) may end the pause long before `resume`.
            sleep_until(start, resume.min(end).min(now + PAUSE_RECHECK));
            paused_since.get_or_insert(now);
            continue;
        }
        if let Some(since) = paused_since.take() {
            // Slots that passed while paused are skipped, not made up later.
            let from = next.max(since);
            skipped += now.saturating_sub(from).as_ps() / interval.as_ps().max(1);
            next = next.max(now);
        }
        if now < next {
            // Wake a little past the slot and send the few frames then due in one go:
            // one wake-up per frame would cost more CPU than the sending.
            sleep_until(start, next + PACE_BATCH);
            continue;
        }
        if now.saturating_sub(next) > catch_up {
            let behind = now - catch_up - next;
            skipped += behind.as_ps() / interval.as_ps().max(1);
            next = now - catch_up;
        }
        match sock.send(&frame) {
            Ok(_) => {
                sent += 1;
                bytes += cfg.frame as u64;
            }
            Err(_) => errors += 1,
        }
        next += interval;
    }
    // Rates are over the sending window, not the receiver thread's shutdown.
    let elapsed = clock();
    stop.store(true, Ordering::Relaxed);
    let _ = rx_thread.join();
    let g = pause.lock().expect("pause lock");
    let paused: [u64; PRIORITIES] = core::array::from_fn(|p| g.0.paused_total(p, elapsed).as_ps());
    Ok(json!({
        "iface": cfg.iface,
        "frames": sent,
        "bytes": bytes,
        "send_errors": errors,
        "duration_s": elapsed.as_secs_f64(),
        "rate_bps": bytes as f64 * 8.0 / elapsed.as_secs_f64().max(1e-9),
        "line_rate_bps": (bytes + 20 * sent) as f64 * 8.0 / elapsed.as_secs_f64().max(1e-9),
        "skipped_slots": skipped,
        "priority": cfg.priority,
        "paused_ps": paused,
        "pfc_rx_frames": g.2,
        "pfc": {"rx_xoff": g.1.rx_xoff, "rx_xon": g.1.rx_xon},
    }))
}

fn sleep_until(start: Instant, t: Time) {
    let target = start + Duration::from_nanos(t.as_ps() / 1000);
    let now = Instant::now();
    if target > now {
        std::thread::sleep(target - now);
    }
}
