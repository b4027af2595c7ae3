//! `qos:` of a switch — classification maps, PFC, scheduler, WRED/ECN profiles and the PFC
//! watchdog — with SONiC's names and defaults.

use crate::config::diag::{Diag, Diags, Key};
use crate::config::schema::{PfcwdRaw, QosRaw, Scalar, Val, WredRaw};
use crate::config::values::{line, line_or, list_or_none};
use crate::config::words::{EcnMode, SchedKind};
use lossless_buffer_model::scheduler::{Discipline, DEFAULT_DWRR_WEIGHT};
use lossless_buffer_model::watchdog::WatchdogConfig;
use lossless_buffer_model::wred::{self, ColorPolicy, Curve, WredProfile};
use lossless_buffer_model::{Bytes, Time, PRIORITIES};
use lossless_pipeline::config::QosConfig;
use lossless_pipeline::config::{identity8, sonic_dscp_to_tc};
use std::collections::BTreeMap;

type Result<T> = std::result::Result<T, Diag>;

/// The QoS settings of switch `sw`.
pub fn resolve(d: &Diags, sw: &Key, q: &QosRaw) -> Result<QosConfig> {
    let k = sw.at("qos");
    let trust = d
        .opt_word(&q.trust, &k.at("trust"))?
        .unwrap_or(QosConfig::default().trust);
    let dscp_to_tc = dscp_map(d, &k.at("dscp_to_tc"), &q.dscp_to_tc)?;
    let map = |m: &Option<Val<BTreeMap<String, Val<i64>>>>, name: &str| -> Result<[u8; 8]> {
        match m {
            Some(m) => d.prio_map(m, &k.at(name), identity8(), 7),
            None => Ok(identity8()),
        }
    };
    let dot1p_to_tc = map(&q.dot1p_to_tc, "dot1p_to_tc")?;
    // A drop-eligible frame is classified as any other unless the map says otherwise.
    let dei_to_tc = match &q.dei_to_tc {
        Some(m) => d.prio_map(m, &k.at("dei_to_tc"), dot1p_to_tc, 7)?,
        None => dot1p_to_tc,
    };
    let tc_to_pg = map(&q.tc_to_pg, "tc_to_pg")?;
    let tc_to_queue = map(&q.tc_to_queue, "tc_to_queue")?;
    let tc_to_dot1p = match &q.tc_to_dot1p {
        Some(_) => Some(map(&q.tc_to_dot1p, "tc_to_dot1p")?),
        None => None,
    };
    let pfc_enable = match &q.pfc_enable {
        None => QosConfig::default().pfc_enable,
        Some(list) => {
            let mut m = 0u8;
            for p in &list.value {
                m |= 1 << d.small(p, &k.at("pfc_enable"), 7)?;
            }
            m
        }
    };
    let pfc_asym = match &q.pfc_asym {
        None => false,
        Some(v) if v.value == "on" => true,
        Some(v) if v.value == "off" => false,
        Some(v) => {
            return d.error(
                line(v),
                &k.at("pfc_asym"),
                format!("`{}`: pfc_asym is `on` or `off`", v.value),
            )
        }
    };
    let flow_control = d
        .opt_word(&q.flow_control, &k.at("flow_control"))?
        .unwrap_or_default();
    let pause_quanta = match &q.pause_quanta {
        None => QosConfig::default().pause_quanta,
        Some(v) if (1..=65_535).contains(&v.value) => v.value as u16,
        Some(v) => {
            return d.error(
                line(v),
                &k.at("pause_quanta"),
                format!("{} quanta: a pause time is 1–65535 quanta", v.value),
            )
        }
    };
    let pfc_response = d
        .opt_unit(&q.pfc_response, &k.at("pfc_response"))?
        .unwrap_or(QosConfig::default().pfc_response);
    let scheduler = scheduler(d, &k.at("scheduler"), q)?;
    let mut profiles = BTreeMap::new();
    for (name, p) in q.wred_profiles.iter().flat_map(|w| &w.value) {
        profiles.insert(name.clone(), wred(d, &k.at("wred_profiles").at(name), p)?);
    }
    let mut queue_wred = [None; PRIORITIES];
    for (range, name) in q.queue_wred.iter().flat_map(|m| &m.value) {
        let kk = k.at("queue_wred").at(range);
        let mask = d.range(range, line(name), &kk)?;
        let Some(p) = profiles.get(&name.value) else {
            let known: Vec<_> = profiles.keys().cloned().collect();
            return d.error(
                line(name),
                &kk,
                format!(
                    "unknown WRED profile `{}` (defined: {})",
                    name.value,
                    list_or_none(&known)
                ),
            );
        };
        Diags::fill(&mut queue_wred, mask, Some(*p));
    }
    let pfcwd = match &q.pfcwd {
        Some(w) => Some(pfcwd(d, &k.at("pfcwd"), w)?),
        None => None,
    };
    Ok(QosConfig {
        trust,
        dscp_to_tc,
        dot1p_to_tc,
        dei_to_tc,
        tc_to_pg,
        tc_to_queue,
        tc_to_dot1p,
        pfc_enable,
        pfc_asym,
        flow_control,
        pause_quanta,
        pfc_response,
        scheduler,
        queue_wred,
        pfcwd,
    })
}

