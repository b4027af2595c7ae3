//! The ingress and egress controls: their tables (keys, actions, defaults, const entries,
//! where control goes after each) and conditionals, as one graph of nodes by index.

use super::{array, boolean, expr, field, hexstr, integer, string, At, Ctx, Result};
use crate::program::{
    mask, Action, ActionCall, ActionId, ActionProfile, Conditional, Control, Expr, KeyField,
    Lookup, MatchKind, NextAfter, NodeId, Selector, Table, TableId,
};
use crate::tables::{Entry, KeyMatch, Target};
use serde_json::Value as Json;
use std::collections::HashMap;

/// What the pipelines hold.
pub(crate) struct Pipelines {
    pub tables: Vec<Table>,
    pub profiles: Vec<ActionProfile>,
    pub conditionals: Vec<Conditional>,
    pub ingress: Control,
    pub egress: Control,
}

/// The `ingress` and `egress` pipelines of the program.
pub(crate) fn load(root: &Json, cx: &Ctx, actions: &[Action]) -> Result<Pipelines> {
    let at = At::default();
    let pipes = array(root, "pipelines", &at)?;
    // Every node's name first: a node may name one defined after it.
    let mut nodes: HashMap<String, NodeId> = HashMap::new();
    let (mut n_tables, mut n_conds) = (0u32, 0u32);
    for (i, p) in pipes.iter().enumerate() {
        let pa = at.key("pipelines").index(i);
        if !array(p, "action_calls", &pa)?.is_empty() {
            return pa
                .key("action_calls")
                .index(0)
                .unsupported("a direct action call");
        }
        for (j, t) in array(p, "tables", &pa)?.iter().enumerate() {
            let name = string(t, "name", &pa.key("tables").index(j))?;
            nodes.insert(name.to_string(), NodeId::Table(TableId(n_tables)));
            n_tables += 1;
        }
        for (j, c) in array(p, "conditionals", &pa)?.iter().enumerate() {
            let name = string(c, "name", &pa.key("conditionals").index(j))?;
            nodes.insert(name.to_string(), NodeId::Conditional(n_conds));
            n_conds += 1;
        }
    }
    let node = |v: Option<&Json>, a: &At| -> Result<Option<NodeId>> {
        match v {
            None | Some(Json::Null) => Ok(None),
            Some(Json::String(n)) => match nodes.get(n) {
                Some(x) => Ok(Some(*x)),
                None => a.err(format!("no table or conditional `{n}`")),
            },
            Some(other) => a.err(format!("a node name or null is expected, not {other}")),
        }
    };
    // Every pipeline's action profiles first: tables name them.
    let mut profiles = Vec::new();
    for (i, p) in pipes.iter().enumerate() {
        let pa = at.key("pipelines").index(i).key("action_profiles");
        for (j, ap) in array(p, "action_profiles", &at.key("pipelines").index(i))?
            .iter()
            .enumerate()
        {
            profiles.push(profile(ap, cx, &pa.index(j))?);
        }
    }
    let mut tables = Vec::new();
    let mut conditionals = Vec::new();
    let mut ingress = None;
    let mut egress = None;
    for (i, p) in pipes.iter().enumerate() {
        let pa = at.key("pipelines").index(i);
        let name = string(p, "name", &pa)?.to_string();
        for (j, t) in array(p, "tables", &pa)?.iter().enumerate() {
            tables.push(table(
                t,
                cx,
                actions,
                &profiles,
                &node,
                &pa.key("tables").index(j),
            )?);
        }
        for (j, c) in array(p, "conditionals", &pa)?.iter().enumerate() {
            let ca = pa.key("conditionals").index(j);
            conditionals.push(Conditional {
                name: string(c, "name", &ca)?.to_string(),
                expr: expr::load(field(c, "expression", &ca)?, cx, &ca.key("expression"))?,
                on_true: node(c.get("true_next"), &ca.key("true_next"))?,
                on_false: node(c.get("false_next"), &ca.key("false_next"))?,
            });
        }
        let control = Control {
            first: node(p.get("init_table"), &pa.key("init_table"))?,
            name: name.clone(),
        };
        match name.as_str() {
            "ingress" => ingress = Some(control),
            "egress" => egress = Some(control),
            other => {
                return pa.unsupported(format!(
                    "pipeline `{other}` (v1model has `ingress` and `egress`)"
                ))
            }
        }
    }
    let missing = |n: &str| at.key("pipelines").err(format!("no `{n}` pipeline"));
    Ok(Pipelines {
        tables,
        profiles,
        conditionals,
        ingress: match ingress {
            Some(c) => c,
            None => return missing("ingress"),
        },
        egress: match egress {
            Some(c) => c,
            None => return missing("egress"),
        },
    })
}

type NodeOf<'a> = dyn Fn(Option<&Json>, &At) -> Result<Option<NodeId>> + 'a;

