//! PFC watchdog (SONiC `PFC_WD`) for one lossless queue.
//!
//! Polled at a fixed interval. A storm is a queue that has packets, sent nothing since the
//! last poll, while pause frames keep arriving for its priority. Once that has held for
//! `detection_time` the action applies, until no pause frame has arrived for
//! `restoration_time`.

use crate::units::Time;

/// What the watchdog does to a stormed queue.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WatchdogAction {
    /// Discard the queue's packets and new arrivals; ignore pause on it.
    Drop,
    /// Ignore pause on the queue: transmit anyway.
    Forward,
    /// Only count and report the storm.
    Alert,
}

impl crate::named::Named for WatchdogAction {
    const WORDS: &'static [(&'static str, WatchdogAction)] = &[
        ("drop", WatchdogAction::Drop),
        ("forward", WatchdogAction::Forward),
        ("alert", WatchdogAction::Alert),
    ];
}

/// Watchdog settings.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WatchdogConfig {
    /// Action on a storm.
    pub action: WatchdogAction,
    /// How long the storm condition must hold.
    pub detection_time: Time,
    /// How long without pause frames before the queue is restored.
    pub restoration_time: Time,
    /// Poll period.
    pub polling_interval: Time,
}

/// What a poll observed of the queue.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Observation {
    /// The queue holds packets.
    pub has_packets: bool,
    /// Packets the queue has transmitted in all.
    pub tx_packets: u64,
    /// Pause frames received for this queue's priority in all.
    pub pause_frames: u64,
}

/// A state change reported by [`QueueWatchdog::poll`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Transition {
    /// A storm was detected: the action applies from now.
    StormDetected,
    /// The storm is over: normal operation from now.
    Restored,
}

/// Watchdog state of one queue.
#[derive(Clone, Copy, Debug, Default)]
pub struct QueueWatchdog {
    last: Option<Observation>,
    /// Since when the storm condition has held continuously.
    suspect_since: Option<Time>,
    /// Last poll at which new pause frames were seen.
    last_pause_seen: Time,
    /// The action is in force.
    pub stormed: bool,
    /// Storms detected.
    pub storms: u64,
    /// Storms restored.
    pub restorations: u64,
    /// Packets discarded by the drop action.
    pub dropped_packets: u64,
}

impl QueueWatchdog {
    /// Poll at `now`; returns a transition when one happens.
    pub fn poll(
        &mut self,
        cfg: &WatchdogConfig,
        now: Time,
        obs: Observation,
    ) -> Option<Transition> {
        let prev = self.last.replace(obs)?;
        let new_pauses = obs.pause_frames > prev.pause_frames;
        if new_pauses {
            self.last_pause_seen = now;
        }
        if self.stormed {
            if now.saturating_sub(self.last_pause_seen) >= cfg.restoration_time {
                self.stormed = false;
                self.suspect_since = None;
                self.restorations += 1;
                return Some(Transition::Restored);
            }
            return None;
        }
        let stuck = obs.has_packets && obs.tx_packets == prev.tx_packets && new_pauses;
        if !stuck {
            self.suspect_since = None;
            return None;
        }
        // The condition has held since the previous poll at the latest.
        let since = *self
            .suspect_since
            .get_or_insert(now.saturating_sub(cfg.polling_interval));
        if now - since >= cfg.detection_time {
            self.stormed = true;
            self.storms += 1;
            return Some(Transition::StormDetected);
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn detects_after_detection_time_and_restores_after_quiet() {
        let cfg = WatchdogConfig {
            action: WatchdogAction::Drop,
            detection_time: Time::from_ms(200),
            restoration_time: Time::from_ms(200),
            polling_interval: Time::from_ms(50),
        };
        let mut w = QueueWatchdog::default();
        let mut pauses = 0;
        let mut detected_at = None;
        for i in 0..20u64 {
            pauses += 3;
            let obs = Observation {
                has_packets: true,
                tx_packets: 10,
                pause_frames: pauses,
            };
            if w.poll(&cfg, Time::from_ms(50 * i), obs) == Some(Transition::StormDetected) {
                detected_at = Some(50 * i);
                break;
            }
        }
        assert_eq!(
            detected_at,
            Some(200),
            "first stuck poll at 50 ms covers 0–50 ms"
        );
        let mut restored_at = None;
        for i in 5..20u64 {
            let obs = Observation {
                has_packets: true,
                tx_packets: 10,
                pause_frames: pauses,
            };
            if w.poll(&cfg, Time::from_ms(50 * i), obs) == Some(Transition::Restored) {
                restored_at = Some(50 * i);
                break;
            }
        }
        assert_eq!(restored_at, Some(400));
        assert_eq!((w.storms, w.restorations), (1, 1));
    }

    #[test]
    fn a_queue_that_sends_is_no_storm() {
        let cfg = WatchdogConfig {
            action: WatchdogAction::Alert,
            detection_time: Time::from_ms(100),
            restoration_time: Time::from_ms(100),
            polling_interval: Time::from_ms(10),
        };
        let mut w = QueueWatchdog::default();
        for i in 0..100u64 {
            let obs = Observation {
                has_packets: true,
                tx_packets: i,
                pause_frames: i,
            };
            assert_eq!(w.poll(&cfg, Time::from_ms(10 * i), obs), None);
        }
    }
}
