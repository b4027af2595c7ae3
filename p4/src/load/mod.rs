//! Reading p4c's BMv2 JSON (format 2.x, v1model) into a [`Program`]: every name resolved
//! to an index once. What the interpreter does not run is refused here, naming the
//! construct and its place in the JSON (`actions[3].primitives[1]: clone_ingress_pkt_to_egress
//! is not supported`), never skipped.

mod actions;
mod expr;
mod parser;
mod pipelines;

use crate::program::*;
use serde_json::Value as Json;
use std::collections::HashMap;

/// Why a program was refused: where in the JSON, and what.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LoadError {
    /// The place in the JSON, as a path (`pipelines[0].tables[2].key[0]`).
    pub at: String,
    pub message: String,
}

impl std::fmt::Display for LoadError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.at.is_empty() {
            f.write_str(&self.message)
        } else {
            write!(f, "{}: {}", self.at, self.message)
        }
    }
}

impl std::error::Error for LoadError {}

pub(crate) type Result<T> = std::result::Result<T, LoadError>;

/// A place in the JSON, for errors.
#[derive(Clone, Debug, Default)]
pub(crate) struct At(String);

impl At {
    pub fn key(&self, k: &str) -> At {
        if self.0.is_empty() {
            At(k.to_string())
        } else {
            At(format!("{}.{k}", self.0))
        }
    }

    pub fn index(&self, i: usize) -> At {
        At(format!("{}[{i}]", self.0))
    }

    pub fn err<T>(&self, message: impl Into<String>) -> Result<T> {
        Err(LoadError {
            at: self.0.clone(),
            message: message.into(),
        })
    }

    /// `what` is not supported (yet), at this place.
    pub fn unsupported<T>(&self, what: impl std::fmt::Display) -> Result<T> {
        self.err(format!("{what} is not supported"))
    }
}

/// `v[key]`, which must be there.
pub(crate) fn field<'a>(v: &'a Json, key: &str, at: &At) -> Result<&'a Json> {
    match v.get(key) {
        Some(x) => Ok(x),
        None => at.err(format!("`{key}` is missing")),
    }
}

pub(crate) fn string<'a>(v: &'a Json, key: &str, at: &At) -> Result<&'a str> {
    match field(v, key, at)? {
        Json::String(s) => Ok(s),
        other => at
            .key(key)
            .err(format!("a string is expected, not {other}")),
    }
}

pub(crate) fn array<'a>(v: &'a Json, key: &str, at: &At) -> Result<&'a [Json]> {
    match v.get(key) {
        None | Some(Json::Null) => Ok(&[]),
        Some(Json::Array(a)) => Ok(a),
        Some(other) => at.key(key).err(format!("a list is expected, not {other}")),
    }
}

pub(crate) fn integer(v: &Json, at: &At) -> Result<i64> {
    match v.as_i64() {
        Some(n) => Ok(n),
        None => at.err(format!("an integer is expected, not {v}")),
    }
}

pub(crate) fn boolean(v: &Json, key: &str, default: bool, at: &At) -> Result<bool> {
    match v.get(key) {
        None | Some(Json::Null) => Ok(default),
        Some(Json::Bool(b)) => Ok(*b),
        Some(other) => at
            .key(key)
            .err(format!("true or false is expected, not {other}")),
    }
}

/// A BMv2 hex string (`0x0800`, `-0x1`, decimal digits too) as a 128-bit two's
/// complement value.
pub(crate) fn hexstr(s: &str, at: &At) -> Result<Value> {
    let (neg, digits) = match s.strip_prefix('-') {
        Some(d) => (true, d),
        None => (false, s),
    };
    let parsed = match digits
        .strip_prefix("0x")
        .or_else(|| digits.strip_prefix("0X"))
    {
        Some(h) => u128::from_str_radix(h, 16).ok().or_else(|| {
            // Wider than 128 bits: the low 128 bits, if the rest is zero.
            let t = h.trim_start_matches('0');
            (t.len() <= 32)
                .then(|| u128::from_str_radix(if t.is_empty() { "0" } else { t }, 16).ok())?
        }),
        None => digits.parse::<u128>().ok(),
    };
    match parsed {
        Some(v) if neg => Ok(v.wrapping_neg()),
        Some(v) => Ok(v),
        None => at.err(format!(
            "`{s}` is not a number (hex string) of at most 128 bits"
        )),
    }
}

