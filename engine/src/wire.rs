//! Frames on the wire: each waits in a slot of [`OnWire`] from the moment it starts
//! leaving its port to the moment its last bit reaches the far end, and the arrival event
//! names the slot, so that an event stays a few bytes however large the frame.

use lossless_pipeline::Packet;

/// Frames on the wire: each waits in a slot from its transmission to its arrival, and its
/// arrival event names the slot.
#[derive(Default)]
pub struct OnWire {
    slots: Vec<Option<Packet>>,
    free: Vec<u32>,
}

impl OnWire {
    /// Put a frame on the wire: its slot.
    #[inline]
    pub fn put(&mut self, pkt: Packet) -> u32 {
        match self.free.pop() {
            Some(s) => {
                self.slots[s as usize] = Some(pkt);
                s
            }
            None => {
                self.slots.push(Some(pkt));
                (self.slots.len() - 1) as u32
            }
        }
    }

    /// Take the frame in `slot` off the wire.
    #[inline]
    pub fn take(&mut self, slot: u32) -> Packet {
        self.free.push(slot);
        self.slots[slot as usize]
            .take()
            .expect("an arrival's slot holds its frame")
    }

    /// No frame is on the wire.
    pub fn is_empty(&self) -> bool {
        self.slots.len() == self.free.len()
    }

    /// Nothing but link upkeep (credit updates) is on the wire. Looks at every frame on
    /// it: asked only where links speak CBFC, once the nodes are settled.
    pub fn only_upkeep(&self) -> bool {
        self.slots
            .iter()
            .flatten()
            .all(|p| p.meta.class.is_credit())
    }
}

#[cfg(test)]
mod tests {
    use super::OnWire;
    use lossless_pipeline::Packet;

    /// Frames put on the wire come off as they went on, whatever the order they arrive in,
    /// slots are reused, and the wire holds only upkeep exactly when every frame but the
    /// credit updates (here every seventh length) has arrived.
    #[test]
    fn frames_on_the_wire_come_off_unchanged() {
        let mut wire = OnWire::default();
        let mut held: Vec<(u32, u32)> = Vec::new();
        let (mut most, mut x) = (0, 5u64);
        for len in 64..2_000u32 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            if x >> 62 != 0 || held.is_empty() {
                let mut pkt = Packet::new(vec![len as u8; 3], len);
                if len % 7 == 0 {
                    pkt.meta.class = lossless_pipeline::link::FrameClass::CreditUpdate;
                }
                held.push((wire.put(pkt), len));
            } else {
                let (slot, want) = held.swap_remove((x >> 20) as usize % held.len());
                let pkt = wire.take(slot);
                assert_eq!((pkt.len, pkt.data), (want, vec![want as u8; 3]));
            }
            assert_eq!(wire.only_upkeep(), held.iter().all(|(_, l)| l % 7 == 0));
            most = most.max(held.len());
        }
        assert_eq!(
            wire.slots.len(),
            most,
            "a slot is reused once its frame arrived"
        );
    }
}
