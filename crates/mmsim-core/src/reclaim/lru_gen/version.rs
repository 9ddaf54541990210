//! The MGLRU version as a type, so that a per-folio loop tests it once.
//!
//! The three models ([`MglruVersion`]: v6.1, v6.12, v6.14) differ in
//! small clauses spread over `lru_gen_add_folio`, `sort_folio`,
//! `isolate_folio` and `lru_gen_refault`. Tested at run time, each clause
//! reloads the policy and branches for every folio. The hot entry points
//! instead match the version once ([`with_version!`]) and run a body
//! generic over [`Ver`], in which every `X::V == MglruVersion::…` is a
//! constant: one copy of the body per version, with the other versions'
//! clauses compiled out. The behaviour is the same as testing `v` (the
//! results digest is unchanged).

use serde::{Deserialize, Serialize};

use crate::config::MglruVersion;

/// A multi-gen LRU version known at compile time.
pub(crate) trait Ver {
    /// The version.
    const V: MglruVersion;
}

/// [`MglruVersion::V6_1`] as a type.
pub(crate) struct V61;
/// [`MglruVersion::V6_12`] as a type.
pub(crate) struct V612;
/// [`MglruVersion::V6_14`] as a type.
pub(crate) struct V614;

impl Ver for V61 {
    const V: MglruVersion = MglruVersion::V6_1;
}
impl Ver for V612 {
    const V: MglruVersion = MglruVersion::V6_12;
}
impl Ver for V614 {
    const V: MglruVersion = MglruVersion::V6_14;
}

/// `with_version!(v, X => expr)`: evaluates `expr` with the type `X` bound
/// to the [`Ver`] of the run-time version `v` (one match, three
/// monomorphised copies of `expr`).
macro_rules! with_version {
    ($v:expr, $X:ident => $body:expr) => {
        match $v {
            $crate::config::MglruVersion::V6_14 => {
                type $X = $crate::reclaim::lru_gen::version::V614;
                $body
            }
            $crate::config::MglruVersion::V6_12 => {
                type $X = $crate::reclaim::lru_gen::version::V612;
                $body
            }
            $crate::config::MglruVersion::V6_1 => {
                type $X = $crate::reclaim::lru_gen::version::V61;
                $body
            }
        }
    };
}
pub(crate) use with_version;

/// Which multi-gen LRU refaults `lru_gen_refault()` counts in
/// `WORKINGSET_ACTIVATE_{ANON,FILE}` (the v6.14 model; v6.1 counts the
/// folios `sort_folio()` protects instead).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum MglruRefaultActivate {
    /// 6.14+ ("mm/mglru: rework workingset protection"): only a refault in a
    /// page fault, whose folio `folio_add_lru()` activates.
    #[default]
    Fault,
    /// Before that rework (6.12 and 6.13): every refault whose shadow passes
    /// `lru_gen_test_recent()`, buffered reads included (the 6.12 guest counts
    /// `workingset_activate_file` = `workingset_refault_file`).
    Recent,
}

crate::setting_names! { MglruRefaultActivate, "mglru_refault_activate",
    Fault => "fault",
    Recent => "recent",
}
