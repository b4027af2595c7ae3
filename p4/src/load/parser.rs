//! The parser: its states, their operations and their select transitions.

use super::{actions, array, expr, field, hexstr, string, At, Ctx, Result};
use crate::program::{Expr, ParseState, ParserOp, SelectPart, Transition, Value};
use serde_json::Value as Json;
use std::collections::HashMap;

/// The parse states of the program's one parser, and the index of its start state.
pub(crate) fn load(root: &Json, cx: &Ctx) -> Result<(Vec<ParseState>, u32)> {
    let at = At::default();
    let parsers = array(root, "parsers", &at)?;
    match parsers.len() {
        1 => {}
        0 => return at.key("parsers").err("no parser"),
        n => {
            return at
                .key("parsers")
                .unsupported(format!("{n} parsers (v1model has one)"))
        }
    }
    let p = &parsers[0];
    let pa = at.key("parsers").index(0);
    let states = array(p, "parse_states", &pa)?;
    let mut by_name = HashMap::new();
    for (i, s) in states.iter().enumerate() {
        let sa = pa.key("parse_states").index(i);
        by_name.insert(string(s, "name", &sa)?.to_string(), i as u32);
    }
    let next = |v: &Json, a: &At| -> Result<Option<u32>> {
        match v {
            Json::Null => Ok(None),
            Json::String(n) => match by_name.get(n) {
                Some(i) => Ok(Some(*i)),
                None => a.err(format!("no parse state `{n}`")),
            },
            other => a.err(format!("a state name or null is expected, not {other}")),
        }
    };
    let init = string(p, "init_state", &pa)?;
    let Some(&start) = by_name.get(init) else {
        return pa.key("init_state").err(format!("no parse state `{init}`"));
    };
    let mut out = Vec::with_capacity(states.len());
    for (i, s) in states.iter().enumerate() {
        let sa = pa.key("parse_states").index(i);
        let name = string(s, "name", &sa)?.to_string();
        let mut ops = Vec::new();
        for (j, o) in array(s, "parser_ops", &sa)?.iter().enumerate() {
            ops.extend(op(o, cx, &sa.key("parser_ops").index(j))?);
        }
        let mut key = Vec::new();
        for (j, k) in array(s, "transition_key", &sa)?.iter().enumerate() {
            let ka = sa.key("transition_key").index(j);
            let (source, width) = match k.get("type").and_then(Json::as_str) {
                Some("field") => cx.field_ref(field(k, "value", &ka)?, &ka.key("value"))?,
                Some("stack_field") => cx.stack_field(field(k, "value", &ka)?, &ka.key("value"))?,
                Some("lookahead") => match expr::load(k, cx, &ka)? {
                    e @ Expr::Lookahead { width, .. } => (e, width),
                    _ => unreachable!("a lookahead loads as one"),
                },
                Some(other) => return ka.unsupported(format!("a select key of type `{other}`")),
                None => return ka.err(format!("a type-value object is expected, not {k}")),
            };
            key.push(SelectPart { source, width });
        }
        let key_bits: u32 = key.iter().map(|k| k.width.div_ceil(8) * 8).sum();
        if key_bits > 128 {
            return sa
                .key("transition_key")
                .unsupported(format!("a select key of {key_bits} bits (at most 128)"));
        }
        let mut transitions = Vec::new();
        for (j, t) in array(s, "transitions", &sa)?.iter().enumerate() {
            let ta = sa.key("transitions").index(j);
            let to = next(field(t, "next_state", &ta)?, &ta.key("next_state"))?;
            let value = match t.get("type").and_then(Json::as_str).unwrap_or("hexstr") {
                "default" => None,
                "hexstr" => {
                    let v = hexstr(
                        field(t, "value", &ta)?.as_str().unwrap_or(""),
                        &ta.key("value"),
                    )?;
                    let m: Value = match t.get("mask") {
                        None | Some(Json::Null) => Value::MAX,
                        Some(m) => hexstr(m.as_str().unwrap_or(""), &ta.key("mask"))?,
                    };
                    Some((v, m))
                }
                other => return ta.unsupported(format!("a transition of type `{other}`")),
            };
            transitions.push(Transition { value, next: to });
        }
        out.push(ParseState {
            name,
            ops,
            key,
            transitions,
        });
    }
    Ok((out, start))
}

/// One parser operation (None: one without effect on the frame, `log_msg`).
fn op(o: &Json, cx: &Ctx, at: &At) -> Result<Option<ParserOp>> {
    let name = string(o, "op", at)?;
    let ps = array(o, "parameters", at)?;
    let p = |n: usize| -> Result<&Json> {
        ps.get(n).map_or_else(
            || at.err(format!("`{name}` needs {} parameters", n + 1)),
            Ok,
        )
    };
    let pa = |n: usize| at.key("parameters").index(n);
    let op = match name {
        "extract" => {
            let x = p(0)?;
            let target = x.get("value").and_then(Json::as_str).unwrap_or("");
            match x.get("type").and_then(Json::as_str) {
                Some("regular") => ParserOp::Extract(cx.header(target, &pa(0))?),
                Some("stack") => match cx.stack_by_name.get(target) {
                    Some(s) => ParserOp::ExtractStack(*s),
                    None => return pa(0).err(format!("no header stack `{target}`")),
                },
                Some(other) => return pa(0).unsupported(format!("extracting into a `{other}`")),
                None => return pa(0).err(format!("a type-value object is expected, not {x}")),
            }
        }
        "set" => {
            let dst = match p(0)?.get("type").and_then(Json::as_str) {
                Some("field") => cx.lvalue(field(p(0)?, "value", &pa(0))?, &pa(0))?,
                _ => return pa(0).unsupported(format!("setting {}", p(0)?)),
            };
            ParserOp::Set(dst, expr::load(p(1)?, cx, &pa(1))?)
        }
        "verify" => ParserOp::Verify(
            expr::load(p(0)?, cx, &pa(0))?,
            expr::load(p(1)?, cx, &pa(1))?,
        ),
        "advance" => ParserOp::Advance(expr::load(p(0)?, cx, &pa(0))?),
        "shift" => {
            let bytes = expr::load(p(0)?, cx, &pa(0))?;
            ParserOp::Advance(Expr::Binary(
                crate::program::BinOp::Mul,
                Box::new(bytes),
                Box::new(Expr::Const(8)),
            ))
        }
        "primitive" => match actions::primitive(p(0)?, cx, &pa(0))? {
            Some(
                prim @ (crate::program::Primitive::Jump(_)
                | crate::program::Primitive::JumpIfZero(..)),
            ) => {
                return pa(0).unsupported(format!("{prim:?} in a parser state"));
            }
            Some(prim) => ParserOp::Do(prim),
            None => return Ok(None),
        },
        other => return at.unsupported(format!("parser operation `{other}`")),
    };
    Ok(Some(op))
}
