//! `flows:`: traffic between two hosts — headers (UDP or RoCEv2, DSCP, ECN, VLAN), frame
//! size, pattern (greedy, cbr, onoff), volume and timing. A flow is queued on the priority
//! the sender's switch will classify it into, unless `priority` says otherwise.

use super::PatchPanel;
use crate::config::defaults;
use crate::config::diag::{Diag, Key};
use crate::config::scenario::{FlowDef, HostSpec};
use crate::config::schema::{FlowRaw, RcRaw, Val};
use crate::config::values::{line, list_or_none};
use crate::config::words::{IpVersion, PatternKind, Protocol, TransportKind};
use lossless_buffer_model::{Bytes, Rate, Time};
use lossless_pipeline::config::{Forwarding, QosConfig};
use lossless_pipeline::wire::build::FrameSpec;
use lossless_pipeline::wire::rocev2::{OPCODE_SEND_ONLY, ROCEV2_PORT};
use lossless_ports::flow::{FlowSpec, Limit, Messages, Pattern, RcFlow, Transport};
use lossless_ports::rc::{RcConfig, Recovery};

type Result<T> = std::result::Result<T, Diag>;

/// The `i`-th flow, between two of `hosts`.
pub fn resolve(cx: &PatchPanel, i: usize, f: &Val<FlowRaw>, hosts: &[HostSpec]) -> Result<FlowDef> {
    let d = cx.d;
    let r = &f.value;
    let name = r
        .name
        .as_ref()
        .map_or_else(|| format!("flow{i}"), |n| n.value.clone());
    let k = Key::root("flows").at(&name);
    let (src, dst) = endpoints(cx, &k, r, hosts)?;
    let protocol = d
        .opt_word(&r.protocol, &k.at("protocol"))?
        .unwrap_or(Protocol::Udp);
    let dscp = match &r.dscp {
        None => defaults::DSCP,
        Some(v) => d.small(v, &k.at("dscp"), 63)?,
    };
    let ecn = d.opt_word(&r.ecn, &k.at("ecn"))?.unwrap_or(defaults::ECN);
    let vlan = vlan(cx, &k, r)?;
    let (hs, hd) = (&hosts[src], &hosts[dst]);
    let sw = &cx.switches[hs.attach.switch].config;
    let ip = d.opt_word(&r.ip, &k.at("ip"))?.unwrap_or(IpVersion::V4);
    if ip == IpVersion::V6 {
        let why = if protocol == Protocol::Tcp {
            Some("TCP hosts speak IPv4 here (smoltcp's IPv4 stack)")
        } else if r.transport.is_some() || r.messages.is_some() || r.message_size.is_some() {
            Some("RC queue pairs run over IPv4 here")
        } else if cx
            .switches
            .iter()
            .any(|s| matches!(s.config.forwarding, Forwarding::L3 { .. }))
        {
            Some("routed switches here have IPv4 routes only: IPv6 flows cross L2 switches")
        } else {
            None
        };
        if let Some(why) = why {
            return d.error(
                r.ip.as_ref().and_then(line),
                &k.at("ip"),
                format!("an IPv6 flow is an open-loop UDP or RoCEv2 one: {why}"),
            );
        }
    }
    if protocol == Protocol::Tcp {
        let spec = super::tcp::resolve(cx, (i, &k, f), (hs, hd), (dscp, vlan), &name)?;
        return Ok(FlowDef { spec, src, dst });
    }
    if let Some(t) = &r.tcp {
        return d.error(
            line(t),
            &k.at("tcp"),
            "only TCP flows have this: add `protocol: tcp`",
        );
    }
    let frame: Bytes = d
        .opt_unit(&r.frame, &k.at("frame"))?
        .unwrap_or(defaults::FRAME);
    let mut headers = headers(cx, i, (hs, hd), protocol, (dscp, ecn.bits()), frame);
    headers.vlan = vlan;
    headers.ipv6 = ip == IpVersion::V6;
    if let Some(p) = &r.src_port {
        headers.src_port = p.value;
    }
    if let (Protocol::Udp, Some(p)) = (protocol, &r.dst_port) {
        headers.dst_port = p.value;
    }
    let (min, mtu) = (headers.min_len(), sw.ports[hs.attach.port].mtu);
    if frame.get() < min as u64 || frame.get() > mtu as u64 {
        return d.error(
            r.frame.as_ref().and_then(line).or(line(f)),
            &k.at("frame"),
            format!("{frame}: frames of this flow are {min}–{mtu} bytes (headers, port MTU)"),
        );
    }
    let pattern = pattern(cx, &k, r)?;
    check_rate(cx, &k, r, pattern, sw.ports[hs.attach.port].speed, &hs.name)?;
    let size: Option<Bytes> = d.opt_unit(&r.size, &k.at("size"))?;
    let limit = match (size, &r.packets) {
        (Some(_), Some(p)) => return d.error(line(p), &k, "give `size` or `packets`, not both"),
        (Some(b), None) => Limit::Bytes(b.get()),
        (None, Some(p)) => Limit::Packets(p.value),
        (None, None) => Limit::Unbounded,
    };
    let start: Time = d.opt_unit(&r.start, &k.at("start"))?.unwrap_or(Time::ZERO);
    let stop: Option<Time> = d.opt_unit(&r.stop, &k.at("stop"))?;
    if stop.is_some_and(|s| s <= start) {
        return d.error(
            r.stop.as_ref().and_then(line),
            &k.at("stop"),
            "stop must come after start",
        );
    }
    // The NIC queues a flow on the class the attached switch will give it.
    let priority = match &r.priority {
        Some(p) => d.small(p, &k.at("priority"), 7)?,
        None => sw.qos.classify(Some(dscp), vlan.map(|(_, pcp)| pcp)),
    };
    let transport = transport(cx, &k, f, protocol, dscp, size, &sw.qos)?;
    let limit = match transport {
        Transport::OpenLoop => limit,
        // An RC flow's volume is its messages.
        Transport::Rc(_) | Transport::Tcp(_) => Limit::Unbounded,
    };
    let spec = FlowSpec {
        name,
        id: i as u32 + 1,
        headers,
        priority,
        pattern,
        limit,
        start,
        stop,
        transport,
    };
    Ok(FlowDef { spec, src, dst })
}

