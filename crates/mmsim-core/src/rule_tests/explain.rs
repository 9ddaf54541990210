//! `crate::explain`: a scripted page's story, event by event, for the classic LRU
//! (v6.12 rules, cost balance v6.2) and MGLRU (v6.14).
//!
//! The script: a 64-page memory cgroup limit (`machine.memcg_max`, so every
//! reclaim is the reading task's own memcg limit reclaim, with no kswapd
//! timing) over a 1,000-page file read one page at a time under FADV_RANDOM
//! (no readahead). Page 5 is read, then page 6, then page 5 again (a second
//! reference, not the same folio as the previous read, so
//! `folio_mark_accessed` runs); pages 10..40 are read three times (a working
//! set of 30 active pages); pages 100..150 stream through once; then pages
//! 5, 6, 5 again.

use crate::config::{MachineConfig, PolicyConfig, PolicyName, Size};
use crate::event::Event;
use crate::explain::{ExplainConfig, PageSpec};
use crate::readahead::Advice;
use crate::sim::Sim;

fn story(policy: PolicyName) -> (Vec<String>, u64, u64) {
    let cfg = MachineConfig {
        memory: Size::from_pages(1 << 16),
        memcg_max: Some(Size::from_pages(64)),
        policy: PolicyConfig {
            name: policy,
            ..Default::default()
        },
        explain: Some(ExplainConfig {
            pages: vec!["data:5".into()],
            ..Default::default()
        }),
        ..Default::default()
    };
    let mut s = Sim::new(cfg).unwrap();
    let t = s.add_task("reader");
    let f = s.add_file("data", 1000).unwrap();
    s.open(f, t).unwrap();
    s.fadvise(f, Advice::Random).unwrap();
    let read = |index| Event::FileRead {
        file: f,
        index,
        pages: 1,
    };
    let mut ev = vec![read(5), read(6), read(5)];
    for _ in 0..3 {
        ev.extend((10..40).map(read));
    }
    ev.extend((100..150).map(read));
    ev.extend([read(5), read(6), read(5)]);
    s.run(&ev);
    let r = s.finish().explain.unwrap();
    let p = &r.pages[0];
    assert_eq!(p.error, None);
    assert_eq!(p.what, "page 5 of file `data`");
    let lines = p
        .events
        .iter()
        .map(|e| format!("{} {}: {}", e.who, e.func, e.text))
        .collect();
    (lines, p.accesses, p.refaults)
}

/// Classic LRU: in on the inactive list with PG_referenced (the read's
/// `folio_mark_accessed`); the second read finds PG_referenced and activates
/// (clearing it); `shrink_active_list` deactivates it with PG_workingset
/// (it never consults PG_referenced); on the inactive tail
/// `folio_check_references` finds no young PTE (unmapped) and no PG_referenced
/// → reclaim; `__remove_mapping` leaves a shadow with PG_workingset; the
/// refault distance (17 evictions since) exceeds the workingset size for a
/// file refault without swap (the active file list, 14 pages) → stays
/// inactive, and the next two reads activate it again.
#[test]
fn classic_page_story_event_by_event() {
    let (lines, accesses, refaults) = story(PolicyName::Cost);
    let expected = [
        "reader filemap_read: page-cache miss in read(): page_cache_sync_ra → \
         force_page_cache_ra (FADV_RANDOM: the requested pages only); folio_add_lru → inactive_file, PG_referenced",
        "reader folio_mark_accessed: referenced twice (PG_referenced was set) → folio_activate: \
         to the active list: +PG_active -PG_referenced",
        "reader shrink_active_list: taken from the active tail by memcg limit reclaim \
         (priority 3) and deactivated to the inactive list, PG_workingset set (PG_referenced \
         is not consulted)",
        "reader folio_check_references: no young PTE and no PG_referenced → reclaim",
        "reader __remove_mapping: evicted by memcg limit reclaim at priority 0 from /: dropped \
         from the page cache; shadow stored (workingset_eviction): eviction clock 64 \
         (nonresident_age >> 0), memcg id 1, workingset true; get_scan_count: SCAN_FILE (anon \
         60/200, file 140/200; scan anon 0+0, file 26+14 at priority 0)",
        "reader workingset_refault: refault distance 17 > workingset size 14: too long ago to \
         have stayed resident with more memory, stays inactive",
        "reader filemap_read: page-cache miss in read(): page_cache_sync_ra → \
         force_page_cache_ra (FADV_RANDOM: the requested pages only); folio_add_lru → inactive_file, PG_referenced",
        "reader folio_mark_accessed: referenced twice (PG_referenced was set) → folio_activate: \
         to the active list: +PG_active -PG_referenced",
    ];
    assert_eq!(lines, expected);
    assert_eq!((accesses, refaults), (4, 1));
}

