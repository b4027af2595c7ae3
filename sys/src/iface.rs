//! An interface that already exists — a veth end a container runtime moved into our
//! namespace (containerlab's `eth1…ethN`), a physical NIC — served as a switch port through
//! an `AF_PACKET` socket.
//!
//! Receiving uses a memory-mapped `TPACKET_V2` ring of a fixed number of frame slots: no
//! system call per frame, and the frames that may wait between the host and the switch
//! are bounded in frames exactly, as a TAP's transmit queue bounds them (the headroom a
//! lossless PG needs, see the `lossless` package's `cable`). A frame that arrives while
//! every slot is full is dropped by the kernel and counted (`PACKET_STATISTICS`). The
//! socket is promiscuous (a switch port takes every frame), ignores the frames it sends
//! itself (`PACKET_IGNORE_OUTGOING`), and sends past the interface's queueing discipline
//! (`PACKET_QDISC_BYPASS`), as a switch's MAC hands frames straight to the wire.
//!
//! The kernel takes a VLAN tag off a frame before a packet socket sees it and reports it
//! beside the frame; [`Iface::read_now`] puts it back, so PCP classification sees the frame
//! as it was on the wire.
//!
//! The socket speaks the virtio-net header (`PACKET_VNET_HDR`), as a TAP opened with
//! [`crate::tap::Offloads::Segmentation`] does: each frame comes with what its host left
//! to its NIC. A checksum left to offload (the default on a veth) is read as
//! [`Offload::Checksum`]: the reader completes it before the switch sees it, or the
//! receiving host would drop it. A host may leave segmentation offload on and hand over
//! 64 KB TCP or UDP super-frames, which the reader cuts into wire frames. A slot holds
//! one wire frame; the kernel puts a longer frame, whole, on the socket's own receive queue
//! and marks its slot `TP_STATUS_COPY` (`PACKET_COPY_THRESH`), so the reader takes it from
//! there when it reaches that slot, in order. That queue is bounded in bytes
//! ([`SUPER_FRAME_QUEUE_BYTES`]); a super-frame that finds it full is cut short by the
//! kernel and counted with the ring's drops: the host sent faster than the switch read.

use crate::netdev::if_index;
use crate::received::Received;
use crate::vnet;
use lossless_pipeline::wire::gso::Offload;
use std::io;
use std::os::fd::{AsRawFd, OwnedFd};
use std::sync::atomic::{AtomicU32, AtomicU64, AtomicUsize, Ordering};

/// Bytes of a slot besides the frame: the `tpacket2_hdr`, the address the kernel puts
/// after it, alignment, and a VLAN tag's room.
const SLOT_OVERHEAD: usize = 128;
/// Bytes of an 802.1Q tag.
const VLAN_TAG: usize = 4;
/// Where a frame is put in the reader's buffer: room before it for the virtio-net header a
/// copied super-frame comes after, and for a VLAN tag put back in front of its EtherType.
const FRAME_AT: usize = 16;
/// Bytes the kernel may hold of super-frames waiting on an interface socket's receive
/// queue (`SO_RCVBUF`; the kernel counts each buffer's true size against twice this): at
/// 10 Gbit/s, about 13 ms of a host's TCP, longer than the pipeline thread is held up on a
/// busy machine.
pub const SUPER_FRAME_QUEUE_BYTES: usize = 8 << 20;

/// Counters of an interface port's socket, kept by the thread that reads it.
#[derive(Debug, Default)]
pub struct IfaceCounters {
    /// Frames the kernel dropped because every ring slot was full, or because a
    /// super-frame found the socket's receive queue full (the host sent faster than the
    /// switch read).
    pub ring_drops: AtomicU64,
    /// Frames too long to read whole (a super-frame above 64 KB: longer than the reader's
    /// buffer), dropped.
    pub oversize: AtomicU64,
}

/// What the kernel says of the interface now.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IfaceLink {
    /// Administratively up with carrier: frames can go both ways.
    Up,
    /// Down, or up without carrier (a veth whose peer is down).
    Down,
    /// No interface of that index any more (deleted, or moved to another namespace).
    Gone,
}

/// The mapped receive ring.
struct RxRing {
    base: *mut u8,
    len: usize,
    slot: usize,
    slots: usize,
    /// Slot the reader looks at next (only the one thread that reads advances it).
    next: AtomicUsize,
}

