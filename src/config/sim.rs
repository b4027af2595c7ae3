//! The simulation half of a scenario: hosts, links, flows, events and outputs, resolved
//! against the switches (names → indices, addresses assigned, priorities classified the way
//! the attached switch will classify them).

use super::common::{line, list_or_none, mac_from_str, Resolver};
use super::error::ConfigError;
use super::raw::{self, Scalar, Val};
use super::resolve::SwitchSpec;
use lossless_buffer_model::{Bytes, Length, Rate, Time, PRIORITIES};
use lossless_pipeline::config::{Forwarding, Trust};
use lossless_pipeline::wire::build::FrameSpec;
use lossless_ports::flow::{FlowSpec, Limit, Pattern, OPCODE_RDMA_WRITE_ONLY};
use lossless_ports::host::{NicConfig, PfcMode, RxBuffer};
use std::path::PathBuf;
use std::str::FromStr;

/// A switch port: (switch index, port index).
pub type PortRef = (usize, usize);

/// A host, resolved.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HostSpec {
    /// Name.
    pub name: String,
    /// MAC.
    pub mac: [u8; 6],
    /// IPv4 address.
    pub ip: [u8; 4],
    /// The switch port it is cabled to.
    pub attach: PortRef,
    /// NIC settings.
    pub nic: NicConfig,
}

/// A switch-to-switch link.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LinkSpec {
    /// One end.
    pub a: PortRef,
    /// Other end.
    pub b: PortRef,
    /// One-way propagation.
    pub propagation: Time,
}

/// A flow, resolved.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FlowDef {
    /// Generator settings and headers.
    pub spec: FlowSpec,
    /// Sending host index.
    pub src: usize,
    /// Receiving host index.
    pub dst: usize,
}

/// Where an event acts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Target {
    /// A switch port.
    Switch(PortRef),
    /// A host NIC.
    Host(usize),
}

/// What an event does.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Action {
    /// Enable or disable the transmitter.
    Tx(bool),
    /// Bring the link up or down (both ends).
    Link(bool),
    /// Deliver a frame (bytes held, declared length) as if received.
    Inject(Vec<u8>, u32),
}

/// A scheduled event.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EventSpec {
    /// When.
    pub at: Time,
    /// Where.
    pub target: Target,
    /// What.
    pub action: Action,
}

/// Bytes of each frame a capture keeps unless `snaplen` says otherwise.
pub const DEFAULT_SNAPLEN: u32 = 128;

/// pcap output.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PcapOut {
    /// Ports to capture.
    pub ports: Vec<PortRef>,
    /// Bytes kept per frame.
    pub snaplen: u32,
    /// Directory.
    pub dir: PathBuf,
}

/// Time-series output.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TimeseriesOut {
    /// Sampling interval.
    pub interval: Time,
    /// CSV path.
    pub csv: PathBuf,
}

/// Output files.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Outputs {
    /// JSON report.
    pub json: Option<PathBuf>,
    /// pcap capture.
    pub pcap: Option<PcapOut>,
    /// CSV time series.
    pub timeseries: Option<TimeseriesOut>,
}

/// The measurement window: throughput, utilisation, pause fractions and latency
/// percentiles are computed over `[from, to]` (steady state, without start-up transients).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Measure {
    /// Start of the window.
    pub from: Time,
    /// End of the window (None: the end of the run).
    pub to: Option<Time>,
}

/// The simulation part of a scenario.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SimSpec {
    /// Hosts.
    pub hosts: Vec<HostSpec>,
    /// Switch-to-switch links.
    pub links: Vec<LinkSpec>,
    /// Flows.
    pub flows: Vec<FlowDef>,
    /// Events, in time order.
    pub events: Vec<EventSpec>,
    /// Outputs.
    pub outputs: Outputs,
    /// Measurement window.
    pub measure: Measure,
}

type Result<T> = std::result::Result<T, ConfigError>;

struct Ctx<'a> {
    r: &'a Resolver<'a>,
    switches: &'a [SwitchSpec],
}

