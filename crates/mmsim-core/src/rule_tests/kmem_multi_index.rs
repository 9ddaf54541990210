//! Multi-index entries of the page-cache xarray (`crate::kmem`'s
//! `multi_index`, v6.18): a large folio of order ≥ 6 and its eviction's
//! shadow take slots of a level-1 node and no leaf; such a node of shadows
//! goes on the shadow-node list; a smaller refault splits the shadow.

use super::*;
use crate::memcg::{MemcgId, ROOT};

/// A machine with large page-cache folios and `machine.kmem_accounting`,
/// a group `/a` whose task has a file of `pages` pages open (random
/// advice: order-0 reads).
fn lf_kmem(pages: u32) -> (Sim, MemcgId, u32) {
    let mut cfg = super::filefolio::lf_config(1 << 17);
    cfg.kmem_accounting = true;
    let mut s = Sim::new(cfg).unwrap();
    let a = s.add_memcg(ROOT, "a").unwrap();
    let t = s.add_task("t");
    s.attach_task(t, a).unwrap();
    let file = s.add_file("f", u64::from(pages)).unwrap();
    s.open(file, t).unwrap();
    s.fadvise(file, Advice::Random).unwrap();
    s.cur_memcg = a;
    (s, a, file)
}

/// Adds order-`order` folios at `0, 2^order, …` up to `end` (readahead's
/// `filemap_add_folio` of each).
fn add_folios(s: &mut Sim, file: u32, order: u8, end: u32) -> Vec<FolioId> {
    (0..end)
        .step_by(1 << order)
        .map(|i| s.filemap_add_large_folio(file, i, order, false).unwrap())
        .collect()
}

/// `shrink_folio_list` of folio `f` of group `m` alone (references
/// ignored): evicted with its shadow.
fn evict(s: &mut Sim, m: MemcgId, f: FolioId) {
    let pages = 1u64 << s.folios[f].order();
    let lru = list_of(s, f);
    s.memcgs[m as usize].lruvec.lists[lru as usize].unlink(&mut s.folios, f);
    s.folios[f].clear(flags::LRU);
    let mut batch = vec![f];
    let mut sc = ScanControl::new(Reclaimer::Direct, 32, s.clock);
    sc.ignore_references = true;
    let rules = s.rules();
    let (reclaimed, _) = s.shrink_folio_list(&mut batch, &mut sc, rules);
    assert_eq!(reclaimed, pages);
}

/// Pages of `file` below `end` whose slot holds a shadow.
fn shadows(s: &Sim, file: u32, end: u32) -> u32 {
    (0..end)
        .filter(|&i| {
            let v = s.files[file as usize].slot(i);
            v != 0 && slot_folio(v).is_none()
        })
        .count() as u32
}

#[test]
fn order_9_folios_and_their_shadows_take_level_1_slots_without_leaves() {
    // Four order-9 folios over 0..2048: xas_store of order 9 puts each in 8
    // slots of the level-1 node over 0..4096, which is the root: 1 node
    // (the per-slot model counted 32 leaves and the root: 33).
    let (mut s, a, file) = lf_kmem(16384);
    let fs = add_folios(&mut s, file, 9, 2048);
    assert_eq!(s.kmem_file_nodes(file), 1);
    assert_eq!(s.kmem_report(a).unwrap().xa_nodes, 1);
    // Three evicted: their shadows share the node with a folio: not
    // shadow-only (count 32, nr_values 24).
    assert_eq!(s.kmem_level1_counts(file, 0), (32, 0));
    for &f in &fs[..3] {
        evict(&mut s, a, f);
    }
    assert_eq!(s.kmem_level1_counts(file, 0), (32, 24));
    assert_eq!(s.kmem_file_nodes(file), 1);
    assert_eq!(s.kmem_shadow_nodes(a), 0);
    assert_eq!(shadows(&s, file, 2048), 1536);
    // The fourth: count == nr_values == 32, the node goes on the list.
    evict(&mut s, a, fs[3]);
    assert_eq!(s.kmem_level1_counts(file, 0), (32, 32));
    assert_eq!(s.kmem_file_nodes(file), 1);
    assert_eq!(s.kmem_shadow_nodes(a), 1);
    assert_eq!(shadows(&s, file, 2048), 2048);
    // An order-9 folio at 4096 grows the tree: a root over two level-1 nodes.
    s.filemap_add_large_folio(file, 4096, 9, false).unwrap();
    assert_eq!(s.kmem_file_nodes(file), 3);
    assert_eq!(s.kmem_report(a).unwrap().slab_reclaimable, 3 * 592);
    s.check_invariants().unwrap();
}

