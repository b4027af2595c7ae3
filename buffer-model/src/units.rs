//! Units of the switch model: time in picoseconds, rates in bits per second, sizes in bytes,
//! cable lengths in metres. Parsing accepts the spellings of the scenario files
//! (`100G`, `16MB`, `32KiB`, `1.5ms`, `2m`); display picks a readable unit.

use core::fmt;
use core::ops::{Add, AddAssign, Sub, SubAssign};

/// Bytes a frame occupies on the wire besides its own length: preamble + SFD (8) and the
/// minimum inter-frame gap (12).
pub const WIRE_OVERHEAD: u64 = 20;

/// Propagation delay of one metre of cable (fibre or twinax, ≈ 1.98e8 m/s): 5 ns.
pub const PROPAGATION_PER_METRE: Time = Time(5_000);

/// A point in time or a duration, in picoseconds (exact at 800G, where a bit is 1.25 ps).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Time(pub u64);

impl Time {
    /// Time zero, the start of a run.
    pub const ZERO: Time = Time(0);
    /// The end of all time; used as "never".
    pub const MAX: Time = Time(u64::MAX);

    /// `n` picoseconds.
    pub const fn from_ps(n: u64) -> Time {
        Time(n)
    }
    /// `n` nanoseconds.
    pub const fn from_ns(n: u64) -> Time {
        Time(n * 1_000)
    }
    /// `n` microseconds.
    pub const fn from_us(n: u64) -> Time {
        Time(n * 1_000_000)
    }
    /// `n` milliseconds.
    pub const fn from_ms(n: u64) -> Time {
        Time(n * 1_000_000_000)
    }
    /// Picoseconds.
    pub const fn as_ps(self) -> u64 {
        self.0
    }
    /// Seconds as a float (for reports).
    pub fn as_secs_f64(self) -> f64 {
        self.0 as f64 * 1e-12
    }
    /// `self + d`, saturating at [`Time::MAX`].
    pub const fn saturating_add(self, d: Time) -> Time {
        Time(self.0.saturating_add(d.0))
    }
    /// `self - d`, saturating at zero.
    pub const fn saturating_sub(self, d: Time) -> Time {
        Time(self.0.saturating_sub(d.0))
    }
    /// A wall-clock span as model time, to the nanosecond (saturating at [`Time::MAX`]).
    pub const fn from_duration(d: core::time::Duration) -> Time {
        let ns = d.as_nanos();
        if ns > (u64::MAX / 1_000) as u128 {
            Time::MAX
        } else {
            Time(ns as u64 * 1_000)
        }
    }
    /// As a wall-clock span, to the nanosecond (rounded down).
    pub const fn to_duration(self) -> core::time::Duration {
        core::time::Duration::from_nanos(self.0 / 1_000)
    }
}

impl Add for Time {
    type Output = Time;
    fn add(self, rhs: Time) -> Time {
        Time(self.0 + rhs.0)
    }
}
impl AddAssign for Time {
    fn add_assign(&mut self, rhs: Time) {
        self.0 += rhs.0;
    }
}
impl Sub for Time {
    type Output = Time;
    fn sub(self, rhs: Time) -> Time {
        Time(self.0 - rhs.0)
    }
}
impl SubAssign for Time {
    fn sub_assign(&mut self, rhs: Time) {
        self.0 -= rhs.0;
    }
}

impl fmt::Display for Time {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let ps = self.0;
        let (div, unit) = if ps >= 1_000_000_000_000 {
            (1e12, "s")
        } else if ps >= 1_000_000_000 {
            (1e9, "ms")
        } else if ps >= 1_000_000 {
            (1e6, "us")
        } else if ps >= 1_000 {
            (1e3, "ns")
        } else {
            return write!(f, "{ps}ps");
        };
        write_trimmed(f, ps as f64 / div, unit)
    }
}

/// Picoseconds in a second.
const PS_PER_S: u64 = 1_000_000_000_000;

/// A link or drain rate in bits per second.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Rate(pub u64);