/// Names resolved so far, shared by the parts of the loader.
pub(crate) struct Ctx {
    pub header_types: Vec<HeaderType>,
    pub headers: Vec<Header>,
    pub header_by_name: HashMap<String, HeaderId>,
    pub header_by_json_id: HashMap<i64, HeaderId>,
    pub stacks: Vec<Stack>,
    pub stack_by_name: HashMap<String, StackId>,
    pub widths: Vec<u32>,
    pub owner: Vec<HeaderId>,
    pub errors: HashMap<String, Value>,
    /// Action names and JSON ids → index.
    pub action_by_name: HashMap<String, ActionId>,
    pub action_by_json_id: HashMap<i64, ActionId>,
    pub calculations: HashMap<String, (HashAlgo, Vec<(Expr, u32)>)>,
    pub counters: HashMap<String, u32>,
    /// Direct counters by the table they are bound to.
    pub direct_counters: HashMap<String, String>,
    pub registers: HashMap<String, (u32, u32)>,
    pub std_header: HeaderId,
}

impl Ctx {
    /// The header instance named `name`.
    pub fn header(&self, name: &str, at: &At) -> Result<HeaderId> {
        match self.header_by_name.get(name) {
            Some(h) => Ok(*h),
            None => at.err(format!("no header instance `{name}`")),
        }
    }

    /// The field `name` of header `h`: its slot and width.
    pub fn field_of(&self, h: HeaderId, name: &str, at: &At) -> Result<LValue> {
        let hd = &self.headers[h.0 as usize];
        let ty = &self.header_types[hd.ty];
        match ty.fields.iter().position(|f| f.name == name) {
            Some(i) => Ok(LValue {
                field: FieldId(hd.first + i as u32),
                width: ty.fields[i].width,
            }),
            None => at.err(format!("header `{}` has no field `{name}`", hd.name)),
        }
    }

    /// A `[header, field]` pair: a field, or `$valid$` (the header's validity).
    pub fn field_ref(&self, v: &Json, at: &At) -> Result<(Expr, u32)> {
        let (h, f) = match v.as_array().map(Vec::as_slice) {
            Some([Json::String(h), Json::String(f)]) => (h, f),
            _ => return at.err(format!("a [header, field] pair is expected, not {v}")),
        };
        let h = self.header(h, at)?;
        if f == "$valid$" {
            return Ok((Expr::Valid(h), 1));
        }
        let l = self.field_of(h, f, at)?;
        Ok((Expr::Field(l.field), l.width))
    }

    /// A `[header, field]` pair that is written: a field (not `$valid$`).
    pub fn lvalue(&self, v: &Json, at: &At) -> Result<LValue> {
        match self.field_ref(v, at)? {
            (Expr::Field(field), width) => Ok(LValue { field, width }),
            _ => at.err("`$valid$` cannot be written (use setValid / setInvalid)"),
        }
    }

    /// A `[stack, field]` pair: the field of the stack's last extracted entry.
    pub fn stack_field(&self, v: &Json, at: &At) -> Result<(Expr, u32)> {
        let (s, f) = match v.as_array().map(Vec::as_slice) {
            Some([Json::String(s), Json::String(f)]) => (s, f),
            _ => return at.err(format!("a [stack, field] pair is expected, not {v}")),
        };
        let Some(&stack) = self.stack_by_name.get(s) else {
            return at.err(format!("no header stack `{s}`"));
        };
        let Some(&h) = self.stacks[stack.0 as usize].headers.first() else {
            return at.err(format!("header stack `{s}` is empty"));
        };
        let ty = &self.header_types[self.headers[h.0 as usize].ty];
        match ty.fields.iter().position(|x| x.name == *f) {
            Some(i) => Ok((
                Expr::StackLast {
                    stack,
                    field: i as u32,
                },
                ty.fields[i].width,
            )),
            None => at.err(format!("the entries of stack `{s}` have no field `{f}`")),
        }
    }

