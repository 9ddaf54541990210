//! `kbuild`: a parallel kernel build, `make -jN` — the workload of seed 004's soft-limit
//! benchmarks ("a parallel kernel build … make is running with -j8", "a single kbuild (16
//! parallel jobs)").
//!
//! ## README
//!
//! ```toml
//! [[cgroup]]              # optional: a memory cgroup for the build
//! path = "/build"
//!
//! [[workload]]
//! kind = "kbuild"
//! name = "kbuild"
//! jobs = 8                # make -j8: compilers running at once
//! units = 2000            # .c files compiled
//! source_size = "24k"     # mean .c size; default 24k
//! headers = "48m"         # all header files together; default 64m
//! header_size = "8k"      # one header file; default 8k
//! includes = 300          # headers read per .c; default 300
//! header_theta = 1.0      # skew of header popularity (zipf); default 1
//! cc_mem = "16m"          # mean anonymous memory of one compile; default 32m
//! cc_passes = 3           # passes over it per compile; default 3
//! object_size = "40k"     # mean .o size; default 40k
//! cpu = "2ms"             # CPU time per compile besides the memory accesses; default 1ms
//! cgroup = "/build"       # optional, common: the group it runs in
//! ```
//!
//! A kernel build is a stream of compilations: `jobs` compilers run at once, each
//! taking the next of the `units` `.c` files when it finishes one. A compilation:
//!
//! 1. reads its source file (one `pread` of the whole file, `Event::FileRead`);
//! 2. reads `includes` header files, each drawn from the `headers / header_size` header
//!    files with a zipf(`header_theta`) popularity — `<linux/kernel.h>`-like headers are
//!    read by nearly every compile, most others rarely — one `pread` of a whole header
//!    each: this is the page-cache working set with reuse that a build has;
//! 3. works on its anonymous memory (the compiler's heap, cc1's RSS): `w` pages, first
//!    touched in order with stores (allocation), then `cc_passes − 1` passes of `w`
//!    uniformly drawn pages, half of them stores (parsing, optimisation, code
//!    generation);
//! 4. writes its object file (one `pwrite` of the whole `.o`, dirty page cache written
//!    back later by the flusher);
//! 5. computes for `cpu` (`Event::Think`).
//!
//! Each of the `jobs` compilers is a task (`<name>.<job>`) with an anonymous mapping of
//! ⌈1.5 × `cc_mem`⌉ (its heap); source, header and object files are files of their own
//! (`<name>.c.<unit>`, `<name>.h.<header>`, `<name>.o.<unit>`), opened by the first
//! compiler's task (one task per file in the simulator; all compilers are in the same
//! memory cgroup, which the page cache is charged to). The compilers take turns, one
//! event each, as fio's jobs do.
//!
//! The tree is fixed: unit `u`'s source and object sizes and its compile's memory `w`
//! are drawn uniformly from [½, 1½] × their means by a hash of `u`, the same in every run
//! and for every seed (so the number of events is known before running). The seed
//! changes which headers each compile reads and the order of its later passes.
//!
//! Fields (besides the common `name`, `phase`, `weight`, `advice` (applies to every
//! file), `start`, `cgroup`):
//!
//! | field | meaning | range | default |
//! |---|---|---|---|
//! | `jobs` | compilers at once (`make -j`) | 1..=256 | 8 |
//! | `units` | `.c` files compiled | 1..=100000 | required |
//! | `source_size` | mean size of a `.c` | 4k..=16m | `24k` |
//! | `headers` | size of all header files | ≥ `header_size`, at most 100000 header files | `64m` |
//! | `header_size` | size of one header file | 4k..=16m | `8k` |
//! | `includes` | headers read per compile | 0..=100000 | 300 |
//! | `header_theta` | zipf exponent of header popularity (0: uniform) | [0, 5] | 1 |
//! | `cc_mem` | mean anonymous memory of a compile | 4k..=4g | `32m` |
//! | `cc_passes` | passes over it (the first allocates) | 1..=1000 | 3 |
//! | `object_size` | mean size of a `.o` | 4k..=16m | `40k` |
//! | `cpu` | CPU time of a compile besides its memory accesses | 0s..=1h | `1ms` |
//! | `cc_exit` | each compile ends by freeing its heap, as a real `cc1` exits | bool | `false` |
//!
//! Sizes are rounded up to whole pages. Events: per compile 1 + `includes` + `w` ×
//! `cc_passes` + 1, 1 more with `cpu` > 0, and 1 more with `cc_exit`.
//!
//! ## What the model leaves out
//!
//! The real numbers of a distribution-config build (seed 004: ~37 M minor faults in
//! ~400 s of a 32-CPU machine) come from thousands of compiler processes, each exiting
//! at the end of its compile. By default a compiler here is a long-lived task that
//! reuses its heap for the next compile, as a compile server would (the default keeps
//! the results recorded before `cc_exit` existed): heap pages of an earlier compile
//! that were swapped out are swapped back in when the next compile stores to them, and
//! a heap page stays charged until reclaim takes it. With `cc_exit = true` each compile
//! ends with its heap zapped (`Event::Discard` of the pages it used: `zap_pte_range`
//! frees the folios and their swap slots and uncharges them, as v6.12's `exit_mmap` does for
//! an exiting `cc1`), so the next compile faults fresh zero-filled pages — one page
//! fault per page per compile, as a real build has. The page-table pages and the task
//! itself stay (a real exit frees those too). Not modelled either: `make`'s own work and the dependency scan, the compiler binary's
//! text (page cache of `cc1` itself), linking (`vmlinux`, modules), and directories
//! and inodes.

