//! Migration makes a new folio (`crate::compaction::migrate`, v6.12
//! `migrate_folio_move`): a folio compaction moves gets a new id at its new
//! frames, and every reference to the old id is rewritten.

use std::collections::BTreeMap;

use super::thp::thp_machine_with;
use crate::config::PolicyName;
use crate::event::Event;
use crate::huge_memory::{ThpConfig, ThpDefrag, ThpSizeConfig, ThpSizeEnabled, VmaThpAdvice};
use crate::mem::filemap::slot_folio;
use crate::mem::folio::{FolioArena, FolioId, NIL};
use crate::mem::list::List;
use crate::mem::pagetable::{PTE_FOLIO_MASK, PTE_PRESENT};
use crate::page_alloc::MigrateType;
use crate::sim::Sim;

/// An 8192-page machine with compaction under `policy`: 64K folios
/// `always`, top-level `defrag = always`.
fn machine(policy: PolicyName, lru_add: bool) -> Sim {
    machine_with(policy, lru_add, |_| {})
}

/// [`machine`] with the configuration tweaked.
fn machine_with(
    policy: PolicyName,
    lru_add: bool,
    tweak: impl FnOnce(&mut crate::config::MachineConfig),
) -> Sim {
    let thp = ThpConfig {
        hugepages_64kb: ThpSizeConfig {
            enabled: ThpSizeEnabled::Always,
        },
        defrag: ThpDefrag::Always,
        ..Default::default()
    };
    thp_machine_with(8192, None, thp, |c| {
        c.policy.name = policy;
        c.compaction.enabled = true;
        c.compaction.proactiveness = 0;
        c.compaction.migrate_lru_add = lru_add;
        tweak(c);
    })
}

/// Every folio id on every list of every group, head to tail, list by list
/// (the classic lists, then MGLRU's generations).
fn lists(s: &Sim) -> Vec<Vec<FolioId>> {
    let walk = |l: &List| {
        let mut v = Vec::new();
        let mut c = l.head;
        while c != NIL {
            v.push(c);
            c = s.folios.links(c)[1];
        }
        v
    };
    let mut out = Vec::new();
    for m in &s.memcgs {
        out.extend(m.lruvec.lists.iter().map(walk));
        for gen in &m.lruvec.lrugen.lists {
            out.extend(gen.iter().map(walk));
        }
    }
    out
}

/// The folio each mapped page of `vmas` and each cached page of `file`
/// (`pages` of each) is, by (VMA or `u32::MAX` for the page cache, index).
fn refs(s: &Sim, vmas: &[u32], file: u32, pages: u32) -> BTreeMap<(u32, u32), FolioId> {
    let mut m = BTreeMap::new();
    for &v in vmas {
        for i in 0..pages {
            let p = s.vmas[v as usize].pte(i);
            if p & PTE_PRESENT != 0 {
                m.insert((v, i), p & PTE_FOLIO_MASK);
            }
        }
    }
    for i in 0..pages {
        if let Some(f) = slot_folio(s.files[file as usize].slot(i)) {
            m.insert((u32::MAX, i), f);
        }
    }
    m
}

/// space, index, swap, flags, mapcount, list tag, group, order, gen_refs.
type KeptFields = (u32, u32, u32, u16, u8, u8, u16, u8, u8);

/// The fields migration keeps (all but the head PFN) of folio `id`.
fn kept(a: &FolioArena, id: FolioId) -> KeptFields {
    let f = &a[id];
    (
        f.space,
        f.index,
        f.swap,
        f.flags,
        f.mapcount,
        a.lru(id),
        a.memcg(id),
        f.order(),
        f.gen_refs,
    )
}

/// The zone of the tests below: pageblock 0 holds, in each 16-page chunk,
/// one folio that stays: an anonymous page (even chunks) or a page of a
/// file mapped shared by two tasks (odd chunks; every fourth chunk's
/// stored to, so dirty and queued for the flusher). The rest of the zone
/// is held, so a 64K fault compacts pageblock 0. Returns the machine, the
/// anonymous VMA and the file's two mappings, the file, and the frames held.
fn fragmented(policy: PolicyName, lru_add: bool) -> (Sim, [u32; 3], u32, Vec<u64>) {
    fragmented_on(machine(policy, lru_add))
}

