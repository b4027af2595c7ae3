//! `collectives:`: ring AllReduce and all-to-all among simulated hosts, each resolved into
//! the RC queue pairs that carry it (flows named `<collective>:<src>>dst>`) and the ranks
//! that post their messages.

use super::flows::{headers, rc_settings};
use super::PatchPanel;
use crate::config::defaults;
use crate::config::diag::{Diag, Key};
use crate::config::scenario::{CollectiveDef, FlowDef, HostSpec};
use crate::config::schema::{CollectiveRaw, Val};
use crate::config::values::{line, list_or_none};
use crate::config::words::{AlgorithmWord, CollectiveTransport, CollectiveWord, Protocol};
use lossless_buffer_model::{Bytes, Time};
use lossless_ports::collective::CollectiveKind;
use lossless_ports::flow::{FlowSpec, Limit, Messages, Pattern, RcFlow, Transport};

type Result<T> = std::result::Result<T, Diag>;

/// The IB path MTUs a RoCE NIC can run (IBTA vol. 1, 7.7.3): the largest whose frame
/// fits the ports' MTU is the one it uses.
const IB_MTUS: [u64; 5] = [4096, 2048, 1024, 512, 256];

/// The `i`-th collective; its queue pairs are appended to `flows` (their ids follow).
pub fn resolve(
    cx: &PatchPanel,
    i: usize,
    c: &Val<CollectiveRaw>,
    hosts: &[HostSpec],
    flows: &mut Vec<FlowDef>,
) -> Result<CollectiveDef> {
    let (d, r) = (cx.d, &c.value);
    let name = r
        .name
        .as_ref()
        .map_or_else(|| format!("collective{i}"), |n| n.value.clone());
    let k = Key::root("collectives").at(&name);
    let kind = match d.word::<CollectiveWord>(&r.kind, &k.at("kind"))? {
        CollectiveWord::AllReduce => {
            d.opt_word::<AlgorithmWord>(&r.algorithm, &k.at("algorithm"))?;
            CollectiveKind::AllReduceRing
        }
        CollectiveWord::AllToAll => {
            if let Some(a) = &r.algorithm {
                return d.error(
                    line(a),
                    &k.at("algorithm"),
                    "only an allreduce has an algorithm",
                );
            }
            CollectiveKind::AllToAll
        }
    };
    d.opt_word::<CollectiveTransport>(&r.transport, &k.at("transport"))?;
    let ranks = ranks(cx, &k, r, hosts)?;
    let n = ranks.len() as u64;
    let size: Bytes = d.unit(&r.size, &k.at("size"))?;
    if size.get() < n {
        return d.error(
            line(&r.size),
            &k.at("size"),
            format!("{size}: each of the {n} ranks' blocks (size / {n}) carries at least 1 byte"),
        );
    }
    let iterations = match &r.iterations {
        Some(v) if v.value == 0 => {
            return d.error(line(v), &k.at("iterations"), "at least 1 iteration")
        }
        Some(v) => v.value,
        None => defaults::ITERATIONS,
    };
    let start: Time = d.opt_unit(&r.start, &k.at("start"))?.unwrap_or(Time::ZERO);
    let dscp = match &r.dscp {
        None => defaults::DSCP,
        Some(v) => d.small(v, &k.at("dscp"), 63)?,
    };
    let frame = frame(cx, &k, c, &ranks, hosts)?;
    let (config, ack_dscp) = rc_settings(cx, &k, r.rc.as_ref(), dscp)?;
    let pairs: Vec<(usize, usize)> = match kind {
        CollectiveKind::AllReduceRing => (0..ranks.len())
            .map(|a| (a, (a + 1) % ranks.len()))
            .collect(),
        CollectiveKind::AllToAll => (0..ranks.len())
            .flat_map(|a| {
                (0..ranks.len())
                    .filter(move |b| *b != a)
                    .map(move |b| (a, b))
            })
            .collect(),
    };
    let mut qps = vec![(Vec::new(), Vec::new()); ranks.len()];
    for (a, b) in pairs {
        let (src, dst) = (ranks[a], ranks[b]);
        let index = flows.len();
        let sw = &cx.switches[hosts[src].attach.switch].config;
        let headers = headers(
            cx,
            index,
            (&hosts[src], &hosts[dst]),
            Protocol::Rocev2,
            (dscp, 0),
            frame,
        );
        let spec = FlowSpec {
            name: format!("{name}:{}>{}", hosts[src].name, hosts[dst].name),
            id: index as u32 + 1,
            headers,
            priority: sw.qos.classify(Some(dscp), None),
            pattern: Pattern::Greedy,
            limit: Limit::Unbounded,
            start,
            stop: None,
            transport: Transport::Rc(RcFlow {
                config,
                messages: Messages::Posted,
                ack_dscp,
                ack_priority: cx.switches[hosts[dst].attach.switch]
                    .config
                    .qos
                    .classify(Some(ack_dscp), None),
            }),
        };
        qps[a].0.push(spec.id);
        qps[b].1.push(spec.id);
        flows.push(FlowDef { spec, src, dst });
    }
    Ok(CollectiveDef {
        name,
        kind,
        chunk: size.get().div_ceil(n),
        size: size.get(),
        hosts: ranks,
        iterations,
        start,
        qps,
        mtu: (frame.get() - 62) as u32,
    })
}

/// `hosts:`: at least two, each once, all simulated hosts.
fn ranks(cx: &PatchPanel, k: &Key, r: &CollectiveRaw, hosts: &[HostSpec]) -> Result<Vec<usize>> {
    let (d, key) = (cx.d, k.at("hosts"));
    let mut out: Vec<usize> = Vec::new();
    for v in &r.hosts.value {
        let Some(h) = hosts.iter().position(|h| h.name == v.value) else {
            let names: Vec<_> = hosts.iter().map(|h| h.name.as_str()).collect();
            return d.error(
                line(v),
                &key,
                format!(
                    "unknown host `{}` (hosts: {})",
                    v.value,
                    list_or_none(&names)
                ),
            );
        };
        if out.contains(&h) {
            return d.error(
                line(v),
                &key,
                format!("host `{}` is listed twice: a host is one rank", v.value),
            );
        }
        out.push(h);
    }
    if out.len() < 2 {
        return d.error(
            line(&r.hosts),
            &key,
            format!("{} host(s): a collective needs at least 2 ranks", out.len()),
        );
    }
    Ok(out)
}

/// The frame of a full data packet: as given, or the largest IB path MTU whose frame
/// (62 bytes of RoCEv2 headers and FCS on top) every rank's port carries.
fn frame(
    cx: &PatchPanel,
    k: &Key,
    c: &Val<CollectiveRaw>,
    ranks: &[usize],
    hosts: &[HostSpec],
) -> Result<Bytes> {
    let d = cx.d;
    let port_mtu = ranks
        .iter()
        .map(|h| {
            let a = hosts[*h].attach;
            cx.switches[a.switch].config.ports[a.port].mtu as u64
        })
        .min()
        .expect("at least 2 ranks");
    let Some(v) = &c.value.frame else {
        let mtu = IB_MTUS
            .iter()
            .find(|m| *m + 62 <= port_mtu)
            .copied()
            .unwrap_or(256);
        return Ok(Bytes(mtu + 62));
    };
    let frame: Bytes = d.unit(v, &k.at("frame"))?;
    if frame.get() < 64 || frame.get() > port_mtu {
        return d.error(
            line(v),
            &k.at("frame"),
            format!("{frame}: a data frame of this collective is 64–{port_mtu} bytes (headers, the ranks' port MTU)"),
        );
    }
    Ok(frame)
}
