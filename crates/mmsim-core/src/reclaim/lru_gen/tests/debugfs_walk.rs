//! Rule tests of the walker a debugfs write runs its commands with
//! (`lru_gen_seq_write()`: `set_mm_walk()` before the first command,
//! `clear_mm_walk()` after the last; 6.1.176 and 6.12.107 mm/vmscan.c).

use super::super::debugfs::DEBUGFS_WALK;
use super::*;

/// [`young_neighbours`] of version `v` with the nine neighbours of page 0
/// moved to seq 4 (still young), so that the debugfs eviction of seq 3
/// isolates page 0 alone; then that eviction, with the write's walker
/// `walk`. Returns the machine and the VMA.
fn evict_seq_3(v: MglruVersion, walk: Option<bool>) -> (Sim, u32) {
    let (mut s, vma) = young_neighbours(v, 10);
    for i in 1..10 {
        let f = anon_folio(&s, vma, i);
        s.lru_gen_del_folio(f, true);
        s.lru_gen_add_folio_at_for_test(f, 4);
    }
    let mut w = walk;
    s.lru_gen_run_eviction_with(0, 3, Some(60), None, &mut w)
        .unwrap();
    (s, vma)
}

/// (generation field as a seq, list as a seq, PTE young) of each neighbour.
fn neighbours(s: &Sim, vma: u32) -> Vec<(u64, u64, bool)> {
    (1..10)
        .map(|i| {
            let f = anon_folio(s, vma, i);
            let young = s.vmas[vma as usize].pte(i) & PTE_YOUNG != 0;
            (seq_of(s, f), list_seq_of(s, f), young)
        })
        .collect()
}

#[test]
fn debugfs_eviction_runs_with_the_writes_walker() {
    // `- 0 0 3 60`: page 0 (seq 3) is isolated alone; its look-around finds
    // the nine young neighbours in seq 4. With the write's walker (the
    // model now, also through the public call): 6.12 rewrites their
    // generation to max_seq (folio_update_gen(): gen field 5, still on seq
    // 4's list, young bits cleared), no pgactivate; 6.1's walker has the
    // zeroed `walk->can_swap` (no aging in the write), so get_pfn_folio()
    // skips the anon neighbours: untouched, still young. Without a walker
    // (the model before): 6.12 folio_activate()s them (9 pgactivate, moved
    // to max_seq's list); 6.1 rewrites their generation and clears their
    // young bits.
    let before_6_1 = vec![(5, 4, false); 9];
    let after_6_1 = vec![(4, 4, true); 9];
    let before_6_12 = vec![(5, 5, false); 9];
    let after_6_12 = vec![(5, 4, false); 9];
    for (v, before, after, acts) in [
        (V1, before_6_1, after_6_1, (1, 1)),
        (V12, before_6_12, after_6_12, (9, 0)),
    ] {
        let (s, vma) = evict_seq_3(v, None);
        assert_eq!(
            (neighbours(&s, vma), s.vm.pgactivate),
            (before, acts.0),
            "{v:?}"
        );
        let (s, vma) = evict_seq_3(v, DEBUGFS_WALK);
        assert_eq!(
            (neighbours(&s, vma), s.vm.pgactivate),
            (after.clone(), acts.1),
            "{v:?}"
        );
        let (mut s, vma) = young_neighbours(v, 10);
        for i in 1..10 {
            let f = anon_folio(&s, vma, i);
            s.lru_gen_del_folio(f, true);
            s.lru_gen_add_folio_at_for_test(f, 4);
        }
        s.lru_gen_run_eviction(0, 3, Some(60), None).unwrap();
        assert_eq!(
            (neighbours(&s, vma), s.vm.pgactivate),
            (after, acts.1),
            "{v:?}"
        );
        assert_eq!(s.lru_gen_folio(0).min_seq, [4, 4], "{v:?}");
        s.check_invariants().unwrap();
    }
}