impl Rate {
    /// `n` Gb/s.
    pub const fn gbps(n: u64) -> Rate {
        Rate(n * 1_000_000_000)
    }
    /// `n` Mb/s.
    pub const fn mbps(n: u64) -> Rate {
        Rate(n * 1_000_000)
    }
    /// Bits per second.
    pub const fn bps(self) -> u64 {
        self.0
    }
    /// Time to send `bits` bits at this rate, rounded to the nearest picosecond
    /// (exact for every standard Ethernet speed).
    pub fn time_for_bits(self, bits: u64) -> Time {
        let r = self.0.max(1);
        // In 64 bits when nothing overflows (every frame; the wide division is a library
        // call costing tens of instructions, on every hop); the same result either way.
        if let Some(num) = bits
            .checked_mul(PS_PER_S)
            .and_then(|n| n.checked_add(r / 2))
        {
            return Time(num / r);
        }
        let num = bits as u128 * PS_PER_S as u128;
        let r = r as u128;
        Time(((num + r / 2) / r) as u64)
    }
    /// Time to send `bytes` bytes at this rate.
    pub fn time_for_bytes(self, bytes: u64) -> Time {
        self.time_for_bits(bytes * 8)
    }
    /// Shortest time in which this rate moves at least `bytes` bytes (rounded up, so that
    /// `bytes_in(time_for_bytes_ceil(b)) >= b`).
    pub fn time_for_bytes_ceil(self, bytes: u64) -> Time {
        let r = self.0.max(1);
        if let Some(num) = bytes.checked_mul(8 * PS_PER_S) {
            return Time(num.div_ceil(r));
        }
        let num = bytes as u128 * 8 * PS_PER_S as u128;
        Time(num.div_ceil(r as u128) as u64)
    }
    /// How long a frame of `len` bytes (FCS included) occupies the wire: `(len + 20) × 8`
    /// bit times (preamble, SFD and inter-frame gap included).
    pub fn wire_time(self, len: u64) -> Time {
        self.time_for_bytes(len + WIRE_OVERHEAD)
    }
    /// Length of a pause of `quanta` pause quanta (512 bit times each) at this rate.
    pub fn pause_time(self, quanta: u16) -> Time {
        self.time_for_bits(quanta as u64 * 512)
    }
    /// Bytes this rate moves in `t` (floor).
    pub fn bytes_in(self, t: Time) -> u64 {
        // ⌊⌊a / 8⌋ / 10¹²⌋ = ⌊a / (8 × 10¹²)⌋: one division, in 64 bits when a fits.
        match self.0.checked_mul(t.0) {
            Some(a) => a / (8 * PS_PER_S),
            None => (self.0 as u128 * t.0 as u128 / (8 * PS_PER_S as u128)) as u64,
        }
    }
}

/// A port's wire time per frame length ([`Rate::wire_time`]), remembering the last length
/// asked: a port's frames mostly have one length (a flow's, a PFC frame's), so most frames
/// cost a compare instead of a division.
#[derive(Clone, Copy, Debug)]
pub struct WireTimes {
    speed: Rate,
    /// The last length asked and its wire time.
    last: (u64, Time),
}

impl WireTimes {
    /// Wire times at `speed`.
    pub fn new(speed: Rate) -> WireTimes {
        WireTimes {
            speed,
            last: (0, speed.wire_time(0)),
        }
    }

    /// The port's line rate.
    pub fn speed(&self) -> Rate {
        self.speed
    }

    /// How long a frame of `len` bytes (FCS included) occupies the wire at this speed.
    #[inline]
    pub fn of(&mut self, len: u64) -> Time {
        if self.last.0 != len {
            self.last = (len, self.speed.wire_time(len));
        }
        self.last.1
    }
}

impl fmt::Display for Rate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let b = self.0;
        let (div, unit) = if b >= 1_000_000_000_000 {
            (1e12, "T")
        } else if b >= 1_000_000_000 {
            (1e9, "G")
        } else if b >= 1_000_000 {
            (1e6, "M")
        } else if b >= 1_000 {
            (1e3, "K")
        } else {
            return write!(f, "{b}bps");
        };
        write_trimmed(f, b as f64 / div, unit)
    }
}

