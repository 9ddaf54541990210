//! Kernel memory charged to memory cgroups (`memcg_kmem`, v6.12): the
//! `__GFP_ACCOUNT` allocations a workload causes, charged to its group
//! beside its pages (`machine.kmem_accounting`, off by default).
//!
//! Since 5.9 every accounted slab object carries its `obj_cgroup` and is
//! charged in bytes through the per-CPU object stock (`obj_cgroup_charge`,
//! `refill_obj_stock` of mm/memcontrol.c), which charges the group whole
//! pages through `try_charge_memcg` (with limit reclaim) as the bytes cross
//! page boundaries; accounted pages (`__memcg_kmem_charge_page`) are charged
//! whole. Under cgroup v1 the same pages also go to the `kmem` page counter
//! (`memcg_account_kmem`: `memory.kmem.usage_in_bytes`). Kernels 4.x–5.8
//! charged slab pages per memcg cache instead, and v1 only with a kmem limit
//! set before 4.6; this module follows 5.9+ (checked against v6.12).
//!
//! Three kinds are modelled:
//!
//! * **Page-cache xarray nodes.** Each file's `i_pages` is an xarray with
//!   `XA_FLAGS_ACCOUNT` (`__address_space_init_once`), so `xas_alloc` /
//!   `xas_nomem` (lib/xarray.c) allocate its `xa_node`s from the
//!   `radix_tree_node` slab with `__GFP_ACCOUNT`, charged to the inserting
//!   task's group. A node has 64 slots (`XA_CHUNK_SHIFT` 6); its object is
//!   576 bytes, 584 in the slab (as the host's /proc/slabinfo shows), plus
//!   the 8-byte `obj_cgroup` pointer `obj_full_size` charges too: 592 bytes.
//!   The cache is `SLAB_RECLAIM_ACCOUNT`: `slab_reclaimable`. The tree is
//!   the canonical one `xas_expand`/`xas_shrink` keep: a lone entry at index
//!   0 lives in the head (no node), otherwise the height is the least that
//!   covers the highest index, and a node exists where its range holds an
//!   entry (page or shadow). A leaf holding only shadow entries goes on the
//!   `workingset_nodes` list_lru of its group (`workingset_update_node`,
//!   mm/workingset.c), oldest first.
//! * **The shadow-node shrinker** (mm/workingset.c): at every group of a
//!   reclaim walk `shrink_slab` runs it. `count_shadow_nodes` allows the
//!   group `pages >> (XA_CHUNK_SHIFT - 3)` shadow-only nodes, `pages` its
//!   own LRU pages plus its slab pages (`lruvec_page_state_local`: current
//!   up to 6.7; since 6.8 the values of the group's last rstat flush, which
//!   mmsim follows under `machine.policy.memcg_stats_flush = "ratelimited"`
//!   — a group not flushed yet reads 0, so every shadow-only node is
//!   excess), and reports the excess;
//!   `do_shrink_slab` with `seeks = 0` scans half the excess plus the
//!   deferred work `>> priority` (at most twice the excess) in batches of
//!   `SHRINK_BATCH` (128), the rest deferred per group; `shadow_lru_isolate`
//!   deletes each node's shadows (`xa_delete_node`, freeing the node and any
//!   parents left empty) and counts `workingset_nodereclaim`. Refaults of
//!   those pages are no longer detected.
//! * **Page tables** (`pte_alloc_one`/`pmd_alloc_one`/`pud_alloc_one` with
//!   `GFP_PGTABLE_USER`): one PTE page per 2 MiB of a VMA touched, one PMD
//!   page per 1 GiB and one PUD page per 512 GiB, charged whole to the
//!   faulting task's group (`pagetables`). VMAs are taken as 2 MiB aligned
//!   and not sharing upper levels.
//! * **A task's baseline**, charged to its group when the run starts (as if
//!   forked there; kernel memory is never moved with a task): its kernel
//!   stack (`THREAD_SIZE` 16 KiB, `memcg_charge_kernel_stack`:
//!   `kernel_stack`), its PGD page (`pgd_alloc`: `pagetables`), and
//!   `TASK_SLAB_BYTES` of unreclaimable slab (`task_struct`, `mm_struct`,
//!   VMAs, signal, files and credentials: an estimate of a small process).
//!
//! * **Buffer heads** of written page-cache folios (`machine.fs.buffer_heads`,
//!   `buffer_head.rs`): one per page a write dirties, charged to the folio's
//!   group, freed when reclaim frees the folio.
//!
//! Not modelled: the node's free pages do not see kernel memory (only the
//! groups' counters do), percpu and socket memory, dentries and inodes.
//! With `machine.pagetable_frames` the page-table pages of faults (PTE, PMD
//! and PUD pages, not the baseline's PGD page) do take frames: order-0
//! `MIGRATE_UNMOVABLE` pages of the buddy allocator, taken through the
//! per-CPU unmovable list (v6.12 `rmqueue_pcplist`, refilled by
//! `rmqueue_bulk`), counted in the node's free pages, returned at exit and
//! OOM kill (`free_pgtables`) to the per-CPU list of their pageblock's type
//! (`free_unref_page`). With `machine.slab_frames` the xarray nodes' slabs
//! (`radix_tree_node`, reclaimable), each task's `task_struct` slab object
//! and its kernel stack (unmovable) take frames too (`crate::slub`).

use crate::PAGE_SIZE;
use std::collections::VecDeque;

pub(crate) mod buffer_head;
mod multi_index;

use crate::memcg::{MemcgId, ROOT};
use crate::sim::Sim;

