//! Periodic samples of the network state to CSV: per switch port and priority the egress
//! queue depth, the ingress PG's shared and headroom use, whether the port is paused and
//! whether it holds its peer in XOFF; per host NIC the same pause view.
//!
//! Columns: `time_ps,node,port,prio,queue_bytes,pg_shared_bytes,pg_headroom_bytes,paused,xoff`.

use super::{HostNode, SwitchNode};
use lossless_buffer_model::{Time, PRIORITIES};
use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::Path;

/// Writes one row per (node, port, priority) per sample.
pub struct Sampler {
    out: BufWriter<File>,
    interval: Time,
}

impl Sampler {
    /// Create the CSV (and its directory) and write the header.
    pub fn create(path: &Path, interval: Time) -> io::Result<Sampler> {
        if let Some(d) = path.parent() {
            std::fs::create_dir_all(d)?;
        }
        let mut out = BufWriter::new(File::create(path)?);
        writeln!(
            out,
            "time_ps,node,port,prio,queue_bytes,pg_shared_bytes,pg_headroom_bytes,paused,xoff"
        )?;
        Ok(Sampler { out, interval })
    }

    /// Sampling interval.
    pub fn interval(&self) -> Time {
        self.interval
    }

    /// Write the rows of one sample at `now`.
    pub fn sample(
        &mut self,
        now: Time,
        switches: &[SwitchNode],
        hosts: &mut [HostNode],
    ) -> io::Result<()> {
        let t = now.as_ps();
        for s in switches {
            let sw = &s.sw;
            let cell = sw.mmu().cell();
            for (p, port) in sw.ports().iter().enumerate() {
                let name = &sw.config().ports[p].name;
                let paused = port.pause.paused_mask(now);
                let xoff = port.xoff_mask();
                for prio in 0..PRIORITIES {
                    let q = &sw.mmu().queues[p * PRIORITIES + prio];
                    let g = &sw.mmu().pgs[p * PRIORITIES + prio];
                    writeln!(
                        self.out,
                        "{t},{},{name},{prio},{},{},{},{},{}",
                        sw.config().name,
                        q.used() * cell,
                        g.shared_used * cell,
                        g.headroom_used * cell,
                        (paused >> prio) & 1,
                        (xoff >> prio) & 1
                    )?;
                }
            }
        }
        for h in hosts {
            let occ = h.host.occupancy(now);
            let paused = h.host.pause.paused_mask(now);
            for prio in 0..PRIORITIES {
                writeln!(
                    self.out,
                    "{t},{},nic,{prio},{occ},,,{},",
                    h.host.name,
                    (paused >> prio) & 1
                )?;
            }
        }
        Ok(())
    }

    /// Flush the file.
    pub fn finish(mut self) -> io::Result<()> {
        self.out.flush()
    }
}
