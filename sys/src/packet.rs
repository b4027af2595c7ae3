//! An `AF_PACKET` raw socket bound to one interface: sends whole frames, receives every
//! frame the interface sees (MAC Control frames included, which no Linux stack handles).
//!
//! The socket is created with protocol 0, which receives nothing, and only then bound to
//! the interface with `ETH_P_ALL`: a socket created with `ETH_P_ALL` would queue frames of
//! every interface of the namespace until `bind`, and a stray PFC frame from elsewhere could
//! pause its user before it ever looked at its own interface.

use crate::netdev::if_index;
use crate::tap::poll_in;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::time::Duration;

/// Send one whole frame (no FCS) on the bound packet socket `fd`, after `header` (the
/// virtio-net header a socket with `PACKET_VNET_HDR` expects first, or nothing): the
/// frame's length sent.
pub(crate) fn send_frame(fd: i32, header: &[u8], frame: &[u8]) -> io::Result<usize> {
    let mut pieces = [iovec(header), iovec(frame)];
    let skip = usize::from(header.is_empty());
    // SAFETY: msghdr is plain old data; all-zero is valid (no address, no control data).
    let mut m: libc::msghdr = unsafe { std::mem::zeroed() };
    m.msg_iov = pieces[skip..].as_mut_ptr();
    m.msg_iovlen = pieces.len() - skip;
    // SAFETY: `m` points at iovecs of `pieces`, which describe `header` and `frame`; all
    // outlive the call.
    let n = unsafe { libc::sendmsg(fd, &m, 0) };
    if n < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok((n as usize).saturating_sub(header.len()))
}

/// The iovec that describes `b` (the kernel only reads it when sending).
fn iovec(b: &[u8]) -> libc::iovec {
    libc::iovec {
        iov_base: b.as_ptr() as *mut libc::c_void,
        iov_len: b.len(),
    }
}

/// Most frames handed to the kernel in one `sendmmsg` call (the kernel's own limit,
/// `UIO_MAXIOV`).
const SEND_BATCH: usize = 1024;

/// Send `frames` (each whole, no FCS, after `header` as in [`send_frame`]) on bound
/// packet socket `fd`, as few system calls as `sendmmsg` allows: how many were sent, and
/// the error that stopped the rest (the frame after those sent is the one that failed).
pub(crate) fn send_frames<F: AsRef<[u8]>>(
    fd: i32,
    header: &[u8],
    frames: &[F],
) -> (usize, Option<io::Error>) {
    let parts = if header.is_empty() { 1 } else { 2 };
    let mut sent = 0;
    while sent < frames.len() {
        let chunk = &frames[sent..frames.len().min(sent + SEND_BATCH)];
        // Each frame's pieces side by side: [header, frame] or [frame].
        let mut iovs: Vec<libc::iovec> = chunk
            .iter()
            .flat_map(|f| {
                [iovec(header), iovec(f.as_ref())]
                    .into_iter()
                    .skip(2 - parts)
            })
            .collect();
        let msgs_iovs = iovs.chunks_exact_mut(parts);
        let mut msgs: Vec<libc::mmsghdr> = msgs_iovs
            .map(|pieces| {
                // SAFETY: mmsghdr is plain old data; all-zero is valid (no address, no
                // control data).
                let mut m: libc::mmsghdr = unsafe { std::mem::zeroed() };
                m.msg_hdr.msg_iov = pieces.as_mut_ptr();
                m.msg_hdr.msg_iovlen = parts;
                m
            })
            .collect();
        // SAFETY: `msgs` holds `msgs.len()` headers, each pointing at `parts` iovecs of
        // `iovs` that describe `header` and a frame of `chunk`; all outlive the call.
        let n = unsafe { libc::sendmmsg(fd, msgs.as_mut_ptr(), msgs.len() as u32, 0) };
        if n < 0 {
            let e = io::Error::last_os_error();
            if e.kind() == io::ErrorKind::Interrupted {
                continue;
            }
            return (sent, Some(e));
        }
        if n == 0 {
            return (sent, Some(io::Error::other("sendmmsg sent nothing")));
        }
        sent += n as usize;
    }
    (sent, None)
}

