//! Rule tests of the multi-gen LRU: scripted event sequences with the exact
//! outcome each version's code dictates (v6.1 and v6.14 where they differ).

use super::pid::{positive_ctrl_err, CtrlPos};
use super::*;
use crate::config::{
    ConfigError, DeviceConfig, DeviceKind, MachineConfig, MglruVersion, PolicyConfig, PolicyName,
    Size,
};
use crate::event::Event;
use crate::mem::filemap::slot_folio;
use crate::mem::folio::{flags, FolioId};
use crate::mem::pagetable::{PTE_FOLIO_MASK, PTE_PRESENT, PTE_YOUNG};
use crate::readahead::Advice;
use crate::reclaim::{Reclaimer, ScanControl};
use crate::sim::{Policy, Sim};

const V1: MglruVersion = MglruVersion::V6_1;
const V2: MglruVersion = MglruVersion::V6_14;
const V12: MglruVersion = MglruVersion::V6_12;
const ANON: usize = 0;
const FILE: usize = 1;

fn cfg(v: MglruVersion, pages: u64, swap: Option<u64>) -> MachineConfig {
    let mut cfg = MachineConfig {
        memory: Size::from_pages(pages),
        policy: PolicyConfig {
            name: PolicyName::Mglru,
            mglru_version: v,
            ..Default::default()
        },
        ..Default::default()
    };
    if let Some(s) = swap {
        cfg.swap = DeviceConfig {
            size: Some(Size::from_pages(s)),
            ..DeviceConfig::of(DeviceKind::Zram)
        };
    }
    cfg
}

fn mg(v: MglruVersion) -> Sim {
    Sim::new(cfg(v, 1 << 16, Some(1 << 14))).unwrap()
}

fn seq_of(s: &Sim, f: FolioId) -> u64 {
    // The generation field as a seq within the window [max_seq - 3, max_seq].
    let lg = s.lru_gen_folio(0);
    let gen = folio_lru_gen(&s.folios[f]).expect("on an MGLRU list");
    (lg.max_seq.saturating_sub(3)..=lg.max_seq)
        .find(|&q| lru_gen_from_seq(q) == gen)
        .unwrap()
}

fn anon_folio(s: &Sim, vma: u32, i: u32) -> FolioId {
    let p = s.vmas[vma as usize].pte(i);
    assert!(p & PTE_PRESENT != 0);
    p & PTE_FOLIO_MASK
}

fn file_folio(s: &Sim, file: u32, i: u32) -> FolioId {
    slot_folio(s.files[file as usize].slot(i)).expect("resident")
}

fn read(s: &mut Sim, file: u32, index: u32) {
    s.step(&Event::FileRead {
        file,
        index,
        pages: 1,
    });
}

fn touch(s: &mut Sim, vma: u32, index: u32) {
    s.step(&Event::Access {
        vma,
        index,
        write: false,
    });
}

/// One anon page faulted in, and a file of 100 pages opened for random reads.
fn setup(v: MglruVersion) -> (Sim, u32, u32) {
    setup_in(cfg(v, 1 << 16, Some(1 << 14)))
}

/// [`setup`] on a machine of config `c`.
fn setup_in(c: MachineConfig) -> (Sim, u32, u32) {
    let mut s = Sim::new(c).unwrap();
    let t = s.add_task("t");
    let vma = s.mmap_anon(t, 100).unwrap();
    let file = s.add_file("f", 100).unwrap();
    s.open(file, t).unwrap();
    s.fadvise(file, Advice::Random).unwrap();
    (s, vma, file)
}

#[test]
fn initial_state_is_four_generations() {
    let s = mg(V2);
    let lg = s.lru_gen_folio(0);
    assert_eq!((lg.max_seq, lg.min_seq, lg.mm_seq), (3, [0, 0], 2));
    assert_eq!(s.policy, Policy::Mglru(V2));
}

#[test]
fn faulted_page_enters_max_seq_minus_one_in_v6_14_and_max_seq_in_v6_1() {
    for (v, want) in [(V2, 2), (V1, 3)] {
        let (mut s, vma, _) = setup(v);
        touch(&mut s, vma, 0);
        let f = anon_folio(&s, vma, 0);
        assert_eq!(seq_of(&s, f), want, "{v:?}");
        // PG_active is transient: clear once on the list.
        assert!(!s.folios[f].test(flags::ACTIVE));
        assert_eq!(s.lru_gen_folio(0).nr_pages[lru_gen_from_seq(want)][ANON], 1);
        s.check_invariants().unwrap();
    }
}

#[test]
fn fd_read_enters_the_oldest_generation() {
    for v in [V2, V1] {
        let (mut s, _, file) = setup(v);
        read(&mut s, file, 5);
        let f = file_folio(&s, file, 5);
        assert_eq!(seq_of(&s, f), 0, "{v:?}");
    }
}

#[test]
fn workingset_fd_refault_enters_one_generation_younger_in_v6_14() {
    // lru_gen_folio_seq: not active, not reclaiming, PG_workingset →
    // MAX_NR_GENS - 1 → max_seq - 2.
    let (mut s, _, file) = setup(V2);
    read(&mut s, file, 5);
    let f = file_folio(&s, file, 5);
    s.lru_gen_del_folio(f, true);
    s.folios[f].set(flags::WORKINGSET);
    s.lru_gen_add_folio(f, false);
    assert_eq!(seq_of(&s, f), 1);
}

#[test]
fn tier_of_a_folio_read_n_times() {
    // N = 1..=6 reads through a descriptor: tiers 0, 1, 2, 2, 3, 3 in every
    // version, reached through different flag states. 6.12 (6.12.107 mm/swap.c
    // folio_mark_accessed() → folio_inc_refs(), the same function as 6.1's):
    // PG_referenced, then PG_workingset, then refs up to LRU_REFS_MASK; its
    // folio_lru_refs() is refs + PG_workingset and lru_tier_from_refs()
    // order_base_2(refs + 1), so refs 0, 1, 2, 3, 4, 4 → tiers 0, 1, 2, 2, 3, 3.
    for v in [V2, V1, V12] {
        let (mut s, _, file) = setup(v);
        let mut tiers = vec![];
        let mut states = vec![];
        for _ in 0..6 {
            read(&mut s, file, 7);
            let f = file_folio(&s, file, 7);
            let fo = s.folios[f];
            tiers.push(folio_tier(v, &fo));
            states.push((
                fo.test(flags::REFERENCED),
                folio_refs(&fo),
                fo.test(flags::WORKINGSET),
            ));
            read(&mut s, file, 50); // so the next read of 7 is not pos_same_folio
        }
        assert_eq!(tiers, vec![0, 1, 2, 2, 3, 3], "{v:?}");
        let want = match v {
            V2 => vec![
                (true, 0, false),
                (true, 1, false),
                (true, 2, false),
                (true, 3, false),
                (true, 3, true),
                (true, 3, true),
            ],
            V1 | V12 => vec![
                (true, 0, false),
                (true, 0, true),
                (true, 1, true),
                (true, 2, true),
                (true, 3, true),
                (true, 3, true),
            ],
        };
        assert_eq!(states, want, "{v:?}");
        // Tiers never move a folio: still where the read added it, the oldest
        // generation (6.12's lru_gen_add_folio(), "fix underprotected page
        // cache": min_seq + 1 while more than MIN_NR_GENS generations exist).
        let added = if v == V12 { 1 } else { 0 };
        assert_eq!(seq_of(&s, file_folio(&s, file, 7)), added, "{v:?}");
    }
}

