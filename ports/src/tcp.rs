//! TCP hosts on smoltcp, in virtual time: each host that sends or receives a TCP flow runs
//! one smoltcp [`Interface`] with a socket per flow. Its device is [`Wire`]: IP packets in
//! from the NIC, IP packets out to it, which the NIC wraps in Ethernet (the flow's MACs,
//! VLAN tag and DSCP) and sends through its transmitter like any other frame, so PFC,
//! priorities and the switches apply. smoltcp's clock is the simulator's time (µs
//! resolution); its random seed is the run's, so a run repeats exactly.
//!
//! What smoltcp does is TCP as it is: MSS from the interface MTU, window scaling, Reno or
//! CUBIC (or no congestion control), RFC 6298 retransmission timeouts with its 1 s
//! minimum; every segment is acknowledged at once (no delayed ACK). What the NIC
//! adds is counting: data segments sent again (by sequence number: a segment that ends at
//! or before the highest byte already sent), and RTT samples (a segment sent once, to the
//! first ACK that covers it: Karn's rule).

use crate::flow::FlowSpec;
use lossless_buffer_model::{Named, Time};
use lossless_pipeline::wire::{edit, vlan};
use smoltcp::iface::{Config, Interface, SocketHandle, SocketSet};
use smoltcp::phy::{Checksum, ChecksumCapabilities, Device, DeviceCapabilities, Medium};
use smoltcp::socket::tcp;
use smoltcp::time::Instant;
use smoltcp::wire::{HardwareAddress, IpAddress, IpCidr, Ipv4Address};
use std::collections::VecDeque;

/// How a TCP sender grows and cuts its window (smoltcp's implementations).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Congestion {
    /// RFC 5681 Reno: slow start, congestion avoidance, halve on loss.
    Reno,
    /// RFC 9438 CUBIC, Linux's default.
    #[default]
    Cubic,
    /// No congestion window: only the receiver's window limits it.
    None,
}

impl Named for Congestion {
    const WORDS: &'static [(&'static str, Congestion)] = &[
        ("reno", Congestion::Reno),
        ("cubic", Congestion::Cubic),
        ("none", Congestion::None),
    ];
}

/// The TCP side of a flow.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TcpFlow {
    /// Congestion control of the sender.
    pub congestion: Congestion,
    /// Bytes of each socket buffer (send and receive, both ends): the largest window.
    pub buffer: u32,
    /// IP MTU of the path's ports (frame MTU less Ethernet header, tag and FCS): the MSS
    /// is this less 40.
    pub ip_mtu: u32,
    /// Payload bytes to send.
    pub size: u64,
    /// Destination MAC of the receiver's frames back to the sender (its next hop).
    pub reply_mac: [u8; 6],
    /// The bytes are posted from outside, a collective's steps ([`TcpStack::post`]);
    /// `size` is their total.
    pub posted: bool,
}

/// Bytes of zeros a sender writes from: the payload's content does not matter.
static ZEROS: [u8; 65_536] = [0; 65_536];

/// smoltcp's device: IP packets queued both ways.
#[derive(Debug, Default)]
pub struct Wire {
    rx: VecDeque<Vec<u8>>,
    tx: VecDeque<Vec<u8>>,
    mtu: usize,
}

/// A received packet handed to smoltcp.
pub struct WireRx(Vec<u8>);
/// Room for a packet smoltcp sends.
pub struct WireTx<'a>(&'a mut VecDeque<Vec<u8>>);

impl smoltcp::phy::RxToken for WireRx {
    fn consume<R, F: FnOnce(&[u8]) -> R>(self, f: F) -> R {
        f(&self.0)
    }
}

impl smoltcp::phy::TxToken for WireTx<'_> {
    fn consume<R, F: FnOnce(&mut [u8]) -> R>(self, len: usize, f: F) -> R {
        let mut b = vec![0; len];
        let r = f(&mut b);
        self.0.push_back(b);
        r
    }
}

impl Device for Wire {
    type RxToken<'a> = WireRx;
    type TxToken<'a> = WireTx<'a>;

    fn receive(&mut self, _now: Instant) -> Option<(WireRx, WireTx<'_>)> {
        let p = self.rx.pop_front()?;
        Some((WireRx(p), WireTx(&mut self.tx)))
    }

