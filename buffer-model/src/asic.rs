//! The memory manager's ASIC-specific choices: where a lossless PG stores the packet that
//! crosses its limit, and which limit its XON is measured from. Switch chips differ here
//! (docs/physics.md, "Where the crossing packet goes"); `generic` is the default of each.

/// Where a lossless PG stores the packet that crosses its shared limit (the one that
/// turns XOFF on): an ASIC property (docs/physics.md, "Where the crossing packet goes").
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Crossing {
    /// In headroom, as every later packet (Tomahawk 2; `generic`).
    #[default]
    Headroom,
    /// In shared space, over the limit by that packet, if the pool has the room; later
    /// packets go to headroom (Tomahawk 1, as SONiC's QoS test counts show).
    Shared,
}

impl crate::named::Named for Crossing {
    const WORDS: &'static [(&'static str, Crossing)] = &[
        ("headroom", Crossing::Headroom),
        ("shared", Crossing::Shared),
    ];
}

/// Which limit a lossless PG's XON level `max(xon, limit − xon_offset)` is taken from.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum XonLimit {
    /// The dynamic limit as it is now (it rises as the pool drains; `generic`).
    #[default]
    Live,
    /// The limit when XOFF was decided, fixed until XON (SONiC's nominal XON counts).
    Latched,
}

impl crate::named::Named for XonLimit {
    const WORDS: &'static [(&'static str, XonLimit)] =
        &[("live", XonLimit::Live), ("latched", XonLimit::Latched)];
}

/// The MMU's ASIC-specific choices.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Behaviour {
    /// Where the crossing packet goes.
    pub crossing: Crossing,
    /// The limit XON is measured from.
    pub xon_limit: XonLimit,
}
