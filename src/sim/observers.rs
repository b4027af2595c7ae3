//! What watches a simulated run and writes files: pcap captures of switch ports and the CSV
//! time series. A write that fails stops the run with the file's name and the error (never
//! a capture silently cut short).

use super::timeseries::Sampler;
use super::{HostNode, RunOptions, SimError, SwitchNode};
use crate::config::{defaults, PortRef, Scenario};
use crate::outdir::{Created, Origin};
use lossless_buffer_model::Time;
use lossless_pipeline::Packet;
use lossless_sys::capture::Capture;
use std::path::PathBuf;

/// The output files of a run.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct OutputFiles {
    /// One pcap file per captured port.
    pub pcap: Vec<PathBuf>,
    /// The CSV time series.
    pub timeseries: Option<PathBuf>,
    /// The PFC event log (JSON lines).
    pub pfc_log: Option<PathBuf>,
    /// Directories created for them.
    pub created: Created,
    /// The time series stopped at its row cap before the run ended.
    pub timeseries_cut: bool,
}

/// One capture and where it writes.
struct Tap {
    capture: Capture,
    path: PathBuf,
}

/// The captures of one switch's ports (kept with the switch, so that the thread running
/// it writes them).
#[derive(Default)]
pub struct Taps {
    /// Per port (empty: no port of the switch is captured, as in most runs; every frame's
    /// look is one test).
    ports: Vec<Option<Tap>>,
}

impl Taps {
    /// Port `port` saw `pkt` at `t` (received, or started): written to its capture if it
    /// has one; the first write that fails is kept in `failed`.
    #[inline]
    pub fn frame(&mut self, port: usize, t: Time, pkt: &Packet, failed: &mut Option<SimError>) {
        if !self.ports.is_empty() {
            self.record(port, t, pkt, failed);
        }
    }

    fn record(&mut self, port: usize, t: Time, pkt: &Packet, failed: &mut Option<SimError>) {
        if let Some(tap) = &mut self.ports[port] {
            if let Err(source) = tap.capture.record(t, pkt) {
                failed.get_or_insert(SimError::Output {
                    path: tap.path.clone(),
                    source,
                });
            }
        }
    }

    /// Flush and close every capture.
    fn finish(&mut self) -> Result<(), SimError> {
        for tap in self.ports.iter_mut().filter_map(Option::take) {
            tap.capture.finish().map_err(|source| SimError::Output {
                path: tap.path,
                source,
            })?;
        }
        Ok(())
    }
}

/// The time-series sampler of a run and the files it writes (the captures are kept with
/// each switch: [`Taps`]).
pub struct Observers {
    sampler: Option<(Sampler, PathBuf)>,
    /// What the run writes.
    pub files: OutputFiles,
}

