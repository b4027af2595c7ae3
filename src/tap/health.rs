//! What the link protocols of a running TAP switch say about its peers, told once on
//! stderr: a port whose CBFC or LLR INIT has gone unanswered for [`UNANSWERED`] (its peer
//! does not speak the protocol, or is not there), and messages of a protocol that arrive
//! at a switch whose port does not speak it (`cbfc_not_enabled`, `llr_not_enabled`): a
//! one-sided configuration, where the credited class would otherwise be black-holed in
//! silence.

use lossless_buffer_model::Time;
use lossless_pipeline::drop_reason::DropReason;
use lossless_pipeline::Switch;

/// How long an INIT may go unanswered before it is told.
pub const UNANSWERED: Time = Time::from_ms(2000);

/// What has been told already (each once).
#[derive(Debug, Default)]
pub struct Health {
    /// Per port: its CBFC INIT, its LLR INIT told unanswered.
    told: Vec<[bool; 2]>,
    /// `cbfc_not_enabled`, `llr_not_enabled` drops told.
    told_drops: [bool; 2],
}

impl Health {
    /// Look at `sw` at `now` and return what is newly wrong, one line each.
    pub fn check(&mut self, sw: &Switch, now: Time) -> Vec<String> {
        let mut out = Vec::new();
        let names = &sw.config().ports;
        self.told.resize(sw.ports().len(), [false; 2]);
        for (i, p) in sw.ports().iter().enumerate() {
            let cbfc = p.link.cbfc().and_then(|c| c.unanswered_since());
            let llr = p.link.llr().and_then(|l| l.initialising_since());
            for (k, (since, what, hint)) in [
                (
                    cbfc,
                    "CBFC",
                    "qos.flow_control: cbfc, or a port's flow_control: cbfc",
                ),
                (llr, "LLR", "llr: on its port"),
            ]
            .into_iter()
            .enumerate()
            {
                let waited = since.map(|s| now.saturating_sub(s));
                if waited.is_none() {
                    // Answered: told again should it go unanswered again.
                    self.told[i][k] = false;
                }
                if waited.is_some_and(|w| w >= UNANSWERED) && !self.told[i][k] {
                    self.told[i][k] = true;
                    out.push(format!(
                        "port {}: its {what} INIT has had no answer for {}: does the switch on the other end speak {what} ({hint})? Until it answers, {}",
                        names[i].name,
                        waited.expect("checked"),
                        if k == 0 {
                            "the port sends nothing on its credited channels"
                        } else {
                            "the port's frames go out unprotected (init_action)"
                        }
                    ));
                }
            }
        }
        for (k, (reason, what)) in [
            (DropReason::CbfcNotEnabled, "CBFC credit messages"),
            (DropReason::LlrNotEnabled, "LLR messages or numbered frames"),
        ]
        .into_iter()
        .enumerate()
        {
            let n = sw.drops().get(reason);
            if n > 0 && !self.told_drops[k] {
                self.told_drops[k] = true;
                out.push(format!(
                    "{n} {what} arrived on a port that does not speak the protocol (drop reason {}): the switch on the other end speaks it and this one does not",
                    reason.name()
                ));
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A switch of one port speaking CBFC, its INIT sent at 0 and never answered: told
    /// once, after two seconds and not before.
    #[test]
    fn an_unanswered_init_is_told_once_after_two_seconds() {
        let text = "switches:\n  - name: s\n    ports: {count: 1, speed: 1G, mtu: 1518}\n    qos: {pfc_enable: [3], flow_control: cbfc}\n";
        let l = crate::config::parse("t.yaml", "t", text).unwrap();
        let cfg = l.scenario.switches[0].config.clone();
        let mut sw = Switch::new(cfg);
        sw.start_link_protocols(7, Time::ZERO);
        let mut h = Health::default();
        assert!(h.check(&sw, Time::from_ms(1999)).is_empty());
        let told = h.check(&sw, Time::from_ms(2000));
        assert_eq!(told.len(), 1, "{told:?}");
        assert!(
            told[0].contains("its CBFC INIT has had no answer for 2s"),
            "{told:?}"
        );
        assert!(h.check(&sw, Time::from_ms(5000)).is_empty());
    }
}
