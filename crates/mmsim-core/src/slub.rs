//! Slab pages in page frames (`machine.slab_frames`, mm/slub.c, v6.12):
//! the SLUB caches whose objects `crate::kmem` charges, with their slabs
//! taken from and given back to the buddy allocator.
//!
//! Two caches are modelled:
//!
//! * `radix_tree_node` (lib/radix-tree.c `radix_tree_init`,
//!   `SLAB_RECLAIM_ACCOUNT`): the page-cache xarray nodes. Its slabs are
//!   allocated with `__GFP_RECLAIMABLE` (`kmem_cache_open` sets
//!   `s->allocflags`), so they are `MIGRATE_RECLAIMABLE` pages.
//! * `task_struct` (kernel/fork.c `fork_init`): one object per task, its
//!   slabs `MIGRATE_UNMOVABLE` (`GFP_KERNEL`). The object is 5,888 bytes
//!   (the host's /proc/slabinfo, 6.18 x86-64); the rest of a task's
//!   unreclaimable slab (`kmem::TASK_SLAB_BYTES`: `mm_struct`, VMAs, ...)
//!   is counted but not placed. The task's kernel stack is placed beside
//!   it (`crate::kmem`): with `CONFIG_VMAP_STACK` (x86-64's default, on in
//!   the host's config) `alloc_thread_stack_node` vmallocs `THREAD_SIZE`
//!   as four order-0 unmovable pages (`__vmalloc_node_range` →
//!   `vm_area_alloc_pages`), not one order-2 block.
//!
//! Each cache's order is `calculate_order` (v6.12, `slub_min_objects` and
//! `slub_min_order` 0, `slub_max_order` `PAGE_ALLOC_COSTLY_ORDER`): at least
//! `4 * (fls(nr_cpus) + 1)` objects, the least order wasting at most 1/16
//! (then 1/8, 1/4) of the slab. With 2 CPUs that is order 1 and 14 objects
//! for the 584-byte `radix_tree_node` and order 3 and 5 objects for
//! `task_struct`, as the host's /proc/slabinfo shows (2 CPUs:
//! `objperslab` 14 and 5, `pagesperslab` 2 and 8).
//!
//! * `allocate_slab` → `alloc_slab_page` (v6.12): the cache's order (`s->oo`)
//!   tried first with `__GFP_NORETRY | __GFP_NOWARN`, and without
//!   `__GFP_RECLAIM` (no reclaim, no kswapd wakeup) only when the caller
//!   may reclaim directly and `s->oo` is above `s->min`; then the minimum
//!   order (`s->min`: `get_order(size)`) with the caller's flags. A first
//!   try that keeps `__GFP_KSWAPD_RECLAIM` (`radix_tree_node`'s
//!   `GFP_NOWAIT`, or any cache whose `s->oo` is its `s->min`) wakes kswapd
//!   at its own order. Each try has its kernel mask
//!   ([`allocate_slab_gfp`]: the caller's, `s->allocflags`), which a
//!   kswapd wakeup prints. Order-0 pages come through the per-CPU list
//!   of their type (`rmqueue_pcplist`), larger orders from the zone
//!   (`rmqueue` → `__rmqueue`); both may fall back into other pageblock
//!   types (`__rmqueue_fallback`, `fallbacks[]`) and boost.
//! * Object placement: the CPU slab (`c->slab`) serves allocations until
//!   full, then the most recently added partial slab becomes the CPU slab
//!   (`get_partial_node`), then a new slab. A free into a full slab puts it
//!   on the partial list (`__slab_free` → `add_partial`); a free that
//!   empties a slab that is not the CPU slab discards it (`discard_slab` →
//!   `free_slab` → `__free_pages`) if the node already holds
//!   `min_partial` partial slabs (`set_min_partial`: `ilog2(size) / 2`
//!   clamped to [5, 10]), else it stays on the partial list.
//!
//! Departures: the per-CPU partial lists (`CONFIG_SLUB_CPU_PARTIAL`) are
//! not modelled (as if it were off: partial slabs go to the node's list);
//! a slab page is taken without reclaim even at the minimum order (the
//! slot change that allocates an xarray node runs inside a page-cache
//! update, where mmsim cannot reclaim): below the low mark kswapd is woken
//! as the kernel's allocation would, and with no free page at all the
//! slab has no frame (counted in `frameless`); objects are not placed at
//! offsets (only counts per slab matter to the page allocator). The
//! fallback's wakeup is at order 0 and ZONE_MOVABLE (`Sim::wakeup_kswapd`),
//! where the kernel's is at the minimum order (1 for `task_struct`) and
//! ZONE_NORMAL. Only the printed mask is the kernel's.