    fn transmit(&mut self, _now: Instant) -> Option<WireTx<'_>> {
        Some(WireTx(&mut self.tx))
    }

    fn capabilities(&self) -> DeviceCapabilities {
        let mut c = DeviceCapabilities::default();
        c.medium = Medium::Ip;
        c.max_transmission_unit = self.mtu;
        // Sent checksums are computed; received ones are not checked again: every packet
        // comes from a peer stack of this run, and the switch's header edits (CE marks,
        // TTL) keep the IPv4 checksum right.
        let mut sum = ChecksumCapabilities::default();
        sum.ipv4 = Checksum::Tx;
        sum.tcp = Checksum::Tx;
        c.checksum = sum;
        c
    }
}

/// Which end of a flow a connection is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Role {
    /// It sends `size` bytes.
    Sender,
    /// It receives them.
    Receiver,
}

/// What one end of a TCP flow counted.
#[derive(Clone, Debug, Default)]
pub struct TcpStats {
    /// Data segments sent.
    pub segments: u64,
    /// Of those, sent again (ending at or before the highest byte already sent).
    pub retransmitted_segments: u64,
    /// Payload bytes sent again.
    pub retransmitted_bytes: u64,
    /// Payload bytes the receiver's application read (in order, once).
    pub delivered_bytes: u64,
    /// When the connection was established (the sender saw the SYN-ACK).
    pub established: Option<Time>,
    /// When the receiver had read every byte.
    pub done: Option<Time>,
    /// RTT samples, ps.
    pub rtt: Vec<u64>,
}

/// One end of one TCP flow.
#[derive(Debug)]
struct Conn {
    id: u32,
    role: Role,
    handle: SocketHandle,
    /// The local TCP port.
    port: u16,
    spec: FlowSpec,
    tcp: TcpFlow,
    /// Sender: bytes not yet written into the socket.
    unwritten: u64,
    /// Sender: bytes it was given to send, in all.
    given: u64,
    /// Sender: the highest sequence number sent, relative to the first (None before).
    highest: Option<u32>,
    /// Sender: the first sequence number.
    isn: Option<u32>,
    /// Sender: when to connect, until it has.
    connect_at: Option<Time>,
    /// Sender: segments being timed for RTT: (end sequence, sent at), oldest first.
    timed: VecDeque<(u32, Time)>,
    stats: TcpStats,
}

/// RTT samples kept per flow.
const RTT_SAMPLES: usize = 100_000;
/// Segments timed at once.
const TIMED: usize = 64;

/// What an IP packet smoltcp sent belongs to: the flow, its TCP side, and whether it goes
/// the sender's way (data) or back (ACKs).
pub type Outgoing<'a> = (&'a FlowSpec, &'a TcpFlow, bool);

/// A host's TCP stack.
pub struct TcpStack {
    iface: Interface,
    wire: Wire,
    sockets: SocketSet<'static>,
    conns: Vec<Conn>,
}

impl std::fmt::Debug for TcpStack {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TcpStack")
            .field("conns", &self.conns)
            .finish_non_exhaustive()
    }
}

fn instant(t: Time) -> Instant {
    Instant::from_micros((t.as_ps() / 1_000_000) as i64)
}

fn time(i: Instant) -> Time {
    Time(i.total_micros().max(0) as u64 * 1_000_000)
}

impl TcpStack {
    /// A stack at `ip` whose smoltcp draws from `seed`.
    pub fn new(ip: [u8; 4], mtu: u32, seed: u64) -> TcpStack {
        let mut wire = Wire {
            mtu: mtu as usize,
            ..Wire::default()
        };
        let mut config = Config::new(HardwareAddress::Ip);
        config.random_seed = seed;
        let mut iface = Interface::new(config, &mut wire, Instant::ZERO);
        let addr = Ipv4Address::new(ip[0], ip[1], ip[2], ip[3]);
        iface.update_ip_addrs(|a| {
            let _ = a.push(IpCidr::new(IpAddress::Ipv4(addr), 0));
        });
        // Everything is on the link: the NIC adds the Ethernet header toward the next hop.
        let _ = iface.routes_mut().add_default_ipv4_route(addr);
        TcpStack {
            iface,
            wire,
            sockets: SocketSet::new(Vec::new()),
            conns: Vec::new(),
        }
    }

