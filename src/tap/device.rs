//! The device behind one port of `lossless tap`: a TAP device the switch creates (a host
//! moves it into its namespace), or an interface that already exists — a veth end a
//! container runtime gave us (containerlab's `eth1…`), a NIC — served through a packet
//! socket. The pipeline thread and the writer thread see one interface; only
//! how a port's link state and the kernel's counters are found differs.

use crate::cable;
use crate::config::Attach;
use lossless_sys::iface::{Iface, IfaceLink};
use lossless_sys::kernel::{iface_counters, tap_state, TapCounters};
use lossless_sys::tap::{Offloads, Received, Tap};
use std::io;
use std::sync::atomic::Ordering;

/// A port's device.
#[derive(Debug)]
pub enum Device {
    /// A TAP this process created.
    Tap(Tap),
    /// An existing interface, with its counters as they were when the switch attached
    /// (the report counts from there).
    Iface(Iface, TapCounters),
}

/// What a look at the device found.
#[derive(Clone, Copy, Debug)]
pub struct Probe {
    /// Frames can go both ways (for an interface: up with carrier).
    pub up: bool,
    /// The kernel's counters, seen from the host's side of the cable.
    pub counters: Option<TapCounters>,
}

impl Device {
    /// Create the TAP, or attach to the interface (with a receive ring the size of a TAP's
    /// kernel ring, [`cable::RING_FRAMES`], for frames of up to `mtu` bytes); both offer
    /// the host checksum and segmentation offload, as a NIC does.
    pub fn open(a: &Attach, mtu: u32) -> io::Result<Device> {
        match a {
            Attach::Tap(name) => Ok(Device::Tap(Tap::open(
                name,
                Some(cable::RING_FRAMES),
                Offloads::Segmentation,
            )?)),
            Attach::Iface(name) | Attach::Link(name) => {
                // A link to another switch may carry LLR's header on every frame.
                let extra = if a.faces_switch() {
                    lossless_pipeline::wire::link_control::LLR_DATA_HEADER as u32
                } else {
                    0
                };
                // The counters first: a frame arriving while the socket is set up is then
                // counted by the kernel and perhaps read, never read and not counted (a
                // switch at the other end of a link sends from the start).
                let base = iface_counters(name).unwrap_or_default();
                let i = Iface::open(name, cable::RING_FRAMES, mtu + extra)?;
                Ok(Device::Iface(i, base))
            }
        }
    }

    /// The name it was opened with.
    pub fn name(&self) -> &str {
        match self {
            Device::Tap(t) => t.name(),
            Device::Iface(i, _) => i.name(),
        }
    }

    /// The descriptor frames are read from.
    pub fn raw_fd(&self) -> i32 {
        match self {
            Device::Tap(t) => t.raw_fd(),
            Device::Iface(i, _) => i.raw_fd(),
        }
    }

    /// `tap` or `iface`, as the config key says.
    pub fn kind(&self) -> &'static str {
        match self {
            Device::Tap(_) => "tap",
            Device::Iface(..) => "iface",
        }
    }

    /// Read a frame if one is waiting: where it lies in `buf` and what its host left to
    /// do (a length of 0: the device is gone).
    pub fn read_now(&self, buf: &mut [u8]) -> io::Result<Option<Received>> {
        match self {
            Device::Tap(t) => t.read_frame(buf),
            Device::Iface(i, _) => i.read_now(buf),
        }
    }

    /// Clear and return the device's pending error: a wake-up with no frame behind it
    /// (an interface that went down) is not reported again. A TAP keeps none.
    pub fn take_error(&self) -> io::Result<()> {
        match self {
            Device::Tap(_) => Ok(()),
            Device::Iface(i, _) => i.take_error(),
        }
    }

    /// Write one frame.
    pub fn write(&self, frame: &[u8]) -> io::Result<usize> {
        match self {
            Device::Tap(t) => t.write(frame),
            Device::Iface(i, _) => i.write(frame),
        }
    }

    /// Write frames in order, until one fails: how many were written, and the error that
    /// stopped the rest. An interface takes them in one `sendmmsg` (a TAP has no batched
    /// write: one `write` each).
    pub fn write_all(&self, frames: &[Vec<u8>]) -> (usize, Option<io::Error>) {
        match self {
            Device::Tap(t) => {
                for (k, f) in frames.iter().enumerate() {
                    if let Err(e) = t.write(f) {
                        return (k, Some(e));
                    }
                }
                (frames.len(), None)
            }
            Device::Iface(i, _) => i.write_all(frames),
        }
    }

    /// Does a read error end the port for good? A TAP's does (its host deleted it); an
    /// interface's pending error only says it went down, and [`Device::probe`] tells
    /// whether it is gone.
    pub fn read_error_is_final(&self) -> bool {
        matches!(self, Device::Tap(_))
    }

    /// Frames too long to read whole (an interface's super-frames over 64 KB; a TAP
    /// hands over whole frames, super-frames included, cut on the way in).
    pub fn oversize(&self) -> u64 {
        match self {
            Device::Tap(_) => 0,
            Device::Iface(i, _) => i.counters.oversize.load(Ordering::Relaxed),
        }
    }

    /// Look at the device: is it up, and what do the kernel's counters say? Err when it
    /// is gone.
    pub fn probe(&self) -> io::Result<Probe> {
        match self {
            Device::Tap(t) => {
                let s = tap_state(t)?;
                Ok(Probe {
                    up: s.up,
                    counters: Some(s.counters),
                })
            }
            Device::Iface(i, base) => {
                let up = match i.link() {
                    IfaceLink::Gone => {
                        return Err(io::Error::new(
                            io::ErrorKind::NotFound,
                            "the interface was deleted or moved to another namespace",
                        ))
                    }
                    IfaceLink::Up => true,
                    IfaceLink::Down => false,
                };
                let counters = i
                    .current_name()
                    .and_then(|n| iface_counters(&n))
                    .ok()
                    .map(|c| TapCounters {
                        host_tx_packets: c.host_tx_packets.saturating_sub(base.host_tx_packets),
                        host_tx_dropped: i.read_ring_drops(),
                        host_rx_packets: c.host_rx_packets.saturating_sub(base.host_rx_packets),
                        host_rx_dropped: c.host_rx_dropped.saturating_sub(base.host_rx_dropped),
                    });
                Ok(Probe { up, counters })
            }
        }
    }
}
