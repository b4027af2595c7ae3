//! # lossless-pipeline
//!
//! The packet path of the switch, P4/PSA shaped:
//!
//! ```text
//! parser → classify → ACL → forward (L2 FDB | L3 LPM + groups) → traffic manager
//!        (admit, PFC, WRED/ECN, enqueue, schedule) → egress rewrite → port
//! ```
//!
//! * [`packet`]: a frame (held bytes + declared length) and its metadata; [`buffers`]:
//!   frame buffers reused within a thread.
//! * [`wire`]: PFC / PAUSE, RoCEv2 (BTH, AETH) and VLAN codecs, in-place header edits.
//! * [`parser`]: frame bytes → header vector, or a [`drop_reason::DropReason`].
//! * [`acl`]: the ACL stage (SONiC ACL tables and rules, SAI semantics).
//! * [`forward`]: FDB and LPM tables; [`groups`]: next-hop group member choice, with
//!   [`dlb`] (flowlet quality and flow table) for dynamic load balancing.
//! * [`config`]: the typed switch configuration and its defaults; [`default_plan`]: the
//!   built-in buffer plan; [`presets`]: small ready-made switches for tests and benches.
//! * [`link`]: one port's link layer (the control frames it sends and takes, PFC or PAUSE
//!   both ways, when a frame may start), over its [`transmitter`] (wire, link state,
//!   counters); a switch port and a host NIC each own one.
//! * [`node`]: the interface every engine drives a switch or host through.
//! * [`switch`]: the sans-IO [`Switch`] an engine drives with explicit time; [`p4`]: a P4
//!   program in front of its traffic manager.

#![forbid(unsafe_code)]

pub mod acl;
pub mod buffers;
pub mod config;
pub mod counter_group;
pub mod counters;
pub mod default_plan;
pub mod dlb;
pub mod drop_reason;
pub mod forward;
pub mod groups;
pub mod link;
pub mod node;
pub mod p4;
pub mod packet;
pub mod parser;
pub mod port_set;
pub mod presets;
pub mod switch;
pub mod transmitter;
pub mod wire;

pub use link::LinkLayer;
pub use node::Node;
pub use packet::{Meta, Packet};
pub use port_set::PortSet;
pub use switch::Switch;
pub use transmitter::Transmitter;
