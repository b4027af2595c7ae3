//! Expressions: BMv2's type-value objects (`{"type": "field", "value": ["ipv4", "ttl"]}`,
//! `{"type": "expression", "value": {"op": "+", "left": …, "right": …}}`) into [`Expr`].

use super::{field, hexstr, At, Ctx, Result};
use crate::program::{BinOp, Expr, UnOp};
use serde_json::Value as Json;

/// The type-value object `v` as an expression.
pub(crate) fn load(v: &Json, cx: &Ctx, at: &At) -> Result<Expr> {
    let ty = match v.get("type").and_then(Json::as_str) {
        Some(t) => t,
        // An operation object on its own (`{"op": …}`), as an `expression`'s value.
        None if v.get("op").is_some() => return op(v, cx, at),
        None => return at.err(format!("a type-value object is expected, not {v}")),
    };
    let value = field(v, "value", at)?;
    let va = at.key("value");
    match ty {
        "field" => Ok(cx.field_ref(value, &va)?.0),
        "stack_field" => Ok(cx.stack_field(value, &va)?.0),
        "hexstr" => match value.as_str() {
            Some(s) => Ok(Expr::Const(hexstr(s, &va)?)),
            None => va.err(format!("a hex string is expected, not {value}")),
        },
        "bool" => match value.as_bool() {
            Some(b) => Ok(Expr::Const(b as u128)),
            None => va.err(format!("true or false is expected, not {value}")),
        },
        "runtime_data" | "local" => match value.as_u64() {
            Some(i) if i < u16::MAX as u64 => Ok(Expr::Param(i as u16)),
            _ => va.err(format!("a parameter index is expected, not {value}")),
        },
        "lookahead" => match value.as_array().map(Vec::as_slice) {
            Some([o, w]) => match (o.as_u64(), w.as_u64()) {
                (Some(offset), Some(width)) if (1..=128).contains(&width) => Ok(Expr::Lookahead {
                    offset: offset as u32,
                    width: width as u32,
                }),
                _ => va.err(format!(
                    "a lookahead of 1 to 128 bits is expected, not {value}"
                )),
            },
            _ => va.err(format!("an [offset, width] pair is expected, not {value}")),
        },
        "expression" => load(value, cx, &va),
        other => at.unsupported(format!("a value of type `{other}` here")),
    }
}

/// An operation object `{"op", "left", "right"}` (and `cond` for `?`).
fn op(v: &Json, cx: &Ctx, at: &At) -> Result<Expr> {
    let name = v.get("op").and_then(Json::as_str).unwrap_or("");
    let side = |k: &str| -> Result<Option<Expr>> {
        match v.get(k) {
            None | Some(Json::Null) => Ok(None),
            Some(x) => load(x, cx, &at.key(k)).map(Some),
        }
    };
    let need = |k: &str| -> Result<Expr> {
        side(k)?.map_or_else(|| at.err(format!("`{name}` needs its `{k}` operand")), Ok)
    };
    let bin = |op: BinOp| -> Result<Expr> {
        Ok(Expr::Binary(
            op,
            Box::new(need("left")?),
            Box::new(need("right")?),
        ))
    };
    let un = |op: UnOp| -> Result<Expr> { Ok(Expr::Unary(op, Box::new(need("right")?))) };
    match name {
        "+" => bin(BinOp::Add),
        "-" if side("left")?.is_none() => un(UnOp::Negate),
        "-" => bin(BinOp::Sub),
        "*" => bin(BinOp::Mul),
        "<<" => bin(BinOp::Shl),
        ">>" => bin(BinOp::Shr),
        "==" => bin(BinOp::Eq),
        "!=" => bin(BinOp::Ne),
        ">" => bin(BinOp::Gt),
        ">=" => bin(BinOp::Ge),
        "<" => bin(BinOp::Lt),
        "<=" => bin(BinOp::Le),
        "and" => bin(BinOp::And),
        "or" => bin(BinOp::Or),
        "&" => bin(BinOp::BitAnd),
        "|" => bin(BinOp::BitOr),
        "^" => bin(BinOp::BitXor),
        "not" => un(UnOp::Not),
        "~" => un(UnOp::Complement),
        "d2b" => un(UnOp::DataToBool),
        "b2d" => un(UnOp::BoolToData),
        "valid" => match v.get("right") {
            Some(r) if r.get("type").and_then(Json::as_str) == Some("header") => {
                let name = r.get("value").and_then(Json::as_str).unwrap_or("");
                Ok(Expr::Valid(cx.header(name, &at.key("right"))?))
            }
            _ => at.err("`valid` needs a header"),
        },
        "?" => {
            let cond = match v.get("cond") {
                Some(c) => load(c, cx, &at.key("cond"))?,
                None => return at.err("`?` needs its `cond`"),
            };
            Ok(Expr::Ternary(
                Box::new(cond),
                Box::new(need("left")?),
                Box::new(need("right")?),
            ))
        }
        other => at.unsupported(format!("expression operation `{other}`")),
    }
}
