//! Dynamic load balancing (flowlets), SAI ARS semantics: a member's *quality* from its past
//! load (an EWMA of bytes sent per sampling interval) and its future load (bytes queued),
//! each quantised into 8 bands of the member's capacity; and the flow table that tells a
//! new flowlet (a flow idle longer than `idle_time`) from the rest of a running one.

use crate::forward::IntMap;
use lossless_buffer_model::{Rate, Time};

/// Quality bands: band k holds loads in [k/8, (k+1)/8) of capacity; 7 is 7/8 and above.
pub const BANDS: u8 = 8;
/// Band of a member whose PFC priority for the packet is paused: worse than any load.
pub const BAND_PAUSED: u8 = BANDS;
/// Band of a member whose link is down: chosen only when every member is down.
pub const BAND_DOWN: u8 = BANDS + 1;
/// Weight of the newest sample in the past-load EWMA.
pub const EWMA_WEIGHT: f64 = 0.25;

/// The band of `bytes` against `capacity` bytes: ⌊8 × bytes / capacity⌋, at most 7.
pub fn band(bytes: f64, capacity: f64) -> u8 {
    if capacity <= 0.0 {
        return BANDS - 1;
    }
    ((bytes / capacity * BANDS as f64) as u64).min(BANDS as u64 - 1) as u8
}

/// Past load of one member port: bytes sent per sampling interval, as an EWMA.
#[derive(Clone, Debug)]
pub struct LoadMeter {
    interval: Time,
    /// Bytes the port can send in one interval (speed × interval).
    capacity: f64,
    ewma: f64,
    /// Bytes started in the open interval.
    current: u64,
    /// Start of the open interval.
    start: Time,
}

impl LoadMeter {
    /// A meter for a port of `speed`, sampling every `interval`.
    pub fn new(speed: Rate, interval: Time) -> LoadMeter {
        LoadMeter {
            interval: interval.max(Time(1)),
            capacity: speed.bytes_in(interval) as f64,
            ewma: 0.0,
            current: 0,
            start: Time::ZERO,
        }
    }

    /// Bytes one interval can carry at the port's speed.
    pub fn capacity(&self) -> f64 {
        self.capacity
    }

    /// The EWMA after closing the intervals that ended by `now`, and the open interval's
    /// start then.
    fn rolled(&self, now: Time) -> (f64, Time) {
        if now < self.start + self.interval {
            return (self.ewma, self.start);
        }
        let k = (now - self.start).as_ps() / self.interval.as_ps();
        // The first closed interval carries `current`, the others nothing.
        let first = self.ewma + (self.current as f64 - self.ewma) * EWMA_WEIGHT;
        let ewma = first * (1.0 - EWMA_WEIGHT).powi((k - 1).min(1_000) as i32);
        (ewma, self.start + Time(k * self.interval.as_ps()))
    }

    /// A frame of `bytes` started on the port at `now`.
    pub fn record(&mut self, now: Time, bytes: u64) {
        let (ewma, start) = self.rolled(now);
        if start != self.start {
            self.ewma = ewma;
            self.start = start;
            self.current = 0;
        }
        self.current += bytes;
    }

    /// Past load at `now`: the EWMA of bytes per interval over the intervals closed by then.
    pub fn past(&self, now: Time) -> f64 {
        self.rolled(now).0
    }
}

/// One entry of the flow table: which member the flow's current flowlet takes and when the
/// flow was last seen.
#[derive(Clone, Copy, Debug)]
struct Entry {
    member: u16,
    last_seen: Time,
}

/// What the flow table says about a packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Lookup {
    /// The packet continues a flowlet on this member.
    Continue(u16),
    /// The packet starts a new flowlet; the flow's previous member, if it had one.
    NewFlowlet(Option<u16>),
    /// The table is full of active flows: fall back to the hash.
    Full,
}

/// The flow table of a flowlet group: up to `max_flows` flows, keyed by 5-tuple hash (flows
/// with one hash share an entry, as in hardware).
#[derive(Clone, Debug)]
pub struct FlowTable {
    map: IntMap<u32, Entry>,
    max_flows: usize,
    idle_time: Time,
}

impl FlowTable {
    /// An empty table.
    pub fn new(max_flows: u32, idle_time: Time) -> FlowTable {
        FlowTable {
            map: IntMap::default(),
            max_flows: max_flows.max(1) as usize,
            idle_time,
        }
    }

