//! `lossless`: an emulator of a lossless Ethernet switch ASIC (shared buffer, PFC, ECN).
//! The command line is in `lossless::cli`.

fn main() -> std::process::ExitCode {
    lossless::cli::main()
}
