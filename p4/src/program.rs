//! A P4 program as the switch runs it: every name of the BMv2 JSON resolved at load into
//! an index (a header instance, a field's slot in the packet's header vector, an action, a
//! table, a parser state), so that nothing is looked up by name per frame.

/// A value of a field or an expression: fields are at most 128 bits wide, and expressions
/// compute in 128-bit two's complement (p4c masks every result to its type's width, as
/// BMv2's infinite precision would leave it after the mask).
pub type Value = u128;

/// The mask of a `width`-bit value.
#[inline]
pub const fn mask(width: u32) -> Value {
    if width >= 128 {
        Value::MAX
    } else {
        (1 << width) - 1
    }
}

/// A header instance (or metadata struct), by number.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct HeaderId(pub u32);

/// A field's slot in the packet's header vector ([`crate::phv::Phv`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct FieldId(pub u32);

/// An action, by number (its index in the program's actions, not its JSON id).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ActionId(pub u32);

/// A match-action table, by number.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct TableId(pub u32);

/// A header stack, by number.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct StackId(pub u32);

/// A field of a header type: its name and width in bits.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FieldDef {
    pub name: String,
    pub width: u32,
}

/// A header type: its fields in wire order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HeaderType {
    pub name: String,
    pub fields: Vec<FieldDef>,
    /// Total width in bits (a header on the wire is whole bytes).
    pub bits: u32,
}

/// A header instance: its type, whether it is metadata (always valid, never on the wire),
/// and where its fields sit in the header vector.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Header {
    pub name: String,
    pub ty: usize,
    pub metadata: bool,
    /// The slot of its first field; the others follow in order.
    pub first: u32,
}

/// A header stack: its instances, in order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Stack {
    pub name: String,
    pub headers: Vec<HeaderId>,
}

/// A unary operation of an expression.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UnOp {
    /// Boolean not.
    Not,
    /// Bitwise not (`~`; p4c masks the result).
    Complement,
    /// Unary minus (`-x`, as `0 - x`).
    Negate,
    /// Data to boolean: nonzero is true.
    DataToBool,
    /// Boolean to data: 1 or 0.
    BoolToData,
}

/// A binary operation of an expression.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BinOp {
    Add,
    Sub,
    Mul,
    Shl,
    Shr,
    Eq,
    Ne,
    Gt,
    Ge,
    Lt,
    Le,
    And,
    Or,
    BitAnd,
    BitOr,
    BitXor,
}

/// An expression, evaluated against the packet's header vector and the running action's
/// data.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Expr {
    /// A constant.
    Const(Value),
    /// A field's value.
    Field(FieldId),
    /// Whether a header is valid (1 or 0).
    Valid(HeaderId),
    /// The running action's parameter (a table entry's action data).
    Param(u16),
    /// Bits of the packet ahead of the parser's cursor: offset and width in bits.
    Lookahead {
        offset: u32,
        width: u32,
    },
    /// A field of the last entry extracted into a stack (`hdr.stack.last.f`): the
    /// field's position in its header type.
    StackLast {
        stack: StackId,
        field: u32,
    },
    Unary(UnOp, Box<Expr>),
    Binary(BinOp, Box<Expr>, Box<Expr>),
    /// `cond ? left : right`.
    Ternary(Box<Expr>, Box<Expr>, Box<Expr>),
}

/// What a primitive writes: a field, masked to its width.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LValue {
    pub field: FieldId,
    pub width: u32,
}

/// One step of an action (a v1model primitive).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Primitive {
    /// `field = expr`, truncated to the field's width.
    Assign(LValue, Expr),
    /// `hdr.setValid()`: valid, its fields zeroed if it was not.
    SetValid(HeaderId),
    /// `hdr.setInvalid()`.
    SetInvalid(HeaderId),
    /// `dst = src` for whole headers (validity too).
    CopyHeader { dst: HeaderId, src: HeaderId },
    /// `mark_to_drop(standard_metadata)`: egress_spec to the drop port, no multicast.
    MarkToDrop,
    /// `exit`: the rest of the control is skipped.
    Exit,
    /// Go to the primitive at this index of the action.
    Jump(u32),
    /// Go to the primitive at this index when the expression is 0.
    JumpIfZero(Expr, u32),
    /// `stack.push_front(n)`: entries move up by n, the first n invalid.
    PushFront(StackId, u32),
    /// `stack.pop_front(n)`: entries move down by n, the last n invalid.
    PopFront(StackId, u32),
    /// `truncate(bytes)`: only this many bytes of the frame leave (headers included).
    Truncate(Expr),
    /// `hash(dst, algo, base, data, max)`: dst = base + (hash of data) mod max.
    Hash {
        dst: LValue,
        algo: HashAlgo,
        base: Expr,
        data: Vec<(Expr, u32)>,
        max: Expr,
    },
    /// `counter.count(index)` on an indirect counter array.
    Count { counter: u32, index: Expr },
    /// `register.read(dst, index)`.
    RegisterRead {
        dst: LValue,
        register: u32,
        index: Expr,
    },
    /// `register.write(index, value)`.
    RegisterWrite {
        register: u32,
        index: Expr,
        value: Expr,
    },
}

