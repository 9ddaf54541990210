//! Kernel memory charged to groups (`crate::kmem`, v6.12): page-cache
//! xarray nodes, the shadow-node shrinker, page tables, a task's baseline.

use super::*;
use crate::kmem::XA_NODE_BYTES;
use crate::memcg::{MemcgId, ROOT};

/// A machine with `machine.kmem_accounting`, a group `/a` whose task reads
/// a 100 000-page file with `FADV_RANDOM` (no readahead).
fn kmem_machine(max: Option<u64>) -> (Sim, MemcgId, u32, u32) {
    let mut s = machine_kmem(PolicyName::Cost, 1 << 16, true);
    let a = s.add_memcg(ROOT, "a").unwrap();
    if let Some(m) = max {
        s.set_memcg_max(a, m).unwrap();
    }
    let t = s.add_task("t");
    s.attach_task(t, a).unwrap();
    let file = s.add_file("f", 100_000).unwrap();
    s.open(file, t).unwrap();
    s.fadvise(file, Advice::Random).unwrap();
    (s, a, file, t)
}

fn machine_kmem(policy: PolicyName, pages: u64, kmem: bool) -> Sim {
    let mut s = machine(policy, pages, None);
    s.cfg.kmem_accounting = kmem;
    s.kmem = kmem.then(Default::default);
    s
}

fn read(s: &mut Sim, file: u32, index: u32) {
    s.step(&Event::FileRead {
        file,
        index,
        pages: 1,
    });
}

#[test]
fn xarray_nodes_follow_the_tree_shape() {
    // xas_expand/xas_shrink: a lone entry at index 0 lives in the head; 64
    // entries fill one leaf; the 65th needs a second leaf and a root above
    // both (XA_CHUNK_SHIFT 6): 3 nodes.
    let (mut s, a, file, _) = kmem_machine(None);
    read(&mut s, file, 0);
    assert_eq!(s.kmem_file_nodes(file), 0);
    for i in 1..64 {
        read(&mut s, file, i);
    }
    assert_eq!(s.kmem_file_nodes(file), 1);
    read(&mut s, file, 64);
    assert_eq!(s.kmem_file_nodes(file), 3);
    let r = s.kmem_report(a).unwrap();
    assert_eq!(r.xa_nodes, 3);
    assert_eq!(r.slab_reclaimable, 3 * XA_NODE_BYTES);
    // 1776 bytes of objects: one page charged through the object stock.
    assert_eq!(s.kmem_pages(a), 1);
    assert_eq!(r.kernel, 4096);
    assert_eq!(r.kmem_usage_in_bytes, None); // cgroup v2
                                             // A page at 4096 grows the tree a level (xas_expand): the old root is
                                             // now the level-1 node of 0..4096, a level-1 node and a leaf hold 4096,
                                             // and a new root is above: 3 leaves + 2 level-1 nodes + 1 root.
    read(&mut s, file, 4096);
    assert_eq!(s.kmem_file_nodes(file), 6);
    s.check_invariants().unwrap();
}

/// Fills leaves `0..n` of `file` with shadow entries charged to `m`, as
/// eviction leaves them (`workingset_update_node` puts each on the list).
fn shadow_leaves(s: &mut Sim, m: MemcgId, file: u32, n: u32) {
    s.cur_memcg = m;
    let shadow = s.shadow_layout.pack(Shadow {
        eviction: 0,
        memcg_id: s.memcgs[m as usize].id,
        workingset: false,
    });
    for i in 0..n * 64 {
        s.kmem_slot_changed(file, i, 0, shadow);
        *s.files[file as usize].slot_mut(i) = shadow;
    }
}