use mmsim_core::memcg::MemcgId;
use mmsim_core::{Advice, Event, FileId, Sim, SimError, VmaId};
use rand::{RngCore, SeedableRng};
use rand_distr::{Distribution, Zipf};
use rand_pcg::Pcg64Mcg;

use super::{Bad, PAGE};
use crate::scenario::{MAX_EVENTS, MAX_PAGES, MAX_THETA};

/// Most compilers at once.
pub const MAX_JOBS: u32 = 256;
/// Most compilation units.
pub const MAX_UNITS: u64 = 100_000;
/// Most header files.
pub const MAX_HEADER_FILES: u64 = 100_000;
/// Largest source, header or object file: 16 MiB.
pub const MAX_FILE: u64 = 16 << 20;
/// Largest `cc_mem`: 4 GiB.
pub const MAX_CC_MEM: u64 = 4 << 30;
/// Most `includes`.
pub const MAX_INCLUDES: u32 = 100_000;
/// Most `cc_passes`.
pub const MAX_CC_PASSES: u32 = 1000;
/// Longest `cpu`: one hour.
pub const MAX_CPU_NS: u64 = 3_600_000_000_000;

/// A `kind = "kbuild"` workload (see the [module docs](self) for the fields).
#[derive(Clone, Debug, PartialEq)]
pub struct KbuildSpec {
    /// Compilers at once (`make -j`).
    pub jobs: u32,
    /// `.c` files compiled.
    pub units: u64,
    /// Mean `.c` size, bytes.
    pub source_size: u64,
    /// All header files together, bytes.
    pub headers: u64,
    /// One header file, bytes.
    pub header_size: u64,
    /// Headers read per compile.
    pub includes: u32,
    /// Zipf exponent of header popularity.
    pub header_theta: f64,
    /// Mean anonymous memory of a compile, bytes.
    pub cc_mem: u64,
    /// Passes over it per compile.
    pub cc_passes: u32,
    /// Mean `.o` size, bytes.
    pub object_size: u64,
    /// CPU time per compile, ns.
    pub cpu: u64,
    /// Whether each compile frees its heap at its end (a `cc1` exiting).
    pub cc_exit: bool,
}

/// Pages of `bytes`, rounded up.
fn pages(bytes: u64) -> u64 {
    bytes.div_ceil(PAGE)
}

/// SplitMix64: the hash that fixes the tree.
fn mix(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// `mean` pages × a factor in [½, 1½] drawn from `h`, at least one page.
fn vary(mean: u64, h: u64) -> u64 {
    let f = 0.5 + (h >> 11) as f64 / (1u64 << 53) as f64;
    ((mean as f64 * f).round() as u64).max(1)
}

/// One compilation unit's sizes, pages: (source, object, compile memory).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Unit {
    /// Pages of the `.c`.
    pub source: u32,
    /// Pages of the `.o`.
    pub object: u32,
    /// Anonymous pages the compile works on.
    pub mem: u32,
}

impl KbuildSpec {
    /// A build of `units` files with the other fields at their defaults.
    pub fn new(units: u64) -> KbuildSpec {
        KbuildSpec {
            jobs: 8,
            units,
            source_size: 24 << 10,
            headers: 64 << 20,
            header_size: 8 << 10,
            includes: 300,
            header_theta: 1.0,
            cc_mem: 32 << 20,
            cc_passes: 3,
            object_size: 40 << 10,
            cpu: 1_000_000,
            cc_exit: false,
        }
    }

