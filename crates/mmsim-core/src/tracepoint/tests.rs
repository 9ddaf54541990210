//! Tests of the tracepoint formats, lines and patterns (split out of `tracepoint.rs`,
//! which was at the 1,200-line limit).

use super::*;

/// `TP_printk` formats from include/trace/events/vmscan.h, filemap.h (v6.12).
const KERNEL_FORMATS: [(&str, &str); 30] = [
    ("mm_vmscan_kswapd_wake", "nid=%d order=%d"),
    ("mm_vmscan_kswapd_sleep", "nid=%d"),
    ("mm_vmscan_direct_reclaim_begin", "order=%d gfp_flags=%s"),
    ("mm_vmscan_direct_reclaim_end", "nr_reclaimed=%lu"),
    ("mm_vmscan_memcg_reclaim_begin", "order=%d gfp_flags=%s"),
    ("mm_vmscan_memcg_reclaim_end", "nr_reclaimed=%lu"),
    (
        "mm_vmscan_lru_isolate",
        "classzone=%d order=%d nr_requested=%lu nr_scanned=%lu \
         nr_skipped=%lu nr_taken=%lu lru=%s",
    ),
    (
        "mm_vmscan_lru_shrink_inactive",
        "nid=%d nr_scanned=%ld nr_reclaimed=%ld nr_dirty=%ld nr_writeback=%ld \
         nr_congested=%ld nr_immediate=%ld nr_activate_anon=%d nr_activate_file=%d \
         nr_ref_keep=%ld nr_unmap_fail=%ld priority=%d flags=%s",
    ),
    (
        "mm_vmscan_lru_shrink_active",
        "nid=%d nr_taken=%ld nr_active=%ld nr_deactivated=%ld nr_referenced=%ld \
         priority=%d flags=%s",
    ),
    ("mm_vmscan_write_folio", "page=%p pfn=0x%lx flags=%s"),
    (
        "mm_filemap_add_to_page_cache",
        "dev %d:%d ino %lx pfn=0x%lx ofs=%lu order=%u",
    ),
    (
        "mm_filemap_delete_from_page_cache",
        "dev %d:%d ino %lx pfn=0x%lx ofs=%lu order=%u",
    ),
    ("mm_filemap_get_pages", "dev=%d:%d ino=%lx ofs=%lld-%lld"),
    ("mm_filemap_fault", "dev=%d:%d ino=%lx ofs=%lld"),
    (
        "mm_vmscan_memcg_softlimit_reclaim_begin",
        "order=%d gfp_flags=%s",
    ),
    ("mm_vmscan_memcg_softlimit_reclaim_end", "nr_reclaimed=%lu"),
    // include/trace/events/compaction.h (v6.12).
    (
        "mm_compaction_try_to_compact_pages",
        "order=%d gfp_mask=%s priority=%d",
    ),
    (
        "mm_compaction_suitable",
        "node=%d zone=%-8s order=%d ret=%s",
    ),
    (
        "mm_compaction_begin",
        "zone_start=0x%lx migrate_pfn=0x%lx free_pfn=0x%lx zone_end=0x%lx, mode=%s",
    ),
    (
        "mm_compaction_end",
        "zone_start=0x%lx migrate_pfn=0x%lx free_pfn=0x%lx zone_end=0x%lx, mode=%s \
         status=%s",
    ),
    (
        "mm_compaction_finished",
        "node=%d zone=%-8s order=%d ret=%s",
    ),
    (
        "mm_compaction_migratepages",
        "nr_migrated=%lu nr_failed=%lu",
    ),
    (
        "mm_compaction_defer_compaction",
        "node=%d zone=%-8s order=%d order_failed=%d consider=%u limit=%lu",
    ),
    (
        "mm_compaction_deferred",
        "node=%d zone=%-8s order=%d order_failed=%d consider=%u limit=%lu",
    ),
    (
        "mm_compaction_defer_reset",
        "node=%d zone=%-8s order=%d order_failed=%d consider=%u limit=%lu",
    ),
    (
        "mm_compaction_wakeup_kcompactd",
        "nid=%d order=%d classzone_idx=%-8s",
    ),
    (
        "mm_compaction_kcompactd_wake",
        "nid=%d order=%d classzone_idx=%-8s",
    ),
    ("mm_compaction_kcompactd_sleep", "nid=%d"),
    // include/trace/events/kmem.h (v6.12).
    (
        "mm_page_alloc_extfrag",
        "page=%p pfn=0x%lx alloc_order=%d fallback_order=%d pageblock_order=%d \
         alloc_migratetype=%d fallback_migratetype=%d fragmenting=%d change_ownership=%d",
    ),
    // include/trace/events/vmscan.h (v6.12).
    ("mm_vmscan_wakeup_kswapd", "nid=%d order=%d gfp_flags=%s"),
];

