//! `hosts:`: simulated hosts, each cabled to a switch port, with a MAC, an address in
//! 198.18.0.0/15 and a NIC that honours (or ignores) PFC and may send it from a bounded
//! receive buffer.

use super::PatchPanel;
use crate::config::defaults;
use crate::config::diag::{Diag, Diags, Key};
use crate::config::scenario::HostSpec;
use crate::config::schema::{HostRaw, NicRaw, Val};
use crate::config::values::line;
use lossless_buffer_model::{Bytes, Rate};
use lossless_ports::host::{NicConfig, RxBuffer};

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
    let nic = nic(d, &k.at("nic"), h.value.nic.as_ref(), sw.qos.pfc_enable)?;
    Ok(HostSpec {
        name,
        mac: mac.0,
        ip,
        attach,
        nic,
    })
}

/// NIC settings; the NIC pauses and honours the priorities its switch has PFC on.
fn nic(d: &Diags, k: &Key, nic: Option<&Val<NicRaw>>, pfc_enable: u8) -> Result<NicConfig> {
    let mut out = NicConfig {
        pfc: defaults::NIC_PFC,
        pfc_response: defaults::PFC_RESPONSE,
        rx_buffer: None,
        pfc_enable,
        pause_quanta: defaults::PAUSE_QUANTA,
    };
    let Some(n) = nic else { return Ok(out) };
    let n = &n.value;
    out.pfc = d
        .opt_word(&n.pfc, &k.at("pfc"))?
        .unwrap_or(defaults::NIC_PFC);
    out.pfc_response = d
        .opt_unit(&n.pfc_response, &k.at("pfc_response"))?
        .unwrap_or(defaults::PFC_RESPONSE);
    let size: Option<Bytes> = d.opt_unit(&n.rx_buffer, &k.at("rx_buffer"))?;
    let drain: Option<Rate> = d.opt_unit(&n.drain, &k.at("drain"))?;
    let xoff: Option<Bytes> = d.opt_unit(&n.pfc_xoff, &k.at("pfc_xoff"))?;
    let xon: Option<Bytes> = d.opt_unit(&n.pfc_xon, &k.at("pfc_xon"))?;
    match (size, drain) {
        (None, None) => {
            if let Some(v) = n.pfc_xoff.as_ref().or(n.pfc_xon.as_ref()) {
                return d.error(
                    line(v),
                    &k.at("pfc_xoff"),
                    "XOFF/XON levels need rx_buffer and drain",
                );
            }
        }
        (Some(size), Some(drain)) => {
            let xoff = xoff.unwrap_or(defaults::nic_pfc_xoff(size));
            let xon = xon.unwrap_or(defaults::nic_pfc_xon(xoff));
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