#[test]
fn shadow_node_shrinker_reclaims_the_excess() {
    let (mut s, a, file, _) = kmem_machine(None);
    shadow_leaves(&mut s, a, file, 300);
    // 300 leaves, 5 level-1 nodes, 1 root.
    assert_eq!(s.kmem_file_nodes(file), 306);
    assert_eq!(s.kmem_shadow_nodes(a), 300);
    // count_shadow_nodes: pages = 0 LRU + 306·592 B of slab = 44 pages,
    // max_nodes = 44 >> 3 = 5, freeable = 295. do_shrink_slab (seeks 0):
    // delta = 147, one batch of 128, 19 deferred.
    assert_eq!(s.shrink_slab_shadow(a, 12, s.clock), 128);
    let r = s.kmem_report(a).unwrap();
    assert_eq!(r.workingset_nodereclaim, 128);
    assert_eq!(r.shadow_nodes, 172);
    // Oldest first: leaves 0..128 and the two level-1 nodes above them.
    assert_eq!(s.kmem_file_nodes(file), 176);
    assert_eq!(r.slab_reclaimable, 176 * XA_NODE_BYTES);
    // Their shadows are gone: a refault there is not detected; one in a
    // surviving node is.
    let refaults = s.vm.workingset_refault_file;
    read(&mut s, file, 5);
    assert_eq!(s.vm.workingset_refault_file, refaults);
    read(&mut s, file, 200 * 64);
    assert_eq!(s.vm.workingset_refault_file, refaults + 1);
    // The refaulted leaf left the list (it holds a page). Next pass at
    // priority 12: pages = 2 LRU + 176 nodes' slab (25 pages) = 27,
    // max_nodes 3, freeable 168, delta 84 < 128 and < 168: nothing scanned,
    // 19 + 84 deferred.
    assert_eq!(s.kmem_shadow_nodes(a), 171);
    assert_eq!(s.shrink_slab_shadow(a, 12, s.clock), 0);
    // At priority 0 the deferred 103 count whole: 103 + 84 = 187: one batch.
    assert_eq!(s.shrink_slab_shadow(a, 0, s.clock), 128);
    assert_eq!(s.kmem_report(a).unwrap().workingset_nodereclaim, 256);
    s.check_invariants().unwrap();
}

/// 4,000 resident pages of a second file, read by `file`'s task.
fn cache_4000_pages(s: &mut Sim, file: u32) {
    let other = s.add_file("g", 10_000).unwrap();
    s.fadvise(other, Advice::Random).unwrap();
    s.files[other as usize].task = s.files[file as usize].task;
    for i in 0..4000 {
        read(s, other, i);
    }
}

#[test]
fn shrinker_leaves_nodes_within_an_eighth_of_the_pages() {
    // 4000 resident pages (LRU) allow 500 shadow-only nodes: 300 stay.
    let (mut s, a, file, _) = kmem_machine(None);
    cache_4000_pages(&mut s, file);
    shadow_leaves(&mut s, a, file, 300);
    assert_eq!(s.shrink_slab_shadow(a, 0, s.clock), 0);
    assert_eq!(s.kmem_shadow_nodes(a), 300);
}

/// 6.8+ (`memcg_stats_flush = "ratelimited"`): `count_shadow_nodes` reads
/// the group's statistics as of its last rstat flush. The 4,000 LRU pages
/// that allow 500 nodes live count for nothing before the first flush.
#[test]
fn shrinker_reads_the_last_flushed_pages_under_ratelimited_stats() {
    use crate::memcg_stats::{MemcgStats, MemcgStatsFlush};
    let (mut s, a, file, _) = kmem_machine(None);
    s.memcg_stats = MemcgStats::new(MemcgStatsFlush::Ratelimited, 2000);
    cache_4000_pages(&mut s, file);
    shadow_leaves(&mut s, a, file, 300);
    // Never flushed: pages 0, max_nodes 0, freeable 300, delta 150: one
    // batch of 128 (the live statistics allow all 300: see above).
    assert_eq!(s.shrink_slab_shadow(a, 12, s.clock), 128);
    assert_eq!(s.kmem_shadow_nodes(a), 172);
    // The periodic flush records 4,000 LRU pages and the nodes' slab:
    // max_nodes 500, nothing is excess.
    let now = s.clock;
    s.flush_memcg_stats_dwork(now);
    assert_eq!(s.shrink_slab_shadow(a, 0, s.clock), 0);
    assert_eq!(s.kmem_shadow_nodes(a), 172);
}