/// A hash or checksum algorithm BMv2 names.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HashAlgo {
    /// The Internet checksum: ones' complement of the ones' complement sum of 16-bit
    /// words.
    Csum16,
    /// CRC-16 (ARC: poly 0x8005 reflected, as BMv2's `crc16`).
    Crc16,
    /// CRC-32 (IEEE 802.3, as BMv2's `crc32`).
    Crc32,
    /// The data itself, truncated (BMv2's `identity`).
    Identity,
}

/// An action: its parameters' widths and its primitives.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Action {
    pub name: String,
    /// Each parameter's width in bits.
    pub params: Vec<u32>,
    /// Each parameter's name (as the control plane gives action data by name).
    pub param_names: Vec<String>,
    pub body: Vec<Primitive>,
}

/// How a key field is matched.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MatchKind {
    Exact,
    Lpm,
    Ternary,
    Range,
    /// P4's `optional`: exact, or anything (a ternary mask of all ones or zero).
    Optional,
}

/// One field of a table's key.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KeyField {
    /// Its name as the control plane gives it (`hdr.ipv4.dstAddr`).
    pub name: String,
    pub kind: MatchKind,
    /// What is matched: a field, or a header's validity.
    pub source: Expr,
    pub width: u32,
    /// A static mask applied before matching.
    pub mask: Option<Value>,
}

/// An action with its data, as an entry or a default holds it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ActionCall {
    pub action: ActionId,
    pub data: Vec<Value>,
}

/// Where control goes after a table: by the action it ran, or by hit and miss.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum NextAfter {
    /// The next node for each action the table may run (index = position in
    /// [`Table::actions`]).
    ByAction(Vec<Option<NodeId>>),
    HitMiss {
        hit: Option<NodeId>,
        miss: Option<NodeId>,
    },
}

/// A match-action table.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Table {
    pub name: String,
    pub key: Vec<KeyField>,
    /// The actions its entries may run.
    pub actions: Vec<ActionId>,
    pub next: NextAfter,
    /// What a miss runs when the control plane set none (an indirect table may have none:
    /// a miss then runs nothing).
    pub default: Option<ActionCall>,
    /// The control plane may not change the default action.
    pub default_const: bool,
    /// Entries the program fixes (`const entries`): the table takes no others.
    pub const_entries: Option<Vec<crate::tables::Entry>>,
    pub max_size: usize,
    /// How the entries are looked up (the widest match kind of its key).
    pub lookup: Lookup,
    /// An indirect table's action profile (its entries name members or groups).
    pub profile: Option<u32>,
    /// Its direct counter's name (`direct_counter`, `with_counters`): each entry counts
    /// the frames (and bytes) that hit it.
    pub direct_counter: Option<String>,
}

/// An action profile (`implementation = action_profile(N)`): members, each an action with
/// its data, that indirect tables' entries share; with a selector
/// (`action_selector(...)`), groups of members too, one chosen per frame by a hash.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ActionProfile {
    pub name: String,
    pub max_size: usize,
    pub selector: Option<Selector>,
}

/// How a selector picks a group's member: the hash of its inputs, modulo the group's
/// size, indexes the members in the order of their handles (as BMv2 does).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Selector {
    pub algo: HashAlgo,
    pub inputs: Vec<(Expr, u32)>,
}

/// How a table's entries are looked up.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Lookup {
    /// Every key field exact: one hash look-up.
    Exact,
    /// One LPM field: the longest prefix wins.
    Lpm,
    /// Ternary, range or optional fields: the entry of highest priority wins.
    Priority,
}

/// A node of a control's flow: a table applied, or a condition tested.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum NodeId {
    Table(TableId),
    Conditional(u32),
}

/// `if (expr)` in a control.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Conditional {
    pub name: String,
    pub expr: Expr,
    pub on_true: Option<NodeId>,
    pub on_false: Option<NodeId>,
}

/// A control (ingress or egress): where it starts.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Control {
    pub name: String,
    pub first: Option<NodeId>,
}

/// One step of a parser state.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ParserOp {
    /// Extract a header at the cursor.
    Extract(HeaderId),
    /// Extract into the next free entry of a stack.
    ExtractStack(StackId),
    /// `field = expr` (lookahead allowed).
    Set(LValue, Expr),
    /// `verify(cond, error)`: when false, the parser stops with that error.
    Verify(Expr, Expr),
    /// Skip this many bits (a multiple of 8).
    Advance(Expr),
    /// A primitive called from a parser state (`hdr.h.setValid()`, an assignment).
    Do(Primitive),
}

/// One part of a state's select key, each padded to whole bytes in the key.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SelectPart {
    pub source: Expr,
    pub width: u32,
}