/// One action profile, with its selector if it has one.
fn profile(ap: &Json, cx: &Ctx, at: &At) -> Result<ActionProfile> {
    let name = string(ap, "name", at)?.to_string();
    let max_size = ap.get("max_size").and_then(Json::as_u64).unwrap_or(1024) as usize;
    let selector = match ap.get("selector") {
        None | Some(Json::Null) => None,
        Some(sel) => {
            let sa = at.key("selector");
            Some(Selector {
                algo: super::algo(string(sel, "algo", &sa)?, &sa.key("algo"))?,
                inputs: super::hash_inputs(array(sel, "input", &sa)?, cx, &sa.key("input"))?,
            })
        }
    };
    Ok(ActionProfile {
        name,
        max_size,
        selector,
    })
}

/// One table.
fn table(
    t: &Json,
    cx: &Ctx,
    actions: &[Action],
    profiles: &[ActionProfile],
    node: &NodeOf,
    at: &At,
) -> Result<Table> {
    let name = string(t, "name", at)?.to_string();
    let profile = match t.get("type").and_then(Json::as_str).unwrap_or("simple") {
        "simple" => None,
        kind @ ("indirect" | "indirect_ws") => {
            let pname = string(t, "action_profile", at)?;
            let Some(i) = profiles.iter().position(|p| p.name == pname) else {
                return at
                    .key("action_profile")
                    .err(format!("no action profile `{pname}`"));
            };
            if (kind == "indirect_ws") != profiles[i].selector.is_some() {
                return at.key("type").err(format!(
                    "table `{name}` is `{kind}` but action profile `{pname}` {} a selector",
                    if kind == "indirect_ws" {
                        "has no"
                    } else {
                        "has"
                    }
                ));
            }
            Some(i as u32)
        }
        other => {
            return at
                .key("type")
                .unsupported(format!("table `{name}` of type `{other}`"))
        }
    };
    let direct_counter = match boolean(t, "with_counters", false, at)? {
        true => Some(
            cx.direct_counters
                .get(&name)
                .cloned()
                .unwrap_or_else(|| name.clone()),
        ),
        false => None,
    };
    if t.get("direct_meters").is_some_and(|m| !m.is_null()) {
        return at
            .key("direct_meters")
            .unsupported(format!("table `{name}`'s direct meter"));
    }
    if boolean(t, "support_timeout", false, at)? {
        return at
            .key("support_timeout")
            .unsupported(format!("table `{name}`'s entry ageing (support_timeout)"));
    }
    let mut key = Vec::new();
    for (j, k) in array(t, "key", at)?.iter().enumerate() {
        let ka = at.key("key").index(j);
        let kind = string(k, "match_type", &ka)?;
        if kind == "selector" {
            // The selector's input, which its action profile lists: not matched by entries.
            continue;
        }
        let target = field(k, "target", &ka)?;
        let (source, width, kind) = match kind {
            "valid" => {
                let h = cx.header(target.as_str().unwrap_or(""), &ka.key("target"))?;
                (Expr::Valid(h), 1, MatchKind::Exact)
            }
            _ => {
                let (e, w) = cx.field_ref(target, &ka.key("target"))?;
                let kind = match kind {
                    "exact" => MatchKind::Exact,
                    "lpm" => MatchKind::Lpm,
                    "ternary" => MatchKind::Ternary,
                    "range" => MatchKind::Range,
                    "optional" => MatchKind::Optional,
                    other => return ka.unsupported(format!("match kind `{other}`")),
                };
                (e, w, kind)
            }
        };
        let mask = match k.get("mask") {
            None | Some(Json::Null) => None,
            Some(m) => Some(hexstr(m.as_str().unwrap_or(""), &ka.key("mask"))? & mask(width)),
        };
        let kname = match k.get("name").and_then(Json::as_str) {
            Some(n) => n.to_string(),
            None => format!("{target}"),
        };
        key.push(KeyField {
            name: kname,
            kind,
            source,
            width,
            mask,
        });
    }
    if key.iter().filter(|k| k.kind == MatchKind::Lpm).count() > 1 {
        return at
            .key("key")
            .err(format!("table `{name}` has more than one lpm field"));
    }
    let lookup = if key.iter().any(|k| {
        matches!(
            k.kind,
            MatchKind::Ternary | MatchKind::Range | MatchKind::Optional
        )
    }) {
        Lookup::Priority
    } else if key.iter().any(|k| k.kind == MatchKind::Lpm) {
        Lookup::Lpm
    } else {
        Lookup::Exact
    };
    let action_of = |v: &str, a: &At| -> Result<ActionId> {
        match cx.action_by_name.get(v) {
            Some(x) => Ok(*x),
            None => a.err(format!("no action `{v}`")),
        }
    };
    let mut acts = Vec::new();
    for (j, a) in array(t, "actions", at)?.iter().enumerate() {
        acts.push(action_of(
            a.as_str().unwrap_or(""),
            &at.key("actions").index(j),
        )?);
    }
    let base_default = node(t.get("base_default_next"), &at.key("base_default_next"))?;
    let next_tables = field(t, "next_tables", at)?;
    let na = at.key("next_tables");
    let next = if next_tables.get("__HIT__").is_some() || next_tables.get("__MISS__").is_some() {
        NextAfter::HitMiss {
            hit: node(next_tables.get("__HIT__"), &na.key("__HIT__"))?,
            miss: node(next_tables.get("__MISS__"), &na.key("__MISS__"))?,
        }
    } else {
        let mut by = Vec::new();
        for &a in &acts {
            let aname = &actions[a.0 as usize].name;
            by.push(match next_tables.get(aname) {
                Some(v) => node(Some(v), &na.key(aname))?,
                None => base_default,
            });
        }
        NextAfter::ByAction(by)
    };
    let call = |v: &Json, a: &At| -> Result<ActionCall> {
        let id = integer(field(v, "action_id", a)?, &a.key("action_id"))?;
        let Some(&action) = cx.action_by_json_id.get(&id) else {
            return a.key("action_id").err(format!("no action of id {id}"));
        };
        let mut data = Vec::new();
        for (k, d) in array(v, "action_data", a)?.iter().enumerate() {
            data.push(hexstr(
                d.as_str().unwrap_or(""),
                &a.key("action_data").index(k),
            )?);
        }
        Ok(ActionCall { action, data })
    };
    let (default, default_const) = match t.get("default_entry") {
        Some(d) if !d.is_null() => {
            let da = at.key("default_entry");
            (Some(call(d, &da)?), boolean(d, "action_const", false, &da)?)
        }
        // An indirect table's default is what the control plane sets, or nothing.
        _ if profile.is_some() => (None, false),
        _ => return at.err(format!("table `{name}` has no default_entry")),
    };
    let const_entries = match t.get("entries") {
        None | Some(Json::Null) => None,
        Some(_) => {
            let mut out = Vec::new();
            for (j, e) in array(t, "entries", at)?.iter().enumerate() {
                let ea = at.key("entries").index(j);
                out.push(entry(e, &key, &call, &ea)?);
            }
            Some(out)
        }
    };
    let max_size = t.get("max_size").and_then(Json::as_u64).unwrap_or(1024) as usize;
    Ok(Table {
        name,
        key,
        actions: acts,
        next,
        default,
        default_const,
        const_entries,
        max_size,
        lookup,
        profile,
        direct_counter,
    })
}

