//! A charge follows its mask (v6.12 mm/memcontrol.c `try_charge_memcg`):
//! `__GFP_NORETRY` (readahead's `readahead_gfp_mask`) fails after one
//! reclaim and the stock drain, without the OOM killer; `__GFP_RETRY_MAYFAIL`
//! after the retries; readahead's batch ends at a failed charge
//! (mm/readahead.c `page_cache_ra_unbounded`) and the reader's own page is
//! then charged by `filemap_create_folio` (mapping gfp: retries, OOM).
//! Reclaim and compaction without `__GFP_FS` (readahead's nofs scope):
//! `may_enter_fs` in `shrink_folio_list` (mm/vmscan.c) and the "only
//! anonymous pages in GFP_NOFS context" test of `isolate_migratepages_block`
//! (mm/compaction.c).

use super::*;
use crate::gfp::{Gfp, __GFP_RETRY_MAYFAIL, GFP_KERNEL, GFP_READAHEAD, GFP_USER_FOLIO};
use crate::memcg::MemcgId;
use crate::stats::item::MEMCG_OOM;

/// [`full_group_of`] under the cost policy (v6.12).
fn full_group() -> (Sim, MemcgId, u32, u32) {
    full_group_of(PolicyName::Cost)
}

/// An 8192-page machine of `policy` without swap; group `g` (`memory.max`
/// 100 pages) holds a hog task whose 100 anonymous pages fill it (nothing
/// reclaimable) and a reader task; the per-CPU stock is drained, so usage
/// is exactly 100. Returns the machine, the group, the hog and the reader.
pub(super) fn full_group_of(policy: PolicyName) -> (Sim, MemcgId, u32, u32) {
    let mut s = machine(policy, 8192, None);
    let g = s.add_memcg(crate::memcg::ROOT, "g").unwrap();
    s.set_memcg_max(g, 100).unwrap();
    let hog = s.add_task("hog");
    s.attach_task(hog, g).unwrap();
    let anon = s.mmap_anon(hog, 100).unwrap();
    touch(&mut s, anon, 100);
    let reader = s.add_task("reader");
    s.attach_task(reader, g).unwrap();
    s.drain_stock();
    assert_eq!(s.memcgs[g as usize].usage, 100);
    (s, g, hog, reader)
}

/// The pages of `file` below 64 in the page cache.
pub(super) fn cached_pages(s: &Sim, file: u32) -> Vec<u32> {
    (0..64)
        .filter(|&i| slot_folio(s.files[file as usize].slot(i)).is_some())
        .collect()
}

/// A one-page read of page 0 of `file` (by the task that opened it; a
/// sync readahead with a window of 0..4), then [`cached_pages`].
pub(super) fn read_page_0(s: &mut Sim, file: u32) -> Vec<u32> {
    s.step(&Event::FileRead {
        file,
        index: 0,
        pages: 1,
    });
    cached_pages(s, file)
}

fn oom_events(s: &Sim, g: MemcgId) -> u64 {
    s.memcgs[g as usize].stat.get(MEMCG_OOM).unwrap()
}

/// One charge of a page with `gfp` in [`full_group`]: whether it
/// succeeded, then `memory.events` `max` and `oom`, and whether the hog died.
fn charge_one(gfp: Gfp) -> (bool, u64, u64, bool) {
    let (mut s, g, hog, _) = full_group();
    s.cur_memcg = g;
    let ok = s.try_charge_memcg(1, gfp);
    let m = &s.memcgs[g as usize];
    (
        ok,
        m.max_events,
        oom_events(&s, g),
        s.tasks[hog as usize].dead,
    )
}

