//! Buffer heads of written page-cache folios, charged to the folio's group
//! (fs/buffer.c and fs/ext4/inode.c, v6.18; `machine.fs.buffer_heads`,
//! with `machine.kmem_accounting`; off by default).
//!
//! ext4's buffered write path is not iomap's: `ext4_da_write_begin` (and
//! `ext4_write_begin`) call `ext4_block_write_begin`, which gives a folio
//! that has none its buffers first (`create_empty_buffers` →
//! `folio_alloc_buffers`), one `struct buffer_head` per block of the folio
//! (4 KiB blocks: one per page); a write fault on a shared mapping does
//! the same in `ext4_page_mkwrite` (`block_page_mkwrite` →
//! `__block_write_begin_int`). `folio_alloc_buffers` allocates them with
//! `GFP_NOFS | __GFP_ACCOUNT` (`__GFP_NOFAIL` from `create_empty_buffers`)
//! under `set_active_memcg(folio_memcg(folio))`: charged to the folio's
//! group, as every accounted slab object is (`obj_cgroup_charge` of
//! `obj_full_size`: the 104-byte object of the `buffer_head` cache, as
//! `/sys/kernel/slab/buffer_head/object_size` reads on the 6.18.44 host,
//! plus the 8-byte `obj_cgroup` pointer). The cache is
//! `SLAB_RECLAIM_ACCOUNT`: `slab_reclaimable`. The buffers stay with the
//! folio through writeback and after it; reclaim frees them
//! (`shrink_folio_list` → `filemap_release_folio` → `ext4_release_folio`
//! → `try_to_free_buffers`) just before `__remove_mapping`. ext4's reads
//! (`ext4_mpage_readpages`) attach none to a folio whose blocks are
//! mapped, so a page read and never written carries none.
//!
//! mmsim keeps one bit per page-cache page (file, index) that has its
//! buffer (the kernel's `folio_buffers`), so a folio's buffers survive its
//! migration (`buffer_migrate_folio` moves them; mmsim's folio ids change,
//! the index does not). The charge is made after the write dirtied the
//! folio (the kernel's is before the copy, with the folio locked so that
//! the charge's reclaim skips it; a dirty folio is skipped by mmsim's
//! reclaim the same way). Not modelled: 1 KiB and 2 KiB blocks (one
//! buffer per page here), the metadata buffers of the block device's page
//! cache, and the split of a large folio, which frees its buffers first
//! (`filemap_release_folio` in `__folio_split`): here they stay until the
//! pages leave the page cache.

use crate::config::{ConfigError, MachineConfig};
use crate::mem::folio::FolioId;
use crate::memcg::MemcgId;
use crate::sim::Sim;

/// Bytes charged per buffer head: the `buffer_head` slab object (104 on
/// x86-64) plus the `obj_cgroup` pointer (`obj_full_size`).
pub(crate) const BH_BYTES: u64 = 104 + 8;

/// `machine.fs.buffer_heads`'s checks: a filesystem setting, and charged
/// only with kernel memory accounting.
pub(crate) fn validate(cfg: &MachineConfig) -> Result<(), ConfigError> {
    if cfg.swap.buffer_heads {
        return Err(ConfigError::new(
            "machine.swap.buffer_heads",
            "buffer heads are a filesystem setting: set machine.fs.buffer_heads",
        ));
    }
    if cfg.fs.buffer_heads && !cfg.kmem_accounting {
        return Err(ConfigError::new(
            "machine.fs.buffer_heads",
            "buffer heads are charged as kernel memory: set machine.kmem_accounting = true too",
        ));
    }
    Ok(())
}

/// The pages of each file that hold a buffer head (`folio_buffers`).
#[derive(Clone, Debug, Default)]
pub(crate) struct Buffers {
    /// Per file, one bit per page index.
    files: Vec<Vec<u64>>,
}

impl Buffers {
    /// Sets the bits of `index..index + nr` of `file`; returns how many were clear.
    fn attach(&mut self, file: u32, index: u32, nr: u32) -> u64 {
        let f = file as usize;
        if f >= self.files.len() {
            self.files.resize(f + 1, Vec::new());
        }
        let words = &mut self.files[f];
        let last = ((index + nr - 1) / 64) as usize;
        if last >= words.len() {
            words.resize(last + 1, 0);
        }
        let mut added = 0;
        for i in index..index + nr {
            let (w, b) = ((i / 64) as usize, 1u64 << (i % 64));
            if words[w] & b == 0 {
                words[w] |= b;
                added += 1;
            }
        }
        added
    }