/// [`fragmented`] on machine `s`.
fn fragmented_on(mut s: Sim) -> (Sim, [u32; 3], u32, Vec<u64>) {
    let (t1, t2) = (s.add_task("a"), s.add_task("b"));
    let anon = s.mmap_anon(t1, 4096).unwrap();
    s.madvise_thp(anon, VmaThpAdvice::Nohugepage).unwrap();
    let file = s.add_file("f", 256).unwrap();
    let (ma, mb) = (
        s.mmap_file(t1, file, 0, 256, false).unwrap(),
        s.mmap_file(t2, file, 0, 256, false).unwrap(),
    );
    // MADV_RANDOM: one page per file fault (no read-around).
    for v in [ma, mb] {
        s.madvise(v, crate::readahead::Advice::Random).unwrap();
    }
    for k in 0..256u32 {
        for i in 16 * k..16 * k + 15 {
            s.step(&Event::Access {
                vma: anon,
                index: i,
                write: true,
            });
        }
        let (vma, index, write) = if k % 2 == 0 {
            (anon, 16 * k + 15, true)
        } else {
            (ma, k, k % 4 == 1)
        };
        s.step(&Event::Access { vma, index, write });
        if k % 2 == 1 {
            s.step(&Event::Access {
                vma: mb,
                index: k,
                write: false,
            });
        }
    }
    s.phys.drain_pages();
    let mut held = Vec::new();
    while let Some(p) = s.phys.zone.alloc_pages(0, MigrateType::Movable) {
        held.push(p);
    }
    s.node.free -= held.len() as u64;
    for k in 0..256u32 {
        s.step(&Event::Discard {
            vma: anon,
            index: 16 * k,
            pages: 15,
        });
    }
    s.phys.drain_pages();
    (s, [anon, ma, mb], file, held)
}

/// Gives the frames [`fragmented`] held back (free + used = managed again).
fn release(s: &mut Sim, held: &[u64]) {
    for &p in held {
        s.phys.zone.free_pages_block(p, 0);
    }
    s.node.free += held.len() as u64;
}

/// The ids of the folios compaction moved: (old, new), from the PTEs and
/// slots `before` and after.
fn moved_ids(
    before: &BTreeMap<(u32, u32), FolioId>,
    after: &BTreeMap<(u32, u32), FolioId>,
) -> BTreeMap<FolioId, FolioId> {
    assert_eq!(
        before.keys().collect::<Vec<_>>(),
        after.keys().collect::<Vec<_>>()
    );
    let mut map: BTreeMap<FolioId, FolioId> = BTreeMap::new();
    for (k, &old) in before {
        let new = after[k];
        assert_eq!(*map.entry(old).or_insert(new), new, "{k:?}");
    }
    map
}