#[test]
fn a_noretry_charge_fails_after_one_reclaim_and_the_drain_without_oom() {
    // Readahead's mask: reclaim (nothing), drain, reclaim again, nomem:
    // two passes counted in `max`, no `oom`, nobody killed.
    assert_eq!(charge_one(GFP_READAHEAD), (false, 2, 0, false));
    // __GFP_RETRY_MAYFAIL: the two passes and MAX_RECLAIM_RETRIES (16)
    // more, then nomem before mem_cgroup_oom: no `oom` either.
    assert_eq!(
        charge_one(GFP_KERNEL | __GFP_RETRY_MAYFAIL),
        (false, 18, 0, false)
    );
    // A page-cache miss's mask: the same 18 passes, then the group's OOM
    // killer kills the hog and the charge succeeds.
    assert_eq!(charge_one(GFP_USER_FOLIO), (true, 18, 1, true));
}

#[test]
fn readahead_ends_at_its_failed_charge_and_the_reader_charges_its_page_with_retries() {
    let (mut s, g, hog, reader) = full_group();
    let file = s.add_file("f", 64).unwrap();
    s.open(file, reader).unwrap();
    // The sync readahead's window (0..4) stopped at page 0's charge (two
    // `max` passes, no OOM); filemap_create_folio's charge of page 0 then
    // took 18 passes and the OOM kill of the hog. Only page 0 is cached,
    // read alone.
    assert_eq!(read_page_0(&mut s, file), [0]);
    assert_eq!(s.acc.file_pages_read, 1);
    assert_eq!(s.memcgs[g as usize].max_events, 20);
    assert_eq!(oom_events(&s, g), 1);
    assert!(s.tasks[hog as usize].dead);
    assert!(!s.tasks[reader as usize].dead);
}

/// A cgroup v1 machine (order-0 page cache, 4,096-page root limit) whose
/// writer wrote pages 0..40 of a file once (FADV_RANDOM); the flusher has
/// started their writeback and each is marked PG_reclaim, as an earlier
/// reclaim pass leaves them.
fn v1_under_writeback() -> Sim {
    let mut cfg = super::filefolio::lf_config(1 << 16);
    cfg.fs.large_folios = false;
    cfg.cgroup_version = CgroupVersion::V1;
    cfg.memcg_max = Some(Size::from_pages(4096));
    cfg.policy.name = PolicyName::Cost;
    let mut s = Sim::new(cfg).unwrap();
    let t = s.add_task("writer");
    let file = s.add_file("data", 1000).unwrap();
    s.open(file, t).unwrap();
    s.fadvise(file, Advice::Random).unwrap();
    s.step(&Event::FileWrite {
        file,
        index: 0,
        pages: 40,
    });
    s.wakeup_flusher(s.clock);
    for i in 0..40 {
        let f = slot_folio(s.files[file as usize].slot(i)).unwrap();
        assert!(s.folios[f].test(flags::WRITEBACK));
        s.folios[f].set(flags::RECLAIM);
    }
    s
}

fn under_writeback(s: &Sim) -> usize {
    s.writeback.iter().map(|q| q.len()).sum()
}

#[test]
fn v1_limit_reclaim_waits_for_writeback_only_with_gfp_fs() {
    // GFP_KERNEL (a write's charge): case 3, each marked folio's writeback
    // is waited for and the clean folio reclaimed.
    let mut s = v1_under_writeback();
    let before = s.clock;
    let reclaimed = s.try_to_free_mem_cgroup_pages(crate::memcg::ROOT, 32, GFP_KERNEL);
    assert_eq!(reclaimed, 40);
    assert_eq!(under_writeback(&s), 0);
    // The waits: 112 us of the clock (against 14 us of scanning below).
    assert_eq!(s.clock - before, 112_070);
    // Readahead's charge (GFP_NOFS): !may_enter_fs, case 2: no wait, each
    // folio activated (PG_reclaim kept) whenever met, nothing reclaimed:
    // the 40 at the first pass that reaches them, then those the lower
    // priorities deactivate and meet again (81 activations in all); the
    // clock moves by the scanning's CPU time only.
    let mut s = v1_under_writeback();
    let before = (s.clock, s.vm.pgactivate);
    let reclaimed = s.try_to_free_mem_cgroup_pages(crate::memcg::ROOT, 32, GFP_READAHEAD);
    assert_eq!(reclaimed, 0);
    assert_eq!(under_writeback(&s), 40);
    assert_eq!(
        (s.clock - before.0, s.vm.pgactivate - before.1),
        (14_200, 81)
    );
}

