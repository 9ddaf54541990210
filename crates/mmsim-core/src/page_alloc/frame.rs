//! One page frame's page-allocator state, the parts of `struct page`
//! (include/linux/mm_types.h, Linux v6.12) that mm/page_alloc.c keeps for
//! the buddy allocator, packed into one `u64`: the free-list links
//! (`page->buddy_list`), the order of a free block's head (`buddy_order`,
//! kept in `page->private` by `set_buddy_order` together with `PageBuddy`)
//! and the migrate type an allocated block was asked for.
//!
//! Bits, low to high: `next` 29, `prev` 29, `free_order` 4, `alloc_type` 2
//! (8 bytes per page frame, 10 before; issue #18 item 6). A link is a
//! zone-relative index below the zone's `spanned_pages` ≤
//! [`crate::config::MAX_MEMORY_PAGES`] (2^29), so every index fits 29 bits
//! and no index is left over for a "no block" sentinel. The end of a list
//! is a link to the frame itself instead, as the kernel's circular
//! `list_head`s end where a link returns to the list head and
//! `list_del_init` leaves an entry pointing at itself (include/linux/list.h,
//! `INIT_LIST_HEAD`, verified): a block is on at most one list, once, so
//! it is never its own neighbour. [`Frame::next`] and [`Frame::prev`] take
//! the frame's own index and give `NONE` for such a link, and the setters
//! store the own index for `NONE`, so the list code reads and writes the
//! same values as with the separate `u32` fields it had: results keep
//! their bits. `free_order` is 0..=`MAX_PAGE_ORDER` (10) or [`NOT_FREE`]
//! (15); `alloc_type` < `MIGRATE_TYPES` (3). The limits are compile-time
//! asserts below, and the setters `debug_assert!` their values.

use super::{MAX_PAGE_ORDER, MIGRATE_TYPES, NONE};

/// Bits of one free-list link.
const LINK_BITS: u32 = 29;
const LINK_MASK: u64 = (1 << LINK_BITS) - 1;
const PREV_SHIFT: u32 = LINK_BITS;
const ORDER_SHIFT: u32 = 2 * LINK_BITS;
const ORDER_MASK: u64 = 0xf;
const TYPE_SHIFT: u32 = ORDER_SHIFT + 4;
const TYPE_MASK: u64 = 0x3;

/// `free_order` of a frame that heads no free block (not `PageBuddy`).
pub(super) const NOT_FREE: u8 = ORDER_MASK as u8;

// The packing's limits (see the module comment).
const _: () = assert!(std::mem::size_of::<Frame>() == 8);
const _: () = assert!(TYPE_SHIFT + 2 == 64);
const _: () = assert!(crate::config::MAX_MEMORY_PAGES <= 1 << LINK_BITS);
const _: () = assert!(MAX_PAGE_ORDER < NOT_FREE as usize);
const _: () = assert!(MIGRATE_TYPES <= TYPE_MASK as usize + 1);
const _: () = assert!(NONE as u64 > LINK_MASK);

/// One page frame's allocator state (see the module comment).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(transparent)]
pub(super) struct Frame(u64);

impl Frame {
    /// A frame never written: not free (free blocks set their state when
    /// added). Links are read only for free blocks, and the allocation type
    /// only for allocated pages, which set them.
    pub(super) const BLANK: Frame = Frame((NOT_FREE as u64) << ORDER_SHIFT);

    /// The next block on this frame's free list, or `NONE` (`me` is this
    /// frame's own index).
    #[inline(always)]
    pub(super) fn next(self, me: u32) -> u32 {
        Self::unlink((self.0 & LINK_MASK) as u32, me)
    }

    /// The previous block on this frame's free list, or `NONE`.
    #[inline(always)]
    pub(super) fn prev(self, me: u32) -> u32 {
        Self::unlink(((self.0 >> PREV_SHIFT) & LINK_MASK) as u32, me)
    }

    /// Sets the next block (`NONE`: this frame ends its list).
    #[inline(always)]
    pub(super) fn set_next(&mut self, me: u32, next: u32) {
        let v = Self::link(next, me);
        self.0 = (self.0 & !LINK_MASK) | v;
    }