#[test]
fn an_order_0_refault_splits_the_shadow_into_leaves_and_reads_its_distance() {
    let (mut s, a, file) = lf_kmem(16384);
    let fs = add_folios(&mut s, file, 9, 1024);
    evict(&mut s, a, fs[0]);
    assert_eq!(s.kmem_file_nodes(file), 1);
    // Eight slots of the shadow, eight of the folio at 512.
    assert_eq!(s.kmem_level1_counts(file, 0), (16, 8));
    // The one shadow's distance from any index of 0..512: the clock moved
    // by the folio's 512 pages at its eviction.
    let sh = s
        .shadow_layout
        .unpack(s.files[file as usize].slot(300))
        .unwrap();
    assert_eq!(s.workingset_refault_distance(sh, true), Some((512, 0)));
    assert_eq!(
        s.files[file as usize].slot(0),
        s.files[file as usize].slot(511)
    );
    // A one-page read at 300: xas_split to order 0 allocates 8 leaves of
    // 64 values each (the 5th then holds the page), so 9 nodes; 7 leaves
    // are shadow-only; the level-1 node holds leaves and a folio.
    s.step(&Event::FileRead {
        file,
        index: 300,
        pages: 1,
    });
    assert_eq!(s.vm.workingset_refault_file, 1);
    assert_eq!(s.kmem_file_nodes(file), 9);
    assert_eq!(s.kmem_shadow_nodes(a), 7);
    // The level-1 node's eight shadow slots now point at the leaves: no
    // values left in it, the same 16 slots occupied.
    assert_eq!(s.kmem_level1_counts(file, 0), (16, 0));
    assert_eq!(shadows(&s, file, 512), 511);
    s.check_invariants().unwrap();
}

/// 40 level-1 nodes of order-9 shadows (163,840 pages evicted) under a
/// root: 41 nodes, where the per-slot model kept 2,560 leaves.
fn forty_nodes_of_shadows() -> (Sim, MemcgId, u32) {
    let (mut s, a, file) = lf_kmem(163_840);
    for base in (0..163_840).step_by(16_384) {
        for i in (base..base + 16_384).step_by(512) {
            let f = s.filemap_add_large_folio(file, i, 9, false).unwrap();
            evict(&mut s, a, f);
        }
    }
    assert_eq!(s.kmem_file_nodes(file), 41);
    assert_eq!(s.kmem_shadow_nodes(a), 40);
    (s, a, file)
}

#[test]
fn the_shrinker_keeps_level_1_nodes_of_shadows_within_an_eighth_of_the_pages() {
    // 4,000 LRU pages allow 500 shadow-only nodes: the 40 stay, with all
    // their shadows (the per-slot model's 2,560 leaves were 2,060 over).
    let (mut s, a, file) = forty_nodes_of_shadows();
    let other = s.add_file("g", 10_000).unwrap();
    s.fadvise(other, Advice::Random).unwrap();
    s.files[other as usize].task = s.files[file as usize].task;
    for i in 0..4000 {
        s.step(&Event::FileRead {
            file: other,
            index: i,
            pages: 1,
        });
    }
    assert_eq!(s.shrink_slab_shadow(a, 0, s.clock), 0);
    assert_eq!(s.kmem_shadow_nodes(a), 40);
    assert_eq!(shadows(&s, file, 163_840), 163_840);
}

#[test]
fn the_shrinker_deletes_a_level_1_node_with_all_its_shadows() {
    // No LRU pages: count_shadow_nodes allows 41·592 B of slab = 5 pages
    // >> 3 = 0 nodes; freeable 40, delta 20 < 40: deferred at first, then
    // 20 + 20 = 40 scanned at priority 0: each isolate deletes a node and
    // its 4,096 pages' shadows (xa_delete_node), and the root with the last.
    let (mut s, a, file) = forty_nodes_of_shadows();
    assert_eq!(s.shrink_slab_shadow(a, 0, s.clock), 0);
    assert_eq!(s.shrink_slab_shadow(a, 0, s.clock), 40);
    let r = s.kmem_report(a).unwrap();
    assert_eq!(r.workingset_nodereclaim, 40);
    assert_eq!(r.shadow_nodes, 0);
    assert_eq!(r.xa_nodes, 0);
    assert_eq!(s.kmem_file_nodes(file), 0);
    assert_eq!(shadows(&s, file, 163_840), 0);
    s.check_invariants().unwrap();
}