/// `XA_CHUNK_SHIFT`: 64 slots per node.
pub(crate) const XA_CHUNK_SHIFT: u32 = 6;
/// Levels a 32-bit page index needs (64^6 > 2^32).
const XA_LEVELS: usize = 6;
/// Bytes charged per xarray node: the `radix_tree_node` slab's object size
/// (584) plus the `obj_cgroup` pointer (`obj_full_size`).
pub(crate) const XA_NODE_BYTES: u64 = 584 + 8;
/// `THREAD_SIZE` on x86-64 (16 KiB) in pages.
pub(crate) const KERNEL_STACK_PAGES: u64 = 4;
/// Unreclaimable slab per task (estimate: `task_struct` ~10 KiB, `mm_struct`,
/// a few dozen `vm_area_struct`s, signal/sighand, files, cred).
pub(crate) const TASK_SLAB_BYTES: u64 = 16 << 10;
/// Marks a level-1 node's key on a shadow-node list (`multi_index`).
const UPPER_KEY: u32 = 1 << 31;
/// `SHRINK_BATCH`.
const SHRINK_BATCH: u64 = 128;
/// Pages covered by one PTE page (2 MiB), one PMD page (1 GiB), one PUD page (512 GiB).
const PT_SHIFTS: [u32; 3] = [9, 18, 27];

/// A leaf node's state (one per 64 pages of a file).
#[derive(Clone, Copy, Debug, Default)]
struct Leaf {
    /// Entries (pages and shadows) in its range (`node->count`).
    count: u8,
    /// Shadow entries (`node->nr_values`).
    values: u8,
    /// The group the node was charged to.
    owner: MemcgId,
    /// Nonzero while on its owner's shadow-node list: the stamp of its entry there.
    stamp: u32,
    /// Its `radix_tree_node` slab (`machine.slab_frames`).
    slab: u32,
    /// The class (1 page, 2 shadow; 0 none) of the multi-index entry of
    /// order ≥ 6 that occupies this chunk's slot in the level-1 node
    /// instead of a leaf (`multi_index`); `count` is then 0.
    big: u8,
    /// That entry's order.
    big_order: u8,
}

/// An upper node's state.
#[derive(Clone, Copy, Debug, Default)]
struct Upper {
    /// Occupied slots (`node->count`): children with entries and, at
    /// level 1, the slots of multi-index entries (`multi_index`).
    count: u8,
    /// The group the node was charged to.
    owner: MemcgId,
    /// Its `radix_tree_node` slab (`machine.slab_frames`).
    slab: u32,
    /// Level 1: slots holding a multi-index shadow (`node->nr_values`).
    values: u8,
    /// Level 1: nonzero while on its owner's shadow-node list.
    stamp: u32,
}

/// One file's xarray shape.
#[derive(Clone, Debug, Default)]
pub(crate) struct XaTree {
    leaves: Vec<Leaf>,
    /// Levels 1..6 (index 0 unused).
    uppers: [Vec<Upper>; XA_LEVELS],
    /// Entries at an index ≥ 64^L, per level L: level L has nodes iff > 0.
    ge: [u32; XA_LEVELS],
    /// Nodes allocated now.
    pub(crate) nodes: u64,
}

impl XaTree {
    fn chunk_count(&self, level: usize, key: usize) -> u8 {
        if level == 0 {
            self.leaves.get(key).map_or(0, |l| l.count)
        } else {
            self.uppers[level].get(key).map_or(0, |u| u.count)
        }
    }
    fn exists(&self, level: usize, key: usize) -> bool {
        self.ge[level] > 0 && self.chunk_count(level, key) > 0
    }
    /// The group a node was charged to and its slab (`machine.slab_frames`).
    fn node_mut(&mut self, level: usize, key: usize) -> (&mut MemcgId, &mut u32) {
        if level == 0 {
            let l = &mut self.leaves[key];
            (&mut l.owner, &mut l.slab)
        } else {
            let u = &mut self.uppers[level][key];
            (&mut u.owner, &mut u.slab)
        }
    }
    fn leaf_mut(&mut self, key: usize) -> &mut Leaf {
        if key >= self.leaves.len() {
            self.leaves.resize(key + 1, Leaf::default());
        }
        &mut self.leaves[key]
    }
    fn upper_mut(&mut self, level: usize, key: usize) -> &mut Upper {
        let v = &mut self.uppers[level];
        if key >= v.len() {
            v.resize(key + 1, Upper::default());
        }
        &mut v[key]
    }
}

/// A group's kernel memory.
#[derive(Clone, Debug, Default)]
pub(crate) struct KmemGroup {
    /// Bytes of accounted slab objects charged to it.
    obj_bytes: u64,
    /// Pages charged to cover `obj_bytes` (the object stock's whole pages).
    obj_pages: u64,
    /// `slab_reclaimable`, bytes (xarray nodes, buffer heads).
    slab_reclaimable: u64,
    /// `slab_unreclaimable`, bytes (task structures).
    slab_unreclaimable: u64,
    /// `pagetables`, pages.
    pagetables: u64,
    /// `kernel_stack`, pages.
    kernel_stack: u64,
    /// `workingset_nodereclaim`.
    nodereclaim: u64,
    /// Xarray nodes charged to it now.
    xa_nodes: u64,
    /// `workingset_nodes` list_lru of this group: (file, node, stamp), oldest
    /// first, the node a leaf's key or a level-1 node's key | [`UPPER_KEY`];
    /// an entry whose stamp no longer matches its node's is stale.
    shadow_lru: VecDeque<(u32, u32, u32)>,
    /// Live entries of `shadow_lru` (`list_lru_shrink_count`).
    shadow_nodes: u64,
    /// The shrinker's deferred work for this group (`nr_deferred`).
    nr_deferred: u64,
    /// What `count_shadow_nodes` reads under `memcg_stats_flush =
    /// "ratelimited"`: the group's own LRU pages plus its slab pages as of
    /// its last rstat flush (`lruvec_page_state_local`), 0 before the first.
    flushed_pages: u64,
    /// Buffer heads charged to it now (`machine.fs.buffer_heads`).
    buffer_heads: u64,
}