#[test]
fn page_tables_are_charged_per_range_touched() {
    let (mut s, a, _, t) = kmem_machine(None);
    let vma = s.mmap_anon(t, 1 << 20).unwrap();
    // 10 MiB touched: 5 PTE pages, 1 PMD page, 1 PUD page.
    touch(&mut s, vma, 2560);
    assert_eq!(s.kmem_report(a).unwrap().pagetables, 7 * 4096);
    // A page in the second GiB: a PTE page and a PMD page more.
    s.step(&Event::Access {
        vma,
        index: 262_144,
        write: false,
    });
    let r = s.kmem_report(a).unwrap();
    assert_eq!(r.pagetables, 9 * 4096);
    assert_eq!(r.kernel, 9 * 4096);
    assert_eq!(s.kmem_pages(a), 9);
    s.check_invariants().unwrap();
}

#[test]
fn task_baseline_is_charged_when_the_run_starts() {
    let (mut s, a, _, _) = kmem_machine(None);
    s.run(&[]);
    let r = s.kmem_report(a).unwrap();
    assert_eq!(r.kernel_stack, 16 << 10);
    assert_eq!(r.pagetables, 4096);
    assert_eq!(r.slab_unreclaimable, 16 << 10);
    assert_eq!(r.kernel, (4 + 1 + 4) * 4096);
    // Once only.
    s.run(&[]);
    assert_eq!(s.kmem_report(a).unwrap().kernel, 9 * 4096);
    // v1 reports memory.kmem.usage_in_bytes.
    let mut s1 = machine_kmem(PolicyName::Cost, 1 << 16, true);
    s1.cfg.cgroup_version = CgroupVersion::V1;
    s1.add_task("t");
    s1.run(&[]);
    assert_eq!(
        s1.kmem_report(ROOT).unwrap().kmem_usage_in_bytes,
        Some(9 * 4096)
    );
}

#[test]
fn a_group_at_its_limit_holds_fewer_cache_pages() {
    let run = |kmem: bool| {
        let mut s = machine_kmem(PolicyName::Cost, 1 << 16, kmem);
        let a = s.add_memcg(ROOT, "a").unwrap();
        s.set_memcg_max(a, 512).unwrap();
        let t = s.add_task("t");
        s.attach_task(t, a).unwrap();
        let file = s.add_file("f", 100_000).unwrap();
        s.open(file, t).unwrap();
        s.fadvise(file, Advice::Random).unwrap();
        let ev: Vec<Event> = (0..20_000u32)
            .map(|i| Event::FileRead {
                file,
                index: (i * 7919) % 100_000,
                pages: 1,
            })
            .collect();
        s.run(&ev);
        s.check_invariants().unwrap();
        let r = s.memcg_report(a);
        assert!(r.current <= 512);
        (r.file, s.kmem_pages(a), r.kmem)
    };
    let (off_file, off_kmem, off_report) = run(false);
    let (on_file, on_kmem, on_report) = run(true);
    assert_eq!(off_kmem, 0);
    assert!(off_report.is_none());
    assert!(on_kmem > 0);
    let on_report = on_report.unwrap();
    // Shadow-only nodes beyond an eighth of the group's pages were reclaimed.
    assert!(on_report.workingset_nodereclaim > 0);
    assert!(on_report.shadow_nodes <= (512 + on_report.slab_reclaimable / 4096) / 8 + 128);
    assert!(
        on_file + on_kmem <= off_file + 1 && on_file < off_file,
        "on {on_file} + {on_kmem}, off {off_file}"
    );
}

/// 10 MiB of a task's anonymous VMA written on a 256 MiB machine with
/// kernel memory accounting, page-table frames as given.
fn pagetable_run(frames: bool) -> (Sim, u32, u32) {
    let mut s = machine_kmem(PolicyName::Cost, 1 << 16, true);
    s.cfg.pagetable_frames = frames;
    let t = s.add_task("t");
    let vma = s.mmap_anon(t, 1 << 20).unwrap();
    touch(&mut s, vma, 2560);
    s.check_invariants().unwrap();
    (s, t, vma)
}

