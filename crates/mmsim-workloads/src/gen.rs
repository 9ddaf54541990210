//! Event generators: one per workload, filling batches of [`Event`]s.
//!
//! A [`Generator`] is an enum over the access patterns and the program models (whose
//! generators live in [`crate::models`]), so the per-event path is a `match` outside a
//! tight loop: no dynamic dispatch, no allocation per event. [`Generator::fill`] appends
//! up to `max` events to a caller's reused buffer. [`Generator::build`] creates a
//! workload's tasks, files and mappings in the simulator and its generator.
//!
//! Randomness: every generator owns one [`Pcg64Mcg`] stream seeded by
//! [`workload_seed`] from the scenario seed and the workload's index, so workloads do
//! not perturb each other and the same scenario and seed give the same events on every
//! machine. (The zipf samplers, `rand_distr::Zipf` and [`crate::zipf::ZipfAlias`], compute
//! with `f64` `powf`/`ln`/`exp`; these are correctly rounded or nearly so on every
//! mainstream libm, but a platform whose libm differs in the last bit could in principle
//! draw a different rank.)

use std::path::{Path, PathBuf};

use mmsim_core::memcg::{MemcgId, ROOT};
use mmsim_core::{Advice, Event, Fd, FileId, Sim, SimError, VmaId};
use rand::{Rng, RngCore, SeedableRng};
use rand_distr::{Distribution, Zipf};
use rand_pcg::Pcg64Mcg;

use crate::error::WorkloadError;
use crate::models::dd::DdGen;
use crate::models::eater::EaterGen;
use crate::models::fio::FioGen;
use crate::models::kbuild::KbuildGen;
use crate::models::kv::KvGen;
use crate::models::pgbench::PgbenchGen;
use crate::models::tabs::TabsGen;
use crate::scenario::{
    Target, TraceKeys, WorkloadKind, WorkloadSpec, ZipfSampler, MAX_PAGES, OFFSET_DEFAULT_PAGES,
};
use crate::trace_gen::TraceGen;
pub use crate::trace_gen::TraceReport;
use crate::zipf::{KeptRanks, ZipfAlias};

/// Pages a PMD entry maps (`HPAGE_PMD_NR`, x86-64 with 4 KiB pages): the unit in
/// which `zap_pmd_range` skips empty page tables (`touch` with `unmap`).
const HPAGE_PMD_NR: u64 = 512;

/// Where a workload's events go: the VMA it loads from and stores to, or the file it
/// reads and writes through a descriptor.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Sink {
    /// `Event::Access` to this VMA (anonymous or a file mapping).
    Vma(VmaId),
    /// `Event::FileRead` / `Event::FileWrite` of this file.
    File(FileId),
}

impl Sink {
    /// Creates the task `name` and its region of `pages` pages on `target` in `sim`:
    /// an anonymous VMA, a file (named `name`), or a file and a shared, private or
    /// executable mapping of all of it. The task runs in the top group `/`.
    pub fn setup(
        sim: &mut Sim,
        name: &str,
        target: Target,
        pages: u64,
        advice: Advice,
    ) -> Result<Sink, SimError> {
        Sink::setup_in(sim, name, target, pages, advice, ROOT)
    }

    /// [`Sink::setup`] with the task attached to memory cgroup `memcg`; a `file` target
    /// is opened by the task, so its page cache is charged to `memcg`.
    pub fn setup_in(
        sim: &mut Sim,
        name: &str,
        target: Target,
        pages: u64,
        advice: Advice,
        memcg: MemcgId,
    ) -> Result<Sink, SimError> {
        let task = sim.add_task(name);
        sim.attach_task(task, memcg)?;
        Ok(match target {
            Target::Anon => Sink::Vma(sim.mmap_anon(task, pages)?),
            Target::File => {
                let file = sim.add_file(name, pages)?;
                sim.open(file, task)?;
                sim.fadvise(file, advice)?;
                Sink::File(file)
            }
            Target::Mmap | Target::MmapExec => {
                let file = sim.add_file(name, pages)?;
                let vma = sim.mmap_file(task, file, 0, pages, target == Target::MmapExec)?;
                sim.madvise(vma, advice)?;
                Sink::Vma(vma)
            }
            Target::MmapPrivate => {
                let file = sim.add_file(name, pages)?;
                let vma = sim.mmap_file_private(task, file, 0, pages)?;
                sim.madvise(vma, advice)?;
                Sink::Vma(vma)
            }
        })
    }

    /// The event touching page `index` (a write or not).
    #[inline(always)]
    pub fn event(self, index: u32, write: bool) -> Event {
        match self {
            Sink::Vma(vma) => Event::Access { vma, index, write },
            Sink::File(file) if write => Event::FileWrite {
                file,
                index,
                pages: 1,
            },
            Sink::File(file) => Event::FileRead {
                file,
                index,
                pages: 1,
            },
        }
    }
}

