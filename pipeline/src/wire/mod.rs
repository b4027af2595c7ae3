//! Wire formats etherparse does not cover: MAC Control (PFC, PAUSE) and the RoCEv2 BTH,
//! plus the in-place header edits egress needs (ECN CE, TTL, PCP), and the MAC and ECN values
//! people write by hand ([`addr`]).

pub mod addr;
pub mod bth;
pub mod build;
pub mod edit;
pub mod pfc;