    /// Header files: `headers / header_size`, at least one.
    pub fn header_files(&self) -> u64 {
        (self.headers / self.header_size.max(1)).max(1)
    }

    /// Pages of a compiler's heap mapping: ⌈1.5 × `cc_mem`⌉ pages.
    pub fn arena_pages(&self) -> u64 {
        (pages(self.cc_mem) * 3).div_ceil(2).max(1)
    }

    /// Unit `u`'s sizes (fixed by a hash of `u`, the same for every seed).
    pub fn unit(&self, u: u64) -> Unit {
        let h = mix(u ^ 0x6b62_7569_6c64_0000);
        let clamp = |p: u64, max: u64| p.clamp(1, max) as u32;
        Unit {
            source: clamp(vary(pages(self.source_size), h), pages(MAX_FILE)),
            object: clamp(vary(pages(self.object_size), mix(h)), pages(MAX_FILE)),
            mem: clamp(vary(pages(self.cc_mem), mix(mix(h))), self.arena_pages()),
        }
    }

    /// Events of unit `u`'s compile.
    fn unit_events(&self, u: u64) -> u64 {
        let unit = self.unit(u);
        2 + u64::from(self.includes)
            + u64::from(unit.mem) * u64::from(self.cc_passes)
            + u64::from(self.cpu > 0)
            + u64::from(self.cc_exit)
    }

    /// Events of the whole build (computed unit by unit).
    pub fn events(&self) -> u64 {
        (0..self.units.min(MAX_UNITS))
            .map(|u| self.unit_events(u))
            .fold(0u64, u64::saturating_add)
    }

    /// Pages of all files and mappings: sources, headers, objects, the compilers' heaps.
    pub fn pages(&self) -> u64 {
        let units = self.units.min(MAX_UNITS);
        let files: u64 = (0..units)
            .map(|u| {
                let x = self.unit(u);
                u64::from(x.source) + u64::from(x.object)
            })
            .sum();
        files
            .saturating_add(self.header_files().saturating_mul(pages(self.header_size)))
            .saturating_add(u64::from(self.jobs).saturating_mul(self.arena_pages()))
    }

    /// Checks every field against its range.
    pub fn validate(&self) -> Result<(), Bad> {
        if !(1..=MAX_JOBS).contains(&self.jobs) {
            return Err(Bad::new(
                "jobs",
                format!("{} is out of range [1, {MAX_JOBS}]", self.jobs),
            ));
        }
        if !(1..=MAX_UNITS).contains(&self.units) {
            return Err(Bad::new(
                "units",
                format!("{} is out of range [1, {MAX_UNITS}]", self.units),
            ));
        }
        for (field, v) in [
            ("source_size", self.source_size),
            ("header_size", self.header_size),
            ("object_size", self.object_size),
        ] {
            if !(PAGE..=MAX_FILE).contains(&v) {
                return Err(Bad::new(
                    field,
                    format!("{v} bytes is out of range [4k, 16m]"),
                ));
            }
        }
        if self.headers < self.header_size || self.header_files() > MAX_HEADER_FILES {
            return Err(Bad::new(
                "headers",
                format!(
                    "{} bytes is out of range [header_size, {MAX_HEADER_FILES} × header_size] \
                     ({} header files of {} bytes)",
                    self.headers,
                    self.headers / self.header_size.max(1),
                    self.header_size
                ),
            ));
        }
        if self.includes > MAX_INCLUDES {
            return Err(Bad::new(
                "includes",
                format!("{} is out of range [0, {MAX_INCLUDES}]", self.includes),
            ));
        }
        if !(self.header_theta.is_finite() && (0.0..=MAX_THETA).contains(&self.header_theta)) {
            return Err(Bad::new(
                "header_theta",
                format!("{} is out of range [0, {MAX_THETA}]", self.header_theta),
            ));
        }
        if !(PAGE..=MAX_CC_MEM).contains(&self.cc_mem) {
            return Err(Bad::new(
                "cc_mem",
                format!("{} bytes is out of range [4k, 4g]", self.cc_mem),
            ));
        }
        if !(1..=MAX_CC_PASSES).contains(&self.cc_passes) {
            return Err(Bad::new(
                "cc_passes",
                format!("{} is out of range [1, {MAX_CC_PASSES}]", self.cc_passes),
            ));
        }
        if self.cpu > MAX_CPU_NS {
            return Err(Bad::new(
                "cpu",
                format!("{} is out of range [0s, 1h]", super::format_time(self.cpu)),
            ));
        }
        let heaps = u64::from(self.jobs).saturating_mul(self.arena_pages());
        if self.arena_pages() > MAX_PAGES || heaps > MAX_PAGES {
            return Err(Bad::new(
                "cc_mem",
                "jobs × 1.5 × cc_mem is more than 2^31 pages",
            ));
        }
        if self.events() > MAX_EVENTS {
            return Err(Bad::new(
                "units",
                format!("the build has {} events, more than 2^40", self.events()),
            ));
        }
        Ok(())
    }
}