/// `path` resolved against the scenario's directory `base_dir` (if relative).
fn resolve(path: &Path, base_dir: Option<&Path>) -> PathBuf {
    match base_dir {
        Some(dir) if path.is_relative() && !dir.as_os_str().is_empty() => dir.join(path),
        _ => path.to_path_buf(),
    }
}

/// The seed of workload number `index`'s random stream: SplitMix64 of the scenario seed
/// combined with the index, so neighbouring seeds and indices give unrelated streams.
pub fn workload_seed(scenario_seed: u64, index: usize) -> u64 {
    splitmix64(scenario_seed ^ splitmix64(index as u64 ^ 0x6d6d_7369_6d00_0000))
}

fn splitmix64(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// A fixed pseudo-random permutation of `0..n` in O(1) memory: a 4-round balanced
/// Feistel network on the smallest even number of bits covering `n`, with cycle-walking
/// (re-apply until the value falls below `n`, fewer than 4 rounds on average).
#[derive(Clone, Debug)]
pub struct Permutation {
    n: u64,
    half_bits: u32,
    mask: u64,
    keys: [u64; 4],
}

impl Permutation {
    /// The permutation of `0..n` (n ≥ 1) selected by `rng`.
    pub fn new(n: u64, rng: &mut impl RngCore) -> Permutation {
        let bits = (64 - (n.max(2) - 1).leading_zeros()).max(2);
        let half_bits = bits.div_ceil(2);
        Permutation {
            n,
            half_bits,
            mask: (1u64 << half_bits) - 1,
            keys: [
                rng.next_u64(),
                rng.next_u64(),
                rng.next_u64(),
                rng.next_u64(),
            ],
        }
    }

    #[inline]
    fn round(&self, x: u64) -> u64 {
        let (mut l, mut r) = (x >> self.half_bits, x & self.mask);
        for k in self.keys {
            let f = splitmix64(r ^ k) & self.mask;
            (l, r) = (r, l ^ f);
        }
        (l << self.half_bits) | r
    }

    /// The image of `x` (< n).
    #[inline]
    pub fn apply(&self, x: u64) -> u64 {
        let mut y = self.round(x);
        while y >= self.n {
            y = self.round(y);
        }
        y
    }

    /// The Feistel rounds of [`Permutation::round`] undone.
    fn unround(&self, y: u64) -> u64 {
        let (mut l, mut r) = (y >> self.half_bits, y & self.mask);
        for k in self.keys.iter().rev() {
            let f = splitmix64(l ^ k) & self.mask;
            (l, r) = (r ^ f, l);
        }
        (l << self.half_bits) | r
    }

    /// The preimage of `y` (< n): `apply(invert(y)) == y`. Cycle-walking backwards
    /// stays on the same cycle, so it ends at the one value below `n` that maps to `y`.
    pub fn invert(&self, y: u64) -> u64 {
        let mut x = self.unround(y);
        while x >= self.n {
            x = self.unround(x);
        }
        x
    }
}

/// Decides per event whether it is a write, from a fraction.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Writes {
    Never,
    Always,
    /// A write if the next 64-bit draw is below this threshold (fraction × 2^64).
    Below(u64),
}

impl Writes {
    fn new(ratio: f64) -> Writes {
        if ratio <= 0.0 {
            Writes::Never
        } else if ratio >= 1.0 {
            Writes::Always
        } else {
            Writes::Below((ratio * 18_446_744_073_709_551_616.0) as u64)
        }
    }

    #[inline(always)]
    pub(crate) fn draw(self, rng: &mut Pcg64Mcg) -> bool {
        match self {
            Writes::Never => false,
            Writes::Always => true,
            Writes::Below(t) => rng.next_u64() < t,
        }
    }
}