/// The 64K fault moves pageblock 0's 32 folios, each to a new id, and
/// the PTEs (both mappings of a file page), the page-cache slots, the LRU
/// lists (position and, under MGLRU, generation), the dirty queue and
/// `mem_map` name the new ids; the old ids are freed.
#[test]
fn a_migrated_folio_is_a_new_id_in_every_place_of_the_old() {
    for policy in [PolicyName::Cost, PolicyName::Mglru] {
        let (mut s, vmas, file, held) = fragmented(policy, false);
        let before = refs(&s, &vmas, file, 4096);
        let lists_before = lists(&s);
        let folios_before: BTreeMap<FolioId, (KeptFields, u32)> = before
            .values()
            .map(|&f| (f, (kept(&s.folios, f), s.folios.head_pfn(f))))
            .collect();
        let mut dirty_before = Vec::new();
        let mut q = s.dirty_fifo.clone();
        while let Some((t, f)) = q.pop_front() {
            dirty_before.push((t, f));
        }
        assert_eq!(dirty_before.len(), 64, "{policy:?}");

        let t3 = s.add_task("thp");
        let thp = s.mmap_anon(t3, 16).unwrap();
        let big = super::fault_anon(&mut s, thp, 0);
        assert_eq!(s.folios[big].order(), 4, "{policy:?}");
        assert_eq!(s.vm.pgmigrate_success, 32, "{policy:?}");

        // old id -> new id, from the same PTE or slot before and after.
        let map = moved_ids(&before, &refs(&s, &vmas, file, 4096));
        let moved: Vec<(FolioId, FolioId)> = map
            .iter()
            .filter(|(o, n)| o != n)
            .map(|(&o, &n)| (o, n))
            .collect();
        assert_eq!(
            moved.len(),
            32,
            "{policy:?}: every moved folio has a new id"
        );
        let (mut anon_moved, mut file_moved) = (0, 0);
        let news: Vec<FolioId> = moved.iter().map(|m| m.1).collect();
        for &(old, new) in &moved {
            let (a, old_pfn) = &folios_before[&old];
            assert_eq!(
                *a,
                kept(&s.folios, new),
                "{policy:?}: flags, list, gen, mapcount"
            );
            let pfn = u64::from(s.folios.head_pfn(new));
            assert_ne!(pfn, u64::from(*old_pfn));
            assert_eq!(s.phys.zone.frame_folio(pfn), new);
            // The old id is free, or some moved folio's or the 64K folio's.
            assert!(!s.folios.is_live(old) || news.contains(&old) || old == big);
            if s.folios[new].is_file() {
                file_moved += 1;
                assert_eq!(
                    s.folios[new].mapcount, 2,
                    "{policy:?}: both mappings rewritten"
                );
            } else {
                anon_moved += 1;
            }
        }
        assert_eq!((anon_moved, file_moved), (16, 16), "{policy:?}");
        // Same lists, same places, same generations.
        let image: Vec<Vec<FolioId>> = lists_before
            .iter()
            .map(|l| {
                l.iter()
                    .map(|f| map.get(f).copied().unwrap_or(*f))
                    .collect()
            })
            .collect();
        let now: Vec<Vec<FolioId>> = lists(&s)
            .into_iter()
            .map(|l| l.into_iter().filter(|&f| f != big).collect())
            .collect();
        assert_eq!(now, image, "{policy:?}");
        // The dirty queue: the same entries, in order, with the new ids.
        let mut dirty_after = Vec::new();
        let mut q = s.dirty_fifo.clone();
        while let Some((t, f)) = q.pop_front() {
            dirty_after.push((t, f));
        }
        let want: Vec<(u64, FolioId)> = dirty_before.iter().map(|&(t, f)| (t, map[&f])).collect();
        assert_eq!(dirty_after, want, "{policy:?}");
        assert!(want.iter().zip(&dirty_before).any(|(a, b)| a.1 != b.1));
        release(&mut s, &held);
        s.check_page_alloc().unwrap();
        s.check_invariants().unwrap();
    }
}

/// With `migrate_lru_add` (v6.12's `folio_add_lru(dst)`), each moved
/// folio's new id is at the head of the list it was on, ahead of every
/// folio that did not move, which keep their order.
#[test]
fn with_migrate_lru_add_a_moved_folio_goes_to_the_head_of_its_list() {
    let (mut s, vmas, file, held) = fragmented(PolicyName::Cost, true);
    let before = refs(&s, &vmas, file, 4096);
    let lists_before = lists(&s);
    let t = s.add_task("thp");
    let thp = s.mmap_anon(t, 16).unwrap();
    let big = super::fault_anon(&mut s, thp, 0);
    assert_eq!(s.vm.pgmigrate_success, 32);
    let map = moved_ids(&before, &refs(&s, &vmas, file, 4096));
    let mut nonempty = 0;
    for (was, now) in lists_before.iter().zip(lists(&s)) {
        let now: Vec<FolioId> = now.into_iter().filter(|&f| f != big).collect();
        let mut moved_here: Vec<FolioId> = was
            .iter()
            .filter(|f| map[f] != **f)
            .map(|f| map[f])
            .collect();
        let stayed: Vec<FolioId> = was.iter().copied().filter(|f| map[f] == *f).collect();
        let k = moved_here.len();
        nonempty += usize::from(k > 0);
        let mut head = now[..k].to_vec();
        head.sort_unstable();
        moved_here.sort_unstable();
        assert_eq!(head, moved_here);
        assert_eq!(now[k..], stayed[..]);
    }
    // The anonymous pages' list and the file pages' list.
    assert_eq!(nonempty, 2);
    release(&mut s, &held);
    s.check_invariants().unwrap();
}

