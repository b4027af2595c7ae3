//! Why a frame was dropped (or consumed without being forwarded). Every frame the switch
//! receives is either forwarded, consumed as a PFC frame, or counted under one reason.

macro_rules! reasons {
    ($($variant:ident => $name:literal, $doc:literal;)*) => {
        /// Reasons a frame is dropped, each with a stable snake_case name (JSON key).
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum DropReason {
            $(#[doc = $doc] $variant,)*
        }

        impl DropReason {
            /// All reasons, in counter order.
            pub const ALL: &'static [DropReason] = &[$(DropReason::$variant,)*];
            /// Number of reasons.
            pub const COUNT: usize = Self::ALL.len();

            /// Stable snake_case name used in reports.
            pub const fn name(self) -> &'static str {
                match self { $(DropReason::$variant => $name,)* }
            }
        }
    };
}

reasons! {
    Runt => "runt", "Frame shorter than 64 bytes (FCS included).";
    Giant => "giant", "Frame longer than the port MTU.";
    BadLength => "bad_length", "Declared length shorter than the bytes held plus FCS.";
    TruncatedEthernet => "truncated_ethernet", "Fewer than 14 bytes of Ethernet header.";
    TruncatedVlan => "truncated_vlan", "A VLAN tag cut short.";
    TruncatedIpv4 => "truncated_ipv4", "IPv4 header (with options) not all present.";
    Ipv4BadVersion => "ipv4_bad_version", "EtherType 0x0800 but IP version is not 4.";
    Ipv4BadIhl => "ipv4_bad_ihl", "IPv4 IHL below 5.";
    Ipv4BadTotalLength => "ipv4_bad_total_length", "IPv4 total length below the header length (beyond the frame is a trimmed packet, forwarded).";
    TruncatedIpv6 => "truncated_ipv6", "IPv6 header not all present.";
    Ipv6BadVersion => "ipv6_bad_version", "EtherType 0x86DD but IP version is not 6.";
    TruncatedUdp => "truncated_udp", "UDP header not all held, or not within the IP payload.";
    UdpBadLength => "udp_bad_length", "UDP length below 8 (0 outside an IPv6 jumbogram) or beyond the IP payload.";
    TruncatedTcp => "truncated_tcp", "TCP header (with options) not all held, or not within the IP payload.";
    TcpBadDataOffset => "tcp_bad_data_offset", "TCP data offset below 5.";
    TruncatedBth => "truncated_bth", "UDP port 4791 without a whole 12-byte RoCEv2 BTH.";
    TruncatedMacControl => "truncated_mac_control", "MAC Control frame without its opcode and parameters (the bytes a host's MAC pads a short frame with are not parameters).";
    PfcBadDestination => "pfc_bad_destination", "PFC frame not sent to 01:80:C2:00:00:01.";
    PfcTooShort => "pfc_too_short", "PFC frame shorter than 64 bytes.";
    PfcNotEnabled => "pfc_not_enabled", "PFC frame enabling no PFC-enabled priority of this port.";
    Pause8023xIgnored => "pause_8023x_ignored", "802.3x PAUSE on a PFC port: counted and ignored.";
    MacControlUnknownOpcode => "mac_control_unknown_opcode", "MAC Control opcode other than PAUSE or PFC.";
    MacControlTagged => "mac_control_tagged", "MAC Control EtherType behind a VLAN tag.";
    TruncatedLinkControl => "truncated_link_control", "Link-control message (EtherType 0x88B5, on a port that speaks CBFC or LLR) shorter than its type needs.";
    LinkControlBadVersion => "link_control_bad_version", "Link-control message (EtherType 0x88B5, on a port that speaks CBFC or LLR) of a version other than 1.";
    LinkControlUnknownType => "link_control_unknown_type", "Link-control message (EtherType 0x88B5, on a port that speaks CBFC or LLR) of a type the encoding does not define.";
    LinkControlBadChannel => "link_control_bad_channel", "CF_Update (EtherType 0x88B5, on a port that speaks CBFC or LLR) for a channel beyond the 32 CBFC has.";
    LinkControlBadCheck => "link_control_bad_check", "Link-control message (EtherType 0x88B5, on a port that speaks CBFC or LLR) whose CRC-32 does not match: bits changed on the way.";
    CbfcNotEnabled => "cbfc_not_enabled", "CBFC credit message on a port that does not speak CBFC.";
    LlrNotEnabled => "llr_not_enabled", "LLR control message or numbered frame on a port that does not speak LLR.";
    BadFcs => "bad_fcs", "FCS check failed: the frame was corrupted on the wire (a frame error).";
    LlrDiscard => "llr_discard", "Discarded by link-level retry: a duplicate, or a frame after a gap or a bad frame (the sender replays it).";
    Poisoned => "poisoned", "Poisoned by its sender (LLR: dropped, never retried).";
    LlrTxDiscard => "llr_tx_discard", "Dropped at egress: LLR could not retry (initialising or flushed) and its action is `discard`.";
    SamePort => "same_port", "Destination is the port the frame came in on.";
    NoRoute => "no_route", "No L3 route matches the destination.";
    NotIp => "not_ip", "Non-IP frame on an L3 (routed) switch.";
    TtlExpired => "ttl_expired", "TTL or hop limit would reach 0.";
    PortDown => "port_down", "Egress port's link is down.";
    IngressLimit => "ingress_limit", "Lossy PG over its shared limit.";
    HeadroomFull => "headroom_full", "Lossless PG headroom exhausted (a lossless drop).";
    EgressLimit => "egress_limit", "Egress queue over its shared limit.";
    Wred => "wred", "WRED drop of a non-ECT packet.";
    Watchdog => "pfc_watchdog", "Discarded by the PFC watchdog's drop action.";
    Acl => "acl", "Dropped by an ACL rule (PACKET_ACTION drop).";
    P4Drop => "p4_drop", "Dropped by the switch's P4 program (mark_to_drop, or egress_spec left at the drop port 511), in ingress or egress.";
    P4BadPort => "p4_bad_port", "The switch's P4 program sent the frame to a port the switch does not have.";
    P4Multicast => "p4_multicast", "The switch's P4 program sent the frame to a multicast group (not supported yet).";
}

/// Counters of dropped frames per reason.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DropCounters([u64; DropReason::COUNT]);

impl Default for DropCounters {
    fn default() -> Self {
        DropCounters([0; DropReason::COUNT])
    }
}

impl DropCounters {
    /// Count one frame dropped for `r`.
    pub fn count(&mut self, r: DropReason) {
        self.0[r as usize] += 1;
    }
    /// Frames dropped for `r`.
    pub fn get(&self, r: DropReason) -> u64 {
        self.0[r as usize]
    }
    /// All frames dropped.
    pub fn total(&self) -> u64 {
        self.0.iter().sum()
    }
    /// (reason, count) for every reason with a nonzero count.
    pub fn nonzero(&self) -> impl Iterator<Item = (DropReason, u64)> + '_ {
        DropReason::ALL
            .iter()
            .map(|r| (*r, self.get(*r)))
            .filter(|(_, n)| *n > 0)
    }
}