    /// A standard_metadata field.
    fn std_field(&self, name: &str, at: &At) -> Result<FieldId> {
        self.field_of(self.std_header, name, at)
            .map(|l| l.field)
            .or_else(|_| {
                at.err(format!(
                    "standard_metadata has no field `{name}`: not a v1model program as p4c writes it"
                ))
            })
    }
}

/// Read `json` (the text of p4c's BMv2 JSON for v1model).
pub fn load(json: &str) -> std::result::Result<Program, LoadError> {
    let root: Json = serde_json::from_str(json).map_err(|e| LoadError {
        at: format!("line {}, column {}", e.line(), e.column()),
        message: format!("not JSON: {e}"),
    })?;
    let at = At::default();
    if !root.is_object() {
        return at.err("a BMv2 JSON program is a JSON object");
    }
    check_version(&root)?;
    refuse_present(&root)?;
    let mut cx = headers(&root)?;
    cx.errors = errors(&root)?;
    calculations(&root, &mut cx)?;
    externs(&root, &mut cx)?;
    let actions = actions::load(&root, &mut cx)?;
    let (parse_states, start) = parser::load(&root, &cx)?;
    let deparse_order = deparser(&root, &cx)?;
    let pipes = pipelines::load(&root, &cx, &actions)?;
    let checksums = checksums(&root, &cx)?;
    let std = standard_metadata(&cx)?;
    let e = |name: &str, default: Value| cx.errors.get(name).copied().unwrap_or(default);
    let errors = ParserErrors {
        no_error: e("NoError", 0),
        packet_too_short: e("PacketTooShort", 1),
        no_match: e("NoMatch", 2),
        stack_out_of_bounds: e("StackOutOfBounds", 3),
    };
    let mut counters: Vec<(u32, CounterArray)> = Vec::new();
    for (i, c) in array(&root, "counter_arrays", &at)?.iter().enumerate() {
        let a = at.key("counter_arrays").index(i);
        if boolean(c, "is_direct", false, &a)? {
            continue;
        }
        let name = string(c, "name", &a)?.to_string();
        let size = integer(field(c, "size", &a)?, &a.key("size"))?.max(0) as usize;
        counters.push((cx.counters[&name], CounterArray { name, size }));
    }
    counters.sort_by_key(|(i, _)| *i);
    let mut registers: Vec<(u32, RegisterArray)> = Vec::new();
    for (i, r) in array(&root, "register_arrays", &at)?.iter().enumerate() {
        let a = at.key("register_arrays").index(i);
        let name = string(r, "name", &a)?.to_string();
        let size = integer(field(r, "size", &a)?, &a.key("size"))?.max(0) as usize;
        let (k, width) = cx.registers[&name];
        registers.push((k, RegisterArray { name, size, width }));
    }
    registers.sort_by_key(|(i, _)| *i);
    let stack_slots = cx
        .stacks
        .iter()
        .map(|s| {
            s.headers
                .iter()
                .map(|h| cx.headers[h.0 as usize].first)
                .collect()
        })
        .collect();
    Ok(Program {
        stack_slots,
        header_types: cx.header_types,
        headers: cx.headers,
        stacks: cx.stacks,
        widths: cx.widths,
        owner: cx.owner,
        parse_states,
        start,
        deparse_order,
        actions,
        tables: pipes.tables,
        profiles: pipes.profiles,
        conditionals: pipes.conditionals,
        ingress: pipes.ingress,
        egress: pipes.egress,
        checksums,
        counters: counters.into_iter().map(|(_, c)| c).collect(),
        registers: registers.into_iter().map(|(_, r)| r).collect(),
        std,
        errors,
        checksum_error_read: names_field(&root, "checksum_error"),
    })
}

/// Does any part of the program refer to a field named `field` (as `[header, field]`)?
/// (Header types list their fields as `[name, width, signed]`, which this does not count.)
fn names_field(j: &Json, field: &str) -> bool {
    match j {
        Json::Array(a) => {
            (a.len() == 2 && a[0].is_string() && a[1].as_str() == Some(field))
                || a.iter().any(|x| names_field(x, field))
        }
        Json::Object(o) => o.values().any(|x| names_field(x, field)),
        _ => false,
    }
}

