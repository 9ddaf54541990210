//! Slab pages in page frames (`machine.slab_frames`, `crate::slub`, mm/slub.c
//! v6.12): the `radix_tree_node` cache's reclaimable slabs, object packing,
//! `discard_slab` at `min_partial`, a task's unmovable baseline, and the
//! pageblocks page tables then find.

use super::*;
use crate::kmem::Kmem;
use crate::page_alloc::MigrateType;
use crate::slub::{calculate_order, SlubCache};

/// A shadow entry (any slot value without `SLOT_FOLIO`).
const SHADOW: u32 = 2;

/// A 256 MiB machine with kernel memory accounting and slab frames (and
/// page-table frames as given).
fn slab_machine(pagetables: bool) -> Sim {
    let mut s = machine(PolicyName::Cost, 1 << 16, None);
    s.cfg.kmem_accounting = true;
    s.cfg.slab_frames = true;
    s.cfg.pagetable_frames = pagetables;
    s.kmem = Some(Box::new(Kmem::new(true, s.cfg.cpus)));
    s
}

fn cache(s: &Sim, i: usize) -> &SlubCache {
    &s.kmem.as_ref().unwrap().slub.as_ref().unwrap().caches[i]
}

/// `nodes` xarray nodes: files `first..first + nodes` each given entries at
/// indices 0 and 1 (one leaf: a lone entry at 0 would live in the head).
fn add_nodes(s: &mut Sim, first: u32, nodes: u32) {
    for f in first..first + nodes {
        s.kmem_slot_changed(f, 0, 0, SHADOW);
        s.kmem_slot_changed(f, 1, 0, SHADOW);
    }
}

/// The nodes of files `first..first + nodes` deleted (both entries).
fn del_nodes(s: &mut Sim, first: u32, nodes: u32) {
    for f in first..first + nodes {
        s.kmem_slot_changed(f, 1, SHADOW, 0);
        s.kmem_slot_changed(f, 0, SHADOW, 0);
    }
}

#[test]
fn calculate_order_matches_slabinfo() {
    // (object size, CPUs, order): the host's /proc/slabinfo (2 CPUs) has
    // radix_tree_node 584 B, 14 objects in 2 pages, and task_struct 5888 B,
    // 5 objects in 8 pages. 8 CPUs: at least 4 * (fls(8) + 1) = 20 objects:
    // order 2 (28 objects, 32 bytes left, within 1/16); 64 CPUs: 32
    // objects, order 3. One page holds 7: min_objects 8 (1 CPU) needs 2.
    let table = [
        (584, 2, 1),
        (5888, 2, 3),
        (584, 8, 2),
        (584, 64, 3),
        (584, 1, 1),
    ];
    for (size, cpus, order) in table {
        assert_eq!(calculate_order(size, cpus), order, "{size} B, {cpus} CPUs");
    }
}

#[test]
fn first_xarray_node_takes_a_reclaimable_slab_in_a_claimed_block() {
    let mut s = slab_machine(false);
    let t = s.add_task("t");
    let file = s.add_file("f", 1000).unwrap();
    s.open(file, t).unwrap();
    s.fadvise(file, Advice::Random).unwrap();
    // One read of pages 0 and 1 (no readahead under FADV_RANDOM).
    s.step(&Event::FileRead {
        file,
        index: 0,
        pages: 2,
    });
    assert_eq!(s.kmem_file_nodes(file), 1);
    let c = cache(&s, 0);
    assert_eq!(c.oo(), (1, 14));
    assert_eq!(c.nr_slabs(), 1);
    assert_eq!(c.frames, 2);
    let slab = s.kmem_leaf_slab(file, 0);
    let pfn = u64::from(c.slab_pfn(slab));
    // `__GFP_RECLAIMABLE`, order 1: no reclaimable free page, so
    // `__rmqueue_fallback` took the largest movable block (order 10) and,
    // at or above pageblock order, its two pageblocks whole.
    assert_eq!(s.phys.zone.pageblock_type(pfn), MigrateType::Reclaimable);
    assert_eq!(pfn % 2, 0, "an order-1 block");
    let pti = s.phys.zone.pagetypeinfo();
    assert_eq!(pti.pageblocks[MigrateType::Reclaimable as usize], 2);
    assert_eq!(pti.pageblocks[MigrateType::Unmovable as usize], 0);
    // Two file pages and the slab's two pages.
    assert_eq!(s.node.free, s.node.managed - 4);
    assert_eq!(s.vm.pgalloc_normal, 4);
    s.check_invariants().unwrap();
}

