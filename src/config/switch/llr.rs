//! `llr:` of a switch — UE link-level retry on the ports it names, with one profile
//! (SONiC `LLR_PORT` and `LLR_PROFILE`; docs/scenario.md, `llr`; docs/physics.md,
//! "Link-level retry"). Where the replay buffer's size or the replay timer is not given,
//! each port gets what its link needs for line rate.

use crate::config::diag::{Diag, Diags, Key};
use crate::config::scenario::Attach;
use crate::config::schema::{LlrRaw, Scalar, SwitchRaw, Val};
use crate::config::values::line;
use lossless_buffer_model::{Bytes, Time};
use lossless_pipeline::config::{PortConfig, QosConfig};
use lossless_pipeline::link::llr::{LlrSetup, MAX_OUTSTANDING_FRAMES};

type Result<T> = std::result::Result<T, Diag>;

/// The largest replay timer SONiC accepts.
const MAX_REPLAY_TIMER: Time = Time::from_ns(65_535);
/// What SONiC accepts, in words.
const TIMER_RANGE: &str = "the replay timer is 0 (off) to 65,535 ns (SONiC)";

/// The largest replay timer of a `link:` port (its software cable's default: twice its
/// longest round trip).
fn software_timer() -> Time {
    Time::from_ps(2 * crate::cable::ROUND_TRIP.as_ps())
}

/// Settle LLR for switch `sw`: the setup of every port it names, checked against the
/// port's MTU, warned about below line rate.
pub fn resolve(
    d: &Diags,
    sw: &Key,
    raw_sw: &SwitchRaw,
    ports: &mut [PortConfig],
    attach: &[Option<Attach>],
    qos: &QosConfig,
) -> Result<()> {
    let Some(raw) = raw_sw.llr.as_ref() else {
        return Ok(());
    };
    let k = sw.at("llr");
    let r = &raw.value;
    let mut base = profile(d, &k, r)?;
    if let Some(list) = &r.tcs {
        // LLR numbers frames as they leave a queue: the queues of the eligible classes.
        let mut queues = 0u8;
        for v in &list.value {
            let tc = d.int_in(v, &k.at("tcs"), 0, 7, "traffic class ")? as usize;
            queues |= 1 << qos.tc_to_queue[tc];
        }
        base.setup.eligible = queues;
    }
    if r.enabled.as_ref().is_some_and(|e| !e.value) {
        return Ok(());
    }
    if base.replay_timer == Some(Time::ZERO) && base.setup.data_age_timeout == Time::ZERO {
        d.warn(
            r.replay_timer.as_ref().and_then(line),
            &k.at("replay_timer"),
            "0 turns the replay timer off, and no data_age_timeout is set: a sender then replays only when a NACK reaches it, so a lost NACK (or a replayed frame lost again) stalls the link for good, its receiver discarding every frame after; a lost last frame or ACK holds its copy for ever. Give a replay timer (the default is twice the round trip), or a data_age_timeout to flush".to_string(),
        );
    }
    let named: Vec<usize> = match &r.ports {
        None => (0..ports.len()).collect(),
        Some(list) => {
            let mut v = Vec::new();
            for (j, name) in list.value.iter().enumerate() {
                let Some(i) = ports.iter().position(|p| p.name == name.value) else {
                    return d.error(
                        line(name),
                        &k.at("ports").index(j),
                        format!("unknown port `{}`", name.value),
                    );
                };
                v.push(i);
            }
            v
        }
    };
    let mut short: Vec<(String, Vec<String>)> = Vec::new();
    for i in named {
        let port = &mut ports[i];
        if let Some(dev) = attach[i].as_ref().filter(|a| !a.faces_switch()) {
            return d.error(
                r.ports.as_ref().and_then(line).or(line(raw)),
                &k.at("ports"),
                format!(
                    "port {} speaks LLR but `lossless tap` serves it with {} `{}`: a host's kernel neither numbers its frames nor answers with ACKs, so LLR runs only on links between switches (an interface with another lossless switch behind it is named with `link:`)",
                    port.name,
                    dev.kind(),
                    dev.name()
                ),
            );
        }
        // A `link:` port's cable is software (crate::cable): the buffer and the timer
        // follow its bounds, and the default timer may exceed what SONiC accepts for a
        // hardware link.
        let software = attach[i].is_some();
        let need = if software {
            crate::cable::replay_need(port.mtu)
        } else {
            base.setup.need(port.speed, port.propagation(), port.mtu)
        };
        let mut s = base.setup;
        s.max_bytes = base.bytes.unwrap_or(need.bytes);
        s.max_frames = base
            .frames
            .unwrap_or(need.frames.min(MAX_OUTSTANDING_FRAMES as u64) as u32);
        s.replay_timer = base.replay_timer.unwrap_or_else(|| {
            let twice = Time::from_ps(2 * need.round_trip.as_ps());
            if software {
                twice
            } else {
                twice.min(MAX_REPLAY_TIMER)
            }
        });
        if !software && s.replay_timer > MAX_REPLAY_TIMER {
            return d.error(
                r.replay_timer.as_ref().and_then(line),
                &k.at("replay_timer"),
                format!(
                    "{}: port {} is cabled as hardware is, and {TIMER_RANGE}; only a `link:` port of `lossless tap` (a software cable) takes more, up to {}",
                    s.replay_timer,
                    port.name,
                    software_timer()
                ),
            );
        }
        if s.max_bytes < port.mtu as u64 {
            return d.error(
                r.max_outstanding_bytes.as_ref().and_then(line),
                &k.at("max_outstanding_bytes"),
                format!(
                    "{}: port {}'s replay buffer holds less than one {}-byte frame (its MTU), so such a frame could never be sent",
                    Bytes(s.max_bytes),
                    port.name,
                    port.mtu
                ),
            );
        }
        let mut why = Vec::new();
        if s.max_bytes < need.bytes {
            why.push(format!("{} B (has {})", need.bytes, s.max_bytes));
        }
        if (s.max_frames as u64) < need.frames {
            why.push(format!(
                "{} frames of 64 B (has {})",
                need.frames, s.max_frames
            ));
        }
        if !why.is_empty() {
            let text = format!(
                "at {}, {} one way, MTU {}: line rate needs a replay buffer of {}: a frame's copy stays {} (frame, cable both ways, the ACK spacing, one frame the ACK waits behind); below that the sender idles waiting for ACKs",
                port.speed,
                port.propagation(),
                port.mtu,
                why.join(" and "),
                need.round_trip
            );
            match short.iter_mut().find(|(t, _)| *t == text) {
                Some((_, names)) => names.push(port.name.clone()),
                None => short.push((text, vec![port.name.clone()])),
            }
        }
        if s.replay_timer > Time::ZERO && s.replay_timer < need.round_trip {
            d.warn(
                r.replay_timer.as_ref().and_then(line),
                &k.at("replay_timer"),
                format!(
                    "{}: port {}'s ACKs take {} to come back, so the replay timer fires before them and replays frames that arrived",
                    s.replay_timer, port.name, need.round_trip
                ),
            );
        }
        port.llr = Some(s);
    }
    for (text, names) in short {
        let ports = if names.len() == 1 { "port" } else { "ports" };
        d.warn(
            r.max_outstanding_bytes
                .as_ref()
                .and_then(line)
                .or(line(raw)),
            &k.at("max_outstanding_bytes"),
            format!("{ports} {} {text}", names.join(", ")),
        );
    }
    Ok(())
}