// SAFETY: the mapping lives as long as the ring; slots are handed between kernel and
// reader through each slot's atomic status word, and only one thread reads the ring (the
// thread that reads the port), which the `next` index being atomic merely makes sound to share.
unsafe impl Send for RxRing {}
// SAFETY: see above.
unsafe impl Sync for RxRing {}

impl Drop for RxRing {
    fn drop(&mut self) {
        // SAFETY: `base` and `len` are exactly what mmap returned; nothing uses the ring
        // after drop.
        unsafe {
            libc::munmap(self.base as *mut libc::c_void, self.len);
        }
    }
}

/// An existing interface attached as a switch port.
pub struct Iface {
    fd: OwnedFd,
    name: String,
    ifindex: i32,
    ring: RxRing,
    _claim: crate::claim::Claim,
    /// The socket's counters.
    pub counters: IfaceCounters,
}

impl std::fmt::Debug for Iface {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Iface")
            .field("name", &self.name)
            .field("ifindex", &self.ifindex)
            .field("slots", &self.ring.slots)
            .finish()
    }
}

fn setsockopt<T>(fd: &OwnedFd, level: i32, name: i32, value: &T) -> io::Result<()> {
    // SAFETY: `value` points to a live T and the length passed is its size.
    let rc = unsafe {
        libc::setsockopt(
            fd.as_raw_fd(),
            level,
            name,
            value as *const T as *const libc::c_void,
            std::mem::size_of::<T>() as libc::socklen_t,
        )
    };
    if rc < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

impl Iface {
    /// Attach to interface `name` of this namespace with a receive ring of `slots` frames
    /// of up to `mtu` bytes (FCS included), offering the host behind it checksum and
    /// segmentation offload. Needs CAP_NET_RAW (and CAP_NET_ADMIN for promiscuous mode).
    pub fn open(name: &str, slots: u32, mtu: u32) -> io::Result<Iface> {
        let ifindex = if_index(name)?;
        let claim = crate::claim::claim(ifindex, name)?;
        // Protocol 0: nothing is queued until the ring exists and `bind` names the
        // interface (see `packet`).
        let fd = crate::packet::unbound_socket()?;
        let ctx = |what: &'static str| {
            move |e: io::Error| io::Error::new(e.kind(), format!("interface `{name}`: {what}: {e}"))
        };
        setsockopt(
            &fd,
            libc::SOL_PACKET,
            libc::PACKET_VERSION,
            &(libc::tpacket_versions::TPACKET_V2 as libc::c_int),
        )
        .map_err(ctx("TPACKET_V2"))?;
        // Before the ring: the kernel lays out its slots with the header in them.
        accept_super_frames(&fd).map_err(ctx("virtio-net header"))?;
        let ring = map_ring(&fd, slots, mtu).map_err(ctx("receive ring"))?;
        setsockopt(
            &fd,
            libc::SOL_PACKET,
            libc::PACKET_IGNORE_OUTGOING,
            &1 as &libc::c_int,
        )
        .map_err(ctx("PACKET_IGNORE_OUTGOING (Linux 4.20 or later)"))?;
        // Without the bypass the frames still go out, through the qdisc: not an error.
        let _ = setsockopt(
            &fd,
            libc::SOL_PACKET,
            libc::PACKET_QDISC_BYPASS,
            &1 as &libc::c_int,
        );
        // SAFETY: packet_mreq is plain old data; all-zero is valid.
        let mut mreq: libc::packet_mreq = unsafe { std::mem::zeroed() };
        mreq.mr_ifindex = ifindex;
        mreq.mr_type = libc::PACKET_MR_PROMISC as u16;
        setsockopt(&fd, libc::SOL_PACKET, libc::PACKET_ADD_MEMBERSHIP, &mreq)
            .map_err(ctx("promiscuous mode"))?;
        crate::packet::bind_all(&fd, ifindex).map_err(ctx("bind"))?;
        Ok(Iface {
            fd,
            name: name.to_string(),
            ifindex,
            ring,
            _claim: claim,
            counters: IfaceCounters::default(),
        })
    }

    /// The socket frames are read from (to wait on it with others).
    pub fn raw_fd(&self) -> i32 {
        self.fd.as_raw_fd()
    }

    /// Interface name it was opened with.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Frames the receive ring holds.
    pub fn slots(&self) -> usize {
        self.ring.slots
    }

    /// The socket's pending error, cleared (poll reports it until it is read): ENETDOWN
    /// when the interface went down; the caller asks [`Iface::link`] what it means.
    pub fn take_error(&self) -> io::Result<()> {
        let mut err: libc::c_int = 0;
        let mut len = std::mem::size_of::<libc::c_int>() as libc::socklen_t;
        // SAFETY: `err` and `len` are valid for the call; SO_ERROR writes one int.
        let rc = unsafe {
            libc::getsockopt(
                self.fd.as_raw_fd(),
                libc::SOL_SOCKET,
                libc::SO_ERROR,
                &mut err as *mut libc::c_int as *mut libc::c_void,
                &mut len,
            )
        };
        if rc < 0 {
            return Err(io::Error::last_os_error());
        }
        if err != 0 {
            return Err(io::Error::from_raw_os_error(err));
        }
        Ok(())
    }

    /// Take the next frame from the ring if the kernel has filled it (or, for a slot
    /// marked `TP_STATUS_COPY`, from the socket's queue): where it lies in `buf` and what
    /// its host left to do; Ok(None) when the ring is empty. Frames cut short are counted
    /// and skipped.
    pub fn read_now(&self, buf: &mut [u8]) -> io::Result<Option<Received>> {
        loop {
            let i = self.ring.next.load(Ordering::Relaxed);
            // SAFETY: `i < slots`, so the slot lies inside the mapping; every slot starts
            // with a tpacket2_hdr whose first field is the 4-aligned status word.
            let slot = unsafe { self.ring.base.add(i * self.ring.slot) };
            let status = unsafe { &*(slot as *const AtomicU32) };
            let st = status.load(Ordering::Acquire);
            if st & libc::TP_STATUS_USER == 0 {
                return Ok(None);
            }
            // SAFETY: the kernel handed the slot to us (TP_STATUS_USER, acquired above);
            // the header is plain old data at the slot's start.
            let h: libc::tpacket2_hdr =
                unsafe { std::ptr::read_volatile(slot as *const libc::tpacket2_hdr) };
            let taken = if st & libc::TP_STATUS_COPY != 0 {
                self.take_copied(buf)
            } else {
                // SAFETY: the slot is ours until its status is handed back below.
                Ok(unsafe { self.take_slot(slot, &h, buf) })
            };
            status.store(libc::TP_STATUS_KERNEL, Ordering::Release);
            self.ring
                .next
                .store((i + 1) % self.ring.slots, Ordering::Relaxed);
            if let Some((len, offload)) = taken? {
                let (at, len) = put_back_tag(buf, len, &h, st);
                return Ok(Some(Received { at, len, offload }));
            }
        }
    }

    /// The frame in ring slot `slot` (header `h`), copied to `buf` at
    /// [`FRAME_AT`]: its length and what its host left to do; None if it was cut short.
    ///
    /// # Safety
    /// `slot` is a slot of this ring that the kernel handed to the reader.
    unsafe fn take_slot(
        &self,
        slot: *const u8,
        h: &libc::tpacket2_hdr,
        buf: &mut [u8],
    ) -> Option<(usize, Offload)> {
        let (mac, snap) = (h.tp_mac as usize, h.tp_snaplen as usize);
        if h.tp_snaplen < h.tp_len || mac < vnet::LEN || mac + snap > self.ring.slot {
            // Cut short by the slot: a super-frame the kernel could not queue whole (its
            // receive queue was full).
            self.counters.ring_drops.fetch_add(1, Ordering::Relaxed);
            return None;
        }
        if FRAME_AT + snap > buf.len() {
            self.counters.oversize.fetch_add(1, Ordering::Relaxed);
            return None;
        }
        // SAFETY: the frame, and the virtio-net header right before it, lie inside the
        // slot (checked above).
        let frame =
            unsafe { std::slice::from_raw_parts(slot.add(mac - vnet::LEN), vnet::LEN + snap) };
        buf[FRAME_AT..FRAME_AT + snap].copy_from_slice(&frame[vnet::LEN..]);
        let mut v = [0; vnet::LEN];
        v.copy_from_slice(&frame[..vnet::LEN]);
        Some((snap, vnet::offload(&v)))
    }

    /// The super-frame a slot marked `TP_STATUS_COPY` stands for, taken whole from the
    /// socket's receive queue into `buf` at [`FRAME_AT`], after its virtio-net header.
    fn take_copied(&self, buf: &mut [u8]) -> io::Result<Option<(usize, Offload)>> {
        let room = &mut buf[FRAME_AT - vnet::LEN..];
        // SAFETY: `room` is writable for its length; MSG_TRUNC makes the call return the
        // datagram's whole length even when it was longer than `room`.
        let n = unsafe {
            libc::recv(
                self.fd.as_raw_fd(),
                room.as_mut_ptr() as *mut libc::c_void,
                room.len(),
                libc::MSG_DONTWAIT | libc::MSG_TRUNC,
            )
        };
        if n < 0 {
            let e = io::Error::last_os_error();
            return match e.kind() {
                // The kernel queues the frame before it hands the slot over: not expected.
                io::ErrorKind::WouldBlock => {
                    self.counters.ring_drops.fetch_add(1, Ordering::Relaxed);
                    Ok(None)
                }
                _ => Err(e),
            };
        }
        let n = n as usize;
        if n > room.len() || n < vnet::LEN {
            self.counters.oversize.fetch_add(1, Ordering::Relaxed);
            return Ok(None);
        }
        let mut v = [0; vnet::LEN];
        v.copy_from_slice(&room[..vnet::LEN]);
        Ok(Some((n - vnet::LEN, vnet::offload(&v))))
    }

    /// Send one whole frame (no FCS).
    pub fn write(&self, frame: &[u8]) -> io::Result<usize> {
        crate::packet::send_frame(self.fd.as_raw_fd(), &vnet::COMPLETE, frame)
    }

    /// Send whole frames (no FCS) in as few system calls as the kernel allows: how many
    /// were sent, and the error that stopped the rest.
    pub fn write_all(&self, frames: &[Vec<u8>]) -> (usize, Option<io::Error>) {
        crate::packet::send_frames(self.fd.as_raw_fd(), &vnet::COMPLETE, frames)
    }

    /// Fold the kernel's ring-drop count (reset by each read) into [`IfaceCounters`].
    pub fn read_ring_drops(&self) -> u64 {
        // SAFETY: tpacket_stats is plain old data; getsockopt writes at most `len` bytes.
        let mut st: libc::tpacket_stats = unsafe { std::mem::zeroed() };
        let mut len = std::mem::size_of::<libc::tpacket_stats>() as libc::socklen_t;
        let rc = unsafe {
            libc::getsockopt(
                self.fd.as_raw_fd(),
                libc::SOL_PACKET,
                libc::PACKET_STATISTICS,
                &mut st as *mut libc::tpacket_stats as *mut libc::c_void,
                &mut len,
            )
        };
        if rc == 0 {
            self.counters
                .ring_drops
                .fetch_add(st.tp_drops as u64, Ordering::Relaxed);
        }
        self.counters.ring_drops.load(Ordering::Relaxed)
    }

    /// The interface's state now, found by its index (it may have been renamed).
    pub fn link(&self) -> IfaceLink {
        match crate::netdev::if_name(self.ifindex) {
            Err(_) => IfaceLink::Gone,
            Ok(name) => match crate::netdev::if_flags(&name) {
                Err(_) => IfaceLink::Gone,
                Ok(f) if f & libc::IFF_UP != 0 && f & libc::IFF_RUNNING != 0 => IfaceLink::Up,
                Ok(_) => IfaceLink::Down,
            },
        }
    }

    /// The interface's current name (it may have been renamed).
    pub fn current_name(&self) -> io::Result<String> {
        crate::netdev::if_name(self.ifindex)
    }
}