/// MGLRU (v6.14): in on the youngest generation with PG_referenced (the
/// read's `lru_gen_inc_refs`); the second read bumps the refs bits 0 → 1;
/// at eviction (no young PTE: unmapped) the shadow's token is min_seq 2 and
/// refs − 1 = 1; the refault finds max_seq 3 within MAX_NR_GENS of the token
/// → recent, `refaulted[tier]` counted and the refs restored (refs 2 → one
/// less: PG_referenced); the next read bumps the refs again.
#[test]
fn mglru_page_story_event_by_event() {
    let (lines, accesses, refaults) = story(PolicyName::Mglru);
    let expected = [
        "reader filemap_read: page-cache miss in read(): page_cache_sync_ra → \
         force_page_cache_ra (FADV_RANDOM: the requested pages only); folio_add_lru → MGLRU generation 0 (refs bits 0), PG_referenced",
        "reader folio_mark_accessed: a read of a cached page (lru_gen_inc_refs under MGLRU): \
         generation 0 → 0, refs 0 → 1",
        "reader folio_check_references: no young PTE (fd accesses count in the tiers \
         sort_folio judged) → reclaim",
        "reader __remove_mapping: evicted by memcg limit reclaim at priority 6 from /: dropped \
         from the page cache; shadow stored (lru_gen_eviction): token seq 2 refs 1, memcg id \
         1, workingset false",
        "reader lru_gen_refault: shadow token seq 2 refs 1 (workingset false); now min_seq 2 \
         max_seq 3: recent (max_seq within MAX_NR_GENS of the token): refaulted[tier] counted",
        "reader filemap_read: page-cache miss in read(): page_cache_sync_ra → \
         force_page_cache_ra (FADV_RANDOM: the requested pages only); folio_add_lru → MGLRU generation 2 (refs bits 0), PG_referenced",
        "reader folio_mark_accessed: a read of a cached page (lru_gen_inc_refs under MGLRU): \
         generation 2 → 2, refs 0 → 1",
    ];
    assert_eq!(lines, expected);
    assert_eq!((accesses, refaults), (4, 1));
}

/// An unknown file, an index out of range and a page never touched are told
/// as errors in the report, never a panic.
#[test]
fn bad_pages_are_reported() {
    let cfg = MachineConfig {
        memory: Size::from_pages(1 << 14),
        explain: Some(ExplainConfig {
            pages: vec!["nope:1".into(), "data:10".into(), "data:3".into()],
            ..Default::default()
        }),
        ..Default::default()
    };
    let mut s = Sim::new(cfg).unwrap();
    let t = s.add_task("reader");
    let f = s.add_file("data", 10).unwrap();
    s.open(f, t).unwrap();
    s.fadvise(f, Advice::Random).unwrap();
    s.run(&[Event::FileRead {
        file: f,
        index: 0,
        pages: 1,
    }]);
    let r = s.finish().explain.unwrap();
    let e: Vec<_> = r.pages.iter().map(|p| p.error.clone().unwrap()).collect();
    assert_eq!(
        e,
        [
            "no file `nope` in the scenario (files: data)",
            "page index 10 is out of range: file `data` has 10 pages (0..=9)",
            "the page was never touched in this run",
        ]
    );
}

/// Page names: `FILE:INDEX`, `TASK:0xVADDR` (the last colon splits), and the
/// errors naming the field.
#[test]
fn page_names_parse_and_bad_ones_are_named() {
    assert_eq!(
        PageSpec::parse("data:12"),
        Ok(PageSpec::File("data".into(), 12))
    );
    assert_eq!(
        PageSpec::parse("app:0x7f0000001000"),
        Ok(PageSpec::Task("app".into(), 0x7f00_0000_1000))
    );
    assert_eq!(
        PageSpec::parse("a:b:3"),
        Ok(PageSpec::File("a:b".into(), 3))
    );
    let e = PageSpec::parse("data").unwrap_err();
    assert_eq!(e.field, "machine.explain.pages");
    assert!(e.message.contains("expected FILE:INDEX"));
    assert!(PageSpec::parse(":3")
        .unwrap_err()
        .message
        .contains("no file"));
    assert!(PageSpec::parse("d:x1")
        .unwrap_err()
        .message
        .contains("neither a page index"));
    assert!(PageSpec::parse("d:0xzz")
        .unwrap_err()
        .message
        .contains("not a hex address"));
}