/// A size in bytes (buffers, thresholds, frames). Frame sizes count the 4-byte FCS.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Bytes(pub u64);

impl Bytes {
    /// The largest size a file may give (a buffer, a flow, a frame): 1 TiB, far above any
    /// switch buffer (a Tomahawk 5 has 165 MB) and any flow a run moves, and small enough
    /// that sums of sizes never overflow.
    pub const MAX_SIZE: Bytes = Bytes(1 << 40);

    /// For a reader: exact below 10,000 bytes, then KB, MB or GB (1000s) with three
    /// decimals at most ("1518B", "32.768KB", "750.126MB").
    pub fn approx(self) -> String {
        let b = self.0;
        let (div, unit) = match b {
            0..10_000 => return format!("{b}B"),
            10_000..10_000_000 => (1e3, "KB"),
            10_000_000..10_000_000_000 => (1e6, "MB"),
            _ => (1e9, "GB"),
        };
        let text = format!("{:.3}", b as f64 / div);
        let text = text.trim_end_matches('0').trim_end_matches('.');
        format!("{text}{unit}")
    }

    /// `n` kibibytes.
    pub const fn kib(n: u64) -> Bytes {
        Bytes(n * 1024)
    }
    /// Number of bytes.
    pub const fn get(self) -> u64 {
        self.0
    }
    /// Cells of `cell` bytes needed to hold this many bytes (rounded up).
    pub const fn cells(self, cell: Bytes) -> u64 {
        self.0.div_ceil(cell.0)
    }
}

impl Add for Bytes {
    type Output = Bytes;
    fn add(self, rhs: Bytes) -> Bytes {
        Bytes(self.0 + rhs.0)
    }
}

impl fmt::Display for Bytes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let b = self.0;
        if b >= 1 << 20 && b.is_multiple_of(1 << 20) {
            write!(f, "{}MiB", b >> 20)
        } else if b >= 1_000_000 && b.is_multiple_of(1_000_000) {
            write!(f, "{}MB", b / 1_000_000)
        } else if b >= 1024 && b.is_multiple_of(1024) {
            write!(f, "{}KiB", b >> 10)
        } else if b >= 1000 && b.is_multiple_of(1000) {
            write!(f, "{}KB", b / 1000)
        } else {
            write!(f, "{b}B")
        }
    }
}

/// A cable length in millimetres (propagation is 5 ns per metre).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Length(pub u64);

impl Length {
    /// One-way propagation delay over this cable.
    pub fn propagation(self) -> Time {
        Time(self.0 * PROPAGATION_PER_METRE.0 / 1000)
    }
}

impl fmt::Display for Length {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write_trimmed(f, self.0 as f64 / 1000.0, "m")
    }
}

fn write_trimmed(f: &mut fmt::Formatter<'_>, v: f64, unit: &str) -> fmt::Result {
    let s = format!("{v:.3}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    write!(f, "{s}{unit}")
}

/// Why a unit string did not parse.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnitError {
    /// The text that was given.
    pub input: String,
    /// What was expected, e.g. "a rate such as 100G, 25G or 400M".
    pub expected: &'static str,
}

impl fmt::Display for UnitError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "`{}` is not {}", self.input, self.expected)
    }
}

impl std::error::Error for UnitError {}

/// Splits "1.5ms" into (1.5 as an exact decimal, "ms").
fn split_number(s: &str) -> Option<(Decimal, &str)> {
    let s = s.trim();
    let end = s
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(s.len());
    let (num, unit) = s.split_at(end);
    Some((Decimal::parse(num)?, unit.trim()))
}

/// A non-negative decimal kept exact as mantissa / 10^scale.
#[derive(Clone, Copy)]
struct Decimal {
    mantissa: u128,
    scale: u32,
}