impl KmemGroup {
    /// Pages charged to the group's counters for kernel memory.
    fn pages(&self) -> u64 {
        self.obj_pages + self.pagetables + self.kernel_stack
    }
}

/// Page-table coverage of one VMA: bitsets of touched 2 MiB, 1 GiB and 512 GiB ranges.
#[derive(Clone, Debug, Default)]
struct VmaTables {
    levels: [Vec<u64>; 3],
    owner: MemcgId,
    /// The page frames of its table pages (`machine.pagetable_frames`), in
    /// allocation order.
    frames: Vec<u32>,
}

/// The state of `machine.kmem_accounting` (see the module overview).
#[derive(Clone, Debug, Default)]
pub(crate) struct Kmem {
    files: Vec<XaTree>,
    groups: Vec<KmemGroup>,
    vmas: Vec<VmaTables>,
    /// Tasks `0..tasks_seen` have had their baseline charged (or were already
    /// dead when first seen); tasks are only ever appended.
    tasks_seen: usize,
    next_stamp: u32,
    /// The slab caches in page frames (`machine.slab_frames`).
    pub(crate) slub: Option<Box<crate::slub::Slub>>,
    /// The page-cache pages with a buffer head (`machine.fs.buffer_heads`).
    buffers: buffer_head::Buffers,
}

/// A group's kernel memory as its `memory.stat` shows it (hierarchical).
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct KmemReport {
    /// `kernel`, bytes: all kernel memory charged (`MEMCG_KMEM` pages).
    pub kernel: u64,
    /// `kernel_stack`, bytes.
    pub kernel_stack: u64,
    /// `pagetables`, bytes.
    pub pagetables: u64,
    /// `slab_reclaimable`, bytes (xarray nodes, buffer heads).
    pub slab_reclaimable: u64,
    /// `slab_unreclaimable`, bytes.
    pub slab_unreclaimable: u64,
    /// `workingset_nodereclaim`: shadow-only nodes reclaimed by the shrinker.
    pub workingset_nodereclaim: u64,
    /// Page-cache xarray nodes charged to the subtree now.
    pub xa_nodes: u64,
    /// Shadow-only nodes on the subtree's `workingset_nodes` lists now.
    pub shadow_nodes: u64,
    /// Buffer heads of written page-cache pages charged to the subtree now
    /// (`machine.fs.buffer_heads`; not written when 0).
    #[serde(default, skip_serializing_if = "crate::memcg_stats::is_zero")]
    pub buffer_heads: u64,
    /// v1 `memory.kmem.usage_in_bytes` (None under cgroup v2).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kmem_usage_in_bytes: Option<u64>,
}

impl KmemReport {
    /// Adds another group's (a subtree sum).
    fn add(&mut self, o: &KmemReport) {
        self.kernel += o.kernel;
        self.kernel_stack += o.kernel_stack;
        self.pagetables += o.pagetables;
        self.slab_reclaimable += o.slab_reclaimable;
        self.slab_unreclaimable += o.slab_unreclaimable;
        self.workingset_nodereclaim += o.workingset_nodereclaim;
        self.xa_nodes += o.xa_nodes;
        self.shadow_nodes += o.shadow_nodes;
        self.buffer_heads += o.buffer_heads;
    }

    /// Multiplies every count by `factor`, rounded (a sampled run scaled back).
    pub fn scale(&mut self, factor: f64) {
        let up = |x: &mut u64| *x = (*x as f64 * factor).round() as u64;
        for x in [
            &mut self.kernel,
            &mut self.kernel_stack,
            &mut self.pagetables,
            &mut self.slab_reclaimable,
            &mut self.slab_unreclaimable,
            &mut self.workingset_nodereclaim,
            &mut self.xa_nodes,
            &mut self.shadow_nodes,
            &mut self.buffer_heads,
        ] {
            up(x);
        }
        if let Some(x) = self.kmem_usage_in_bytes.as_mut() {
            up(x);
        }
    }

    /// The `memory.stat` lines, in pages as the simulator's other
    /// `memory.stat` lines (the kernel prints bytes; slab rounded up).
    pub fn memory_stat(&self) -> [(&'static str, u64); 6] {
        let pages = |b: u64| b.div_ceil(PAGE_SIZE);
        [
            ("kernel", pages(self.kernel)),
            ("kernel_stack", pages(self.kernel_stack)),
            ("pagetables", pages(self.pagetables)),
            ("slab_reclaimable", pages(self.slab_reclaimable)),
            ("slab_unreclaimable", pages(self.slab_unreclaimable)),
            ("workingset_nodereclaim", self.workingset_nodereclaim),
        ]
    }
}

/// Slot class: 0 empty, 1 page, 2 shadow.
#[inline]
fn class(slot: u32) -> u8 {
    if slot == 0 {
        0
    } else if crate::mem::filemap::slot_folio(slot).is_some() {
        1
    } else {
        2
    }
}

impl Kmem {
    /// The state of a machine of `cpus` CPUs, with its slab caches in
    /// page frames if `slab_frames` (`crate::slub`).
    pub(crate) fn new(slab_frames: bool, cpus: u32) -> Self {
        Kmem {
            slub: slab_frames.then(|| Box::new(crate::slub::Slub::new(cpus))),
            ..Default::default()
        }
    }
    fn group(&mut self, m: MemcgId) -> &mut KmemGroup {
        let i = m as usize;
        if i >= self.groups.len() {
            self.groups.resize(i + 1, KmemGroup::default());
        }
        &mut self.groups[i]
    }
    /// Adds `delta` to group `m`'s buffer heads (`crate::kmem::buffer_head`).
    fn group_buffer_heads(&mut self, m: MemcgId, delta: i64) {
        let g = self.group(m);
        g.buffer_heads = g.buffer_heads.checked_add_signed(delta).unwrap();
    }
    fn tree(&mut self, file: u32) -> &mut XaTree {
        let i = file as usize;
        if i >= self.files.len() {
            self.files.resize(i + 1, XaTree::default());
        }
        &mut self.files[i]
    }
}

/// Kernel memory accounting (see the module overview).
impl Sim {
    /// Pages of kernel memory charged to group `m` itself (not its children).
    pub(crate) fn kmem_pages(&self, m: MemcgId) -> u64 {
        self.kmem
            .as_ref()
            .and_then(|k| k.groups.get(m as usize))
            .map_or(0, |g| g.pages())
    }

