//! `lossless gen`: a paced, PFC-honouring sender on an interface, with a JSON summary.

use super::args::{duration, print_out, rate};
use super::signals::Signals;
use crate::config::defaults;
use clap::Args;
use lossless_buffer_model::{Named, Rate};
use lossless_pipeline::wire::addr::{Ecn, MacAddr};
use lossless_sys::sched::Realtime;
use std::process::ExitCode;
use std::time::Duration;

#[derive(Args)]
pub struct GenArgs {
    /// Interface to send on.
    #[arg(long)]
    iface: String,
    /// Destination as MAC/IP, e.g. 02:00:00:00:00:02/198.18.0.2.
    #[arg(long, value_parser = destination)]
    dst: (MacAddr, std::net::Ipv4Addr),
    /// Source IPv4 address.
    #[arg(long, default_value = "198.18.0.100")]
    src_ip: std::net::Ipv4Addr,
    /// DSCP of the frames (0–63).
    #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u8).range(0..64))]
    dscp: u8,
    /// ECN field: not_ect, ect0, ect1 or ce.
    #[arg(long, default_value = "not_ect", value_parser = |s: &str| Ecn::from_word(s).map_err(|e| e.to_string()))]
    ecn: Ecn,
    /// PFC priority the traffic is queued on (default: SONiC's map of the DSCP: 3→3, 4→4,
    /// 5→2, 8→0, 46→5, 48→6, else 1).
    #[arg(long, value_parser = clap::value_parser!(u8).range(0..8))]
    priority: Option<u8>,
    /// Offered rate in line-rate bits (frame + 20 bytes of preamble and gap), e.g. 1G.
    #[arg(long, value_parser = rate, default_value = "1G")]
    rate: Rate,
    /// Frame length in bytes, FCS included (64 up to the interface's MTU + 18).
    #[arg(long, default_value_t = defaults::FRAME.get() as u32)]
    frame: u32,
    /// How long to send (e.g. 5s).
    #[arg(long, value_parser = duration, default_value = "5s")]
    duration: Duration,
    /// Send RoCEv2 (BTH on UDP 4791) instead of plain UDP.
    #[arg(long)]
    rocev2: bool,
    /// Speed of the link, to turn pause quanta into time.
    #[arg(long, value_parser = rate, default_value = "1G")]
    link_speed: Rate,
    /// UDP destination port of plain UDP frames.
    #[arg(long, default_value_t = defaults::DST_PORT)]
    dst_port: u16,
    /// Real-time priority (SCHED_FIFO) for the sender: auto (when allowed), on or off.
    #[arg(long, default_value = "auto")]
    realtime: Realtime,
}

/// `MAC/IP`.
fn destination(s: &str) -> Result<(MacAddr, std::net::Ipv4Addr), String> {
    let bad = || format!("`{s}` is not MAC/IP, e.g. 02:00:00:00:00:02/198.18.0.2");
    let (mac, ip) = s.split_once('/').ok_or_else(bad)?;
    let mac = mac.parse::<MacAddr>().map_err(|e| e.to_string())?;
    Ok((mac, ip.parse().map_err(|_| bad())?))
}

pub fn exec(a: GenArgs) -> ExitCode {
    let cfg = crate::tools::gen::GenConfig {
        iface: a.iface.clone(),
        dst_mac: a.dst.0 .0,
        dst_ip: a.dst.1.octets(),
        src_ip: a.src_ip.octets(),
        dscp: a.dscp,
        ecn: a.ecn.bits(),
        priority: a
            .priority
            .unwrap_or(lossless_pipeline::config::sonic_dscp_to_tc()[a.dscp as usize]),
        rate: a.rate,
        frame: a.frame,
        duration: a.duration,
        rocev2: a.rocev2,
        link_speed: a.link_speed,
        dst_port: a.dst_port,
        realtime: a.realtime,
    };
    let stop = match Signals::catch() {
        Ok(s) => s.stop,
        Err(e) => {
            eprintln!("error: cannot handle signals: {e}");
            return ExitCode::FAILURE;
        }
    };
    match crate::tools::gen::gen(&cfg, &stop) {
        Ok(v) => {
            print_out(&(serde_json::to_string_pretty(&v.to_value()).expect("JSON") + "\n"));
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("error: {}: {e}", a.iface);
            ExitCode::FAILURE
        }
    }
}