/// The headers of the `i`-th flow (its QP is i + 1) from `hs` to `hd`, untagged, with
/// the default ports: the source port in the ephemeral range 49152–65535 however many
/// flows there are, the destination 5001 (RoCEv2: 4791). Routed frames go to the switch
/// port's MAC.
pub(super) fn headers(
    cx: &PatchPanel,
    i: usize,
    (hs, hd): (&HostSpec, &HostSpec),
    protocol: Protocol,
    (dscp, ecn): (u8, u8),
    frame: Bytes,
) -> FrameSpec {
    let sw = &cx.switches[hs.attach.switch].config;
    FrameSpec {
        src_mac: hs.mac,
        dst_mac: match sw.forwarding {
            Forwarding::L2 { .. } => hd.mac,
            Forwarding::L3 { .. } => sw.ports[hs.attach.port].mac,
        },
        vlan: None,
        src_ip: hs.ip,
        dst_ip: hd.ip,
        ipv6: false,
        dscp,
        ecn,
        src_port: defaults::SRC_PORT_BASE + (i as u16 % 16_384),
        dst_port: match protocol {
            Protocol::Rocev2 => ROCEV2_PORT,
            Protocol::Udp => defaults::DST_PORT,
            Protocol::Tcp => defaults::TCP_PORT.wrapping_add(i as u16),
        },
        bth: (protocol == Protocol::Rocev2).then_some((OPCODE_SEND_ONLY, i as u32 + 1, 0)),
        len: frame.get().min(u32::MAX as u64) as u32,
    }
}

/// `vlan: {vid, pcp}`: the tag's VID and PCP.
pub(super) fn vlan(cx: &PatchPanel, k: &Key, r: &FlowRaw) -> Result<Option<(u16, u8)>> {
    let (d, k) = (cx.d, k.at("vlan"));
    let Some(v) = &r.vlan else {
        return Ok(None);
    };
    let vid = d.int_in(&v.value.vid, &k.at("vid"), 0, 4095, "")? as u16;
    let pcp = match &v.value.pcp {
        None => 0,
        Some(p) => d.small(p, &k.at("pcp"), 7)?,
    };
    Ok(Some((vid, pcp)))
}

/// A CBR or on/off rate is at most the sending host's link rate.
fn check_rate(
    cx: &PatchPanel,
    k: &Key,
    r: &FlowRaw,
    pattern: Pattern,
    link: Rate,
    host: &str,
) -> Result<()> {
    if let Pattern::Cbr { rate }
    | Pattern::OnOff {
        rate: Some(rate), ..
    } = pattern
    {
        if rate > link {
            return cx.d.error(
                r.rate.as_ref().and_then(line),
                &k.at("rate"),
                format!(
                    "{rate} is above the {link} link of host {host}: a rate counts preamble and gap, so the link's is the most it can be"
                ),
            );
        }
    }
    Ok(())
}

