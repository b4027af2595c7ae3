//! One switch of a scenario file, resolved: its ports, QoS, buffer plan (or the default
//! one), forwarding, ACL tables, and the headroom warnings.

pub mod acl;
pub mod buffer;
pub mod cbfc;
pub mod default_plan;
mod egress_limits;
pub mod forwarding;
pub mod headroom;
pub mod llr;
pub mod p4;
pub mod ports;
pub mod profiles;
pub mod qos;
pub mod trimming;

use super::defaults;
use super::diag::{Diag, Diags, Key};
use super::scenario::SwitchSpec;
use super::schema::{QosRaw, SwitchRaw};
use super::values::line;
use lossless_buffer_model::{Length, Time};
use lossless_pipeline::config::{Forwarding, SwitchConfig};

/// What a switch-to-switch link says about one of this switch's ports: its index, and the
/// link's cable or delay, which replace the port's own (headroom is sized for the real
/// cable).
pub type PortWire = (usize, Option<Length>, Option<Time>);

/// The `index`-th switch of the file; `wires` are the cables its links give its ports.
pub fn resolve(
    d: &Diags,
    sw: &SwitchRaw,
    index: usize,
    seed: u64,
    wires: &[PortWire],
) -> Result<SwitchSpec, Diag> {
    let name = sw.name.value.clone();
    let key = Key::root(&name);
    let base_mac = match &sw.mac {
        None => defaults::switch_mac(index),
        Some(m) => {
            let mac = d.mac(m, &key.at("mac"))?;
            if mac.is_multicast() {
                return d.error(
                    line(m),
                    &key.at("mac"),
                    format!("`{}` is a multicast address; a port's source MAC is unicast (first octet even)", m.value),
                );
            }
            mac
        }
    };
    let Some(raw_ports) = &sw.ports else {
        return d.error(
            line(&sw.name),
            &key.at("ports"),
            "a switch needs `ports` (or `sonic:`, a config_db.json that gives them)",
        );
    };
    let (mut ports, attach) = ports::resolve(d, &key, raw_ports, base_mac)?;
    for &(i, cable, delay) in wires {
        if let Some(c) = cable {
            ports[i].cable = c;
            ports[i].delay = None;
        }
        if delay.is_some() {
            ports[i].delay = delay;
        }
    }
    let pipeline_latency = d
        .opt_unit(&sw.pipeline_latency, &key.at("pipeline_latency"))?
        .unwrap_or(SwitchConfig::DEFAULT_PIPELINE_LATENCY);
    let qos = qos::resolve(
        d,
        &key,
        sw.qos.as_ref().map_or(&QosRaw::default(), |q| &q.value),
    )?;
    let mut plan = match &sw.buffer {
        Some(b) => buffer::resolve(d, &key, b, &ports, &qos)?,
        None => default_plan::plan(&ports, &qos),
    };
    cbfc::resolve(d, &key, sw, &mut ports, &attach, &qos, pipeline_latency)?;
    cbfc::reserve_all(&mut plan, &ports, &qos);
    llr::resolve(d, &key, sw, &mut ports, &attach, &qos)?;
    let trim = trimming::resolve(d, &key, sw, &mut ports, &qos, &plan)?;
    trimming::check_lossless(d, &key, sw, &ports, &qos, &plan)?;
    headroom::check(d, &key, &ports, &attach, &plan);
    egress_limits::check(d, &key, &ports, &qos, &plan);
    let (forwarding, pending_macs) = match &sw.forwarding {
        Some(f) => forwarding::resolve(d, &key, f, &ports)?,
        None => (Forwarding::default(), Vec::new()),
    };
    let acl = match &sw.acl {
        Some(t) => acl::resolve(d, &key, t, &ports)?,
        None => Vec::new(),
    };
    let p4 = p4::resolve(d, &key, sw)?;
    Ok(SwitchSpec {
        config: SwitchConfig {
            name,
            ports,
            pipeline_latency,
            cell: plan.cell,
            pools: plan.pools,
            pg_profiles: plan.pg_profiles,
            queue_profiles: plan.queue_profiles,
            qos,
            forwarding,
            seed,
            mmu: plan.behaviour,
            slices: plan.slices.clone(),
            port_headroom: plan.port_headroom.clone(),
            acl,
            trimming: trim,
            p4,
        },
        attach,
        pg_profile_names: plan.pg_names,
        queue_profile_names: plan.queue_names,
        default_buffer: sw.buffer.is_none(),
        asic: plan.asic,
        pending_macs,
    })
}