use crate::gfp::{self, Gfp};
use crate::page_alloc::MigrateType;
use crate::sim::Sim;
use crate::PAGE_SIZE;

/// `slub_max_order` (`PAGE_ALLOC_COSTLY_ORDER`).
const SLUB_MAX_ORDER: u32 = crate::page_alloc::PAGE_ALLOC_COSTLY_ORDER;
/// `MIN_PARTIAL`, `MAX_PARTIAL`.
const MIN_PARTIAL: usize = 5;
const MAX_PARTIAL: usize = 10;
const NONE: u32 = u32::MAX;
const NO_PFN: u32 = u32::MAX;

/// The modelled caches.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum CacheId {
    /// `radix_tree_node` (xarray nodes).
    RadixTreeNode = 0,
    /// `task_struct`.
    TaskStruct = 1,
}

impl CacheId {
    /// The mask of the object allocation that needs a new slab, as v6.12
    /// `new_slab` passes it to `allocate_slab` (`flags & (GFP_RECLAIM_MASK |
    /// GFP_CONSTRAINT_MASK)`): `radix_tree_node`'s from lib/xarray.c
    /// `xas_alloc`, the in-lock `GFP_NOWAIT | __GFP_NOWARN` (its
    /// `__GFP_ACCOUNT` for the page cache's `XA_FLAGS_ACCOUNT` is masked
    /// off); `task_struct`'s from kernel/fork.c `alloc_task_struct_node`,
    /// `GFP_KERNEL`.
    fn caller_gfp(self) -> Gfp {
        let gfp = match self {
            CacheId::RadixTreeNode => gfp::GFP_NOWAIT | gfp::__GFP_NOWARN,
            CacheId::TaskStruct => gfp::GFP_KERNEL,
        };
        gfp & (gfp::GFP_RECLAIM_MASK | gfp::GFP_CONSTRAINT_MASK)
    }
}

/// `allocate_slab`'s two masks (mm/slub.c, v6.12) for a cache whose
/// `s->allocflags` is `allocflags`, objects asked for with `flags` (after
/// `new_slab`'s mask), of order `order` (`s->oo`) and minimum order
/// `min_order` (`s->min`): the first try at the cache's order adds
/// `__GFP_NOWARN | __GFP_NORETRY` and drops `__GFP_NOFAIL`, and, when it
/// may reclaim directly and a smaller order exists, drops `__GFP_RECLAIM`
/// (no reclaim, no kswapd) for `__GFP_NOMEMALLOC`; the fallback at the
/// minimum order has the caller's flags with the cache's.
pub(crate) fn allocate_slab_gfp(
    flags: Gfp,
    allocflags: Gfp,
    order: u32,
    min_order: u32,
) -> (Gfp, Gfp) {
    let flags = flags | allocflags;
    let mut first = (flags | gfp::__GFP_NOWARN | gfp::__GFP_NORETRY) & !gfp::__GFP_NOFAIL;
    if first & gfp::__GFP_DIRECT_RECLAIM != 0 && order > min_order {
        first = (first | gfp::__GFP_NOMEMALLOC) & !gfp::__GFP_RECLAIM;
    }
    (first, flags)
}

/// `radix_tree_node`'s slab object size (576-byte `xa_node`, aligned).
pub(crate) const RADIX_TREE_NODE_SIZE: u64 = 584;
/// `task_struct`'s slab object size (host /proc/slabinfo, 6.18 x86-64).
pub(crate) const TASK_STRUCT_SIZE: u64 = 5888;

/// `get_order(size)`.
fn get_order(size: u64) -> u32 {
    let pages = size.div_ceil(PAGE_SIZE).max(1);
    64 - (pages - 1).leading_zeros()
}

/// `order_objects(order, size)`.
fn order_objects(order: u32, size: u64) -> u64 {
    (PAGE_SIZE << order) / size
}

