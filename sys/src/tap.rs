//! A Linux TAP device (`TUNSETIFF` with `IFF_TAP | IFF_NO_PI`): Ethernet frames in and out,
//! no packet-information header, and every error an `io::Error` for the caller to count.
//!
//! Not smoltcp's `TunTapInterface`: it is not `Send`, cuts 1518-byte VLAN frames to 1514,
//! and panics on the EIO a downed TAP returns.
//!
//! The TAP's transmit queue length is the size of the kernel ring between the host's stack
//! and our reads: frames in it have left the host but not reached the switch (cable, for
//! PFC), and a full ring drops what the host sends next (counted by the kernel as the
//! interface's `tx_dropped`, see [`crate::kernel`]).

use crate::netdev::{ifname, set_txqueuelen};
use std::fs::{File, OpenOptions};
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::fs::OpenOptionsExt;
use std::time::Duration;

/// A TAP device.
#[derive(Debug)]
pub struct Tap {
    file: File,
    name: String,
}

impl Tap {
    /// Create (or attach to) the TAP device `name`; with `ring`, set its transmit queue
    /// length to that many frames. Needs CAP_NET_ADMIN and /dev/net/tun.
    pub fn open(name: &str, ring: Option<u32>) -> io::Result<Tap> {
        // Non-blocking: a read returns at once when the ring is empty, so that a reader takes
        // everything waiting with one system call per frame and waits (ppoll) only when
        // there is nothing.
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .custom_flags(libc::O_NONBLOCK)
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
        if let Some(frames) = ring {
            set_txqueuelen(name, frames)?;
        }
        Ok(Tap {
            file,
            name: name.to_string(),
        })
    }

    /// Interface name it was opened with.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The descriptor frames are read from (to wait on it with others).
    pub fn raw_fd(&self) -> i32 {
        self.file.as_raw_fd()
    }

    /// Read one frame (no FCS) into `buf`, waiting at most `timeout`: Ok(None) when none
    /// came, Ok(Some(0)) when the device is gone (EOF).
    pub fn read_timeout(&self, buf: &mut [u8], timeout: Duration) -> io::Result<Option<usize>> {
        match self.read_now(buf)? {
            Some(n) => Ok(Some(n)),
            None if timeout.is_zero() => Ok(None),
            None => {
                if !poll_in(self.file.as_raw_fd(), timeout)? {
                    return Ok(None);
                }
                self.read_now(buf)
            }
        }
    }

    /// Read one frame if one is waiting, without waiting: Ok(None) when none is.
    pub fn read_now(&self, buf: &mut [u8]) -> io::Result<Option<usize>> {
        match io::Read::read(&mut &self.file, buf) {
            Ok(n) => Ok(Some(n)),
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// Write one frame (no FCS).
    pub fn write(&self, frame: &[u8]) -> io::Result<usize> {
        io::Write::write(&mut &self.file, frame)
    }

    /// The device's current name (the host side may have renamed it).
    pub fn current_name(&self) -> io::Result<String> {
        // SAFETY: ifreq is plain old data; all-zero is a valid value.
        let mut req: libc::ifreq = unsafe { std::mem::zeroed() };
        // SAFETY: the fd is an attached TAP; TUNGETIFF writes only the ifreq.
        let rc = unsafe {
            libc::ioctl(
                self.file.as_raw_fd(),
                libc::TUNGETIFF as _,
                &mut req as *mut libc::ifreq,
            )
        };
        if rc < 0 {
            return Err(io::Error::last_os_error());
        }
        let bytes: Vec<u8> = req
            .ifr_name
            .iter()
            .take_while(|c| **c != 0)
            .map(|c| *c as u8)
            .collect();
        Ok(String::from_utf8_lossy(&bytes).into_owned())
    }

    /// A handle on the network namespace the device lives in now (it may have been moved
    /// since it was opened). Fails once the device is gone.
    pub fn netns(&self) -> io::Result<OwnedFd> {
        // SAFETY: the fd is an attached TAP; TUNGETDEVNETNS takes no argument and returns
        // a new descriptor or −1.
        let fd = unsafe { libc::ioctl(self.file.as_raw_fd(), libc::TUNGETDEVNETNS as _) };
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: `fd` is a fresh descriptor the ioctl handed to us.
        Ok(unsafe { OwnedFd::from_raw_fd(fd) })
    }
}

/// Wait at most `timeout` for `fd` to become readable ([`crate::poll::readable`]).
pub(crate) fn poll_in(fd: i32, timeout: Duration) -> io::Result<bool> {
    crate::poll::readable(&[fd], timeout).map(|ready| !ready.is_empty())
}
