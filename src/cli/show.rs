//! `lossless show`: SONiC's tables from a running `lossless tap --metrics ADDR`.

use super::args::print_out;
use crate::report::text::Table;
use clap::Args;
use std::process::ExitCode;

#[derive(Args)]
pub struct ShowArgs {
    /// Which table: pfc (pfcstat), queue (queuestat), watermark (watermarkstat: PGs and
    /// pools), cbfc (credit updates per port, credits per virtual channel), llr (link-level
    /// retry per port), trim (packet trimming per port and queue), ledger (the TAP
    /// engine's frames read and written per port) or p4 (a P4 switch's tables with their
    /// entries, hits and misses, its counters and registers).
    #[arg(value_enum)]
    table: Table,
    /// Address the switch serves its counters on (its --metrics).
    #[arg(long, value_name = "ADDR", default_value = "127.0.0.1:9464")]
    from: std::net::SocketAddr,
}

pub fn exec(a: ShowArgs) -> ExitCode {
    let name = clap::ValueEnum::to_possible_value(&a.table).expect("every table has a name");
    match crate::tap::metrics::get(a.from, &format!("/show/{}", name.get_name())) {
        Ok(body) => {
            print_out(&body);
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}