    /// Sets the previous block (`NONE`: this frame starts its list).
    #[inline(always)]
    pub(super) fn set_prev(&mut self, me: u32, prev: u32) {
        let v = Self::link(prev, me);
        self.0 = (self.0 & !(LINK_MASK << PREV_SHIFT)) | (v << PREV_SHIFT);
    }

    /// Order of the free block headed here, or [`NOT_FREE`].
    #[inline(always)]
    pub(super) fn free_order(self) -> u8 {
        ((self.0 >> ORDER_SHIFT) & ORDER_MASK) as u8
    }

    /// Sets the free block's order, or [`NOT_FREE`].
    #[inline(always)]
    pub(super) fn set_free_order(&mut self, order: u8) {
        debug_assert!(order as usize <= MAX_PAGE_ORDER || order == NOT_FREE);
        self.0 = (self.0 & !(ORDER_MASK << ORDER_SHIFT)) | (u64::from(order) << ORDER_SHIFT);
    }

    /// Migrate type the allocated block holding this page was asked for;
    /// used to count "alike" pages when a pageblock is claimed.
    #[inline(always)]
    pub(super) fn alloc_type(self) -> u8 {
        (self.0 >> TYPE_SHIFT) as u8
    }

    /// Sets the allocation's migrate type.
    #[inline(always)]
    pub(super) fn set_alloc_type(&mut self, mt: u8) {
        debug_assert!((mt as usize) < MIGRATE_TYPES);
        self.0 = (self.0 & !(TYPE_MASK << TYPE_SHIFT)) | (u64::from(mt) << TYPE_SHIFT);
    }

    /// A stored link as a block index: the frame's own index is the end.
    #[inline(always)]
    fn unlink(stored: u32, me: u32) -> u32 {
        if stored == me {
            NONE
        } else {
            stored
        }
    }

    /// A block index (or `NONE`) as the link to store.
    #[inline(always)]
    fn link(to: u32, me: u32) -> u64 {
        debug_assert!(me as u64 <= LINK_MASK);
        debug_assert!(to == NONE || (to as u64 <= LINK_MASK && to != me));
        u64::from(if to == NONE { me } else { to })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every field keeps its value when the others are written, at the
    /// limits: links 0 and 2^29 − 1 (the last frame of a 2 TiB zone),
    /// every order and `NOT_FREE`, every migrate type; a self-link reads
    /// as `NONE`.
    #[test]
    fn a_frame_packs_two_29_bit_links_an_order_and_a_type_in_8_bytes() {
        assert_eq!(std::mem::size_of::<Frame>(), 8);
        let last = (crate::config::MAX_MEMORY_PAGES - 1) as u32;
        let blank = Frame::BLANK;
        assert_eq!((blank.free_order(), blank.alloc_type()), (NOT_FREE, 0));
        for (me, next, prev) in [(5, last, 0), (last, 0, 7), (0, NONE, last), (9, 3, NONE)] {
            for order in (0..=MAX_PAGE_ORDER as u8).chain([NOT_FREE]) {
                for mt in 0..MIGRATE_TYPES as u8 {
                    let mut f = Frame::BLANK;
                    f.set_alloc_type(mt);
                    f.set_next(me, next);
                    f.set_free_order(order);
                    f.set_prev(me, prev);
                    assert_eq!(
                        (f.next(me), f.prev(me), f.free_order(), f.alloc_type()),
                        (next, prev, order, mt)
                    );
                    f.set_next(me, NONE);
                    f.set_alloc_type(0);
                    assert_eq!(
                        (f.next(me), f.prev(me), f.free_order(), f.alloc_type()),
                        (NONE, prev, order, 0)
                    );
                }
            }
        }
        // The end of a list is a link to the frame itself.
        let mut f = Frame::BLANK;
        f.set_next(last, NONE);
        f.set_prev(last, NONE);
        assert_eq!(f.0 & LINK_MASK, u64::from(last));
        assert_eq!((f.0 >> PREV_SHIFT) & LINK_MASK, u64::from(last));
    }
}