impl Ctx<'_> {
    fn error<T>(&self, line: Option<u64>, key: &str, message: impl Into<String>) -> Result<T> {
        self.r.error(line, key, message)
    }

    fn unit<T: FromStr<Err = lossless_buffer_model::units::UnitError>>(
        &self,
        v: &Val<Scalar>,
        key: &str,
    ) -> Result<T> {
        self.r.parse_unit(v, key)
    }

    fn opt_unit<T: FromStr<Err = lossless_buffer_model::units::UnitError>>(
        &self,
        v: &Option<Val<Scalar>>,
        key: &str,
    ) -> Result<Option<T>> {
        v.as_ref().map(|v| self.unit(v, key)).transpose()
    }

    /// `switch:Port` → (switch, port).
    fn port_ref(&self, v: &Val<String>, key: &str) -> Result<PortRef> {
        let Some((sw, port)) = v.value.split_once(':') else {
            return self.error(
                line(v),
                key,
                format!(
                    "`{}` is not a port reference such as tor:Ethernet0",
                    v.value
                ),
            );
        };
        let Some(si) = self.switches.iter().position(|s| s.config.name == sw) else {
            let names: Vec<_> = self
                .switches
                .iter()
                .map(|s| s.config.name.as_str())
                .collect();
            return self.error(
                line(v),
                key,
                format!("unknown switch `{sw}` (switches: {})", names.join(", ")),
            );
        };
        let ports = &self.switches[si].config.ports;
        match ports.iter().position(|p| p.name == port) {
            Some(pi) => Ok((si, pi)),
            None => self.error(
                line(v),
                key,
                format!(
                    "switch `{sw}` has no port `{port}` (ports {}…{})",
                    ports[0].name,
                    ports[ports.len() - 1].name
                ),
            ),
        }
    }
}

/// Resolve hosts, links, flows, events and outputs of a scenario.
/// Warnings go to `r`.
pub fn resolve_sim(
    r: &Resolver,
    stem: &str,
    raw: &raw::ScenarioFile,
    switches: &[SwitchSpec],
    duration: Option<Time>,
) -> std::result::Result<SimSpec, ConfigError> {
    let cx = Ctx { r, switches };
    let mut sim = SimSpec::default();
    let mut used_ports: Vec<(PortRef, String)> = Vec::new();
    let mut claim = |cx: &Ctx, p: PortRef, by: String, at: Option<u64>, key: &str| -> Result<()> {
        if let Some((_, other)) = used_ports.iter().find(|(q, _)| *q == p) {
            let name = &switches[p.0].config.ports[p.1].name;
            return cx.error(
                at,
                key,
                format!(
                    "port {}:{name} is already cabled to {other}",
                    switches[p.0].config.name
                ),
            );
        }
        used_ports.push((p, by));
        Ok(())
    };
    for (i, h) in raw.hosts.iter().flatten().enumerate() {
        let k = format!("hosts[{i}]");
        let name = h.value.name.value.clone();
        if sim.hosts.iter().any(|o: &HostSpec| o.name == name)
            || switches.iter().any(|s| s.config.name == name)
        {
            return cx.error(
                line(&h.value.name),
                &format!("{k}.name"),
                format!("name `{name}` is used twice"),
            );
        }
        let attach = cx.port_ref(&h.value.attach, &format!("{k}.attach"))?;
        claim(
            &cx,
            attach,
            format!("host {name}"),
            line(&h.value.attach),
            &format!("{k}.attach"),
        )?;
        let n = i as u32 + 1;
        let mac = match &h.value.mac {
            None => [0x02, 0, 0, (n >> 16) as u8, (n >> 8) as u8, n as u8],
            Some(m) => mac_from_str(&m.value).map_or_else(
                || {
                    cx.error(
                        line(m),
                        &format!("{k}.mac"),
                        format!("`{}` is not a MAC address", m.value),
                    )
                },
                Ok,
            )?,
        };
        let ip = match &h.value.ip {
            None => [198, 18 + (n >> 16) as u8 % 2, (n >> 8) as u8, n as u8],
            Some(v) => match v.value.parse::<std::net::Ipv4Addr>() {
                Ok(a) => a.octets(),
                Err(_) => {
                    return cx.error(
                        line(v),
                        &format!("{k}.ip"),
                        format!("`{}` is not an IPv4 address", v.value),
                    )
                }
            },
        };
        let sw = &switches[attach.0].config;
        let nic = resolve_nic(
            &cx,
            &format!("{k}.nic"),
            h.value.nic.as_ref(),
            sw.qos.pfc_enable,
        )?;
        sim.hosts.push(HostSpec {
            name,
            mac,
            ip,
            attach,
            nic,
        });
    }
    for (i, l) in raw.links.iter().flatten().enumerate() {
        let k = format!("links[{i}]");
        let a = cx.port_ref(&l.value.a, &format!("{k}.a"))?;
        let b = cx.port_ref(&l.value.b, &format!("{k}.b"))?;
        claim(
            &cx,
            a,
            format!("link {}", l.value.b.value),
            line(&l.value.a),
            &format!("{k}.a"),
        )?;
        claim(
            &cx,
            b,
            format!("link {}", l.value.a.value),
            line(&l.value.b),
            &format!("{k}.b"),
        )?;
        let (pa, pb) = (
            &switches[a.0].config.ports[a.1],
            &switches[b.0].config.ports[b.1],
        );
        if pa.speed != pb.speed {
            return cx.error(
                line(l),
                &k,
                format!(
                    "{} runs at {} but {} at {}: both ends of a link have one speed",
                    l.value.a.value, pa.speed, l.value.b.value, pb.speed
                ),
            );
        }
        let cable: Option<Length> = cx.opt_unit(&l.value.cable, &format!("{k}.cable"))?;
        let delay: Option<Time> = cx.opt_unit(&l.value.delay, &format!("{k}.delay"))?;
        let propagation = match (cable, delay) {
            (Some(_), Some(_)) => {
                return cx.error(line(l), &k, "give `cable` or `delay`, not both")
            }
            (Some(c), None) => c.propagation(),
            (None, Some(d)) => d,
            (None, None) => pa.propagation(),
        };
        sim.links.push(LinkSpec { a, b, propagation });
    }
    for (i, f) in raw.flows.iter().flatten().enumerate() {
        let def = resolve_flow(&cx, i, f, &sim.hosts)?;
        sim.flows.push(def);
    }
    for (i, e) in raw.events.iter().flatten().enumerate() {
        let ev = resolve_event(&cx, i, e, &sim.hosts, duration)?;
        if let Some(w) = ev.1 {
            cx.r.warnings.borrow_mut().push(w);
        }
        sim.events.push(ev.0);
    }
    sim.events.sort_by_key(|e| e.at);
    if let Some(o) = &raw.outputs {
        sim.outputs = resolve_outputs(&cx, stem, o)?;
    }
    if let Some(m) = &raw.measure {
        sim.measure = resolve_measure(&cx, m, duration)?;
    }
    Ok(sim)
}

