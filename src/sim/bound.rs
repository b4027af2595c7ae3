//! When a simulated run ends: at its duration (the file's or `--duration`), or — when every
//! flow is finite and nothing polls forever — as soon as the network is idle.

use super::SimError;
use crate::config::Scenario;
use lossless_buffer_model::Time;

/// The end of a run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Bound {
    /// The run ends here at the latest.
    pub end: Time,
    /// It ends as soon as all finite flows are delivered and the network is idle.
    pub until_idle: bool,
}

/// The end of a run of `scenario` lasting `duration` (None: the file gives none).
pub fn bound(scenario: &Scenario, duration: Option<Time>) -> Result<Bound, SimError> {
    let flows = &scenario.run.flows;
    let all_finite = flows.iter().all(|f| f.spec.finite());
    let watchdog = scenario
        .switches
        .iter()
        .any(|s| s.config.qos.pfcwd.is_some());
    match duration {
        Some(end) => Ok(Bound {
            end,
            until_idle: false,
        }),
        None if all_finite && !flows.is_empty() && !watchdog => Ok(Bound {
            end: Time::MAX,
            until_idle: true,
        }),
        None => Err(SimError::Unbounded(format!(
            "scenario `{}` has no duration and {}: give `duration:` in the file or --duration",
            scenario.name,
            if flows.is_empty() {
                "no flows"
            } else if all_finite {
                "a PFC watchdog that polls forever"
            } else {
                "flows without size, packets, messages or stop"
            }
        ))),
    }
}