/// [`fragmented`] with every free page above the lowest pageblock held
/// too, then one async direct compaction for order 4: the migrate scanner
/// isolates from pageblock 0, but the free scanner, which stops above it,
/// finds no target (`compaction_alloc` fails, `migrate_pages` returns
/// -ENOMEM). Returns the lists before and after, and the sim.
fn no_target(lru_add: bool) -> (Vec<Vec<FolioId>>, Vec<Vec<FolioId>>, Sim) {
    use crate::compaction::{CompactResult, MigrateMode};
    use crate::page_alloc::PAGEBLOCK_ORDER;
    let (mut s, _, _, mut held) = fragmented(PolicyName::Cost, lru_add);
    let lowest = s.phys.pfn_range().0 >> PAGEBLOCK_ORDER;
    let mut low = Vec::new();
    while let Some(p) = s.phys.zone.alloc_pages(0, MigrateType::Movable) {
        if p >> PAGEBLOCK_ORDER == lowest {
            low.push(p);
        } else {
            held.push(p);
            s.node.free -= 1;
        }
    }
    for p in low {
        s.phys.zone.free_pages_block(p, 0);
    }
    let before = lists(&s);
    assert_eq!(
        s.alloc_pages_direct_compact(4, MigrateMode::Async),
        (None, CompactResult::PartialSkipped)
    );
    assert_eq!((s.vm.pgmigrate_success, s.vm.pgmigrate_fail), (0, 1));
    let after = lists(&s);
    release(&mut s, &held);
    s.check_invariants().unwrap();
    (before, after, s)
}

/// A folio compaction isolated but could not migrate goes back with
/// `putback_movable_pages` → `folio_putback_lru` → `folio_add_lru`: under
/// `migrate_lru_add` at the head of its list; without the option it never
/// left its place.
#[test]
fn with_migrate_lru_add_a_folio_not_migrated_is_put_back_at_the_head() {
    let (before, after, _) = no_target(false);
    assert_eq!(after, before, "the option off: nothing moves");
    let (before, after, _) = no_target(true);
    // The lowest pageblock's first folio, the anonymous page of chunk 0
    // (the first anonymous folio faulted: the tail of its list).
    let f = *before[0].last().unwrap();
    let mut want = before.clone();
    want[0].pop();
    want[0].insert(0, f);
    assert_eq!(after, want);
}