    fn socket(tcp: &TcpFlow) -> tcp::Socket<'static> {
        let buf = tcp.buffer as usize;
        let mut s = tcp::Socket::new(
            tcp::SocketBuffer::new(vec![0; buf]),
            tcp::SocketBuffer::new(vec![0; buf]),
        );
        s.set_congestion_control(match tcp.congestion {
            Congestion::Reno => tcp::CongestionControl::Reno,
            Congestion::Cubic => tcp::CongestionControl::Cubic,
            Congestion::None => tcp::CongestionControl::None,
        });
        // Nagle's rule is set as the data goes (see `serve`): off at the tail.
        s.set_nagle_enabled(false);
        // ACK every segment at once, as Linux's quick-ACK mode does while a connection
        // starts: smoltcp's 10 ms delayed ACK would hold each round of slow start, and a
        // flow's last segment, for 10 ms.
        s.set_ack_delay(None);
        s
    }

    /// Send flow `spec` (TCP) from this host, from its start.
    pub fn add_sender(&mut self, spec: &FlowSpec, tcp: TcpFlow) {
        self.wire.mtu = self.wire.mtu.min(tcp.ip_mtu as usize);
        let handle = self.sockets.add(Self::socket(&tcp));
        self.conns.push(Conn {
            id: spec.id,
            role: Role::Sender,
            handle,
            port: spec.headers.src_port,
            spec: spec.clone(),
            tcp,
            unwritten: if tcp.posted { 0 } else { tcp.size },
            given: if tcp.posted { 0 } else { tcp.size },
            highest: None,
            isn: None,
            connect_at: Some(spec.start),
            timed: VecDeque::new(),
            stats: TcpStats::default(),
        });
    }

    /// Receive flow `spec` (TCP) on this host: a socket listening on its port from now.
    pub fn add_receiver(&mut self, spec: &FlowSpec, tcp: TcpFlow) {
        self.wire.mtu = self.wire.mtu.min(tcp.ip_mtu as usize);
        let mut s = Self::socket(&tcp);
        let port = spec.headers.dst_port;
        let _ = s.listen(port);
        let handle = self.sockets.add(s);
        self.conns.push(Conn {
            id: spec.id,
            role: Role::Receiver,
            handle,
            port,
            spec: spec.clone(),
            tcp,
            unwritten: 0,
            given: 0,
            highest: None,
            isn: None,
            connect_at: None,
            timed: VecDeque::new(),
            stats: TcpStats::default(),
        });
    }

    /// What flow `id`'s end on this host counted, if it has one.
    pub fn stats(&self, id: u32, sender: bool) -> Option<&TcpStats> {
        let role = if sender { Role::Sender } else { Role::Receiver };
        self.conns
            .iter()
            .find(|c| c.id == id && c.role == role)
            .map(|c| &c.stats)
    }

    /// Give flow `id`'s sender `bytes` more to send (a collective's step).
    pub fn post(&mut self, id: u32, bytes: u64) {
        if let Some(c) = self
            .conns
            .iter_mut()
            .find(|c| c.id == id && c.role == Role::Sender)
        {
            c.unwritten += bytes;
            c.given += bytes;
        }
    }

    /// Bytes flow `id`'s receiver has acknowledged to this host's sender: written into the
    /// socket and no longer in its send queue.
    pub fn acknowledged(&self, id: u32) -> u64 {
        let Some(c) = self
            .conns
            .iter()
            .find(|c| c.id == id && c.role == Role::Sender)
        else {
            return 0;
        };
        let queued = self.sockets.get::<tcp::Socket>(c.handle).send_queue() as u64;
        (c.given - c.unwritten).saturating_sub(queued)
    }

    /// Has every sender written and had acknowledged all its bytes, and every receiver
    /// read them?
    pub fn done(&self) -> bool {
        self.conns.iter().all(|c| match c.role {
            Role::Receiver => c.stats.done.is_some(),
            Role::Sender => {
                c.unwritten == 0 && self.sockets.get::<tcp::Socket>(c.handle).send_queue() == 0
            }
        })
    }

    /// An IP packet for this host arrived at `now`.
    pub fn receive(&mut self, ip: &[u8], now: Time) {
        self.note_acks(ip, now);
        self.wire.rx.push_back(ip.to_vec());
        self.poll(now);
    }

    /// Let smoltcp run at `now`: connect senders whose start has come, take in what
    /// arrived, write and read the sockets, send what it will.
    pub fn poll(&mut self, now: Time) {
        let at = instant(now);
        for c in &mut self.conns {
            if c.connect_at.is_some_and(|t| t <= now) {
                c.connect_at = None;
                let s = self.sockets.get_mut::<tcp::Socket>(c.handle);
                let h = &c.spec.headers;
                let remote = (Ipv4Address::from(h.dst_ip), h.dst_port);
                let _ = s.connect(self.iface.context(), remote, c.port);
            }
        }
        for _ in 0..8 {
            let changed = self.iface.poll(at, &mut self.wire, &mut self.sockets);
            let moved = self.serve(now);
            if changed == smoltcp::iface::PollResult::None && !moved {
                break;
            }
        }
    }

    /// Write into senders' sockets and read receivers'; true if any byte moved.
    fn serve(&mut self, now: Time) -> bool {
        let mut moved = false;
        for c in &mut self.conns {
            let s = self.sockets.get_mut::<tcp::Socket>(c.handle);
            match c.role {
                Role::Sender => {
                    if s.may_send() && c.stats.established.is_none() {
                        c.stats.established = Some(now);
                    }
                    while c.unwritten > 0 && s.can_send() {
                        let n = (c.unwritten as usize).min(ZEROS.len());
                        match s.send_slice(&ZEROS[..n]) {
                            Ok(0) | Err(_) => break,
                            Ok(k) => {
                                c.unwritten -= k as u64;
                                moved = true;
                            }
                        }
                    }
                    // Whole segments while a whole one is left to send, the tail at once:
                    // smoltcp counts its congestion window in bytes and, unheld, would send
                    // each few bytes the window grows by (MSS²/cwnd an ACK in congestion
                    // avoidance, ~13 bytes at 160 KB) as a segment of its own, where a
                    // stack that counts segments (Linux) waits for a whole one. Nagle's
                    // rule holds a part segment while data is in flight.
                    let mss = u64::from(c.tcp.ip_mtu.saturating_sub(40));
                    let sent = c.highest.map_or(0, |h| u64::from(h.saturating_sub(1)));
                    let unsent = (c.given - c.unwritten).saturating_sub(sent);
                    s.set_nagle_enabled(unsent >= mss);
                }
                Role::Receiver => {
                    while s.can_recv() {
                        match s.recv(|b| (b.len(), b.len())) {
                            Ok(0) | Err(_) => break,
                            Ok(k) => {
                                c.stats.delivered_bytes += k as u64;
                                moved = true;
                            }
                        }
                    }
                    if c.stats.done.is_none() && c.stats.delivered_bytes >= c.tcp.size {
                        c.stats.done = Some(now);
                    }
                }
            }
        }
        moved
    }

    /// When smoltcp next needs polling (a timer, a sender's start), if ever.
    pub fn poll_at(&mut self, now: Time) -> Option<Time> {
        let starts = self.conns.iter().filter_map(|c| c.connect_at).min();
        let timer = self
            .iface
            .poll_at(instant(now), &self.sockets)
            // Its clock ticks in µs: never ask again within the same µs.
            .map(|i| time(i).max(Time(now.as_ps() / 1_000_000 * 1_000_000 + 1_000_000)));
        match (starts, timer) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// The next IP packet smoltcp sent (None when there is none), with the flow it
    /// belongs to (None: no flow of this host) and whether it goes the sender's way.
    pub fn take(&mut self, now: Time) -> Option<(Vec<u8>, Option<Outgoing<'_>>)> {
        let ip = self.wire.tx.pop_front()?;
        let Some((sport, seq, data, space)) = segment(&ip) else {
            return Some((ip, None));
        };
        let Some(c) = self.conns.iter_mut().find(|c| c.port == sport) else {
            return Some((ip, None));
        };
        if c.role == Role::Sender {
            c.note_sent(seq, data, space, now);
        }
        let sender = c.role == Role::Sender;
        Some((ip, Some((&c.spec, &c.tcp, sender))))
    }
}

