//! Rule tests of MGLRU's PID controller: the type and tiers it protects from
//! refaults over gains, its moving average, `order_base_2` and `positive_ctrl_err`.

use super::*;

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