/// v6.12 `isolate_migratepages` isolates with `ISOLATE_ASYNC_MIGRATE` in
/// every mode but `MIGRATE_SYNC`, so `isolate_migratepages_block` passes over
/// a folio under writeback in async and in sync-light compaction alike (a
/// sync-light run used to isolate and move it). [`fragmented`]'s dirty file
/// pages of the lowest pageblock are put under writeback (as `pageout`
/// does); one direct compaction for order 4 in each mode moves the other
/// folios of the block and leaves those: same ids, same frames, still under
/// writeback, their writes still queued; `compact_isolated` (with the
/// free scanner's pages) and `pgmigrate_success` count only the others,
/// `pgmigrate_fail` nothing.
#[test]
fn a_folio_under_writeback_is_not_isolated_in_async_or_sync_light_mode() {
    use crate::compaction::{CompactResult, MigrateMode};
    use crate::mem::folio::flags;
    use crate::page_alloc::PAGEBLOCK_ORDER;
    for mode in [MigrateMode::Async, MigrateMode::SyncLight] {
        let (mut s, vmas, file, held) = fragmented(PolicyName::Cost, false);
        let lowest = s.phys.pfn_range().0 >> PAGEBLOCK_ORDER;
        let in_lowest =
            |s: &Sim, f: FolioId| u64::from(s.folios.head_pfn(f)) >> PAGEBLOCK_ORDER == lowest;
        let before = refs(&s, &vmas, file, 4096);
        let movable = before
            .values()
            .collect::<std::collections::BTreeSet<_>>()
            .into_iter()
            .filter(|&&f| in_lowest(&s, f))
            .count() as u64;
        let mut written = Vec::new();
        for i in 0..256 {
            let Some(f) = slot_folio(s.files[file as usize].slot(i)) else {
                continue;
            };
            if in_lowest(&s, f) && s.folios[f].test(flags::DIRTY) {
                s.dirty_fifo_unqueue(f);
                s.write_folio(f, s.now());
                written.push((f, s.folios.head_pfn(f)));
            }
        }
        assert_eq!((movable, written.len()), (32, 8), "{mode:?}");
        let queued = s.writeback[1].len();
        let (isolated, success) = (s.vm.compact_isolated, s.vm.pgmigrate_success);
        let (page, r) = s.alloc_pages_direct_compact(4, mode);
        assert!(page.is_some(), "{mode:?}");
        assert_eq!(r, CompactResult::Success, "{mode:?}");
        // compact_isolated: the 24 other folios' pages, and the free pages
        // the free scanner took (27 with the async stride, 31 without).
        let free_side = if mode == MigrateMode::Async { 27 } else { 31 };
        assert_eq!(s.vm.compact_isolated - isolated, 24 + free_side, "{mode:?}");
        assert_eq!(s.vm.compact_migrate_scanned, 512, "{mode:?}");
        assert_eq!(s.vm.pgmigrate_success - success, 24, "{mode:?}");
        assert_eq!(s.vm.pgmigrate_fail, 0, "{mode:?}");
        for &(f, pfn) in &written {
            assert!(s.folios.is_live(f), "{mode:?}");
            assert_eq!(s.folios.head_pfn(f), pfn, "{mode:?}: not moved");
            assert!(s.folios[f].test(flags::WRITEBACK), "{mode:?}");
        }
        let map = moved_ids(&before, &refs(&s, &vmas, file, 4096));
        assert_eq!(map.iter().filter(|(o, n)| o != n).count(), 24, "{mode:?}");
        let mut q: Vec<FolioId> = s.writeback[1].iter().map(|e| e.1).collect();
        q.retain(|f| written.iter().any(|w| w.0 == *f));
        assert_eq!((s.writeback[1].len(), q.len()), (queued, 8), "{mode:?}");
        release(&mut s, &held);
        s.phys.zone.free_pages_block(page.unwrap(), 4);
        s.node.free += 16;
        s.check_page_alloc().unwrap();
        s.check_invariants().unwrap();
    }
}

/// `migrate_lru_add` in each mode (v6.12 `migrate_pages_batch`: a batch is
/// moved in the order of `cc->migratepages`, the last isolated first, and
/// each `folio_add_lru(dst)` goes to the head as the per-CPU `lru_add`
/// batch drains in order). Sync-light compaction isolates pageblock 0's 32
/// folios as one batch, so they end at the head of their lists in isolation
/// order, the lowest old PFN first. Async direct compaction isolates an
/// order-4 chunk at a time and migrates as soon as the scanner leaves a
/// chunk with a folio isolated (`skip_on_failure`: `if (nr_isolated)
/// break`), so each folio is a batch of its own and the last moved, the
/// highest PFN, ends at the head. The folios that stayed follow.
#[test]
fn with_migrate_lru_add_a_batch_ends_at_the_head_in_isolation_order() {
    use crate::compaction::MigrateMode;
    for mode in [MigrateMode::SyncLight, MigrateMode::Async] {
        let (mut s, vmas, file, held) = fragmented(PolicyName::Cost, true);
        let before = refs(&s, &vmas, file, 4096);
        let lists_before = lists(&s);
        let pfn_before: BTreeMap<FolioId, u32> = before
            .values()
            .map(|&f| (f, s.folios.head_pfn(f)))
            .collect();
        let page = s.alloc_pages_direct_compact(4, mode).0.unwrap();
        assert_eq!(s.vm.pgmigrate_success, 32, "{mode:?}");
        let map = moved_ids(&before, &refs(&s, &vmas, file, 4096));
        let mut heads = 0;
        for (was, now) in lists_before.iter().zip(lists(&s)) {
            let mut moved: Vec<FolioId> = was.iter().copied().filter(|f| map[f] != *f).collect();
            moved.sort_by_key(|f| pfn_before[f]);
            if mode == MigrateMode::Async {
                moved.reverse();
            }
            let want: Vec<FolioId> = moved.iter().map(|f| map[f]).collect();
            let stayed: Vec<FolioId> = was.iter().copied().filter(|f| map[f] == *f).collect();
            assert_eq!(now[..want.len()], want[..], "{mode:?}");
            assert_eq!(now[want.len()..], stayed[..], "{mode:?}");
            heads += want.len();
        }
        assert_eq!(heads, 32, "{mode:?}");
        release(&mut s, &held);
        s.phys.zone.free_pages_block(page, 4);
        s.node.free += 16;
        s.check_invariants().unwrap();
    }
}