#[derive(Debug)]
enum Pattern {
    Uniform {
        pages: u32,
    },
    Zipf {
        zipf: Zipf<f64>,
        n: u64,
        perm: Option<Permutation>,
    },
    /// Zipf with `sampler = "alias"` ([`ZipfAlias`]): ranks already in `1..=n`.
    ZipfAlias {
        zipf: Box<ZipfAlias>,
        perm: Option<Permutation>,
    },
    /// `ZipfAlias` in a sampled run: only the kept pages are drawn ([`KeptRanks`]),
    /// with the offered events between them drawn as one geometric gap.
    ZipfKept(Box<KeptRanks>),
    /// Sequential, loop and touch: `next` cycles through `0..pages` by `step`.
    Sequential {
        pages: u32,
        next: u32,
        step: u32,
    },
    /// `touch` with `unmap` (or `remap`, or `fork_writes`): `next` steps through
    /// `0..pages` by `step`; after the last touch of a pass (`next == u32::MAX`)
    /// one `Event::Discard` of `zap` pages from page 0 ends the pass (with
    /// `remap`, one `Event::Remap`; with `fork_writes`, one `Event::Fork`;
    /// `pages` 0: no touches, every pass the remap alone).
    TouchUnmap {
        vma: VmaId,
        pages: u32,
        next: u32,
        step: u32,
        zap: u32,
        remap: bool,
        /// `fork_writes`: the pass ends with an `Event::Fork` instead.
        fork: Option<u32>,
    },
    /// `touch` with `skip_every`: `next` runs through `0..pages` (once per pass),
    /// leaving out each index ≡ `offset` (mod `every`).
    TouchSkip {
        pages: u32,
        next: u32,
        every: u32,
        offset: u32,
    },
    HotCold {
        hot: u32,
        cold: u32,
        /// Hot if the next draw is below this (hot_probability × 2^64); `None`: always hot.
        hot_below: Option<u64>,
    },
    Trace(Box<TraceGen>),
    Fio(Box<FioGen>),
    Kv(Box<KvGen>),
    Pgbench(Box<PgbenchGen>),
    Dd(DdGen),
    Eater(Box<EaterGen>),
    Kbuild(Box<KbuildGen>),
    Tabs(Box<TabsGen>),
}

/// The event source of one workload.
#[derive(Debug)]
pub struct Generator {
    sink: Sink,
    writes: Writes,
    rng: Pcg64Mcg,
    /// Events still to generate (synthetic patterns).
    left: u64,
    pattern: Pattern,
    /// A sampled run's page sampler (`crate::sample`); None: every event.
    sampler: Option<Box<crate::sample::PageSampler>>,
    /// `touch` with `collapse`, `advise_after` or `snapshots`: the events
    /// still to issue after the last touch, last first (`Event::Collapse`,
    /// `Event::ThpAdvice`, then one `Event::Think` per snapshot gap).
    tail: Vec<Event>,
    /// `opens = N`: the descriptors the reads take turns on (None: every read is
    /// an `Event::FileRead` of the file's one `read()` state).
    opens: Option<Opens>,
}

/// The N open file descriptions of a workload's `opens = N` (see
/// [`WorkloadSpec::opens`]), read round-robin: read k through `first + k mod n`;
/// with `open_offsets` ([`WorkloadSpec::open_offsets`]) at the reader's start
/// page plus the pattern's page divided by N, wrapped at the file's `pages`.
#[derive(Clone, Debug)]
struct Opens {
    first: Fd,
    n: u32,
    next: u32,
    starts: Option<Vec<u32>>,
    pages: u32,
}

impl Opens {
    /// `open()`s `file` `n` times by `task` (`do_dentry_open()` →
    /// `file_ra_state_init()`, fs/open.c, v6.12: each a `struct file` with its own
    /// `f_ra`, [`Sim::open_file`]) and gives `advice` to each
    /// (`generic_fadvise()`, mm/fadvise.c, on that `struct file` only,
    /// [`Sim::fadvise_fd`]).
    fn open(
        sim: &mut Sim,
        file: FileId,
        task: mmsim_core::TaskId,
        n: u64,
        advice: Advice,
    ) -> Result<Opens, SimError> {
        let first = sim.nr_fds() as Fd;
        for _ in 0..n {
            let fd = sim.open_file(file, task)?;
            sim.fadvise_fd(fd, advice)?;
        }
        Ok(Opens {
            first,
            n: n.clamp(1, crate::scenario::MAX_OPENS) as u32,
            next: 0,
            starts: None,
            pages: 0,
        })
    }

    /// Each `Event::FileRead` of `events` becomes an `Event::FdRead` through the
    /// next descriptor in turn; writes and other events pass unchanged.
    fn route(&mut self, events: &mut [Event]) {
        for e in events {
            if let Event::FileRead { index, pages, .. } = *e {
                let index = match &self.starts {
                    None => index,
                    Some(starts) => {
                        let at = u64::from(starts[self.next as usize]) + u64::from(index / self.n);
                        let p = u64::from(self.pages);
                        (if at >= p { at - p } else { at }) as u32
                    }
                };
                *e = Event::FdRead {
                    fd: self.first + self.next,
                    index,
                    pages,
                };
                self.next = if self.next + 1 == self.n {
                    0
                } else {
                    self.next + 1
                };
            }
        }
    }
}