/// `calc_slab_order` (v6.12): the least order from `min_order` to
/// `max_order` whose leftover is at most `1 / fract_leftover` of the slab,
/// or `max_order + 1`.
fn calc_slab_order(size: u64, min_order: u32, max_order: u32, fract_leftover: u64) -> u32 {
    let mut order = min_order;
    while order <= max_order {
        let slab_size = PAGE_SIZE << order;
        if slab_size % size <= slab_size / fract_leftover {
            break;
        }
        order += 1;
    }
    order
}

/// `calculate_order` (mm/slub.c, v6.12) for objects of `size` bytes on a
/// machine of `cpus` CPUs (`num_present_cpus`).
pub(crate) fn calculate_order(size: u64, cpus: u32) -> u32 {
    let nr_cpus = cpus.max(1);
    let fls = 32 - nr_cpus.leading_zeros();
    let max_objects = order_objects(SLUB_MAX_ORDER, size).max(1);
    let min_objects = u64::from(4 * (fls + 1)).min(max_objects);
    let min_order = get_order(min_objects * size);
    let mut fraction = 16;
    while fraction > 1 {
        let order = calc_slab_order(size, min_order, SLUB_MAX_ORDER, fraction);
        if order <= SLUB_MAX_ORDER {
            return order;
        }
        fraction /= 2;
    }
    get_order(size)
}

/// One slab (`struct slab`).
#[derive(Clone, Copy, Debug)]
struct Slab {
    /// Its first page frame, or `NO_PFN` (taken with no free page).
    pfn: u32,
    order: u8,
    /// `slab->objects`.
    objects: u16,
    /// `slab->inuse`.
    inuse: u16,
    /// Its index in the partial list, or `NONE`.
    ppos: u32,
}

/// One cache (`struct kmem_cache` with its one node's partial list).
#[derive(Clone, Debug)]
pub(crate) struct SlubCache {
    size: u64,
    /// `s->oo`'s order and `s->min`'s.
    order: u32,
    min_order: u32,
    min_partial: usize,
    mt: MigrateType,
    /// `s->allocflags` (v6.12 `calculate_sizes`): `__GFP_COMP` always,
    /// `__GFP_RECLAIMABLE` for a `SLAB_RECLAIM_ACCOUNT` cache.
    allocflags: Gfp,
    /// `c->slab`.
    cpu_slab: u32,
    /// `n->partial`, most recently added last.
    partial: Vec<u32>,
    slabs: Vec<Slab>,
    free_ids: Vec<u32>,
    /// Page frames its slabs hold.
    pub(crate) frames: u64,
    /// Slabs allocated with no frame (no free page).
    pub(crate) frameless: u64,
}

impl SlubCache {
    /// `kmem_cache_open` of a cache of `size`-byte objects whose slabs are
    /// `mt` pages, on `cpus` CPUs.
    pub(crate) fn new(size: u64, mt: MigrateType, cpus: u32) -> Self {
        let ilog2 = 63 - size.leading_zeros() as usize;
        SlubCache {
            size,
            order: calculate_order(size, cpus),
            min_order: get_order(size),
            min_partial: (ilog2 / 2).clamp(MIN_PARTIAL, MAX_PARTIAL),
            mt,
            allocflags: if mt == MigrateType::Reclaimable {
                gfp::__GFP_COMP | gfp::__GFP_RECLAIMABLE
            } else {
                gfp::__GFP_COMP
            },
            cpu_slab: NONE,
            partial: Vec::new(),
            slabs: Vec::new(),
            free_ids: Vec::new(),
            frames: 0,
            frameless: 0,
        }
    }

    /// `oo_order(s->oo)` and `oo_objects(s->oo)`.
    #[cfg(test)]
    pub(crate) fn oo(&self) -> (u32, u64) {
        (self.order, order_objects(self.order, self.size))
    }

    /// Slabs allocated now.
    #[cfg(test)]
    pub(crate) fn nr_slabs(&self) -> usize {
        self.slabs.len() - self.free_ids.len()
    }

    /// The first frame of slab `id` (tests).
    #[cfg(test)]
    pub(crate) fn slab_pfn(&self, id: u32) -> u32 {
        self.slabs[id as usize].pfn
    }