#[test]
fn nodes_fill_whole_slabs_of_fourteen() {
    for (nodes, slabs) in [(1u32, 1usize), (14, 1), (15, 2), (30, 3), (42, 3)] {
        let mut s = slab_machine(false);
        let free = s.node.free;
        add_nodes(&mut s, 0, nodes);
        let c = cache(&s, 0);
        assert_eq!(c.nr_slabs(), slabs, "{nodes} nodes");
        assert_eq!(c.frames, 2 * slabs as u64, "{nodes} nodes");
        assert_eq!(s.node.free, free - 2 * slabs as u64);
        // Packed in order: node k in slab k / 14.
        let first = s.kmem_leaf_slab(0, 0);
        let last = s.kmem_leaf_slab(nodes - 1, 0);
        assert_eq!(
            first == last,
            slabs == 1,
            "{nodes} nodes: first and last node share a slab"
        );
        s.check_invariants().unwrap();
    }
}

#[test]
fn an_empty_slab_is_discarded_once_min_partial_slabs_are_kept() {
    let mut s = slab_machine(false);
    // Seven full slabs (98 nodes); the seventh is the CPU slab.
    add_nodes(&mut s, 0, 98);
    assert_eq!(cache(&s, 0).nr_slabs(), 7);
    let free = s.node.free;
    let pgfree = s.vm.pgfree;
    // Slab 0 emptied: the node has no other partial slab (fewer than
    // min_partial = 5: ilog2(584) / 2 = 4, clamped up to MIN_PARTIAL), so
    // `__slab_free` keeps it on the partial list.
    del_nodes(&mut s, 0, 14);
    assert_eq!(cache(&s, 0).nr_slabs(), 7);
    assert_eq!(s.node.free, free);
    // One node freed in each of slabs 1..3: four partial slabs.
    for k in 1..4 {
        del_nodes(&mut s, 14 * k, 1);
    }
    // Slab 2 emptied (files 29..41): four partial slabs, itself among them
    // (`n->nr_partial >= s->min_partial` counts it), one below min_partial:
    // kept.
    del_nodes(&mut s, 29, 13);
    assert_eq!(cache(&s, 0).nr_slabs(), 7);
    assert_eq!(s.node.free, free);
    // One node freed in slab 4: five partial slabs.
    del_nodes(&mut s, 56, 1);
    assert_eq!(cache(&s, 0).nr_slabs(), 7);
    // Slab 1's last node: five partial slabs, = min_partial, `discard_slab`
    // frees its two pages.
    let slab1 = s.kmem_leaf_slab(20, 0);
    let pfn = u64::from(cache(&s, 0).slab_pfn(slab1));
    del_nodes(&mut s, 15, 13);
    let c = cache(&s, 0);
    assert_eq!(c.nr_slabs(), 6);
    assert_eq!(c.frames, 12);
    assert_eq!(s.node.free, free + 2);
    assert_eq!(s.vm.pgfree, pgfree + 2);
    // An order-1 block goes to the zone's reclaimable free list, unmerged:
    // slab k sits at pfn - 2 + 2k (slab 1 at pfn), so its buddy pfn - 2 is
    // slab 0, still allocated. `__free_one_page` puts it at the head
    // (`buddy_merge_likely` is false: the order-2 buddy at pfn + 2 is slab
    // 2). Behind it, pfn + 12: the order-1 rest of the order-2 split that gave
    // slab 6 its pages.
    assert_eq!(
        s.phys.zone.free_list(1, MigrateType::Reclaimable),
        vec![pfn, pfn + 12]
    );
    assert_eq!(s.phys.zone.buddy_order_at(pfn), Some(1));
    // New nodes fill the partial slabs' 30 free objects (slab 0's and slab
    // 2's 14, one each in slabs 3 and 4) before a new slab is allocated.
    add_nodes(&mut s, 200, 30);
    assert_eq!(cache(&s, 0).nr_slabs(), 6);
    add_nodes(&mut s, 230, 1);
    assert_eq!(cache(&s, 0).nr_slabs(), 7);
    s.check_invariants().unwrap();
}