impl Generator {
    /// The generator of `spec`, drawing from the stream `seed` (see [`workload_seed`]),
    /// sending its events to `sink`. A trace is opened now (relative paths against
    /// `base_dir`); `what` names the workload in errors (e.g. `workload[0] "db"`).
    ///
    /// `spec` must be valid ([`Scenario::validate`](crate::Scenario::validate)); values
    /// out of range are clamped, never a panic. A model kind (`fio`, `kv`, …) creates its
    /// own tasks and files: use [`Generator::build`]; here it is an error.
    pub fn new(
        spec: &WorkloadSpec,
        seed: u64,
        sink: Sink,
        what: &str,
        base_dir: Option<&Path>,
    ) -> Result<Generator, WorkloadError> {
        if spec.kind.is_model() {
            return Err(WorkloadError::Invalid {
                file: what.to_string(),
                field: "kind".into(),
                message: format!(
                    "kind `{}` creates its own tasks and files: build it with Generator::build",
                    spec.kind.name()
                ),
            });
        }
        let mut rng = Pcg64Mcg::seed_from_u64(seed);
        let clamp_pages = |p: u64| p.clamp(1, MAX_PAGES);
        let (left, pattern) = match &spec.kind {
            WorkloadKind::Uniform { pages, accesses } => (
                *accesses,
                Pattern::Uniform {
                    pages: clamp_pages(*pages).min(u32::MAX as u64) as u32,
                },
            ),
            WorkloadKind::Zipf {
                pages,
                theta,
                accesses,
                scatter,
                sampler,
            } => {
                let n = clamp_pages(*pages);
                let theta = if theta.is_finite() {
                    theta.clamp(0.0, crate::scenario::MAX_THETA)
                } else {
                    0.0
                };
                let zipf = Zipf::new(n as f64, theta).map_err(|e| WorkloadError::Invalid {
                    file: what.to_string(),
                    field: "theta".into(),
                    message: e.to_string(),
                })?;
                let perm = scatter.then(|| Permutation::new(n, &mut rng));
                let pattern = match sampler {
                    ZipfSampler::RejectionInversion => Pattern::Zipf { zipf, n, perm },
                    ZipfSampler::Alias => Pattern::ZipfAlias {
                        zipf: Box::new(ZipfAlias::new(n, theta)),
                        perm,
                    },
                };
                (*accesses, pattern)
            }
            WorkloadKind::Sequential { pages, passes: k }
            | WorkloadKind::Loop {
                pages,
                iterations: k,
            } => {
                let pages = clamp_pages(*pages);
                (
                    pages.saturating_mul(*k),
                    Pattern::Sequential {
                        pages: pages as u32,
                        next: 0,
                        step: 1,
                    },
                )
            }
            WorkloadKind::Touch {
                pages,
                stride,
                passes,
                unmap,
                remap,
                fork_writes,
                touched,
                skip_every,
                skip_offset,
                ..
            } => {
                // Only the first `touched` pages (the region stays `pages` long).
                let pages = clamp_pages(touched.unwrap_or(*pages).min(*pages));
                let step = (*stride).clamp(1, pages);
                let touches = pages.div_ceil(step);
                let fork = fork_writes.map(|n| n.min(u64::from(u32::MAX)) as u32);
                match (*unmap || *remap || fork.is_some(), sink, *skip_every) {
                    (true, Sink::Vma(vma), _) if *touched == Some(0) => (
                        // `remap` without touches: each pass is the remap alone.
                        *passes,
                        Pattern::TouchUnmap {
                            vma,
                            pages: 0,
                            next: u32::MAX,
                            step: 1,
                            zap: 0,
                            remap: true,
                            fork: None,
                        },
                    ),
                    (true, Sink::Vma(vma), _) => {
                        // From page 0 to the end of the last touch's PMD range.
                        let last = (touches - 1) * step;
                        let zap = (last / HPAGE_PMD_NR + 1) * HPAGE_PMD_NR;
                        (
                            (touches + 1).saturating_mul(*passes),
                            Pattern::TouchUnmap {
                                vma,
                                pages: pages as u32,
                                next: 0,
                                step: step as u32,
                                zap: zap.min(pages) as u32,
                                remap: *remap,
                                fork,
                            },
                        )
                    }
                    (_, _, Some(every)) if every >= 2 => {
                        let every = every.min(1 << 31);
                        let offset = (*skip_offset).min(every - 1);
                        let skipped = pages / every + u64::from(pages % every > offset);
                        (
                            (pages - skipped).saturating_mul(*passes),
                            Pattern::TouchSkip {
                                pages: pages as u32,
                                next: 0,
                                every: every as u32,
                                offset: offset as u32,
                            },
                        )
                    }
                    _ => (
                        touches.saturating_mul(*passes),
                        Pattern::Sequential {
                            pages: pages as u32,
                            next: 0,
                            step: step as u32,
                        },
                    ),
                }
            }
            WorkloadKind::HotCold {
                pages,
                hot_fraction,
                hot_probability,
                accesses,
            } => {
                let pages = clamp_pages(*pages);
                let hot = ((pages as f64 * hot_fraction).round() as u64).clamp(1, pages);
                let cold = pages - hot;
                let hot_below = if cold == 0 || *hot_probability >= 1.0 {
                    None
                } else {
                    Some((hot_probability.max(0.0) * 18_446_744_073_709_551_616.0) as u64)
                };
                (
                    *accesses,
                    Pattern::HotCold {
                        hot: hot as u32,
                        cold: cold as u32,
                        hot_below,
                    },
                )
            }
            WorkloadKind::Trace {
                path,
                format,
                limit,
                pages,
                keys,
                read_calls,
                ..
            } => {
                let resolved = resolve(path, base_dir);
                let gen = TraceGen::open(
                    what,
                    &resolved,
                    *format,
                    *read_calls,
                    *limit,
                    pages.unwrap_or(match keys {
                        TraceKeys::Dense => MAX_PAGES,
                        TraceKeys::Offset => OFFSET_DEFAULT_PAGES,
                    }),
                    *keys,
                    sink,
                )?;
                (u64::MAX, Pattern::Trace(Box::new(gen)))
            }
            WorkloadKind::Fio(_)
            | WorkloadKind::Kv(_)
            | WorkloadKind::Pgbench(_)
            | WorkloadKind::Dd(_)
            | WorkloadKind::Eater(_)
            | WorkloadKind::Kbuild(_)
            | WorkloadKind::Tabs(_) => unreachable!("models are rejected above"),
        };
        let mut tail = Vec::new();
        if let (
            WorkloadKind::Touch {
                collapse,
                pages,
                advise_after,
                snapshots,
                ..
            },
            Sink::Vma(vma),
        ) = (&spec.kind, sink)
        {
            if *collapse {
                tail.push(Event::Collapse {
                    vma,
                    index: 0,
                    pages: clamp_pages(*pages) as u32,
                });
            }
            if let Some(advice) = *advise_after {
                tail.push(Event::ThpAdvice { vma, advice });
            }
            tail.extend(crate::scenario::snapshot_waits(snapshots).map(|ns| Event::Think { ns }));
            tail.reverse();
        }
        Ok(Generator {
            sink,
            writes: Writes::new(spec.effective_write_ratio()),
            rng,
            left,
            pattern,
            sampler: None,
            tail,
            opens: None,
        })
    }

