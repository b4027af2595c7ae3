//! The measurement window: what each port did between two instants — transmitter busy
//! time and, per priority, time it was paused — from samples of the models taken at the
//! window's edges. Both engines use it; the reports turn it into utilisation and pause
//! fractions.

use lossless_buffer_model::{Time, PRIORITIES};
use lossless_pipeline::Switch;
use lossless_ports::host::Host;

/// A port's cumulative busy and paused times at one instant.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PortSample {
    /// Time its transmitter was busy (wire time of frames, preamble and gap included).
    pub busy: Time,
    /// Time each priority was paused by PFC frames it received.
    pub paused: [Time; PRIORITIES],
}

/// Samples of every switch port and host NIC at one instant.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Samples {
    /// Per switch, per port.
    pub switches: Vec<Vec<PortSample>>,
    /// Per host NIC.
    pub hosts: Vec<PortSample>,
    /// Per switch, per next-hop group, bytes sent to each member so far.
    pub group_bytes: Vec<Vec<Vec<u64>>>,
}

impl Samples {
    /// Sample `switches` and `hosts` at `t` (at or after every event they have seen).
    pub fn take<'a>(
        switches: impl IntoIterator<Item = &'a Switch>,
        hosts: impl IntoIterator<Item = &'a Host>,
        t: Time,
    ) -> Samples {
        let switches: Vec<&Switch> = switches.into_iter().collect();
        Samples {
            group_bytes: switches
                .iter()
                .map(|sw| {
                    sw.groups().map_or_else(Vec::new, |g| {
                        g.iter().map(|(_, c)| c.member_bytes.clone()).collect()
                    })
                })
                .collect(),
            switches: switches
                .into_iter()
                .map(|sw| {
                    (0..sw.ports().len())
                        .map(|p| PortSample {
                            busy: sw.ports()[p].busy_time(t),
                            paused: core::array::from_fn(|pr| sw.paused_time(p, pr, t)),
                        })
                        .collect()
                })
                .collect(),
            hosts: hosts
                .into_iter()
                .map(|h| PortSample {
                    busy: h.busy_time(t),
                    paused: core::array::from_fn(|pr| h.paused_time(pr, t)),
                })
                .collect(),
        }
    }
}

impl Samples {
    /// The same shape with every time zero (what any port had done at time 0).
    pub fn zeroed(mut self) -> Samples {
        for s in self
            .switches
            .iter_mut()
            .flatten()
            .chain(self.hosts.iter_mut())
        {
            *s = PortSample::default();
        }
        for b in self.group_bytes.iter_mut().flatten().flatten() {
            *b = 0;
        }
        self
    }
}

/// What happened between `from` and `to`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Window {
    /// Start.
    pub from: Time,
    /// End.
    pub to: Time,
    /// Samples at `from`.
    pub start: Samples,
    /// Samples at `to`.
    pub end: Samples,
}

/// Utilisation and pause fractions of one port over the window.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PortShare {
    /// Fraction of the window the transmitter was busy.
    pub utilization: f64,
    /// Fraction of the window each priority was paused.
    pub paused: [f64; PRIORITIES],
}

impl Window {
    /// Length of the window.
    pub fn len(&self) -> Time {
        self.to.saturating_sub(self.from)
    }

    fn share(&self, a: &PortSample, b: &PortSample) -> PortShare {
        let len = self.len().as_ps() as f64;
        let frac = |x: Time, y: Time| {
            if len > 0.0 {
                y.saturating_sub(x).as_ps() as f64 / len
            } else {
                0.0
            }
        };
        PortShare {
            utilization: frac(a.busy, b.busy),
            paused: core::array::from_fn(|p| frac(a.paused[p], b.paused[p])),
        }
    }

    /// Port `port` of switch `sw` over the window.
    pub fn switch_port(&self, sw: usize, port: usize) -> PortShare {
        self.share(&self.start.switches[sw][port], &self.end.switches[sw][port])
    }

    /// Bytes switch `sw`'s group `g` sent to each member over the window.
    pub fn group_bytes(&self, sw: usize, g: usize) -> Vec<u64> {
        let (a, b) = (&self.start.group_bytes[sw][g], &self.end.group_bytes[sw][g]);
        a.iter().zip(b).map(|(x, y)| y.saturating_sub(*x)).collect()
    }

    /// Host `h`'s NIC over the window.
    pub fn host(&self, h: usize) -> PortShare {
        self.share(&self.start.hosts[h], &self.end.hosts[h])
    }
}
