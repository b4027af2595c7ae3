//! Per-port deadlines in a tournament tree, so that a switch's cost per event does not grow
//! with its port count: the earliest deadline of all ports in O(1), the first port at or
//! after a given one that is due by a given time in O(log ports), an update in O(log ports).

use lossless_buffer_model::Time;

/// One deadline per port (None: nothing pending), as a complete binary tree of minimums.
#[derive(Clone, Debug)]
pub(super) struct Deadlines {
    /// Leaves start here (a power of two ≥ the port count).
    leaves: usize,
    /// `tree[1]` is the root; `tree[leaves + i]` is port i; `Time::MAX` stands for None.
    tree: Vec<Time>,
}

impl Deadlines {
    /// No deadlines for `ports` ports.
    pub(super) fn new(ports: usize) -> Deadlines {
        let leaves = ports.max(1).next_power_of_two();
        Deadlines {
            leaves,
            tree: vec![Time::MAX; 2 * leaves],
        }
    }

    /// Set port `port`'s deadline.
    pub(super) fn set(&mut self, port: usize, t: Option<Time>) {
        let mut i = self.leaves + port;
        let t = t.unwrap_or(Time::MAX);
        if self.tree[i] == t {
            return;
        }
        self.tree[i] = t;
        // `m` is node i's new value; its parent's is the smaller of it and i's sibling.
        let mut m = t;
        while i > 1 {
            m = m.min(self.tree[i ^ 1]);
            i /= 2;
            if self.tree[i] == m {
                break;
            }
            self.tree[i] = m;
        }
    }

    /// The earliest deadline of any port.
    pub(super) fn earliest(&self) -> Option<Time> {
        let t = self.tree[1];
        (t != Time::MAX).then_some(t)
    }

    /// The earliest deadline of any port, `Time::MAX` when none has one.
    pub(super) fn earliest_or_max(&self) -> Time {
        self.tree[1]
    }

    /// The lowest port at or after `from` whose deadline is at or before `now`: up from
    /// `from`'s leaf to the first subtree to its right that holds one, then down its
    /// leftmost qualifying path.
    pub(super) fn first_due(&self, from: usize, now: Time) -> Option<usize> {
        if from >= self.leaves || self.tree[1] > now {
            return None;
        }
        let mut i = self.leaves + from;
        while self.tree[i] > now {
            // Past a right child, climb; from a left child, step to its right sibling.
            while i & 1 == 1 {
                if i == 1 {
                    return None;
                }
                i >>= 1;
            }
            i += 1;
        }
        while i < self.leaves {
            i = if self.tree[2 * i] <= now {
                2 * i
            } else {
                2 * i + 1
            };
        }
        Some(i - self.leaves)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_a_scan_of_every_port() {
        let n = 18;
        let mut d = Deadlines::new(n);
        let mut plain: Vec<Option<Time>> = vec![None; n];
        let mut x = 7u64;
        for _ in 0..5_000 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let port = (x >> 33) as usize % n;
            let t = (!x.is_multiple_of(3)).then_some(Time((x >> 40) % 100));
            d.set(port, t);
            plain[port] = t;
            assert_eq!(d.earliest(), plain.iter().flatten().min().copied());
            let now = Time((x >> 20) % 100);
            let from = (x >> 10) as usize % (n + 1);
            let want = (from..n).find(|p| plain[*p].is_some_and(|t| t <= now));
            assert_eq!(d.first_due(from, now), want, "from {from} at {now:?}");
        }
    }
}
