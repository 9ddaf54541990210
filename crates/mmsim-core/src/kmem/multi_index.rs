//! Multi-index entries in the page-cache xarray (lib/xarray.c with
//! `CONFIG_XARRAY_MULTI`, mm/filemap.c and mm/workingset.c, v6.18).
//!
//! `__filemap_add_folio` stores a large folio with `xas_set_order`, and
//! `page_cache_delete` stores its eviction's shadow the same way: one entry
//! over the folio's whole index range. `xas_store` puts an entry of order
//! N in the node whose slots are `N - N % 6` pages wide, in `2^(N % 6)`
//! slots (the canonical one and its siblings), and counts every one of
//! them in `node->count` and, for a value (shadow), in `node->nr_values`.
//! Orders below `XA_CHUNK_SHIFT` (6) therefore take `2^N` slots of a leaf,
//! exactly as `2^N` order-0 entries, which the per-slot model of
//! [`Sim::kmem_slot_changed`] already counts. Orders 6–9 (9 is
//! `MAX_PAGECACHE_ORDER`) live in a level-1 node instead, one to eight of
//! its slots, with no leaf under them: an order-9 folio or shadow costs no
//! leaf node, where the per-slot model kept eight. Storing such an entry
//! over a chunk that held a leaf (of shadows: a conflict with a page is
//! `-EEXIST`) frees the leaf (`xas_store` → `xas_free_nodes`, which takes
//! it off its shadow-node list through `workingset_update_node`).
//!
//! A level-1 node whose slots all hold multi-index shadows has
//! `count == nr_values` and goes on the `workingset_nodes` list as a leaf
//! of shadows does (`workingset_update_node` tests no level); the shrinker's
//! `shadow_lru_isolate` → `xa_delete_node` then deletes all of them (up to
//! 4096 pages' shadows) and the node.
//!
//! When a smaller folio is added inside a multi-index shadow's range,
//! `__filemap_add_folio` splits the shadow (`xas_split_alloc`, `xas_split`)
//! into entries of the folio's order, each holding the same shadow value:
//! to order 6–8 within the level-1 node (no node allocated), below 6 into
//! one new leaf per 64 pages, each full of values (`count` = `nr_values` =
//! 64) and updated from the last to the first (`xas_split` walks its
//! offsets down), so each goes on the shadow-node list, charged to the
//! adding task's group (`XA_FLAGS_ACCOUNT`). The refault reads the shadow
//! value of the faulting index: the slot array holds it in every page of
//! the range, so `workingset_refault` sees the same value at any index.
//!
//! The tree's height follows `xas_max`: an entry covering `0..2^N` with
//! N ≥ 6 needs the level above its slots even when nothing lies past it
//! (an order-6 entry at index 0 forces a level-1 node), counted as one
//! more entry past 64 in `ge[1]`. Not modelled: the kernel shrinks the
//! tree (`xas_shrink`) only when an entry is deleted, while the model's
//! shape is always the canonical one, which differs only after a split of
//! an order-6 shadow at index 0. The swap cache is not part of this model
//! (mmsim's kmem model has no swap-cache xarray; 6.18 keeps anonymous
//! shadows in the swap table, `mm/swap_table.h`, with no `xa_node`s).

use super::{class, Kmem, UPPER_KEY, XA_CHUNK_SHIFT, XA_LEVELS, XA_NODE_BYTES};
use crate::memcg::MemcgId;
use crate::sim::Sim;

/// At most the level-1 keys and key 0 of every level, and the leaves of
/// one order-9 entry plus leaf 0.
const MAX_CANDS: usize = 2 * XA_LEVELS + 9;

impl super::XaTree {
    /// The shadow-node list stamp of a node named as on the list.
    pub(super) fn stamp_mut(&mut self, key: u32) -> &mut u32 {
        if key & UPPER_KEY != 0 {
            &mut self.uppers[1][(key & !UPPER_KEY) as usize].stamp
        } else {
            &mut self.leaves[key as usize].stamp
        }
    }

    fn stamp(&self, key: u32) -> u32 {
        if key & UPPER_KEY != 0 {
            self.uppers[1][(key & !UPPER_KEY) as usize].stamp
        } else {
            self.leaves[key as usize].stamp
        }
    }
}