/// Matches `text` against a printf format: literals equal, each conversion
/// consumes what it would print (`%d` signed decimal, `%u` decimal, `%x` hex,
/// `%p` a 0x pointer, `%s` a flag word). Returns the converted values.
fn printf_match(fmt: &str, text: &str) -> Result<Vec<String>, String> {
    let (f, t) = (fmt.as_bytes(), text.as_bytes());
    let (mut i, mut j) = (0, 0);
    let mut values = Vec::new();
    while i < f.len() {
        if f[i] != b'%' {
            if t.get(j) != Some(&f[i]) {
                return Err(format!("at {j} of {text:?}: expected {:?}", f[i] as char));
            }
            i += 1;
            j += 1;
            continue;
        }
        i += 1;
        // `-` and a width: a left-justified field padded with spaces.
        let mut width = 0;
        if f[i] == b'-' {
            i += 1;
        }
        while f[i].is_ascii_digit() {
            width = width * 10 + usize::from(f[i] - b'0');
            i += 1;
        }
        while matches!(f[i], b'l' | b'h' | b'z') {
            i += 1;
        }
        let conv = f[i];
        i += 1;
        let start = j;
        if conv == b'd' && t.get(j) == Some(&b'-') {
            j += 1;
        }
        let ok = |c: u8| match conv {
            b'd' => c.is_ascii_digit(),
            b'u' => c.is_ascii_digit(),
            b'x' => c.is_ascii_hexdigit(),
            b'p' => c.is_ascii_hexdigit() || c == b'x',
            b's' => c.is_ascii_alphanumeric() || c == b'_' || c == b'|',
            _ => false,
        };
        while j < t.len() && ok(t[j]) {
            j += 1;
        }
        if j == start {
            return Err(format!(
                "at {j} of {text:?}: no value for %{}",
                conv as char
            ));
        }
        values.push(text[start..j].to_string());
        while j - start < width && t.get(j) == Some(&b' ') {
            j += 1;
        }
    }
    if j != t.len() {
        return Err(format!("{text:?}: trailing {:?}", &text[j..]));
    }
    Ok(values)
}