/// Where a compiler is in its compile.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Step {
    /// Take the next unit.
    Next,
    /// Read the source.
    Source,
    /// Read headers; how many are left.
    Headers(u32),
    /// The anonymous passes: pass number and position.
    Mem(u32, u32),
    /// Write the object.
    Object,
    /// Compute.
    Cpu,
    /// Free the heap (`cc_exit`).
    Exit,
    /// No units left.
    Done,
}

#[derive(Debug)]
struct Compiler {
    vma: VmaId,
    rng: Pcg64Mcg,
    unit: u64,
    /// The unit's sizes.
    cur: Unit,
    step: Step,
}

/// The generator of a kbuild workload.
#[derive(Debug)]
pub struct KbuildGen {
    spec: KbuildSpec,
    jobs: Vec<Compiler>,
    sources: Vec<FileId>,
    objects: Vec<FileId>,
    headers: Vec<FileId>,
    header_pages: u16,
    zipf: Zipf<f64>,
    next_unit: u64,
    next_job: usize,
    running: usize,
}

impl KbuildGen {
    /// Creates the compilers' tasks (in memory cgroup `memcg`) and heaps and the
    /// source, header and object files (opened by the first compiler's task, `advice`
    /// applied) in `sim`, and seeds one stream per compiler from `rng`.
    ///
    /// `spec` must be valid ([`KbuildSpec::validate`]); out-of-range values are clamped.
    pub fn setup(
        sim: &mut Sim,
        spec: &KbuildSpec,
        name: &str,
        advice: Advice,
        rng: &mut Pcg64Mcg,
        memcg: MemcgId,
    ) -> Result<KbuildGen, SimError> {
        let spec = KbuildSpec {
            jobs: spec.jobs.clamp(1, MAX_JOBS),
            units: spec.units.clamp(1, MAX_UNITS),
            includes: spec.includes.min(MAX_INCLUDES),
            cc_passes: spec.cc_passes.clamp(1, MAX_CC_PASSES),
            header_size: spec.header_size.clamp(PAGE, MAX_FILE),
            cc_mem: spec.cc_mem.clamp(PAGE, MAX_CC_MEM),
            headers: spec
                .headers
                .clamp(PAGE, MAX_HEADER_FILES.saturating_mul(MAX_FILE)),
            header_theta: if spec.header_theta.is_finite() {
                spec.header_theta.clamp(0.0, MAX_THETA)
            } else {
                1.0
            },
            ..spec.clone()
        };
        let arena = spec.arena_pages().min(MAX_PAGES);
        let mut jobs = Vec::with_capacity(spec.jobs as usize);
        let mut first_task = None;
        for j in 0..spec.jobs {
            let task = sim.add_task(&format!("{name}.{j}"));
            sim.attach_task(task, memcg)?;
            first_task.get_or_insert(task);
            let vma = sim.mmap_anon(task, arena)?;
            jobs.push(Compiler {
                vma,
                rng: Pcg64Mcg::seed_from_u64(rng.next_u64()),
                unit: 0,
                cur: spec.unit(0),
                step: Step::Next,
            });
        }
        let task = first_task.unwrap_or(0);
        let file = |sim: &mut Sim, fname: String, pages: u64| -> Result<FileId, SimError> {
            let f = sim.add_file(&fname, pages)?;
            sim.open(f, task)?;
            sim.fadvise(f, advice)?;
            Ok(f)
        };
        let header_pages = pages(spec.header_size).clamp(1, pages(MAX_FILE));
        let nheaders = spec.header_files().min(MAX_HEADER_FILES);
        let mut headers = Vec::with_capacity(nheaders as usize);
        for h in 0..nheaders {
            headers.push(file(sim, format!("{name}.h.{h}"), header_pages)?);
        }
        let mut sources = Vec::with_capacity(spec.units as usize);
        let mut objects = Vec::with_capacity(spec.units as usize);
        for u in 0..spec.units {
            let x = spec.unit(u);
            sources.push(file(sim, format!("{name}.c.{u}"), u64::from(x.source))?);
            objects.push(file(sim, format!("{name}.o.{u}"), u64::from(x.object))?);
        }
        let zipf = Zipf::new(nheaders as f64, spec.header_theta)
            .map_err(|e| SimError::Setup(format!("kbuild `{name}`: zipf: {e}")))?;
        Ok(KbuildGen {
            running: jobs.len(),
            jobs,
            sources,
            objects,
            headers,
            header_pages: header_pages as u16,
            zipf,
            next_unit: 0,
            next_job: 0,
            spec,
        })
    }

