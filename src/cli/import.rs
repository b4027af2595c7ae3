//! `lossless import sonic`: a SONiC config_db.json as a scenario file.

use super::args::print_out;
use crate::config::sonic::{self, yaml::to_yaml, Options};
use clap::{Args, Subcommand};
use lossless_buffer_model::asic::Asic;
use lossless_buffer_model::Named;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Args)]
pub struct ImportArgs {
    #[command(subcommand)]
    format: Format,
}

#[derive(Subcommand)]
enum Format {
    /// A SONiC config_db.json (traditional buffer model): PORT, CABLE_LENGTH, BUFFER_POOL,
    /// BUFFER_PROFILE, BUFFER_PG, BUFFER_QUEUE, PORT_QOS_MAP and its maps, QUEUE,
    /// SCHEDULER, WRED_PROFILE, PFC_WD, ACL_TABLE/ACL_RULE and DEVICE_METADATA (the HWSKU
    /// names the chip: buffer.asic).
    ///
    /// Writes one switch as a scenario file (stdout, or -o). SONiC's port MTU is the IP
    /// MTU: the switch's largest frame is 22 bytes more (Ethernet header, a VLAN tag, FCS),
    /// as orchagent programs it. The model keeps one set of QoS maps and one scheduler per
    /// switch: the first port's, with a warning naming ports that differ. Everything in
    /// the file the model does not use is listed in one warning. The same file can be used
    /// directly: `switches: [{name: leaf, sonic: config_db.json}]`.
    Sonic(SonicArgs),
}

#[derive(Args)]
struct SonicArgs {
    /// The config_db.json.
    file: PathBuf,
    /// Ports to import, by SONiC name, comma-separated (default: every port of PORT, at
    /// most 256).
    #[arg(long, value_delimiter = ',', value_name = "PORT,…")]
    ports: Option<Vec<String>>,
    /// Write the scenario here instead of stdout.
    #[arg(short, long, value_name = "FILE")]
    output: Option<PathBuf>,
    /// The switch's name (default: DEVICE_METADATA's hostname, else `switch`).
    #[arg(long)]
    name: Option<String>,
    /// The chip (trident2, tomahawk, tomahawk2, tomahawk3, trident3, spectrum, spectrum2,
    /// spectrum3, generic) instead of the one the HWSKU names.
    #[arg(long, value_parser = asic)]
    asic: Option<Asic>,
    /// Serve the ports as TAP devices PREFIX0, PREFIX1, … (for `lossless tap`).
    #[arg(long, value_name = "PREFIX")]
    tap_prefix: Option<String>,
    /// The SKU's pg_profile_lookup.ini (in sonic-buildimage's device/<vendor>/<platform>/<SKU>/).
    /// A config_db.json saved before buffermgrd ran has no lossless BUFFER_PG entries: on
    /// the switch buffermgrd adds, for each port with PFC, the profile
    /// pg_lossless_<speed>_<cable>_profile from the row of the port's speed and cable
    /// length, and the entry <port>|3-4 naming it. This does the same.
    #[arg(long, value_name = "FILE")]
    pg_profile_lookup: Option<PathBuf>,
}

fn asic(s: &str) -> Result<Asic, String> {
    Asic::from_word(s).map_err(|e| format!("`{}` is not one of {}", e.input, e.expected))
}

pub fn exec(a: ImportArgs) -> ExitCode {
    match a.format {
        Format::Sonic(s) => sonic_cmd(s),
    }
}

/// A name fit for `switch:Port` references.
fn usable(name: &str) -> bool {
    !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
}