fn every_event() -> Vec<TpEvent> {
    use {compaction::CompactionEvent as CE, compaction::DeferState, TpEvent::Compaction as C};
    let d = DeferState {
        zone: 0,
        order: 4,
        considered: 3,
        defer_shift: 2,
        order_failed: 5,
    };
    let (order, gfp_flags) = (0, crate::gfp::GFP_HIGHUSER_MOVABLE);
    vec![
        TpEvent::KswapdWake { order: 0 },
        TpEvent::KswapdSleep,
        TpEvent::DirectReclaimBegin { order, gfp_flags },
        TpEvent::DirectReclaimEnd { nr_reclaimed: 32 },
        TpEvent::MemcgReclaimBegin { gfp_flags },
        TpEvent::MemcgReclaimEnd { nr_reclaimed: 45 },
        TpEvent::LruIsolate {
            nr_requested: 32,
            nr_scanned: 31,
            nr_taken: 31,
            lru: 2,
        },
        TpEvent::LruShrinkInactive {
            nr_scanned: 31,
            nr_reclaimed: 29,
            nr_dirty: 1,
            nr_activate: [0, 2],
            priority: 12,
            file: true,
        },
        TpEvent::LruShrinkActive {
            nr_taken: 32,
            nr_active: 3,
            nr_deactivated: 29,
            nr_referenced: 5,
            priority: 11,
            file: false,
        },
        TpEvent::WriteFolio {
            pfn: 0x100a2,
            file: false,
        },
        TpEvent::FilemapAdd {
            ino: 0x2a,
            pfn: 0x10000,
            index: 3,
            order: 0,
        },
        TpEvent::FilemapDelete {
            ino: 0x2a,
            pfn: 0x10000,
            index: 3,
            order: 0,
        },
        TpEvent::GetPages {
            ino: 0x2a,
            index: 4,
            last_index: 7,
        },
        TpEvent::Fault {
            ino: 0x2a,
            index: 9,
        },
        TpEvent::MemcgSoftlimitReclaimBegin,
        TpEvent::MemcgSoftlimitReclaimEnd { nr_reclaimed: 33 },
        C(CE::TryToCompactPages {
            order: 4,
            gfp_mask: crate::gfp::GFP_TRANSHUGE | crate::gfp::__GFP_NORETRY,
            prio: 2,
        }),
        C(CE::Suitable {
            zone: 1,
            order: 4,
            ret: 4,
        }),
        C(CE::Begin {
            zone_start: 0x1000,
            migrate_pfn: 0x1000,
            free_pfn: 0x1fe00,
            zone_end: 0x1ffd7,
            sync: true,
        }),
        C(CE::End {
            zone_start: 0x1000,
            migrate_pfn: 0x4200,
            free_pfn: 0x4200,
            zone_end: 0x1ffd7,
            sync: false,
            status: 6,
        }),
        C(CE::Finished {
            zone: 2,
            order: -1,
            ret: 8,
        }),
        C(CE::Migratepages {
            nr_migrated: 32,
            nr_failed: 1,
        }),
        C(CE::DeferCompaction(d)),
        C(CE::Deferred(d)),
        C(CE::DeferReset(d)),
        C(CE::WakeupKcompactd { order: 9, zone: 3 }),
        C(CE::KcompactdWake { order: 9, zone: 1 }),
        C(CE::KcompactdSleep),
        TpEvent::Extfrag(ExtfragEvent {
            pfn: 0x10a3,
            alloc_order: 0,
            fallback_order: 3,
            alloc_migratetype: 0,
            fallback_migratetype: 1,
            change_ownership: true,
        }),
        TpEvent::WakeupKswapd {
            zid: 3,
            order: 4,
            gfp_flags: crate::gfp::GFP_READAHEAD,
        },
    ]
}

