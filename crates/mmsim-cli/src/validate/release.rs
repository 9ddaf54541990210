//! The mmsim settings a kernel release implies: which multi-gen LRU model, which
//! memcg statistics flush, and which stable backports, from `uname -r` of the
//! kernel that ran a case ([`super::sim_scenario`] writes them into the replay).

/// Kernel `release`'s version, patch level and sublevel as numbers
/// (`6.12.107+deb13-cloud-amd64` → (6, 12, 107)); a part that is missing or not a
/// number is 0.
pub(super) fn release_version(release: &str) -> (u32, u32, u32) {
    let mut parts = release
        .split(|c: char| !c.is_ascii_digit())
        .map(|p| p.parse().unwrap_or(0));
    let mut next = || parts.next().unwrap_or(0);
    (next(), next(), next())
}

/// The modelled multi-gen LRU closest to kernel `release` (`6.1.0-50-cloud-amd64`):
/// `v6.1` before 6.12, `v6.12` for 6.12 and 6.13 (the "mm/mglru: rework
/// workingset protection" series, which the `v6.14` model follows, is 6.14's), else
/// `v6.14`. 6.1 counts an anon refault in `workingset_refault_anon` only when its
/// eviction generation is still `min_seq` (half of them in `guest-anon-zipf-mglru`);
/// 6.12 counts every one, as v6.14 does.
pub fn mglru_version_of(release: &str) -> mmsim_core::config::MglruVersion {
    let (major, minor, _) = release_version(release);
    if (major, minor) < (6, 12) {
        mmsim_core::config::MglruVersion::V6_1
    } else if (major, minor) < (6, 14) {
        mmsim_core::config::MglruVersion::V6_12
    } else {
        mmsim_core::config::MglruVersion::V6_14
    }
}

/// What counts `WORKINGSET_ACTIVATE_*` on a multi-gen LRU refault in kernel
/// `release`: every recent refault in 6.12 and 6.13 (before "mm/mglru: rework
/// workingset protection", 6.14), only faults from 6.14 (and the v6.1 model,
/// used before 6.12, ignores it).
pub fn mglru_refault_activate_of(release: &str) -> mmsim_core::MglruRefaultActivate {
    let (major, minor, _) = release_version(release);
    if (major, minor) < (6, 14) {
        mmsim_core::MglruRefaultActivate::Recent
    } else {
        mmsim_core::MglruRefaultActivate::Fault
    }
}

/// The memcg statistics flush of reclaim in kernel `release`: `ratelimited`
/// from 6.12 ("memcg: use ratelimited stats flush in the reclaim": reclaim
/// reads statistics up to 2 s old), `sync` before.
pub fn memcg_stats_flush_of(release: &str) -> mmsim_core::MemcgStatsFlush {
    let (major, minor, _) = release_version(release);
    if (major, minor) < (6, 12) {
        mmsim_core::MemcgStatsFlush::Sync
    } else {
        mmsim_core::MemcgStatsFlush::Ratelimited
    }
}

/// Whether kernel `release` has "mm/mglru: fix underprotected page cache" in its 6.1
/// form (the v6.1 model's `mglru_fix_underprotected`): 6.1 stable from 6.1.69, which
/// Debian's bookworm kernels carry from ABI 6.1.0-17 (6.1.69-1) on; Debian names its
/// 6.1 releases `6.1.0-<abi>-<flavour>`, whose stable version `uname -r` does not show.
pub fn mglru_fix_underprotected_of(release: &str) -> bool {
    let nums: Vec<u32> = release
        .split(|c: char| !c.is_ascii_digit())
        .take(4)
        .map(|p| p.parse().unwrap_or(0))
        .collect();
    match nums.as_slice() {
        [6, 1, 0, abi, ..] if release.starts_with("6.1.0-") => *abi >= 17,
        [6, 1, patch, ..] => *patch >= 69,
        _ => false,
    }
}

/// Whether kernel `release` has "mm/mglru: reset page lru tier bits when
/// activating" (the v6.12 model's `mglru_reset_tier_bits`): mainline from 6.13,
/// 6.12 stable from 6.12.114 (Debian's changelog lists it under 6.12.114; its
/// 6.12.107 source lacks it, its 6.12.117 source has it).
pub fn mglru_reset_tier_bits_of(release: &str) -> bool {
    match release_version(release) {
        (6, 12, sub) => sub >= 114,
        (major, minor, _) => (major, minor) == (6, 13),
    }
}