    fn partial_remove(&mut self, id: u32) {
        let pos = self.slabs[id as usize].ppos as usize;
        self.partial.swap_remove(pos);
        if let Some(&moved) = self.partial.get(pos) {
            self.slabs[moved as usize].ppos = pos as u32;
        }
        self.slabs[id as usize].ppos = NONE;
    }

    fn partial_add(&mut self, id: u32) {
        self.slabs[id as usize].ppos = self.partial.len() as u32;
        self.partial.push(id);
    }

    /// Objects in use, slab by slab, and the partial list agree (invariants).
    pub(crate) fn check(&self) -> Result<(), String> {
        let mut frames = 0;
        for (id, s) in self.slabs.iter().enumerate() {
            if s.objects == 0 {
                continue;
            }
            if s.inuse > s.objects {
                return Err(format!(
                    "slab {id}: {} objects in use of {}",
                    s.inuse, s.objects
                ));
            }
            if s.pfn != NO_PFN {
                frames += 1u64 << s.order;
            }
            let on_partial = s.ppos != NONE;
            let should = id as u32 != self.cpu_slab && s.inuse < s.objects;
            if on_partial != should {
                return Err(format!("slab {id}: on the partial list {on_partial}"));
            }
        }
        if frames != self.frames {
            return Err(format!(
                "slabs hold {frames} frames, counted {}",
                self.frames
            ));
        }
        Ok(())
    }
}

/// A task's placed kernel memory: its `task_struct`'s slab and its
/// kernel stack's pages.
#[derive(Clone, Copy, Debug)]
struct TaskKernel {
    slab: u32,
    stack: [u32; KERNEL_STACK_PAGES],
}

/// The mask of a kernel stack's pages (v6.12): kernel/fork.c
/// `alloc_thread_stack_node` vmallocs with `THREADINFO_GFP & ~__GFP_ACCOUNT`
/// (`GFP_KERNEL | __GFP_ZERO`), to which mm/vmalloc.c `__vmalloc_area_node`
/// adds `__GFP_HIGHMEM` (no DMA zone asked for) and `__GFP_NOWARN` before
/// `vm_area_alloc_pages`.
const STACK_GFP: Gfp = gfp::GFP_KERNEL | gfp::__GFP_ZERO | gfp::__GFP_HIGHMEM | gfp::__GFP_NOWARN;

/// `THREAD_SIZE` pages (x86-64: 16 KiB).
const KERNEL_STACK_PAGES: usize = crate::kmem::KERNEL_STACK_PAGES as usize;

/// The slab caches of `machine.slab_frames`, and the tasks' stacks.
#[derive(Clone, Debug)]
pub(crate) struct Slub {
    pub(crate) caches: [SlubCache; 2],
    /// Per task (by index), once its baseline is placed.
    tasks: Vec<Option<TaskKernel>>,
    /// Page frames held by kernel stacks.
    pub(crate) stack_frames: u64,
}

impl Slub {
    pub(crate) fn new(cpus: u32) -> Self {
        Slub {
            caches: [
                SlubCache::new(RADIX_TREE_NODE_SIZE, MigrateType::Reclaimable, cpus),
                SlubCache::new(TASK_STRUCT_SIZE, MigrateType::Unmovable, cpus),
            ],
            tasks: Vec::new(),
            stack_frames: 0,
        }
    }
}

/// SLUB's allocation and free of objects and slabs (see the module).
impl Sim {
    fn slub_cache(&mut self, c: CacheId) -> &mut SlubCache {
        &mut self.kmem.as_mut().unwrap().slub.as_mut().unwrap().caches[c as usize]
    }

    /// `slab_alloc_node` of one object of cache `c`: the slab it lands in.
    pub(crate) fn slab_alloc(&mut self, c: CacheId) -> u32 {
        let s = self.slub_cache(c);
        let cpu = s.cpu_slab;
        let id = if cpu != NONE && s.slabs[cpu as usize].inuse < s.slabs[cpu as usize].objects {
            cpu
        } else if let Some(&p) = s.partial.last() {
            // `___slab_alloc` → `get_partial`: the CPU slab (full, on no
            // list) is replaced by a partial one.
            s.partial_remove(p);
            s.cpu_slab = p;
            p
        } else {
            let id = self.allocate_slab(c);
            self.slub_cache(c).cpu_slab = id;
            id
        };
        self.slub_cache(c).slabs[id as usize].inuse += 1;
        id
    }