impl Kmem {
    /// Drops stale entries of group `m`'s shadow-node list once they
    /// outnumber the live ones (`list_lru_del` unlinks at once; the model's
    /// queue is pruned lazily).
    pub(super) fn prune_shadow_lru(&mut self, m: MemcgId) {
        let g = &self.groups[m as usize];
        if g.shadow_lru.len() as u64 > 2 * g.shadow_nodes + 1024 {
            let files = &self.files;
            let g = &mut self.groups[m as usize];
            g.shadow_lru
                .retain(|&(f, key, s)| files[f as usize].stamp(key) == s);
        }
    }
}

/// Multi-index entries of the page-cache xarray (see the module overview).
impl Sim {
    /// Whether page `index` of `file` lies in a multi-index entry (order ≥ 6).
    pub(super) fn kmem_in_multi(&self, file: u32, index: u32) -> bool {
        let k = self.kmem.as_ref().unwrap();
        k.files
            .get(file as usize)
            .and_then(|t| t.leaves.get((index >> XA_CHUNK_SHIFT) as usize))
            .is_some_and(|l| l.big != 0)
    }

    /// `node->count` and `node->nr_values` of level-1 node `key` of `file`
    /// (the slots a multi-index entry takes are counted in both; rule tests).
    #[cfg(test)]
    pub(crate) fn kmem_level1_counts(&self, file: u32, key: usize) -> (u8, u8) {
        let u = &self.kmem.as_ref().unwrap().files[file as usize].uppers[1][key];
        (u.count, u.values)
    }

    /// `xas_store()` of an entry of `order` ≥ 6 (a large folio added by
    /// `__filemap_add_folio`, or its shadow or nothing stored by
    /// `page_cache_delete`) over pages `index..index + 2^order` of `file`,
    /// whose slots still hold the old entries (the caller writes `new` into
    /// them after this). A larger multi-index shadow there is split to
    /// `order` first; leaves of shadows under the range are freed; the
    /// level-1 node's `count` and `nr_values` follow the slots; nodes are
    /// allocated (charged to the current group) or freed as the tree needs.
    #[cold]
    #[inline(never)]
    pub(crate) fn kmem_store_multi(&mut self, file: u32, index: u32, order: u8, new: u32) {
        debug_assert!((6..12).contains(&order) && index.is_multiple_of(1 << order));
        let c0 = (index >> XA_CHUNK_SHIFT) as usize;
        let nch = 1usize << (order - XA_CHUNK_SHIFT as u8);
        if self.kmem_in_multi(file, index) {
            let t = &self.kmem.as_ref().unwrap().files[file as usize];
            if t.leaves[c0].big_order > order {
                self.kmem_split_multi(file, index, order);
            }
        }
        let cn = class(new);
        // Pages present before and after, per level threshold (`ge`).
        let mut ge_delta = [0i64; XA_LEVELS];
        {
            let slots = &self.files[file as usize];
            for i in index..index + (1 << order) {
                let d = i64::from(cn != 0) - i64::from(class(slots.slot(i)) != 0);
                if d != 0 {
                    for (l, g) in ge_delta.iter_mut().enumerate() {
                        if u64::from(i) >= 1u64 << (XA_CHUNK_SHIFT as usize * l) {
                            *g += d;
                        }
                    }
                }
            }
        }
        let cands = cands(index, c0..c0 + nch);
        let k = self.kmem.as_mut().unwrap();
        let t = k.tree(file);
        t.leaf_mut(c0 + nch - 1);
        let before = snapshot(t, &cands);
        let virt_before = t.leaves[0].big != 0;
        let key1 = c0 >> XA_CHUNK_SHIFT;
        let mut occ_delta = 0i32;
        let mut val_delta = 0i32;
        for c in c0..c0 + nch {
            let l = &mut t.leaves[c];
            let was_occ = l.count > 0 || l.big != 0;
            occ_delta += i32::from(cn != 0) - i32::from(was_occ);
            val_delta += i32::from(cn == 2) - i32::from(l.big == 2);
            // A leaf here held only shadows: freed with them.
            l.count = 0;
            l.values = 0;
            l.big = cn;
            l.big_order = if cn != 0 { order } else { 0 };
        }
        let u = t.upper_mut(1, key1);
        let was = u.count > 0;
        u.count = (i32::from(u.count) + occ_delta) as u8;
        u.values = (i32::from(u.values) + val_delta) as u8;
        let now = u.count > 0;
        propagate(t, index, was, now);
        for (l, d) in ge_delta.iter().enumerate() {
            t.ge[l] = (i64::from(t.ge[l]) + d) as u32;
        }
        let virt_after = t.leaves[0].big != 0;
        t.ge[1] = (i64::from(t.ge[1]) + i64::from(virt_after) - i64::from(virt_before)) as u32;
        let mut leaves = [0usize; 10];
        let mut n = 0;
        for c in (c0..c0 + nch).chain([0]) {
            if !leaves[..n].contains(&c) {
                leaves[n] = c;
                n += 1;
            }
        }
        self.kmem_nodes_changed(file, &cands, &before, &leaves[..n], &[key1, 0]);
    }