    /// Charges `nr` kernel pages to `m` as `try_charge_memcg` does (with limit
    /// reclaim); a charge that still fails is forced, as the allocation
    /// would have been retried or failed (not modelled).
    fn kmem_charge_pages(&mut self, m: MemcgId, nr: u64, gfp: crate::gfp::Gfp) {
        let saved = self.cur_memcg;
        self.cur_memcg = m;
        if !self.try_charge_memcg(nr, gfp) {
            let mut cur = Some(m);
            while let Some(c) = cur {
                let g = &mut self.memcgs[c as usize];
                g.usage += nr;
                cur = g.parent;
            }
        }
        self.cur_memcg = saved;
    }

    /// `obj_cgroup_charge()` of `bytes` to `m` through the object stock:
    /// whole pages are charged as the bytes outgrow the pages already charged.
    fn obj_cgroup_charge(&mut self, m: MemcgId, bytes: u64, reclaimable: bool) {
        self.obj_cgroup_charge_gfp(m, bytes, reclaimable, crate::gfp::GFP_KERNEL);
    }

    /// [`Sim::obj_cgroup_charge`] of an allocation with mask `gfp`.
    fn obj_cgroup_charge_gfp(
        &mut self,
        m: MemcgId,
        bytes: u64,
        reclaimable: bool,
        gfp: crate::gfp::Gfp,
    ) {
        let k = self.kmem.as_mut().unwrap();
        let g = k.group(m);
        g.obj_bytes += bytes;
        if reclaimable {
            g.slab_reclaimable += bytes;
        } else {
            g.slab_unreclaimable += bytes;
        }
        let need = g.obj_bytes.div_ceil(PAGE_SIZE);
        let more = need.saturating_sub(g.obj_pages);
        if more > 0 {
            g.obj_pages += more;
            self.kmem_charge_pages(m, more, gfp);
        }
    }

    /// `obj_cgroup_uncharge()`: the stock gives whole pages back once it
    /// holds more than a page (`refill_obj_stock`).
    fn obj_cgroup_uncharge(&mut self, m: MemcgId, bytes: u64, reclaimable: bool) {
        let k = self.kmem.as_mut().unwrap();
        let g = k.group(m);
        g.obj_bytes -= bytes;
        if reclaimable {
            g.slab_reclaimable -= bytes;
        } else {
            g.slab_unreclaimable -= bytes;
        }
        let surplus = g.obj_pages * PAGE_SIZE - g.obj_bytes;
        if surplus > PAGE_SIZE {
            let nr = surplus / PAGE_SIZE;
            g.obj_pages -= nr;
            self.page_counter_uncharge(m, nr);
        }
    }

