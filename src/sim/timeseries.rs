//! The CSV time series (`outputs.timeseries`): per recorded switch port and priority the
//! egress queue depth, the ingress PG's shared and headroom use, whether the port is paused
//! and whether it holds its peer in XOFF; per recorded host NIC its receive-buffer
//! occupancy and, per priority, whether it is paused.
//!
//! Rows come every `interval` or, with `sample: change`, at the end of each instant at
//! which a recorded value changed (the first row of the window holds every series). Long
//! layout: `time_ps,node,port,prio,queue_bytes,pg_shared_bytes,pg_headroom_bytes,paused,xoff`
//! (a host's row: `…,host,nic,prio,rx_buffer_bytes,,,paused,`), with `sample: change` only
//! the rows that changed. Wide layout: `time_ps` and one column per series, such as
//! `tor:Ethernet0:3:queue_bytes` or `h0:rx_buffer_bytes`.

use super::{HostNode, SwitchNode};
use crate::config::topology::outputs::MAX_TIMESERIES_ROWS;
use crate::config::words::CsvFormat;
use crate::config::{Sampling, Target, TimeseriesOut};
use lossless_buffer_model::{priorities_in, Time};
use lossless_sys::output::OutputFile;
use std::io::{self, Write};

/// Values of one switch port and priority, in column order.
const PORT_SERIES: [&str; 5] = [
    "queue_bytes",
    "pg_shared_bytes",
    "pg_headroom_bytes",
    "paused",
    "xoff",
];

/// Writes the recorded series.
pub struct Sampler {
    out: OutputFile,
    spec: TimeseriesOut,
    /// Values last written (empty before the first row), in wide column order.
    last: Vec<u64>,
    /// With `sample: change`: the instant whose end state is still to be compared.
    pending: Option<Time>,
    /// Rows written so far.
    rows: u64,
    /// Rows were left out past [`MAX_TIMESERIES_ROWS`].
    pub cut: bool,
}

impl Sampler {
    /// Create the CSV (its directory must exist) and write the header (the wide one names
    /// each series by its switch and port, or host).
    pub fn create(
        spec: &TimeseriesOut,
        switches: &[SwitchNode],
        hosts: &[HostNode],
    ) -> io::Result<Sampler> {
        let mut out = OutputFile::create(&spec.csv)?;
        match spec.format {
            CsvFormat::Long => writeln!(
                out,
                "time_ps,node,port,prio,queue_bytes,pg_shared_bytes,pg_headroom_bytes,paused,xoff"
            )?,
            CsvFormat::Wide => {
                let mut cols = vec!["time_ps".to_string()];
                for node in &spec.nodes {
                    match *node {
                        Target::Switch(p) => {
                            let sw = &switches[p.switch].sw;
                            let name =
                                format!("{}:{}", sw.config().name, sw.config().ports[p.port].name);
                            for prio in priorities_in(spec.priorities) {
                                cols.extend(
                                    PORT_SERIES.iter().map(|v| format!("{name}:{prio}:{v}")),
                                );
                            }
                        }
                        Target::Host(h) => {
                            let name = &hosts[h].host.name;
                            cols.push(format!("{name}:rx_buffer_bytes"));
                            cols.extend(
                                priorities_in(spec.priorities)
                                    .map(|prio| format!("{name}:{prio}:paused")),
                            );
                        }
                    }
                }
                writeln!(out, "{}", cols.join(","))?;
            }
        }
        Ok(Sampler {
            out,
            spec: spec.clone(),
            last: Vec::new(),
            pending: None,
            rows: 0,
            cut: false,
        })
    }

    fn priorities_in(&self) -> impl Iterator<Item = usize> {
        priorities_in(self.spec.priorities)
    }

    /// The regular sample after the one at `now`: None with `sample: change` or past the
    /// window.
    pub fn next_sample_after(&self, now: Time) -> Option<Time> {
        let Sampling::Every(i) = self.spec.sample else {
            return None;
        };
        let from = self.spec.from;
        let t = if now < from {
            from
        } else {
            from + Time(((now - from).0 / i.0 + 1) * i.0)
        };
        self.in_window(t).then_some(t)
    }

    /// Where the window starts (the first sample, or the baseline of `sample: change`).
    pub fn window_start(&self) -> Time {
        self.spec.from
    }

    fn in_window(&self, t: Time) -> bool {
        t >= self.spec.from && self.spec.to.is_none_or(|to| t <= to)
    }

    /// Does the engine call [`Sampler::instant`] before each event?
    pub fn on_change(&self) -> bool {
        self.spec.sample == Sampling::OnChange
    }