/// An 8192-page machine with direct compaction only, fragmented as
/// `rule_tests::compaction`'s `fragment` does but with page-cache folios
/// left: of every 16 frames from the zone's start, 15 anonymous pages
/// (discarded again) and one page of a file read under FADV_RANDOM; the rest
/// of the zone is taken. No free block reaches order 4.
fn file_fragment() -> Sim {
    use crate::huge_memory::{ThpConfig, VmaThpAdvice};
    let mut s = super::thp::thp_machine_with(8192, None, ThpConfig::default(), |c| {
        c.compaction.enabled = true;
        c.compaction.kcompactd = false;
        c.compaction.proactiveness = 0;
    });
    let t = s.add_task("frag");
    let vma = s.mmap_anon(t, 4096).unwrap();
    s.madvise_thp(vma, VmaThpAdvice::Nohugepage).unwrap();
    let file = s.add_file("f", 256).unwrap();
    s.open(file, t).unwrap();
    s.fadvise(file, Advice::Random).unwrap();
    for i in 0..4096u32 {
        if i % 16 == 15 {
            s.step(&Event::FileRead {
                file,
                index: i / 16,
                pages: 1,
            });
        } else {
            fault_anon(&mut s, vma, i);
        }
    }
    take_all_free(&mut s);
    for i in (0..4096).step_by(16) {
        s.step(&Event::Discard {
            vma,
            index: i,
            pages: 15,
        });
    }
    s.phys.drain_pages();
    let f = slot_folio(s.files[file as usize].slot(1)).unwrap();
    assert_eq!(u64::from(s.folios.head_pfn(f)) - s.phys.zone.start_pfn, 31);
    assert_eq!(s.phys.zone.buddyinfo()[..5], [256, 256, 256, 256, 0]);
    s
}

#[test]
fn nofs_direct_compaction_isolates_no_page_cache_folio() {
    use crate::compaction::MigrateMode;
    use crate::gfp::__GFP_FS;
    // With __GFP_FS (a write's large folio): pageblock 0's 32 page-cache
    // folios migrate and the order-4 block is found.
    let mut s = file_fragment();
    let (page, _) =
        s.alloc_pages_direct_compact_gfp(4, MigrateMode::Async, GFP_READAHEAD | __GFP_FS);
    assert!(page.is_some());
    let v = &s.vm;
    assert_eq!((v.compact_success, v.pgmigrate_success), (1, 32));
    // Readahead's mask: no folio of the zone is isolated (each has a
    // mapping), nothing migrates, the compaction fails.
    let mut s = file_fragment();
    let (page, _) = s.alloc_pages_direct_compact_gfp(4, MigrateMode::Async, GFP_READAHEAD);
    assert_eq!(page, None);
    let v = &s.vm;
    assert_eq!(
        (v.compact_fail, v.compact_isolated, v.pgmigrate_success),
        (1, 0, 0)
    );
}

#[test]
fn v4_9_readahead_keeps_gfp_fs_and_every_era_has_gfp_noretry() {
    use crate::gfp::{__GFP_FS, __GFP_NORETRY};
    for (policy, fs) in [
        (PolicyName::ScannedRotated, __GFP_FS),
        (PolicyName::Cost, 0),
        (PolicyName::Mglru, 0),
    ] {
        let s = machine(policy, 4096, None);
        let gfp = s.readahead_gfp();
        assert_eq!(
            gfp & (__GFP_FS | __GFP_NORETRY),
            fs | __GFP_NORETRY,
            "{policy:?}"
        );
    }
}
