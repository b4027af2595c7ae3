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
use lossless_ports::rc::RcConfig;
use lossless_ports::tcp::Congestion;

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
    let transport = d
        .opt_word::<CollectiveTransport>(&r.transport, &k.at("transport"))?
        .unwrap_or(CollectiveTransport::Rc);
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
    let carrier = carrier(cx, &k, c, (&ranks, hosts), transport, dscp)?;
    let chunk = size.get().div_ceil(n);
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
        let name = format!("{name}:{}>{}", hosts[src].name, hosts[dst].name);
        let total = iterations * kind.steps(ranks.len()) * chunk;
        let spec = carrier.spec(
            cx,
            index,
            (&hosts[src], &hosts[dst]),
            (dscp, start),
            (name, total),
        );
        qps[a].0.push(spec.id);
        qps[b].1.push(spec.id);
        flows.push(FlowDef { spec, src, dst });
    }
    Ok(CollectiveDef {
        name,
        kind,
        chunk,
        size: size.get(),
        hosts: ranks,
        iterations,
        start,
        qps,
    })
}

/// What carries a collective's messages.
enum Carrier {
    /// RC queue pairs: a full frame's length, the QP settings, the ACKs' DSCP.
    Rc(Bytes, RcConfig, u8),
    /// TCP connections: congestion control and socket buffers.
    Tcp((Congestion, u32)),
}

/// The carrier of `transport` with its keys: `frame` and `rc` for RC, `tcp` for TCP.
fn carrier(
    cx: &PatchPanel,
    k: &Key,
    c: &Val<CollectiveRaw>,
    (ranks, hosts): (&[usize], &[HostSpec]),
    transport: CollectiveTransport,
    dscp: u8,
) -> Result<Carrier> {
    let (d, r) = (cx.d, &c.value);
    match transport {
        CollectiveTransport::Rc => {
            if let Some(t) = &r.tcp {
                return d.error(
                    line(t),
                    &k.at("tcp"),
                    "only a `transport: tcp` collective has this",
                );
            }
            let frame = frame(cx, k, c, ranks, hosts)?;
            let (config, ack_dscp) = rc_settings(cx, k, r.rc.as_ref(), dscp)?;
            Ok(Carrier::Rc(frame, config, ack_dscp))
        }
        CollectiveTransport::Tcp => {
            let rc_only = [
                ("rc", r.rc.as_ref().and_then(line)),
                ("frame", r.frame.as_ref().and_then(line)),
            ];
            if let Some((key, at)) = rc_only.iter().find(|(_, l)| l.is_some()) {
                return d.error(
                    *at,
                    &k.at(key),
                    "not for TCP: its segments follow the MSS, its settings are `tcp:`",
                );
            }
            let mtu = ranks
                .iter()
                .map(|h| {
                    let a = hosts[*h].attach;
                    cx.switches[a.switch].config.ports[a.port].mtu
                })
                .min()
                .unwrap_or(1518);
            if mtu < 576 + 18 {
                return d.error(
                    line(c),
                    k,
                    format!("a port MTU of {mtu} leaves an IP MTU below TCP's 576 bytes"),
                );
            }
            Ok(Carrier::Tcp(super::tcp::settings(cx, k, r.tcp.as_ref())?))
        }
    }
}

impl Carrier {
    /// The flow (queue pair or connection) with index `index` from `hs` to `hd`, named
    /// `name`, that carries `total` bytes over the run.
    fn spec(
        &self,
        cx: &PatchPanel,
        index: usize,
        (hs, hd): (&HostSpec, &HostSpec),
        (dscp, start): (u8, Time),
        (name, total): (String, u64),
    ) -> FlowSpec {
        let classify = |h: &HostSpec, dscp: u8| {
            cx.switches[h.attach.switch]
                .config
                .qos
                .classify(Some(dscp), None)
        };
        match self {
            Carrier::Rc(frame, config, ack_dscp) => FlowSpec {
                name,
                id: index as u32 + 1,
                headers: headers(cx, index, (hs, hd), Protocol::Rocev2, (dscp, 0), *frame),
                priority: classify(hs, dscp),
                pattern: Pattern::Greedy,
                limit: Limit::Unbounded,
                start,
                stop: None,
                transport: Transport::Rc(RcFlow {
                    config: *config,
                    messages: Messages::Posted,
                    ack_dscp: *ack_dscp,
                    ack_priority: classify(hd, *ack_dscp),
                }),
            },
            Carrier::Tcp(settings) => {
                let mut spec =
                    super::tcp::build(cx, index, (hs, hd), (dscp, None), *settings, (total, true))
                        .expect("the ranks' ports carry TCP");
                spec.name = name;
                spec.start = start;
                spec
            }
        }
    }
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