fn resolve_nic(
    cx: &Ctx,
    k: &str,
    nic: Option<&Val<raw::NicRaw>>,
    pfc_enable: u8,
) -> Result<NicConfig> {
    let mut out = NicConfig {
        pfc: PfcMode::Honor,
        pfc_response: Time::ZERO,
        rx_buffer: None,
        pfc_enable,
        pause_quanta: 0xFFFF,
    };
    let Some(n) = nic else { return Ok(out) };
    let n = &n.value;
    out.pfc = match n.pfc.as_ref().map(|p| (p.value.as_str(), line(p))) {
        None | Some(("honor", _)) | Some(("honour", _)) => PfcMode::Honor,
        Some(("ignore", _)) => PfcMode::Ignore,
        Some((other, l)) => {
            return cx.error(
                l,
                &format!("{k}.pfc"),
                format!("`{other}`: expected honor or ignore"),
            )
        }
    };
    out.pfc_response = cx
        .opt_unit(&n.pfc_response, &format!("{k}.pfc_response"))?
        .unwrap_or(Time::ZERO);
    let size: Option<Bytes> = cx.opt_unit(&n.rx_buffer, &format!("{k}.rx_buffer"))?;
    let drain: Option<Rate> = cx.opt_unit(&n.drain, &format!("{k}.drain"))?;
    let xoff: Option<Bytes> = cx.opt_unit(&n.pfc_xoff, &format!("{k}.pfc_xoff"))?;
    let xon: Option<Bytes> = cx.opt_unit(&n.pfc_xon, &format!("{k}.pfc_xon"))?;
    match (size, drain) {
        (None, None) => {
            if let Some(v) = n.pfc_xoff.as_ref().or(n.pfc_xon.as_ref()) {
                return cx.error(
                    line(v),
                    &format!("{k}.pfc_xoff"),
                    "XOFF/XON levels need rx_buffer and drain",
                );
            }
        }
        (Some(size), Some(drain)) => {
            let xoff = xoff.unwrap_or(Bytes(size.get() / 2));
            let xon = xon.unwrap_or(Bytes(xoff.get() / 2));
            if xoff > size {
                return cx.error(
                    n.pfc_xoff.as_ref().and_then(line),
                    &format!("{k}.pfc_xoff"),
                    format!("{xoff} is above rx_buffer {size}"),
                );
            }
            if xon >= xoff {
                return cx.error(
                    n.pfc_xon.as_ref().and_then(line),
                    &format!("{k}.pfc_xon"),
                    format!("{xon} is at or above pfc_xoff {xoff}"),
                );
            }
            out.rx_buffer = Some(RxBuffer {
                size,
                drain,
                xoff,
                xon,
            });
        }
        (Some(_), None) => {
            return cx.error(
                n.rx_buffer.as_ref().and_then(line),
                &format!("{k}.drain"),
                "a receive buffer needs a drain rate",
            )
        }
        (None, Some(_)) => {
            return cx.error(
                n.drain.as_ref().and_then(line),
                &format!("{k}.rx_buffer"),
                "a drain rate needs a receive buffer size",
            )
        }
    }
    Ok(out)
}

