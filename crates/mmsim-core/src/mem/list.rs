//! Intrusive doubly-linked lists of folios (`struct list_head` on `folio->lru`).
//!
//! The kernel adds to the head (`list_add`) and reclaim takes from the tail
//! (`lru_to_folio`); "rotation" moves a folio back to the head, and
//! `folio_rotate_reclaimable` moves it to the tail. All operations are O(1)
//! and allocation-free; the links live in the arena's dense link array
//! (8 bytes per folio), not in the folios, so that a walk from the tail —
//! reclaim's isolation — chases through a compact array.

use super::folio::{FolioArena, FolioId, NIL, NO_LIST};

/// A list header: head (most recently added), tail (next to reclaim), length.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct List {
    /// Most recently added folio, or NIL.
    pub head: FolioId,
    /// Least recently added folio, or NIL.
    pub tail: FolioId,
    /// Number of folios (not pages) on the list.
    pub len: u32,
    /// Base pages of those folios (`lruvec_lru_size`'s count).
    pub pages: u64,
}

impl Default for List {
    fn default() -> Self {
        List {
            head: NIL,
            tail: NIL,
            len: 0,
            pages: 0,
        }
    }
}

impl List {
    /// `list_add()`: inserts at the head. `tag` is stored as the folio's list tag (`FolioArena::lru`).
    #[inline]
    pub(crate) fn push_head(&mut self, a: &mut FolioArena, id: FolioId, tag: u8) {
        let old = self.head;
        debug_assert_eq!(a.lru(id), NO_LIST);
        // Read before the stores below, which the compiler cannot see past.
        let nr = a[id].nr_pages();
        a.set_lru(id, tag);
        *a.links_mut(id) = [NIL, old];
        if old != NIL {
            a.links_mut(old)[0] = id;
        } else {
            self.tail = id;
        }
        self.head = id;
        self.len += 1;
        self.pages += nr;
    }

    /// `list_add_tail()`: inserts at the tail.
    #[inline]
    pub(crate) fn push_tail(&mut self, a: &mut FolioArena, id: FolioId, tag: u8) {
        let old = self.tail;
        debug_assert_eq!(a.lru(id), NO_LIST);
        let nr = a[id].nr_pages();
        a.set_lru(id, tag);
        *a.links_mut(id) = [old, NIL];
        if old != NIL {
            a.links_mut(old)[1] = id;
        } else {
            self.head = id;
        }
        self.tail = id;
        self.len += 1;
        self.pages += nr;
    }

    /// `list_del()`: unlinks a folio known to be on this list.
    #[inline]
    pub(crate) fn unlink(&mut self, a: &mut FolioArena, id: FolioId) {
        let [p, n] = a.links(id);
        let nr = a[id].nr_pages();
        *a.links_mut(id) = [NIL, NIL];
        a.set_lru(id, NO_LIST);
        if p != NIL {
            a.links_mut(p)[1] = n;
        } else {
            self.head = n;
        }
        if n != NIL {
            a.links_mut(n)[0] = p;
        } else {
            self.tail = p;
        }
        self.len -= 1;
        self.pages -= nr;
    }

    /// Moves a folio on this list to the head (`list_move()`), keeping its tag.
    #[inline]
    pub(crate) fn move_to_head(&mut self, a: &mut FolioArena, id: FolioId) {
        let old = self.head;
        if old == id {
            return;
        }
        // A splice of the links only: the folio stays on this list, so its
        // tag, the length and the page count are unchanged (the lru-policy
        // hit path runs this on every access). Not the head, so `p != NIL`.
        let [p, n] = a.links(id);
        a.links_mut(p)[1] = n;
        if n != NIL {
            a.links_mut(n)[0] = p;
        } else {
            self.tail = p;
        }
        *a.links_mut(id) = [NIL, old];
        a.links_mut(old)[0] = id;
        self.head = id;
    }

    /// Puts folio `new` (on no list) in the place of folio `old` on this
    /// list: `new` takes `old`'s links and tag, its neighbours (or the
    /// list's head and tail) point at `new`, and `old` is left on no list.
    /// The length is unchanged; the page count too, as the two folios are
    /// of one order (a migration's destination: `crate::compaction::migrate`).
    pub(crate) fn replace(&mut self, a: &mut FolioArena, old: FolioId, new: FolioId) {
        debug_assert_eq!(a.lru(new), NO_LIST);
        debug_assert_eq!(a[old].order(), a[new].order());
        let [p, n] = a.links(old);
        a.set_lru(new, a.lru(old));
        *a.links_mut(new) = [p, n];
        *a.links_mut(old) = [NIL, NIL];
        a.set_lru(old, NO_LIST);
        if p != NIL {
            a.links_mut(p)[1] = new;
        } else {
            self.head = new;
        }
        if n != NIL {
            a.links_mut(n)[0] = new;
        } else {
            self.tail = new;
        }
    }

