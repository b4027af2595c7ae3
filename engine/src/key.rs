//! The canonical order of what happens at one instant, so that a run's outcome does not
//! depend on which node happened to schedule first.
//!
//! At one picosecond, first the run's own events (the scenario's scheduled events, which
//! change the network, then those that only look at it: the measurement window's edges,
//! time-series samples, `--plot` samples, deadlock checks), then each node's in node order
//! (switches, then hosts): the frames that reach it, by the port they reach, then its
//! wake-up. So a frame whose last bit arrives at the instant a node acts is seen by it
//! (a PAUSE frame stops the frame that would have started then), and what a node does at
//! an instant depends only on its own state and what reached it, never on the order
//! other nodes were handled in. Frames of one link share a key; they are sent one after
//! another, so never land at one instant, and if they did they would keep their order.
//! docs/architecture.md ("One instant, in a fixed order") says why this order.

/// Where an event sits among the events of its instant: smaller first.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Key(u64);

/// Bits below a node's number: its ports, and the wake-up above them.
const NODE_SHIFT: u32 = 20;
/// A node's wake-up: after every port's arrivals.
const WAKE: u64 = (1 << NODE_SHIFT) - 1;
/// Node events come after the run's own.
const NODE_EVENTS: u64 = 1 << 63;

/// The run's own events at one instant, in the order they are handled.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum RunEvent {
    /// One of the scenario's events (its index): a link down, a port paused, frames lost.
    Scheduled = 0,
    /// The measurement window opens or closes.
    Window = 1,
    /// A time-series sample.
    Sample = 2,
    /// A `--plot` sample.
    Record = 3,
    /// A look for a PFC deadlock.
    DeadlockCheck = 4,
    /// A look for a stalled LLR link.
    LlrCheck = 5,
}

impl Key {
    /// The run's event `kind`; `index` parts events of one kind (a scheduled event's
    /// place in the scenario).
    pub const fn run(kind: RunEvent, index: u32) -> Key {
        Key(((kind as u64) << 32) | index as u64)
    }

    /// A frame reaching port `port` of node `node` (its number: switches, then hosts).
    #[inline]
    pub const fn arrival(node: usize, port: u16) -> Key {
        Key(NODE_EVENTS | ((node as u64) << NODE_SHIFT) | port as u64)
    }

    /// Node `node`'s wake-up.
    #[inline]
    pub const fn wake(node: usize) -> Key {
        Key(NODE_EVENTS | ((node as u64) << NODE_SHIFT) | WAKE)
    }

    /// The node whose wake-up this key is (None: a frame's arrival or the run's event).
    #[inline]
    pub const fn woken(self) -> Option<usize> {
        if self.0 & NODE_EVENTS != 0 && self.0 & WAKE == WAKE {
            Some(((self.0 & !NODE_EVENTS) >> NODE_SHIFT) as usize)
        } else {
            None
        }
    }

    /// The key as one number (ordered as the keys are).
    #[inline]
    pub const fn get(self) -> u64 {
        self.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_run_first_then_each_node_its_arrivals_by_port_then_its_wake() {
        let order = [
            Key::run(RunEvent::Scheduled, 0),
            Key::run(RunEvent::Scheduled, 7),
            Key::run(RunEvent::Window, 1),
            Key::run(RunEvent::Sample, 0),
            Key::run(RunEvent::Record, 0),
            Key::run(RunEvent::DeadlockCheck, 0),
            Key::arrival(0, 0),
            Key::arrival(0, 255),
            Key::wake(0),
            Key::arrival(1, 0),
            Key::wake(1),
            Key::arrival(1 << 40, 3),
            Key::wake(1 << 40),
        ];
        assert!(order.windows(2).all(|w| w[0] < w[1]), "{order:?}");
        assert_eq!(Key::wake(0).woken(), Some(0));
        assert_eq!(Key::wake(1 << 40).woken(), Some(1 << 40));
        assert_eq!(Key::arrival(3, 2).woken(), None);
        assert_eq!(Key::run(RunEvent::DeadlockCheck, u32::MAX).woken(), None);
    }
}