/// Runs the debugfs `+` command on the top group with force_scan.
fn age(s: &mut Sim) {
    let max = s.lru_gen_folio(0).max_seq;
    s.lru_gen_run_aging(0, max, Some(100), true).unwrap();
}

#[test]
fn accessed_bit_promotes_after_two_sightings_in_v6_14_and_one_in_v6_1() {
    // 6.12 as 6.1: the fault adds the folio active (folio_add_lru() in a
    // fault) to max_seq (3); the aging's walk_pte_range() clears the young
    // PTE and folio_update_gen() rewrites the generation to the walk's
    // max_seq (3, no move) clearing refs, PG_referenced and PG_workingset
    // (6.12.107 mm/vmscan.c, no second chance: that is 6.14's
    // lru_gen_set_refs()); the next walk promotes it to 4, PG_workingset clear.
    for v in [V2, V1, V12] {
        let (mut s, vma, _) = setup(v);
        touch(&mut s, vma, 0); // faulted in young
        let f = anon_folio(&s, vma, 0);
        let start = seq_of(&s, f);
        age(&mut s); // walk sees the young PTE; max_seq 3 → 4
        assert_eq!(s.lru_gen_folio(0).max_seq, 4);
        assert_eq!(
            s.vmas[vma as usize].pte(0) & PTE_YOUNG,
            0,
            "walk clears young"
        );
        match v {
            V2 => {
                assert_eq!(seq_of(&s, f), start, "first sighting: second chance only");
                assert!(s.folios[f].test(flags::REFERENCED));
            }
            V1 | V12 => {
                assert_eq!(seq_of(&s, f), 3, "promoted to the max_seq of the walk");
                assert!(!s.folios[f].test(flags::REFERENCED | flags::WORKINGSET));
            }
        }
        touch(&mut s, vma, 0); // young again
        age(&mut s); // max_seq 4 → 5, walk promotes to 4
        assert_eq!(seq_of(&s, f), 4, "{v:?}");
        assert_eq!(s.folios[f].test(flags::WORKINGSET), v == V2);
        s.check_invariants().unwrap();
    }
}

#[test]
fn an_old_pte_is_not_promoted() {
    let (mut s, vma, _) = setup(V1);
    touch(&mut s, vma, 0);
    let f = anon_folio(&s, vma, 0);
    *s.vmas[vma as usize].pte_mut(0) &= !PTE_YOUNG;
    age(&mut s);
    assert_eq!(seq_of(&s, f), 3, "stays in its generation, now max_seq - 1");
    assert_eq!(s.lru_gen_folio(0).max_seq, 4);
}

#[test]
fn generation_page_counts_follow_folio_nr_pages() {
    // lru_gen_add_folio / folio_update_gen / lru_gen_del_folio move
    // folio_nr_pages(), not 1: a folio of order 2 counts 4 pages.
    let (mut s, _, file) = setup(V2);
    read(&mut s, file, 0);
    let f = file_folio(&s, file, 0);
    let gen_of = |s: &Sim| folio_lru_gen(&s.folios[f]).unwrap();
    let g0 = gen_of(&s);
    assert_eq!(s.lru_gen_folio(0).nr_pages[g0][FILE], 1);
    s.lru_gen_del_folio(f, true);
    assert_eq!(s.lru_gen_folio(0).nr_pages[g0][FILE], 0);
    s.folios[f].order = 2;
    s.lru_gen_add_folio_at_for_test(f, 1);
    let g1 = lru_gen_from_seq(1);
    assert_eq!(s.lru_gen_folio(0).nr_pages[g1][FILE], 4);
    s.check_lru_gen_invariants(0).unwrap();
    // Promotion to max_seq (v6.14: the second sighting) moves all 4.
    let young = lru_gen_from_seq(s.lru_gen_folio(0).max_seq);
    s.folios[f].set(flags::REFERENCED);
    assert_eq!(s.folio_update_gen(f, young), Some(g1));
    assert_eq!(s.lru_gen_folio(0).nr_pages[g1][FILE], 0);
    assert_eq!(s.lru_gen_folio(0).nr_pages[young][FILE], 4);
    s.lru_gen_del_folio(f, true);
    assert_eq!(s.lru_gen_folio(0).nr_pages[young][FILE], 0);
}

#[test]
fn inc_max_seq_runs_when_three_generations_remain_in_v6_14() {
    let (mut s, _, file) = setup(V2);
    for i in 0..11 {
        read(&mut s, file, i);
    }
    // 4 generations (0..=3): no aging, all 11 file pages evictable.
    assert_eq!(s.should_run_aging(0, 60), (false, 11));
    // Page 10 one generation younger (as a workingset fd refault would be).
    let f = file_folio(&s, file, 10);
    s.lru_gen_del_folio(f, true);
    s.lru_gen_add_folio_at_for_test(f, 1);
    // Evict generation 0: file's min_seq moves to 1; anon's (all empty) as
    // far as the window allows, 2 (max_seq − MIN_NR_GENS + 1).
    let r = s.lru_gen_run_eviction(0, 0, Some(60), None).unwrap();
    assert_eq!(r, 10);
    assert_eq!(s.lru_gen_folio(0).min_seq, [2, 1]);
    // Three generations left: age (1 page evictable).
    assert_eq!(s.should_run_aging(0, 60), (true, 1));
    // At DEF_PRIORITY eviction does not age; below it, get_nr_to_scan ages
    // (try_to_inc_max_seq) and returns -1.
    let mut sc = ScanControl::new(Reclaimer::Direct, 32, 0);
    assert_eq!(s.get_nr_to_scan(0, &mut sc, 60), 0);
    assert_eq!(s.lru_gen_folio(0).max_seq, 3);
    sc.priority = 11;
    assert_eq!(s.get_nr_to_scan(0, &mut sc, 60), -1);
    assert_eq!(s.lru_gen_folio(0).max_seq, 4);
    assert_eq!(s.lru_gen.stats.aging, 1);
    // A second try for the same seq finds the round done (mm_state.seq).
    let mut sc2 = ScanControl::new(Reclaimer::Direct, 32, 0);
    assert!(!s.try_to_inc_max_seq(0, 3, 60, false, &mut sc2));
}