    /// Clears the bits of `index..index + nr` of `file`; returns how many were set.
    fn release(&mut self, file: u32, index: u32, nr: u32) -> u64 {
        let Some(words) = self.files.get_mut(file as usize) else {
            return 0;
        };
        let mut freed = 0;
        for i in index..index + nr {
            let (w, b) = ((i / 64) as usize, 1u64 << (i % 64));
            if let Some(x) = words.get_mut(w) {
                if *x & b != 0 {
                    *x &= !b;
                    freed += 1;
                }
            }
        }
        freed
    }

    /// Whether page `index` of `file` has its buffer (rule tests).
    #[cfg(test)]
    pub(crate) fn has(&self, file: u32, index: u32) -> bool {
        self.files
            .get(file as usize)
            .and_then(|w| w.get((index / 64) as usize))
            .is_some_and(|x| x & (1 << (index % 64)) != 0)
    }
}

impl Sim {
    /// `create_empty_buffers()` of `ext4_block_write_begin` (a buffered
    /// write) or `block_page_mkwrite` (a write fault on a shared mapping)
    /// for file folio `f`, just dirtied: the buffers of its pages that have
    /// none, charged to its group. Nothing without `fs.buffer_heads`.
    #[inline]
    pub(crate) fn create_empty_buffers(&mut self, f: FolioId) {
        if self.cfg.fs.buffer_heads && self.folios[f].is_file() {
            self.folio_alloc_buffers(f);
        }
    }

    /// [`Sim::create_empty_buffers`]'s allocation and charge.
    #[cold]
    #[inline(never)]
    fn folio_alloc_buffers(&mut self, f: FolioId) {
        let (m, file, index, nr) = self.folio_group_and_pages(f);
        let k = self
            .kmem
            .as_mut()
            .expect("fs.buffer_heads needs kmem_accounting");
        let added = k.buffers.attach(file, index, nr);
        if added == 0 {
            return;
        }
        k.group_buffer_heads(m, added as i64);
        use crate::gfp::{__GFP_ACCOUNT, __GFP_NOFAIL, GFP_NOFS};
        self.obj_cgroup_charge_gfp(
            m,
            added * BH_BYTES,
            true,
            GFP_NOFS | __GFP_NOFAIL | __GFP_ACCOUNT,
        );
    }

    /// `filemap_release_folio()` → `try_to_free_buffers()` of file folio `f`
    /// leaving the page cache (reclaim, just before `__remove_mapping`):
    /// its buffers freed and uncharged. Nothing without `fs.buffer_heads`.
    #[inline]
    pub(crate) fn try_to_free_buffers(&mut self, f: FolioId) {
        if self.cfg.fs.buffer_heads {
            self.free_folio_buffers(f);
        }
    }

    /// [`Sim::try_to_free_buffers`]'s uncharge.
    #[cold]
    #[inline(never)]
    fn free_folio_buffers(&mut self, f: FolioId) {
        let (m, file, index, nr) = self.folio_group_and_pages(f);
        let k = self
            .kmem
            .as_mut()
            .expect("fs.buffer_heads needs kmem_accounting");
        let freed = k.buffers.release(file, index, nr);
        if freed == 0 {
            return;
        }
        k.group_buffer_heads(m, -(freed as i64));
        self.obj_cgroup_uncharge(m, freed * BH_BYTES, true);
    }

    /// File folio `f`'s group, file, first page index and page count: the
    /// charge's owner and the range of its buffers.
    fn folio_group_and_pages(&self, f: FolioId) -> (MemcgId, u32, u32, u32) {
        let fo = &self.folios[f];
        (
            self.folios.memcg(f),
            fo.space,
            fo.index,
            fo.nr_pages() as u32,
        )
    }

    /// Whether page `index` of `file` has its buffer head (rule tests).
    #[cfg(test)]
    pub(crate) fn has_buffers(&self, file: u32, index: u32) -> bool {
        self.kmem
            .as_ref()
            .is_some_and(|k| k.buffers.has(file, index))
    }
}
