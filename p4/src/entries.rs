//! The control plane's entries, in the two forms P4 users write them: BMv2's
//! `simple_switch_CLI` commands (`table_add ipv4_lpm ipv4_forward 10.0.1.1/32 =>
//! 08:00:00:00:01:11 1`) and the runtime JSON of the P4 tutorials (`table_entries` with
//! match fields and action parameters by name). Each is checked against the program; an
//! error names the line (or JSON path), the table, the key field or parameter, and the rule
//! broken.

use crate::program::{mask, ActionCall, ActionId, MatchKind, Program, TableId, Value};
use crate::tables::{Entry, EntryError, KeyMatch, Tables, Target};
use serde_json::Value as Json;

/// What a control-plane command does to a switch.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Command {
    /// Add an entry to a table.
    Add(TableId, Entry),
    /// Set a table's default action (or an indirect table's default member or group).
    SetDefault(TableId, Target),
    /// Create a member of an action profile (its handle is the next one: 0, 1, …).
    CreateMember(usize, ActionCall),
    /// Create a group of an action selector (its handle is the next one: 0, 1, …).
    CreateGroup(usize),
    /// Add member (the 2nd) to group (the 3rd) of an action profile.
    AddToGroup(usize, u32, u32),
    /// Write a register cell: array, index, value.
    RegisterWrite(usize, usize, Value),
}

/// A refused command: where (`entries.txt:12`, `table_entries[3]`) and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CommandError {
    pub at: String,
    pub message: String,
}

impl std::fmt::Display for CommandError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.at, self.message)
    }
}

impl std::error::Error for CommandError {}

/// Apply `commands` to `tables` and `registers` of `p`, in order; the first refused
/// one stops it, with its place.
pub fn apply(
    p: &Program,
    tables: &mut Tables,
    registers: &mut [Vec<Value>],
    commands: Vec<(String, Command)>,
) -> Result<(), CommandError> {
    for (at, c) in commands {
        let r = match c {
            Command::Add(t, e) => tables.add(p, t, e),
            Command::SetDefault(t, target) => tables.set_default(p, t, target),
            Command::CreateMember(prof, call) => tables.create_member(p, prof, call).map(|_| ()),
            Command::CreateGroup(prof) => tables.create_group(p, prof).map(|_| ()),
            Command::AddToGroup(prof, m, g) => tables.add_to_group(p, prof, m, g),
            Command::RegisterWrite(r, i, v) => match registers[r].get_mut(i) {
                Some(cell) => {
                    *cell = v & mask(p.registers[r].width);
                    Ok(())
                }
                None => Err(EntryError(format!(
                    "register {} has {} cells: index {i} is past its end",
                    p.registers[r].name, p.registers[r].size
                ))),
            },
        };
        r.map_err(|e| CommandError {
            at,
            message: e.to_string(),
        })?;
    }
    Ok(())
}

/// A value as the control plane writes one for a `width`-bit field: decimal, `0x` hex,
/// an IPv4 address (`10.0.1.1`), a MAC address (`08:00:00:00:01:11`) or an IPv6 address.
pub fn value(text: &str, width: u32) -> Result<Value, String> {
    let t = text.trim();
    let v = if let Some(h) = t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
        u128::from_str_radix(h, 16).map_err(|_| format!("`{t}` is not a hex number"))?
    } else if let Ok(a) = t.parse::<std::net::Ipv4Addr>() {
        u32::from(a) as Value
    } else if let Ok(a) = t.parse::<std::net::Ipv6Addr>() {
        u128::from(a)
    } else if t.len() == 17 && t.split(':').count() == 6 {
        let mut v: Value = 0;
        for b in t.split(':') {
            let b = u8::from_str_radix(b, 16).map_err(|_| format!("`{t}` is not a MAC address"))?;
            v = (v << 8) | b as Value;
        }
        v
    } else {
        t.parse::<u128>()
            .map_err(|_| format!("`{t}` is not a number, an IPv4, IPv6 or MAC address"))?
    };
    if v & !mask(width) != 0 {
        return Err(format!("{t} does not fit {width} bits"));
    }
    Ok(v)
}

/// Names in a list, as errors give the choices.
fn listed<'a>(names: impl Iterator<Item = &'a str>) -> String {
    names.collect::<Vec<_>>().join(", ")
}

/// The names of `actions`, listed.
fn action_names(p: &Program, actions: &[ActionId]) -> String {
    listed(
        actions
            .iter()
            .map(|a| p.actions[a.0 as usize].name.as_str()),
    )
}