/// `migrate_lru_add` under MGLRU v6.12: `folio_isolate_lru` →
/// `lru_gen_del_folio` marks PG_active only a folio of the two youngest
/// generations, and `lru_gen_add_folio` places the destination by its
/// flags, at the head. [`fragmented`]'s anonymous pages were faulted into
/// the youngest generation (`max_seq` = 3) and its file pages, read
/// faults, into `min_seq + 1` = 1. As they are, an anonymous destination
/// (PG_active) goes back to `max_seq`; a file one (not active, more than
/// `MIN_NR_GENS` generations) to `min_seq + 1`. Aged two generations first
/// (`max_seq` 5, `min_seq` 2), no source is young: an anonymous destination
/// (not in the swap cache) goes to `max_seq - 1` = 4, a file one to
/// `min_seq + 1` = 3. Every source is given a tier (`LRU_REFS_MASK` = 1,
/// as two reads through `read()` would); v6.12's `folio_migrate_flags`
/// does not copy it, so every destination's is 0.
#[test]
fn with_migrate_lru_add_under_mglru_a_destination_takes_the_generation_of_its_flags() {
    use crate::reclaim::lru_gen::{folio_lru_gen, folio_refs, set_folio_refs};
    for aged in [false, true] {
        let (mut s, vmas, file, held) = fragmented_on(machine_with(PolicyName::Mglru, true, |c| {
            c.policy.mglru_version = crate::config::MglruVersion::V6_12;
        }));
        if aged {
            for _ in 0..2 {
                let seq = s.memcgs[0].lruvec.lrugen.max_seq;
                assert!(s.inc_max_seq(0, seq, 60, s.clock));
            }
        }
        let before = refs(&s, &vmas, file, 4096);
        let lg = &s.memcgs[0].lruvec.lrugen;
        let (max_seq, min_seq) = (lg.max_seq, lg.min_seq);
        assert_eq!(
            (max_seq, min_seq),
            if aged { (5, [2, 2]) } else { (3, [0, 0]) }
        );
        let mut src_gens = std::collections::BTreeSet::new();
        for &f in before.values() {
            let fo = &mut s.folios[f];
            src_gens.insert((fo.is_file(), folio_lru_gen(fo)));
            set_folio_refs(fo, 1);
        }
        // (file, generation): seq 3 and 1, or (aged) 3 and 2.
        let want_src = if aged {
            [(false, 3), (true, 2)]
        } else {
            [(false, 3), (true, 1)]
        };
        let want_src: std::collections::BTreeSet<_> =
            want_src.iter().map(|&(f, g)| (f, Some(g))).collect();
        assert_eq!(src_gens, want_src, "aged {aged}");
        let page = s
            .alloc_pages_direct_compact(4, crate::compaction::MigrateMode::Async)
            .0
            .unwrap();
        assert_eq!(s.vm.pgmigrate_success, 32);
        let map = moved_ids(&before, &refs(&s, &vmas, file, 4096));
        let mut seen = [0; 2];
        for &new in map.iter().filter(|(o, n)| o != n).map(|(_, n)| n) {
            let d = &s.folios[new];
            let ty = d.is_file() as usize;
            // Sequence numbers: generation = seq % MAX_NR_GENS (4).
            let want = match (ty, aged) {
                (0, false) => max_seq,
                (0, true) => max_seq - 1,
                _ => min_seq[1] + 1,
            };
            assert_eq!(
                folio_lru_gen(d),
                Some((want % 4) as usize),
                "aged {aged} file {ty}"
            );
            assert_eq!(folio_refs(d), 0, "aged {aged} file {ty}");
            seen[ty] += 1;
        }
        assert_eq!(seen, [16, 16]);
        release(&mut s, &held);
        s.phys.zone.free_pages_block(page, 4);
        s.node.free += 16;
        s.check_invariants().unwrap();
    }
}