    /// Creates workload `spec`'s task and region (or, for a model, its tasks, files and
    /// mappings) in `sim`, named after `name`, and its generator drawing from the
    /// stream `seed` (see [`workload_seed`]); `what` names the workload in errors (e.g.
    /// `workload[0] "db"`), `base_dir` resolves relative trace paths.
    ///
    /// The workload's tasks are attached to the memory cgroup at its
    /// [`cgroup_path`](WorkloadSpec::cgroup_path), which must exist in `sim` (see
    /// [`crate::cgroups::setup`]), and its files are opened by its tasks.
    ///
    /// `spec` must be valid ([`Scenario::validate`](crate::Scenario::validate)); values
    /// out of range are clamped, never a panic.
    pub fn build(
        sim: &mut Sim,
        spec: &WorkloadSpec,
        name: &str,
        seed: u64,
        what: &str,
        base_dir: Option<&Path>,
    ) -> Result<Generator, WorkloadError> {
        let setup = |source| WorkloadError::Setup {
            what: what.to_string(),
            source,
        };
        let advice = spec.effective_advice();
        let mut rng = Pcg64Mcg::seed_from_u64(seed);
        let path = spec.cgroup_path();
        let memcg = sim.memcg_by_path(path).ok_or_else(|| {
            setup(SimError::Setup(format!(
                "no memory cgroup `{path}` on the machine (declare it with [[cgroup]])"
            )))
        })?;
        let (sink, pattern) = match &spec.kind {
            WorkloadKind::Fio(f) => {
                let g = FioGen::setup(sim, f, name, advice, &mut rng, memcg).map_err(setup)?;
                (Sink::File(g.first_file()), Pattern::Fio(Box::new(g)))
            }
            WorkloadKind::Kv(k) => {
                let g = KvGen::setup(sim, k, name, memcg).map_err(setup)?;
                (Sink::Vma(g.vma()), Pattern::Kv(Box::new(g)))
            }
            WorkloadKind::Pgbench(p) => {
                let g = PgbenchGen::setup(sim, p, name, advice, memcg).map_err(setup)?;
                (Sink::Vma(g.buffers_vma()), Pattern::Pgbench(Box::new(g)))
            }
            WorkloadKind::Dd(d) => {
                let g = DdGen::setup(sim, d, name, advice, memcg).map_err(setup)?;
                (Sink::File(g.file()), Pattern::Dd(g))
            }
            WorkloadKind::Eater(e) => {
                let g = EaterGen::setup(sim, e, name, spec.effective_write_ratio(), memcg)
                    .map_err(setup)?;
                (Sink::Vma(g.vma()), Pattern::Eater(Box::new(g)))
            }
            WorkloadKind::Tabs(t) => {
                let g = TabsGen::setup(sim, t, name, spec.effective_write_ratio(), memcg)
                    .map_err(setup)?;
                (Sink::Vma(g.vma()), Pattern::Tabs(Box::new(g)))
            }
            WorkloadKind::Kbuild(k) => {
                let g = KbuildGen::setup(sim, k, name, advice, &mut rng, memcg).map_err(setup)?;
                (Sink::Vma(g.vma()), Pattern::Kbuild(Box::new(g)))
            }
            WorkloadKind::Trace {
                path,
                format,
                limit,
                pages,
                keys: TraceKeys::Offset,
                requests,
                faults,
                fault_mappings,
                read_calls,
            } => {
                let (g, sink) = TraceGen::setup_offset(
                    sim,
                    what,
                    name,
                    &resolve(path, base_dir),
                    *format,
                    *read_calls,
                    *limit,
                    *pages,
                    spec.target,
                    advice,
                    memcg,
                    *requests,
                    *faults,
                    *fault_mappings as u8,
                )?;
                return Ok(Generator {
                    sink,
                    writes: Writes::new(spec.effective_write_ratio()),
                    rng,
                    left: u64::MAX,
                    pattern: Pattern::Trace(Box::new(g)),
                    sampler: None,
                    tail: Vec::new(),
                    opens: None,
                });
            }
            _ if spec.opens.is_some() && spec.target == Target::File => {
                // As Sink::setup_in's `file`, plus the N opens.
                let task = sim.add_task(name);
                sim.attach_task(task, memcg).map_err(setup)?;
                let file = sim.add_file(name, spec.kind.pages()).map_err(setup)?;
                sim.open(file, task).map_err(setup)?;
                sim.fadvise(file, advice).map_err(setup)?;
                let n = spec.opens.unwrap_or(1);
                let mut opens = Opens::open(sim, file, task, n, advice).map_err(setup)?;
                if let Some(o) = &spec.open_offsets {
                    // Checked when the scenario was loaded.
                    let pages = spec.kind.pages();
                    opens.starts = o.starts(n, pages);
                    opens.pages = pages as u32;
                }
                let mut g = Generator::new(spec, seed, Sink::File(file), what, base_dir)?;
                g.opens = Some(opens);
                return Ok(g);
            }
            _ => {
                let sink = Sink::setup_in(sim, name, spec.target, spec.kind.pages(), advice, memcg)
                    .map_err(setup)?;
                if let (Some(thp), Sink::Vma(vma)) = (spec.thp_advice, sink) {
                    // `thp_advice`: madvise right after the mmap.
                    match spec.target {
                        Target::Anon => sim.madvise_thp(vma, thp),
                        _ => sim.madvise_file_hugepage(vma, thp),
                    }
                    .map_err(setup)?;
                }
                return Generator::new(spec, seed, sink, what, base_dir);
            }
        };
        Ok(Generator {
            sink,
            writes: Writes::Never,
            rng,
            left: u64::MAX,
            pattern,
            sampler: None,
            tail: Vec::new(),
            opens: None,
        })
    }