    /// The page-cache slot of `index` in `file` changed from `old` to `new`
    /// (`xas_store` with `workingset_update_node`): xarray nodes allocated
    /// (charged to the current group) or freed, and the leaf put on or taken
    /// off its group's shadow-node list.
    #[cold]
    #[inline(never)]
    pub(crate) fn kmem_slot_changed(&mut self, file: u32, index: u32, old: u32, new: u32) {
        let (co, cn) = (class(old), class(new));
        if co == cn {
            return;
        }
        if self.kmem_in_multi(file, index) {
            // A smaller entry stored into a multi-index shadow's range:
            // `__filemap_add_folio` splits it first (`xas_split`).
            self.kmem_split_multi(file, index, 0);
        }
        let m = self.cur_memcg;
        let i = index as usize;
        let k = self.kmem.as_mut().unwrap();
        let slub = k.slub.is_some();
        let t = k.tree(file);
        // The chunks whose node may appear or vanish: the index's own and,
        // when a level appears or vanishes, the first.
        let keys = |l: usize| [i >> (XA_CHUNK_SHIFT as usize * (l + 1)), 0];
        let mut before = [[false; 2]; XA_LEVELS];
        for (l, b) in before.iter_mut().enumerate() {
            let ks = keys(l);
            *b = [t.exists(l, ks[0]), t.exists(l, ks[1])];
        }
        // Counts.
        let leaf_key = i >> XA_CHUNK_SHIFT;
        let leaf = t.leaf_mut(leaf_key);
        let was_nonempty = leaf.count > 0;
        match (co, cn) {
            (0, _) => leaf.count += 1,
            (_, 0) => leaf.count -= 1,
            _ => {}
        }
        if co == 2 {
            leaf.values -= 1;
        }
        if cn == 2 {
            leaf.values += 1;
        }
        let mut child_change: i8 = match (was_nonempty, leaf.count > 0) {
            (false, true) => 1,
            (true, false) => -1,
            _ => 0,
        };
        for l in 1..XA_LEVELS {
            if child_change == 0 {
                break;
            }
            let u = t.upper_mut(l, keys(l)[0]);
            let was = u.count > 0;
            if child_change > 0 {
                u.count += 1;
            } else {
                u.count -= 1;
            }
            child_change = match (was, u.count > 0) {
                (false, true) => 1,
                (true, false) => -1,
                _ => 0,
            };
        }
        let entry_delta: i64 = match (co, cn) {
            (0, _) => 1,
            (_, 0) => -1,
            _ => 0,
        };
        if entry_delta != 0 {
            for l in 0..XA_LEVELS {
                let threshold = 1u64 << (XA_CHUNK_SHIFT as usize * l);
                if (index as u64) >= threshold {
                    t.ge[l] = (t.ge[l] as i64 + entry_delta) as u32;
                }
            }
        }
        let mut alloc = 0u64;
        let mut freed: [(MemcgId, u64); 2 * XA_LEVELS] = [(0, 0); 2 * XA_LEVELS];
        let mut nfreed = 0;
        // The nodes' slab objects (`machine.slab_frames`): (level, key) of
        // each new node, the slab of each freed one.
        let mut new_nodes = [(0usize, 0usize); 2 * XA_LEVELS];
        let mut freed_slabs = [0u32; 2 * XA_LEVELS];
        for (l, b) in before.iter().enumerate() {
            let ks = keys(l);
            for j in 0..2 {
                if j == 1 && ks[1] == ks[0] {
                    continue;
                }
                let after = t.exists(l, ks[j]);
                if !b[j] && after {
                    *t.node_mut(l, ks[j]).0 = m;
                    t.nodes += 1;
                    new_nodes[alloc as usize] = (l, ks[j]);
                    alloc += 1;
                } else if b[j] && !after {
                    t.nodes -= 1;
                    let (owner, slab) = t.node_mut(l, ks[j]);
                    freed[nfreed] = (*owner, 1);
                    freed_slabs[nfreed] = *slab;
                    nfreed += 1;
                }
            }
        }
        if slub {
            // `xas_alloc` → `kmem_cache_alloc_lru` before the store, then
            // `xa_node_free` of the nodes the store left empty.
            for &(l, key) in &new_nodes[..alloc as usize] {
                let id = self.slab_alloc(crate::slub::CacheId::RadixTreeNode);
                *self.kmem.as_mut().unwrap().files[file as usize]
                    .node_mut(l, key)
                    .1 = id;
            }
            for &id in &freed_slabs[..nfreed] {
                self.slab_free(crate::slub::CacheId::RadixTreeNode, id);
            }
        }
        // The leaves' place on the shadow-node lists, and their level-1
        // nodes' (which only multi-index shadows put there).
        for key in [leaf_key, 0] {
            self.kmem_update_node(file, key);
        }
        for key in [leaf_key >> XA_CHUNK_SHIFT, 0] {
            self.kmem_update_upper(file, key);
        }
        for &(owner, n) in &freed[..nfreed] {
            self.kmem.as_mut().unwrap().group(owner).xa_nodes -= n;
            self.obj_cgroup_uncharge(owner, n * XA_NODE_BYTES, true);
        }
        if alloc > 0 {
            self.kmem.as_mut().unwrap().group(m).xa_nodes += alloc;
            self.obj_cgroup_charge(m, alloc * XA_NODE_BYTES, true);
        }
    }

    /// `workingset_update_node()` for leaf `key` of `file`.
    fn kmem_update_node(&mut self, file: u32, key: usize) {
        let k = self.kmem.as_mut().unwrap();
        let t = &mut k.files[file as usize];
        if key >= t.leaves.len() {
            return;
        }
        let exists = t.exists(0, key);
        let l = t.leaves[key];
        let shadow_only = exists && l.count > 0 && l.count == l.values;
        if shadow_only && l.stamp == 0 {
            k.next_stamp = k.next_stamp.wrapping_add(1).max(1);
            let stamp = k.next_stamp;
            k.files[file as usize].leaves[key].stamp = stamp;
            let g = k.group(l.owner);
            g.shadow_lru.push_back((file, key as u32, stamp));
            g.shadow_nodes += 1;
        } else if !shadow_only && l.stamp != 0 {
            k.files[file as usize].leaves[key].stamp = 0;
            let g = k.group(l.owner);
            g.shadow_nodes -= 1;
            k.prune_shadow_lru(l.owner);
        }
    }

    /// Group `m`'s own LRU pages plus its slab pages, live: the `pages` of
    /// `count_shadow_nodes` for a memcg.
    fn kmem_local_pages(&mut self, m: MemcgId) -> u64 {
        let g = self.kmem.as_mut().unwrap().group(m);
        let slab = (g.slab_reclaimable + g.slab_unreclaimable) / PAGE_SIZE;
        let lv = &self.memcgs[m as usize].lruvec;
        let compat = lv.lrugen.compat_sizes();
        let lru_pages: u64 = (0..5).map(|l| lv.lists[l].pages + compat[l]).sum();
        lru_pages + slab
    }

    /// The rstat flush of group `m` as the shadow-node shrinker sees it
    /// (`crate::memcg_stats`): its local pages recorded.
    pub(crate) fn kmem_flush_stats(&mut self, m: MemcgId) {
        // Read only under 6.8+'s ratelimited flush (see `shrink_slab_shadow`).
        if self.kmem.is_some() && !self.memcg_stats.on_reclaim {
            let pages = self.kmem_local_pages(m);
            self.kmem.as_mut().unwrap().group(m).flushed_pages = pages;
        }
    }