/// A const entry of a table whose key is `key`.
fn entry(
    e: &Json,
    key: &[KeyField],
    call: &dyn Fn(&Json, &At) -> Result<ActionCall>,
    at: &At,
) -> Result<Entry> {
    let mut matches = Vec::new();
    let mk = array(e, "match_key", at)?;
    if mk.len() != key.len() {
        return at.key("match_key").err(format!(
            "{} match fields for a key of {}",
            mk.len(),
            key.len()
        ));
    }
    for (j, (m, k)) in mk.iter().zip(key).enumerate() {
        let ma = at.key("match_key").index(j);
        let hex = |name: &str| -> Result<u128> {
            hexstr(field(m, name, &ma)?.as_str().unwrap_or(""), &ma.key(name))
        };
        let kind = string(m, "match_type", &ma)?;
        let x = match (kind, k.kind) {
            ("valid", _) => KeyMatch::Exact(boolean(m, "key", false, &ma)? as u128),
            ("exact", MatchKind::Exact) => KeyMatch::Exact(hex("key")?),
            ("lpm", MatchKind::Lpm) => KeyMatch::Lpm(
                hex("key")?,
                integer(field(m, "prefix_length", &ma)?, &ma.key("prefix_length"))? as u32,
            ),
            ("ternary", MatchKind::Ternary) => KeyMatch::Ternary(hex("key")?, hex("mask")?),
            ("range", MatchKind::Range) => KeyMatch::Range(hex("start")?, hex("end")?),
            ("optional", MatchKind::Optional) => match m.get("mask") {
                Some(mask) if hexstr(mask.as_str().unwrap_or(""), &ma.key("mask"))? == 0 => {
                    KeyMatch::Optional(None)
                }
                _ => KeyMatch::Optional(Some(hex("key")?)),
            },
            (given, want) => {
                return ma.err(format!(
                    "a `{given}` match for key field {} matched {want:?}",
                    k.name
                ))
            }
        };
        matches.push(x);
    }
    let priority = e.get("priority").and_then(Json::as_i64).unwrap_or(0);
    Ok(Entry {
        key: matches,
        priority,
        action: Target::Action(call(
            field(e, "action_entry", at)?,
            &at.key("action_entry"),
        )?),
    })
}
