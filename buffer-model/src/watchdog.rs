//! PFC watchdog (SONiC `PFC_WD`) for one lossless queue.
//!
//! Polled at a fixed interval. A storm is a queue that has packets, sent nothing since the
//! last poll, and was paused since then: new pause frames arrived for its priority, or its
//! pause time grew (as SONiC's detection reads the rx PFC frame and pause-duration
//! counters; a poll shorter than the peer's refresh period sees no new frame, but the
//! pause still counts). Once that has held for `detection_time` the action applies, until
//! no pause frame has arrived for `restoration_time`.

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

impl WatchdogConfig {
    /// A watchdog with `action`, `detection_time` and `restoration_time`, polling at a
    /// quarter of the shorter of the two (so a storm is seen within a quarter of its time).
    pub fn new(action: WatchdogAction, detection_time: Time, restoration_time: Time) -> Self {
        WatchdogConfig {
            action,
            detection_time,
            restoration_time,
            polling_interval: Self::polling_for(detection_time, restoration_time),
        }
    }

    /// The default poll period: a quarter of the shorter of detection and restoration time.
    pub fn polling_for(detection: Time, restoration: Time) -> Time {
        Time(detection.min(restoration).as_ps() / 4).max(Time(1))
    }
}

impl Default for WatchdogConfig {
    /// SONiC's defaults: drop, 200 ms to detect, 200 ms to restore.
    fn default() -> Self {
        WatchdogConfig::new(WatchdogAction::Drop, Time::from_ms(200), Time::from_ms(200))
    }
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
    /// Time this queue's priority has been paused in all.
    pub paused_time: Time,
}

/// A state change reported by [`QueueWatchdog::poll`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Transition {
    /// A storm was detected: the action applies from now.
    StormDetected,
    /// The storm is over: normal operation from now.
    Restored,
}

/// Storms a queue's watchdog remembers, each with when it was detected and restored.
pub const STORM_HISTORY: usize = 64;

/// Watchdog state of one queue.
#[derive(Clone, Debug, Default)]
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
    /// The poll that first declared a storm.
    pub first_detected: Option<Time>,
    /// The poll that last restored the queue.
    pub last_restored: Option<Time>,
    /// The first [`STORM_HISTORY`] storms: the poll that detected each, and the one that
    /// restored it (None: still stormed).
    pub history: Vec<(Time, Option<Time>)>,
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
                self.last_restored = Some(now);
                if let Some(last) = self.history.last_mut().filter(|h| h.1.is_none()) {
                    last.1 = Some(now);
                }
                return Some(Transition::Restored);
            }
            return None;
        }
        let paused = new_pauses || obs.paused_time > prev.paused_time;
        let stuck = obs.has_packets && obs.tx_packets == prev.tx_packets && paused;
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
            self.first_detected.get_or_insert(now);
            if self.history.len() < STORM_HISTORY {
                self.history.push((now, None));
            }
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
                paused_time: Time::ZERO,
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
                paused_time: Time::ZERO,
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
                paused_time: Time::ZERO,
            };
            assert_eq!(w.poll(&cfg, Time::from_ms(10 * i), obs), None);
        }
    }

    #[test]
    fn a_pause_refreshed_less_often_than_the_poll_still_counts() {
        // The peer refreshes XOFF every 3 polls; pause time grows at every poll.
        let cfg = WatchdogConfig {
            action: WatchdogAction::Drop,
            detection_time: Time::from_us(1000),
            restoration_time: Time::from_us(1000),
            polling_interval: Time::from_us(100),
        };
        let mut w = QueueWatchdog::default();
        let mut detected = None;
        for i in 0..30u64 {
            let obs = Observation {
                has_packets: true,
                tx_packets: 5,
                pause_frames: i / 3,
                paused_time: Time::from_us(100 * i),
            };
            if w.poll(&cfg, Time::from_us(100 * i), obs) == Some(Transition::StormDetected) {
                detected.get_or_insert(i);
            }
        }
        // Stuck from the poll at 100 µs on, counted from 0: detected at 1 ms.
        assert_eq!(detected, Some(10));
        assert_eq!(w.first_detected, Some(Time::from_us(1000)));
    }
}
