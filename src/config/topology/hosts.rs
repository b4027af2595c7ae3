//! `hosts:`: simulated hosts, each cabled to a switch port, with a MAC, an address in
//! 198.18.0.0/15 and a NIC that honours (or ignores) PFC and may send it from a bounded
//! receive buffer.

use super::PatchPanel;
use crate::config::defaults;
use crate::config::diag::{Diag, Diags, Key};
use crate::config::scenario::HostSpec;
use crate::config::schema::{DcqcnRaw, HostRaw, NicRaw, Val};
use crate::config::values::line;
use lossless_buffer_model::{Bytes, Rate, Time};
use lossless_pipeline::config::{FlowControl, QosConfig, SwitchConfig};
use lossless_pipeline::link::cbfc::{MAX_CREDITS, VCS};
use lossless_ports::dcqcn::DcqcnParams;
use lossless_ports::host::{NicConfig, RxBuffer};
use lossless_ports::nic::RcAck;

type Result<T> = std::result::Result<T, Diag>;

/// The `i`-th host; `earlier` are the hosts before it (names are unique).
pub fn resolve(
    cx: &PatchPanel,
    i: usize,
    h: &Val<HostRaw>,
    earlier: &[HostSpec],
) -> Result<HostSpec> {
    let (d, k) = (cx.d, Key::root("hosts").index(i));
    let name = h.value.name.value.clone();
    if earlier.iter().any(|o| o.name == name) || cx.switches.iter().any(|s| s.config.name == name) {
        return d.error(
            line(&h.value.name),
            &k.at("name"),
            format!("name `{name}` is used twice"),
        );
    }
    let attach = cx.port_ref(&h.value.attach, &k.at("attach"))?;
    let mac = match &h.value.mac {
        None => defaults::host_mac(i),
        Some(m) => d.mac(m, &k.at("mac"))?,
    };
    let ip = match &h.value.ip {
        None => defaults::host_ip(i),
        Some(v) => match v.value.parse::<std::net::Ipv4Addr>() {
            Ok(a) => a.octets(),
            Err(_) => {
                return d.error(
                    line(v),
                    &k.at("ip"),
                    format!("`{}` is not an IPv4 address", v.value),
                )
            }
        },
    };
    let sw = &cx.switches[attach.switch].config;
    let mut nic = nic(d, &k.at("nic"), h.value.nic.as_ref(), &sw.qos)?;
    speak_like(
        d,
        &k.at("nic"),
        h.value.nic.as_ref(),
        &mut nic,
        sw,
        attach.port,
    )?;
    let frame_error_rate = d.error_rate(&h.value.frame_error_rate, &k.at("frame_error_rate"))?;
    Ok(HostSpec {
        name,
        mac: mac.0,
        ip,
        attach,
        nic,
        frame_error_rate,
    })
}

/// NIC settings; the NIC pauses and honours the priorities its switch has PFC on, and
/// sends CNPs on the class the switch gives their DSCP.
fn nic(d: &Diags, k: &Key, nic: Option<&Val<NicRaw>>, qos: &QosConfig) -> Result<NicConfig> {
    let mut out = NicConfig {
        pfc_enable: qos.pfc_enable,
        flow_control: qos.flow_control,
        ..NicConfig::default()
    };
    let Some(n) = nic else { return Ok(out) };
    let n = &n.value;
    if let Some(raw) = &n.dcqcn {
        let p = dcqcn(d, &k.at("dcqcn"), &raw.value)?;
        out.cnp_priority = qos.classify(Some(p.cnp_dscp), None);
        out.dcqcn = Some(p);
    }
    out.pfc = d
        .opt_word(&n.pfc, &k.at("pfc"))?
        .unwrap_or(NicConfig::default().pfc);
    out.pfc_response = d
        .opt_unit(&n.pfc_response, &k.at("pfc_response"))?
        .unwrap_or(NicConfig::default().pfc_response);
    let size: Option<Bytes> = d.opt_unit(&n.rx_buffer, &k.at("rx_buffer"))?;
    let drain: Option<Rate> = d.opt_unit(&n.drain, &k.at("drain"))?;
    let xoff: Option<Bytes> = d.opt_unit(&n.pfc_xoff, &k.at("pfc_xoff"))?;
    let xon: Option<Bytes> = d.opt_unit(&n.pfc_xon, &k.at("pfc_xon"))?;
    let rc_ack: Option<RcAck> = d.opt_word(&n.rc_ack, &k.at("rc_ack"))?;
    match (size, drain) {
        (None, None) => {
            if let Some(v) = n.pfc_xoff.as_ref().or(n.pfc_xon.as_ref()) {
                return d.error(
                    line(v),
                    &k.at("pfc_xoff"),
                    "XOFF/XON levels need rx_buffer and drain",
                );
            }
            if let Some(v) = &n.rc_ack {
                return d.error(
                    line(v),
                    &k.at("rc_ack"),
                    "rc_ack says when a packet through the receive buffer is acknowledged: it needs rx_buffer and drain",
                );
            }
        }
        (Some(size), Some(drain)) => {
            let xoff = xoff.unwrap_or(RxBuffer::default_xoff(size));
            let xon = xon.unwrap_or(RxBuffer::default_xon(xoff));
            if xoff > size {
                return d.error(
                    n.pfc_xoff.as_ref().and_then(line),
                    &k.at("pfc_xoff"),
                    format!("{xoff} is above rx_buffer {size}"),
                );
            }
            if xon >= xoff {
                return d.error(
                    n.pfc_xon.as_ref().and_then(line),
                    &k.at("pfc_xon"),
                    format!("{xon} is at or above pfc_xoff {xoff}"),
                );
            }
            out.rx_buffer = Some(RxBuffer {
                size,
                rc_ack: rc_ack.unwrap_or_default(),
                drain,
                xoff,
                xon,
            });
        }
        (Some(_), None) => {
            return d.error(
                n.rx_buffer.as_ref().and_then(line),
                &k.at("drain"),
                "a receive buffer needs a drain rate",
            )
        }
        (None, Some(_)) => {
            return d.error(
                n.drain.as_ref().and_then(line),
                &k.at("rx_buffer"),
                "a drain rate needs a receive buffer size",
            )
        }
    }
    Ok(out)
}