#[test]
fn v6_1_ages_three_generations_only_when_unevenly_spread() {
    let (mut s, vma, file) = setup(V1);
    // v6.1: faults enter max_seq (3), fd reads min_seq (0).
    for i in 0..3 {
        read(&mut s, file, i);
    }
    for i in 0..3 {
        touch(&mut s, vma, i);
    }
    assert!(!s.should_run_aging(0, 60).0, "4 generations");
    let f = file_folio(&s, file, 2);
    s.lru_gen_del_folio(f, true);
    s.lru_gen_add_folio_at_for_test(f, 1);
    s.lru_gen_run_eviction(0, 0, Some(60), None).unwrap();
    // File stops at its page in seq 1; anon may not pass file.
    assert_eq!(s.lru_gen_folio(0).min_seq, [1, 1]);
    // 3 generations, 3 of 4 pages in max_seq: young·2 > total → age.
    assert_eq!(s.should_run_aging(0, 60), (true, 4));
    // Spread evenly over max_seq - 2, - 1 and max_seq: no aging.
    for (i, seq) in [(0u32, 1u64), (1, 2)] {
        let f = anon_folio(&s, vma, i);
        s.lru_gen_del_folio(f, true);
        s.lru_gen_add_folio_at_for_test(f, seq);
    }
    s.check_invariants().unwrap();
    // young 1, old (max_seq − 2) 2 of 4: within [1/2, 1/4] → no aging.
    assert_eq!(s.should_run_aging(0, 60), (false, 4));
}

#[test]
fn min_seq_advances_when_its_lists_empty() {
    for v in [V2, V1, V12] {
        let (mut s, vma, file) = setup(v);
        read(&mut s, file, 1); // file in gen 0 (v6.12: gen 1)
        touch(&mut s, vma, 1); // anon young
        assert_eq!(s.lru_gen_folio(0).min_seq, [0, 0]);
        // Anon's lists are empty up to its page (v6.14: seq 2, v6.1 and
        // v6.12: 3), but at least MIN_NR_GENS stay.
        let (moved, min_seq) = match v {
            // v6.14: anon may go to max_seq - 2 = 1 (file stays within one).
            V2 => (true, [1, 0]),
            // v6.1: anon may not pass file, whose gen 0 holds a page: no move.
            V1 => (false, [0, 0]),
            // 6.12.107 try_to_inc_min_seq() (6.1's): anon's empty lists take
            // it to 2 and file's to its page in 1; then anon = min(2, 1) and
            // file = max(1, 0): both move to 1.
            V12 => (true, [1, 1]),
        };
        assert_eq!(s.try_to_inc_min_seq(0, 60), moved, "{v:?}");
        assert_eq!(s.lru_gen_folio(0).min_seq, min_seq, "{v:?}");
        if v == V1 {
            continue;
        }
        // Empty the file list: both advance as far as the window allows
        // (v6.12: anon = min(2, 2), file = max(2, 1)).
        let f = file_folio(&s, file, 1);
        s.lru_gen_del_folio(f, true);
        s.lru_gen_add_folio_at_for_test(f, 2);
        assert!(s.try_to_inc_min_seq(0, 60));
        assert_eq!(s.lru_gen_folio(0).min_seq, [2, 2], "{v:?}");
        // Without swap (swappiness 0) only file moves (v6.12: `type =
        // !can_swap` skips anon, and the min/max step needs can_swap).
        let mut t = mg(v);
        let task = t.add_task("t");
        let vm = t.mmap_anon(task, 4).unwrap();
        touch(&mut t, vm, 0);
        assert!(t.try_to_inc_min_seq(0, 0));
        assert_eq!(t.lru_gen_folio(0).min_seq, [0, 2], "{v:?}");
    }
}

/// Sets the PID counters of group 0.
fn ctrl(s: &mut Sim, ty: usize, tier: usize, refaulted: u64, evicted: u64) {
    let lg = &mut s.memcgs[0].lruvec.lrugen;
    lg.refaulted[ty][tier] = refaulted;
    lg.evicted[ty][tier] = evicted;
}

#[test]
fn pid_controller_picks_the_type_with_fewer_refaults() {
    for v in [V2, V1] {
        let mut s = mg(v);
        // No history: file (pv has < 64 refaults).
        assert_eq!(s.get_type_to_scan(0, 60).0, FILE, "{v:?}");
        // File refaults a lot, anon not: anon.
        ctrl(&mut s, FILE, 0, 500, 1000);
        ctrl(&mut s, ANON, 0, 10, 1000);
        assert_eq!(s.get_type_to_scan(0, 60).0, ANON, "{v:?}");
        // Equal rates at swappiness 60 (gains 60 vs 140): file's rate/140
        // is below anon's/60 → file.
        ctrl(&mut s, ANON, 0, 500, 1000);
        assert_eq!(s.get_type_to_scan(0, 60).0, FILE, "{v:?}");
        // At swappiness 150 (gains 150 vs 50) the same rates favour anon.
        assert_eq!(s.get_type_to_scan(0, 150).0, ANON, "{v:?}");
        // Fixed choices: 1 → file, 200 → anon.
        assert_eq!(s.get_type_to_scan(0, 1).0, FILE);
        assert_eq!(s.get_type_to_scan(0, 200).0, ANON);
    }
    // v6.14 sums all tiers; v6.1 compares tier 0 only.
    for (v, want) in [(V2, ANON), (V1, FILE)] {
        let mut s = mg(v);
        ctrl(&mut s, FILE, 2, 900, 1000);
        ctrl(&mut s, ANON, 0, 10, 1000);
        assert_eq!(s.get_type_to_scan(0, 60).0, want, "{v:?}");
    }
    // v6.1 evicts the older type first whatever the refaults.
    let mut s = mg(V1);
    s.memcgs[0].lruvec.lrugen.min_seq = [0, 1];
    ctrl(&mut s, ANON, 0, 900, 1000);
    assert_eq!(s.get_type_to_scan(0, 60).0, ANON);
}

#[test]
fn tier_protection_follows_refaults_over_gains() {
    for v in [V2, V1] {
        let mut s = mg(v);
        assert_eq!(s.get_tier_idx(0, FILE), 3, "no history: nothing protected");
        // Tier 0 refaults 10 %, tier 2 80 %: tiers above 1 protected.
        ctrl(&mut s, FILE, 0, 100, 1000);
        ctrl(&mut s, FILE, 2, 800, 1000);
        assert_eq!(s.get_tier_idx(0, FILE), 1, "{v:?}");
        // Tier 1 refaulting at 1.6x tier 0: protected under v6.1's 1:2
        // gains? No: 160·1064·1 <= 101·1000·2 → not worse. v6.14 (2:3):
        // 160·1064·2 <= 101·1000·3 → false → protected.
        ctrl(&mut s, FILE, 1, 160, 1000);
        let want = if v == V2 { 0 } else { 1 };
        assert_eq!(s.get_tier_idx(0, FILE), want, "{v:?}");
    }
}

