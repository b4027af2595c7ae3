//! The kernel's own counters of a TAP device, wherever it lives now.
//!
//! A TAP is usually moved into a host's network namespace, where `/sys/class/net` of the
//! switch's namespace cannot see it. `TUNGETDEVNETNS` hands over the device's namespace; a
//! short-lived thread enters it (`setns` changes only that thread) and reads
//! `/proc/thread-self/net/dev`, the kernel's per-interface counters as that namespace sees
//! them. From the host's side, "transmit" is toward the switch: `tx_dropped` counts frames
//! the host sent while the TAP's ring was full (lost before the switch could read them),
//! `rx_dropped` frames the switch wrote that the host's kernel dropped.

use crate::tap::Tap;
use std::io;
use std::os::fd::AsRawFd;

/// Counters of one TAP as its host's kernel keeps them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TapCounters {
    /// Frames the host sent into the TAP (toward the switch).
    pub host_tx_packets: u64,
    /// Frames the host sent that the kernel dropped, the TAP's ring being full.
    pub host_tx_dropped: u64,
    /// Frames the host received from the TAP (written by the switch).
    pub host_rx_packets: u64,
    /// Frames written by the switch that the host's kernel dropped.
    pub host_rx_dropped: u64,
}

impl std::ops::Add for TapCounters {
    type Output = TapCounters;
    /// The counts of two devices one after the other (a port's interface attached again).
    fn add(self, o: TapCounters) -> TapCounters {
        TapCounters {
            host_tx_packets: self.host_tx_packets + o.host_tx_packets,
            host_tx_dropped: self.host_tx_dropped + o.host_tx_dropped,
            host_rx_packets: self.host_rx_packets + o.host_rx_packets,
            host_rx_dropped: self.host_rx_dropped + o.host_rx_dropped,
        }
    }
}

/// What the kernel says of a TAP in its namespace: its counters and whether the host has
/// set it up (`IFF_UP`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TapState {
    /// Counters.
    pub counters: TapCounters,
    /// The interface is administratively up on the host's side.
    pub up: bool,
}

/// Read `tap`'s state in the namespace it lives in now. Fails once it is gone.
pub fn tap_state(tap: &Tap) -> io::Result<TapState> {
    let ns = tap.netns()?;
    let name = tap.current_name()?;
    let reader = std::thread::Builder::new()
        .name("netns-stats".into())
        .spawn(move || -> io::Result<TapState> {
            // SAFETY: `ns` is a namespace descriptor from TUNGETDEVNETNS; setns with
            // CLONE_NEWNET moves only this (short-lived) thread.
            if unsafe { libc::setns(ns.as_raw_fd(), libc::CLONE_NEWNET) } < 0 {
                return Err(io::Error::last_os_error());
            }
            let text = std::fs::read_to_string("/proc/thread-self/net/dev")?;
            let counters = parse_net_dev(&text, &name).ok_or_else(|| {
                io::Error::new(
                    io::ErrorKind::NotFound,
                    format!("`{name}` is not in its namespace's /proc/net/dev"),
                )
            })?;
            // Sockets belong to the namespace of the thread that opens them: this one.
            let up = crate::netdev::if_up(&name)?;
            Ok(TapState { counters, up })
        })?;
    reader
        .join()
        .map_err(|_| io::Error::other("namespace reader thread panicked"))?
}

/// The counters of interface `name` of this process's namespace (a port the switch attached
/// to), seen from the host's side of the cable: what the interface received is what the
/// host transmitted. `host_tx_dropped` is the interface's own receive drops (a socket's
/// full ring is counted by the socket, not here).
pub fn iface_counters(name: &str) -> io::Result<TapCounters> {
    let text = std::fs::read_to_string("/proc/thread-self/net/dev")?;
    let c = parse_net_dev(&text, name).ok_or_else(|| {
        io::Error::new(
            io::ErrorKind::NotFound,
            format!("`{name}` is not in /proc/net/dev"),
        )
    })?;
    Ok(TapCounters {
        host_tx_packets: c.host_rx_packets,
        host_tx_dropped: c.host_rx_dropped,
        host_rx_packets: c.host_tx_packets,
        host_rx_dropped: c.host_tx_dropped,
    })
}

/// The counters of interface `name` in the text of `/proc/net/dev` (receive: bytes,
/// packets, errs, drop, …; transmit: bytes, packets, errs, drop, …).
pub fn parse_net_dev(text: &str, name: &str) -> Option<TapCounters> {
    text.lines().find_map(|l| {
        let (ifname, rest) = l.split_once(':')?;
        if ifname.trim() != name {
            return None;
        }
        let v: Vec<u64> = rest
            .split_whitespace()
            .map(|x| x.parse().ok())
            .collect::<Option<_>>()?;
        (v.len() >= 16).then(|| TapCounters {
            host_rx_packets: v[1],
            host_rx_dropped: v[3],
            host_tx_packets: v[9],
            host_tx_dropped: v[11],
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_right_columns() {
        let text = "Inter-|   Receive                                                |  Transmit\n \
             face |bytes    packets errs drop fifo frame compressed multicast|bytes    packets errs drop fifo colls carrier compressed\n    \
             lo:  100  2    0    0    0     0          0         0   100  2    0    0    0     0       0          0\n  \
             ll1: 5000 40    0    3    0     0          0         0  9000 70    0   17    0     0       0          0\n";
        let c = parse_net_dev(text, "ll1").unwrap();
        assert_eq!(
            c,
            TapCounters {
                host_tx_packets: 70,
                host_tx_dropped: 17,
                host_rx_packets: 40,
                host_rx_dropped: 3
            }
        );
        assert!(parse_net_dev(text, "ll").is_none());
    }
}