/// The NIC speaks its switch port's link protocol. Under CBFC it has the port's credit
/// settings; a bounded receive buffer is split among the credited channels, each given
/// the credits that fit its share (a credit covers at most `credit_size` bytes, plus what
/// a negative overhead leaves uncosted), so a sender that keeps to them never overruns it.
fn speak_like(
    d: &Diags,
    k: &Key,
    raw: Option<&Val<NicRaw>>,
    nic: &mut NicConfig,
    sw: &SwitchConfig,
    port: usize,
) -> Result<()> {
    nic.flow_control = sw.flow_control_of(port);
    nic.llr = sw.ports[port].llr;
    if nic.flow_control != FlowControl::Cbfc {
        return Ok(());
    }
    let mut setup = sw.ports[port].cbfc;
    if let Some(rx) = &nic.rx_buffer {
        let vcs = setup.credited.count_ones().max(1) as u64;
        let per_credit = setup.credit_size as u64 + (-setup.overhead).max(0) as u64;
        let credits = (rx.size.get() / per_credit / vcs).min(MAX_CREDITS) as u32;
        let frame = setup.cost(sw.ports[port].mtu);
        if (credits as u64) < frame {
            return d.error(
                raw.and_then(|n| n.value.rx_buffer.as_ref()).and_then(line),
                &k.at("rx_buffer"),
                format!(
                    "{} split among {vcs} credited VCs gives each {credits} credits of {} B, below the {frame} one {}-byte frame (the port's MTU) costs: credits below one maximum frame never let it start",
                    rx.size, setup.credit_size, sw.ports[port].mtu
                ),
            );
        }
        for v in 0..VCS {
            if setup.is_credited(v as u8) {
                setup.rx_credits[v] = credits;
            }
        }
    }
    nic.cbfc = setup;
    Ok(())
}

/// DCQCN parameters, the paper's where not given.
fn dcqcn(d: &Diags, k: &Key, r: &DcqcnRaw) -> Result<DcqcnParams> {
    let mut p = DcqcnParams::default();
    if let Some(g) = &r.g {
        if !(g.value > 0.0 && g.value <= 1.0) {
            return d.error(
                line(g),
                &k.at("g"),
                format!("{}: g is in (0, 1], e.g. 0.00390625 (1/256)", g.value),
            );
        }
        p.g = g.value;
    }
    let positive = |t: Option<Time>, key: &str, now: Time| -> Result<Time> {
        match t {
            Some(Time::ZERO) => d.error(None, &k.at(key), "a period needs to be above 0"),
            Some(t) => Ok(t),
            None => Ok(now),
        }
    };
    p.alpha_timer = positive(
        d.opt_unit(&r.alpha_timer, &k.at("alpha_timer"))?,
        "alpha_timer",
        p.alpha_timer,
    )?;
    p.rate_timer = positive(
        d.opt_unit(&r.rate_timer, &k.at("rate_timer"))?,
        "rate_timer",
        p.rate_timer,
    )?;
    p.cnp_interval = d
        .opt_unit(&r.cnp_interval, &k.at("cnp_interval"))?
        .unwrap_or(p.cnp_interval);
    if let Some(b) = d.opt_unit::<Bytes>(&r.byte_counter, &k.at("byte_counter"))? {
        if b.get() == 0 {
            return d.error(
                r.byte_counter.as_ref().and_then(line),
                &k.at("byte_counter"),
                "the byte counter needs to be above 0, e.g. 10MB",
            );
        }
        p.byte_counter = b.get();
    }
    if let Some(f) = &r.fast_recovery {
        p.fast_recovery = d.int_in(f, &k.at("fast_recovery"), 1, 1000, "")? as u32;
    }
    p.rai = d.opt_unit(&r.rai, &k.at("rai"))?.unwrap_or(p.rai);
    p.rhai = d.opt_unit(&r.rhai, &k.at("rhai"))?.unwrap_or(p.rhai);
    p.min_rate = d
        .opt_unit(&r.min_rate, &k.at("min_rate"))?
        .unwrap_or(p.min_rate);
    if let Some(v) = &r.cnp_dscp {
        p.cnp_dscp = d.small(v, &k.at("cnp_dscp"), 63)?;
    }
    Ok(p)
}