#[test]
fn moving_average_halves_history_when_min_seq_advances() {
    let mut s = mg(V2);
    ctrl(&mut s, FILE, 0, 100, 300);
    s.memcgs[0].lruvec.lrugen.protected[FILE][0] = 100;
    s.memcgs[0].lruvec.lrugen.avg_refaulted[FILE][0] = 50;
    assert!(s.try_to_inc_min_seq(0, 60)); // empty lists: both advance
    let lg = s.lru_gen_folio(0);
    assert_eq!(lg.avg_refaulted[FILE][0], 75);
    assert_eq!(lg.avg_total[FILE][0], 200);
    assert_eq!((lg.refaulted[FILE][0], lg.evicted[FILE][0]), (0, 0));
}

#[test]
fn recent_refault_is_activated_and_an_old_one_is_not() {
    for v in [V2, V1, V12] {
        let mut s = mg(v);
        let t = s.add_task("t");
        let file = s.add_file("f", 100).unwrap();
        let map = s.mmap_file(t, file, 0, 100, false).unwrap();
        s.open(file, t).unwrap();
        s.fadvise(file, Advice::Random).unwrap();
        read(&mut s, file, 9); // oldest generation (v6.12: min_seq + 1)
        let seq = seq_of(&s, file_folio(&s, file, 9));
        s.lru_gen_run_eviction(0, seq, Some(60), None).unwrap();
        assert!(slot_folio(s.files[file as usize].slot(9)).is_none());
        assert_eq!(s.lru_gen_folio(0).evicted[FILE][0], 1);
        // Refault through the mapping, in a fault: recent.
        touch(&mut s, map, 9);
        let f = file_folio(&s, file, 9);
        assert_eq!(s.vm.workingset_refault_file, 1, "{v:?}");
        assert_eq!(s.lru_gen_folio(0).refaulted[FILE][0], 1, "{v:?}");
        match v {
            V12 => {
                // 6.12.107 lru_gen_refault(): the token's seq is min_seq
                // (recent): WORKINGSET_ACTIVATE_FILE; in a fault, refs
                // saturated and PG_workingset set, WORKINGSET_RESTORE_FILE.
                // filemap_add_folio() then calls folio_add_lru(), which in a
                // fault sets PG_active: lru_gen_add_folio() puts it in max_seq
                // and (6.12.107, without "reset page lru tier bits when
                // activating") keeps the refs.
                let w = (s.vm.workingset_activate_file, s.vm.workingset_restore_file);
                assert_eq!(w, (1, 1));
                assert!(s.folios[f].test(flags::WORKINGSET));
                assert_eq!(folio_refs(&s.folios[f]), LRU_REFS_MASK);
                assert_eq!(seq_of(&s, f), 3);
            }
            V2 => {
                assert_eq!(s.vm.workingset_activate_file, 1);
                assert_eq!(seq_of(&s, f), 2, "active: max_seq - 1");
            }
            V1 => {
                // In a fault: PG_workingset restored; PG_active → max_seq.
                assert_eq!(s.vm.workingset_restore_file, 1);
                assert!(s.folios[f].test(flags::WORKINGSET));
                assert_eq!(seq_of(&s, f), 3);
            }
        }
        // Evict again, then age far beyond the window: not recent.
        let (mut s2, _, file2) = setup(v);
        read(&mut s2, file2, 9);
        let seq = seq_of(&s2, file_folio(&s2, file2, 9));
        s2.lru_gen_run_eviction(0, seq, Some(60), None).unwrap();
        for _ in 0..5 {
            age(&mut s2);
        }
        read(&mut s2, file2, 9);
        assert_eq!(s2.lru_gen_folio(0).refaulted[FILE], [0; 4], "{v:?}");
        // v6.14 and v6.12 count every refault (6.12.107: WORKINGSET_REFAULT
        // before `if (!recent)`); v6.1 only recent ones.
        assert_eq!(s2.vm.workingset_refault_file, (v != V1) as u64, "{v:?}");
    }
}

#[test]
fn eviction_protects_a_tier_above_tier_idx() {
    for v in [V2, V1] {
        let (mut s, _, file) = setup(v);
        // Page 1 read 3 times (tier 2), page 2 once (tier 0).
        for _ in 0..3 {
            read(&mut s, file, 1);
            read(&mut s, file, 2);
        }
        read(&mut s, file, 3);
        // Make tier 2 refault far more than tier 0: tier_idx 1.
        ctrl(&mut s, FILE, 0, 100, 1000);
        ctrl(&mut s, FILE, 2, 800, 1000);
        assert_eq!(s.get_tier_idx(0, FILE), 1);
        s.lru_gen_run_eviction(0, 0, Some(1), None).unwrap();
        let f1 = file_folio(&s, file, 1);
        assert_eq!(seq_of(&s, f1), 1, "{v:?}: protected to min_seq + 1");
        assert!(slot_folio(s.files[file as usize].slot(3)).is_none());
        let p = s.lru_gen_folio(0).avg_total[FILE];
        // The protected count went into the average when min_seq moved on.
        assert!(p[2] > 0 || p[1] > 0);
        assert_eq!(s.lru_gen.stats.tier_protected, 2, "pages 1 and 2 (tier 2)");
    }
}

#[test]
fn young_mapped_folio_at_eviction_is_kept_in_v6_14_and_activated_in_v6_1() {
    // A young PTE found by eviction's rmap walk (look-around). v6.14: the
    // first sighting is KEEP (lru_gen_set_refs' second chance), put back
    // young because its insertion seq would be min_seq; v6.1: ACTIVATE
    // into max_seq. v6.12: KEEP (the classic folio_check_references(), with
    // PG_referenced cleared by isolate_folio()), and the putback of a
    // mapped rejected folio sets PG_active: max_seq, not counted.
    for v in [V2, V1, V12] {
        let mut s = mg(v);
        s.lru_gen.enabled = LRU_GEN_CORE; // no page-table walk: the PTE stays young
        let t = s.add_task("t");
        let file = s.add_file("f", 100).unwrap();
        let map = s.mmap_file(t, file, 0, 1, false).unwrap();
        touch(&mut s, map, 0); // a fault: max_seq − 1 (v6.1: max_seq)
        let f = file_folio(&s, file, 0);
        age(&mut s);
        age(&mut s);
        age(&mut s);
        let lg = s.lru_gen_folio(0);
        assert_eq!((lg.max_seq, lg.min_seq[FILE]), (6, seq_of(&s, f)), "{v:?}");
        let min = lg.min_seq[FILE];
        s.lru_gen_run_eviction(0, min, Some(60), Some(1)).unwrap();
        assert!(s.folios.is_live(f));
        match v {
            V2 => {
                assert_eq!(s.vm.pgactivate, 0, "KEEP");
                assert_eq!(seq_of(&s, f), 5, "max_seq − 1");
            }
            V1 => {
                assert_eq!(s.vm.pgactivate, 1, "ACTIVATE");
                assert_eq!(seq_of(&s, f), 6, "max_seq");
            }
            V12 => {
                assert_eq!(s.vm.pgactivate, 0, "KEEP");
                assert_eq!(seq_of(&s, f), 6, "max_seq");
                assert!(!s.folios[f].test(flags::REFERENCED), "putback clears it");
            }
        }
        s.check_invariants().unwrap();
    }
}

