//! A set of a switch's ports: which ports an ACL table is bound to, which ports speak
//! CBFC, which next-hop members are down. Up to [`PortSet::MAX`] ports, a bit each.

use std::cell::Cell;

/// A set of ports of one switch (port `i` is bit `i`), for switches of up to
/// [`PortSet::MAX`] ports (Tomahawk 5 runs 256).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct PortSet([u64; PortSet::WORDS]);

impl PortSet {
    const WORDS: usize = 4;
    /// Most ports a set (and a switch) can hold.
    pub const MAX: usize = 64 * PortSet::WORDS;

    /// No port.
    pub const EMPTY: PortSet = PortSet([0; PortSet::WORDS]);

    /// Ports `0..n` (`n` at most [`PortSet::MAX`]).
    pub fn first(n: usize) -> PortSet {
        let mut s = PortSet::EMPTY;
        for p in 0..n.min(PortSet::MAX) {
            s.insert(p);
        }
        s
    }

    /// Is `port` in the set? (A port past [`PortSet::MAX`] never is.)
    #[inline(always)]
    pub fn contains(&self, port: usize) -> bool {
        self.0
            .get(port >> 6)
            .is_some_and(|w| w & (1 << (port & 63)) != 0)
    }

    /// Add `port`.
    ///
    /// # Panics
    /// If `port` is at least [`PortSet::MAX`] (the loaders refuse such switches).
    pub fn insert(&mut self, port: usize) {
        self.0[port >> 6] |= 1 << (port & 63);
    }

    /// Remove `port`.
    pub fn remove(&mut self, port: usize) {
        if let Some(w) = self.0.get_mut(port >> 6) {
            *w &= !(1 << (port & 63));
        }
    }

    /// No port in the set?
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.0.iter().all(|w| *w == 0)
    }

    /// Every port in either set.
    pub fn union(self, other: PortSet) -> PortSet {
        PortSet(std::array::from_fn(|i| self.0[i] | other.0[i]))
    }

    /// The ports in the set, lowest first.
    pub fn iter(&self) -> impl Iterator<Item = usize> + '_ {
        self.0.iter().enumerate().flat_map(|(i, &w)| {
            let mut bits = w;
            std::iter::from_fn(move || {
                (bits != 0).then(|| {
                    let b = bits.trailing_zeros() as usize;
                    bits &= bits - 1;
                    i * 64 + b
                })
            })
        })
    }
}

/// Ports marked through a shared reference (the switch's ports whose transmit deadline
/// may have moved: marked on every change, taken when the deadlines are brought up to
/// date).
#[derive(Debug, Default)]
pub struct PortMarks {
    words: [Cell<u64>; PortSet::WORDS],
    /// Which words have a mark (bit = word), so that the common case, a switch of 64
    /// ports or fewer, costs what one word did.
    any: Cell<u8>,
}

impl PortMarks {
    /// Ports `0..n` marked.
    pub fn first(n: usize) -> PortMarks {
        let m = PortMarks::default();
        for p in 0..n.min(PortSet::MAX) {
            m.mark(p);
        }
        m
    }

    /// Mark `port`.
    #[inline(always)]
    pub fn mark(&self, port: usize) {
        let i = port >> 6;
        let w = &self.words[i];
        w.set(w.get() | 1 << (port & 63));
        self.any.set(self.any.get() | 1 << i);
    }

    /// No port marked?
    #[inline(always)]
    pub fn is_empty(&self) -> bool {
        self.any.get() == 0
    }

    /// Which 64-port words have marks (bit = word), forgetting that they do: take each
    /// with [`PortMarks::take_word`] next.
    #[inline(always)]
    pub fn take_words(&self) -> u8 {
        self.any.replace(0)
    }

    /// The marks of ports `64·i … 64·i + 63` (bit = port − 64·i), unmarking them.
    #[inline(always)]
    pub fn take_word(&self, i: usize) -> u64 {
        self.words[i].replace(0)
    }
}

impl FromIterator<usize> for PortSet {
    fn from_iter<I: IntoIterator<Item = usize>>(ports: I) -> PortSet {
        let mut s = PortSet::EMPTY;
        for p in ports {
            s.insert(p);
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ports_past_64_are_members_like_any_other() {
        let mut s: PortSet = [0, 63, 64, 200, 255].into_iter().collect();
        assert!(s.contains(63) && s.contains(64) && s.contains(255));
        assert!(!s.contains(1) && !s.contains(65) && !s.contains(256));
        s.remove(64);
        assert_eq!(s.iter().collect::<Vec<_>>(), [0, 63, 200, 255]);
        assert_eq!(PortSet::first(66).iter().count(), 66);
        assert_eq!(PortSet::first(300).iter().count(), 256);
        assert!(PortSet::EMPTY.is_empty() && !s.is_empty());
        assert_eq!(
            PortSet::first(2).union([70].into_iter().collect()),
            [0, 1, 70].into_iter().collect()
        );
        let m = PortMarks::first(3);
        m.mark(130);
        assert_eq!(m.take_words(), 0b101);
        assert!(m.is_empty());
        assert_eq!((m.take_word(0), m.take_word(2)), (0b111, 1 << 2));
        assert_eq!(m.take_word(0), 0);
    }
}