    /// Appends up to `max` events to `out`; returns how many. `Ok(0)` (with `max > 0`)
    /// means the workload is finished. A trace error is returned once, after the events
    /// before it.
    ///
    /// In a sampled run ([`Generator::sample`]) the events are the sampled ones (a
    /// read crossing sampled blocks may become several, so more than `max` may be
    /// appended); generation goes on until one is kept or the workload ends.
    pub fn fill(&mut self, out: &mut Vec<Event>, max: usize) -> Result<usize, WorkloadError> {
        if self.left == 0 && max > 0 {
            if let Some(e) = self.tail.pop() {
                out.push(e);
                return Ok(1);
            }
        }
        if let Pattern::Trace(t) = &mut self.pattern {
            return t.fill(
                self.sink,
                self.writes,
                &mut self.rng,
                out,
                max,
                self.sampler.as_deref_mut(),
            );
        }
        if let Pattern::ZipfKept(z) = &self.pattern {
            let sampler = self
                .sampler
                .as_deref_mut()
                .expect("a kept-rank zipf is sampled");
            let mut pushed = 0;
            while pushed < max && self.left > 0 {
                let gap = z.gap(&mut self.rng);
                if gap > self.left {
                    sampler.offer(self.left);
                    self.left = 0;
                    break;
                }
                self.left -= gap;
                sampler.offer(gap);
                let mut page = z.page(&mut self.rng);
                if let (Sink::Vma(vma), true) = (self.sink, sampler.renumbers()) {
                    // Kept by construction, so always placed.
                    page = sampler.place(vma, page).unwrap_or(page);
                }
                out.push(self.sink.event(page, self.writes.draw(&mut self.rng)));
                pushed += 1;
            }
            if let Some(o) = &mut self.opens {
                let from = out.len() - pushed;
                o.route(&mut out[from..]);
            }
            return Ok(pushed);
        }
        let Some(mut sampler) = self.sampler.take() else {
            return self.fill_all(out, max);
        };
        let from = out.len();
        let got = loop {
            match self.fill_all(out, max) {
                Ok(0) => break Ok(0),
                Ok(_) => {
                    let kept = sampler.filter(out, from);
                    if kept > 0 {
                        break Ok(kept);
                    }
                }
                Err(e) => break Err(e),
            }
        };
        self.sampler = Some(sampler);
        got
    }