#[test]
fn look_around_promotes_young_neighbours() {
    // Kswapd has a walker: neighbours' generations are updated in place.
    let (mut s, vma, _) = setup(V1);
    for i in 0..10 {
        touch(&mut s, vma, i);
    }
    let f0 = anon_folio(&s, vma, 0);
    let f5 = anon_folio(&s, vma, 5);
    // Age the neighbours out of max_seq without clearing their young bits
    // (the walk is off: lru_gen/enabled without MM_WALK).
    s.lru_gen.enabled = LRU_GEN_CORE;
    age(&mut s);
    age(&mut s);
    assert_eq!(seq_of(&s, f5), 3);
    // 6.1's kswapd passes its walker's can_swap (set by its last walk, here
    // none: as after one with swap) to get_pfn_folio().
    s.lru_gen.kswapd_walk_can_swap = true;
    let mut sc = ScanControl::new(Reclaimer::Kswapd, 32, 0);
    let r = s.lru_gen_check_references(f0, &mut sc);
    assert_eq!(r, crate::reclaim::vmscan::FolioReferences::Activate);
    assert_eq!(seq_of(&s, f5), 5, "neighbour promoted to max_seq");
    assert_eq!(
        s.lru_gen.stats.look_around_young, 10,
        "v6.1 counts the target"
    );
    assert_eq!(
        sc.prof.ptes_walked, 64,
        "64 PTEs of the 100-page VMA's table"
    );
    assert_eq!(sc.prof.rmap_walks, 1);
}

#[test]
fn min_ttl_kills_instead_of_evicting_a_young_working_set() {
    for v in [V2, V1] {
        for (ttl, want_kill) in [(0, false), (10_000, true)] {
            let mut c = cfg(v, 4096, Some(8192));
            c.policy.min_ttl_ms = ttl;
            let mut s = Sim::new(c).unwrap();
            let t = s.add_task("t");
            let vma = s.mmap_anon(t, 6000).unwrap();
            for i in 0..6000 {
                s.step(&Event::Access {
                    vma,
                    index: i,
                    write: true,
                });
            }
            let r = s.finish();
            assert_eq!(
                s.lru_gen.stats.min_ttl_oom > 0,
                want_kill,
                "{v:?} ttl {ttl}"
            );
            assert_eq!(r.vmstat.oom_kill > 0, want_kill, "{v:?} ttl {ttl}");
        }
    }
}

#[test]
fn core_bit_clear_is_the_classic_lru() {
    let mut c = cfg(V2, 4096, None);
    c.policy.lru_gen_enabled = 6;
    let s = Sim::new(c).unwrap();
    assert!(matches!(s.policy, Policy::Classic(_)));
}

#[test]
fn bad_settings_name_the_field() {
    let mut c = cfg(V2, 4096, None);
    c.policy.lru_gen_enabled = 8;
    let e: ConfigError = c.validate().unwrap_err();
    assert_eq!(e.field, "machine.policy.lru_gen_enabled");
    assert!(e.message.contains("[0, 0x7]"), "{}", e.message);
    let mut c = cfg(V2, 4096, None);
    c.policy.min_ttl_ms = 1 << 33;
    assert_eq!(c.validate().unwrap_err().field, "machine.policy.min_ttl_ms");
    let e = "v6.2".parse::<MglruVersion>().unwrap_err();
    assert!(
        e.contains("allowed: v6.1 (alias 6.1), v6.12 (alias 6.12), v6.14 (alias 6.14)"),
        "{e}"
    );
}

#[test]
fn debugfs_commands_check_their_arguments() {
    let mut s = mg(V2);
    assert!(s
        .lru_gen_run_aging(0, 4, None, true)
        .unwrap_err()
        .contains("EINVAL"));
    assert!(s
        .lru_gen_run_aging(0, 3, Some(202), true)
        .unwrap_err()
        .contains("[0, 201]"));
    s.lru_gen_run_aging(0, 3, None, true).unwrap();
    // An older seq still ages from the current max_seq (run_aging).
    s.lru_gen_run_aging(0, 3, None, false).unwrap();
    assert_eq!(s.lru_gen_folio(0).max_seq, 5);
    assert!(s
        .lru_gen_run_eviction(0, 4, None, None)
        .unwrap_err()
        .contains("EINVAL"));
    assert_eq!(s.lru_gen_run_eviction(0, 3, None, None).unwrap(), 0);
}

#[test]
fn swappiness_decides_the_evictable_types() {
    for v in [V2, V1] {
        let (mut s, vma, file) = setup(v);
        touch(&mut s, vma, 0);
        read(&mut s, file, 0);
        // Both pages in the oldest generation.
        let a = anon_folio(&s, vma, 0);
        s.lru_gen_del_folio(a, true);
        s.lru_gen_add_folio_at_for_test(a, 0);
        let fpage = file_folio(&s, file, 0);
        // Make anon the PID controller's choice.
        ctrl(&mut s, FILE, 0, 900, 1000);
        assert_eq!(s.get_type_to_scan(0, 60).0, ANON, "{v:?}");
        // swappiness 0: file only (isolate_folios never tries anon).
        let mut sc = ScanControl::new(Reclaimer::Direct, 32, 0);
        s.scratch.clear();
        let (ty, n) = s.isolate_folios_for_test(0, 0, &mut sc);
        assert_eq!((ty, n, s.scratch.clone()), (FILE, 1, vec![fpage]), "{v:?}");
        s.scratch.clear();
        // 201 (memory.reclaim swappiness=max): anon only.
        let (ty, n) = s.isolate_folios_for_test(0, SWAPPINESS_ANON_ONLY, &mut sc);
        assert_eq!((ty, n, s.scratch.clone()), (ANON, 1, vec![a]), "{v:?}");
        s.scratch.clear();
        // 200: anon first when both types are evictable (v6.1: same generation).
        assert_eq!(s.get_type_to_scan(0, 200).0, ANON);
    }
}

