//! Rule tests of the multi-gen LRU: scripted event sequences with the exact
//! outcome each version's code dictates (v6.1 and v6.14 where they differ).
//! The helpers are here; the tests are in one submodule per mechanism (`aging`,
//! `pid_ctrl`, `eviction`, `walk`, `knobs`) or per version and change (`v6_12`,
//! `variants`, `abort_v6_1`, `dirty`, `debugfs_walk`).

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

/// Runs the debugfs `+` command on the top group with force_scan.
fn age(s: &mut Sim) {
    let max = s.lru_gen_folio(0).max_seq;
    s.lru_gen_run_aging(0, max, Some(100), true).unwrap();
}

/// Sets the PID counters of group 0.
fn ctrl(s: &mut Sim, ty: usize, tier: usize, refaulted: u64, evicted: u64) {
    let lg = &mut s.memcgs[0].lruvec.lrugen;
    lg.refaulted[ty][tier] = refaulted;
    lg.evicted[ty][tier] = evicted;
}

fn age_no_force(s: &mut Sim) {
    let max = s.lru_gen_folio(0).max_seq;
    s.lru_gen_run_aging(0, max, Some(100), false).unwrap();
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
    let tag = s.folios.lru(f);
    assert!(is_lru_gen_tag(tag), "on an MGLRU list");
    let gen = ((tag - LRU_GEN_TAG) / 2) as usize;
    let lg = s.lru_gen_folio(0);
    (lg.max_seq.saturating_sub(3)..=lg.max_seq)
        .find(|&q| lru_gen_from_seq(q) == gen)
        .unwrap()
}

mod abort_v6_1;
mod aging;
mod debugfs_walk;
mod dirty;
mod eviction;
mod knobs;
mod pid_ctrl;
mod v6_12;
mod variants;
mod walk;