/// The profile as given: what every port shares, and the sizes and timer that default
/// per port.
struct Profile {
    setup: LlrSetup,
    frames: Option<u32>,
    bytes: Option<u64>,
    replay_timer: Option<Time>,
}

/// The settings of `llr:`, checked against the bounds SAI and SONiC give them.
fn profile(d: &Diags, k: &Key, r: &LlrRaw) -> Result<Profile> {
    let def = LlrSetup::default();
    let frames = match &r.max_outstanding_frames {
        None => None,
        Some(v) => Some(d.int_in(
            v,
            &k.at("max_outstanding_frames"),
            1,
            MAX_OUTSTANDING_FRAMES as i64,
            "outstanding frames ",
        )? as u32),
    };
    let bytes = d
        .opt_unit_in(
            &r.max_outstanding_bytes,
            &k.at("max_outstanding_bytes"),
            Bytes(1)..=Bytes(u32::MAX as u64),
            "the replay buffer holds 1 B to 4 GiB (SONiC)",
        )?
        .map(Bytes::get);
    let replay_timer = d.opt_unit_in(
        &r.replay_timer,
        &k.at("replay_timer"),
        Time::ZERO..=software_timer(),
        &format!("{TIMER_RANGE}, or up to {} on a `link:` port of `lossless tap` (its software cable's default)", software_timer()),
    )?;
    let max_replay_count = match &r.max_replay_count {
        None => def.max_replay_count,
        Some(v) => d.int_in(v, &k.at("max_replay_count"), 1, 255, "replay count ")? as u8,
    };
    let ctlos_spacing = d
        .opt_unit_in(
            &r.ctlos_spacing,
            &k.at("ctlos_spacing"),
            Bytes(400)..=Bytes(16_384),
            "ACKs are 400 B to 16 KiB apart (SONiC; default 2048 B)",
        )?
        .unwrap_or(def.ctlos_spacing);
    let timeout = |v: &Option<Val<Scalar>>, name: &str| -> Result<Time> {
        Ok(d.opt_unit_in(
            v,
            &k.at(name),
            Time::ZERO..=Time::from_ns(u32::MAX as u64),
            "at most 4,294,967,295 ns (SONiC); 0 turns it off",
        )?
        .unwrap_or(Time::ZERO))
    };
    let data_age_timeout = timeout(&r.data_age_timeout, "data_age_timeout")?;
    let pcs_lost_timeout = timeout(&r.pcs_lost_timeout, "pcs_lost_timeout")?;
    let init_action = d
        .opt_word(&r.init_action, &k.at("init_action"))?
        .unwrap_or(def.init_action);
    let flush_action = d
        .opt_word(&r.flush_action, &k.at("flush_action"))?
        .unwrap_or(def.flush_action);
    let re_init_on_flush = r
        .re_init_on_flush
        .as_ref()
        .map_or(def.re_init_on_flush, |v| v.value);
    Ok(Profile {
        setup: LlrSetup {
            max_replay_count,
            ctlos_spacing,
            data_age_timeout,
            pcs_lost_timeout,
            init_action,
            flush_action,
            re_init_on_flush,
            ..def
        },
        frames,
        bytes,
        replay_timer,
    })
}