/// `__meta__.version` must be 2.x.
fn check_version(root: &Json) -> Result<()> {
    let at = At::default().key("__meta__").key("version");
    let Some(v) = root.get("__meta__").and_then(|m| m.get("version")) else {
        return At::default().err(
            "`__meta__.version` is missing: not p4c's BMv2 JSON (format 2.x), or an older one",
        );
    };
    match v.as_array().and_then(|a| a.first()).and_then(Json::as_i64) {
        Some(2) => Ok(()),
        _ => at.err(format!("format {v} is not one this reads (2.x)")),
    }
}

/// Parts of the format whose presence this interpreter cannot honour.
fn refuse_present(root: &Json) -> Result<()> {
    let at = At::default();
    for (key, what) in [
        ("header_union_types", "a header union"),
        ("header_unions", "a header union"),
        ("header_union_stacks", "a header union stack"),
        ("parse_vsets", "a parser value set"),
        ("meter_arrays", "a meter"),
        ("learn_lists", "a digest (learn list)"),
        ("extern_instances", "an extern instance"),
    ] {
        if !array(root, key, &at)?.is_empty() {
            return at.key(key).index(0).unsupported(what);
        }
    }
    Ok(())
}

/// Header types, instances and stacks, and the header vector's slots.
fn headers(root: &Json) -> Result<Ctx> {
    let at = At::default();
    let mut types = Vec::new();
    let mut type_by_name = HashMap::new();
    for (i, t) in array(root, "header_types", &at)?.iter().enumerate() {
        let a = at.key("header_types").index(i);
        let name = string(t, "name", &a)?.to_string();
        let mut fields = Vec::new();
        let mut bits = 0;
        for (j, f) in array(t, "fields", &a)?.iter().enumerate() {
            let fa = a.key("fields").index(j);
            let parts = f.as_array().map(Vec::as_slice).unwrap_or(&[]);
            let (fname, width) = match parts {
                [Json::String(n), w, rest @ ..] => {
                    if rest.first().and_then(Json::as_bool) == Some(true) {
                        return fa.unsupported(format!("field `{n}`: a signed field"));
                    }
                    if w.as_str() == Some("*") {
                        return fa.unsupported(format!("field `{n}`: a variable-length field"));
                    }
                    (n.clone(), integer(w, &fa)?)
                }
                _ => return fa.err(format!("a [name, width] pair is expected, not {f}")),
            };
            if !(1..=128).contains(&width) {
                return fa.err(format!(
                    "field `{fname}` is {width} bits wide: fields of 1 to 128 bits are supported"
                ));
            }
            bits += width as u32;
            fields.push(FieldDef {
                name: fname,
                width: width as u32,
            });
        }
        type_by_name.insert(name.clone(), types.len());
        types.push(HeaderType { name, fields, bits });
    }
    let mut cx = Ctx {
        header_types: types,
        headers: Vec::new(),
        header_by_name: HashMap::new(),
        header_by_json_id: HashMap::new(),
        stacks: Vec::new(),
        stack_by_name: HashMap::new(),
        widths: Vec::new(),
        owner: Vec::new(),
        errors: HashMap::new(),
        action_by_name: HashMap::new(),
        action_by_json_id: HashMap::new(),
        calculations: HashMap::new(),
        counters: HashMap::new(),
        direct_counters: HashMap::new(),
        registers: HashMap::new(),
        std_header: HeaderId(u32::MAX),
    };
    for (i, h) in array(root, "headers", &at)?.iter().enumerate() {
        let a = at.key("headers").index(i);
        let name = string(h, "name", &a)?.to_string();
        let tname = string(h, "header_type", &a)?;
        let Some(&ty) = type_by_name.get(tname) else {
            return a.err(format!("no header type `{tname}`"));
        };
        let metadata = boolean(h, "metadata", false, &a)?;
        let ht = &cx.header_types[ty];
        if !metadata && !ht.bits.is_multiple_of(8) {
            return a.err(format!(
                "header `{name}` of type `{tname}` is {} bits: a header on the wire is whole bytes",
                ht.bits
            ));
        }
        let id = HeaderId(cx.headers.len() as u32);
        let first = cx.widths.len() as u32;
        for f in &ht.fields {
            cx.widths.push(f.width);
            cx.owner.push(id);
        }
        if let Some(j) = h.get("id").and_then(Json::as_i64) {
            cx.header_by_json_id.insert(j, id);
        }
        if name == "standard_metadata" {
            cx.std_header = id;
        }
        cx.header_by_name.insert(name.clone(), id);
        cx.headers.push(Header {
            name,
            ty,
            metadata,
            first,
        });
    }
    if cx.std_header.0 == u32::MAX {
        return at
            .key("headers")
            .err("no `standard_metadata` instance: not a v1model program (p4c --arch v1model)");
    }
    for (i, s) in array(root, "header_stacks", &at)?.iter().enumerate() {
        let a = at.key("header_stacks").index(i);
        let name = string(s, "name", &a)?.to_string();
        let mut members = Vec::new();
        for (j, id) in array(s, "header_ids", &a)?.iter().enumerate() {
            let ja = a.key("header_ids").index(j);
            let id = integer(id, &ja)?;
            match cx.header_by_json_id.get(&id) {
                Some(h) => members.push(*h),
                None => return ja.err(format!("no header instance of id {id}")),
            }
        }
        cx.stack_by_name
            .insert(name.clone(), StackId(cx.stacks.len() as u32));
        cx.stacks.push(Stack {
            name,
            headers: members,
        });
    }
    Ok(cx)
}

