//! A FIFO of folio entries whose folios can leave it before it is read.
//!
//! Two kernel queues hold folios that a later pass walks from the oldest:
//! the page-cache dirty tags the flusher writes back in dirtying order
//! (`PAGECACHE_TAG_DIRTY`, mm/page-writeback.c; mmsim's flusher is
//! per-folio, `Sim::flusher_periodic`) and a group's deferred split list
//! (`ds_queue->split_queue`, mm/huge_memory.c, v6.12). In the kernel a
//! folio leaves both at once when it stops qualifying: the dirty tag is
//! cleared by `folio_clear_dirty_for_io` (a write by reclaim) or by
//! `__filemap_remove_folio` when the folio leaves the page cache, and
//! `folio_unqueue_deferred_split` takes the folio off the split list on
//! its split or its freeing (`__folio_put` → `free_unref_folios` / the
//! split's `list_del_init`).
//!
//! A `VecDeque` cannot remove from its middle in O(1), so [`FolioQueue`]
//! leaves the entry where it is and marks it instead: each entry has a
//! push sequence number (implicit, its position plus the number popped),
//! and [`FolioQueue::unqueue`] records for the folio a mark, the number
//! pushed so far. An entry of that folio with a lower sequence number was
//! pushed before the folio left, so it is stale and skipped when met,
//! whatever folio has the id by then; an entry pushed later (the id's next
//! folio, or the same folio queued again) is live. A migration
//! ([`FolioQueue::replace`]) is a mark too, one that hands the entries it
//! covers to the destination folio instead of dropping them: they keep
//! their places, and from then on the destination's own later marks apply
//! to them. Nothing is looked up while no mark is held (the common case),
//! and a mark is forgotten once every entry it covers has been popped. So
//! the queue's order and every live entry's position are the kernel's,
//! and which folio reuses a freed id cannot change what the queue does.

use super::folio::{FolioId, NIL};
use std::collections::{BTreeMap, VecDeque};
use std::ops::Bound::{Excluded, Included};

/// A mark's key: the folio id, the number of entries pushed when it was
/// made (it covers that id's entries below it), and its rank among all
/// marks made (orders marks made with nothing pushed between them).
type MarkKey = (FolioId, u64, u64);

/// A FIFO of `(T, folio)` entries with exact removal of a folio that
/// leaves it and O(log marks) migration of one (see the module
/// documentation).
#[derive(Clone, Debug)]
pub(crate) struct FolioQueue<T> {
    /// The entries, oldest first, stale ones included.
    entries: VecDeque<(T, FolioId)>,
    /// Entries popped so far: the sequence number of the front entry.
    popped: u64,
    /// The marks held: what became of the entries each covers, [`NIL`]
    /// when the folio left, else the id of the folio they moved to.
    marks: BTreeMap<MarkKey, FolioId>,
    /// The same marks in the order made (non-decreasing push counts), to
    /// forget them once the front has passed them.
    order: VecDeque<MarkKey>,
    /// Marks made so far.
    made: u64,
}

impl<T> Default for FolioQueue<T> {
    fn default() -> Self {
        FolioQueue {
            entries: VecDeque::new(),
            popped: 0,
            marks: BTreeMap::new(),
            order: VecDeque::new(),
            made: 0,
        }
    }
}

impl<T: Copy> FolioQueue<T> {
    /// Queues folio `f` at the tail with `t`.
    #[inline]
    pub(crate) fn push_back(&mut self, t: T, f: FolioId) {
        self.entries.push_back((t, f));
    }

    /// The number of entries pushed so far.
    #[inline]
    fn pushed(&self) -> u64 {
        self.popped + self.entries.len() as u64
    }

    /// Records a mark on `f`'s entries pushed so far: they moved to `to`,
    /// or left the queue if `to` is [`NIL`].
    fn mark(&mut self, f: FolioId, to: FolioId) {
        let key = (f, self.pushed(), self.made);
        self.made += 1;
        self.marks.insert(key, to);
        self.order.push_back(key);
    }

    /// Folio `f` leaves the queue: every entry of `f` pushed so far is
    /// stale. Harmless if `f` has none.
    pub(crate) fn unqueue(&mut self, f: FolioId) {
        if !self.entries.is_empty() {
            self.mark(f, NIL);
        }
    }