    fn idle(&self, e: &Entry, now: Time) -> bool {
        now.saturating_sub(e.last_seen) > self.idle_time
    }

    /// Look up the flow of `hash` for a packet arriving at `now` (the flow is seen now).
    pub fn lookup(&mut self, hash: u32, now: Time) -> Lookup {
        if let Some(e) = self.map.get_mut(&hash) {
            let idle = now.saturating_sub(e.last_seen) > self.idle_time;
            e.last_seen = now;
            return if idle {
                Lookup::NewFlowlet(Some(e.member))
            } else {
                Lookup::Continue(e.member)
            };
        }
        if self.map.len() >= self.max_flows {
            // Entries of idle flows are free: their next packet would start a new flowlet.
            let before = self.map.len();
            let idle_time = self.idle_time;
            self.map
                .retain(|_, e| now.saturating_sub(e.last_seen) <= idle_time);
            if self.map.len() == before {
                return Lookup::Full;
            }
        }
        Lookup::NewFlowlet(None)
    }

    /// The flow of `hash` takes `member` from `now`.
    pub fn assign(&mut self, hash: u32, member: u16, now: Time) {
        self.map.insert(
            hash,
            Entry {
                member,
                last_seen: now,
            },
        );
    }

    /// Move every flow on `member` off it: their next packet starts a new flowlet (the
    /// member's link went down).
    pub fn evict_member(&mut self, member: u16) {
        self.map.retain(|_, e| e.member != member);
    }

    /// Flows in the table that are still active at `now`.
    pub fn active(&self, now: Time) -> usize {
        self.map.values().filter(|e| !self.idle(e, now)).count()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bands_are_eighths_of_capacity() {
        assert_eq!(band(0.0, 800.0), 0);
        assert_eq!(band(99.9, 800.0), 0);
        assert_eq!(band(100.0, 800.0), 1);
        assert_eq!(band(699.0, 800.0), 6);
        assert_eq!(band(700.0, 800.0), 7);
        assert_eq!(band(800.0, 800.0), 7);
        assert_eq!(band(5000.0, 800.0), 7);
    }

    #[test]
    fn meter_is_an_ewma_of_bytes_per_interval() {
        // 100G for 16 µs: 200,000 bytes per interval.
        let mut m = LoadMeter::new(Rate::gbps(100), Time::from_us(16));
        assert_eq!(m.capacity(), 200_000.0);
        m.record(Time::from_us(1), 100_000);
        m.record(Time::from_us(15), 100_000);
        assert_eq!(m.past(Time::from_us(15)), 0.0, "interval still open");
        // Interval [0,16) closes with 200,000: EWMA 0 + 0.25 × 200,000.
        assert_eq!(m.past(Time::from_us(16)), 50_000.0);
        m.record(Time::from_us(20), 200_000);
        // [16,32) closes with 200,000: 50,000 + 0.25 × 150,000 = 87,500; then two idle
        // intervals [32,48), [48,64): × 0.75².
        assert_eq!(m.past(Time::from_us(32)), 87_500.0);
        assert_eq!(m.past(Time::from_us(64)), 87_500.0 * 0.75 * 0.75);
    }

    #[test]
    fn flowlets_start_after_idle_time_and_full_tables_fall_back() {
        let idle = Time::from_us(10);
        let mut t = FlowTable::new(2, idle);
        assert_eq!(t.lookup(7, Time::ZERO), Lookup::NewFlowlet(None));
        t.assign(7, 3, Time::ZERO);
        assert_eq!(t.lookup(7, Time::from_us(10)), Lookup::Continue(3));
        assert_eq!(
            t.lookup(7, Time::from_us(20)),
            Lookup::Continue(3),
            "gap = idle"
        );
        assert_eq!(
            t.lookup(7, Time::from_us(31)),
            Lookup::NewFlowlet(Some(3)),
            "gap > idle"
        );
        t.assign(7, 1, Time::from_us(31));
        assert_eq!(t.lookup(8, Time::from_us(31)), Lookup::NewFlowlet(None));
        t.assign(8, 0, Time::from_us(31));
        assert_eq!(t.lookup(9, Time::from_us(35)), Lookup::Full);
        // Once flow 8 has been idle past idle_time its entry is free.
        assert_eq!(t.lookup(7, Time::from_us(40)), Lookup::Continue(1));
        assert_eq!(t.lookup(9, Time::from_us(42)), Lookup::NewFlowlet(None));
        assert_eq!(t.active(Time::from_us(42)), 1);
    }
}
