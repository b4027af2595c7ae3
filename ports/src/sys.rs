//! The operating-system edge: a Linux TAP device (`TUNSETIFF` with `IFF_TAP | IFF_NO_PI`)
//! and an `AF_PACKET` raw socket bound to one interface. This module holds the only
//! `unsafe` code of the project: a handful of libc calls, each with its invariant stated.
//!
//! Not smoltcp's `TunTapInterface`: it is not `Send`, cuts 1518-byte VLAN frames to 1514,
//! and panics on the EIO a downed TAP returns (design §5). Here every error is an
//! `io::Error` for the caller to count.

use std::fs::{File, OpenOptions};
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::time::Duration;

/// A TAP device: Ethernet frames in and out, no packet-information header.
#[derive(Debug)]
pub struct Tap {
    file: File,
    name: String,
}

fn ifname(name: &str) -> io::Result<[libc::c_char; libc::IFNAMSIZ]> {
    if name.is_empty() || name.len() >= libc::IFNAMSIZ || name.contains('\0') {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("`{name}` is not an interface name (1–15 bytes)"),
        ));
    }
    let mut out = [0 as libc::c_char; libc::IFNAMSIZ];
    for (o, b) in out.iter_mut().zip(name.bytes()) {
        *o = b as libc::c_char;
    }
    Ok(out)
}

impl Tap {
    /// Create (or attach to) the TAP device `name`. Needs CAP_NET_ADMIN and /dev/net/tun.
    pub fn open(name: &str) -> io::Result<Tap> {
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .open("/dev/net/tun")?;
        // SAFETY: ifreq is plain old data; all-zero is a valid value.
        let mut req: libc::ifreq = unsafe { std::mem::zeroed() };
        req.ifr_name = ifname(name)?;
        req.ifr_ifru.ifru_flags = (libc::IFF_TAP | libc::IFF_NO_PI) as libc::c_short;
        // SAFETY: the fd is an open /dev/net/tun and `req` a valid ifreq that outlives the call.
        let rc = unsafe {
            libc::ioctl(
                file.as_raw_fd(),
                libc::TUNSETIFF as _,
                &mut req as *mut libc::ifreq,
            )
        };
        if rc < 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(Tap {
            file,
            name: name.to_string(),
        })
    }

    /// Interface name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Read one frame (no FCS) into `buf`; blocks until one arrives.
    pub fn read(&self, buf: &mut [u8]) -> io::Result<usize> {
        io::Read::read(&mut &self.file, buf)
    }

    /// Write one frame (no FCS).
    pub fn write(&self, frame: &[u8]) -> io::Result<usize> {
        io::Write::write(&mut &self.file, frame)
    }
}

/// An `AF_PACKET` raw socket bound to one interface: sends whole frames, receives every
/// frame the interface sees (MAC Control frames included).
#[derive(Debug)]
pub struct PacketSocket {
    fd: OwnedFd,
    ifindex: i32,
}

/// The interface index of `name` (from sysfs).
pub fn if_index(name: &str) -> io::Result<i32> {
    let s = std::fs::read_to_string(format!("/sys/class/net/{name}/ifindex"))
        .map_err(|e| io::Error::new(e.kind(), format!("interface `{name}`: {e}")))?;
    s.trim()
        .parse()
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidData, "bad ifindex"))
}

/// The MAC address of `name` (from sysfs).
pub fn if_mac(name: &str) -> io::Result<[u8; 6]> {
    let s = std::fs::read_to_string(format!("/sys/class/net/{name}/address"))
        .map_err(|e| io::Error::new(e.kind(), format!("interface `{name}`: {e}")))?;
    let mut mac = [0u8; 6];
    let parts: Vec<_> = s.trim().split(':').collect();
    if parts.len() != 6 {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            format!("bad MAC `{}`", s.trim()),
        ));
    }
    for (m, p) in mac.iter_mut().zip(parts) {
        *m = u8::from_str_radix(p, 16)
            .map_err(|_| io::Error::new(io::ErrorKind::InvalidData, "bad MAC"))?;
    }
    Ok(mac)
}