fn resolve_flow(cx: &Ctx, i: usize, f: &Val<raw::FlowRaw>, hosts: &[HostSpec]) -> Result<FlowDef> {
    let r = &f.value;
    let name = r
        .name
        .as_ref()
        .map_or_else(|| format!("flow{i}"), |n| n.value.clone());
    let k = format!("flows.{name}");
    let host = |v: &Val<String>, key: &str| -> Result<usize> {
        hosts.iter().position(|h| h.name == v.value).map_or_else(
            || {
                let names: Vec<_> = hosts.iter().map(|h| h.name.as_str()).collect();
                cx.error(
                    line(v),
                    key,
                    format!(
                        "unknown host `{}` (hosts: {})",
                        v.value,
                        list_or_none(&names)
                    ),
                )
            },
            Ok,
        )
    };
    let src = host(&r.src, &format!("{k}.src"))?;
    let dst = host(&r.dst, &format!("{k}.dst"))?;
    if src == dst {
        return cx.error(
            line(&r.dst),
            &format!("{k}.dst"),
            "a flow needs two different hosts",
        );
    }
    let rocev2 = match r.protocol.as_ref().map(|p| (p.value.as_str(), line(p))) {
        None | Some(("udp", _)) => false,
        Some(("rocev2", _)) => true,
        Some((other, l)) => {
            return cx.error(
                l,
                &format!("{k}.protocol"),
                format!("`{other}`: expected udp or rocev2"),
            )
        }
    };
    let dscp = match &r.dscp {
        None => 0,
        Some(d) if (0..=63).contains(&d.value) => d.value as u8,
        Some(d) => {
            return cx.error(
                line(d),
                &format!("{k}.dscp"),
                format!("{} is outside 0–63", d.value),
            )
        }
    };
    let ecn = match r.ecn.as_ref().map(|e| (e.value.as_str(), line(e))) {
        None | Some(("not_ect", _)) => 0,
        Some(("ect1", _)) => 1,
        Some(("ect0", _)) => 2,
        Some(("ce", _)) => 3,
        Some((other, l)) => {
            return cx.error(
                l,
                &format!("{k}.ecn"),
                format!("`{other}`: expected not_ect, ect0, ect1 or ce"),
            )
        }
    };
    let vlan = match &r.vlan {
        None => None,
        Some(v) => {
            let vid = v.value.vid.value;
            if !(0..=4095).contains(&vid) {
                return cx.error(
                    line(&v.value.vid),
                    &format!("{k}.vlan.vid"),
                    format!("{vid} is outside 0–4095"),
                );
            }
            let pcp = v.value.pcp.as_ref().map_or(Ok(0), |p| {
                if (0..=7).contains(&p.value) {
                    Ok(p.value as u8)
                } else {
                    cx.error(
                        line(p),
                        &format!("{k}.vlan.pcp"),
                        format!("{} is outside 0–7", p.value),
                    )
                }
            })?;
            Some((vid as u16, pcp))
        }
    };
    let (hs, hd) = (&hosts[src], &hosts[dst]);
    let sw = &cx.switches[hs.attach.0].config;
    let dst_mac = match sw.forwarding {
        Forwarding::L2 { .. } => hd.mac,
        Forwarding::L3 { .. } => sw.ports[hs.attach.1].mac,
    };
    let frame: Bytes = cx
        .opt_unit(&r.frame, &format!("{k}.frame"))?
        .unwrap_or(Bytes(1518));
    let headers = FrameSpec {
        src_mac: hs.mac,
        dst_mac,
        vlan,
        src_ip: hs.ip,
        dst_ip: hd.ip,
        dscp,
        ecn,
        src_port: r
            .src_port
            .as_ref()
            .map_or(49_152 + (i as u16 % 16_384), |p| p.value),
        dst_port: if rocev2 {
            4791
        } else {
            r.dst_port.as_ref().map_or(5001, |p| p.value)
        },
        bth: rocev2.then_some((OPCODE_RDMA_WRITE_ONLY, i as u32 + 1, 0)),
        len: frame.get().min(u32::MAX as u64) as u32,
    };
    let min = headers.min_len();
    let mtu = sw.ports[hs.attach.1].mtu;
    if frame.get() < min as u64 || frame.get() > mtu as u64 {
        return cx.error(
            r.frame.as_ref().and_then(line).or(line(f)),
            &format!("{k}.frame"),
            format!("{frame}: frames of this flow are {min}–{mtu} bytes (headers, port MTU)"),
        );
    }
    let rate: Option<Rate> = cx.opt_unit(&r.rate, &format!("{k}.rate"))?;
    let pattern = match r.pattern.as_ref().map(|p| (p.value.as_str(), line(p))) {
        None | Some(("greedy", _)) => {
            if let Some(v) = &r.rate {
                return cx.error(
                    line(v),
                    &format!("{k}.rate"),
                    "a greedy flow has no rate (use pattern: cbr)",
                );
            }
            Pattern::Greedy
        }
        Some(("cbr", l)) => match rate {
            Some(rate) => Pattern::Cbr { rate },
            None => return cx.error(l, &format!("{k}.rate"), "a cbr flow needs a rate"),
        },
        Some(("onoff", l)) => {
            let on: Option<Time> = cx.opt_unit(&r.on, &format!("{k}.on"))?;
            let off: Option<Time> = cx.opt_unit(&r.off, &format!("{k}.off"))?;
            match (on, off) {
                (Some(on), Some(off)) if on > Time::ZERO => Pattern::OnOff { on, off, rate },
                _ => {
                    return cx.error(
                        l,
                        &format!("{k}.on"),
                        "an onoff flow needs `on` (> 0) and `off` times",
                    )
                }
            }
        }
        Some((other, l)) => {
            return cx.error(
                l,
                &format!("{k}.pattern"),
                format!("`{other}`: expected greedy, cbr or onoff"),
            )
        }
    };
    let size: Option<Bytes> = cx.opt_unit(&r.size, &format!("{k}.size"))?;
    let limit = match (size, &r.packets) {
        (Some(_), Some(p)) => return cx.error(line(p), &k, "give `size` or `packets`, not both"),
        (Some(b), None) => Limit::Bytes(b.get()),
        (None, Some(p)) => Limit::Packets(p.value),
        (None, None) => Limit::Unbounded,
    };
    let start: Time = cx
        .opt_unit(&r.start, &format!("{k}.start"))?
        .unwrap_or(Time::ZERO);
    let stop: Option<Time> = cx.opt_unit(&r.stop, &format!("{k}.stop"))?;
    if stop.is_some_and(|s| s <= start) {
        return cx.error(
            r.stop.as_ref().and_then(line),
            &format!("{k}.stop"),
            "stop must come after start",
        );
    }
    // The NIC queues a flow on the class the attached switch will give it.
    let priority = match &r.priority {
        Some(p) if (0..=7).contains(&p.value) => p.value as u8,
        Some(p) => {
            return cx.error(
                line(p),
                &format!("{k}.priority"),
                format!("{} is outside 0–7", p.value),
            )
        }
        None => match (sw.qos.trust, vlan) {
            (Trust::Dscp, _) => sw.qos.dscp_to_tc[dscp as usize],
            (Trust::Dot1p, Some((_, pcp))) => sw.qos.dot1p_to_tc[pcp as usize],
            (Trust::Dot1p, None) => 0,
        },
    };
    debug_assert!((priority as usize) < PRIORITIES);
    let spec = FlowSpec {
        name,
        id: i as u32 + 1,
        headers,
        priority,
        pattern,
        limit,
        start,
        stop,
    };
    Ok(FlowDef { spec, src, dst })
}