    /// Samples this workload's pages with `sampler` from now on (see
    /// [`crate::sample`]).
    ///
    /// A zipf workload with `sampler = "alias"` then draws only its kept pages
    /// ([`KeptRanks`]) when their table is small enough (`rate × pages` at most
    /// [`KeptRanks::MAX_ENTRIES`]): the same law as filtering its whole stream, at a
    /// cost per kept event instead of per offered one. Other workloads, and the default
    /// rejection-inversion zipf (whose sampled streams recorded results depend on),
    /// filter their whole stream.
    pub fn sample(&mut self, sampler: crate::sample::PageSampler) {
        if let Pattern::ZipfAlias { zipf, perm } = &self.pattern {
            let n = zipf.ranks();
            let expected = (n as f64 * sampler.rate()).ceil() as u64;
            if expected <= KeptRanks::MAX_ENTRIES {
                let space = match self.sink {
                    Sink::Vma(vma) => u64::from(vma),
                    Sink::File(file) => crate::sample::file_space(file),
                };
                let block = u64::from(sampler.block_pages());
                let kept = (0..n.div_ceil(block))
                    .map(|b| b * block)
                    .filter(|&first| sampler.keeps(space, first as u32))
                    .flat_map(|first| first..(first + block).min(n))
                    .map(|page| {
                        let rank = perm.as_ref().map_or(page, |p| p.invert(page));
                        (rank, page as u32)
                    });
                if let Some(table) = KeptRanks::new(zipf, kept) {
                    self.pattern = Pattern::ZipfKept(Box::new(table));
                }
            }
        }
        self.sampler = Some(Box::new(sampler));
    }

    /// The sampler of a sampled run (None: every event runs).
    pub fn sampler(&self) -> Option<&crate::sample::PageSampler> {
        self.sampler.as_deref()
    }

    /// [`Generator::fill`] without sampling.
    fn fill_all(&mut self, out: &mut Vec<Event>, max: usize) -> Result<usize, WorkloadError> {
        let Generator {
            sink,
            writes,
            rng,
            left,
            pattern,
            opens,
            ..
        } = self;
        let (sink, writes) = (*sink, *writes);
        match pattern {
            Pattern::Trace(t) => return t.fill(sink, writes, rng, out, max, None),
            Pattern::Fio(g) => return Ok(g.fill(out, max)),
            Pattern::Kv(g) => return Ok(g.fill(rng, out, max)),
            Pattern::Pgbench(g) => return Ok(g.fill(rng, out, max)),
            Pattern::Dd(g) => return Ok(g.fill(out, max)),
            Pattern::Eater(g) => return Ok(g.fill(rng, out, max)),
            Pattern::Kbuild(g) => return Ok(g.fill(out, max)),
            Pattern::Tabs(g) => return Ok(g.fill(rng, out, max)),
            _ => {}
        }
        let n = (*left).min(max as u64) as usize;
        out.reserve(n);
        let from = out.len();
        match pattern {
            Pattern::Uniform { pages } => {
                let pages = *pages;
                for _ in 0..n {
                    let index = rng.random_range(0..pages);
                    out.push(sink.event(index, writes.draw(rng)));
                }
            }
            Pattern::Zipf {
                zipf,
                n: pages,
                perm,
            } => {
                for _ in 0..n {
                    let rank = (zipf.sample(rng) as u64).clamp(1, *pages) - 1;
                    let page = match perm {
                        Some(p) => p.apply(rank),
                        None => rank,
                    };
                    out.push(sink.event(page as u32, writes.draw(rng)));
                }
            }
            Pattern::ZipfAlias { zipf, perm } => {
                for _ in 0..n {
                    let rank = zipf.sample(rng) - 1;
                    let page = match perm {
                        Some(p) => p.apply(rank),
                        None => rank,
                    };
                    out.push(sink.event(page as u32, writes.draw(rng)));
                }
            }
            Pattern::Sequential { pages, next, step } => {
                for _ in 0..n {
                    let index = *next;
                    let to = u64::from(index) + u64::from(*step);
                    *next = if to >= u64::from(*pages) {
                        0
                    } else {
                        to as u32
                    };
                    out.push(sink.event(index, writes.draw(rng)));
                }
            }
            Pattern::TouchUnmap {
                vma,
                pages,
                next,
                step,
                zap,
                remap,
                fork,
            } => {
                for _ in 0..n {
                    if *next == u32::MAX {
                        *next = if *pages == 0 { u32::MAX } else { 0 };
                        out.push(if let Some(pages) = *fork {
                            Event::Fork { vma: *vma, pages }
                        } else if *remap {
                            Event::Remap { vma: *vma }
                        } else {
                            Event::Discard {
                                vma: *vma,
                                index: 0,
                                pages: *zap,
                            }
                        });
                        continue;
                    }
                    let index = *next;
                    let to = u64::from(index) + u64::from(*step);
                    *next = if to >= u64::from(*pages) {
                        u32::MAX
                    } else {
                        to as u32
                    };
                    out.push(sink.event(index, writes.draw(rng)));
                }
            }
            Pattern::TouchSkip {
                pages,
                next,
                every,
                offset,
            } => {
                for _ in 0..n {
                    // `left` is exact, so `next` stays below `pages`; wrap
                    // rather than trust it.
                    let mut index = if *next >= *pages { 0 } else { *next };
                    if index % *every == *offset {
                        index = (index + 1) % (*pages).max(1);
                    }
                    *next = index + 1;
                    out.push(sink.event(index, writes.draw(rng)));
                }
            }
            Pattern::HotCold {
                hot,
                cold,
                hot_below,
            } => {
                let (hot, cold, hot_below) = (*hot, *cold, *hot_below);
                for _ in 0..n {
                    let is_hot = hot_below.is_none_or(|t| rng.next_u64() < t);
                    let index = if is_hot {
                        rng.random_range(0..hot)
                    } else {
                        hot + rng.random_range(0..cold)
                    };
                    out.push(sink.event(index, writes.draw(rng)));
                }
            }
            Pattern::ZipfKept(_) => unreachable!("drawn by Generator::fill"),
            Pattern::Trace(_)
            | Pattern::Fio(_)
            | Pattern::Kv(_)
            | Pattern::Pgbench(_)
            | Pattern::Dd(_)
            | Pattern::Eater(_)
            | Pattern::Kbuild(_)
            | Pattern::Tabs(_) => unreachable!("handled above"),
        }
        if let Some(o) = opens {
            o.route(&mut out[from..]);
        }
        *left -= n as u64;
        Ok(n)
    }

