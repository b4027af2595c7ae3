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
//!
//! When a recorded port or host speaks CBFC, every row also has the credit counters of the
//! channel its priority's queue sends on, as its sender counts them: `credits_used` (in
//! use), `credits_consumed` and `credits_freed` (in all); empty where the channel is not
//! credited.

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

/// The credit counters of a row, after [`PORT_SERIES`] (CBFC runs).
const CREDIT_SERIES: [&str; 3] = ["credits_used", "credits_consumed", "credits_freed"];

/// A value that is not there (a channel without credits): an empty CSV field.
const EMPTY: u64 = u64::MAX;

/// The credit counters of `link`'s channel for frames of queue (and priority) `prio`.
fn credit_values(link: &lossless_pipeline::link::LinkLayer, prio: usize) -> [u64; 3] {
    let Some(c) = link.cbfc() else {
        return [EMPTY; 3];
    };
    let vc = c.setup.vc_of_queue(prio as u8);
    if !c.setup.is_credited(vc) {
        return [EMPTY; 3];
    }
    let v = c.vc_counters(vc as usize);
    [
        v.sender_credits_used,
        v.sender_credits_consumed,
        v.sender_credits_freed,
    ]
}

/// A value as a CSV field.
fn field(x: u64) -> String {
    if x == EMPTY {
        String::new()
    } else {
        x.to_string()
    }
}

/// Writes the recorded series.
pub struct Sampler {
    out: OutputFile,
    spec: TimeseriesOut,
    /// Some recorded port or host speaks CBFC: rows carry the credit counters too.
    credits: bool,
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
        let credits = spec.nodes.iter().any(|node| match *node {
            Target::Switch(p) => switches[p.switch].sw.ports()[p.port].link.cbfc().is_some(),
            Target::Host(h) => hosts[h].host.link.cbfc().is_some(),
        });
        let extra = if credits {
            format!(",{}", CREDIT_SERIES.join(","))
        } else {
            String::new()
        };
        match spec.format {
            CsvFormat::Long => writeln!(
                out,
                "time_ps,node,port,prio,queue_bytes,pg_shared_bytes,pg_headroom_bytes,paused,xoff{extra}"
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
                                if credits {
                                    cols.extend(
                                        CREDIT_SERIES
                                            .iter()
                                            .map(|v| format!("{name}:{prio}:{v}")),
                                    );
                                }
                            }
                        }
                        Target::Host(h) => {
                            let name = &hosts[h].host.name;
                            cols.push(format!("{name}:rx_buffer_bytes"));
                            cols.extend(
                                priorities_in(spec.priorities)
                                    .map(|prio| format!("{name}:{prio}:paused")),
                            );
                            if credits {
                                for prio in priorities_in(spec.priorities) {
                                    cols.extend(
                                        CREDIT_SERIES
                                            .iter()
                                            .map(|v| format!("{name}:{prio}:{v}")),
                                    );
                                }
                            }
                        }
                    }
                }
                writeln!(out, "{}", cols.join(","))?;
            }
        }
        Ok(Sampler {
            out,
            spec: spec.clone(),
            credits,
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
                        if self.credits {
                            v.extend(credit_values(&port.link, prio));
                        }
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
                    if self.credits {
                        for prio in self.priorities_in() {
                            v.extend(credit_values(&host.link, prio));
                        }
                    }
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
                    write!(self.out, ",{}", field(*x))?;
                }
                writeln!(self.out)?;
                self.rows += 1;
            }
            CsvFormat::Long => {
                let prios: Vec<usize> = self.priorities_in().collect();
                let width = if self.credits { CREDIT_SERIES.len() } else { 0 };
                let mut at = 0;
                for node in &self.spec.nodes {
                    match *node {
                        Target::Switch(p) => {
                            let sw = &switches[p.switch].sw;
                            let (name, port) = (&sw.config().name, &sw.config().ports[p.port].name);
                            let w = PORT_SERIES.len() + width;
                            for prio in &prios {
                                let row = &v[at..at + w];
                                if !only_changed || row != &self.last[at..at + w] {
                                    write!(
                                        self.out,
                                        "{t},{name},{port},{prio},{},{},{},{},{}",
                                        row[0], row[1], row[2], row[3], row[4]
                                    )?;
                                    for x in &row[PORT_SERIES.len()..] {
                                        write!(self.out, ",{}", field(*x))?;
                                    }
                                    writeln!(self.out)?;
                                    self.rows += 1;
                                }
                                at += w;
                            }
                        }
                        Target::Host(h) => {
                            let name = &hosts[h].host.name;
                            let occ = v[at];
                            let occ_changed = !only_changed || occ != self.last[at];
                            at += 1;
                            // The credit triples follow the paused flags, a triple a priority.
                            let credit_at = at + prios.len();
                            for (k, prio) in prios.iter().enumerate() {
                                let c = credit_at + k * width..credit_at + (k + 1) * width;
                                let credits_changed =
                                    only_changed && v[c.clone()] != self.last[c.clone()];
                                if occ_changed || v[at] != self.last[at] || credits_changed {
                                    write!(self.out, "{t},{name},nic,{prio},{occ},,,{},", v[at])?;
                                    for x in &v[c] {
                                        write!(self.out, ",{}", field(*x))?;
                                    }
                                    writeln!(self.out)?;
                                    self.rows += 1;
                                }
                                at += 1;
                            }
                            at += prios.len() * width;
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