    /// Folio `old`'s live entries become folio `new`'s, each in its place
    /// (a migration: the kernel's dirty tag goes with the folio's slot,
    /// `crate::compaction::migrate`); `old` then has none. Entries of
    /// `new`'s id from an earlier folio with that id stay stale, and only
    /// marks of `new` made from now on apply to the moved entries.
    /// O(log marks): a mark, resolved when an entry reaches the front.
    pub(crate) fn replace(&mut self, old: FolioId, new: FolioId) {
        if !self.entries.is_empty() {
            self.mark(old, new);
        }
    }

    /// The folio an entry pushed as number `seq` for folio `f` is now of,
    /// or [`NIL`] if it is stale: the first mark of `f` made after the
    /// push decides (none: still `f`'s; a move: the same question for the
    /// destination, asked of its marks made after the move).
    fn resolve(&self, seq: u64, mut f: FolioId) -> FolioId {
        let mut after = (seq, u64::MAX);
        loop {
            let range = (
                Excluded((f, after.0, after.1)),
                Included((f, u64::MAX, u64::MAX)),
            );
            let Some((&(_, p, n), &to)) = self.marks.range(range).next() else {
                return f;
            };
            if to == NIL {
                return NIL;
            }
            (f, after) = (to, (p, n));
        }
    }

    /// Drops stale entries at the front, forgets the marks the front has
    /// passed, and returns the front entry with the folio it is now of.
    fn front_resolved(&mut self) -> Option<(T, FolioId)> {
        let front = loop {
            let Some(&(t, f)) = self.entries.front() else {
                break None;
            };
            let r = self.resolve(self.popped, f);
            if r != NIL {
                break Some((t, r));
            }
            self.entries.pop_front();
            self.popped += 1;
        };
        while let Some(&key) = self.order.front() {
            if key.1 > self.popped {
                break;
            }
            self.order.pop_front();
            self.marks.remove(&key);
        }
        front
    }

    /// The oldest live entry.
    #[inline]
    pub(crate) fn front(&mut self) -> Option<(T, FolioId)> {
        if self.marks.is_empty() {
            return self.entries.front().copied();
        }
        self.front_resolved()
    }

    /// Takes the oldest live entry off the queue.
    #[inline]
    pub(crate) fn pop_front(&mut self) -> Option<(T, FolioId)> {
        let e = if self.marks.is_empty() {
            self.entries.front().copied()
        } else {
            self.front_resolved()
        }?;
        self.entries.pop_front();
        self.popped += 1;
        Some(e)
    }

    /// The sequence number of the oldest entry held (the entries popped
    /// so far); entry `seq` is held while `front_seq() <= seq < pushed`.
    #[inline]
    pub(crate) fn front_seq(&self) -> u64 {
        self.popped
    }

    /// Entry number `seq` without taking it off: `None` past the last
    /// entry pushed, `Some(None)` if stale, else the entry with the folio
    /// it is now of. `seq` must not be below [`FolioQueue::front_seq`].
    pub(crate) fn entry_at(&self, seq: u64) -> Option<Option<(T, FolioId)>> {
        debug_assert!(seq >= self.popped);
        let &(t, f) = self.entries.get((seq - self.popped) as usize)?;
        let r = if self.marks.is_empty() {
            f
        } else {
            self.resolve(seq, f)
        };
        Some((r != NIL).then_some((t, r)))
    }

    /// True if no live entry is queued.
    #[cfg(test)]
    pub(crate) fn is_empty(&mut self) -> bool {
        self.front().is_none()
    }

    /// The entries held, stale ones included: a bound on the live ones,
    /// for a pass that may queue entries again.
    pub(crate) fn held(&self) -> usize {
        self.entries.len()
    }
}

#[cfg(test)]
mod tests {
    use super::FolioQueue;

