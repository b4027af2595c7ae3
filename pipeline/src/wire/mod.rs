//! Wire formats etherparse does not cover: MAC Control (PFC, PAUSE), this project's
//! encoding of the UE link-control messages ([`link_control`]), the RoCEv2 transport
//! headers (BTH, AETH) and VLAN tag ids, plus the in-place header edits egress needs (ECN
//! CE, TTL, PCP), the header builder of generated frames, and the MAC and ECN values people
//! write by hand ([`addr`]).

pub mod addr;
pub mod build;
pub mod checksum;
pub mod edit;
pub mod gso;
pub mod link_control;
pub mod pfc;
pub mod rocev2;
pub mod vlan;