#[cfg(test)]
mod tests {
    use crate::config::parse;
    use lossless_ports::host::PfcMode;

    fn host(h: &str) -> Result<crate::config::HostSpec, crate::config::ConfigError> {
        let text = format!("switches:\n  - name: s\n    ports: {{count: 2}}\nhosts:\n  - {h}\n");
        parse("f.yaml", "f", &text).map(|l| l.scenario.run.hosts[0].clone())
    }

    #[test]
    fn hosts_get_addresses_and_a_nic() {
        let h = host(
            "{name: h0, attach: s:Ethernet1, nic: {pfc: honour, rx_buffer: 256KiB, drain: 40G}}",
        )
        .unwrap();
        assert_eq!((h.mac, h.ip), ([2, 0, 0, 0, 0, 1], [198, 18, 0, 1]));
        assert_eq!(h.nic.pfc, PfcMode::Honor);
        let rx = h.nic.rx_buffer.unwrap();
        assert_eq!((rx.xoff.get(), rx.xon.get()), (128 * 1024, 64 * 1024));
        assert_eq!(h.nic.pfc_enable, 0b0001_1000);
    }

    #[test]
    fn dcqcn_takes_the_papers_parameters_and_sends_cnps_on_tc6() {
        let h = host("{name: h, attach: s:Ethernet0, nic: {dcqcn: {}}}").unwrap();
        let p = h.nic.dcqcn.unwrap();
        assert_eq!(p, lossless_ports::dcqcn::DcqcnParams::paper());
        assert_eq!(
            (p.g, p.fast_recovery, p.byte_counter),
            (1.0 / 256.0, 5, 10_000_000)
        );
        assert_eq!(h.nic.cnp_priority, 6, "DSCP 48 → TC 6 in SONiC's map");
        let h = host(
            "{name: h, attach: s:Ethernet0, nic: {dcqcn: {g: 0.0625, rai: 100Mb/s, cnp_dscp: 46}}}",
        )
        .unwrap();
        let p = h.nic.dcqcn.unwrap();
        // DSCP 46 (EF) → TC 5 in SONiC's AZURE map.
        assert_eq!(
            (p.g, p.rai.bps(), h.nic.cnp_priority),
            (0.0625, 100_000_000, 5)
        );
        for (nic, says) in [
            ("{dcqcn: {g: 0}}", "hosts[0].nic.dcqcn.g: 0: g is in (0, 1]"),
            (
                "{dcqcn: {rate_timer: 0}}",
                "hosts[0].nic.dcqcn.rate_timer: a period needs to be above 0",
            ),
            (
                "{dcqcn: {byte_counter: 0B}}",
                "hosts[0].nic.dcqcn.byte_counter: the byte counter needs to be above 0",
            ),
            ("{dcqcn: {cnp_dscp: 64}}", "hosts[0].nic.dcqcn.cnp_dscp"),
            ("{dcqcn: {fast: 1}}", "unknown field `fast`"),
        ] {
            let e = host(&format!("{{name: h, attach: s:Ethernet0, nic: {nic}}}"))
                .unwrap_err()
                .to_string();
            assert!(e.contains(says), "{nic}: {e}");
        }
    }

    #[test]
    fn each_rule_names_its_key() {
        for (h, expect) in [
            (
                "{name: s, attach: s:Ethernet0}",
                "hosts[0].name: name `s` is used twice",
            ),
            (
                "{name: h, attach: s:Ethernet0, mac: \"02:00\"}",
                "hosts[0].mac: `02:00` is not a MAC address",
            ),
            (
                "{name: h, attach: s:Ethernet0, nic: {pfc: obey}}",
                "hosts[0].nic.pfc: `obey`: expected honor or ignore",
            ),
            (
                "{name: h, attach: s:Ethernet0, nic: {rx_buffer: 1MB}}",
                "hosts[0].nic.drain: a receive buffer needs a drain rate",
            ),
        ] {
            let e = host(h).unwrap_err().to_string();
            assert!(e.contains(expect), "{e}");
        }
    }
}