    /// `replace` hands a folio's live entries to its migration's
    /// destination in place; the destination id's stale entries from an
    /// earlier folio stay stale, and the old id then has none live.
    #[test]
    fn replace_moves_live_entries_in_place_and_keeps_stale_ones_stale() {
        let mut q = FolioQueue::default();
        q.push_back(10u64, 5); // an earlier folio with id 5, which left
        q.unqueue(5);
        q.push_back(11, 1); // stale: 1 left after it
        q.unqueue(1);
        q.push_back(12, 2);
        q.push_back(13, 1); // live
        q.push_back(14, 3);
        q.replace(1, 5);
        q.push_back(15, 1); // the old id reused later: live
        let mut got = Vec::new();
        while let Some(e) = q.pop_front() {
            got.push(e);
        }
        assert_eq!(got, vec![(12, 2), (13, 5), (14, 3), (15, 1)]);
    }

    /// An entry of a folio that left is skipped, even when the id is
    /// queued again; the new entry is met at its own place.
    #[test]
    fn a_left_folios_entry_is_skipped_and_its_ids_next_entry_is_live() {
        let mut q = FolioQueue::default();
        q.push_back(10u64, 1);
        q.push_back(11, 2);
        q.unqueue(1);
        q.push_back(12, 3);
        q.push_back(13, 1);
        assert_eq!(q.front(), Some((11, 2)));
        assert_eq!(q.pop_front(), Some((11, 2)));
        assert_eq!(q.pop_front(), Some((12, 3)));
        assert_eq!(q.pop_front(), Some((13, 1)));
        assert!(q.is_empty());
        assert!(q.marks.is_empty() && q.order.is_empty());
    }

    /// A folio that leaves twice (queued, left, queued again, left) has
    /// both entries skipped; a folio that leaves with no entry queued
    /// skips nothing pushed after.
    #[test]
    fn leaving_twice_skips_both_and_leaving_unqueued_skips_nothing() {
        let mut q = FolioQueue::default();
        q.push_back((), 7);
        q.unqueue(7);
        q.push_back((), 7);
        q.push_back((), 8);
        q.unqueue(7);
        q.unqueue(9);
        q.push_back((), 9);
        assert_eq!(q.pop_front(), Some(((), 8)));
        assert_eq!(q.pop_front(), Some(((), 9)));
        assert_eq!(q.pop_front(), None);
        assert_eq!(q.held(), 0);
        assert!(q.marks.is_empty() && q.order.is_empty());
    }

    /// The O(entries) `replace` of commit b66f3a4, which rewrote each entry
    /// in place: the reference the lazy one must agree with.
    mod reference {
        use crate::mem::folio::FolioId;
        use std::collections::{BTreeMap, VecDeque};

        /// A FIFO of `(T, folio)` entries with exact removal of a folio that
        /// leaves it (see the module documentation).
        #[derive(Clone, Debug)]
        pub(super) struct OldQueue<T> {
            /// The entries, oldest first, stale ones included.
            entries: VecDeque<(T, FolioId)>,
            /// Entries popped so far: the sequence number of the front entry.
            popped: u64,
            /// Per folio that left while possibly queued: the number of entries
            /// pushed at that moment (its entries below it are stale).
            stale: BTreeMap<FolioId, u64>,
            /// The same marks in the order made (non-decreasing), to forget them
            /// once the front has passed them.
            marks: VecDeque<(u64, FolioId)>,
        }

        impl<T> Default for OldQueue<T> {
            fn default() -> Self {
                OldQueue {
                    entries: VecDeque::new(),
                    popped: 0,
                    stale: BTreeMap::new(),
                    marks: VecDeque::new(),
                }
            }
        }

        impl<T: Copy> OldQueue<T> {
            /// Queues folio `f` at the tail with `t`.
            #[inline]
            pub(super) fn push_back(&mut self, t: T, f: FolioId) {
                self.entries.push_back((t, f));
            }

            /// The number of entries pushed so far.
            #[inline]
            fn pushed(&self) -> u64 {
                self.popped + self.entries.len() as u64
            }

            /// Folio `f` leaves the queue: every entry of `f` pushed so far is
            /// stale. Harmless if `f` has none.
            pub(super) fn unqueue(&mut self, f: FolioId) {
                if self.entries.is_empty() {
                    return;
                }
                let mark = self.pushed();
                self.stale.insert(f, mark);
                self.marks.push_back((mark, f));
            }