    /// Every recorded value at `now`, in wide column order.
    fn values(&self, now: Time, switches: &[SwitchNode], hosts: &mut [HostNode]) -> Vec<u64> {
        let mut v = Vec::with_capacity(self.last.len());
        for node in &self.spec.nodes {
            match *node {
                Target::Switch(p) => {
                    let sw = &switches[p.switch].sw;
                    let cell = sw.mmu().cell();
                    let port = &sw.ports()[p.port];
                    let paused = port.link.paused_mask(now);
                    let xoff = port.xoff_mask();
                    for prio in self.priorities_in() {
                        let (q, g) = (sw.mmu().queue(p.port, prio), sw.mmu().pg(p.port, prio));
                        v.extend([
                            q.used() * cell,
                            g.shared_used * cell,
                            g.headroom_used * cell,
                            ((paused >> prio) & 1) as u64,
                            ((xoff >> prio) & 1) as u64,
                        ]);
                    }
                }
                Target::Host(h) => {
                    let host = &mut hosts[h].host;
                    v.push(host.occupancy(now));
                    let paused = host.link.paused_mask(now);
                    v.extend(
                        self.priorities_in()
                            .map(|prio| ((paused >> prio) & 1) as u64),
                    );
                }
            }
        }
        v
    }

    /// Write the rows at `now`: every row, or with `only_changed` those whose values
    /// differ from the last written.
    fn write(
        &mut self,
        now: Time,
        switches: &[SwitchNode],
        hosts: &mut [HostNode],
        only_changed: bool,
    ) -> io::Result<()> {
        if self.rows >= MAX_TIMESERIES_ROWS {
            self.cut = true;
            return Ok(());
        }
        let v = self.values(now, switches, hosts);
        let only_changed = only_changed && self.last.len() == v.len();
        if only_changed && v == self.last {
            return Ok(());
        }
        let t = now.as_ps();
        match self.spec.format {
            CsvFormat::Wide => {
                write!(self.out, "{t}")?;
                for x in &v {
                    write!(self.out, ",{x}")?;
                }
                writeln!(self.out)?;
                self.rows += 1;
            }
            CsvFormat::Long => {
                let prios: Vec<usize> = self.priorities_in().collect();
                let mut at = 0;
                for node in &self.spec.nodes {
                    match *node {
                        Target::Switch(p) => {
                            let sw = &switches[p.switch].sw;
                            let (name, port) = (&sw.config().name, &sw.config().ports[p.port].name);
                            for prio in &prios {
                                let row = &v[at..at + 5];
                                if !only_changed || row != &self.last[at..at + 5] {
                                    writeln!(
                                        self.out,
                                        "{t},{name},{port},{prio},{},{},{},{},{}",
                                        row[0], row[1], row[2], row[3], row[4]
                                    )?;
                                    self.rows += 1;
                                }
                                at += 5;
                            }
                        }
                        Target::Host(h) => {
                            let name = &hosts[h].host.name;
                            let occ = v[at];
                            let occ_changed = !only_changed || occ != self.last[at];
                            at += 1;
                            for prio in &prios {
                                if occ_changed || v[at] != self.last[at] {
                                    writeln!(self.out, "{t},{name},nic,{prio},{occ},,,{},", v[at])?;
                                    self.rows += 1;
                                }
                                at += 1;
                            }
                        }
                    }
                }
            }
        }
        self.last = v;
        Ok(())
    }

    /// A regular sample (or, with `sample: change`, the start of the window) at `now`.
    pub fn sample(
        &mut self,
        now: Time,
        switches: &[SwitchNode],
        hosts: &mut [HostNode],
    ) -> io::Result<()> {
        match self.spec.sample {
            Sampling::Every(_) => self.write(now, switches, hosts, false),
            Sampling::OnChange => {
                self.pending = Some(now);
                Ok(())
            }
        }
    }

    /// With `sample: change`, before an event at `t`: the instant before it is over, so
    /// its end state is compared and written where it changed.
    pub fn instant(
        &mut self,
        t: Time,
        switches: &[SwitchNode],
        hosts: &mut [HostNode],
    ) -> io::Result<()> {
        if let Some(p) = self.pending.filter(|p| t > *p) {
            self.write(p, switches, hosts, true)?;
            self.pending = None;
        }
        // After the window's first row, every instant in the window is compared.
        if self.pending.is_none() && !self.last.is_empty() && self.in_window(t) {
            self.pending = Some(t);
        }
        Ok(())
    }

    /// Write what is pending and flush the file; true when rows were cut at the cap.
    pub fn finish(mut self, switches: &[SwitchNode], hosts: &mut [HostNode]) -> io::Result<bool> {
        if let Some(p) = self.pending.take() {
            self.write(p, switches, hosts, true)?;
        }
        self.out.commit()?;
        Ok(self.cut)
    }
}