    /// The first compiler's heap (for [`Generator::sink`](crate::Generator::sink)).
    pub fn vma(&self) -> VmaId {
        self.jobs.first().map_or(0, |j| j.vma)
    }

    /// The next event of compiler `j`, or None when it has no unit left.
    fn next_event(&mut self, j: usize) -> Option<Event> {
        loop {
            let spec = &self.spec;
            let c = &mut self.jobs[j];
            match c.step {
                Step::Done => return None,
                Step::Next => {
                    if self.next_unit == spec.units {
                        c.step = Step::Done;
                        self.running -= 1;
                        return None;
                    }
                    c.unit = self.next_unit;
                    c.cur = spec.unit(c.unit);
                    self.next_unit += 1;
                    c.step = Step::Source;
                }
                Step::Source => {
                    let unit = c.cur;
                    c.step = Step::Headers(spec.includes);
                    return Some(Event::FileRead {
                        file: self.sources[c.unit as usize],
                        index: 0,
                        pages: unit.source as u16,
                    });
                }
                Step::Headers(0) => c.step = Step::Mem(0, 0),
                Step::Headers(left) => {
                    c.step = Step::Headers(left - 1);
                    let n = self.headers.len() as u64;
                    let rank = (self.zipf.sample(&mut c.rng) as u64).clamp(1, n) - 1;
                    return Some(Event::FileRead {
                        file: self.headers[rank as usize],
                        index: 0,
                        pages: self.header_pages,
                    });
                }
                Step::Mem(pass, pos) => {
                    let w = c.cur.mem;
                    if pos == w {
                        c.step = if pass + 1 == spec.cc_passes {
                            Step::Object
                        } else {
                            Step::Mem(pass + 1, 0)
                        };
                        continue;
                    }
                    c.step = Step::Mem(pass, pos + 1);
                    let (index, write) = if pass == 0 {
                        (pos, true)
                    } else {
                        let r = c.rng.next_u64();
                        ((r % u64::from(w)) as u32, r >> 63 == 1)
                    };
                    return Some(Event::Access {
                        vma: c.vma,
                        index,
                        write,
                    });
                }
                Step::Object => {
                    let unit = c.cur;
                    c.step = match (spec.cpu > 0, spec.cc_exit) {
                        (true, _) => Step::Cpu,
                        (false, true) => Step::Exit,
                        (false, false) => Step::Next,
                    };
                    return Some(Event::FileWrite {
                        file: self.objects[c.unit as usize],
                        index: 0,
                        pages: unit.object as u16,
                    });
                }
                Step::Cpu => {
                    c.step = if spec.cc_exit { Step::Exit } else { Step::Next };
                    return Some(Event::Think { ns: spec.cpu });
                }
                Step::Exit => {
                    c.step = Step::Next;
                    return Some(Event::Discard {
                        vma: c.vma,
                        index: 0,
                        pages: c.cur.mem,
                    });
                }
            }
        }
    }

    /// Appends up to `max` events to `out`, the compilers in turn; returns how many.
    pub fn fill(&mut self, out: &mut Vec<Event>, max: usize) -> usize {
        let mut n = 0;
        let njobs = self.jobs.len();
        while n < max && self.running > 0 {
            let j = self.next_job;
            self.next_job = if j + 1 == njobs { 0 } else { j + 1 };
            if let Some(e) = self.next_event(j) {
                out.push(e);
                n += 1;
            }
        }
        n
    }
}

impl super::Model for KbuildSpec {
    const KIND: &'static str = "kbuild";
    const REQUIRED: &'static [&'static str] = &["units"];
    const OPTIONAL: &'static [&'static str] = &[
        "jobs",
        "source_size",
        "headers",
        "header_size",
        "includes",
        "header_theta",
        "cc_mem",
        "cc_passes",
        "object_size",
        "cpu",
        "cc_exit",
    ];
    const TARGET: crate::Target = crate::Target::Anon;

    fn pages(&self) -> u64 {
        KbuildSpec::pages(self)
    }

    fn events(&self) -> Option<u64> {
        Some(KbuildSpec::events(self))
    }

    fn validate(&self) -> Result<(), Bad> {
        KbuildSpec::validate(self)
    }
}