/// `dscp_to_tc`: SONiC's map, overridden by `default` and per-DSCP entries.
fn dscp_map(d: &Diags, k: &Key, m: &Option<Val<BTreeMap<String, Val<i64>>>>) -> Result<[u8; 64]> {
    let mut out = sonic_dscp_to_tc();
    let Some(m) = m else { return Ok(out) };
    if let Some(v) = m.value.get("default") {
        out = [d.small(v, &k.at("default"), 7)?; 64];
    }
    for (key, v) in m.value.iter().filter(|(key, _)| *key != "default") {
        let kk = k.at(key);
        let Ok(dscp) = key.parse::<u8>() else {
            return d.error(
                line(v),
                &kk,
                format!("`{key}` is not a DSCP value (0–63) or `default`"),
            );
        };
        if dscp > 63 {
            return d.error(line(v), &kk, format!("DSCP {dscp} is outside 0–63"));
        }
        out[dscp as usize] = d.small(v, &kk, 7)?;
    }
    Ok(out)
}

/// `scheduler: {range: {type, weight}}`: DWRR with equal weights unless told.
fn scheduler(d: &Diags, k: &Key, q: &QosRaw) -> Result<[Discipline; PRIORITIES]> {
    let mut out = QosConfig::default().scheduler;
    for (range, e) in q.scheduler.iter().flat_map(|s| &s.value) {
        let kk = k.at(range);
        let mask = d.range(range, line(e), &kk)?;
        let disc = match d.word::<SchedKind>(&e.value.kind, &kk.at("type"))? {
            SchedKind::Strict => {
                if let Some(w) = &e.value.weight {
                    return d.error(line(w), &kk.at("weight"), "a strict queue has no weight");
                }
                Discipline::Strict
            }
            SchedKind::Dwrr => match &e.value.weight {
                None => Discipline::Dwrr(DEFAULT_DWRR_WEIGHT),
                Some(w) => {
                    Discipline::Dwrr(d.int_in(w, &kk.at("weight"), 1, 100, "weight ")? as u32)
                }
            },
        };
        Diags::fill(&mut out, mask, disc);
    }
    Ok(out)
}

/// A WRED profile (SONiC `WRED_PROFILE` keys).
fn wred(d: &Diags, key: &Key, p: &Val<WredRaw>) -> Result<WredProfile> {
    let w = &p.value;
    let ecn: EcnMode = d.opt_word(&w.ecn, &key.at("ecn"))?.unwrap_or(EcnMode::None);
    let mark_at = d
        .opt_word(&w.mark_at, &key.at("mark_at"))?
        .unwrap_or_default();
    let colour = |name: &str,
                  min: &Option<Val<Scalar>>,
                  max: &Option<Val<Scalar>>,
                  prob: &Option<Val<i64>>,
                  enable: &Option<Val<bool>>,
                  bit: u8|
     -> Result<ColorPolicy> {
        let kmin: Option<Bytes> = d.opt_unit(min, &key.at(&format!("{name}_min")))?;
        let kmax: Option<Bytes> = d.opt_unit(max, &key.at(&format!("{name}_max")))?;
        let kprob = key.at(&format!("{name}_drop_probability"));
        let curve = match (kmin, kmax) {
            (None, None) => {
                if let Some(p) = prob {
                    return d.error(line(p), &kprob, format!("needs {name}_min and {name}_max"));
                }
                None
            }
            (Some(a), Some(b)) => {
                if a > b {
                    return d.error(
                        min.as_ref().and_then(line),
                        &key.at(&format!("{name}_min")),
                        format!("Kmin {a} is above Kmax {b}"),
                    );
                }
                let max_probability = match prob {
                    None => wred::DEFAULT_MAX_PROBABILITY,
                    Some(p) if (0..=100).contains(&p.value) => p.value as u8,
                    Some(p) => {
                        return d.error(line(p), &kprob, format!("{}% is outside 0–100", p.value))
                    }
                };
                Some(Curve {
                    min: a,
                    max: b,
                    max_probability,
                })
            }
            _ => {
                return d.error(
                    min.as_ref().or(max.as_ref()).and_then(line),
                    &key.at(&format!("{name}_min")),
                    format!("give both {name}_min and {name}_max"),
                )
            }
        };
        Ok(ColorPolicy {
            curve,
            wred: enable.as_ref().is_some_and(|e| e.value),
            ecn: ecn.colors() & bit != 0,
        })
    };
    Ok(WredProfile {
        colors: [
            colour(
                "green",
                &w.green_min,
                &w.green_max,
                &w.green_drop_probability,
                &w.wred_green_enable,
                0b001,
            )?,
            colour(
                "yellow",
                &w.yellow_min,
                &w.yellow_max,
                &w.yellow_drop_probability,
                &w.wred_yellow_enable,
                0b010,
            )?,
            colour(
                "red",
                &w.red_min,
                &w.red_max,
                &w.red_drop_probability,
                &w.wred_red_enable,
                0b100,
            )?,
        ],
        mark_at,
    })
}