/// A transition: when the key (masked) equals the value, go to `next` (None: accept).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Transition {
    /// None for the default transition.
    pub value: Option<(Value, Value)>,
    pub next: Option<u32>,
}

/// A parser state.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParseState {
    pub name: String,
    pub ops: Vec<ParserOp>,
    pub key: Vec<SelectPart>,
    pub transitions: Vec<Transition>,
}

/// A checksum the parser verifies and the deparser updates: `target = algo(inputs)`
/// when `condition` holds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Checksum {
    pub name: String,
    pub target: LValue,
    pub algo: HashAlgo,
    /// The fields (and constants) summed, each with its width in bits.
    pub inputs: Vec<(Expr, u32)>,
    pub condition: Option<Expr>,
    pub verify: bool,
    pub update: bool,
}

/// An indirect counter array.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CounterArray {
    pub name: String,
    pub size: usize,
}

/// A register array.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RegisterArray {
    pub name: String,
    pub size: usize,
    pub width: u32,
}

/// The fields of v1model's `standard_metadata` the architecture reads and writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StandardMetadata {
    pub header: HeaderId,
    pub ingress_port: FieldId,
    pub egress_spec: FieldId,
    pub egress_port: FieldId,
    pub instance_type: FieldId,
    pub packet_length: FieldId,
    pub enq_timestamp: FieldId,
    pub enq_qdepth: FieldId,
    pub deq_timedelta: FieldId,
    pub deq_qdepth: FieldId,
    pub ingress_global_timestamp: FieldId,
    pub egress_global_timestamp: FieldId,
    pub mcast_grp: FieldId,
    pub checksum_error: FieldId,
    pub parser_error: FieldId,
    pub priority: FieldId,
}

/// The error codes the parser raises, as the program numbers them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct ParserErrors {
    pub no_error: Value,
    pub packet_too_short: Value,
    pub no_match: Value,
    pub stack_out_of_bounds: Value,
}

/// A loaded program.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Program {
    pub header_types: Vec<HeaderType>,
    pub headers: Vec<Header>,
    pub stacks: Vec<Stack>,
    /// Each stack's entries' first slots.
    pub stack_slots: Vec<Vec<u32>>,
    /// Width of each header-vector slot.
    pub widths: Vec<u32>,
    /// The header each slot belongs to.
    pub owner: Vec<HeaderId>,
    pub parse_states: Vec<ParseState>,
    pub start: u32,
    pub deparse_order: Vec<HeaderId>,
    pub actions: Vec<Action>,
    pub tables: Vec<Table>,
    pub profiles: Vec<ActionProfile>,
    pub conditionals: Vec<Conditional>,
    pub ingress: Control,
    pub egress: Control,
    pub checksums: Vec<Checksum>,
    pub counters: Vec<CounterArray>,
    pub registers: Vec<RegisterArray>,
    pub std: StandardMetadata,
    pub errors: ParserErrors,
    /// Whether anything reads `standard_metadata.checksum_error`: when nothing does,
    /// verify_checksum cannot change what the program does, and is not run.
    pub checksum_error_read: bool,
}

impl Program {
    /// The table named `name` (its P4 name, as the control plane gives it; a unique
    /// suffix after a dot does too: `ipv4_lpm` for `MyIngress.ipv4_lpm`).
    pub fn table(&self, name: &str) -> Option<TableId> {
        find_by_name(self.tables.iter().map(|t| t.name.as_str()), name).map(|i| TableId(i as u32))
    }

    /// The action named `name` (or a unique suffix after a dot).
    pub fn action(&self, name: &str) -> Option<ActionId> {
        find_by_name(self.actions.iter().map(|a| a.name.as_str()), name).map(|i| ActionId(i as u32))
    }

    /// The action profile named `name` (or a unique suffix after a dot).
    pub fn profile(&self, name: &str) -> Option<usize> {
        find_by_name(self.profiles.iter().map(|a| a.name.as_str()), name)
    }

    /// The register array named `name` (or a unique suffix after a dot).
    pub fn register(&self, name: &str) -> Option<usize> {
        find_by_name(self.registers.iter().map(|r| r.name.as_str()), name)
    }

    /// The counter array named `name` (or a unique suffix after a dot).
    pub fn counter(&self, name: &str) -> Option<usize> {
        find_by_name(self.counters.iter().map(|c| c.name.as_str()), name)
    }
}

/// The index of `name` among `names`: the same name, else the one name ending in
/// `.name`.
fn find_by_name<'a>(names: impl Iterator<Item = &'a str> + Clone, name: &str) -> Option<usize> {
    if let Some(i) = names.clone().position(|n| n == name) {
        return Some(i);
    }
    let dotted = format!(".{name}");
    let mut found = names.enumerate().filter(|(_, n)| n.ends_with(&dotted));
    match (found.next(), found.next()) {
        (Some((i, _)), None) => Some(i),
        _ => None,
    }
}