fn resolve_event(
    cx: &Ctx,
    i: usize,
    e: &Val<raw::EventRaw>,
    hosts: &[HostSpec],
    duration: Option<Time>,
) -> Result<(EventSpec, Option<ConfigError>)> {
    let k = format!("events[{i}]");
    let r = &e.value;
    let at: Time = cx.unit(&r.at, &format!("{k}.at"))?;
    let target = match hosts.iter().position(|h| h.name == r.port.value) {
        Some(h) => Target::Host(h),
        None => Target::Switch(cx.port_ref(&r.port, &format!("{k}.port"))?),
    };
    let given = r.tx.is_some() as u8 + r.link.is_some() as u8 + r.inject.is_some() as u8;
    if given != 1 {
        return cx.error(
            line(e),
            &k,
            "an event does exactly one of `tx`, `link` or `inject`",
        );
    }
    let action = if let Some(t) = &r.tx {
        match t.value.as_str() {
            "enable" => Action::Tx(true),
            "disable" => Action::Tx(false),
            other => {
                return cx.error(
                    line(t),
                    &format!("{k}.tx"),
                    format!("`{other}`: expected enable or disable"),
                )
            }
        }
    } else if let Some(l) = &r.link {
        match l.value.as_str() {
            "up" => Action::Link(true),
            "down" => Action::Link(false),
            other => {
                return cx.error(
                    line(l),
                    &format!("{k}.link"),
                    format!("`{other}`: expected up or down"),
                )
            }
        }
    } else {
        let inj = &r.inject.as_ref().expect("counted above").value;
        if matches!(target, Target::Host(_)) {
            return cx.error(
                line(&r.port),
                &format!("{k}.port"),
                "frames are injected into switch ports",
            );
        }
        match (&inj.pfc, &inj.hex) {
            (Some(pfc), None) => {
                let mut enable = 0u8;
                let mut quanta = [0u16; 8];
                for (p, q) in &pfc.value {
                    let Ok(p) = p.parse::<usize>() else {
                        return cx.error(
                            line(q),
                            &format!("{k}.inject.pfc.{p}"),
                            "keys are priorities 0–7",
                        );
                    };
                    if p > 7 {
                        return cx.error(
                            line(q),
                            &format!("{k}.inject.pfc.{p}"),
                            format!("priority {p} is outside 0–7"),
                        );
                    }
                    if !(0..=65_535).contains(&q.value) {
                        return cx.error(
                            line(q),
                            &format!("{k}.inject.pfc.{p}"),
                            format!("{} quanta: a pause time is 0–65535 quanta", q.value),
                        );
                    }
                    enable |= 1 << p;
                    quanta[p] = q.value as u16;
                }
                let mut data = Vec::new();
                lossless_pipeline::wire::pfc::emit_pfc(
                    &mut data,
                    [0x02, 0xFE, 0, 0, 0, 1],
                    enable,
                    &quanta,
                );
                Action::Inject(data, lossless_pipeline::wire::pfc::PFC_FRAME_LEN)
            }
            (None, Some(hex)) => {
                let clean: String = hex
                    .value
                    .chars()
                    .filter(|c| !c.is_whitespace() && *c != ':')
                    .collect();
                if !clean.len().is_multiple_of(2) || !clean.chars().all(|c| c.is_ascii_hexdigit()) {
                    return cx.error(
                        line(hex),
                        &format!("{k}.inject.hex"),
                        "not an even number of hex digits",
                    );
                }
                let data: Vec<u8> = (0..clean.len())
                    .step_by(2)
                    .map(|j| u8::from_str_radix(&clean[j..j + 2], 16).expect("hex checked"))
                    .collect();
                let len = match &inj.len {
                    None => data.len() as u32 + 4,
                    Some(v) => {
                        let b: Bytes = cx.unit(v, &format!("{k}.inject.len"))?;
                        if b.get() < data.len() as u64 + 4 {
                            return cx.error(
                                line(v),
                                &format!("{k}.inject.len"),
                                format!(
                                    "{b} is shorter than the {} bytes given plus FCS",
                                    data.len()
                                ),
                            );
                        }
                        b.get() as u32
                    }
                };
                Action::Inject(data, len)
            }
            _ => {
                return cx.error(
                    line(&r.port),
                    &format!("{k}.inject"),
                    "inject takes `pfc` or `hex`",
                )
            }
        }
    };
    let warning = duration.filter(|d| at >= *d).map(|d| ConfigError {
        file: cx.r.file.into(),
        line: line(&r.at),
        key: format!("{k}.at"),
        message: format!("{at} is at or after the end of the run ({d}): the event never happens"),
    });
    Ok((EventSpec { at, target, action }, warning))
}