    /// `shrink_slab()` of the shadow-node shrinker for group `m` at
    /// `priority` (`do_shrink_slab` with `count_shadow_nodes` and
    /// `scan_shadow_nodes`) by a reclaimer whose clock reads `now` (ns:
    /// its `ScanControl`'s start plus the time it has spent, which is what
    /// `jiffies_64` is when the kernel's reclaimer gets here); returns the
    /// nodes reclaimed.
    #[cold]
    #[inline(never)]
    pub(crate) fn shrink_slab_shadow(&mut self, m: MemcgId, priority: u32, now: u64) -> u64 {
        let Some(k) = self.kmem.as_mut() else {
            return 0;
        };
        let g = k.group(m);
        let nodes = g.shadow_nodes;
        if nodes == 0 {
            return 0;
        }
        let pages = if m == ROOT && self.memcgs.len() == 1 {
            // No memcg: node_present_pages.
            self.cfg.memory.pages()
        } else if self.memcg_stats.ratelimited && !self.memcg_stats.on_reclaim {
            // 6.8+ (f82e6bf9bb9b moved the local statistics to rstat;
            // 417dbd7be383 ratelimited this flush): the local statistics as
            // of the group's last flush, which a group younger than the
            // periodic flusher's 2 s has never had (0 pages: every node
            // over none is excess). Up to 6.7 (`reclaim`, `sync`) the local
            // statistics were per-CPU sums, current.
            self.mem_cgroup_flush_stats_ratelimited(m, now);
            self.kmem.as_mut().unwrap().group(m).flushed_pages
        } else {
            self.kmem_local_pages(m)
        };
        let max_nodes = pages >> (XA_CHUNK_SHIFT - 3);
        let freeable = nodes.saturating_sub(max_nodes);
        if freeable == 0 {
            return 0;
        }
        let g = self.kmem.as_mut().unwrap().group(m);
        let nr = std::mem::take(&mut g.nr_deferred);
        let delta = freeable / 2;
        let mut total_scan = ((nr >> priority) + delta).min(2 * freeable);
        let mut scanned = 0;
        let mut freed = 0;
        while total_scan >= SHRINK_BATCH || total_scan >= freeable {
            let n = total_scan.min(SHRINK_BATCH);
            for _ in 0..n {
                if !self.shadow_lru_isolate(m) {
                    break;
                }
                freed += 1;
            }
            total_scan -= n;
            scanned += n;
        }
        let next = (nr + delta).saturating_sub(scanned).min(2 * freeable);
        self.kmem.as_mut().unwrap().group(m).nr_deferred += next;
        freed
    }

    /// `shadow_lru_isolate()`: takes the oldest shadow-only node of `m`'s
    /// list, deletes its shadows (the node and any parents left empty are
    /// freed) and counts `workingset_nodereclaim`. False if the list is empty.
    fn shadow_lru_isolate(&mut self, m: MemcgId) -> bool {
        let (file, key) = loop {
            let k = self.kmem.as_mut().unwrap();
            let Some((f, key, s)) = k.groups[m as usize].shadow_lru.pop_front() else {
                return false;
            };
            let stamp = k.files[f as usize].stamp_mut(key);
            if *stamp == s {
                *stamp = 0;
                k.groups[m as usize].shadow_nodes -= 1;
                break (f, key);
            }
        };
        if key & UPPER_KEY != 0 {
            // A level-1 node holding only multi-index shadows.
            self.kmem_delete_upper(file, (key & !UPPER_KEY) as usize);
            self.kmem.as_mut().unwrap().group(m).nodereclaim += 1;
            return true;
        }
        let key = key as usize;
        let start = (key << XA_CHUNK_SHIFT) as u32;
        let end = start.saturating_add(1 << XA_CHUNK_SHIFT);
        let saved = self.cur_memcg;
        for index in start..end {
            let old = self.files[file as usize].slot(index);
            if old != 0 && crate::mem::filemap::slot_folio(old).is_none() {
                *self.files[file as usize].slot_mut(index) = 0;
                self.kmem_slot_changed(file, index, old, 0);
            }
        }
        self.cur_memcg = saved;
        self.kmem.as_mut().unwrap().group(m).nodereclaim += 1;
        true
    }

    /// `__pte_alloc()` and the upper levels' allocations on a fault at page
    /// `index` of `vma` whose PTE is none: a page-table page for each level
    /// whose range was not touched before, charged to the current group.
    #[cold]
    #[inline(never)]
    pub(crate) fn kmem_pte_alloc(&mut self, vma: u32, index: u32) {
        let mut frames = [0u32; 3];
        let mut taken = 0;
        if self.cfg.pagetable_frames {
            // The table pages are allocated before they are linked in: the
            // allocation may reclaim, and its OOM kill may take this task
            // (whose tables are then freed without these).
            let new = self.kmem_new_tables(vma, index);
            for _ in 0..new {
                if let Some(pfn) = self.pagetable_alloc_frame() {
                    frames[taken] = pfn;
                    taken += 1;
                }
            }
            if self.tasks[self.vmas[vma as usize].task as usize].dead {
                for &pfn in &frames[..taken] {
                    self.free_kernel_frames(pfn, 0);
                }
                return;
            }
        }
        let m = self.cur_memcg;
        let k = self.kmem.as_mut().unwrap();
        let i = vma as usize;
        if i >= k.vmas.len() {
            k.vmas.resize(i + 1, VmaTables::default());
        }
        let vt = &mut k.vmas[i];
        let mut nr = 0;
        for (l, &shift) in PT_SHIFTS.iter().enumerate() {
            let bit = (index >> shift) as usize;
            let words = &mut vt.levels[l];
            if bit / 64 >= words.len() {
                words.resize(bit / 64 + 1, 0);
            }
            if words[bit / 64] & (1 << (bit % 64)) == 0 {
                words[bit / 64] |= 1 << (bit % 64);
                nr += 1;
            }
        }
        vt.frames.extend_from_slice(&frames[..taken]);
        if nr > 0 {
            vt.owner = m;
            k.group(m).pagetables += nr;
            self.kmem_charge_pages(m, nr, crate::gfp::GFP_KERNEL);
        }
    }

