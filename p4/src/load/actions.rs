//! Actions and their primitives (v1model's, as p4c writes them).

use super::{array, expr, field, hexstr, integer, string, At, Ctx, Result};
use crate::program::{Action, ActionId, Expr, LValue, Primitive};
use serde_json::Value as Json;

/// Every action of the program, by index; names and JSON ids recorded in `cx`.
pub(crate) fn load(root: &Json, cx: &mut Ctx) -> Result<Vec<Action>> {
    let at = At::default();
    let list = array(root, "actions", &at)?;
    // Names first: nothing in an action refers to another action.
    for (i, a) in list.iter().enumerate() {
        let aa = at.key("actions").index(i);
        let name = string(a, "name", &aa)?.to_string();
        let id = ActionId(i as u32);
        if let Some(j) = a.get("id").and_then(Json::as_i64) {
            cx.action_by_json_id.insert(j, id);
        }
        cx.action_by_name.insert(name, id);
    }
    let mut out = Vec::with_capacity(list.len());
    for (i, a) in list.iter().enumerate() {
        let aa = at.key("actions").index(i);
        let name = string(a, "name", &aa)?.to_string();
        let mut params = Vec::new();
        let mut param_names = Vec::new();
        for (j, p) in array(a, "runtime_data", &aa)?.iter().enumerate() {
            let pa = aa.key("runtime_data").index(j);
            param_names.push(string(p, "name", &pa)?.to_string());
            let w = integer(field(p, "bitwidth", &pa)?, &pa.key("bitwidth"))?;
            if !(1..=128).contains(&w) {
                return pa.err(format!("a parameter of {w} bits: 1 to 128 are supported"));
            }
            params.push(w as u32);
        }
        let mut body = Vec::new();
        for (j, p) in array(a, "primitives", &aa)?.iter().enumerate() {
            let pa = aa.key("primitives").index(j);
            if let Some(prim) = primitive(p, cx, &pa)? {
                body.push(prim);
            }
        }
        out.push(Action {
            name,
            params,
            param_names,
            body,
        });
    }
    Ok(out)
}

/// The `n`th parameter of a primitive call.
fn param<'a>(ps: &'a [Json], n: usize, op: &str, at: &At) -> Result<&'a Json> {
    match ps.get(n) {
        Some(p) => Ok(p),
        None => at.err(format!("`{op}` needs at least {} parameters", n + 1)),
    }
}

/// A parameter naming an object (`{"type": "header", "value": "ipv4"}`): its name.
fn named<'a>(p: &'a Json, ty: &str, at: &At) -> Result<&'a str> {
    match (
        p.get("type").and_then(Json::as_str),
        p.get("value").and_then(Json::as_str),
    ) {
        (Some(t), Some(v)) if t == ty => Ok(v),
        _ => at.err(format!("a {ty} is expected, not {p}")),
    }
}

/// A parameter that is written: a field.
fn lvalue(p: &Json, cx: &Ctx, at: &At) -> Result<LValue> {
    match p.get("type").and_then(Json::as_str) {
        Some("field") => cx.lvalue(field(p, "value", at)?, &at.key("value")),
        _ => at.unsupported(format!("writing to {p} (only a field)")),
    }
}

/// A constant integer parameter (`{"type": "hexstr", "value": "0x3"}`).
fn constant(p: &Json, at: &At) -> Result<u32> {
    match (p.get("type").and_then(Json::as_str), p.get("value")) {
        (Some("hexstr"), Some(Json::String(s))) => Ok(hexstr(s, at)? as u32),
        (_, Some(v)) if v.is_u64() => Ok(integer(v, at)? as u32),
        _ => at.err(format!("a constant is expected, not {p}")),
    }
}

/// One primitive call: what it does, or None for one without effect on the frame
/// (`log_msg`).
pub(crate) fn primitive(p: &Json, cx: &Ctx, at: &At) -> Result<Option<Primitive>> {
    let op = string(p, "op", at)?;
    let ps = array(p, "parameters", at)?;
    let pa = |n: usize| at.key("parameters").index(n);
    let e = |n: usize| -> Result<Expr> { expr::load(param(ps, n, op, at)?, cx, &pa(n)) };
    let prim = match op {
        "assign" | "modify_field" => {
            Primitive::Assign(lvalue(param(ps, 0, op, at)?, cx, &pa(0))?, e(1)?)
        }
        "add_header" => {
            Primitive::SetValid(cx.header(named(param(ps, 0, op, at)?, "header", &pa(0))?, &pa(0))?)
        }
        "remove_header" => Primitive::SetInvalid(
            cx.header(named(param(ps, 0, op, at)?, "header", &pa(0))?, &pa(0))?,
        ),
        "assign_header" | "copy_header" => Primitive::CopyHeader {
            dst: cx.header(named(param(ps, 0, op, at)?, "header", &pa(0))?, &pa(0))?,
            src: cx.header(named(param(ps, 1, op, at)?, "header", &pa(1))?, &pa(1))?,
        },
        "mark_to_drop" | "drop" => Primitive::MarkToDrop,
        "exit" => Primitive::Exit,
        "_jump" => Primitive::Jump(constant(param(ps, 0, op, at)?, &pa(0))?),
        "_jump_if_zero" => Primitive::JumpIfZero(e(0)?, constant(param(ps, 1, op, at)?, &pa(1))?),
        "push" | "pop" => {
            let name = named(param(ps, 0, op, at)?, "header_stack", &pa(0))?;
            let Some(&s) = cx.stack_by_name.get(name) else {
                return pa(0).err(format!("no header stack `{name}`"));
            };
            let n = constant(param(ps, 1, op, at)?, &pa(1))?;
            if op == "push" {
                Primitive::PushFront(s, n)
            } else {
                Primitive::PopFront(s, n)
            }
        }
        "truncate" => Primitive::Truncate(e(0)?),
        "modify_field_with_hash_based_offset" => {
            let dst = lvalue(param(ps, 0, op, at)?, cx, &pa(0))?;
            let calc = named(param(ps, 2, op, at)?, "calculation", &pa(2))?;
            let Some((algo, inputs)) = cx.calculations.get(calc) else {
                return pa(2).err(format!("no calculation `{calc}`"));
            };
            Primitive::Hash {
                dst,
                algo: *algo,
                base: e(1)?,
                data: inputs.clone(),
                max: e(3)?,
            }
        }
        "count" => {
            let name = named(param(ps, 0, op, at)?, "counter_array", &pa(0))?;
            let Some(&counter) = cx.counters.get(name) else {
                return pa(0).err(format!("no counter array `{name}`"));
            };
            Primitive::Count {
                counter,
                index: e(1)?,
            }
        }
        "register_read" => {
            let dst = lvalue(param(ps, 0, op, at)?, cx, &pa(0))?;
            let name = named(param(ps, 1, op, at)?, "register_array", &pa(1))?;
            let Some(&(register, _)) = cx.registers.get(name) else {
                return pa(1).err(format!("no register array `{name}`"));
            };
            Primitive::RegisterRead {
                dst,
                register,
                index: e(2)?,
            }
        }
        "register_write" => {
            let name = named(param(ps, 0, op, at)?, "register_array", &pa(0))?;
            let Some(&(register, _)) = cx.registers.get(name) else {
                return pa(0).err(format!("no register array `{name}`"));
            };
            Primitive::RegisterWrite {
                register,
                index: e(1)?,
                value: e(2)?,
            }
        }
        // A message to BMv2's log: nothing happens to the frame.
        "log_msg" => return Ok(None),
        other => return at.unsupported(other.to_string()),
    };
    Ok(Some(prim))
}