    /// Removes and returns the tail, or None when empty.
    #[inline]
    pub(crate) fn pop_tail(&mut self, a: &mut FolioArena) -> Option<FolioId> {
        let t = self.tail;
        if t == NIL {
            return None;
        }
        self.unlink(a, t);
        Some(t)
    }

    /// True when empty.
    #[inline]
    pub(crate) fn is_empty(&self) -> bool {
        self.len == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn order(l: &List, a: &FolioArena) -> Vec<FolioId> {
        let mut v = Vec::new();
        let mut c = l.head;
        while c != NIL {
            v.push(c);
            c = a.links(c)[1];
        }
        v
    }

    #[test]
    fn head_tail_move_unlink() {
        let mut a = FolioArena::default();
        let ids: Vec<_> = (0..4).map(|i| a.alloc(0, i, 0, 0)).collect();
        let mut l = List::default();
        for &i in &ids {
            l.push_head(&mut a, i, 2);
        }
        assert_eq!(order(&l, &a), vec![3, 2, 1, 0]);
        l.move_to_head(&mut a, 0);
        assert_eq!(order(&l, &a), vec![0, 3, 2, 1]);
        assert_eq!(l.pop_tail(&mut a), Some(1));
        l.unlink(&mut a, 3);
        l.push_tail(&mut a, 3, 2);
        assert_eq!(order(&l, &a), vec![0, 2, 3]);
        assert_eq!(l.len, 3);
        assert_eq!(a.lru(2), 2);
        assert_eq!(a.lru(1), NO_LIST);
    }

    /// `replace` puts the new folio in the old one's place, at the head,
    /// in the middle and at the tail, and takes the old one off.
    #[test]
    fn replace_takes_the_place() {
        let mut a = FolioArena::default();
        let ids: Vec<_> = (0..3).map(|i| a.alloc(0, i, 0, 0)).collect();
        let mut l = List::default();
        for &i in &ids {
            l.push_head(&mut a, i, 2);
        }
        let (x, y, z) = (
            a.alloc(0, 7, 0, 0),
            a.alloc(0, 8, 0, 0),
            a.alloc(0, 9, 0, 0),
        );
        l.replace(&mut a, 1, x);
        assert_eq!(order(&l, &a), vec![2, x, 0]);
        l.replace(&mut a, 2, y);
        l.replace(&mut a, 0, z);
        assert_eq!(order(&l, &a), vec![y, x, z]);
        assert_eq!(order_from_tail(&l, &a), vec![z, x, y]);
        assert_eq!((l.len, l.pages), (3, 3));
        assert_eq!((a.lru(x), a.lru(1)), (2, NO_LIST));
        assert_eq!(a.links(1), [NIL, NIL]);
    }

    /// The list from its tail through the `prev` links: a splice that
    /// forgot a back link shows here, not in [`order`].
    fn order_from_tail(l: &List, a: &FolioArena) -> Vec<FolioId> {
        let mut v = Vec::new();
        let mut c = l.tail;
        while c != NIL {
            v.push(c);
            c = a.links(c)[0];
        }
        v
    }

    #[test]
    fn move_to_head_splices_middle_tail_and_head() {
        let mut a = FolioArena::default();
        let ids: Vec<_> = (0..4).map(|i| a.alloc(0, i, 0, 0)).collect();
        let mut l = List::default();
        for &i in &ids {
            l.push_head(&mut a, i, 5);
        }
        let (len, pages) = (l.len, l.pages);
        l.move_to_head(&mut a, 2); // middle
        assert_eq!(order(&l, &a), vec![2, 3, 1, 0]);
        l.move_to_head(&mut a, 0); // tail
        assert_eq!(order(&l, &a), vec![0, 2, 3, 1]);
        assert_eq!(l.tail, 1);
        l.move_to_head(&mut a, 0); // head: nothing moves
        assert_eq!(order(&l, &a), vec![0, 2, 3, 1]);
        assert_eq!(order_from_tail(&l, &a), vec![1, 3, 2, 0]);
        assert_eq!((l.len, l.pages), (len, pages));
        assert!(ids.iter().all(|&i| a.lru(i) == 5));
    }
}