impl Conn {
    /// A segment from `seq` with `payload` data bytes, taking `space` sequence numbers
    /// (SYN and FIN one each), left at `now`.
    fn note_sent(&mut self, seq: u32, payload: u32, space: u32, now: Time) {
        let isn = *self.isn.get_or_insert(seq);
        if payload == 0 {
            return;
        }
        self.stats.segments += 1;
        let end = seq.wrapping_sub(isn).wrapping_add(space);
        match self.highest {
            Some(h) if end <= h => {
                self.stats.retransmitted_segments += 1;
                self.stats.retransmitted_bytes += payload as u64;
                // Karn: nothing sent again is timed.
                self.timed.retain(|(e, _)| *e > end);
            }
            _ => {
                self.highest = Some(end);
                if self.timed.len() < TIMED {
                    self.timed.push_back((end, now));
                }
            }
        }
    }
}

impl TcpStack {
    /// An arriving segment's ACK gives RTT samples of the segments it covers.
    fn note_acks(&mut self, ip: &[u8], now: Time) {
        let Some((ack, dport)) = ack_of(ip) else {
            return;
        };
        let Some(c) = self
            .conns
            .iter_mut()
            .find(|c| c.role == Role::Sender && c.port == dport)
        else {
            return;
        };
        let Some(isn) = c.isn else { return };
        let acked = ack.wrapping_sub(isn);
        while let Some((end, sent)) = c.timed.front().copied() {
            if end > acked {
                break;
            }
            c.timed.pop_front();
            if c.stats.rtt.len() < RTT_SAMPLES {
                c.stats.rtt.push((now - sent).as_ps());
            }
        }
    }
}