impl Decimal {
    fn parse(s: &str) -> Option<Decimal> {
        if s.is_empty() || s == "." {
            return None;
        }
        let (int, frac) = match s.split_once('.') {
            Some((i, f)) => (i, f),
            None => (s, ""),
        };
        if frac.contains('.') || frac.len() > 12 || int.len() > 20 {
            return None;
        }
        let digits = format!("{int}{frac}");
        let mantissa: u128 = if digits.is_empty() {
            0
        } else {
            digits.parse().ok()?
        };
        Some(Decimal {
            mantissa,
            scale: frac.len() as u32,
        })
    }

    /// `self × mult` if that is a whole number that fits in u64.
    fn times(self, mult: u128) -> Option<u64> {
        let p = self.mantissa.checked_mul(mult)?;
        let d = 10u128.pow(self.scale);
        if p % d != 0 {
            return None;
        }
        u64::try_from(p / d).ok()
    }
}

impl core::str::FromStr for Time {
    type Err = UnitError;
    /// Parses `500ns`, `1.5ms`, `5us`, `2s`, `100ps`. A bare `0` is zero.
    fn from_str(s: &str) -> Result<Time, UnitError> {
        let err = || UnitError {
            input: s.to_string(),
            expected: "a time such as 500ns, 5us, 1.5ms or 2s",
        };
        let (n, unit) = split_number(s).ok_or_else(err)?;
        let mult: u128 = match unit {
            "ps" => 1,
            "ns" => 1_000,
            "us" | "µs" => 1_000_000,
            "ms" => 1_000_000_000,
            "s" => 1_000_000_000_000,
            "" if n.mantissa == 0 => 1,
            _ => return Err(err()),
        };
        n.times(mult).map(Time).ok_or_else(err)
    }
}

impl core::str::FromStr for Rate {
    type Err = UnitError;
    /// Parses bits per second with an SI prefix and an optional bit unit, all alike:
    /// `100G`, `100Gb`, `100Gbps`, `100Gb/s`, `100Gbit/s`; also `400M`, `1.5G`, `800K`, `1T`.
    /// Zero is refused: a link, a flow or a step of 0 b/s is a mistake.
    fn from_str(s: &str) -> Result<Rate, UnitError> {
        parse_rate(s, false)
    }
}

/// A rate that may be zero: how fast a host's software reads its receive buffer, where 0
/// is a receiver that stopped reading.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RateOrZero(pub Rate);

impl core::str::FromStr for RateOrZero {
    type Err = UnitError;
    /// As [`Rate`]'s, and `0` (or `0G`, …) too.
    fn from_str(s: &str) -> Result<RateOrZero, UnitError> {
        parse_rate(s, true).map(RateOrZero)
    }
}

/// Bits per second, as [`Rate`]'s parser reads them; 0 only when `zero_ok`.
fn parse_rate(s: &str, zero_ok: bool) -> Result<Rate, UnitError> {
    let err = || UnitError {
        input: s.to_string(),
        expected: if zero_ok {
            "a rate in bits per second such as 100G, 100Gb/s or 0 (prefix K, M, G or T)"
        } else {
            "a rate in bits per second such as 100G, 100Gb, 100Gbps, 100Gb/s or \
             100Gbit/s (prefix K, M, G or T)"
        },
    };
    let (n, unit) = split_number(s).ok_or_else(err)?;
    if unit.is_empty() && !(zero_ok && n.mantissa == 0) {
        // `speed: 100` is almost never 100 bit/s: a rate says its unit.
        return Err(UnitError {
            input: s.to_string(),
            expected: if zero_ok {
                "a rate with its unit, such as 100G for 100 Gb/s (a bare number has none: \
                 write 100b/s for bits per second; 0 alone stops)"
            } else {
                "a rate with its unit, such as 100G for 100 Gb/s (a bare number has none: \
                 write 100b/s if you mean bits per second)"
            },
        });
    }
    let prefix = ["bits/s", "bit/s", "bps", "b/s", "bit", "b"]
        .iter()
        .find_map(|suffix| unit.strip_suffix(suffix))
        .unwrap_or(unit);
    let mult: u128 = match prefix {
        "" => 1,
        "K" | "k" => 1_000,
        "M" => 1_000_000,
        "G" | "g" => 1_000_000_000,
        "T" | "t" => 1_000_000_000_000,
        _ => return Err(err()),
    };
    match n.times(mult) {
        Some(0) if zero_ok => Ok(Rate(0)),
        Some(0) | None => Err(err()),
        Some(v) => Ok(Rate(v)),
    }
}

