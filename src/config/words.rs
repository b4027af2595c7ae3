//! Closed word lists only scenario files have (the others live next to their types in the
//! model crates): each an enum whose words are its [`Named`] list.

use lossless_buffer_model::Named;

/// Declare a closed word list: an enum and its words.
macro_rules! words {
    ($(#[$doc:meta])* $name:ident { $($(#[$vdoc:meta])* $variant:ident = $($word:literal)|+),+ $(,)? }) => {
        $(#[$doc])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        pub enum $name {
            $($(#[$vdoc])* $variant),+
        }
        impl Named for $name {
            const WORDS: &'static [(&'static str, $name)] = &[$($(($word, $name::$variant)),+),+];
        }
    };
}

words! {
    /// `outputs.timeseries.sample`.
    SampleWord {
        /// A row every `interval`.
        Interval = "interval",
        /// A row when a recorded value changes.
        Change = "change",
    }
}

words! {
    /// `outputs.timeseries.format`, the CSV layout.
    CsvFormat {
        /// One row per node, port, priority and sample (`time_ps,node,port,prio,…`).
        Long = "long",
        /// One row per sample, one column per series (`tor:Ethernet0:3:queue_bytes`, …).
        Wide = "wide",
    }
}

words! {
    /// `pools.*.mode`.
    PoolMode {
        /// Users' limits are static_th bytes.
        Static = "static",
        /// Users' limits are dynamic thresholds (α).
        Dynamic = "dynamic",
    }
}

words! {
    /// `qos.scheduler.*.type`.
    SchedKind {
        /// Strict priority.
        Strict = "strict",
        /// Deficit weighted round robin.
        Dwrr = "dwrr",
    }
}

words! {
    /// `wred_profiles.*.ecn`: which colours are marked instead of dropped.
    EcnMode {
        /// None.
        None = "ecn_none",
        /// Green.
        Green = "ecn_green",
        /// Yellow.
        Yellow = "ecn_yellow",
        /// Red.
        Red = "ecn_red",
        /// Green and yellow.
        GreenYellow = "ecn_green_yellow",
        /// Green and red.
        GreenRed = "ecn_green_red",
        /// Yellow and red.
        YellowRed = "ecn_yellow_red",
        /// All colours.
        All = "ecn_all",
    }
}

impl EcnMode {
    /// Bitmap of colours marked: green 1, yellow 2, red 4.
    pub fn colors(self) -> u8 {
        match self {
            EcnMode::None => 0,
            EcnMode::Green => 0b001,
            EcnMode::Yellow => 0b010,
            EcnMode::Red => 0b100,
            EcnMode::GreenYellow => 0b011,
            EcnMode::GreenRed => 0b101,
            EcnMode::YellowRed => 0b110,
            EcnMode::All => 0b111,
        }
    }
}

words! {
    /// `forwarding.mode`.
    ForwardingMode {
        /// MAC learning and flooding.
        L2 = "l2",
        /// Longest-prefix-match routing.
        L3 = "l3",
    }
}

words! {
    /// `flows[].protocol`.
    Protocol {
        /// Plain UDP.
        Udp = "udp",
        /// RoCEv2: a BTH on UDP 4791.
        Rocev2 = "rocev2",
        /// TCP, on the hosts' smoltcp stacks.
        Tcp = "tcp",
    }
}

words! {
    /// `flows[].pattern`.
    PatternKind {
        /// Always backlogged.
        Greedy = "greedy",
        /// Constant bit rate.
        Cbr = "cbr",
        /// On/off periods.
        Onoff = "onoff",
    }
}

words! {
    /// `events[].tx`.
    TxState {
        /// Transmitter on.
        Enable = "enable",
        /// Transmitter off (frames wait).
        Disable = "disable",
    }
}

words! {
    /// `events[].link`.
    LinkState {
        /// Link up.
        Up = "up",
        /// Link down (queued and in-flight frames are lost).
        Down = "down",
    }
}

words! {
    /// `flows[].transport`.
    TransportKind {
        /// Frames leave as the pattern allows; a lost one is gone.
        OpenLoop = "open_loop",
        /// RoCEv2 Reliable Connection: ACKs, NAKs, recovery.
        Rc = "rc",
    }
}

words! {
    /// `collectives[].kind`.
    CollectiveWord {
        /// Every rank ends with the sum of all ranks' buffers.
        AllReduce = "allreduce",
        /// Every rank sends a distinct block to each other rank.
        AllToAll = "alltoall",
    }
}

words! {
    /// `collectives[].algorithm`.
    AlgorithmWord {
        /// Reduce-scatter then all-gather around a ring.
        Ring = "ring",
    }
}

words! {
    /// `collectives[].transport`.
    CollectiveTransport {
        /// RoCEv2 Reliable Connection queue pairs.
        Rc = "rc",
        /// TCP connections on the hosts' smoltcp stacks.
        Tcp = "tcp",
    }
}

words! {
    /// `events[].lose.frames` / `events[].corrupt.frames`: which frames a wire fault hits.
    FaultKind {
        /// Data frames (replays under LLR included).
        Data = "data",
        /// CBFC CF_Updates.
        CfUpdate = "cf_update",
        /// CBFC CC_Updates.
        CcUpdate = "cc_update",
        /// LLR ACKs.
        LlrAck = "llr_ack",
        /// LLR NACKs.
        LlrNack = "llr_nack",
        /// LLR INITs.
        LlrInit = "llr_init",
        /// LLR INIT_ECHOs.
        LlrInitEcho = "llr_init_echo",
        /// IEEE 802.1Qbb PFC frames.
        Pfc = "pfc",
        /// IEEE 802.3x PAUSE frames.
        Pause = "pause",
        /// Every frame, of any kind.
        Any = "any",
    }
}

words! {
    /// `flows[].ip`: the IP version of a flow's frames.
    IpVersion {
        /// IPv4.
        V4 = "v4" | "ipv4",
        /// IPv6 (addresses 2001:db8::/96 with the hosts' IPv4 addresses in the last 32 bits).
        V6 = "v6" | "ipv6",
    }
}