/// `transport` and what RC needs: its queue pair's settings (`rc:`) and messages (`size`
/// as one message, or `messages` of `message_size`; a stream without either).
fn transport(
    cx: &PatchPanel,
    k: &Key,
    f: &Val<FlowRaw>,
    protocol: Protocol,
    dscp: u8,
    size: Option<Bytes>,
    qos: &QosConfig,
) -> Result<Transport> {
    let (d, r) = (cx.d, &f.value);
    let kind = d
        .opt_word(&r.transport, &k.at("transport"))?
        .unwrap_or(TransportKind::OpenLoop);
    if kind == TransportKind::OpenLoop {
        let rc_only = [
            ("rc", r.rc.as_ref().and_then(line)),
            ("messages", r.messages.as_ref().and_then(line)),
            ("message_size", r.message_size.as_ref().and_then(line)),
        ];
        if let Some((key, at)) = rc_only.iter().find(|(_, l)| l.is_some()) {
            return d.error(
                *at,
                &k.at(key),
                "only RC flows have this: add `transport: rc`",
            );
        }
        return Ok(Transport::OpenLoop);
    }
    let at = r.transport.as_ref().and_then(line);
    if protocol != Protocol::Rocev2 {
        return d.error(
            at,
            &k.at("transport"),
            "RC runs over RoCEv2: add `protocol: rocev2`",
        );
    }
    if let Some(p) = &r.packets {
        return d.error(
            line(p),
            &k.at("packets"),
            "an RC flow sends messages: give `size` (one message) or `messages` and `message_size`",
        );
    }
    let message_size: Option<Bytes> = d.opt_unit(&r.message_size, &k.at("message_size"))?;
    let messages = match (size, &r.messages, message_size) {
        (Some(_), Some(m), _) => {
            return d.error(
                line(m),
                &k.at("messages"),
                "give `size` (one message) or `messages` of `message_size`, not both",
            )
        }
        (Some(_), None, Some(_)) => {
            return d.error(
                r.message_size.as_ref().and_then(line),
                &k.at("message_size"),
                "`size` is the one message: give `messages` with `message_size`",
            )
        }
        (Some(b), None, None) => Messages::Count {
            count: 1,
            size: b.get(),
        },
        (None, Some(m), _) if m.value == 0 => {
            return d.error(line(m), &k.at("messages"), "at least 1 message")
        }
        (None, Some(m), s) => Messages::Count {
            count: m.value,
            size: s.unwrap_or(defaults::MESSAGE_SIZE).get(),
        },
        (None, None, s) => Messages::Stream {
            size: s.unwrap_or(defaults::MESSAGE_SIZE).get(),
        },
    };
    if matches!(
        messages,
        Messages::Count { size: 0, .. } | Messages::Stream { size: 0 }
    ) {
        return d.error(
            line(f),
            &k.at("message_size"),
            "a message carries at least 1 byte",
        );
    }
    let (config, ack_dscp) = rc_settings(cx, k, r.rc.as_ref(), dscp)?;
    Ok(Transport::Rc(RcFlow {
        config,
        messages,
        ack_dscp,
        // The responder's NIC queues ACKs on the class its switch gives their DSCP.
        ack_priority: qos.classify(Some(ack_dscp), None),
    }))
}

/// `rc: {ack_every, recovery, rto, retry_count, ack_dscp}` over the defaults.
pub(super) fn rc_settings(
    cx: &PatchPanel,
    k: &Key,
    rc: Option<&Val<RcRaw>>,
    dscp: u8,
) -> Result<(RcConfig, u8)> {
    let d = cx.d;
    let mut c = RcConfig::default();
    let Some(rc) = rc else {
        return Ok((c, dscp));
    };
    let (r, k) = (&rc.value, k.at("rc"));
    if let Some(v) = &r.ack_every {
        if v.value == 0 || v.value > u32::MAX as u64 {
            return d.error(
                line(v),
                &k.at("ack_every"),
                "an ACK every 1 or more packets",
            );
        }
        c.ack_every = v.value as u32;
    }
    if let Some(v) = &r.recovery {
        c.recovery = d.word::<Recovery>(v, &k.at("recovery"))?;
    }
    if let Some(v) = &r.rto {
        let rto: Time = d.unit(v, &k.at("rto"))?;
        if rto == Time::ZERO {
            return d.error(
                line(v),
                &k.at("rto"),
                "the local ACK timeout is above 0: 4.096us × 2^n, such as 67.1ms (n = 14) or 4.295s (n = 20, NCCL's default)",
            );
        }
        c.rto = rto;
    }
    if let Some(v) = &r.retry_count {
        if v.value > 7 {
            return d.error(
                line(v),
                &k.at("retry_count"),
                format!("{}: the retry count is 3 bits, 0–7", v.value),
            );
        }
        c.retry_count = v.value as u32;
    }
    let ack_dscp = match &r.ack_dscp {
        Some(v) => d.small(v, &k.at("ack_dscp"), 63)?,
        None => dscp,
    };
    Ok((c, ack_dscp))
}