/// Have packet socket `fd` speak the virtio-net header and queue a frame longer than a
/// slot whole on its receive queue (of [`SUPER_FRAME_QUEUE_BYTES`]), marking its slot.
fn accept_super_frames(fd: &OwnedFd) -> io::Result<()> {
    setsockopt(
        fd,
        libc::SOL_PACKET,
        libc::PACKET_VNET_HDR,
        &1 as &libc::c_int,
    )?;
    setsockopt(
        fd,
        libc::SOL_PACKET,
        libc::PACKET_COPY_THRESH,
        &1 as &libc::c_int,
    )?;
    let bytes = SUPER_FRAME_QUEUE_BYTES as libc::c_int;
    // Past the `rmem_max` sysctl with CAP_NET_ADMIN; without it, as much as it allows.
    setsockopt(fd, libc::SOL_SOCKET, libc::SO_RCVBUFFORCE, &bytes)
        .or_else(|_| setsockopt(fd, libc::SOL_SOCKET, libc::SO_RCVBUF, &bytes))
}

/// Put back, in front of the EtherType, the VLAN tag the kernel took off the frame of
/// `len` bytes at [`FRAME_AT`] in `buf` (reported in the slot's header `h` and status
/// `st`): where the frame now starts, and its length.
fn put_back_tag(buf: &mut [u8], len: usize, h: &libc::tpacket2_hdr, st: u32) -> (usize, usize) {
    if st & libc::TP_STATUS_VLAN_VALID == 0 || len < 12 {
        return (FRAME_AT, len);
    }
    let tpid = if st & libc::TP_STATUS_VLAN_TPID_VALID != 0 && h.tp_vlan_tpid != 0 {
        h.tp_vlan_tpid
    } else {
        0x8100
    };
    let at = FRAME_AT - VLAN_TAG;
    buf.copy_within(FRAME_AT..FRAME_AT + 12, at);
    buf[at + 12..at + 14].copy_from_slice(&tpid.to_be_bytes());
    buf[at + 14..at + 16].copy_from_slice(&h.tp_vlan_tci.to_be_bytes());
    (at, len + VLAN_TAG)
}