    /// `slab_free` of one object of cache `c` in slab `id` (`__slab_free`).
    pub(crate) fn slab_free(&mut self, c: CacheId, id: u32) {
        let s = self.slub_cache(c);
        let sl = &mut s.slabs[id as usize];
        let was_full = sl.inuse == sl.objects;
        sl.inuse -= 1;
        let inuse = sl.inuse;
        if id == s.cpu_slab {
            return;
        }
        if inuse == 0 && s.partial.len() >= s.min_partial {
            if !was_full {
                s.partial_remove(id);
            }
            self.discard_slab(c, id);
        } else if was_full {
            s.partial_add(id);
        }
    }

    /// `allocate_slab` (v6.12): a new slab of cache `c`, its pages from
    /// `alloc_slab_page` at the cache's order, else its minimum order.
    fn allocate_slab(&mut self, c: CacheId) -> u32 {
        let s = self.slub_cache(c);
        let (order, min_order, mt, size) = (s.order, s.min_order, s.mt, s.size);
        let (first, fallback) = allocate_slab_gfp(c.caller_gfp(), s.allocflags, order, min_order);
        // The first try is made at `s->oo` whatever its order (at the
        // minimum too: `oo == s->min` keeps the caller's reclaim bits);
        // `alloc_slab_page`'s `mm_page_alloc`, a failed attempt's too.
        let p = self.slab_take_pages(order, mt, false, first);
        let mut got = self.traced_alloc(p, order as u8, first).map(|p| (p, order));
        if got.is_none() {
            let p = self.slab_take_pages(min_order, mt, true, fallback);
            got = self
                .traced_alloc(p, min_order as u8, fallback)
                .map(|p| (p, min_order));
        }
        let s = self.slub_cache(c);
        let (pfn, order) = match got {
            Some((p, o)) => {
                s.frames += 1 << o;
                (p as u32, o)
            }
            None => {
                s.frameless += 1;
                (NO_PFN, min_order)
            }
        };
        let slab = Slab {
            pfn,
            order: order as u8,
            objects: order_objects(order, size) as u16,
            inuse: 0,
            ppos: NONE,
        };
        match s.free_ids.pop() {
            Some(id) => {
                s.slabs[id as usize] = slab;
                id
            }
            None => {
                s.slabs.push(slab);
                (s.slabs.len() - 1) as u32
            }
        }
    }

    /// `alloc_slab_page` → `alloc_pages_node` of `order` pages of `mt`
    /// without reclaim (see the module): order 0 through the per-CPU list
    /// of `mt`, larger orders from the zone. `last` is the fallback try
    /// (any free page will do; the first try needs the node above its min
    /// mark). Whether the allocation may wake kswapd is its mask's
    /// `__GFP_KSWAPD_RECLAIM` (v6.12 `alloc_flags_nofragment`'s
    /// `ALLOC_KSWAPD`, which `rmqueue`'s boost wakeup tests too): the first
    /// try of `radix_tree_node` (`GFP_NOWAIT`) keeps it and wakes kswapd at
    /// the cache's order (`wakeup_kswapd(zone, gfp, order, …)` with the
    /// mask's `gfp_zone`), `task_struct`'s (`GFP_KERNEL` above its minimum
    /// order) lost it with `__GFP_RECLAIM`; the fallback's wakeup is at
    /// order 0 and ZONE_MOVABLE (the module's departure). `gfp` is the mask
    /// the wakeup prints. None when the node's free pages or the zone's
    /// lists have no room.
    fn slab_take_pages(
        &mut self,
        order: u32,
        mt: MigrateType,
        last: bool,
        gfp: Gfp,
    ) -> Option<u64> {
        let n = 1u64 << order;
        let kswapd = gfp & gfp::__GFP_KSWAPD_RECLAIM != 0;
        let floor = if last { 0 } else { self.node.wmark_min };
        if self.node.free < n || self.node.free - n < floor {
            return None;
        }
        // The per-CPU lists are typed by the first non-movable request
        // (`PerCpuPages::typed`): `rmqueue_pcplist` does it for order 0; a
        // larger block may bypass the lists (order-0-only lists, or an order
        // `pcp_allowed_order` refuses), so it types them here first.
        let pfn = if order == 0 {
            Some(self.phys.rmqueue_pcplist(mt))
        } else {
            if !self.phys.pcp.is_typed() {
                self.phys.pcp_type_lists();
            }
            self.phys.rmqueue_order(order as usize, mt)
        };
        self.rmqueue_boosted(kswapd);
        let pfn = pfn?;
        self.node.free -= n;
        self.count_vm_events(crate::stats::item::PGALLOC_NORMAL, n);
        if kswapd && self.node.free <= self.node.wmark_low {
            if last {
                self.wakeup_kswapd(gfp);
            } else {
                self.wakeup_kswapd_zone(order, gfp::gfp_zone(gfp), gfp);
            }
        }
        Some(pfn)
    }

