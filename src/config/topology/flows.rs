//! `flows:`: traffic between two hosts — headers (UDP or RoCEv2, DSCP, ECN, VLAN), frame
//! size, pattern (greedy, cbr, onoff), volume and timing. A flow is queued on the priority
//! the sender's switch will classify it into, unless `priority` says otherwise.

use super::PatchPanel;
use crate::config::defaults;
use crate::config::diag::{Diag, Key};
use crate::config::scenario::{FlowDef, HostSpec};
use crate::config::schema::{FlowRaw, Val};
use crate::config::values::{line, list_or_none};
use crate::config::words::{PatternKind, Protocol};
use lossless_buffer_model::{Bytes, Rate, Time};
use lossless_pipeline::config::Forwarding;
use lossless_pipeline::wire::build::FrameSpec;
use lossless_pipeline::wire::rocev2::{OPCODE_SEND_ONLY, ROCEV2_PORT};
use lossless_ports::flow::{FlowSpec, Limit, Pattern};

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
    let vlan = match &r.vlan {
        None => None,
        Some(v) => {
            let vid = d.int_in(&v.value.vid, &k.at("vlan").at("vid"), 0, 4095, "")? as u16;
            let pcp = match &v.value.pcp {
                None => 0,
                Some(p) => d.small(p, &k.at("vlan").at("pcp"), 7)?,
            };
            Some((vid, pcp))
        }
    };
    let (hs, hd) = (&hosts[src], &hosts[dst]);
    let sw = &cx.switches[hs.attach.switch].config;
    let frame: Bytes = d
        .opt_unit(&r.frame, &k.at("frame"))?
        .unwrap_or(defaults::FRAME);
    let headers = FrameSpec {
        src_mac: hs.mac,
        // Routed frames go to the switch port's MAC.
        dst_mac: match sw.forwarding {
            Forwarding::L2 { .. } => hd.mac,
            Forwarding::L3 { .. } => sw.ports[hs.attach.port].mac,
        },
        vlan,
        src_ip: hs.ip,
        dst_ip: hd.ip,
        dscp,
        ecn: ecn.bits(),
        src_port: r
            .src_port
            .as_ref()
            // Within the ephemeral range 49152–65535 however many flows there are.
            .map_or(defaults::SRC_PORT_BASE + (i as u16 % 16_384), |p| p.value),
        dst_port: match protocol {
            Protocol::Rocev2 => ROCEV2_PORT,
            Protocol::Udp => r.dst_port.as_ref().map_or(defaults::DST_PORT, |p| p.value),
        },
        bth: (protocol == Protocol::Rocev2).then_some((OPCODE_SEND_ONLY, i as u32 + 1, 0)),
        len: frame.get().min(u32::MAX as u64) as u32,
    };
    let (min, mtu) = (headers.min_len(), sw.ports[hs.attach.port].mtu);
    if frame.get() < min as u64 || frame.get() > mtu as u64 {
        return d.error(
            r.frame.as_ref().and_then(line).or(line(f)),
            &k.at("frame"),
            format!("{frame}: frames of this flow are {min}–{mtu} bytes (headers, port MTU)"),
        );
    }
    let pattern = pattern(cx, &k, r)?;
    let link = sw.ports[hs.attach.port].speed;
    if let Pattern::Cbr { rate }
    | Pattern::OnOff {
        rate: Some(rate), ..
    } = pattern
    {
        if rate > link {
            return d.error(
                r.rate.as_ref().and_then(line),
                &k.at("rate"),
                format!(
                    "{rate} is above the {link} link of host {}: a rate counts preamble and gap, so the link's is the most it can be",
                    hs.name
                ),
            );
        }
    }
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
