//! Memory state: folios, lists, page tables, page cache, swap, devices.
//!
//! Pure data structures with O(1) operations; the rules that move folios
//! between them live in [`crate::fault`] and [`crate::reclaim`].

pub(crate) mod blockdev;
pub(crate) mod filemap;
pub(crate) mod folio;
pub(crate) mod list;
pub(crate) mod pagetable;
pub(crate) mod queue;
pub(crate) mod swap;