#[test]
fn dirty_file_folio_at_eviction_waits_in_min_seq_plus_one() {
    // Counted for the flusher wake-up by 6.14 only (tests/dirty.rs).
    for (v, counted) in [(V2, (1, 1)), (V1, (0, 0))] {
        let (mut s, _, file) = setup(v);
        s.step(&Event::FileWrite {
            file,
            index: 3,
            pages: 1,
        });
        let f = file_folio(&s, file, 3);
        assert_eq!(seq_of(&s, f), 0, "{v:?}: a buffered write is not a fault");
        assert!(s.folios[f].test(flags::DIRTY));
        let mut sc = ScanControl::new(Reclaimer::Kswapd, 32, 0);
        s.scratch.clear();
        let scanned = s.isolate_folios_for_test(0, 0, &mut sc).1;
        // Sorted, not isolated: nothing isolated and the list walked out.
        assert_eq!(scanned, 0);
        assert!(s.scratch.is_empty());
        assert_eq!(seq_of(&s, f), 1, "{v:?}");
        assert!(s.folios[f].test(flags::RECLAIM));
        assert_eq!((sc.nr_file_taken, sc.nr_unqueued_dirty), counted);
        assert_eq!(s.vm.pgrefill, 1, "sorted folios count as PGREFILL");
    }
}

#[test]
fn writeback_rotation_goes_to_the_tail_of_the_oldest_generation() {
    let (mut s, _, file) = setup(V2);
    read(&mut s, file, 1);
    read(&mut s, file, 2);
    let f1 = file_folio(&s, file, 1);
    let f2 = file_folio(&s, file, 2);
    // Move page 1 to seq 2, then rotate it as folio_end_writeback would.
    s.lru_gen_del_folio(f1, true);
    s.lru_gen_add_folio_at_for_test(f1, 2);
    s.lru_gen_rotate_reclaimable(f1);
    assert_eq!(seq_of(&s, f1), 0);
    let lg = s.lru_gen_folio(0);
    assert_eq!(lg.lists[0][FILE].tail, f1, "at the tail: evicted first");
    assert_eq!(lg.lists[0][FILE].head, f2);
    assert_eq!(s.vm.pgrotated, 1);
    s.check_invariants().unwrap();
}

#[test]
fn the_two_youngest_generations_count_as_active() {
    let (mut s, vma, _) = setup(V2);
    s.lru_gen.enabled = LRU_GEN_CORE; // no walk: nothing is promoted
    touch(&mut s, vma, 0); // seq 2 of max_seq 3: active
    let r = s.memcg_report(0);
    assert_eq!((r.active_anon, r.inactive_anon), (1, 0));
    age(&mut s); // max_seq 4: seq 2 is now inactive
    let r = s.memcg_report(0);
    assert_eq!((r.active_anon, r.inactive_anon), (0, 1));
    // Taken off the list outside reclaim, a young folio is marked active
    // (to be re-added young); an old one is not.
    let f = anon_folio(&s, vma, 0);
    s.lru_gen_del_folio(f, false);
    assert!(!s.folios[f].test(flags::ACTIVE));
    s.lru_gen_add_folio_at_for_test(f, 4);
    s.lru_gen_del_folio(f, false);
    assert!(s.folios[f].test(flags::ACTIVE));
    s.lru_gen_add_folio(f, false);
    assert_eq!(seq_of(&s, f), 3, "active → max_seq − 1");
}

#[test]
fn debugfs_eviction_counts_tier_evictions_and_no_global_pgsteal() {
    // `-` runs as cgroup-style reclaim: the group's counters, not /proc/vmstat's.
    let (mut s, _, file) = setup(V2);
    for i in 0..5 {
        read(&mut s, file, i);
    }
    let r = s.lru_gen_run_eviction(0, 0, Some(0), None).unwrap();
    assert_eq!(r, 5);
    assert_eq!(
        s.vm.pgsteal_direct + s.vm.pgsteal_kswapd,
        0,
        "memcg-type command"
    );
    assert_eq!(s.lru_gen_folio(0).evicted[FILE][0], 5);
    assert_eq!(s.memcgs[0].stat.pgsteal_direct, 5);
}

#[test]
fn memcg_lru_rotates_aged_groups_young_and_advances_its_seq() {
    let mut s = mg(V2);
    let a = s.add_memcg(0, "a").unwrap();
    s.memcg_lru_sync();
    let ml = &s.lru_gen.memcg_lru;
    assert_eq!(
        (ml.seq, ml.nr_memcgs),
        (0, [2, 0, 0]),
        "both online in the old gen"
    );
    s.lru_gen_rotate_memcg(0, MemcgLruOp::Young);
    assert_eq!(s.lru_gen.memcg_lru.nr_memcgs, [1, 1, 0]);
    assert_eq!(s.lru_gen.memcg_lru.seq, 0);
    s.lru_gen_rotate_memcg(a, MemcgLruOp::Tail);
    let l = s.memcgs[a as usize].lruvec.lrugen.memcg_lru;
    assert_eq!((l.gen, l.seg), (0, MemcgSeg::Tail));
    // The last group of the old generation leaves: seq advances, the young
    // generation becomes the old one.
    s.lru_gen_rotate_memcg(a, MemcgLruOp::Young);
    let ml = &s.lru_gen.memcg_lru;
    assert_eq!((ml.seq, ml.nr_memcgs, ml.old_gen()), (1, [0, 2, 0], 1));
    let bins: usize = ml.fifo[1].iter().map(Vec::len).sum();
    assert_eq!(bins, 2);
}

#[test]
fn global_reclaim_takes_groups_below_memory_low_last() {
    // Group /a below memory.low, /b not: shrink_one gives /a TAIL first
    // (no reclaim from it) while /b is reclaimed.
    let mut s = Sim::new(cfg(V2, 1 << 16, None)).unwrap();
    let a = s.add_memcg(0, "a").unwrap();
    let b = s.add_memcg(0, "b").unwrap();
    s.set_memcg_knob(a, crate::memcg::MemcgKnob::Low, 1 << 20)
        .unwrap();
    for (g, name) in [(a, "ta"), (b, "tb")] {
        let t = s.add_task(name);
        s.attach_task(t, g).unwrap();
        let f = s.add_file(name, 200).unwrap();
        s.open(f, t).unwrap();
        s.fadvise(f, Advice::Random).unwrap();
        for i in 0..200 {
            read(&mut s, f, i);
        }
    }
    let mut sc = ScanControl::new(Reclaimer::Direct, 32, 0);
    sc.priority = 1;
    s.lru_gen_shrink_node(&mut sc);
    assert!(s.memcgs[b as usize].usage < 200, "b reclaimed");
    assert_eq!(s.memcgs[a as usize].usage, 200, "a spared");
    assert_eq!(
        s.memcgs[a as usize].lruvec.lrugen.memcg_lru.seg,
        MemcgSeg::Tail
    );
    assert_eq!(s.memcgs[a as usize].stat.low, 0);
}