/// `__slab_free` of the last object of the CPU slab (frozen, v6.12: the
/// `was_frozen` path) keeps it whatever the partial list holds; a slab on
/// the list, emptied next to as many partial slabs, is discarded.
#[test]
fn an_empty_cpu_slab_is_kept_past_min_partial() {
    let mut s = slab_machine(false);
    // Seven full slabs (98 nodes); slab 6 (files 84..97) is the CPU slab.
    add_nodes(&mut s, 0, 98);
    // One node freed in each of slabs 0..4: five partial slabs (min_partial).
    for k in 0..5 {
        del_nodes(&mut s, 14 * k, 1);
    }
    let free = s.node.free;
    del_nodes(&mut s, 84, 14);
    assert_eq!(cache(&s, 0).nr_slabs(), 7, "the empty CPU slab stays");
    assert_eq!(s.node.free, free);
    // Slab 5 (files 70..83), full, emptied: on the list at its first free,
    // six partial slabs at its last, discarded.
    del_nodes(&mut s, 70, 14);
    assert_eq!(cache(&s, 0).nr_slabs(), 6);
    assert_eq!(cache(&s, 0).frames, 12);
    assert_eq!(s.node.free, free + 2);
    s.check_invariants().unwrap();
}

#[test]
fn a_task_baseline_takes_unmovable_frames_and_page_tables_follow_it() {
    // kmem_charge_tasks at the run's start: the task_struct's slab (order 3,
    // 5 objects) and the vmalloc'd stack (four order-0 pages), unmovable.
    let mut s = slab_machine(true);
    let t = s.add_task("t");
    s.kmem_charge_tasks();
    assert_eq!(cache(&s, 1).oo(), (3, 5));
    assert_eq!(cache(&s, 1).frames, 8);
    assert_eq!(s.slub_frames(), 12);
    let pti = s.phys.zone.pagetypeinfo();
    assert_eq!(pti.pageblocks[MigrateType::Unmovable as usize], 2);
    assert_eq!(s.node.free, s.node.managed - 12);
    // The page tables of 10 MiB (5 PTE pages, a PMD and a PUD page) find
    // unmovable pages on the per-CPU list and the unmovable blocks: no
    // further fallback, no other block claimed.
    let vma = s.mmap_anon(t, 1 << 20).unwrap();
    touch(&mut s, vma, 2560);
    let pti = s.phys.zone.pagetypeinfo();
    assert_eq!(pti.pageblocks[MigrateType::Unmovable as usize], 2);
    let slab_block = u64::from(cache(&s, 1).slab_pfn(0)) >> 9;
    for p in s.kmem_vma_frames(vma) {
        assert_eq!(
            s.phys.zone.pageblock_type(u64::from(p)),
            MigrateType::Unmovable
        );
        assert_eq!(
            u64::from(p) >> 10,
            slab_block >> 1,
            "the same order-10 block"
        );
    }
    s.check_invariants().unwrap();
    // Exit: the stack's pages and the tables are freed; the task_struct's
    // slab, empty, is the CPU slab and stays (`__slab_free` of a frozen slab).
    s.exit_task(t).unwrap();
    assert_eq!(s.slub_frames(), 8);
    assert_eq!(s.node.free, s.node.managed - 8);
    s.check_invariants().unwrap();
}