/// The program's error constants by name.
fn errors(root: &Json) -> Result<HashMap<String, Value>> {
    let at = At::default();
    let mut out = HashMap::new();
    for (i, e) in array(root, "errors", &at)?.iter().enumerate() {
        let a = at.key("errors").index(i);
        match e.as_array().map(Vec::as_slice) {
            Some([Json::String(n), v]) => {
                out.insert(n.clone(), integer(v, &a)? as Value);
            }
            _ => return a.err(format!("a [name, value] pair is expected, not {e}")),
        }
    }
    Ok(out)
}

/// A hash algorithm by BMv2's name.
pub(crate) fn algo(name: &str, at: &At) -> Result<HashAlgo> {
    match name {
        "csum16" => Ok(HashAlgo::Csum16),
        "crc16" => Ok(HashAlgo::Crc16),
        "crc32" => Ok(HashAlgo::Crc32),
        "identity" => Ok(HashAlgo::Identity),
        other => at.unsupported(format!("hash algorithm `{other}`")),
    }
}

/// The inputs of a calculation or a selector: fields, constants, whole headers.
pub(crate) fn hash_inputs(list: &[Json], cx: &Ctx, at: &At) -> Result<Vec<(Expr, u32)>> {
    let mut inputs = Vec::new();
    for (j, inp) in list.iter().enumerate() {
        let ja = at.index(j);
        match string(inp, "type", &ja)? {
            "field" => inputs.push(cx.field_ref(field(inp, "value", &ja)?, &ja)?),
            "hexstr" => {
                let v = hexstr(field(inp, "value", &ja)?.as_str().unwrap_or(""), &ja)?;
                let w = integer(field(inp, "bitwidth", &ja)?, &ja.key("bitwidth"))?;
                inputs.push((Expr::Const(v & mask(w as u32)), w as u32));
            }
            "header" => {
                let h = cx.header(field(inp, "value", &ja)?.as_str().unwrap_or(""), &ja)?;
                let hd = &cx.headers[h.0 as usize];
                for (k, f) in cx.header_types[hd.ty].fields.iter().enumerate() {
                    inputs.push((Expr::Field(FieldId(hd.first + k as u32)), f.width));
                }
            }
            other => return ja.unsupported(format!("a calculation input of type `{other}`")),
        }
    }
    Ok(inputs)
}

/// Named calculations (checksums and hashes): algorithm and inputs.
fn calculations(root: &Json, cx: &mut Ctx) -> Result<()> {
    let at = At::default();
    for (i, c) in array(root, "calculations", &at)?.iter().enumerate() {
        let a = at.key("calculations").index(i);
        let name = string(c, "name", &a)?.to_string();
        let algo = algo(string(c, "algo", &a)?, &a.key("algo"))?;
        let inputs = hash_inputs(array(c, "input", &a)?, cx, &a.key("input"))?;
        cx.calculations.insert(name, (algo, inputs));
    }
    Ok(())
}

