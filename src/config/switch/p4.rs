//! `p4:` of a switch: its P4 program (p4c's BMv2 JSON for v1model) read, loaded and given
//! its table entries, each file relative to the scenario's; every error names the file
//! and the place in it (docs/p4.md).

use crate::config::diag::{Diag, Diags, Key};
use crate::config::schema::{P4Raw, SwitchRaw, Val};
use crate::config::values::line;
use lossless_p4::V1Model;
use lossless_pipeline::p4::{DepthUnit, P4Spec};
use std::path::{Path, PathBuf};
use std::sync::Arc;

type Result<T> = std::result::Result<T, Diag>;

/// `p` relative to the scenario file's directory.
fn beside(d: &Diags, p: &str) -> PathBuf {
    Path::new(d.file).parent().unwrap_or(Path::new("")).join(p)
}

/// The switch's program, if it names one. A P4 switch forwards as its program says:
/// `forwarding` and `acl` would be unused, and are refused.
pub fn resolve(d: &Diags, sw: &Key, raw: &SwitchRaw) -> Result<Option<P4Spec>> {
    let Some(r) = &raw.p4 else {
        return Ok(None);
    };
    let k = sw.at("p4");
    for (given, what) in [
        (raw.forwarding.as_ref().and_then(line), "forwarding"),
        (raw.acl.as_ref().and_then(line), "acl"),
    ] {
        if let Some(at) = given {
            return d.error(
                Some(at),
                &sw.at(what),
                format!("the switch runs a P4 program (`p4:`), which forwards and filters: `{what}` would be unused; leave one of the two out"),
            );
        }
    }
    let model = load(d, &k, &r.value)?;
    let depth_unit = d
        .opt_word(&r.value.queue_depth, &k.at("queue_depth"))?
        .unwrap_or(DepthUnit::Packets);
    Ok(Some(P4Spec {
        model: Arc::new(model),
        file: r.value.program.value.clone(),
        depth_unit,
    }))
}

/// The program and its entries.
fn load(d: &Diags, k: &Key, r: &P4Raw) -> Result<V1Model> {
    let text = |v: &Val<String>, key: &Key| -> Result<String> {
        let path = beside(d, &v.value);
        crate::config::input::read_text(&path)
            .or_else(|e| d.error(line(v), key, format!("{}: {e}", path.display())))
    };
    let program_key = k.at("program");
    let json = text(&r.program, &program_key)?;
    let shown = beside(d, &r.program.value).display().to_string();
    let mut model =
        program(&shown, &json).or_else(|e| d.error(line(&r.program), &program_key, e))?;
    if let Some(e) = &r.entries {
        let key = k.at("entries");
        let body = text(e, &key)?;
        let shown = beside(d, &e.value).display().to_string();
        add_entries(&mut model, &shown, &body).or_else(|x| d.error(line(e), &key, x))?;
    }
    Ok(model)
}

/// A program from its BMv2 JSON `json` (read from `shown`), with no entries but its own.
fn program(shown: &str, json: &str) -> std::result::Result<V1Model, String> {
    lossless_p4::load(json)
        .map(V1Model::new)
        .map_err(|e| format!("{shown}: {e}"))
}

/// The entries of file `shown` (`simple_switch_CLI` commands, or a runtime JSON when its
/// name ends in `.json`) given to `model`'s tables and registers.
fn add_entries(model: &mut V1Model, shown: &str, body: &str) -> std::result::Result<(), String> {
    let commands = if shown.ends_with(".json") {
        lossless_p4::entries::runtime_json(&model.program, shown, body)
    } else {
        lossless_p4::entries::cli(&model.program, shown, body)
    };
    commands
        .and_then(|c| {
            lossless_p4::entries::apply(
                &model.program,
                &mut model.tables,
                &mut model.externs.registers,
                c,
            )
        })
        .map_err(|x| x.to_string())
}

/// A program file and, if given, its entries file, read and loaded (what `lossless bench
/// pipeline --p4` runs); the error names the file and the place in it.
pub fn load_files(
    program_file: &Path,
    entries: Option<&Path>,
) -> std::result::Result<V1Model, String> {
    let read =
        |p: &Path| crate::config::input::read_text(p).map_err(|e| format!("{}: {e}", p.display()));
    let mut model = program(&program_file.display().to_string(), &read(program_file)?)?;
    if let Some(e) = entries {
        add_entries(&mut model, &e.display().to_string(), &read(e)?)?;
    }
    Ok(model)
}