/// Source port, sequence number, payload length and sequence space of an IPv4 TCP packet.
fn segment(ip: &[u8]) -> Option<(u16, u32, u32, u32)> {
    let ihl = ((*ip.first()? & 0x0f) as usize) * 4;
    let total = u16::from_be_bytes([*ip.get(2)?, *ip.get(3)?]) as usize;
    let t = ip.get(ihl..)?;
    let sport = u16::from_be_bytes([*t.first()?, *t.get(1)?]);
    let seq = u32::from_be_bytes(t.get(4..8)?.try_into().ok()?);
    let doff = ((*t.get(12)? >> 4) as usize) * 4;
    let flags = *t.get(13)?;
    // SYN and FIN take a sequence number each.
    let extra = u32::from(flags & 0x02 != 0) + u32::from(flags & 0x01 != 0);
    let payload = total.saturating_sub(ihl + doff) as u32;
    Some((sport, seq, payload, payload + extra))
}

/// The ACK number and destination port of an IPv4 TCP packet with ACK set.
fn ack_of(ip: &[u8]) -> Option<(u32, u16)> {
    let ihl = ((*ip.first()? & 0x0f) as usize) * 4;
    let t = ip.get(ihl..)?;
    let dport = u16::from_be_bytes([*t.get(2)?, *t.get(3)?]);
    let ack = u32::from_be_bytes(t.get(8..12)?.try_into().ok()?);
    (*t.get(13)? & 0x10 != 0).then_some((ack, dport))
}

/// Wrap the IP packet `ip` in Ethernet into `buf`: `(src, dst)` MACs, an 802.1Q tag with
/// `vlan` (VID, PCP) if any, and `dscp` written into the IPv4 header (smoltcp sends DSCP 0).
pub fn frame(
    buf: &mut Vec<u8>,
    (src, dst): ([u8; 6], [u8; 6]),
    vlan: Option<(u16, u8)>,
    dscp: u8,
    ip: &[u8],
) {
    buf.clear();
    buf.extend_from_slice(&dst);
    buf.extend_from_slice(&src);
    if let Some((vid, pcp)) = vlan {
        buf.extend_from_slice(&[0x81, 0x00]);
        buf.extend_from_slice(&((u16::from(pcp) << 13) | (vid & 0x0fff)).to_be_bytes());
    }
    buf.extend_from_slice(&[0x08, 0x00]);
    let at = buf.len();
    buf.extend_from_slice(ip);
    if ip.len() >= 20 {
        edit::ipv4_set_dscp(&mut buf[at..], dscp);
    }
}

/// The IP packet inside an Ethernet frame (after any VLAN tags).
pub fn ip_of(frame: &[u8]) -> &[u8] {
    let mut at = vlan::ETHERTYPE_AT;
    while let Some(t) = frame.get(at..at + 2) {
        if !vlan::is_tpid(u16::from_be_bytes([t[0], t[1]])) {
            break;
        }
        at += vlan::TAG_LEN;
    }
    frame.get(at + 2..).unwrap_or(&[])
}