/// Counter and register arrays, by name.
fn externs(root: &Json, cx: &mut Ctx) -> Result<()> {
    let at = At::default();
    for (i, c) in array(root, "counter_arrays", &at)?.iter().enumerate() {
        let a = at.key("counter_arrays").index(i);
        let name = string(c, "name", &a)?.to_string();
        if boolean(c, "is_direct", false, &a)? {
            // Counted per entry of its table (tables.rs): no array of its own.
            let table = string(c, "binding", &a)?.to_string();
            cx.direct_counters.insert(table, name);
            continue;
        }
        let k = cx.counters.len() as u32;
        cx.counters.insert(name, k);
    }
    for (i, r) in array(root, "register_arrays", &at)?.iter().enumerate() {
        let a = at.key("register_arrays").index(i);
        let name = string(r, "name", &a)?.to_string();
        let width = integer(field(r, "bitwidth", &a)?, &a.key("bitwidth"))?;
        if !(1..=128).contains(&width) {
            return a.err(format!(
                "register `{name}` is {width} bits wide: 1 to 128 are supported"
            ));
        }
        let k = cx.registers.len() as u32;
        cx.registers.insert(name, (k, width as u32));
    }
    Ok(())
}

/// The deparser: the headers it emits, in order.
fn deparser(root: &Json, cx: &Ctx) -> Result<Vec<HeaderId>> {
    let at = At::default();
    let deparsers = array(root, "deparsers", &at)?;
    match deparsers.len() {
        1 => {}
        0 => return at.key("deparsers").err("no deparser"),
        n => {
            return at
                .key("deparsers")
                .unsupported(format!("{n} deparsers (v1model has one)"))
        }
    }
    let a = at.key("deparsers").index(0);
    let d = &deparsers[0];
    if !array(d, "primitives", &a)?.is_empty() {
        return a
            .key("primitives")
            .index(0)
            .unsupported("a deparser primitive");
    }
    let mut order = Vec::new();
    for (i, h) in array(d, "order", &a)?.iter().enumerate() {
        let ha = a.key("order").index(i);
        order.push(cx.header(h.as_str().unwrap_or(""), &ha)?);
    }
    Ok(order)
}

/// Checksums the parser verifies and the deparser updates.
fn checksums(root: &Json, cx: &Ctx) -> Result<Vec<Checksum>> {
    let at = At::default();
    let mut out = Vec::new();
    for (i, c) in array(root, "checksums", &at)?.iter().enumerate() {
        let a = at.key("checksums").index(i);
        let name = string(c, "name", &a)?.to_string();
        let target = cx.lvalue(field(c, "target", &a)?, &a.key("target"))?;
        let calc = string(c, "calculation", &a)?;
        let Some((algo, inputs)) = cx.calculations.get(calc) else {
            return a.key("calculation").err(format!("no calculation `{calc}`"));
        };
        let condition = match c.get("if_cond") {
            None | Some(Json::Null) => None,
            Some(e) => Some(expr::load(e, cx, &a.key("if_cond"))?),
        };
        out.push(Checksum {
            name,
            target,
            algo: *algo,
            inputs: inputs.clone(),
            condition,
            verify: boolean(c, "verify", true, &a)?,
            update: boolean(c, "update", true, &a)?,
        });
    }
    Ok(out)
}

/// The standard_metadata fields the architecture reads and writes.
fn standard_metadata(cx: &Ctx) -> Result<StandardMetadata> {
    let at = At::default().key("headers");
    let f = |n: &str| cx.std_field(n, &at);
    Ok(StandardMetadata {
        header: cx.std_header,
        ingress_port: f("ingress_port")?,
        egress_spec: f("egress_spec")?,
        egress_port: f("egress_port")?,
        instance_type: f("instance_type")?,
        packet_length: f("packet_length")?,
        enq_timestamp: f("enq_timestamp")?,
        enq_qdepth: f("enq_qdepth")?,
        deq_timedelta: f("deq_timedelta")?,
        deq_qdepth: f("deq_qdepth")?,
        ingress_global_timestamp: f("ingress_global_timestamp")?,
        egress_global_timestamp: f("egress_global_timestamp")?,
        mcast_grp: f("mcast_grp")?,
        checksum_error: f("checksum_error")?,
        parser_error: f("parser_error")?,
        priority: f("priority")?,
    })
}
