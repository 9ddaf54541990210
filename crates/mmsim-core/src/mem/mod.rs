//! Memory state: folios, lists, page tables, page cache, swap, devices.
//!
//! Pure data structures with O(1) operations; the rules that move folios
//! between them live in [`crate::fault`] and [`crate::reclaim`].

pub mod blockdev;
pub mod filemap;
pub mod folio;
pub mod list;
pub mod pagetable;
pub mod swap;
