//! Lazy expansion of one request into consecutive references.
//!
//! A block request of many pages, an ARC line of many blocks, a lackey access spanning a
//! page boundary or a filemap event over a range of file pages all stand for a run of
//! consecutive keys. [`Run`] holds what is left of such a run and drains it into the
//! caller's batch, continuing in the next batch when the batch is full, so that nothing
//! is ever allocated according to a length read from the trace.

use crate::{ReadStats, Record};

/// The part of a request not yet yielded: `left` keys from `next` on.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Run {
    next: u64,
    left: u64,
    write: bool,
    /// Each key is yielded twice, as a read then as a write (lackey's `M`odify).
    modify: bool,
    /// In a modify run: the read of `next` was yielded, its write is due.
    half: bool,
    /// The run's first key was yielded: the rest continue its request
    /// ([`Record::cont`]).
    begun: bool,
    /// The run is a mapping's fault or fault-around ([`Record::fault`]).
    fault: bool,
}

impl Run {
    /// Starts a run of `count` keys from `first` (the keys must not pass `u64::MAX`).
    #[inline]
    pub(crate) fn start(&mut self, first: u64, count: u64, write: bool) {
        debug_assert!(count == 0 || first.checked_add(count - 1).is_some());
        *self = Run {
            next: first,
            left: count,
            write,
            modify: false,
            half: false,
            begun: false,
            fault: false,
        };
    }

    /// Starts a run of `count` read keys from `first` that a mapping's page fault or
    /// fault-around reported ([`Record::fault`]).
    #[inline]
    pub(crate) fn start_fault(&mut self, first: u64, count: u64) {
        self.start(first, count, false);
        self.fault = true;
    }

    /// Starts a run where each key is read, then written.
    pub(crate) fn start_modify(&mut self, first: u64, count: u64) {
        self.start(first, count, true);
        self.modify = true;
    }

    /// Whether no keys are left.
    #[cfg(test)]
    pub(crate) fn is_empty(&self) -> bool {
        self.left == 0
    }

    /// Moves keys to `out` until it holds `max` records or the run is exhausted; counts
    /// the writes in `stats`.
    #[inline]
    pub(crate) fn drain(&mut self, out: &mut Vec<Record>, max: usize, stats: &mut ReadStats) {
        if self.left == 0 || out.len() >= max {
            return;
        }
        if self.modify {
            self.drain_modify(out, max, stats);
            return;
        }
        let n = self.left.min((max - out.len()) as u64);
        let (next, write, begun, fault) = (self.next, self.write, self.begun, self.fault);
        out.extend((0..n).map(|i| Record {
            key: next + i,
            write,
            cont: begun || i > 0,
            fault,
            sync: crate::SyncSpan::NONE,
        }));
        self.begun = true;
        if write {
            stats.writes += n;
        }
        // Wraps only when the run ends at u64::MAX, and then `left` becomes 0.
        self.next = next.wrapping_add(n);
        self.left -= n;
    }

    fn drain_modify(&mut self, out: &mut Vec<Record>, max: usize, stats: &mut ReadStats) {
        while self.left > 0 && out.len() < max {
            if self.half {
                out.push(Record {
                    key: self.next,
                    write: true,
                    cont: false,
                    fault: false,
                    sync: crate::SyncSpan::NONE,
                });
                stats.writes += 1;
                self.half = false;
                self.next = self.next.wrapping_add(1);
                self.left -= 1;
            } else {
                out.push(Record {
                    key: self.next,
                    write: false,
                    cont: false,
                    fault: false,
                    sync: crate::SyncSpan::NONE,
                });
                self.half = true;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keys(run: &mut Run, batch: usize) -> Vec<(u64, bool)> {
        let mut all = Vec::new();
        let mut out = Vec::new();
        let mut stats = ReadStats::default();
        while !run.is_empty() {
            out.clear();
            run.drain(&mut out, batch, &mut stats);
            assert!(out.len() <= batch);
            all.extend(out.iter().map(|r| (r.key, r.write)));
        }
        assert_eq!(stats.writes, all.iter().filter(|(_, w)| *w).count() as u64);
        all
    }

    /// Every key of a run but the first continues its request, across batches too.
    #[test]
    fn keys_after_a_runs_first_continue_its_request() {
        for batch in [1, 2, 3, 100] {
            let mut r = Run::default();
            let mut stats = ReadStats::default();
            let mut all = Vec::new();
            for (first, count) in [(10, 3), (40, 1), (50, 2)] {
                r.start(first, count, false);
                while !r.is_empty() {
                    let mut out = Vec::new();
                    r.drain(&mut out, batch, &mut stats);
                    all.extend(out.iter().map(|r| (r.key, r.cont)));
                }
            }
            assert_eq!(
                all,
                [
                    (10, false),
                    (11, true),
                    (12, true),
                    (40, false),
                    (50, false),
                    (51, true)
                ]
            );
        }
    }

    #[test]
    fn runs_split_across_batches() {
        for batch in [1, 2, 3, 100] {
            let mut r = Run::default();
            r.start(10, 5, true);
            assert_eq!(
                keys(&mut r, batch),
                (10..15).map(|k| (k, true)).collect::<Vec<_>>()
            );
            r.start_modify(7, 2);
            assert_eq!(
                keys(&mut r, batch),
                [(7, false), (7, true), (8, false), (8, true)]
            );
            r.start(u64::MAX - 1, 2, false);
            assert_eq!(
                keys(&mut r, batch),
                [(u64::MAX - 1, false), (u64::MAX, false)]
            );
        }
    }
}
