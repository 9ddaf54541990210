//! Serde defaults and skip tests of `crate::config`'s fields (split out of
//! config.rs to keep it short; config.rs imports them all).

use crate::config::{DeviceConfig, DeviceKind};

pub(crate) fn default_cpus() -> u32 {
    1
}

pub(crate) fn is_zero(v: &u64) -> bool {
    *v == 0
}

pub(crate) fn default_read_ahead_kb() -> u32 {
    128
}
pub(crate) fn default_max_sectors_kb() -> u32 {
    1280
}
pub(crate) fn default_fault_around_bytes() -> u32 {
    65536
}

pub(crate) fn default_wsf() -> u32 {
    10
}
pub(crate) fn default_swappiness() -> u32 {
    60
}
pub(crate) fn default_page_cluster() -> u32 {
    3
}
pub(crate) fn default_swap() -> DeviceConfig {
    DeviceConfig::of(DeviceKind::None)
}
pub(crate) fn default_fs() -> DeviceConfig {
    DeviceConfig::of(DeviceKind::Ssd)
}

pub(crate) fn is_zero_u32(v: &u32) -> bool {
    *v == 0
}