/// Whether 6.12 kernel `release` has "mm/mglru: use the common routine for
/// dirty/writeback reactivation" (the v6.12 model's `mglru_common_reactivation`):
/// 6.12 stable from 6.12.114, with the tier-bits reset; not 6.13, whose
/// `sort_folio()` keeps the clause.
pub fn mglru_common_reactivation_of(release: &str) -> bool {
    matches!(release_version(release), (6, 12, sub) if sub >= 114)
}

#[cfg(test)]
mod tests {
    use super::{
        memcg_stats_flush_of, mglru_common_reactivation_of, mglru_fix_underprotected_of,
        mglru_refault_activate_of, mglru_reset_tier_bits_of, mglru_version_of,
    };
    use mmsim_core::config::MglruVersion;

    #[test]
    fn kernel_releases_map_to_the_closest_mglru_model() {
        assert_eq!(mglru_version_of("6.1.0-50-cloud-amd64"), MglruVersion::V6_1);
        assert_eq!(mglru_version_of("6.11.3"), MglruVersion::V6_1);
        assert_eq!(
            mglru_version_of("6.12.107+deb13-cloud-amd64"),
            MglruVersion::V6_12
        );
        assert_eq!(mglru_version_of("6.13.2"), MglruVersion::V6_12);
        assert_eq!(mglru_version_of("6.14.0"), MglruVersion::V6_14);
        assert_eq!(mglru_version_of("6.18.44-fc-v657"), MglruVersion::V6_14);
        assert_eq!(mglru_version_of("7.0"), MglruVersion::V6_14);
        assert_eq!(mglru_version_of("garbage"), MglruVersion::V6_1);
    }

    #[test]
    fn kernel_releases_map_to_their_memcg_stats_flush() {
        use mmsim_core::MemcgStatsFlush::{Ratelimited, Sync};
        assert_eq!(memcg_stats_flush_of("6.1.0-50-cloud-amd64"), Sync);
        assert_eq!(memcg_stats_flush_of("6.11.9"), Sync);
        assert_eq!(
            memcg_stats_flush_of("6.12.107+deb13-cloud-amd64"),
            Ratelimited
        );
        assert_eq!(memcg_stats_flush_of("6.18.44-fc-v657"), Ratelimited);
        assert_eq!(memcg_stats_flush_of("garbage"), Sync);
    }

    #[test]
    fn kernel_releases_map_to_their_mglru_refault_activation() {
        use mmsim_core::MglruRefaultActivate::{Fault, Recent};
        assert_eq!(
            mglru_refault_activate_of("6.12.107+deb13-cloud-amd64"),
            Recent
        );
        assert_eq!(mglru_refault_activate_of("6.13.2"), Recent);
        assert_eq!(mglru_refault_activate_of("6.14.0"), Fault);
        assert_eq!(mglru_refault_activate_of("6.18.44-fc-v657"), Fault);
    }

    #[test]
    fn kernel_releases_map_to_the_6_1_stable_mglru_protection() {
        assert!(mglru_fix_underprotected_of("6.1.0-50-cloud-amd64"));
        assert!(mglru_fix_underprotected_of("6.1.0-17-amd64"));
        assert!(!mglru_fix_underprotected_of("6.1.0-16-amd64"));
        assert!(mglru_fix_underprotected_of("6.1.69"));
        assert!(!mglru_fix_underprotected_of("6.1.68"));
        assert!(!mglru_fix_underprotected_of("6.1.0"));
        assert!(!mglru_fix_underprotected_of("6.12.107+deb13-cloud-amd64"));
        assert!(!mglru_fix_underprotected_of("garbage"));
        // 6.12.114's backports: the guest's 6.12.107 has neither; 6.13 the reset only.
        for (release, reset, common) in [
            ("6.12.107+deb13-cloud-amd64", false, false),
            ("6.12.113", false, false),
            ("6.12.114", true, true),
            ("6.12.117+deb13-amd64", true, true),
            ("6.12", false, false),
            ("6.13.2", true, false),
            ("6.1.0-50-cloud-amd64", false, false),
            ("6.14.0", false, false),
            ("garbage", false, false),
        ] {
            assert_eq!(mglru_reset_tier_bits_of(release), reset, "{release}");
            assert_eq!(mglru_common_reactivation_of(release), common, "{release}");
        }
    }
}