impl PacketSocket {
    /// Open a raw socket on interface `iface` (needs CAP_NET_RAW).
    pub fn open(iface: &str) -> io::Result<PacketSocket> {
        let ifindex = if_index(iface)?;
        let proto = (libc::ETH_P_ALL as u16).to_be() as libc::c_int;
        // SAFETY: plain socket(2) call; the result is checked before use.
        let raw =
            unsafe { libc::socket(libc::AF_PACKET, libc::SOCK_RAW | libc::SOCK_CLOEXEC, proto) };
        if raw < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: `raw` is a fresh, valid descriptor that nothing else owns.
        let fd = unsafe { OwnedFd::from_raw_fd(raw) };
        // SAFETY: sockaddr_ll is plain old data; all-zero is valid.
        let mut addr: libc::sockaddr_ll = unsafe { std::mem::zeroed() };
        addr.sll_family = libc::AF_PACKET as u16;
        addr.sll_protocol = (libc::ETH_P_ALL as u16).to_be();
        addr.sll_ifindex = ifindex;
        // SAFETY: `addr` is a valid sockaddr_ll and the length matches its type.
        let rc = unsafe {
            libc::bind(
                fd.as_raw_fd(),
                &addr as *const libc::sockaddr_ll as *const libc::sockaddr,
                std::mem::size_of::<libc::sockaddr_ll>() as u32,
            )
        };
        if rc < 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(PacketSocket { fd, ifindex })
    }

    /// Interface index the socket is bound to.
    pub fn ifindex(&self) -> i32 {
        self.ifindex
    }

    /// Send one whole frame (no FCS).
    pub fn send(&self, frame: &[u8]) -> io::Result<usize> {
        // SAFETY: the pointer and length describe `frame`, valid for the call.
        let n = unsafe {
            libc::send(
                self.fd.as_raw_fd(),
                frame.as_ptr() as *const libc::c_void,
                frame.len(),
                0,
            )
        };
        if n < 0 {
            Err(io::Error::last_os_error())
        } else {
            Ok(n as usize)
        }
    }

    /// Receive one frame, waiting at most `timeout`; Ok(None) on timeout. Frames this
    /// socket sent itself are skipped (PACKET_OUTGOING).
    pub fn recv(&self, buf: &mut [u8], timeout: Duration) -> io::Result<Option<usize>> {
        let mut pfd = libc::pollfd {
            fd: self.fd.as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        };
        let ms = timeout.as_millis().min(i32::MAX as u128) as i32;
        // SAFETY: one valid pollfd for the duration of the call.
        let rc = unsafe { libc::poll(&mut pfd, 1, ms) };
        if rc < 0 {
            return Err(io::Error::last_os_error());
        }
        if rc == 0 {
            return Ok(None);
        }
        // SAFETY: as above for sockaddr_ll; recvfrom writes at most `len` bytes into `buf`
        // and at most `alen` bytes into `from`.
        let mut from: libc::sockaddr_ll = unsafe { std::mem::zeroed() };
        let mut alen = std::mem::size_of::<libc::sockaddr_ll>() as libc::socklen_t;
        let n = unsafe {
            libc::recvfrom(
                self.fd.as_raw_fd(),
                buf.as_mut_ptr() as *mut libc::c_void,
                buf.len(),
                0,
                &mut from as *mut libc::sockaddr_ll as *mut libc::sockaddr,
                &mut alen,
            )
        };
        if n < 0 {
            return Err(io::Error::last_os_error());
        }
        if from.sll_pkttype == libc::PACKET_OUTGOING {
            return Ok(Some(0));
        }
        Ok(Some(n as usize))
    }
}

/// Set the calling thread's timer slack (how late the kernel may fire its timed waits) to
/// `ns` nanoseconds. The default 50 µs would make a wall-clock switch wake that late for
/// every microsecond-scale deadline.
pub fn set_timer_slack(ns: u64) -> io::Result<()> {
    // SAFETY: prctl(PR_SET_TIMERSLACK, value) reads only its integer arguments.
    let rc = unsafe { libc::prctl(libc::PR_SET_TIMERSLACK, ns as libc::c_ulong, 0, 0, 0) };
    if rc < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(())
    }
}