    /// The table pages a fault at page `index` of `vma` would allocate: the
    /// levels whose range holds no table yet.
    fn kmem_new_tables(&self, vma: u32, index: u32) -> usize {
        let k = self.kmem.as_ref().unwrap();
        let Some(vt) = k.vmas.get(vma as usize) else {
            return PT_SHIFTS.len();
        };
        PT_SHIFTS
            .iter()
            .enumerate()
            .filter(|&(l, &shift)| {
                let bit = (index >> shift) as usize;
                vt.levels[l]
                    .get(bit / 64)
                    .is_none_or(|w| w & (1 << (bit % 64)) == 0)
            })
            .count()
    }

    /// `pte_alloc_one` → `pagetable_alloc(GFP_PGTABLE_USER, 0)` with
    /// `machine.pagetable_frames` (mm/page_alloc.c, v6.12): one page taken
    /// as every order-0 allocation takes it (`alloc_page`: WMARK_LOW, kswapd,
    /// direct reclaim, the OOM killer), then its frame from the per-CPU
    /// `MIGRATE_UNMOVABLE` list (`rmqueue_pcplist`), which `rmqueue_bulk`
    /// refills `batch` pages at a time from the buddy lists, one `__rmqueue`
    /// a page (`page_alloc/pcp.rs`). When the unmovable buddy lists are
    /// empty: under `rmqueue_fallback = "6.15"` one claim search per refill
    /// (perhaps claiming a movable pageblock), steal mode for the rest of
    /// the batch; under `"6.12"` (v6.12.0's `rmqueue_bulk` keeps no mode)
    /// each page that still finds them empty does its own
    /// `__rmqueue_fallback`, a claim attempt and perhaps a boost each,
    /// until one claims a pageblock. None when not
    /// even the OOM killer made room (the table is still counted; the
    /// kernel's fault would fail with VM_FAULT_OOM).
    fn pagetable_alloc_frame(&mut self) -> Option<u32> {
        let gfp = crate::gfp::GFP_PGTABLE_USER | crate::gfp::__GFP_COMP;
        if !self.alloc_page(gfp) {
            return self.alloc_failed(0, gfp);
        }
        self.count_vm_events(crate::stats::item::PGALLOC_NORMAL, 1);
        let mt = crate::page_alloc::MigrateType::Unmovable;
        // With ZONE_DMA the zonelist walk may have picked DMA for this page
        // (GFP_PGTABLE_USER falls back to it as user pages do).
        if let Some(d) = self.phys.dma.as_mut().filter(|d| d.take_dma) {
            // No `rmqueue_boosted` here: boosting is refused with ZONE_DMA
            // (`validate_watermark_boost`), so no steal is ever pending.
            debug_assert!(!self.phys.zone.boost.pending);
            d.take_dma = false;
            let pfn = d.zone.alloc_pages(0, mt);
            if d.zone.extfrag.is_some() {
                self.trace_extfrag_flush();
            }
            let pfn = pfn.expect("the zonelist picked DMA with a free page");
            return self.traced_alloc(Some(pfn), 0, gfp).map(|p| p as u32);
        }
        let pfn = self.phys.rmqueue_pcplist(mt);
        self.rmqueue_boosted(true);
        self.traced_alloc(Some(pfn), 0, gfp).map(|p| p as u32)
    }

    /// The page frames of VMA `vma`'s page tables, in allocation order.
    #[cfg(test)]
    pub(crate) fn kmem_vma_frames(&self, vma: u32) -> Vec<u32> {
        self.kmem
            .as_ref()
            .and_then(|k| k.vmas.get(vma as usize))
            .map_or(Vec::new(), |v| v.frames.clone())
    }

    /// Page frames held by page tables (`machine.pagetable_frames`).
    pub(crate) fn kmem_pagetable_frames(&self) -> u64 {
        self.kmem
            .as_ref()
            .map_or(0, |k| k.vmas.iter().map(|v| v.frames.len() as u64).sum())
    }

    /// Every task's baseline (kernel stack, PGD page, task structures) not
    /// charged yet, charged to its group now (at the start of a run).
    #[cold]
    #[inline(never)]
    pub(crate) fn kmem_charge_tasks(&mut self) {
        let n = self.tasks.len();
        let first = std::mem::replace(&mut self.kmem.as_mut().unwrap().tasks_seen, n);
        for t in first..n {
            if self.tasks[t].dead {
                continue;
            }
            let m = self.tasks[t].memcg;
            let g = self.kmem.as_mut().unwrap().group(m);
            g.kernel_stack += KERNEL_STACK_PAGES;
            g.pagetables += 1;
            self.kmem_charge_pages(m, KERNEL_STACK_PAGES + 1, crate::gfp::GFP_KERNEL);
            self.obj_cgroup_charge(m, TASK_SLAB_BYTES, false);
            self.slub_task_alloc(t);
        }
    }

    /// The baseline [`Sim::kmem_charge_tasks`] charged for task `t` (its stack,
    /// PGD page and task structures) uncharged: the task exited
    /// (`free_task`, `free_thread_stack`, `pgd_free`). Nothing if it was never
    /// charged (accounting off, or exited before a run started).
    pub(crate) fn kmem_free_task(&mut self, t: usize) {
        let Some(k) = self.kmem.as_mut() else {
            return;
        };
        if t >= k.tasks_seen {
            return;
        }
        let m = self.tasks[t].memcg;
        let g = k.group(m);
        g.kernel_stack -= KERNEL_STACK_PAGES;
        g.pagetables -= 1;
        self.page_counter_uncharge(m, KERNEL_STACK_PAGES + 1);
        self.obj_cgroup_uncharge(m, TASK_SLAB_BYTES, false);
        self.slub_task_free(t);
    }