/// The flow's sending and receiving hosts: two different ones, by name.
fn endpoints(cx: &PatchPanel, k: &Key, r: &FlowRaw, hosts: &[HostSpec]) -> Result<(usize, usize)> {
    let d = cx.d;
    let host = |v: &Val<String>, key: &Key| -> Result<usize> {
        match hosts.iter().position(|h| h.name == v.value) {
            Some(h) => Ok(h),
            None => {
                let names: Vec<_> = hosts.iter().map(|h| h.name.as_str()).collect();
                d.error(
                    line(v),
                    key,
                    format!(
                        "unknown host `{}` (hosts: {})",
                        v.value,
                        list_or_none(&names)
                    ),
                )
            }
        }
    };
    let src = host(&r.src, &k.at("src"))?;
    let dst = host(&r.dst, &k.at("dst"))?;
    if src == dst {
        return d.error(
            line(&r.dst),
            &k.at("dst"),
            "a flow needs two different hosts",
        );
    }
    Ok((src, dst))
}

/// `pattern` and what it needs: a rate (cbr), on and off times (onoff).
fn pattern(cx: &PatchPanel, k: &Key, r: &FlowRaw) -> Result<Pattern> {
    let d = cx.d;
    let rate: Option<Rate> = d.opt_unit(&r.rate, &k.at("rate"))?;
    let at = r.pattern.as_ref().and_then(line);
    Ok(
        match d
            .opt_word(&r.pattern, &k.at("pattern"))?
            .unwrap_or(PatternKind::Greedy)
        {
            PatternKind::Greedy => {
                if let Some(v) = &r.rate {
                    return d.error(
                        line(v),
                        &k.at("rate"),
                        "a greedy flow has no rate (use pattern: cbr)",
                    );
                }
                Pattern::Greedy
            }
            PatternKind::Cbr => match rate {
                Some(rate) => Pattern::Cbr { rate },
                None => return d.error(at, &k.at("rate"), "a cbr flow needs a rate"),
            },
            PatternKind::Onoff => {
                let on: Option<Time> = d.opt_unit(&r.on, &k.at("on"))?;
                let off: Option<Time> = d.opt_unit(&r.off, &k.at("off"))?;
                match (on, off) {
                    (Some(on), Some(off)) if on > Time::ZERO => Pattern::OnOff { on, off, rate },
                    _ => {
                        return d.error(
                            at,
                            &k.at("on"),
                            "an onoff flow needs `on` (> 0) and `off` times",
                        )
                    }
                }
            }
        },
    )
}

#[cfg(test)]
mod tests {
    use crate::config::parse;
    use lossless_ports::flow::{Limit, Pattern};

    fn flow(f: &str) -> Result<crate::config::FlowDef, crate::config::ConfigError> {
        let text = format!(
            "switches:\n  - name: s\n    ports: {{count: 2, mtu: 1518}}\nhosts:\n  - {{name: a, attach: s:Ethernet0}}\n  - {{name: b, attach: s:Ethernet1}}\nflows:\n  - {f}\n"
        );
        parse("f.yaml", "f", &text).map(|l| l.scenario.run.flows[0].clone())
    }

    #[test]
    fn a_flow_is_queued_on_the_class_its_switch_gives_it() {
        let f = flow("{src: a, dst: b, dscp: 3, protocol: rocev2, ecn: ect0, pattern: cbr, rate: 10G, size: 8MB}").unwrap();
        assert_eq!(f.spec.priority, 3);
        assert_eq!((f.spec.headers.dst_port, f.spec.headers.ecn), (4791, 2));
        assert!(matches!(f.spec.pattern, Pattern::Cbr { .. }));
        assert_eq!(f.spec.limit, Limit::Bytes(8_000_000));
        assert_eq!(flow("{src: a, dst: b, dscp: 0}").unwrap().spec.priority, 1);
    }

    #[test]
    fn each_rule_names_its_key() {
        for (f, expect) in [
            (
                "{src: a, dst: a}",
                "flows.flow0.dst: a flow needs two different hosts",
            ),
            (
                "{src: a, dst: c}",
                "flows.flow0.dst: unknown host `c` (hosts: a, b)",
            ),
            (
                "{src: a, dst: b, ecn: ect2}",
                "flows.flow0.ecn: `ect2`: expected not_ect, ect0, ect1 or ce",
            ),
            (
                "{src: a, dst: b, frame: 9000B}",
                "flows.flow0.frame: 9KB: frames of this flow are 64–1518 bytes",
            ),
            (
                "{src: a, dst: b, pattern: cbr}",
                "flows.flow0.rate: a cbr flow needs a rate",
            ),
            (
                "{src: a, dst: b, start: 2us, stop: 1us}",
                "flows.flow0.stop: stop must come after start",
            ),
            (
                "{src: a, dst: b, pattern: cbr, rate: 200G}",
                "flows.flow0.rate: 200G is above the 100G link of host a",
            ),
        ] {
            let e = flow(f).unwrap_err().to_string();
            assert!(e.contains(expect), "{e}");
        }
    }
}