#[test]
fn page_tables_take_unmovable_frames_only_with_pagetable_frames() {
    use crate::page_alloc::MigrateType;
    // Without: the tables are counted (7 pages) but take no frame.
    let (s, _, _) = pagetable_run(false);
    assert_eq!(s.kmem_report(ROOT).unwrap().pagetables, 7 * 4096);
    assert_eq!(s.node.free, s.node.managed - 2560);
    assert_eq!(
        s.phys.zone.pagetypeinfo().pageblocks[0],
        0,
        "no unmovable pageblock"
    );
    // With: 5 PTE pages, a PMD and a PUD page, 7 order-0 frames.
    let (mut s, t, vma) = pagetable_run(true);
    assert_eq!(s.kmem_report(ROOT).unwrap().pagetables, 7 * 4096);
    assert_eq!(s.node.free, s.node.managed - 2560 - 7);
    assert_eq!(s.kmem_pagetable_frames(), 7);
    assert_eq!(s.vm.pgalloc_normal, 2560 + 7);
    // The first found no unmovable free page and fell back to the largest
    // free movable block (`__rmqueue_fallback`), an order-10 block, whose
    // two pageblocks it took whole (`steal_suitable_fallback`, order ≥
    // pageblock_order: `change_pageblock_range`); the other six came from
    // the rest of that block, now on the unmovable lists.
    let pti = s.phys.zone.pagetypeinfo();
    assert_eq!(pti.pageblocks[MigrateType::Unmovable as usize], 2);
    let frames = s.kmem_vma_frames(vma);
    assert_eq!(frames.len(), 7);
    let block = u64::from(frames[0]) >> 10;
    for &p in &frames {
        assert_eq!(
            s.phys.zone.pageblock_type(u64::from(p)),
            MigrateType::Unmovable
        );
        assert_eq!(u64::from(p) >> 10, block);
    }
    // Exit frees them (`free_pgtables`) with the pages.
    s.exit_task(t).unwrap();
    assert_eq!(s.kmem_pagetable_frames(), 0);
    assert_eq!(s.node.free, s.node.managed);
    assert_eq!(s.vm.pgfree, 2560 + 7);
    s.check_invariants().unwrap();
}

/// The shrinker's ratelimited flush runs on the reclaimer's clock, not the
/// simulation's: a reclaimer 5 s into its run, with the periodic flusher
/// last at 0, is a cycle late and flushes (`now > flush_last_time + 4 s`),
/// so the 4,000 pages count; the same call at the simulation's clock (0)
/// would not flush and would free a batch.
#[test]
fn shrinker_flushes_on_the_reclaimers_clock() {
    use crate::memcg_stats::{MemcgStats, MemcgStatsFlush};
    const SEC: u64 = 1_000_000_000;
    for (now, freed, flushes) in [(0, 128, 0), (5 * SEC, 0, 1)] {
        let (mut s, a, file, _) = kmem_machine(None);
        s.memcg_stats = MemcgStats::new(MemcgStatsFlush::Ratelimited, 2000);
        cache_4000_pages(&mut s, file);
        shadow_leaves(&mut s, a, file, 300);
        assert!(s.clock < SEC, "the simulation's clock stays early");
        assert_eq!(s.shrink_slab_shadow(a, 12, now), freed, "now {now}");
        assert_eq!(s.memcg_stats.ratelimited_flushes, flushes, "now {now}");
    }
}

/// v6.12 `copy_process` runs in the parent: the child's page tables
/// (`__pte_alloc` under `copy_page_range`) are charged to the parent's
/// group, whichever task faulted last. The parent in `ga` maps 64 pages
/// (PTE, PMD and PUD tables: 3); a task in `gb` faults last; the fork
/// charges the child's 3 tables to `ga` and nothing to `gb` (before the
/// fix `fork_task` left `cur_memcg` at `gb`, which took them).
#[test]
fn a_forked_childs_tables_are_charged_to_the_parents_group() {
    let mut s = machine_kmem(PolicyName::Cost, 4096, true);
    let ga = s.add_memcg(ROOT, "ga").unwrap();
    let gb = s.add_memcg(ROOT, "gb").unwrap();
    let p = s.add_task("parent");
    s.attach_task(p, ga).unwrap();
    let q = s.add_task("other");
    s.attach_task(q, gb).unwrap();
    let a = s.mmap_anon(p, 64).unwrap();
    touch(&mut s, a, 64);
    let b = s.mmap_anon(q, 8).unwrap();
    touch(&mut s, b, 8);
    assert_eq!((s.kmem_pages(ga), s.kmem_pages(gb)), (3, 3));
    s.fork_task(p).unwrap();
    assert_eq!((s.kmem_pages(ga), s.kmem_pages(gb)), (6, 3));
    s.check_invariants().unwrap();
}