    /// Page-table pages (PTE, PMD and PUD levels) VMA `vma` holds, as
    /// `mm_pgtables_bytes` counts them; None when accounting is off.
    pub(crate) fn kmem_vma_tables(&self, vma: u32) -> Option<u64> {
        let k = self.kmem.as_ref()?;
        Some(k.vmas.get(vma as usize).map_or(0, |vt| {
            vt.levels
                .iter()
                .flat_map(|w| w.iter())
                .map(|w| u64::from(w.count_ones()))
                .sum()
        }))
    }

    /// The page tables of a killed task's VMAs freed (`free_pgtables` at exit).
    pub(crate) fn kmem_free_vma_tables(&mut self, vma: u32) {
        let Some(k) = self.kmem.as_mut() else {
            return;
        };
        let Some(vt) = k.vmas.get_mut(vma as usize) else {
            return;
        };
        let nr: u64 = vt
            .levels
            .iter()
            .flat_map(|w| w.iter())
            .map(|w| w.count_ones() as u64)
            .sum();
        let owner = vt.owner;
        let frames = std::mem::take(&mut vt.frames);
        *vt = VmaTables::default();
        if nr > 0 {
            k.group(owner).pagetables -= nr;
            self.page_counter_uncharge(owner, nr);
        }
        // `pagetable_free` → `__free_page` → `free_unref_page` of each
        // table page: to the per-CPU list of its pageblock's type.
        for &pfn in &frames {
            self.free_kernel_frames(pfn, 0);
        }
    }

    /// `__free_pages` of a kernel allocation's block of `order` at `pfn`
    /// (page tables, slabs, kernel stacks; mm/page_alloc.c, v6.12): order 0
    /// to the per-CPU list of its pageblock's type (`free_unref_page`),
    /// larger orders to the zone, counted in `pgfree` and the node's free pages.
    pub(crate) fn free_kernel_frames(&mut self, pfn: u32, order: usize) {
        self.free_frames(pfn, order);
        self.node.free += 1 << order;
        self.count_vm_events(crate::stats::item::PGFREE, 1 << order);
    }

    /// The kernel memory of group `m`'s subtree (hierarchical, as memory.stat).
    pub(crate) fn kmem_report(&self, m: MemcgId) -> Option<KmemReport> {
        let k = self.kmem.as_ref()?;
        let mut r = KmemReport::default();
        let mut cur = Some(m);
        while let Some(c) = cur {
            if let Some(g) = k.groups.get(c as usize) {
                r.add(&KmemReport {
                    kernel: g.pages() * PAGE_SIZE,
                    kernel_stack: g.kernel_stack * PAGE_SIZE,
                    pagetables: g.pagetables * PAGE_SIZE,
                    slab_reclaimable: g.slab_reclaimable,
                    slab_unreclaimable: g.slab_unreclaimable,
                    workingset_nodereclaim: g.nodereclaim,
                    xa_nodes: g.xa_nodes,
                    shadow_nodes: g.shadow_nodes,
                    buffer_heads: g.buffer_heads,
                    kmem_usage_in_bytes: None,
                });
            }
            cur = self.mem_cgroup_iter(m, c);
        }
        if self.cfg.cgroup_version == crate::config::CgroupVersion::V1 {
            r.kmem_usage_in_bytes = Some(r.kernel);
        }
        Some(r)
    }

    /// The invariants of the kernel-memory state (for `Sim::check_invariants`):
    /// the groups' xarray nodes are the files' nodes, and each group's object
    /// stock covers its objects with less than two pages to spare.
    pub(crate) fn kmem_check(&self) -> Result<(), String> {
        let Some(k) = self.kmem.as_ref() else {
            return Ok(());
        };
        let files: u64 = k.files.iter().map(|t| t.nodes).sum();
        let groups: u64 = k.groups.iter().map(|g| g.xa_nodes).sum();
        if files != groups {
            return Err(format!(
                "kmem: files hold {files} xarray nodes, groups {groups}"
            ));
        }
        for (m, g) in k.groups.iter().enumerate() {
            let covered = g.obj_pages * PAGE_SIZE;
            if covered < g.obj_bytes || covered >= g.obj_bytes + 2 * PAGE_SIZE {
                return Err(format!(
                    "kmem: group {m} has {} object bytes in {} pages",
                    g.obj_bytes, g.obj_pages
                ));
            }
            let bh = g.buffer_heads * buffer_head::BH_BYTES;
            if g.slab_reclaimable != g.xa_nodes * XA_NODE_BYTES + bh {
                return Err(format!(
                    "kmem: group {m} slab_reclaimable is not its nodes' and buffer heads'"
                ));
            }
        }
        Ok(())
    }

    /// Zeroes the event counter (`workingset_nodereclaim`) at the measurement start.
    pub(crate) fn kmem_reset_stats(&mut self) {
        if let Some(k) = self.kmem.as_mut() {
            for g in &mut k.groups {
                g.nodereclaim = 0;
            }
        }
    }

    /// Xarray nodes of `file` now (rule tests).
    #[cfg(test)]
    pub(crate) fn kmem_file_nodes(&self, file: u32) -> u64 {
        self.kmem
            .as_ref()
            .and_then(|k| k.files.get(file as usize))
            .map_or(0, |t| t.nodes)
    }

    /// The `radix_tree_node` slab of leaf `key` of `file` (rule tests).
    #[cfg(test)]
    pub(crate) fn kmem_leaf_slab(&self, file: u32, key: usize) -> u32 {
        self.kmem.as_ref().unwrap().files[file as usize].leaves[key].slab
    }

    /// Shadow-only nodes on `m`'s list now (rule tests).
    #[cfg(test)]
    pub(crate) fn kmem_shadow_nodes(&self, m: MemcgId) -> u64 {
        self.kmem
            .as_ref()
            .and_then(|k| k.groups.get(m as usize))
            .map_or(0, |g| g.shadow_nodes)
    }
}