    /// `discard_slab` → `free_slab` → `__free_slab` (v6.12): slab `id`'s
    /// pages back to the allocator (`__free_pages`: order 0 to the per-CPU
    /// list of its pageblock's type, larger orders to the zone).
    fn discard_slab(&mut self, c: CacheId, id: u32) {
        let s = self.slub_cache(c);
        let sl = s.slabs[id as usize];
        s.slabs[id as usize].objects = 0;
        s.free_ids.push(id);
        if sl.pfn == NO_PFN {
            s.frameless -= 1;
            return;
        }
        s.frames -= 1u64 << sl.order;
        self.free_kernel_frames(sl.pfn, sl.order as usize);
    }

    /// Page frames held by slabs and kernel stacks (`machine.slab_frames`).
    pub(crate) fn slub_frames(&self) -> u64 {
        self.kmem
            .as_ref()
            .and_then(|k| k.slub.as_ref())
            .map_or(0, |s| {
                s.stack_frames + s.caches.iter().map(|c| c.frames).sum::<u64>()
            })
    }

    /// Task `t`'s baseline placed (`copy_process` → `dup_task_struct`:
    /// `alloc_task_struct_node`, then `alloc_thread_stack_node`, whose
    /// vmalloc takes four order-0 unmovable pages with `GFP_KERNEL`);
    /// nothing without `machine.slab_frames`.
    pub(crate) fn slub_task_alloc(&mut self, t: usize) {
        if self.kmem.as_ref().and_then(|k| k.slub.as_ref()).is_none() {
            return;
        }
        let slab = self.slab_alloc(CacheId::TaskStruct);
        let mut stack = [NO_PFN; KERNEL_STACK_PAGES];
        let mut placed = 0;
        for p in &mut stack {
            if let Some(pfn) = self.slab_take_pages(0, MigrateType::Unmovable, true, STACK_GFP) {
                *p = pfn as u32;
                placed += 1;
            }
        }
        let s = self.kmem.as_mut().unwrap().slub.as_mut().unwrap();
        s.stack_frames += placed;
        if t >= s.tasks.len() {
            s.tasks.resize(t + 1, None);
        }
        s.tasks[t] = Some(TaskKernel { slab, stack });
    }

    /// Task `t`'s baseline freed at its exit (`free_task`:
    /// `free_thread_stack` → `vfree` of the stack's pages, order 0 each, then
    /// `free_task_struct` → `kmem_cache_free`). The kernel keeps up to two
    /// freed stacks per CPU for reuse (`cached_stacks`); not modelled.
    pub(crate) fn slub_task_free(&mut self, t: usize) {
        let Some(s) = self.kmem.as_mut().and_then(|k| k.slub.as_mut()) else {
            return;
        };
        let Some(tk) = s.tasks.get_mut(t).and_then(Option::take) else {
            return;
        };
        s.stack_frames -= tk.stack.iter().filter(|&&p| p != NO_PFN).count() as u64;
        for &pfn in tk.stack.iter().filter(|&&p| p != NO_PFN) {
            self.free_kernel_frames(pfn, 0);
        }
        self.slab_free(CacheId::TaskStruct, tk.slab);
    }

    /// The caches' invariants (for `Sim::check_invariants`).
    pub(crate) fn slub_check(&self) -> Result<(), String> {
        let Some(s) = self.kmem.as_ref().and_then(|k| k.slub.as_ref()) else {
            return Ok(());
        };
        for (i, c) in s.caches.iter().enumerate() {
            c.check().map_err(|e| format!("slub cache {i}: {e}"))?;
        }
        Ok(())
    }
}