#[test]
fn toggling_the_core_bit_moves_folios_between_classic_lists_and_generations() {
    use crate::mem::folio::LruList;
    for v in [V2, V1] {
        let (mut s, vma, file) = setup(v);
        touch(&mut s, vma, 0); // young generation
        read(&mut s, file, 1); // oldest generation
        let (a, f) = (anon_folio(&s, vma, 0), file_folio(&s, file, 1));
        // Off: drain_evictable. The young anon folio goes to the active list.
        assert_eq!(s.lru_gen_set_enabled(6), 2);
        assert!(matches!(s.policy, Policy::Classic(_)));
        assert_eq!(
            LruList::from_index(s.folios[a].lru),
            LruList::ActiveAnon,
            "{v:?}"
        );
        assert_eq!(LruList::from_index(s.folios[f].lru), LruList::InactiveFile);
        s.check_invariants().unwrap();
        // On: fill_evictable. Active → young; inactive file → oldest.
        assert_eq!(s.lru_gen_set_enabled(7), 2);
        assert_eq!(s.policy, Policy::Mglru(v));
        let young = if v == V2 { 2 } else { 3 };
        assert_eq!(seq_of(&s, a), young, "{v:?}");
        assert_eq!(seq_of(&s, f), 0);
        s.check_invariants().unwrap();
        // The MM_WALK bit alone changes no lists.
        assert_eq!(s.lru_gen_set_enabled(5), 0);
        assert_eq!(s.lru_gen.enabled, 5);
    }
}

#[test]
fn page_table_walk_follows_the_bloom_filter_of_hot_tables() {
    let mut s = mg(V2);
    let t = s.add_task("t");
    let vma = s.mmap_anon(t, 2048).unwrap(); // 4 PTE tables
    for i in 0..2048 {
        touch(&mut s, vma, i);
    }
    // Only table 0 (pages 0..512) is young again: 100 pages ≥ 512/8.
    age_no_force(&mut s); // first round: no filter yet, every table walked
    let st = s.lru_gen.stats;
    assert_eq!((st.walks, st.leaf_total, st.tables_skipped), (1, 2048, 0));
    assert_eq!(st.tables_added, 4, "all four were young (first touch)");
    for i in 0..100 {
        touch(&mut s, vma, i);
    }
    age_no_force(&mut s); // every table was hot last round: all walked again
    let st = s.lru_gen.stats;
    assert_eq!(
        (st.leaf_total, st.leaf_young, st.tables_added),
        (4096, 2148, 5)
    );
    for i in 0..100 {
        touch(&mut s, vma, i);
    }
    age_no_force(&mut s); // only table 0 stayed hot: three tables skipped
    let st = s.lru_gen.stats;
    assert_eq!((st.leaf_total, st.tables_skipped), (4096 + 512, 3));
    // force_scan walks everything regardless.
    age(&mut s);
    assert_eq!(s.lru_gen.stats.leaf_total, 4096 + 512 + 2048);
}

fn age_no_force(s: &mut Sim) {
    let max = s.lru_gen_folio(0).max_seq;
    s.lru_gen_run_aging(0, max, Some(100), false).unwrap();
}

#[test]
fn look_around_without_a_walker_activates_after_two_sightings_in_v6_14() {
    // Direct reclaim has no walker: a young neighbour first gets
    // PG_referenced, and at its second sighting folio_activate() re-adds it
    // young (max_seq, PG_workingset).
    let (mut s, vma, _) = setup(V2);
    s.lru_gen.enabled = LRU_GEN_CORE;
    for i in 0..4 {
        touch(&mut s, vma, i);
    }
    let (f0, f1) = (anon_folio(&s, vma, 0), anon_folio(&s, vma, 1));
    age(&mut s);
    age(&mut s); // f1 at seq 2 of max_seq 5
    let mut sc = ScanControl::new(Reclaimer::Direct, 32, 0);
    s.lru_gen_check_references(f0, &mut sc);
    assert_eq!(seq_of(&s, f1), 2, "first sighting: PG_referenced only");
    assert!(s.folios[f1].test(flags::REFERENCED));
    touch(&mut s, vma, 0);
    touch(&mut s, vma, 1);
    s.lru_gen_check_references(f0, &mut sc);
    assert_eq!(seq_of(&s, f1), 5, "second: activated into max_seq");
    assert!(s.folios[f1].test(flags::WORKINGSET));
    assert_eq!(s.vm.pgactivate, 1);
    // lru_activate() counts the group's event too (__count_memcg_events).
    assert_eq!(s.memcgs[0].stat.pgactivate, 1);
    s.check_invariants().unwrap();
}

/// A v6.1 machine (`mglru_retry_written_back` = `retry`) without the page-table
/// walk, whose file folio `f` is mapped with a young PTE, sits in the oldest
/// file generation after three agings, and has PG_referenced, PG_workingset
/// and one count in the refs bits from three fd reads.
fn v6_1_rejected_mapped_folio(retry: bool) -> (Sim, FolioId) {
    let mut c = cfg(V1, 1 << 16, Some(1 << 14));
    c.policy.mglru_retry_written_back = retry;
    let mut s = Sim::new(c).unwrap();
    s.lru_gen.enabled = LRU_GEN_CORE; // no page-table walk: the PTE stays young
    let t = s.add_task("t");
    let file = s.add_file("f", 100).unwrap();
    s.open(file, t).unwrap();
    s.fadvise(file, Advice::Random).unwrap();
    let map = s.mmap_file(t, file, 0, 1, false).unwrap();
    touch(&mut s, map, 0);
    let f = file_folio(&s, file, 0);
    age(&mut s);
    age(&mut s);
    age(&mut s);
    // Three fd reads: PG_referenced, PG_workingset, then refs 1.
    for _ in 0..3 {
        read(&mut s, file, 0);
        read(&mut s, file, 1);
    }
    assert!(s.folios[f].test(flags::REFERENCED | flags::WORKINGSET));
    assert_eq!(
        folio_lru_refs(V1, &s.folios[f]),
        2,
        "one count in the refs bits plus PG_workingset"
    );
    (s, f)
}

/// Runs one eviction pass over the oldest file generation, which holds `f`,
/// and checks that `f` was rejected: still live, activated because its PTE
/// was young (pgactivate 1), and moved to max_seq.
fn evict_the_oldest_file_generation_keeping(s: &mut Sim, f: FolioId) {
    let min = s.lru_gen_folio(0).min_seq[FILE];
    assert_eq!(seq_of(s, f), min);
    s.lru_gen_run_eviction(0, min, Some(60), Some(1)).unwrap();
    assert!(s.folios.is_live(f));
    assert_eq!(s.vm.pgactivate, 1, "ACTIVATE: the PTE was young");
    assert_eq!(seq_of(s, f), s.lru_gen_folio(0).max_seq);
}