    /// What the trace replay read so far (`None` for synthetic workloads); `workload`
    /// names it in the report.
    pub fn trace_report(&self, workload: &str) -> Option<TraceReport> {
        match &self.pattern {
            Pattern::Trace(t) => Some(t.report(workload)),
            _ => None,
        }
    }

    /// Where the events go.
    pub fn sink(&self) -> Sink {
        self.sink
    }
}

/// Generates all events of a synthetic workload into one vector (for benchmarks, which
/// time the simulator alone). Traces work too but are read whole: mind their size.
pub fn generate_all(gen: &mut Generator) -> Result<Vec<Event>, WorkloadError> {
    let mut out = Vec::new();
    while gen.fill(&mut out, 1 << 16)? > 0 {}
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn permutation_inverts() {
        for n in [1u64, 2, 3, 7, 1000, 4097, 1 << 20] {
            let mut rng = Pcg64Mcg::seed_from_u64(n);
            let p = Permutation::new(n, &mut rng);
            for x in (0..n).step_by((n / 5000).max(1) as usize) {
                assert_eq!(p.invert(p.apply(x)), x, "n={n} x={x}");
                assert_eq!(p.apply(p.invert(x)), x, "n={n} x={x}");
            }
        }
    }

    #[test]
    fn permutation_is_a_bijection() {
        for n in [1u64, 2, 3, 7, 8, 1000, 4097] {
            let mut rng = Pcg64Mcg::seed_from_u64(n);
            let p = Permutation::new(n, &mut rng);
            let mut seen = vec![false; n as usize];
            for x in 0..n {
                let y = p.apply(x);
                assert!(y < n);
                assert!(!seen[y as usize], "n={n}: {y} twice");
                seen[y as usize] = true;
            }
        }
    }

    #[test]
    fn permutation_scatters() {
        let mut rng = Pcg64Mcg::seed_from_u64(1);
        let p = Permutation::new(1 << 20, &mut rng);
        // The first 100 ranks are not clustered at the start of the region.
        let low = (0..100).filter(|&x| p.apply(x) < 1 << 16).count();
        assert!(low < 30, "{low}");
    }

    #[test]
    fn write_threshold() {
        let mut rng = Pcg64Mcg::seed_from_u64(5);
        let w = Writes::new(0.25);
        let n = (0..100_000).filter(|_| w.draw(&mut rng)).count();
        assert!((23_000..27_000).contains(&n), "{n}");
    }
}