/// The lines of page `data:5`'s story after `events` on a 1,000-page file under
/// FADV_RANDOM in a 64-page memory cgroup limit (classic LRU, v6.12 rules).
fn kept_story(events: impl Fn(u32) -> Vec<Event>) -> Vec<String> {
    let cfg = MachineConfig {
        memory: Size::from_pages(1 << 16),
        memcg_max: Some(Size::from_pages(64)),
        explain: Some(ExplainConfig {
            pages: vec!["data:5".into()],
            ..Default::default()
        }),
        ..Default::default()
    };
    let mut s = Sim::new(cfg).unwrap();
    let t = s.add_task("writer");
    let f = s.add_file("data", 1000).unwrap();
    s.open(f, t).unwrap();
    s.fadvise(f, Advice::Random).unwrap();
    s.run(&events(f));
    let r = s.finish().explain.unwrap();
    r.pages[0]
        .events
        .iter()
        .map(|e| format!("{} {}: {}", e.who, e.func, e.text))
        .collect()
}

/// v6.12 `shrink_folio_list`: a dirty file folio met by limit reclaim (not kswapd)
/// is not written from reclaim: PG_reclaim is set, `nr_vmscan_immediate_reclaim`
/// counted, and it is activated out of the way (`activate_locked`, since 4.13) for
/// the flusher, which reclaim wakes; when its write completes
/// `folio_rotate_reclaimable` moves it to the inactive tail, PG_active cleared, and
/// the next reclaim frees it.
#[test]
fn a_dirty_page_left_to_the_flusher_is_told() {
    let lines = kept_story(|f| {
        let mut ev = vec![Event::FileWrite {
            file: f,
            index: 5,
            pages: 1,
        }];
        ev.extend((100..300).map(|index| Event::FileRead {
            file: f,
            index,
            pages: 1,
        }));
        ev
    });
    let expected = [
        "writer generic_perform_write: write(): a new page-cache folio, dirtied; \
         folio_add_lru → inactive_file",
        "writer folio_check_references: no young PTE and no PG_referenced → reclaim",
        "writer shrink_folio_list: not evicted by memcg limit reclaim (priority 6): dirty file \
         folio left to the flusher (only kswapd may write file folios): PG_reclaim set, \
         nr_vmscan_immediate_reclaim counted → activate_locked: PG_active, back to the active \
         list",
        "writeback completion folio_end_writeback: its write completed with PG_reclaim set: \
         folio_rotate_reclaimable → lru_move_tail: to the inactive tail, PG_active cleared, \
         pgrotated counted (reclaim frees it next)",
    ];
    assert_eq!(lines[..4], expected, "{lines:#?}");
    assert!(
        !lines.iter().any(|l| l.contains("background")),
        "every change has its actor: {lines:#?}"
    );
    assert!(
        lines[4..]
            .iter()
            .any(|l| l.contains("__remove_mapping: evicted")),
        "{lines:#?}"
    );
}

/// A fork write-protects a page a read swap-in mapped writable (v6.11+
/// `do_swap_page`, `GEN_REFS_MAYWRITE` cleared by `copy_present_ptes`): not
/// a change of the state `explain` tells (flags, MGLRU generation and
/// refs), so no "changed outside this page's events" line with nothing
/// after its colon.
#[test]
fn a_fork_after_a_read_swap_in_tells_no_empty_change() {
    use crate::config::{DeviceConfig, DeviceKind};
    let cfg = MachineConfig {
        memory: Size::from_pages(1 << 16),
        memcg_max: Some(Size::from_pages(64)),
        swap: DeviceConfig {
            size: Some(Size::from_pages(4096)),
            ..DeviceConfig::of(DeviceKind::Zram)
        },
        ..Default::default()
    };
    let mut s = Sim::new(cfg).unwrap();
    let t = s.add_task("app");
    let vma = s.mmap_anon(t, 256).unwrap();
    let start = s
        .damon_va_maps(t)
        .iter()
        .find(|m| m.2 == Some(vma))
        .unwrap()
        .0;
    let mut s = {
        let mut cfg = s.cfg.clone();
        cfg.explain = Some(ExplainConfig {
            pages: vec![format!("app:{start:#x}")],
            ..Default::default()
        });
        let mut s = Sim::new(cfg).unwrap();
        let t = s.add_task("app");
        assert_eq!(s.mmap_anon(t, 256).unwrap(), vma);
        s
    };
    let access = |index, write| Event::Access { vma, index, write };
    let mut ev: Vec<Event> = (0..256).map(|i| access(i, true)).collect();
    ev.push(access(0, false));
    ev.push(Event::Fork { vma, pages: 0 });
    s.run(&ev);
    assert!(
        !s.folios[s.vmas[vma as usize].pte(0) & crate::mem::pagetable::PTE_FOLIO_MASK].maywrite()
    );
    let r = s.finish().explain.unwrap();
    let lines: Vec<String> = r.pages[0]
        .events
        .iter()
        .map(|e| format!("{} {}: {}", e.who, e.func, e.text))
        .collect();
    assert!(
        lines.iter().any(|l| l.contains("do_swap_page")),
        "the swap-in is told: {lines:#?}"
    );
    assert!(
        !lines
            .iter()
            .any(|l| l.contains("changed outside") || l.ends_with(": ")),
        "{lines:#?}"
    );
}
