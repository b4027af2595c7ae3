//! pcap capture of a port, as a tap on the wire would see it: frames in both directions,
//! `orig_len = len − 4` (no FCS) and `incl_len` = the bytes held, cut at `snaplen`, so a
//! headers-only simulated frame looks exactly like a snaplen-limited capture. Timestamps are
//! nanoseconds (pcap magic 0xa1b23c4d).
//!
//! The file header announces libpcap's default snaplen (262144), an upper bound of every
//! record's `incl_len`; records are cut at the configured snaplen. (pcap-file 2's reader
//! rejects a record whose `orig_len` exceeds the header's snaplen, although libpcap and
//! Wireshark accept it; announcing the maximum keeps our files readable by both.)

use crate::output::OutputFile;
use lossless_buffer_model::Time;
use lossless_pipeline::Packet;
use pcap_file::pcap::{PcapHeader, PcapPacket, PcapWriter};
use pcap_file::PcapError;
use pcap_file::{DataLink, Endianness, TsResolution};
use std::io;
use std::path::Path;
use std::time::Duration;

/// Snaplen written in the file header (libpcap's default maximum).
const HEADER_SNAPLEN: u32 = 262_144;

/// A pcap file being written for one port.
pub struct Capture {
    writer: PcapWriter<OutputFile>,
    snaplen: u32,
    /// Frames written.
    pub frames: u64,
}

impl Capture {
    /// Create `path` (its directory must exist) with a nanosecond Ethernet header; the file
    /// takes its name at [`Capture::finish`] ([`OutputFile`]).
    pub fn create(path: &Path, snaplen: u32) -> io::Result<Capture> {
        let header = PcapHeader {
            version_major: 2,
            version_minor: 4,
            ts_correction: 0,
            ts_accuracy: 0,
            snaplen: HEADER_SNAPLEN,
            datalink: DataLink::ETHERNET,
            ts_resolution: TsResolution::NanoSecond,
            endianness: Endianness::native(),
        };
        let writer =
            PcapWriter::with_header(OutputFile::create(path)?, header).map_err(io_error)?;
        Ok(Capture {
            writer,
            snaplen,
            frames: 0,
        })
    }

    /// Record `pkt` as seen on the wire at `t` (virtual time since the run began).
    pub fn record(&mut self, t: Time, pkt: &Packet) -> io::Result<()> {
        let held = pkt.data.len().min(self.snaplen as usize);
        let ts = Duration::from_nanos(t.as_ps() / 1_000);
        let orig = pkt.len.saturating_sub(4).max(held as u32);
        let rec = PcapPacket::new(ts, orig, &pkt.data[..held]);
        self.writer.write_packet(&rec).map_err(io_error)?;
        self.frames += 1;
        Ok(())
    }

    /// Flush to disk; the file takes its name.
    pub fn finish(self) -> io::Result<()> {
        self.writer.into_writer().commit()
    }
}

/// The I/O error under a pcap error (whose own text, "Error reading bytes", would hide a
/// full disk).
fn io_error(e: PcapError) -> io::Error {
    match e {
        PcapError::IoError(e) => e,
        other => io::Error::other(other),
    }
}