/// The table named `name`, or an error listing the tables.
fn table(p: &Program, name: &str) -> Result<TableId, String> {
    p.table(name).ok_or_else(|| {
        format!(
            "no table `{name}` (tables: {})",
            listed(p.tables.iter().map(|t| t.name.as_str()))
        )
    })
}

/// The action named `name`, or an error listing what table `t` runs.
fn action(p: &Program, t: TableId, name: &str) -> Result<ActionId, String> {
    let table = &p.tables[t.0 as usize];
    match p.action(name) {
        Some(a) if table.actions.contains(&a) => Ok(a),
        _ => Err(format!(
            "table {} has no action `{name}` (it runs {})",
            table.name,
            action_names(p, &table.actions)
        )),
    }
}

/// Action data from words, one per parameter in order.
fn data(p: &Program, a: ActionId, words: &[&str]) -> Result<Vec<Value>, String> {
    let act = &p.actions[a.0 as usize];
    if words.len() != act.params.len() {
        return Err(format!(
            "action {} takes {} parameters ({}), {} given",
            act.name,
            act.params.len(),
            act.param_names.join(", "),
            words.len()
        ));
    }
    words
        .iter()
        .zip(act.params.iter().zip(&act.param_names))
        .map(|(w, (width, name))| value(w, *width).map_err(|e| format!("parameter {name}: {e}")))
        .collect()
}

/// Commands of `simple_switch_CLI` syntax, one a line (`#` starts a comment), from the
/// file shown as `file`.
pub fn cli(p: &Program, file: &str, text: &str) -> Result<Vec<(String, Command)>, CommandError> {
    let mut out = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let at = format!("{file}:{}", n + 1);
        let line = line.split('#').next().unwrap_or("").trim();
        if line.is_empty() {
            continue;
        }
        let c = cli_line(p, line).map_err(|message| CommandError {
            at: at.clone(),
            message,
        })?;
        out.push((at, c));
    }
    Ok(out)
}

/// One command line.
fn cli_line(p: &Program, line: &str) -> Result<Command, String> {
    let words: Vec<&str> = line.split_whitespace().collect();
    match words[0] {
        "table_add" => {
            let (lhs, rhs) = split_arrow(&words, "table_add TABLE ACTION KEY… => DATA… [PRIORITY]")?;
            let [tname, aname, keys @ ..] = lhs else {
                return Err(
                    "table_add TABLE ACTION KEY… => DATA…: table and action missing".into(),
                );
            };
            let t = table(p, tname)?;
            let a = action(p, t, aname)?;
            let (key, priority, rhs) = entry_key(p, t, keys, rhs)?;
            let tbl = &p.tables[t.0 as usize];
            let data = data(p, a, rhs).map_err(|e| format!("table {}: {e}", tbl.name))?;
            Ok(Command::Add(
                t,
                Entry {
                    key,
                    priority,
                    action: Target::Action(ActionCall { action: a, data }),
                },
            ))
        }
        cmd @ ("table_indirect_add" | "table_indirect_add_with_group") => {
            let group = cmd.ends_with("_with_group");
            let usage = if group {
                "table_indirect_add_with_group TABLE KEY… => GROUP [PRIORITY]"
            } else {
                "table_indirect_add TABLE KEY… => MEMBER [PRIORITY]"
            };
            let (lhs, rhs) = split_arrow(&words, usage)?;
            let [tname, keys @ ..] = lhs else {
                return Err(format!("{usage}: table missing"));
            };
            let t = table(p, tname)?;
            let (key, priority, rhs) = entry_key(p, t, keys, rhs)?;
            let [handle] = rhs else {
                return Err(format!("{usage}: one handle after `=>`"));
            };
            Ok(Command::Add(
                t,
                Entry {
                    key,
                    priority,
                    action: target(handle, group)?,
                },
            ))
        }
        cmd @ ("table_indirect_set_default" | "table_indirect_set_default_with_group") => {
            let group = cmd.ends_with("_with_group");
            let [_, tname, handle] = words.as_slice() else {
                return Err(format!("{cmd} TABLE {}", if group { "GROUP" } else { "MEMBER" }));
            };
            let t = table(p, tname)?;
            Ok(Command::SetDefault(t, target(handle, group)?))
        }
        "act_prof_create_member" => {
            let [_, prof, aname, rest @ ..] = words.as_slice() else {
                return Err("act_prof_create_member PROFILE ACTION DATA…".into());
            };
            let k = profile(p, prof)?;
            let a = profile_action(p, k, aname)?;
            let data = data(p, a, rest)
                .map_err(|e| format!("action profile {}: {e}", p.profiles[k].name))?;
            Ok(Command::CreateMember(k, ActionCall { action: a, data }))
        }
        "act_prof_create_group" => {
            let [_, prof] = words.as_slice() else {
                return Err("act_prof_create_group PROFILE".into());
            };
            Ok(Command::CreateGroup(profile(p, prof)?))
        }
        "act_prof_add_member_to_group" => {
            let [_, prof, m, g] = words.as_slice() else {
                return Err("act_prof_add_member_to_group PROFILE MEMBER GROUP".into());
            };
            let k = profile(p, prof)?;
            Ok(Command::AddToGroup(k, handle(m)?, handle(g)?))
        }
        "table_set_default" => {
            let [_, tname, aname, rest @ ..] = words.as_slice() else {
                return Err(
                    "table_set_default TABLE ACTION DATA…: table and action missing".into(),
                );
            };
            let t = table(p, tname)?;
            let a = action(p, t, aname)?;
            let data = data(p, a, rest)
                .map_err(|e| format!("table {}: {e}", p.tables[t.0 as usize].name))?;
            Ok(Command::SetDefault(
                t,
                Target::Action(ActionCall { action: a, data }),
            ))
        }
        "register_write" => {
            let [_, r, i, v] = words.as_slice() else {
                return Err("register_write REGISTER INDEX VALUE".into());
            };
            let Some(k) = p.register(r) else {
                return Err(format!("no register `{r}`"));
            };
            let i = i
                .parse::<usize>()
                .map_err(|_| format!("register index `{i}` is not a number"))?;
            let v = value(v, p.registers[k].width).map_err(|e| format!("register {r}: {e}"))?;
            Ok(Command::RegisterWrite(k, i, v))
        }
        other => Err(format!(
            "`{other}` is not supported (table_add, table_set_default, table_indirect_add, table_indirect_add_with_group, table_indirect_set_default, table_indirect_set_default_with_group, act_prof_create_member, act_prof_create_group, act_prof_add_member_to_group and register_write are)"
        )),
    }
}