#[test]
fn every_line_follows_the_kernels_format_string_field_by_field() {
    for (e, (name, fmt)) in every_event().iter().zip(KERNEL_FORMATS) {
        assert_eq!(e.name().split(':').nth(1), Some(name));
        let text = e.to_string();
        if let Err(m) = printf_match(fmt, &text) {
            panic!("{name}: {m}");
        }
    }
    let v = |i: usize| printf_match(KERNEL_FORMATS[i].1, &every_event()[i].to_string());
    // The values land in the kernel's fields.
    assert_eq!(
        v(6).unwrap(),
        ["2", "0", "32", "31", "0", "31", "inactive_file"]
    );
    assert_eq!(
        v(7).unwrap(),
        [
            "0",
            "31",
            "29",
            "1",
            "0",
            "0",
            "0",
            "0",
            "2",
            "0",
            "0",
            "12",
            "RECLAIM_WB_FILE|RECLAIM_WB_ASYNC"
        ]
    );
    assert_eq!(v(8).unwrap()[1..6], ["32", "3", "29", "5", "11"]);
    assert_eq!(
        v(9).unwrap()[1..],
        ["100a2", "RECLAIM_WB_ANON|RECLAIM_WB_ASYNC"]
    );
    // ofs is the byte offset; get_pages' end is the last byte of the last page.
    assert_eq!(v(10).unwrap(), ["8", "1", "2a", "10000", "12288", "0"]);
    assert_eq!(v(12).unwrap(), ["8", "1", "2a", "16384", "32767"]);
    assert_eq!(v(13).unwrap(), ["8", "1", "2a", "36864"]);
    // The compaction events as the 6.12 guest printed them (its console log).
    assert_eq!(
        every_event()[17].to_string(),
        "node=0 zone=DMA32    order=4 ret=continue"
    );
    assert_eq!(
        every_event()[19].to_string(),
        "zone_start=0x1000 migrate_pfn=0x4200 free_pfn=0x4200 zone_end=0x1ffd7, \
         mode=async status=partial_skipped"
    );
    assert_eq!(v(20).unwrap(), ["0", "Normal", "-1", "success"]);
    assert_eq!(v(22).unwrap(), ["0", "DMA", "4", "5", "3", "4"]);
    assert_eq!(
        every_event()[25].to_string(),
        "nid=0 order=9 classzone_idx=Movable "
    );
    assert_eq!(v(26).unwrap(), ["0", "9", "DMA32"]);
    assert_eq!(
        every_event()[28].to_string(),
        "page=0xffffea00000428c0 pfn=0x10a3 alloc_order=0 fallback_order=3 \
         pageblock_order=9 alloc_migratetype=0 fallback_migratetype=1 fragmenting=1 \
         change_ownership=1"
    );
    // mm_vmscan_wakeup_kswapd as the 6.12 guest printed it (kswapd13's trace):
    // a readahead folio's mask, and rmqueue's boost wakeup (mask 0).
    assert_eq!(
        every_event()[29].to_string(),
        "nid=0 order=4 gfp_flags=GFP_NOFS|__GFP_HIGHMEM|__GFP_NOWARN|__GFP_NORETRY|__GFP_COMP|\
         __GFP_HARDWALL|__GFP_MOVABLE"
    );
    let boost = TpEvent::WakeupKswapd {
        zid: 2,
        order: 0,
        gfp_flags: 0,
    };
    assert_eq!(boost.to_string(), "nid=0 order=0 gfp_flags=none");
    assert_eq!(boost.name(), "vmscan:mm_vmscan_wakeup_kswapd");
    assert!(printf_match("nid=%d", "nid=x").is_err());
    assert!(printf_match("nid=%d", "nid=1 extra").is_err());
}

#[test]
fn perf_script_lines_carry_task_cpu_and_simulated_time() {
    let r = TraceRecord {
        t_ns: 12_345_678_901,
        task: TpTask::Task(1),
        event: TpEvent::KswapdSleep,
    };
    let names = ["a".to_string(), "reader".to_string()];
    assert_eq!(
        r.perf_script_line(&names),
        "          reader    1001 [000]    12.345678: vmscan:mm_vmscan_kswapd_sleep: nid=0"
    );
    let k = TraceRecord {
        task: TpTask::Kswapd,
        ..r
    };
    assert!(k
        .perf_script_line(&names)
        .starts_with("         kswapd0      80 [001]    12.345678: vmscan:"));
}

#[test]
fn patterns_select_systems_and_single_events() {
    let c = |e: &[&str]| TracepointConfig {
        events: e.iter().map(|s| s.to_string()).collect(),
        ..Default::default()
    };
    assert_eq!(c(&["vmscan:*"]).mask(), Ok(0x3ff | 0x3 << 14 | 1 << 29));
    assert_eq!(c(&["filemap:*"]).mask(), Ok(0xf << 10));
    assert_eq!(c(&["*"]).mask(), Ok(0x1_ffff_ffff));
    assert_eq!(c(&["vmscan:mm_vmscan_wakeup_kswapd"]).mask(), Ok(1 << 29));
    assert_eq!(c(&["compaction:*"]).mask(), Ok(0xfff << 16));
    assert_eq!(c(&["kmem:*"]).mask(), Ok(1 << 28 | 0x7 << 30));
    assert_eq!(
        c(&["compaction:mm_compaction_defer_reset"]).mask(),
        Ok(1 << 24)
    );
    assert_eq!(c(&["vmscan:mm_vmscan_write_folio"]).mask(), Ok(1 << 9));
    let e = c(&["vmscan:mm_vmscan_lru_gen_scan"]).mask().unwrap_err();
    assert_eq!(e.field, "machine.tracepoints.events");
    assert!(e
        .message
        .contains("`vmscan:mm_vmscan_lru_gen_scan` names no tracepoint"));
    assert!(c(&[]).mask().is_err());
}