#[test]
fn v6_1_puts_a_rejected_folio_back_with_its_refs_and_no_retry() {
    // v6.1 evict_folios(): every rejected folio not waiting for writeback is
    // set active (→ max_seq) and keeps its refs and PG_workingset; one with
    // PG_workingset gets PG_referenced back ("restore LRU_REFS_FLAGS
    // cleared by isolate_folio()"). The clearing of those bits and the
    // retry of written-back folios (359a5e1416ca, in Debian's 6.1.192
    // source) are `mglru_retry_written_back`, off here.
    let (mut s, f) = v6_1_rejected_mapped_folio(false);
    let refs = folio_lru_refs(V1, &s.folios[f]);
    evict_the_oldest_file_generation_keeping(&mut s, f);
    let fo = &s.folios[f];
    assert!(fo.test(flags::WORKINGSET) && fo.test(flags::REFERENCED));
    assert_eq!(folio_lru_refs(V1, fo), refs, "refs kept");
    s.check_invariants().unwrap();
}

#[test]
fn order_base_2_matches_the_kernel() {
    assert_eq!(
        [0, 1, 2, 3, 4, 5, 8, 9].map(order_base_2),
        [0, 0, 1, 2, 2, 3, 3, 4]
    );
}

#[test]
fn ctrl_err_needs_64_refaults_and_compares_rates_over_gains() {
    let sp = CtrlPos {
        refaulted: 100,
        total: 1000,
        gain: 1,
    };
    // Too few refaults: positive whatever the rate.
    assert!(positive_ctrl_err(
        sp,
        CtrlPos {
            refaulted: 63,
            total: 64,
            gain: 1
        }
    ));
    // 64/1000 vs 101/1064: not worse.
    assert!(positive_ctrl_err(
        sp,
        CtrlPos {
            refaulted: 64,
            total: 1000,
            gain: 1
        }
    ));
    // 500/1000 vs 101/1064: worse.
    assert!(!positive_ctrl_err(
        sp,
        CtrlPos {
            refaulted: 500,
            total: 1000,
            gain: 1
        }
    ));
    // ...unless its gain is five times larger: 500·1064·1 <= 101·1000·5.
    assert!(!positive_ctrl_err(
        sp,
        CtrlPos {
            refaulted: 500,
            total: 1000,
            gain: 5
        }
    ));
    assert!(positive_ctrl_err(
        sp,
        CtrlPos {
            refaulted: 500,
            total: 1000,
            gain: 6
        }
    ));
}

#[test]
fn bloom_filter_holds_what_was_inserted() {
    let mut b = BloomFilter::new();
    assert!(!b.test(3, 7));
    b.insert(3, 7);
    assert!(b.test(3, 7));
    assert!(!b.test(3, 8));
}

#[test]
fn scan_folios_emits_lru_isolate_with_the_kernels_arguments() {
    // v6.12 scan_folios() ends with trace_mm_vmscan_lru_isolate(reclaim_idx,
    // order, MAX_LRU_BATCH, scanned, skipped, isolated, type ? LRU_INACTIVE_FILE
    // : LRU_INACTIVE_ANON): nr_requested is the constant, nr_scanned counts the
    // sorted (protected) folios too, nr_taken only the isolated ones.
    use crate::tracepoint::{TpEvent, TracepointConfig, Tracer};
    for v in [V2, V1] {
        let (mut s, _, file) = setup(v);
        for _ in 0..3 {
            read(&mut s, file, 1);
            read(&mut s, file, 2);
        }
        read(&mut s, file, 3);
        ctrl(&mut s, FILE, 0, 100, 1000);
        ctrl(&mut s, FILE, 2, 800, 1000);
        s.tp = Tracer::new(&TracepointConfig {
            events: vec!["vmscan:*".into()],
            max_events: 100,
            ..Default::default()
        });
        s.lru_gen_run_eviction(0, 0, Some(1), None).unwrap();
        let tp = s.tp.take().unwrap();
        let lines: Vec<String> = tp
            .records
            .iter()
            .filter(|r| matches!(r.event, TpEvent::LruIsolate { .. }))
            .map(|r| r.event.to_string())
            .collect();
        assert_eq!(
            lines[0],
            "classzone=2 order=0 nr_requested=4096 nr_scanned=3 nr_skipped=0 nr_taken=1 \
             lru=inactive_file",
            "{v:?}: pages 1 and 2 sorted (tier 2 above tier_idx 1), page 3 isolated"
        );
        // The batch's shrink_inactive follows its isolate, with what was isolated.
        let kinds: Vec<&str> = tp
            .records
            .iter()
            .map(|r| match r.event {
                TpEvent::LruIsolate { .. } => "isolate",
                TpEvent::LruShrinkInactive { .. } => "shrink_inactive",
                _ => "other",
            })
            .filter(|k| *k != "other")
            .collect();
        assert_eq!(kinds[..2], ["isolate", "shrink_inactive"], "{v:?}");
    }
}

/// A v6.1 machine with `mglru_look_around_activate` = `on`: see
/// [`young_neighbours_in`].
fn v6_1_young_neighbours(on: bool, n: u32) -> (Sim, u32) {
    let mut c = cfg(V1, 1 << 16, Some(1 << 14));
    c.policy.mglru_look_around_activate = on;
    young_neighbours_in(c, n)
}

/// [`young_neighbours_in`] of the test machine of version `v`.
fn young_neighbours(v: MglruVersion, n: u32) -> (Sim, u32) {
    young_neighbours_in(cfg(v, 1 << 16, Some(1 << 14)), n)
}

/// A machine of config `c` (v6.1 or v6.12: a fault enters max_seq) without
/// the page-table walk, whose anon VMA of 100 pages has pages `0..n`
/// faulted in (young PTEs) and aged twice, so that they sit in seq 3 of
/// max_seq 5 (the young bits stay set). Returns it with the VMA.
fn young_neighbours_in(c: MachineConfig, n: u32) -> (Sim, u32) {
    let mut s = Sim::new(c).unwrap();
    let t = s.add_task("t");
    let vma = s.mmap_anon(t, 100).unwrap();
    for i in 0..n {
        touch(&mut s, vma, i);
    }
    s.lru_gen.enabled = LRU_GEN_CORE;
    age(&mut s);
    age(&mut s);
    assert_eq!(s.lru_gen_folio(0).max_seq, 5);
    (s, vma)
}

/// The MGLRU list folio `f` is on, as a seq (its list, not its generation
/// field, which `folio_update_gen()` rewrites without moving it).
fn list_seq_of(s: &Sim, f: FolioId) -> u64 {
    let tag = s.folios[f].lru;
    assert!(is_lru_gen_tag(tag), "on an MGLRU list");
    let gen = ((tag - LRU_GEN_TAG) / 2) as usize;
    let lg = s.lru_gen_folio(0);
    (lg.max_seq.saturating_sub(3)..=lg.max_seq)
        .find(|&q| lru_gen_from_seq(q) == gen)
        .unwrap()
}

mod abort_v6_1;
mod debugfs_walk;
mod dirty;
mod v6_12;
mod variants;
