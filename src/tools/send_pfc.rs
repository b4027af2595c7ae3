//! `lossless send-pfc`: 802.1Qbb frames out of an interface, by hand.

use lossless_pipeline::wire::pfc::emit_pfc;
use lossless_sys::netdev::if_mac;
use lossless_sys::packet::PacketSocket;
use std::io;
use std::time::Duration;

/// Send `count` PFC frames on `iface`, `interval` apart, pausing `prios` for `quanta`
/// (0 = XON). Returns how many were sent.
pub fn send_pfc(
    iface: &str,
    prios: u8,
    quanta: u16,
    count: u64,
    interval: Duration,
) -> io::Result<u64> {
    let sock = PacketSocket::open(iface)?;
    let src = if_mac(iface)?;
    let q: [u16; 8] = core::array::from_fn(|p| if prios & (1 << p) != 0 { quanta } else { 0 });
    let mut frame = Vec::new();
    emit_pfc(&mut frame, src, prios, &q);
    let mut sent = 0;
    for i in 0..count {
        if i > 0 && !interval.is_zero() {
            std::thread::sleep(interval);
        }
        sock.send(&frame)?;
        sent += 1;
    }
    Ok(sent)
}
