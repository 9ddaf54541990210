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
//! leaves the entry where it is and marks it stale instead: each entry
//! has a push sequence number (implicit, its position plus the number
//! popped), and [`FolioQueue::unqueue`] records for the folio the number
//! pushed so far. An entry of that folio with a lower sequence number was
//! pushed before the folio left, so it is stale and skipped when met,
//! whatever folio has the id by then; an entry pushed later (the id's next
//! folio, or the same folio queued again) is live. Nothing is looked up
//! while no folio has left (the common case), and a mark is forgotten once
//! every entry it covers has been popped. So the queue's order and every
//! live entry's position are the kernel's, and which folio reuses a freed
//! id cannot change what the queue does.

use super::folio::FolioId;
use std::collections::{BTreeMap, VecDeque};

/// A FIFO of `(T, folio)` entries with exact removal of a folio that
/// leaves it (see the module documentation).
#[derive(Clone, Debug)]
pub(crate) struct FolioQueue<T> {
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

impl<T> Default for FolioQueue<T> {
    fn default() -> Self {
        FolioQueue {
            entries: VecDeque::new(),
            popped: 0,
            stale: BTreeMap::new(),
            marks: VecDeque::new(),
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

    /// Folio `f` leaves the queue: every entry of `f` pushed so far is
    /// stale. Harmless if `f` has none.
    pub(crate) fn unqueue(&mut self, f: FolioId) {
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
    pub(crate) fn replace(&mut self, old: FolioId, new: FolioId) {
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
    pub(crate) fn front(&mut self) -> Option<(T, FolioId)> {
        if !self.stale.is_empty() {
            self.skip_stale();
        }
        self.entries.front().copied()
    }

    /// Takes the oldest live entry off the queue.
    #[inline]
    pub(crate) fn pop_front(&mut self) -> Option<(T, FolioId)> {
        if !self.stale.is_empty() {
            self.skip_stale();
        }
        let e = self.entries.pop_front()?;
        self.popped += 1;
        Some(e)
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
        assert!(q.stale.is_empty() && q.marks.is_empty());
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
        assert!(q.stale.is_empty() && q.marks.is_empty());
    }
}