    /// `xas_split()` of the multi-index shadow covering page `index` of
    /// `file` into entries of `order` (before `__filemap_add_folio` stores
    /// a smaller folio there): the same shadow in every new entry; below
    /// order 6 one new leaf per 64 pages, full of values, charged to the
    /// current group and put on its shadow-node list, last first.
    pub(super) fn kmem_split_multi(&mut self, file: u32, index: u32, order: u8) {
        let c = (index >> XA_CHUNK_SHIFT) as usize;
        let k = self.kmem.as_mut().unwrap();
        let t = &mut k.files[file as usize];
        let big = t.leaves[c];
        debug_assert!(big.big == 2 && big.big_order > order);
        let n = 1usize << (big.big_order - XA_CHUNK_SHIFT as u8);
        let first = c & !(n - 1);
        if order >= XA_CHUNK_SHIFT as u8 {
            for l in &mut t.leaves[first..first + n] {
                l.big_order = order;
            }
            return;
        }
        let start = (first << XA_CHUNK_SHIFT) as u32;
        let cands = cands(start, first..first + n);
        let before = snapshot(t, &cands);
        let key1 = first >> XA_CHUNK_SHIFT;
        for l in &mut t.leaves[first..first + n] {
            *l = super::Leaf {
                count: 1 << XA_CHUNK_SHIFT,
                values: 1 << XA_CHUNK_SHIFT,
                ..*l
            };
            l.big = 0;
            l.big_order = 0;
        }
        t.uppers[1][key1].values -= n as u8;
        if first == 0 {
            // No multi-index entry at index 0 now (see `kmem_store_multi`).
            t.ge[1] -= 1;
        }
        let mut leaves = [0usize; 9];
        for (j, c) in (first..first + n).rev().enumerate() {
            leaves[j] = c;
        }
        self.kmem_nodes_changed(file, &cands, &before, &leaves[..n], &[key1, 0]);
    }

    /// `shadow_lru_isolate()` → `xa_delete_node()` of level-1 node `key` of
    /// `file` (taken off the list by the caller): every multi-index shadow
    /// it holds deleted, the node and any parents left empty freed.
    pub(super) fn kmem_delete_upper(&mut self, file: u32, key: usize) {
        let saved = self.cur_memcg;
        let first = key << XA_CHUNK_SHIFT;
        let mut c = first;
        while c < first + (1 << XA_CHUNK_SHIFT) {
            let k = self.kmem.as_ref().unwrap();
            let Some(&l) = k.files[file as usize].leaves.get(c) else {
                break;
            };
            if l.big == 0 {
                c += 1;
                continue;
            }
            debug_assert_eq!(l.big, 2);
            let index = (c << XA_CHUNK_SHIFT) as u32;
            self.kmem_store_multi(file, index, l.big_order, 0);
            for i in index..index + (1 << l.big_order) {
                *self.files[file as usize].slot_mut(i) = 0;
            }
            c += 1 << (l.big_order - XA_CHUNK_SHIFT as u8);
        }
        self.cur_memcg = saved;
    }

    /// `workingset_update_node()` for level-1 node `key` of `file`: on its
    /// group's list while it holds only multi-index shadows.
    pub(super) fn kmem_update_upper(&mut self, file: u32, key: usize) {
        let k = self.kmem.as_mut().unwrap();
        let t = &mut k.files[file as usize];
        let Some(&u) = t.uppers[1].get(key) else {
            return;
        };
        let shadow_only = t.exists(1, key) && u.count > 0 && u.count == u.values;
        if shadow_only && u.stamp == 0 {
            k.next_stamp = k.next_stamp.wrapping_add(1).max(1);
            let stamp = k.next_stamp;
            k.files[file as usize].uppers[1][key].stamp = stamp;
            let g = k.group(u.owner);
            g.shadow_lru
                .push_back((file, key as u32 | UPPER_KEY, stamp));
            g.shadow_nodes += 1;
        } else if !shadow_only && u.stamp != 0 {
            k.files[file as usize].uppers[1][key].stamp = 0;
            k.group(u.owner).shadow_nodes -= 1;
            k.prune_shadow_lru(u.owner);
        }
    }