/// `pfcwd:` (SONiC `PFC_WD`).
fn pfcwd(d: &Diags, key: &Key, w: &Val<PfcwdRaw>) -> Result<WatchdogConfig> {
    let v = &w.value;
    let action = d
        .opt_word(&v.action, &key.at("action"))?
        .unwrap_or(WatchdogConfig::default().action);
    let detection_time: Time = d
        .opt_unit(&v.detection_time, &key.at("detection_time"))?
        .unwrap_or(WatchdogConfig::default().detection_time);
    let restoration_time: Time = d
        .opt_unit(&v.restoration_time, &key.at("restoration_time"))?
        .unwrap_or(WatchdogConfig::default().restoration_time);
    let polling_interval = d
        .opt_unit(&v.polling_interval, &key.at("polling_interval"))?
        .unwrap_or(WatchdogConfig::polling_for(
            detection_time,
            restoration_time,
        ));
    if polling_interval == Time::ZERO || polling_interval > detection_time {
        return d.error(
            line_or(&v.polling_interval, w),
            &key.at("polling_interval"),
            format!(
                "{polling_interval} must be above 0 and at most detection_time {detection_time}"
            ),
        );
    }
    Ok(WatchdogConfig {
        action,
        detection_time,
        restoration_time,
        polling_interval,
    })
}

#[cfg(test)]
mod tests {
    use crate::config::parse;
    use lossless_buffer_model::scheduler::Discipline;
    use lossless_buffer_model::watchdog::WatchdogAction;
    use lossless_buffer_model::Time;
    use lossless_pipeline::config::Trust;

    fn qos(q: &str) -> Result<lossless_pipeline::config::QosConfig, crate::config::ConfigError> {
        let text = format!("switches:\n  - name: s\n    ports: {{count: 2}}\n    qos: {q}\n");
        parse("f.yaml", "f", &text).map(|l| l.scenario.switches[0].config.qos.clone())
    }

    #[test]
    fn pfc_asym_is_on_or_off() {
        assert!(!qos("{}").unwrap().pfc_asym);
        let q = qos("{pfc_enable: [], pfc_asym: on}").unwrap();
        assert!(q.pfc_asym && q.pfc_honoured() == 0xFF && q.pfc_enable == 0);
        let e = qos("{pfc_asym: yes}").unwrap_err().to_string();
        assert!(
            e.contains("s.qos.pfc_asym: `yes`: pfc_asym is `on` or `off`"),
            "{e}"
        );
    }

    #[test]
    fn defaults_are_sonics() {
        let q = qos("{}").unwrap();
        assert_eq!(q.trust, Trust::Dscp);
        assert_eq!(
            (q.dscp_to_tc[3], q.dscp_to_tc[48], q.dscp_to_tc[0]),
            (3, 6, 1)
        );
        assert_eq!(q.pfc_enable, 0b0001_1000);
        assert_eq!(q.pause_quanta, 0xFFFF);
        assert!(q.scheduler.iter().all(|s| *s == Discipline::Dwrr(1)));
    }

    #[test]
    fn maps_scheduler_and_watchdog_resolve() {
        let q = qos("{trust: dot1p, dot1p_to_tc: {\"5-7\": 2}, scheduler: {\"6-7\": {type: strict}}, pfcwd: {action: alert, detection_time: 1ms}}").unwrap();
        assert_eq!(q.trust, Trust::Dot1p);
        assert_eq!(q.dot1p_to_tc, [0, 1, 2, 3, 4, 2, 2, 2]);
        assert_eq!(q.scheduler[7], Discipline::Strict);
        let w = q.pfcwd.unwrap();
        assert_eq!(w.action, WatchdogAction::Alert);
        assert_eq!(w.polling_interval, Time::from_us(250));
    }

    #[test]
    fn words_off_the_list_name_their_key() {
        let e = qos("{trust: ip}").unwrap_err().to_string();
        assert_eq!(e, "f.yaml:4: s.qos.trust: `ip`: expected dscp or dot1p");
        let e = qos("{scheduler: {\"0\": {type: fair}}}")
            .unwrap_err()
            .to_string();
        assert!(
            e.ends_with("s.qos.scheduler.0.type: `fair`: expected strict or dwrr"),
            "{e}"
        );
        let e = qos("{pause_quanta: 70000}").unwrap_err().to_string();
        assert!(
            e.ends_with("s.qos.pause_quanta: 70000 quanta: a pause time is 1–65535 quanta"),
            "{e}"
        );
    }
}