            /// Folio `old`'s live entries become folio `new`'s, each in its place
            /// (a migration: the kernel's dirty tag goes with the folio's slot,
            /// `crate::compaction::migrate`); `old` then has
            /// none. Stale entries of `new`'s id from an earlier folio with that
            /// id are handed to `old`'s id, whose every entry is then stale, so
            /// `new` has exactly the live entries `old` had. O(entries).
            pub(super) fn replace(&mut self, old: FolioId, new: FolioId) {
                if self.entries.is_empty() {
                    return;
                }
                let old_mark = self.stale.get(&old).copied();
                let new_mark = self.stale.remove(&new);
                for (seq, e) in (self.popped..).zip(self.entries.iter_mut()) {
                    if e.1 == old && old_mark.is_none_or(|m| seq >= m) {
                        e.1 = new;
                    } else if e.1 == new && new_mark.is_some_and(|m| seq < m) {
                        e.1 = old;
                    }
                }
                self.unqueue(old);
            }

            /// Drops stale entries at the front and forgets the marks the front
            /// has passed.
            fn skip_stale(&mut self) {
                while let Some(&(_, f)) = self.entries.front() {
                    match self.stale.get(&f) {
                        Some(&mark) if self.popped < mark => {
                            self.entries.pop_front();
                            self.popped += 1;
                        }
                        _ => break,
                    }
                }
                while let Some(&(mark, f)) = self.marks.front() {
                    if mark > self.popped {
                        break;
                    }
                    self.marks.pop_front();
                    if self.stale.get(&f) == Some(&mark) {
                        self.stale.remove(&f);
                    }
                }
            }

            /// The oldest live entry.
            #[inline]
            pub(super) fn front(&mut self) -> Option<(T, FolioId)> {
                if !self.stale.is_empty() {
                    self.skip_stale();
                }
                self.entries.front().copied()
            }

            /// Takes the oldest live entry off the queue.
            #[inline]
            pub(super) fn pop_front(&mut self) -> Option<(T, FolioId)> {
                if !self.stale.is_empty() {
                    self.skip_stale();
                }
                let e = self.entries.pop_front()?;
                self.popped += 1;
                Some(e)
            }
        }
    }

    /// Random runs of pushes, leaves, migrations (to a free id, as
    /// `compaction::migrate` does), frees and reuses of ids, and pops: the
    /// lazy queue gives exactly the entries, each with its folio, that the
    /// reference's in-place rewriting gives, at every front and pop.
    #[test]
    fn lazy_replace_agrees_with_rewriting_in_place() {
        let mut rng = 0x1234_5678u64;
        let mut next = move |n: u64| {
            rng = rng.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = rng;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            (z ^ (z >> 31)) % n
        };
        let (mut moves, mut pops) = (0, 0);
        for _ in 0..200 {
            let mut q = FolioQueue::default();
            let mut r = reference::OldQueue::default();
            let mut live = [false; 6];
            let mut t = 0u32;
            for _ in 0..300 {
                let f = next(6) as u32;
                match next(10) {
                    0..=3 if live[f as usize] => {
                        t += 1;
                        q.push_back(t, f);
                        r.push_back(t, f);
                    }
                    4 if live[f as usize] => {
                        // Leaves the queue, and is freed half the time.
                        q.unqueue(f);
                        r.unqueue(f);
                        live[f as usize] = next(2) == 0;
                    }
                    5 if live[f as usize] => {
                        if let Some(new) = (0..6u32).find(|&g| !live[g as usize] && next(2) == 0) {
                            q.replace(f, new);
                            r.replace(f, new);
                            live[f as usize] = false;
                            live[new as usize] = true;
                            moves += 1;
                        }
                    }
                    6 | 7 => {
                        let (a, b) = (q.pop_front(), r.pop_front());
                        assert_eq!(a, b);
                        // Every folio leaves before its id is freed or moved:
                        // no entry met is of a folio that is gone.
                        assert!(a.is_none_or(|e| live[e.1 as usize]), "{a:?}");
                        pops += 1;
                    }
                    _ => {
                        live[f as usize] = true;
                        assert_eq!(q.front(), r.front());
                    }
                }
            }
            loop {
                let (a, b) = (q.pop_front(), r.pop_front());
                assert_eq!(a, b);
                if a.is_none() {
                    break;
                }
            }
            assert!(q.marks.is_empty() && q.order.is_empty());
        }
        assert!(
            moves > 500 && pops > 10_000,
            "{moves} migrations, {pops} pops"
        );
    }
}
