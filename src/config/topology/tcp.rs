//! `flows[]` with `protocol: tcp`: a bulk transfer of `size` bytes between two hosts'
//! smoltcp stacks (iperf-like). Its segments follow the MSS (the ports' MTU), its pace the
//! congestion control, so the generator's keys (frame, pattern, rate, packets, stop, ECN,
//! the RC keys) do not apply and are refused.

use super::flows::headers;
use super::PatchPanel;
use crate::config::defaults;
use crate::config::diag::{Diag, Key};
use crate::config::scenario::HostSpec;
use crate::config::schema::{FlowRaw, TcpRaw, Val};
use crate::config::values::line;
use crate::config::words::Protocol;
use lossless_buffer_model::{Bytes, Time};
use lossless_pipeline::config::Forwarding;
use lossless_ports::flow::{FlowSpec, Limit, Pattern, Transport};
use lossless_ports::tcp::{Congestion, TcpFlow};

type Result<T> = std::result::Result<T, Diag>;

/// The TCP flow `i` (key `k`, raw `f`) from `hs` to `hd`, named `name`.
pub fn resolve(
    cx: &PatchPanel,
    (i, k, f): (usize, &Key, &Val<FlowRaw>),
    (hs, hd): (&HostSpec, &HostSpec),
    (dscp, vlan): (u8, Option<(u16, u8)>),
    name: &str,
) -> Result<FlowSpec> {
    let (d, r) = (cx.d, &f.value);
    let refused = [
        (
            "frame",
            r.frame.as_ref().and_then(line),
            "its segments follow the MSS (the ports' MTU less 58 bytes)",
        ),
        (
            "pattern",
            r.pattern.as_ref().and_then(line),
            "its pace is its congestion control's",
        ),
        (
            "rate",
            r.rate.as_ref().and_then(line),
            "its pace is its congestion control's",
        ),
        (
            "on",
            r.on.as_ref().and_then(line),
            "its pace is its congestion control's",
        ),
        (
            "off",
            r.off.as_ref().and_then(line),
            "its pace is its congestion control's",
        ),
        (
            "packets",
            r.packets.as_ref().and_then(line),
            "it sends `size` bytes",
        ),
        (
            "stop",
            r.stop.as_ref().and_then(line),
            "it ends when `size` bytes are read",
        ),
        (
            "ecn",
            r.ecn.as_ref().and_then(line),
            "smoltcp does not negotiate ECN",
        ),
        (
            "transport",
            r.transport.as_ref().and_then(line),
            "TCP is its own transport",
        ),
        (
            "rc",
            r.rc.as_ref().and_then(line),
            "only RC flows have this",
        ),
        (
            "messages",
            r.messages.as_ref().and_then(line),
            "only RC flows have this",
        ),
        (
            "message_size",
            r.message_size.as_ref().and_then(line),
            "only RC flows have this",
        ),
    ];
    if let Some((key, at, why)) = refused.iter().find(|(_, l, _)| l.is_some()) {
        return d.error(*at, &k.at(key), format!("not for a TCP flow: {why}"));
    }
    let Some(size) = &r.size else {
        return d.error(
            line(f),
            &k.at("size"),
            "a TCP flow sends `size` bytes (such as 10MB), then ends",
        );
    };
    let size: Bytes = d.unit(size, &k.at("size"))?;
    if size.get() == 0 {
        return d.error(line(f), &k.at("size"), "at least 1 byte");
    }
    let settings = settings(cx, k, r.tcp.as_ref())?;
    let mut spec = match build(cx, i, (hs, hd), (dscp, vlan), settings, (size.get(), false)) {
        Ok(s) => s,
        Err(why) => return d.error(line(f), k, why),
    };
    spec.name = name.to_string();
    if let Some(p) = &r.src_port {
        spec.headers.src_port = p.value;
    }
    if let Some(p) = &r.dst_port {
        spec.headers.dst_port = p.value;
    }
    if let Some(p) = &r.priority {
        spec.priority = d.small(p, &k.at("priority"), 7)?;
    }
    spec.start = d.opt_unit(&r.start, &k.at("start"))?.unwrap_or(Time::ZERO);
    Ok(spec)
}

/// The TCP flow with index `i` (its id and default ports follow) from `hs` to `hd`,
/// `(size, posted)`: `size` bytes in all, given at once or posted by a collective; from 0,
/// on the class the sender's switch gives the DSCP. Err: why the ports cannot carry it.
pub(super) fn build(
    cx: &PatchPanel,
    i: usize,
    (hs, hd): (&HostSpec, &HostSpec),
    (dscp, vlan): (u8, Option<(u16, u8)>),
    (congestion, buffer): (Congestion, u32),
    (size, posted): (u64, bool),
) -> std::result::Result<FlowSpec, String> {
    let port = |h: &HostSpec| &cx.switches[h.attach.switch].config.ports[h.attach.port];
    // Ethernet header and FCS, and the tag if any.
    let l2 = 18 + if vlan.is_some() { 4 } else { 0 };
    let ip_mtu = port(hs).mtu.min(port(hd).mtu).saturating_sub(l2);
    if ip_mtu < 576 {
        return Err(format!("an IP MTU of {ip_mtu} is below TCP's 576 bytes"));
    }
    let mut h = headers(
        cx,
        i,
        (hs, hd),
        Protocol::Tcp,
        (dscp, 0),
        Bytes(u64::from(ip_mtu + l2)),
    );
    h.vlan = vlan;
    let sw_d = &cx.switches[hd.attach.switch].config;
    let reply_mac = match sw_d.forwarding {
        Forwarding::L2 { .. } => hs.mac,
        Forwarding::L3 { .. } => port(hd).mac,
    };
    let sw = &cx.switches[hs.attach.switch].config;
    Ok(FlowSpec {
        name: format!("flow{i}"),
        id: i as u32 + 1,
        headers: h,
        priority: sw.qos.classify(Some(dscp), vlan.map(|(_, pcp)| pcp)),
        pattern: Pattern::Greedy,
        limit: Limit::Unbounded,
        start: Time::ZERO,
        stop: None,
        transport: Transport::Tcp(TcpFlow {
            congestion,
            buffer,
            ip_mtu,
            size,
            reply_mac,
            posted,
        }),
    })
}

/// `tcp: {congestion, buffer}` over the defaults.
pub(super) fn settings(
    cx: &PatchPanel,
    k: &Key,
    t: Option<&Val<TcpRaw>>,
) -> Result<(Congestion, u32)> {
    let d = cx.d;
    let Some(t) = t else {
        return Ok((Congestion::default(), defaults::TCP_BUFFER.get() as u32));
    };
    let k = k.at("tcp");
    let congestion = d
        .opt_word(&t.value.congestion, &k.at("congestion"))?
        .unwrap_or_default();
    let buffer = match &t.value.buffer {
        None => defaults::TCP_BUFFER.get() as u32,
        Some(v) => {
            let b: Bytes = d.unit(v, &k.at("buffer"))?;
            // smoltcp's window scale goes up to 2^14 × 64 KiB = 1 GiB.
            if b.get() < 1024 || b.get() > 1 << 30 {
                return d.error(
                    line(v),
                    &k.at("buffer"),
                    format!("{b}: a socket buffer is 1KiB–1GiB"),
                );
            }
            b.get() as u32
        }
    };
    Ok((congestion, buffer))
}
