//! One description per group of counters: each counter's key (its JSON and Prometheus
//! name), its SAI name and what it counts, written once next to the field that holds it.
//! The JSON report, the Prometheus exposition and the text tables all read the
//! description, so a new counter is one line here and nowhere else.
//!
//! ```
//! lossless_pipeline::counter_group! {
//!     /// Example counters of one port.
//!     pub struct Example {
//!         /// Frames sent.
//!         tx_frames: Counter = "SAI_PORT_STAT_IF_OUT_UCAST_PKTS",
//!         /// Most frames ever queued.
//!         frames_watermark: Gauge = "SAI_QUEUE_STAT_WATERMARK_PKTS",
//!     }
//! }
//! use lossless_pipeline::counter_group::CounterGroup;
//! let e = Example { tx_frames: 3, frames_watermark: 2 };
//! assert_eq!(Example::DEFS[0].key, "tx_frames");
//! assert_eq!(e.values().collect::<Vec<_>>(), [3, 2]);
//! ```

/// Whether a value only grows (a counter) or goes up and down (a gauge, a watermark).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// Only grows while the switch runs (Prometheus `counter`, name ending in `_total`).
    Counter,
    /// A level or a watermark (Prometheus `gauge`).
    Gauge,
}

/// What one counter is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CounterDef {
    /// Its name in the JSON report and, prefixed, in Prometheus (snake case).
    pub key: &'static str,
    /// The SAI statistic it corresponds to.
    pub sai: &'static str,
    /// What it counts, in a sentence.
    pub help: &'static str,
    /// Counter or gauge.
    pub kind: Kind,
}

/// A group of counters with one description.
pub trait CounterGroup {
    /// Each counter, in the order the report lists them.
    const DEFS: &'static [CounterDef];
    /// The value of counter `i` of [`Self::DEFS`].
    fn value(&self, i: usize) -> u64;
    /// Every value, in the order of [`Self::DEFS`].
    fn values(&self) -> impl Iterator<Item = u64> + '_ {
        (0..Self::DEFS.len()).map(|i| self.value(i))
    }
    /// Is every value zero (a feature that never ran)?
    fn is_zero(&self) -> bool {
        self.values().all(|v| v == 0)
    }
}

/// Declare a group of `u64` counters and its description: each field's doc comment is
/// its help text, `Counter` or `Gauge` its kind, the string its SAI name.
#[macro_export]
macro_rules! counter_group {
    (
        $(#[$meta:meta])*
        pub struct $name:ident {
            $(
                #[doc = $help:literal]
                $field:ident : $kind:ident = $sai:literal
            ),* $(,)?
        }
    ) => {
        $(#[$meta])*
        #[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
        pub struct $name {
            $(
                #[doc = $help]
                pub $field: u64,
            )*
        }

        impl $crate::counter_group::CounterGroup for $name {
            const DEFS: &'static [$crate::counter_group::CounterDef] = &[
                $(
                    $crate::counter_group::CounterDef {
                        key: stringify!($field),
                        sai: $sai,
                        help: $help.trim_ascii(),
                        kind: $crate::counter_group::Kind::$kind,
                    },
                )*
            ];
            fn value(&self, i: usize) -> u64 {
                [$(self.$field),*][i]
            }
        }

        impl core::ops::AddAssign<&$name> for $name {
            /// Sum another group's counters into this one (a port's into its switch's).
            /// Gauges are summed too: sums of watermarks are bounds, not watermarks.
            fn add_assign(&mut self, o: &$name) {
                $( self.$field += o.$field; )*
            }
        }
    };
}