/// The words before and after `=>`.
fn split_arrow<'a, 'b>(
    words: &'a [&'b str],
    usage: &str,
) -> Result<(&'a [&'b str], &'a [&'b str]), String> {
    match words.iter().position(|w| *w == "=>") {
        Some(i) => Ok((&words[1..i], &words[i + 1..])),
        None => Err(format!("{usage}: no `=>`")),
    }
}

/// An entry's key from `keys` for table `t`, and its priority: the last word of `rhs`
/// when the key has a ternary, range or optional field (the rest of `rhs` returned).
fn entry_key<'a, 'b>(
    p: &Program,
    t: TableId,
    keys: &[&str],
    rhs: &'a [&'b str],
) -> Result<(Vec<KeyMatch>, i64, &'a [&'b str]), String> {
    let tbl = &p.tables[t.0 as usize];
    if keys.len() != tbl.key.len() {
        return Err(format!(
            "table {} has {} key fields ({}), {} given",
            tbl.name,
            tbl.key.len(),
            tbl.key
                .iter()
                .map(|k| k.name.as_str())
                .collect::<Vec<_>>()
                .join(", "),
            keys.len()
        ));
    }
    let mut key = Vec::new();
    for (w, k) in keys.iter().zip(&tbl.key) {
        key.push(
            cli_match(w, k.kind, k.width)
                .map_err(|e| format!("table {}, key {}: {e}", tbl.name, k.name))?,
        );
    }
    let needs_priority = key.iter().any(|m| {
        matches!(
            m,
            KeyMatch::Ternary(..) | KeyMatch::Range(..) | KeyMatch::Optional(_)
        )
    });
    if !needs_priority {
        return Ok((key, 0, rhs));
    }
    match rhs.split_last() {
        Some((pr, rest)) => {
            let priority = pr.parse::<i64>().map_err(|_| {
                format!(
                    "table {}: a ternary or range entry ends with its priority (lower wins), not `{pr}`",
                    tbl.name
                )
            })?;
            Ok((key, priority, rest))
        }
        None => Err(format!(
            "table {}: a ternary or range entry needs a priority",
            tbl.name
        )),
    }
}

/// A member or group handle.
fn handle(w: &str) -> Result<u32, String> {
    w.parse::<u32>()
        .map_err(|_| format!("`{w}` is not a member or group handle (0, 1, …)"))
}

