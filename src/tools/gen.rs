//! `lossless gen`: a paced, PFC-honouring sender on an `AF_PACKET` socket.
//!
//! It runs the simulator's host NIC model ([`Host`] with one constant-bit-rate [`FlowTx`])
//! on the [wall-clock driver](crate::wallclock) that runs `lossless tap`'s switch, with
//! one port: its packet socket. PFC frames that reach the socket go to the NIC's pause
//! timers, and the NIC decides when the next frame may start — so the generator paces and
//! pauses exactly as a simulated host does. One thread does everything: before each frame
//! it takes in whatever the switch has sent (a pause acts before the next frame, not after
//! another thread wakes up), and it waits for the next slot or for a frame from the
//! switch, whichever comes first. A wake-up that comes late may send the slots it missed in
//! a short burst (the NIC's catch-up window); slots missed while paused are skipped and
//! counted, never made up.

use crate::config::defaults;
use crate::report::model::TurnsReport;
use crate::wallclock::{Driver, Input, Pacing, Ports, Wait};
use lossless_buffer_model::{Rate, Time, PRIORITIES};
use lossless_pipeline::wire::build::FrameSpec;
use lossless_pipeline::wire::rocev2::{OPCODE_SEND_ONLY, ROCEV2_PORT};
use lossless_pipeline::Packet;
use lossless_ports::flow::{FlowSpec, FlowTx, Limit, Pattern, Transport};
use lossless_ports::host::{Host, NicConfig, PfcMode};
use lossless_sys::netdev::{if_mac, if_mtu};
use lossless_sys::packet::PacketSocket;
use lossless_sys::sched::{set_timer_slack, Realtime};
use serde::Serialize;
use std::io;
use std::ops::ControlFlow;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

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
    /// Link speed: turns pause quanta into time and bounds the NIC's sending rate.
    pub link_speed: Rate,
    /// UDP destination port (plain UDP).
    pub dst_port: u16,
    /// Real-time priority for the sending thread.
    pub realtime: Realtime,
}

/// How far a late wake-up may date frames back: a bounded burst (500 µs = 40 frames of
/// 1518 B at 1G) so that OS timer lateness does not cost rate.
const CATCH_UP: Time = Time::from_us(500);
/// How the sender waits: until its next slot plus 50 µs, to send a few frames per wake-up
/// (a frame from the switch still wakes it at once), at most 20 ms so that the stop flag is
/// seen; every wait ends at the first frame from the switch.
const PACING: Pacing = Pacing {
    min_wait: Duration::ZERO,
    max_wait: Duration::from_millis(20),
    slack: Duration::from_micros(50),
    moderation: None,
    batch: 256,
};
/// Real-time priority of the sending thread.
const GEN_PRIORITY: i32 = 5;

/// What `lossless gen` did (printed as JSON).
#[derive(Clone, Debug, Serialize)]
pub struct GenReport {
    /// Interface it sent on.
    pub iface: String,
    /// Frames sent.
    pub frames: u64,
    /// Bytes sent (FCS included).
    pub bytes: u64,
    /// Frames the socket refused.
    pub send_errors: u64,
    /// How long it sent, seconds.
    pub duration_s: f64,
    /// Frame bits sent per second.
    pub rate_bps: f64,
    /// Line-rate bits (preamble and gap included) per second.
    pub line_rate_bps: f64,
    /// CBR slots skipped while paused or late.
    pub skipped_slots: u64,
    /// Priority the frames were queued on.
    pub priority: u8,
    /// Time paused, per priority, ps.
    pub paused_ps: [u64; PRIORITIES],
    /// PFC frames received.
    pub pfc_rx_frames: u64,
    /// PFC received per priority.
    pub pfc: GenPfcReport,
    /// Stopped by a signal before its duration.
    pub stopped_early: bool,
    /// The sending thread ran with real-time priority.
    pub realtime: bool,
    /// Its turns, timed (the stall detector of `lossless tap`'s report): a stall here
    /// is a slot sent late.
    pub turns: TurnsReport,
}

/// PFC frames the generator received, per priority.
#[derive(Clone, Debug, Serialize)]
pub struct GenPfcReport {
    /// XOFF received.
    pub rx_xoff: [u64; PRIORITIES],
    /// XON received.
    pub rx_xon: [u64; PRIORITIES],
}

impl GenReport {
    /// As a JSON value (keys sorted, as every report is written).
    pub fn to_value(&self) -> serde_json::Value {
        serde_json::to_value(self).expect("a report serializes")
    }
}

/// The generator's one flow: CBR at the configured rate until `end`.
fn flow_spec(cfg: &GenConfig, src_mac: [u8; 6], end: Time) -> FlowSpec {
    FlowSpec {
        name: "gen".into(),
        id: 1,
        headers: FrameSpec {
            src_mac,
            dst_mac: cfg.dst_mac,
            vlan: None,
            src_ip: cfg.src_ip,
            dst_ip: cfg.dst_ip,
            ipv6: false,
            dscp: cfg.dscp,
            ecn: cfg.ecn,
            src_port: defaults::SRC_PORT_BASE,
            dst_port: if cfg.rocev2 {
                ROCEV2_PORT
            } else {
                cfg.dst_port
            },
            bth: cfg.rocev2.then_some((OPCODE_SEND_ONLY, 1, 0)),
            len: cfg.frame,
        },
        priority: cfg.priority,
        pattern: Pattern::Cbr { rate: cfg.rate },
        limit: Limit::Unbounded,
        start: Time::ZERO,
        stop: Some(end),
        transport: Transport::OpenLoop,
    }
}

