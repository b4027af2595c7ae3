//! `lossless send-pfc`: 802.1Qbb frames out of an interface, by hand.

use super::args::duration;
use clap::Args;
use std::process::ExitCode;
use std::time::Duration;

#[derive(Args)]
pub struct SendPfcArgs {
    /// Interface to send on.
    #[arg(long)]
    iface: String,
    /// Priorities to pause, e.g. 3 or 3,4.
    #[arg(long, value_delimiter = ',', required = true, value_parser = clap::value_parser!(u8).range(0..8))]
    prio: Vec<u8>,
    /// Pause time in quanta (512 bit times each); 0 sends XON.
    #[arg(long, default_value_t = 65535)]
    quanta: u16,
    /// Frames to send.
    #[arg(long, default_value_t = 1)]
    count: u64,
    /// Time between frames (e.g. 100us).
    #[arg(long, value_parser = duration, default_value = "1ms")]
    interval: Duration,
}

pub fn exec(a: SendPfcArgs) -> ExitCode {
    let prios = a.prio.iter().fold(0u8, |m, p| m | 1 << p);
    match crate::tools::send_pfc::send_pfc(&a.iface, prios, a.quanta, a.count, a.interval) {
        Ok(n) => {
            super::args::print_out(&format!(
                "sent {n} PFC frame(s) on {}: priorities {:?}, {} quanta\n",
                a.iface, a.prio, a.quanta
            ));
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("error: {}: {e}", a.iface);
            ExitCode::FAILURE
        }
    }
}