impl core::str::FromStr for Bytes {
    type Err = UnitError;
    /// Parses `1518`, `1518B`, `32KiB`, `16MB`, `2.5MiB`, `1GB`, `1TB` (KB = 1000,
    /// KiB = 1024), at most [`Bytes::MAX_SIZE`] however it is written.
    fn from_str(s: &str) -> Result<Bytes, UnitError> {
        let err = || UnitError {
            input: s.to_string(),
            expected: "a size such as 1518B, 32KiB (1024) or 16MB (1000), at most 1TiB",
        };
        let (n, unit) = split_number(s).ok_or_else(err)?;
        let mult: u128 = match unit {
            "" | "B" => 1,
            "KB" | "kB" => 1_000,
            "KiB" => 1 << 10,
            "MB" => 1_000_000,
            "MiB" => 1 << 20,
            "GB" => 1_000_000_000,
            "GiB" => 1 << 30,
            "TB" => 1_000_000_000_000,
            "TiB" => 1 << 40,
            _ => return Err(err()),
        };
        n.times(mult)
            .filter(|b| *b <= Bytes::MAX_SIZE.0)
            .map(Bytes)
            .ok_or_else(err)
    }
}

impl core::str::FromStr for Length {
    type Err = UnitError;
    /// Parses `2m`, `0.5m`, `100m`, `30cm`, `1km`.
    fn from_str(s: &str) -> Result<Length, UnitError> {
        let err = || UnitError {
            input: s.to_string(),
            expected: "a cable length such as 2m, 0.5m or 1km",
        };
        let (n, unit) = split_number(s).ok_or_else(err)?;
        let mult: u128 = match unit {
            "mm" => 1,
            "cm" => 10,
            "m" => 1_000,
            "km" => 1_000_000,
            _ => return Err(err()),
        };
        n.times(mult).map(Length).ok_or_else(err)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wall_clock_spans_convert_to_the_nanosecond_and_saturate() {
        use core::time::Duration;
        assert_eq!(
            Time::from_duration(Duration::from_micros(5)),
            Time::from_us(5)
        );
        assert_eq!(Time(1_999).to_duration(), Duration::from_nanos(1));
        assert_eq!(Time::from_duration(Duration::MAX), Time::MAX);
        assert_eq!(
            Time::from_duration(Time::from_ms(20).to_duration()),
            Time::from_ms(20)
        );
    }

    #[test]
    fn wire_time_of_standard_frames_at_100g() {
        let r: Rate = "100G".parse().unwrap();
        assert_eq!(r.wire_time(64), Time(6_720));
        assert_eq!(r.wire_time(1518), Time(123_040));
        assert_eq!(r.wire_time(4158), Time(334_240));
        assert_eq!(r.wire_time(9216), Time(738_880));
    }

    /// Remembering the last length changes no answer, whatever order lengths come in
    /// (odd rates included, where wire times are rounded).
    #[test]
    fn remembered_wire_times_are_the_rates_own() {
        for bps in [100_000_000_000, 25_000_000_000, 37_000_000_001, 1] {
            let mut w = WireTimes::new(Rate(bps));
            for len in [1518, 1518, 64, 0, 64, 9216, 1518, 0, 0, 77] {
                assert_eq!(w.of(len), Rate(bps).wire_time(len), "{bps} b/s, {len} B");
            }
        }
    }

    #[test]
    fn zero_is_a_drain_rate_but_not_a_rate() {
        for s in ["0", "0G", "0.0Gb/s"] {
            assert_eq!(s.parse::<RateOrZero>(), Ok(RateOrZero(Rate(0))), "{s}");
            assert!(s.parse::<Rate>().is_err(), "{s}");
        }
        assert_eq!("25G".parse::<RateOrZero>(), Ok(RateOrZero(Rate::gbps(25))));
        assert!("0Q".parse::<RateOrZero>().is_err());
    }

    #[test]
    fn bit_time_is_exact_at_800g() {
        let r: Rate = "800G".parse().unwrap();
        assert_eq!(r.time_for_bits(8), Time(10));
        assert_eq!(r.pause_time(1), Time(640));
    }

    #[test]
    fn pause_quanta_match_the_table() {
        for (speed, one_quantum_ps) in [
            ("10G", 51_200),
            ("25G", 20_480),
            ("40G", 12_800),
            ("50G", 10_240),
            ("100G", 5_120),
            ("200G", 2_560),
            ("400G", 1_280),
            ("800G", 640),
        ] {
            let r: Rate = speed.parse().unwrap();
            assert_eq!(r.pause_time(1), Time(one_quantum_ps), "{speed}");
            assert_eq!(
                r.pause_time(0xFFFF),
                Time(one_quantum_ps * 0xFFFF),
                "{speed}"
            );
        }
    }

    #[test]
    fn parse_and_display_round_trip() {
        assert_eq!("16MB".parse::<Bytes>().unwrap(), Bytes(16_000_000));
        assert_eq!("32KiB".parse::<Bytes>().unwrap(), Bytes(32_768));
        assert_eq!("1518".parse::<Bytes>().unwrap(), Bytes(1518));
        assert_eq!("2.5MiB".parse::<Bytes>().unwrap(), Bytes(2_621_440));
        assert_eq!("1.5ms".parse::<Time>().unwrap(), Time(1_500_000_000));
        assert_eq!("5us".parse::<Time>().unwrap(), Time::from_us(5));
        assert_eq!("0".parse::<Time>().unwrap(), Time::ZERO);
        assert_eq!(
            "2m".parse::<Length>().unwrap().propagation(),
            Time::from_ns(10)
        );
        assert_eq!("25G".parse::<Rate>().unwrap(), Rate(25_000_000_000));
        for same in [
            "100G",
            "100Gb",
            "100Gbps",
            "100Gb/s",
            "100Gbit/s",
            "100 Gbit/s",
        ] {
            assert_eq!(same.parse::<Rate>().unwrap(), Rate::gbps(100), "{same}");
        }
        let e = "100GB".parse::<Rate>().unwrap_err().to_string();
        assert!(e.contains("100Gbit/s"), "the error lists the forms: {e}");
        assert_eq!(Time(1_500_000_000).to_string(), "1.5ms");
        assert_eq!(Rate::gbps(100).to_string(), "100G");
        assert_eq!(Bytes(32_768).to_string(), "32KiB");
        assert_eq!(Bytes(16_000_000).to_string(), "16MB");
        assert_eq!(Bytes(750_125_952).approx(), "750.126MB");
        assert_eq!(Bytes(1518).approx(), "1518B");
        assert_eq!(Bytes(16_000_000).approx(), "16MB");
        for bad in [
            "",
            "G",
            "12X",
            "1.2.3G",
            "0G",
            "-5G",
            "1.0000001b",
            "100",
            "10",
        ] {
            assert!(bad.parse::<Rate>().is_err(), "{bad}");
        }
        // A bare number is not taken as bits per second; an explicit unit is.
        let e = "100".parse::<Rate>().unwrap_err().to_string();
        assert!(e.contains("100G"), "{e}");
        assert!("100".parse::<RateOrZero>().is_err());
        assert_eq!("100b/s".parse::<Rate>().unwrap(), Rate(100));
        assert!("1.5B".parse::<Bytes>().is_err());
        // One range however a size is written.
        assert_eq!("1TiB".parse::<Bytes>().unwrap(), Bytes::MAX_SIZE);
        assert_eq!("1TB".parse::<Bytes>().unwrap(), Bytes(1_000_000_000_000));
        assert!("1099511627777".parse::<Bytes>().is_err());
        assert!("18446744073709551615".parse::<Bytes>().is_err());
        assert!("2TB".parse::<Bytes>().is_err());
        assert!(
            "5".parse::<Time>().is_err(),
            "a time needs a unit unless it is 0"
        );
    }
}
