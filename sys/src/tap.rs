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
pub use crate::received::Received;
use crate::vnet;
use std::fs::{File, OpenOptions};
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::fs::OpenOptionsExt;
use std::time::Duration;

/// What a TAP offers the host's stack.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Offloads {
    /// Nothing: the host sends whole frames, as a wire carries them, and so does the TAP.
    None,
    /// Checksum and segmentation offload (TSO4/6 with ECN, and USO where the kernel has
    /// it): every frame, both ways, starts with a virtio-net header ([`crate::vnet`]); the
    /// host may hand over frames of up to 64 KB for the reader to cut.
    Segmentation,
}

/// `TUNSETOFFLOAD` bits (linux/if_tun.h).
const TUN_F_CSUM: u32 = 0x01;
const TUN_F_TSO4: u32 = 0x02;
const TUN_F_TSO6: u32 = 0x04;
const TUN_F_TSO_ECN: u32 = 0x08;
const TUN_F_USO4: u32 = 0x20;
const TUN_F_USO6: u32 = 0x40;

/// A TAP device.
#[derive(Debug)]
pub struct Tap {
    file: File,
    name: String,
    offloads: Offloads,
}

impl Tap {
    /// Create (or attach to) the TAP device `name` offering its host `offloads`; with
    /// `ring`, set its transmit queue length to that many frames. Needs CAP_NET_ADMIN and
    /// /dev/net/tun.
    pub fn open(name: &str, ring: Option<u32>, offloads: Offloads) -> io::Result<Tap> {
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
        let vnet = match offloads {
            Offloads::None => 0,
            Offloads::Segmentation => libc::IFF_VNET_HDR,
        };
        req.ifr_ifru.ifru_flags = (libc::IFF_TAP | libc::IFF_NO_PI | vnet) as libc::c_short;
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
        if offloads == Offloads::Segmentation {
            set_offload(&file)?;
        }
        if let Some(frames) = ring {
            set_txqueuelen(name, frames)?;
        }
        Ok(Tap {
            file,
            name: name.to_string(),
            offloads,
        })
    }

    /// What the TAP offers its host.
    pub fn offloads(&self) -> Offloads {
        self.offloads
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

    /// Read what the TAP hands over next, if anything is waiting, without waiting:
    /// Ok(None) when nothing is, Ok(Some(0)) when the device is gone (EOF). With
    /// [`Offloads::Segmentation`], the bytes start with the virtio-net header.
    pub fn read_now(&self, buf: &mut [u8]) -> io::Result<Option<usize>> {
        match io::Read::read(&mut &self.file, buf) {
            Ok(n) => Ok(Some(n)),
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// Read one frame if one is waiting, without waiting, and what its host left to do:
    /// Ok(None) when none is; a length of 0 when the device is gone.
    pub fn read_frame(&self, buf: &mut [u8]) -> io::Result<Option<Received>> {
        use lossless_pipeline::wire::gso::Offload;
        let Some(n) = self.read_now(buf)? else {
            return Ok(None);
        };
        Ok(Some(match self.offloads {
            Offloads::None => Received {
                at: 0,
                len: n,
                offload: Offload::None,
            },
            Offloads::Segmentation if n == 0 => Received {
                at: 0,
                len: 0,
                offload: Offload::None,
            },
            // The kernel puts the header before every frame it hands over.
            Offloads::Segmentation if n < vnet::LEN => {
                return Err(io::Error::new(
                    io::ErrorKind::InvalidData,
                    "a TAP read shorter than its virtio-net header",
                ))
            }
            Offloads::Segmentation => {
                let mut h = [0; vnet::LEN];
                h.copy_from_slice(&buf[..vnet::LEN]);
                Received {
                    at: vnet::LEN,
                    len: n - vnet::LEN,
                    offload: vnet::offload(&h),
                }
            }
        }))
    }

    /// Write one frame (no FCS), whole: its length.
    pub fn write(&self, frame: &[u8]) -> io::Result<usize> {
        match self.offloads {
            Offloads::None => io::Write::write(&mut &self.file, frame),
            Offloads::Segmentation => {
                let parts = [io::IoSlice::new(&vnet::COMPLETE), io::IoSlice::new(frame)];
                let n = io::Write::write_vectored(&mut &self.file, &parts)?;
                Ok(n.saturating_sub(vnet::LEN))
            }
        }
    }

    /// Write what a read of a TAP with the same [`Offloads`] returned, as it is (the
    /// virtio-net header included, when there is one): a copy loop's write.
    pub fn write_as_read(&self, bytes: &[u8]) -> io::Result<usize> {
        io::Write::write(&mut &self.file, bytes)
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

/// Offer the host checksum and segmentation offload; USO only where the kernel knows it
/// (6.2 and later refuse nothing else).
fn set_offload(file: &File) -> io::Result<()> {
    let base = TUN_F_CSUM | TUN_F_TSO4 | TUN_F_TSO6 | TUN_F_TSO_ECN;
    for flags in [base | TUN_F_USO4 | TUN_F_USO6, base] {
        // SAFETY: the fd is an attached TAP; TUNSETOFFLOAD takes its flags by value.
        let rc = unsafe {
            libc::ioctl(
                file.as_raw_fd(),
                libc::TUNSETOFFLOAD as _,
                flags as libc::c_ulong,
            )
        };
        if rc == 0 {
            return Ok(());
        }
    }
    Err(io::Error::last_os_error())
}

/// Wait at most `timeout` for `fd` to become readable ([`crate::poll::readable`]).
pub(crate) fn poll_in(fd: i32, timeout: Duration) -> io::Result<bool> {
    crate::poll::readable(&[fd], timeout).map(|ready| !ready.is_empty())
}