impl Observers {
    /// Open the files of `scenario`: its `outputs.pcap` (in `opts.pcap_dir` when given;
    /// every switch port when the file names none; each switch gets its ports' captures)
    /// and its time series.
    pub fn create(
        scenario: &Scenario,
        opts: &RunOptions,
        switches: &mut [SwitchNode],
        hosts: &[HostNode],
    ) -> Result<Observers, SimError> {
        let pcap = match (&scenario.run.outputs.pcap, &opts.pcap_dir) {
            (Some(p), None) => Some((p.ports.clone(), p.snaplen, p.dir.clone(), Origin::File)),
            (Some(p), Some(dir)) => {
                Some((p.ports.clone(), p.snaplen, dir.clone(), Origin::CommandLine))
            }
            (None, Some(dir)) => {
                let all = scenario
                    .switches
                    .iter()
                    .enumerate()
                    .flat_map(|(s, sw)| {
                        (0..sw.config.ports.len()).map(move |port| PortRef { switch: s, port })
                    })
                    .collect();
                Some((all, defaults::SNAPLEN, dir.clone(), Origin::CommandLine))
            }
            (None, None) => None,
        };
        let mut files = OutputFiles {
            created: opts.created.clone(),
            ..OutputFiles::default()
        };
        if let Some((ports, snaplen, dir, origin)) = pcap {
            files
                .created
                .dir(&dir, origin)
                .map_err(|source| SimError::Output {
                    path: dir.clone(),
                    source,
                })?;
            // Files are opened switch by switch, in the order the scenario lists the ports.
            for (si, sw) in scenario.switches.iter().enumerate() {
                for p in ports.iter().filter(|p| p.switch == si) {
                    let c = &sw.config;
                    let path = dir.join(format!("{}-{}.pcap", c.name, c.ports[p.port].name));
                    let capture =
                        Capture::create(&path, snaplen).map_err(|source| SimError::Output {
                            path: path.clone(),
                            source,
                        })?;
                    files.pcap.push(path.clone());
                    let taps = &mut switches[si].taps.ports;
                    if taps.is_empty() {
                        taps.resize_with(c.ports.len(), || None);
                    }
                    taps[p.port] = Some(Tap { capture, path });
                }
            }
        }
        let sampler = match &scenario.run.outputs.timeseries {
            Some(ts) => {
                files
                    .created
                    .file(&ts.csv, Origin::File)
                    .map_err(|source| SimError::Output {
                        path: ts.csv.clone(),
                        source,
                    })?;
                let s =
                    Sampler::create(ts, switches, hosts).map_err(|source| SimError::Output {
                        path: ts.csv.clone(),
                        source,
                    })?;
                files.timeseries = Some(ts.csv.clone());
                Some((s, ts.csv.clone()))
            }
            None => None,
        };
        Ok(Observers { sampler, files })
    }

    /// When the time series samples next after `now` (None: no regular samples left).
    pub fn next_sample_after(&self, now: Time) -> Option<Time> {
        self.sampler
            .as_ref()
            .and_then(|(s, _)| s.next_sample_after(now))
    }

    /// Where the time series' window starts, if one is written.
    pub fn series_from(&self) -> Option<Time> {
        self.sampler.as_ref().map(|(s, _)| s.window_start())
    }

    /// Before an event at `t`: with `sample: change`, write what the instant before it
    /// changed. Called before every event: the check is inlined into the event loop,
    /// the writing is not.
    #[inline(always)]
    pub fn instant(
        &mut self,
        t: Time,
        switches: &[SwitchNode],
        hosts: &mut [HostNode],
    ) -> Result<(), SimError> {
        if self.on_change() {
            self.write_instant(t, switches, hosts)
        } else {
            Ok(())
        }
    }

    #[inline(never)]
    fn write_instant(
        &mut self,
        t: Time,
        switches: &[SwitchNode],
        hosts: &mut [HostNode],
    ) -> Result<(), SimError> {
        let Some((s, path)) = &mut self.sampler else {
            return Ok(());
        };
        s.instant(t, switches, hosts)
            .map_err(|source| SimError::Output {
                path: path.clone(),
                source,
            })
    }

    /// Write one time-series sample at `now`.
    pub fn sample(
        &mut self,
        now: Time,
        switches: &[SwitchNode],
        hosts: &mut [HostNode],
    ) -> Result<(), SimError> {
        let Some((s, path)) = &mut self.sampler else {
            return Ok(());
        };
        s.sample(now, switches, hosts)
            .map_err(|source| SimError::Output {
                path: path.clone(),
                source,
            })
    }

    /// The time series writes a row whenever something changes (`sample: change`): it
    /// looks at every instant.
    #[inline]
    pub fn on_change(&self) -> bool {
        matches!(&self.sampler, Some((s, _)) if s.on_change())
    }

    /// Flush every file.
    pub fn finish(
        &mut self,
        switches: &mut [SwitchNode],
        hosts: &mut [HostNode],
    ) -> Result<(), SimError> {
        if let Some((s, path)) = self.sampler.take() {
            self.files.timeseries_cut = s
                .finish(switches, hosts)
                .map_err(|source| SimError::Output { path, source })?;
        }
        for s in switches {
            s.taps.finish()?;
        }
        Ok(())
    }
}