/// Slot size for frames of up to `mtu` bytes: a power of two, so that slots tile a block.
fn slot_size(mtu: u32) -> usize {
    (mtu as usize + SLOT_OVERHEAD).next_power_of_two()
}

/// Set up and map a receive ring of exactly `slots` slots.
fn map_ring(fd: &OwnedFd, slots: u32, mtu: u32) -> io::Result<RxRing> {
    let slot = slot_size(mtu);
    // SAFETY: sysconf has no preconditions.
    let page = (unsafe { libc::sysconf(libc::_SC_PAGESIZE) }).max(4096) as usize;
    let block = slot.max(page);
    let per_block = block / slot;
    let blocks = (slots as usize).div_ceil(per_block).max(1);
    let req = libc::tpacket_req {
        tp_block_size: block as u32,
        tp_block_nr: blocks as u32,
        tp_frame_size: slot as u32,
        tp_frame_nr: (blocks * per_block) as u32,
    };
    setsockopt(fd, libc::SOL_PACKET, libc::PACKET_RX_RING, &req)?;
    let len = block * blocks;
    // SAFETY: mapping the ring the kernel just allocated for this socket, at its length.
    let base = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            len,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_SHARED,
            fd.as_raw_fd(),
            0,
        )
    };
    if base == libc::MAP_FAILED {
        return Err(io::Error::last_os_error());
    }
    Ok(RxRing {
        base: base as *mut u8,
        len,
        slot,
        slots: blocks * per_block,
        next: AtomicUsize::new(0),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_lifted_vlan_tag_goes_back_in_front_of_the_ethertype() {
        let mut buf = vec![0u8; 64];
        let frame: Vec<u8> = (1..=20).collect();
        buf[FRAME_AT..FRAME_AT + 20].copy_from_slice(&frame);
        // SAFETY: tpacket2_hdr is plain old data; all-zero is valid.
        let mut h: libc::tpacket2_hdr = unsafe { std::mem::zeroed() };
        assert_eq!(put_back_tag(&mut buf, 20, &h, 0), (FRAME_AT, 20));
        h.tp_vlan_tci = 0x6064; // PCP 3, VLAN 100
        let (at, len) = put_back_tag(&mut buf, 20, &h, libc::TP_STATUS_VLAN_VALID);
        assert_eq!(len, 24);
        let out = &buf[at..at + len];
        assert_eq!(&out[..12], &frame[..12]);
        assert_eq!(&out[12..16], &[0x81, 0x00, 0x60, 0x64]);
        assert_eq!(&out[16..], &frame[12..]);
    }

    #[test]
    fn slots_hold_the_mtu_and_tile_pages() {
        assert_eq!(slot_size(1518), 2048);
        assert_eq!(slot_size(9216), 16384);
        assert_eq!(slot_size(16383), 32768);
        assert!(slot_size(64) >= 64 + SLOT_OVERHEAD);
    }
}
