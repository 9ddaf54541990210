//! The length of kswapd's short nap (`compaction.kswapd_nap_ms`; mm/vmscan.c
//! v6.12 `kswapd_try_to_sleep`: `schedule_timeout(HZ/10)`): the nap's end
//! and the window in which a wakeup counts `kswapd_low_wmark_hit_quickly`
//! follow the setting; its range.

use super::fault_anon;
use super::kswapd_nap::kswapd_woken;
use crate::event::Event;
use crate::sim::Sim;
use crate::tracepoint::{TracepointConfig, Tracer};

/// [`kswapd_woken`]'s machine with kswapd's nap `nap_ms` long and the
/// `mm_vmscan_kswapd_sleep` tracepoint on (from kswapd's wakeup: no full
/// sleep comes before), then 20 ms for its first run. Returns the machine
/// and its VMA.
fn after_first_run(nap_ms: u32) -> (Sim, u32) {
    let (mut s, vma) = kswapd_woken(true, |c| c.compaction.kswapd_nap_ms = nap_ms);
    s.tp = Tracer::new(&TracepointConfig {
        events: vec!["vmscan:mm_vmscan_kswapd_sleep".into()],
        max_events: 1000,
        ..Default::default()
    });
    s.step(&Event::Think { ns: 20_000_000 });
    s.step(&Event::Think { ns: 1 });
    (s, vma)
}

#[test]
fn the_nap_lasts_kswapd_nap_ms_and_bounds_a_quick_wakeup() {
    let mut seen = Vec::new();
    for nap_ms in [100, 10] {
        let (mut s, vma) = after_first_run(nap_ms);
        // The first run ended at 10.41 ms (as in kswapd_nap.rs): the nap
        // ends nap_ms later.
        assert!(!s.kswapd.running);
        let slept = s.kswapd.slept_at;
        assert_eq!(slept, 10_409_856);
        assert_eq!(s.kswapd.nap_until, slept + u64::from(nap_ms) * 1_000_000);
        // Faults bring the free pages to the low watermark at 28.2 ms.
        let runs = s.vm.pageoutrun;
        let mut i = 4096;
        while s.vm.pageoutrun == runs {
            fault_anon(&mut s, vma, i);
            i += 1;
        }
        seen.push((
            nap_ms,
            s.clock,
            s.vm.kswapd_low_wmark_hit_quickly,
            s.vm.kswapd_high_wmark_hit_quickly,
            s.tp.as_ref().unwrap().records.len(),
        ));
    }
    // HZ/10: the wakeup at 28.2 ms is within the nap (low_wmark_hit_quickly,
    // no full sleep). 10 ms: the nap ended at 20.41 ms with the node still
    // above the high watermark, kswapd went to sleep for good
    // (mm_vmscan_kswapd_sleep) and the wakeup counts nothing.
    assert_eq!(
        seen,
        vec![(100, 28_207_551, 1, 1, 0), (10, 28_207_551, 0, 1, 1)]
    );
}

#[test]
fn kswapd_nap_ms_out_of_range_is_an_error_naming_the_field() {
    for ms in [0, 60_001] {
        let mut c = crate::config::MachineConfig::default();
        c.compaction.kswapd_nap_ms = ms;
        let e = c.validate().unwrap_err().to_string();
        assert_eq!(
            e,
            format!(
                "machine.compaction.kswapd_nap_ms: {ms} is out of range (allowed: 1..=60000, \
                 ms of simulated time; the kernel's HZ/10 is 100)"
            )
        );
    }
}