fn resolve_measure(cx: &Ctx, m: &Val<raw::MeasureRaw>, duration: Option<Time>) -> Result<Measure> {
    let from: Time = cx
        .opt_unit(&m.value.from, "measure.from")?
        .unwrap_or(Time::ZERO);
    let to: Option<Time> = cx.opt_unit(&m.value.to, "measure.to")?;
    let at = |v: &Option<Val<Scalar>>| v.as_ref().and_then(line).or(line(m));
    if let Some(to) = to {
        if to <= from {
            return cx.error(
                at(&m.value.to),
                "measure.to",
                format!("{to} is not after measure.from {from}: the window would be empty"),
            );
        }
    }
    if let Some(d) = duration {
        if from >= d {
            return cx.error(
                at(&m.value.from),
                "measure.from",
                format!("{from} is at or after the end of the run ({d})"),
            );
        }
        if to.is_some_and(|t| t > d) {
            return cx.error(
                at(&m.value.to),
                "measure.to",
                format!(
                    "{} is after the end of the run ({d}); leave `to` out to measure to the end",
                    to.unwrap_or_default()
                ),
            );
        }
    }
    Ok(Measure { from, to })
}

fn resolve_outputs(cx: &Ctx, stem: &str, o: &Val<raw::OutputsRaw>) -> Result<Outputs> {
    let o = &o.value;
    let mut out = Outputs {
        json: o.json.as_ref().map(|j| PathBuf::from(&j.value)),
        ..Outputs::default()
    };
    if let Some(p) = &o.pcap {
        let mut ports = Vec::new();
        for (i, v) in p.value.ports.iter().enumerate() {
            ports.push(cx.port_ref(v, &format!("outputs.pcap.ports[{i}]"))?);
        }
        let snaplen = p.value.snaplen.as_ref().map_or(Ok(DEFAULT_SNAPLEN), |s| {
            if (14..=65_535).contains(&s.value) {
                Ok(s.value)
            } else {
                cx.error(
                    line(s),
                    "outputs.pcap.snaplen",
                    format!("{} is outside 14–65535", s.value),
                )
            }
        })?;
        let dir = p.value.dir.as_ref().map_or_else(
            || PathBuf::from("out").join(stem),
            |d| PathBuf::from(&d.value),
        );
        out.pcap = Some(PcapOut {
            ports,
            snaplen,
            dir,
        });
    }
    if let Some(t) = &o.timeseries {
        let interval: Time = cx.unit(&t.value.interval, "outputs.timeseries.interval")?;
        if interval == Time::ZERO {
            return cx.error(
                line(&t.value.interval),
                "outputs.timeseries.interval",
                "must be above 0",
            );
        }
        let csv = t.value.csv.as_ref().map_or_else(
            || PathBuf::from("out").join(format!("{stem}-timeseries.csv")),
            |c| PathBuf::from(&c.value),
        );
        out.timeseries = Some(TimeseriesOut { interval, csv });
    }
    Ok(out)
}