/// Run the generator until its duration has passed or `stop` is set; returns its summary.
pub fn gen(cfg: &GenConfig, stop: &AtomicBool) -> io::Result<GenReport> {
    // Frame spacing is microseconds: the default 50 µs timer slack would make every sleep late.
    let _ = set_timer_slack(1_000);
    let realtime = cfg.realtime.apply(GEN_PRIORITY).map_err(|e| {
        io::Error::new(e.kind(), format!("real-time priority (--realtime on): {e}"))
    })?;
    let sock = PacketSocket::open(&cfg.iface)?;
    let src_mac = if_mac(&cfg.iface)?;
    let largest = if_mtu(&cfg.iface)? + 18;
    if cfg.frame < 64 || cfg.frame > largest {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!(
                "--frame {}: frames on {} are 64–{largest} bytes (its MTU {} + 14-byte header + 4-byte FCS)",
                cfg.frame,
                cfg.iface,
                largest - 18
            ),
        ));
    }
    let end = Time::from_duration(cfg.duration);
    let spec = flow_spec(cfg, src_mac, end);
    let flow = FlowTx::new(spec)
        .map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, format!("frame: {e:?}")))?;
    // It honours a pause of any priority at once (what the switch pauses is its business).
    let nic = NicConfig {
        pfc: PfcMode::Honor,
        pfc_enable: 0xFF,
        ..NicConfig::default()
    };
    let mut host = Host::new(cfg.iface.clone(), src_mac, cfg.link_speed, nic, vec![flow]);
    host.set_catch_up(CATCH_UP);
    let mut d = Driver::new(host, SocketPort::new(sock), PACING);
    let until = d.started() + cfg.duration;
    d.run(stop, Some(until), |d| match d.ports.failed {
        Some(_) => ControlFlow::Break(()),
        None => ControlFlow::Continue(()),
    });
    if let Some(e) = d.ports.failed.take() {
        return Err(e);
    }
    let elapsed = d.now().min(end).max(Time(1));
    let (host, port) = (&d.node, &d.ports);
    let f = &host.flows[0];
    let secs = elapsed.as_secs_f64();
    let c = &host.link.tx.counters;
    Ok(GenReport {
        iface: cfg.iface.clone(),
        frames: f.tx_packets,
        bytes: f.tx_bytes,
        send_errors: port.send_errors,
        duration_s: secs,
        rate_bps: f.tx_bytes as f64 * 8.0 / secs,
        line_rate_bps: (f.tx_bytes + 20 * f.tx_packets) as f64 * 8.0 / secs,
        skipped_slots: f.skipped_slots,
        priority: cfg.priority,
        paused_ps: core::array::from_fn(|p| host.paused_time(p, elapsed).as_ps()),
        pfc_rx_frames: c.rx_pfc_frames,
        pfc: GenPfcReport {
            rx_xoff: c.pfc.rx_xoff,
            rx_xon: c.pfc.rx_xon,
        },
        stopped_early: stop.load(Ordering::Relaxed),
        realtime,
        turns: d.turns().report(),
    })
}

/// The generator's one port: a packet socket on its interface.
struct SocketPort {
    sock: PacketSocket,
    /// Where a frame from the switch is read.
    buf: Vec<u8>,
    /// Frames the socket refused.
    send_errors: u64,
    /// The last take stopped at its most frames.
    more: bool,
    /// The socket failed to receive (the interface went away): the generator stops.
    failed: Option<io::Error>,
}

impl SocketPort {
    fn new(sock: PacketSocket) -> SocketPort {
        SocketPort {
            sock,
            buf: vec![0; 65_536],
            send_errors: 0,
            more: false,
            failed: None,
        }
    }
}

impl Ports for SocketPort {
    /// Frames from the switch (PFC frames act on the pause timers); the socket's own sent
    /// frames, which it sees again, are left out.
    fn take(&mut self, wait: Wait, max: usize, into: &mut Vec<Input>) -> Duration {
        let t = Instant::now();
        let first = match wait {
            Wait::Arrival(d) => self.sock.recv(&mut self.buf, d),
            Wait::Gather(d) => {
                std::thread::sleep(d);
                self.sock.recv(&mut self.buf, Duration::ZERO)
            }
        };
        let waited = t.elapsed();
        let mut next = first;
        let mut taken = 0;
        loop {
            match next {
                Ok(Some(n)) => {
                    if n > 0 {
                        into.push(Input::Frame(0, Packet::from_wire(self.buf[..n].to_vec())));
                        taken += 1;
                    }
                }
                Ok(None) => break,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => {
                    self.failed = Some(e);
                    break;
                }
            }
            if taken >= max {
                break;
            }
            next = self.sock.recv(&mut self.buf, Duration::ZERO);
        }
        self.more = taken >= max;
        waited
    }

    fn more_waiting(&self) -> bool {
        self.more
    }

    /// The model holds headers only; the wire wants the whole frame (no FCS).
    fn send(&mut self, _port: usize, mut pkt: Packet) {
        pkt.data.resize(pkt.len as usize - 4, 0);
        if self.sock.send(&pkt.data).is_err() {
            self.send_errors += 1;
        }
        lossless_pipeline::buffers::give(pkt.data);
    }

    fn flush(&mut self, _started: usize) {}
}