fn sonic_cmd(a: SonicArgs) -> ExitCode {
    let shown = a.file.display().to_string();
    let text = match crate::config::input::read_text(&a.file) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("error: {shown}: {e}");
            return ExitCode::FAILURE;
        }
    };
    let hostname = sonic::db::parse(&shown, &text)
        .ok()
        .and_then(|p| p.db.device_metadata)
        .and_then(|t| {
            t.value
                .get("localhost")
                .and_then(|l| l.value.get("hostname"))
                .map(|h| h.value.text())
        })
        .filter(|h| usable(h));
    let named_by_hostname = a.name.is_none() && hostname.is_some();
    let pg_profile_lookup = match &a.pg_profile_lookup {
        Some(p) => {
            let shown = p.display().to_string();
            let parsed = crate::config::input::read_text(p)
                .map_err(|e| format!("{shown}: {e}"))
                .and_then(|t| {
                    sonic::pg_lookup::PgLookup::parse(&shown, &t).map_err(|e| e.to_string())
                });
            match parsed {
                Ok(l) => Some(l),
                Err(e) => {
                    eprintln!("error: {e}");
                    return ExitCode::FAILURE;
                }
            }
        }
        None => None,
    };
    let opts = Options {
        named_by_hostname,
        name: a
            .name
            .clone()
            .or(hostname)
            .unwrap_or_else(|| "switch".into()),
        ports: a.ports.clone(),
        tap_prefix: a.tap_prefix.clone(),
        asic: a.asic,
        pg_profile_lookup,
    };
    let imported = match sonic::import(&shown, &text, &opts) {
        Ok(i) => i,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::FAILURE;
        }
    };
    for w in &imported.warnings {
        eprintln!("warning: {w}");
    }
    let stem = a
        .file
        .file_stem()
        .map_or("sonic".into(), |s| s.to_string_lossy().into_owned());
    let scenario = serde_json::json!({
        "name": stem,
        "switches": [serde_json::to_value(&imported.switch).expect("the schema serializes")],
    });
    let yaml = format!(
        "# Imported from {shown} by `lossless import sonic` (lossless {}):\n# {}.\n\
         # Check it with `lossless check`; every key is in docs/scenario.md.\n{}",
        env!("CARGO_PKG_VERSION"),
        imported.describe(),
        to_yaml(&scenario, 0)
    );
    // What is written must load: the switch resolved as a scenario naming the config_db
    // with `sonic:` would be, so that an error names the config_db's file, line and key
    // (the YAML is not written when it fails).
    if let Err(e) = resolve_from_config_db(&a.file, a.pg_profile_lookup.as_deref(), &opts) {
        eprintln!("error: the imported switch does not resolve: {e}");
        return ExitCode::FAILURE;
    }
    // And the YAML written reads back the same way.
    let out_name = a
        .output
        .as_ref()
        .map_or("(stdout)".to_string(), |p| p.display().to_string());
    if let Err(e) = crate::config::parse(&out_name, &stem, &yaml) {
        eprintln!("error: the imported switch does not resolve: {e}");
        return ExitCode::FAILURE;
    }
    match &a.output {
        Some(p) => {
            if let Err(e) = lossless_sys::output::write_whole(p, yaml.as_bytes()) {
                eprintln!("error: {e}");
                return ExitCode::FAILURE;
            }
            eprintln!("wrote {} ({})", p.display(), imported.describe());
        }
        None => print_out(&yaml),
    }
    ExitCode::SUCCESS
}

/// Resolve the switch of config_db `file` as a scenario that names it with `sonic:` would:
/// errors carry the config_db's lines.
fn resolve_from_config_db(
    file: &std::path::Path,
    pg_profile_lookup: Option<&std::path::Path>,
    opts: &Options,
) -> Result<(), crate::config::ConfigError> {
    let absolute = |p: &std::path::Path| {
        std::fs::canonicalize(p)
            .unwrap_or_else(|_| p.to_path_buf())
            .display()
            .to_string()
    };
    let mut sonic = serde_json::json!({ "file": absolute(file) });
    if let Some(l) = pg_profile_lookup {
        sonic["pg_profile_lookup"] = serde_json::json!(absolute(l));
    }
    if let Some(ports) = &opts.ports {
        sonic["ports"] = serde_json::json!(ports);
    }
    if let Some(p) = &opts.tap_prefix {
        sonic["tap_prefix"] = serde_json::json!(p);
    }
    if let Some(asic) = opts.asic {
        sonic["asic"] = serde_json::json!(lossless_buffer_model::Named::word(asic));
    }
    let scenario = serde_json::json!({"switches": [{"name": opts.name, "sonic": sonic}]});
    let shown = file.display().to_string();
    crate::config::parse(&shown, "sonic", &scenario.to_string()).map(|_| ())
}