    /// The nodes among `cands` that appeared (charged to the current group,
    /// their slab objects allocated) or vanished (uncharged from their
    /// owners, freed), and the shadow-node list places of `leaves` and of
    /// the level-1 nodes `uppers`, as [`Sim::kmem_slot_changed`] does them.
    fn kmem_nodes_changed(
        &mut self,
        file: u32,
        cands: &Cands,
        before: &[bool; MAX_CANDS],
        leaves: &[usize],
        uppers: &[usize],
    ) {
        let m = self.cur_memcg;
        let k = self.kmem.as_mut().unwrap();
        let slub = k.slub.is_some();
        let t = &mut k.files[file as usize];
        let mut new_nodes = [(0usize, 0usize); MAX_CANDS];
        let mut alloc = 0;
        let mut freed = [(0 as MemcgId, 0u32); MAX_CANDS];
        let mut nfreed = 0;
        for (j, &(l, key)) in cands.list[..cands.n].iter().enumerate() {
            let after = t.exists(l, key);
            if !before[j] && after {
                *t.node_mut(l, key).0 = m;
                t.nodes += 1;
                new_nodes[alloc] = (l, key);
                alloc += 1;
            } else if before[j] && !after {
                t.nodes -= 1;
                let (owner, slab) = t.node_mut(l, key);
                freed[nfreed] = (*owner, *slab);
                nfreed += 1;
            }
        }
        if slub {
            for &(l, key) in &new_nodes[..alloc] {
                let id = self.slab_alloc(crate::slub::CacheId::RadixTreeNode);
                *self.kmem.as_mut().unwrap().files[file as usize]
                    .node_mut(l, key)
                    .1 = id;
            }
            for &(_, id) in &freed[..nfreed] {
                self.slab_free(crate::slub::CacheId::RadixTreeNode, id);
            }
        }
        for &key in leaves {
            self.kmem_update_node(file, key);
        }
        for &key in uppers {
            self.kmem_update_upper(file, key);
        }
        for &(owner, _) in &freed[..nfreed] {
            self.kmem.as_mut().unwrap().group(owner).xa_nodes -= 1;
            self.obj_cgroup_uncharge(owner, XA_NODE_BYTES, true);
        }
        if alloc > 0 {
            self.kmem.as_mut().unwrap().group(m).xa_nodes += alloc as u64;
            self.obj_cgroup_charge(m, alloc as u64 * XA_NODE_BYTES, true);
        }
    }
}

/// Nodes whose existence a store may change: (level, key), deduplicated.
struct Cands {
    list: [(usize, usize); MAX_CANDS],
    n: usize,
}

/// The candidates of a store at `index` over the leaves `chunks`: those
/// leaves and leaf 0, and at each upper level the node over `index` and
/// node 0 (the tree's height may change).
fn cands(index: u32, chunks: std::ops::Range<usize>) -> Cands {
    let mut c = Cands {
        list: [(0, 0); MAX_CANDS],
        n: 0,
    };
    let mut push = |x: (usize, usize)| {
        if !c.list[..c.n].contains(&x) {
            c.list[c.n] = x;
            c.n += 1;
        }
    };
    for ch in chunks.chain([0]) {
        push((0, ch));
    }
    for l in 1..XA_LEVELS {
        push((l, index as usize >> (XA_CHUNK_SHIFT as usize * (l + 1))));
        push((l, 0));
    }
    c
}

/// Which of `cands` exist now.
fn snapshot(t: &super::XaTree, cands: &Cands) -> [bool; MAX_CANDS] {
    let mut b = [false; MAX_CANDS];
    for (j, &(l, key)) in cands.list[..cands.n].iter().enumerate() {
        b[j] = t.exists(l, key);
    }
    b
}

/// The level-1 node over `index` went from occupied `was` to `now`: the
/// counts of the nodes above follow (as in [`Sim::kmem_slot_changed`]).
fn propagate(t: &mut super::XaTree, index: u32, was: bool, now: bool) {
    let mut change: i8 = match (was, now) {
        (false, true) => 1,
        (true, false) => -1,
        _ => 0,
    };
    for l in 2..XA_LEVELS {
        if change == 0 {
            break;
        }
        let u = t.upper_mut(l, index as usize >> (XA_CHUNK_SHIFT as usize * (l + 1)));
        let was = u.count > 0;
        if change > 0 {
            u.count += 1;
        } else {
            u.count -= 1;
        }
        change = match (was, u.count > 0) {
            (false, true) => 1,
            (true, false) => -1,
            _ => 0,
        };
    }
}