/// An indirect entry's target: member or group `w`.
fn target(w: &str, group: bool) -> Result<Target, String> {
    let h = handle(w)?;
    Ok(if group {
        Target::Group(h)
    } else {
        Target::Member(h)
    })
}

/// The action profile named `name`, or an error listing them.
fn profile(p: &Program, name: &str) -> Result<usize, String> {
    p.profile(name).ok_or_else(|| {
        format!(
            "no action profile `{name}` (action profiles: {})",
            listed(p.profiles.iter().map(|a| a.name.as_str()))
        )
    })
}

/// The action named `name` among those of the tables that use profile `k`.
fn profile_action(p: &Program, k: usize, name: &str) -> Result<ActionId, String> {
    let allowed: Vec<ActionId> = p
        .tables
        .iter()
        .filter(|t| t.profile == Some(k as u32))
        .flat_map(|t| t.actions.iter().copied())
        .collect();
    match p.action(name) {
        Some(a) if allowed.contains(&a) => Ok(a),
        _ => Err(format!(
            "action profile {} has no action `{name}` (its tables run {})",
            p.profiles[k].name,
            action_names(p, &allowed)
        )),
    }
}

/// One key field of `table_add`: `V` (exact), `V/LEN` (lpm), `V&&&MASK` (ternary),
/// `LO->HI` (range), `V` or `*` (optional).
fn cli_match(w: &str, kind: MatchKind, width: u32) -> Result<KeyMatch, String> {
    Ok(match kind {
        MatchKind::Exact => KeyMatch::Exact(value(w, width)?),
        MatchKind::Lpm => {
            let (v, len) = w
                .split_once('/')
                .ok_or(format!("an LPM key is VALUE/LENGTH, not `{w}`"))?;
            let len = len
                .parse::<u32>()
                .map_err(|_| format!("`{len}` is not a prefix length"))?;
            if len > width {
                return Err(format!("a /{len} prefix of a {width}-bit field"));
            }
            KeyMatch::Lpm(value(v, width)?, len)
        }
        MatchKind::Ternary => {
            let (v, m) = w
                .split_once("&&&")
                .ok_or(format!("a ternary key is VALUE&&&MASK, not `{w}`"))?;
            KeyMatch::Ternary(value(v, width)?, value(m, width)?)
        }
        MatchKind::Range => {
            let (lo, hi) = w
                .split_once("->")
                .ok_or(format!("a range key is LOW->HIGH, not `{w}`"))?;
            let (lo, hi) = (value(lo, width)?, value(hi, width)?);
            if lo > hi {
                return Err(format!("the range {w} is empty"));
            }
            KeyMatch::Range(lo, hi)
        }
        MatchKind::Optional => match w {
            "*" => KeyMatch::Optional(None),
            v => KeyMatch::Optional(Some(value(v, width)?)),
        },
    })
}

/// The `table_entries` of a P4 tutorials runtime JSON (`s1-runtime.json`), `file` naming
/// it in errors. Priorities there are P4Runtime's (higher wins).
pub fn runtime_json(
    p: &Program,
    file: &str,
    text: &str,
) -> Result<Vec<(String, Command)>, CommandError> {
    let root: Json = serde_json::from_str(text).map_err(|e| CommandError {
        at: format!("{file}:{}", e.line()),
        message: format!("not JSON: {e}"),
    })?;
    let mut out = Vec::new();
    let entries = root.get("table_entries").and_then(Json::as_array);
    for (i, e) in entries.into_iter().flatten().enumerate() {
        let at = format!("{file}: table_entries[{i}]");
        let c = runtime_entry(p, e).map_err(|message| CommandError {
            at: at.clone(),
            message,
        })?;
        out.push((at, c));
    }
    if let Some(m) = root.get("multicast_group_entries").and_then(Json::as_array) {
        if !m.is_empty() {
            return Err(CommandError {
                at: format!("{file}: multicast_group_entries[0]"),
                message: "multicast groups are not supported".into(),
            });
        }
    }
    Ok(out)
}