/// A raw packet socket of protocol 0: it receives nothing until [`bind_all`] names an
/// interface (see the module's note).
pub(crate) fn unbound_socket() -> io::Result<OwnedFd> {
    // SAFETY: plain socket(2) call; the result is checked before use.
    let raw = unsafe { libc::socket(libc::AF_PACKET, libc::SOCK_RAW | libc::SOCK_CLOEXEC, 0) };
    if raw < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: `raw` is a fresh, valid descriptor that nothing else owns.
    Ok(unsafe { OwnedFd::from_raw_fd(raw) })
}

/// Bind packet socket `fd` to interface `ifindex` for every protocol (`ETH_P_ALL`): from
/// now on it receives every frame of that interface.
pub(crate) fn bind_all(fd: &OwnedFd, ifindex: i32) -> io::Result<()> {
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
    Ok(())
}

/// A raw socket on one interface.
#[derive(Debug)]
pub struct PacketSocket {
    fd: OwnedFd,
    ifindex: i32,
}

impl PacketSocket {
    /// Open a raw socket on interface `iface` of this namespace (needs CAP_NET_RAW).
    pub fn open(iface: &str) -> io::Result<PacketSocket> {
        let ifindex = if_index(iface)?;
        let fd = unbound_socket()?;
        bind_all(&fd, ifindex)?;
        Ok(PacketSocket { fd, ifindex })
    }

    /// Interface index the socket is bound to.
    pub fn ifindex(&self) -> i32 {
        self.ifindex
    }

    /// Send one whole frame (no FCS).
    pub fn send(&self, frame: &[u8]) -> io::Result<usize> {
        send_frame(self.fd.as_raw_fd(), &[], frame)
    }

    /// Receive one frame, waiting at most `timeout` (zero: do not wait); Ok(None) when
    /// nothing came. Frames this socket's interface sent (PACKET_OUTGOING) come back as
    /// Some(0).
    pub fn recv(&self, buf: &mut [u8], timeout: Duration) -> io::Result<Option<usize>> {
        match self.recv_now(buf)? {
            Some(n) => Ok(Some(n)),
            None if timeout.is_zero() => Ok(None),
            None => {
                if !poll_in(self.fd.as_raw_fd(), timeout)? {
                    return Ok(None);
                }
                self.recv_now(buf)
            }
        }
    }

    /// Receive one frame if one is waiting (one system call), else Ok(None).
    fn recv_now(&self, buf: &mut [u8]) -> io::Result<Option<usize>> {
        // SAFETY: sockaddr_ll is plain old data; recvfrom writes at most `len` bytes into
        // `buf` and at most `alen` bytes into `from`.
        let mut from: libc::sockaddr_ll = unsafe { std::mem::zeroed() };
        let mut alen = std::mem::size_of::<libc::sockaddr_ll>() as libc::socklen_t;
        let n = unsafe {
            libc::recvfrom(
                self.fd.as_raw_fd(),
                buf.as_mut_ptr() as *mut libc::c_void,
                buf.len(),
                libc::MSG_DONTWAIT,
                &mut from as *mut libc::sockaddr_ll as *mut libc::sockaddr,
                &mut alen,
            )
        };
        if n < 0 {
            let e = io::Error::last_os_error();
            if matches!(
                e.kind(),
                io::ErrorKind::WouldBlock | io::ErrorKind::Interrupted
            ) {
                return Ok(None);
            }
            return Err(e);
        }
        if from.sll_pkttype == libc::PACKET_OUTGOING {
            return Ok(Some(0));
        }
        Ok(Some(n as usize))
    }
}

/// How many packet sockets of a `/proc/net/packet` listing are bound to an interface (its
/// `Iface` column is not 0): a socket created with protocol 0 and not yet bound receives
/// nothing, so a frame sent to its interface then is counted by the kernel and never read.
pub fn bound_sockets(proc_net_packet: &str) -> usize {
    proc_net_packet
        .lines()
        .skip(1)
        .filter(|l| l.split_whitespace().nth(4).is_some_and(|i| i != "0"))
        .count()
}

#[cfg(test)]
mod listing_tests {
    use super::bound_sockets;

    #[test]
    fn only_sockets_bound_to_an_interface_count() {
        let listing = "sk               RefCnt Type Proto  Iface R Rmem   User   Inode\n\
                       ffff8881 3      3    0003   7     1 0      0      1234\n\
                       ffff8882 3      3    0000   0     0 0      0      1235\n";
        assert_eq!(bound_sockets(listing), 1);
        assert_eq!(bound_sockets(""), 0);
    }
}