/// One entry of `table_entries`.
fn runtime_entry(p: &Program, e: &Json) -> Result<Command, String> {
    let s = |k: &str| {
        e.get(k)
            .and_then(Json::as_str)
            .ok_or(format!("`{k}` is missing"))
    };
    let t = table(p, s("table")?)?;
    let tbl = &p.tables[t.0 as usize];
    let a = action(p, t, s("action_name")?)?;
    let act = &p.actions[a.0 as usize];
    let params = e.get("action_params").and_then(Json::as_object);
    let mut data = Vec::new();
    for (name, width) in act.param_names.iter().zip(&act.params) {
        let v = params.and_then(|m| m.get(name)).ok_or(format!(
            "table {}: action {} needs parameter `{name}`",
            tbl.name, act.name
        ))?;
        data.push(
            json_value(v, *width)
                .map_err(|x| format!("table {}, parameter {name}: {x}", tbl.name))?,
        );
    }
    if let Some(extra) = params.and_then(|m| m.keys().find(|k| !act.param_names.contains(k))) {
        return Err(format!(
            "action {} has no parameter `{extra}` (it takes {})",
            act.name,
            act.param_names.join(", ")
        ));
    }
    let call = ActionCall { action: a, data };
    if e.get("default_action").and_then(Json::as_bool) == Some(true) {
        return Ok(Command::SetDefault(t, Target::Action(call)));
    }
    let matches = e.get("match").and_then(Json::as_object);
    let mut key = Vec::new();
    for k in &tbl.key {
        let Some(m) = matches.and_then(|m| m.get(&k.name)) else {
            // A ternary, range or optional field left out matches anything.
            key.push(match k.kind {
                MatchKind::Ternary => KeyMatch::Ternary(0, 0),
                MatchKind::Range => KeyMatch::Range(0, mask(k.width)),
                MatchKind::Optional => KeyMatch::Optional(None),
                _ => {
                    return Err(format!(
                        "table {}: the match needs key field `{}`",
                        tbl.name, k.name
                    ))
                }
            });
            continue;
        };
        let bad = |x: String| format!("table {}, key {}: {x}", tbl.name, k.name);
        let pair = |m: &Json| -> Result<(Value, Value), String> {
            match m.as_array().map(Vec::as_slice) {
                Some([a, b]) => Ok((json_value(a, k.width)?, json_value(b, 128)?)),
                _ => Err(format!("a pair is expected, not {m}")),
            }
        };
        key.push(match k.kind {
            MatchKind::Exact => KeyMatch::Exact(json_value(m, k.width).map_err(bad)?),
            MatchKind::Lpm => {
                let (v, len) = pair(m).map_err(bad)?;
                KeyMatch::Lpm(v, len as u32)
            }
            MatchKind::Ternary => {
                let (v, msk) = pair(m).map_err(bad)?;
                KeyMatch::Ternary(v, msk)
            }
            MatchKind::Range => {
                let (lo, hi) = pair(m).map_err(bad)?;
                KeyMatch::Range(lo, hi)
            }
            MatchKind::Optional => KeyMatch::Optional(Some(json_value(m, k.width).map_err(bad)?)),
        });
    }
    if let Some(extra) =
        matches.and_then(|m| m.keys().find(|n| !tbl.key.iter().any(|k| &k.name == *n)))
    {
        return Err(format!(
            "table {} has no key field `{extra}` (its key: {})",
            tbl.name,
            tbl.key
                .iter()
                .map(|k| k.name.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    // P4Runtime: a higher priority wins; BMv2 ranks lower first.
    let priority = -e.get("priority").and_then(Json::as_i64).unwrap_or(0);
    Ok(Command::Add(
        t,
        Entry {
            key,
            priority,
            action: Target::Action(call),
        },
    ))
}

/// A JSON value (a string in any form [`value`] reads, or a number) for `width` bits.
fn json_value(v: &Json, width: u32) -> Result<Value, String> {
    match v {
        Json::String(s) => value(s, width),
        Json::Number(n) => match n.as_u64() {
            Some(x) => value(&x.to_string(), width),
            None => Err(format!("{n} is not a whole number ≥ 0")),
        },
        other => Err(format!("{other} is not a value")),
    }
}

#[cfg(test)]
mod tests {
    use super::value;

    #[test]
    fn values_read_as_the_cli_writes_them() {
        assert_eq!(value("10.0.1.1", 32), Ok(0x0a00_0101));
        assert_eq!(value("08:00:00:00:01:11", 48), Ok(0x0800_0000_0111));
        assert_eq!(value("0x1ff", 9), Ok(511));
        assert_eq!(value("3", 9), Ok(3));
        assert_eq!(value("::1", 128), Ok(1));
        assert!(value("512", 9).unwrap_err().contains("does not fit 9 bits"));
        assert!(value("banana", 9).is_err());
    }
}
