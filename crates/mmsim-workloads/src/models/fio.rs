//! `fio`: fio's buffered file IO (`--buffered=1`, the default `ioengine=psync` view).
//!
//! ## README
//!
//! ```toml
//! [[workload]]
//! kind = "fio"
//! name = "mglru"            # fio's --name: files mglru.0.0, mglru.1.0, …
//! rw = "randread"           # read | write | randread | randwrite | randrw
//! bs = "4k"                 # default 4k
//! numjobs = 8               # default 1
//! size = "1408m"            # per job
//! ios = 100_000             # per job; or io_size = "2g"; default: size / bs
//! norandommap = true        # default false
//! ```
//!
//! `numjobs` jobs, each its own task (`<name>.<job>`) with its own files, as fio lays
//! them out by default: `nrfiles` files per job named `<name>.<job>.<file>`
//! (`$jobname.$jobnum.$filenum`), each `size / nrfiles` bytes; with `shared_file = true`
//! every job works on the same `nrfiles` files, named `<name>.<file>`, of `size / nrfiles`
//! each. Each IO is one `pread`/`pwrite` of `bs` bytes at a `bs`-aligned offset
//! (`Event::FileRead`/`FileWrite` of `bs / 4 KiB` pages). The jobs take turns, one IO
//! each; a job turns round-robin over its files, one IO each (fio's default
//! `file_service_type=roundrobin`).
//!
//! Fields (besides the common `name`, `phase`, `weight`, `advice`, `start`):
//!
//! | field | meaning | range | default |
//! |---|---|---|---|
//! | `rw` | `read`, `write` (sequential), `randread`, `randwrite`, `randrw` | | required |
//! | `bs` | block size, bytes or size string | 4 KiB..=64 MiB, a multiple of 4 KiB | `4k` |
//! | `numjobs` | jobs (tasks) | 1..=4096 | 1 |
//! | `size` | bytes of file per job (split over `nrfiles`) | ≥ `bs` × `nrfiles`; a file ≤ 2^31 pages | required |
//! | `nrfiles` | files per job | 1..=1024, `numjobs` × `nrfiles` ≤ 65536 | 1 |
//! | `shared_file` | all jobs use the same files | | false |
//! | `ios` | IOs per job (fio's `number_ios`) | 1..=2^40 in total | `size / bs` |
//! | `io_size` | bytes of IO per job (alternative to `ios`) | ≥ `bs` | `size` |
//! | `rwmixread` | percentage of reads, `randrw` only | 0..=100 | 50 |
//! | `random_distribution` | `random` or `zipf:θ` (`zipf` alone: θ = 1.1), random `rw` only | θ in (0, 5] | `random` |
//! | `norandommap` | draw every offset independently | | false |
//!
//! `advice` defaults to fio's `fadvise_hint=1`: `random` (`POSIX_FADV_RANDOM`) for
//! `randread`, `randwrite` and `randrw`, `sequential` (`POSIX_FADV_SEQUENTIAL`) for `read`
//! and `write`.
//!
//! ## fio's behaviour, and where it was checked
//!
//! Against fio's source (github.com/axboe/fio, HOWTO.rst, options.c, ioengines.c, io_u.c,
//! lib/zipf.c; mirror at commit f5344384):
//!
//! * **fadvise_hint** defaults to `1` (options.c: `.def = "1"`), which `td_io_open_file`
//!   (ioengines.c) turns into `POSIX_FADV_RANDOM` when `td_random(td)` and
//!   `POSIX_FADV_SEQUENTIAL` otherwise. mmsim applies it with [`mmsim_core::Sim::fadvise`]
//!   to every file.
//! * **Offsets**: sequential IO walks the file block by block and wraps at its end when
//!   `io_size` asks for more than the file. Random IO draws a uniform block
//!   (`random_distribution=random`, io_u.c `__get_next_rand_offset`). fio's random map
//!   (on unless `norandommap`) then makes every block be done exactly once per pass over
//!   the file: a drawn block already done is replaced by the next free one
//!   (`axmap_next_free`). mmsim walks a seeded pseudo-random permutation of the blocks per
//!   pass ([`Permutation`]): the same once-per-pass coverage, in a differently shuffled
//!   order. With `norandommap` every offset is an independent uniform draw.
//! * **zipf:θ** (lib/zipf.c): fio samples a rank from a zipf(θ) over the file's blocks and
//!   scatters it by a hash plus a per-job offset; the random map is off. mmsim samples the
//!   rank with `rand_distr::Zipf` and scatters it with a per-job seeded permutation. fio
//!   rejects θ = 1.0 (its sampler divides by 1 − θ); mmsim's sampler does not need to.
//! * **rwmixread** (io_u.c `get_rw_ddir`, `set_rwmix_bytes`, `get_rand_ddir`): a
//!   direction is drawn (`rand_between(1, 100) <= rwmixread` is a read) whenever the
//!   current direction has issued as many IOs as the last switch allowed; on a switch,
//!   the new direction may issue until its count reaches `old direction's IOs ×
//!   new direction's percentage / 100`. mmsim runs the same rule with its own stream.
//! * **size / nrfiles / io_size / number_ios**: `size` is per job and divided over the
//!   job's `nrfiles` files; fio does `size` bytes of IO unless `io_size` or
//!   `number_ios` says otherwise (HOWTO: size, io_size, number_ios, nrfiles).
//!
//! Not modelled: `iodepth` and asynchronous engines (every IO is a synchronous buffered
//! call), `direct=1`, `time_based`/`runtime`/`ramp_time` (give `ios` instead), the other
//! distributions (`pareto`, `normal`, `zoned`), `rw=rw`/`readwrite`, and per-descriptor
//! readahead state: the simulator keeps one readahead state per file, so jobs sharing a
//! file share it (fio's jobs each open their own descriptor).

use std::fmt;
use std::str::FromStr;

use mmsim_core::memcg::MemcgId;
use mmsim_core::{Advice, Event, FileId, Sim, SimError};
use rand::{Rng, RngCore, SeedableRng};
use rand_distr::{Distribution, Zipf};
use rand_pcg::Pcg64Mcg;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::{Bad, MAX_BS, PAGE};
use crate::gen::Permutation;
use crate::scenario::{MAX_EVENTS, MAX_PAGES, MAX_THETA};

/// Largest `numjobs`.
pub const MAX_JOBS: u32 = 4096;
/// Largest `nrfiles`.
pub const MAX_NRFILES: u32 = 1024;
/// Largest number of files one fio workload creates (`numjobs` × `nrfiles`).
pub const MAX_FILES: u64 = 65536;

/// fio's `rw`: the direction and order of the IOs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FioRw {
    /// `read`: sequential reads.
    Read,
    /// `write`: sequential writes.
    Write,
    /// `randread`: random reads.
    RandRead,
    /// `randwrite`: random writes.
    RandWrite,
    /// `randrw`: random reads and writes, `rwmixread` percent reads.
    RandRw,
}

impl FioRw {
    /// Random offsets (fio's `td_random`).
    pub fn is_random(self) -> bool {
        matches!(self, FioRw::RandRead | FioRw::RandWrite | FioRw::RandRw)
    }
}

impl fmt::Display for FioRw {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

mmsim_core::setting_names! { FioRw, "rw",
    Read => "read",
    Write => "write",
    RandRead => "randread",
    RandWrite => "randwrite",
    RandRw => "randrw",
}

impl Serialize for FioRw {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
    }
}

impl<'de> Deserialize<'de> for FioRw {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<FioRw, D::Error> {
        super::de_from_str(d)
    }
}

/// fio's `random_distribution`.
#[derive(Clone, Copy, Debug, PartialEq, Default)]
pub enum FioDistribution {
    /// `random`: uniform (the default).
    #[default]
    Random,
    /// `zipf:θ`: zipf-distributed block ranks, scattered over the file.
    Zipf(f64),
}

/// fio's default zipf θ when `random_distribution = "zipf"` gives none (`FIO_DEF_ZIPF`).
pub const FIO_DEF_ZIPF: f64 = 1.1;

impl fmt::Display for FioDistribution {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FioDistribution::Random => f.write_str("random"),
            FioDistribution::Zipf(t) => write!(f, "zipf:{t}"),
        }
    }
}

impl FromStr for FioDistribution {
    type Err = String;
    fn from_str(s: &str) -> Result<FioDistribution, String> {
        let usage = "allowed: random, zipf, zipf:θ (θ in (0, 5])";
        match s.split_once(':') {
            None if s == "random" => Ok(FioDistribution::Random),
            None if s == "zipf" => Ok(FioDistribution::Zipf(FIO_DEF_ZIPF)),
            Some(("zipf", t)) => match t.trim().parse::<f64>() {
                Ok(t) if t.is_finite() => Ok(FioDistribution::Zipf(t)),
                _ => Err(format!("`{s}`: `{t}` is not a number; {usage}")),
            },
            _ => Err(format!("unknown random_distribution `{s}`; {usage}")),
        }
    }
}

impl Serialize for FioDistribution {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.to_string())
    }
}

impl<'de> Deserialize<'de> for FioDistribution {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<FioDistribution, D::Error> {
        super::de_from_str(d)
    }
}

/// A `kind = "fio"` workload (see the [module docs](self) for the fields).
#[derive(Clone, Debug, PartialEq)]
pub struct FioSpec {
    /// Direction and order of the IOs.
    pub rw: FioRw,
    /// Block size in bytes: 4 KiB..=64 MiB, a multiple of 4 KiB (default 4096).
    pub bs: u64,
    /// Jobs, 1..=4096 (default 1).
    pub numjobs: u32,
    /// Bytes of file per job, split over `nrfiles` files.
    pub size: u64,
    /// Files per job, 1..=1024 (default 1).
    pub nrfiles: u32,
    /// Every job works on the same `nrfiles` files (default false).
    pub shared_file: bool,
    /// IOs per job (fio's `number_ios`); exclusive with `io_size`.
    pub ios: Option<u64>,
    /// Bytes of IO per job; exclusive with `ios`. Neither: `size`.
    pub io_size: Option<u64>,
    /// Percentage of reads of `randrw`, 0..=100 (default 50).
    pub rwmixread: Option<u32>,
    /// Distribution of random offsets (default uniform).
    pub random_distribution: FioDistribution,
    /// Draw random offsets independently instead of once per block per pass.
    pub norandommap: bool,
}

impl FioSpec {
    /// A job set with fio's defaults: `bs` 4k, one job, one file.
    pub fn new(rw: FioRw, size: u64) -> FioSpec {
        FioSpec {
            rw,
            bs: PAGE,
            numjobs: 1,
            size,
            nrfiles: 1,
            shared_file: false,
            ios: None,
            io_size: None,
            rwmixread: None,
            random_distribution: FioDistribution::Random,
            norandommap: false,
        }
    }

    /// Pages per IO.
    pub fn bs_pages(&self) -> u64 {
        (self.bs / PAGE).max(1)
    }

    /// Pages of each file: `size / nrfiles`, rounded down to whole pages.
    pub fn file_pages(&self) -> u64 {
        self.size / u64::from(self.nrfiles.max(1)) / PAGE
    }

    /// Blocks (`bs`-aligned IO positions) per file.
    pub fn blocks(&self) -> u64 {
        self.file_pages() / self.bs_pages()
    }

    /// Files the workload creates.
    pub fn files(&self) -> u64 {
        let per = u64::from(self.nrfiles);
        if self.shared_file {
            per
        } else {
            per * u64::from(self.numjobs)
        }
    }

    /// IOs per job: `ios`, else `io_size / bs`, else `size / bs`.
    pub fn ios_per_job(&self) -> u64 {
        match (self.ios, self.io_size) {
            (Some(n), _) => n,
            (None, Some(b)) => b / self.bs.max(1),
            (None, None) => self.size / self.bs.max(1),
        }
    }

    /// Events: one per IO.
    pub fn events(&self) -> u64 {
        self.ios_per_job().saturating_mul(u64::from(self.numjobs))
    }

    /// Pages of all files.
    pub fn pages(&self) -> u64 {
        self.files().saturating_mul(self.file_pages())
    }

    /// fio's `fadvise_hint=1`: random for random `rw`, sequential otherwise.
    pub fn default_advice(&self) -> Advice {
        if self.rw.is_random() {
            Advice::Random
        } else {
            Advice::Sequential
        }
    }

    /// Checks every field against its range.
    pub fn validate(&self) -> Result<(), Bad> {
        if self.bs == 0 || !self.bs.is_multiple_of(PAGE) || self.bs > MAX_BS {
            return Err(Bad::new(
                "bs",
                format!(
                    "{} is not a block size mmsim can issue: allowed 4k..=64m in multiples \
                     of 4 KiB (4096 bytes)",
                    self.bs
                ),
            ));
        }
        if !(1..=MAX_JOBS).contains(&self.numjobs) {
            return Err(Bad::new(
                "numjobs",
                format!("{} is out of range [1, {MAX_JOBS}]", self.numjobs),
            ));
        }
        if !(1..=MAX_NRFILES).contains(&self.nrfiles) {
            return Err(Bad::new(
                "nrfiles",
                format!("{} is out of range [1, {MAX_NRFILES}]", self.nrfiles),
            ));
        }
        if self.files() > MAX_FILES {
            return Err(Bad::new(
                "nrfiles",
                format!(
                    "numjobs × nrfiles = {} files is more than {MAX_FILES}",
                    self.files()
                ),
            ));
        }
        if self.blocks() == 0 {
            return Err(Bad::new(
                "size",
                format!(
                    "{} bytes over {} file(s) leaves less than one {}-byte block per file; \
                     size must be at least bs × nrfiles = {}",
                    self.size,
                    self.nrfiles,
                    self.bs,
                    self.bs * u64::from(self.nrfiles)
                ),
            ));
        }
        if self.file_pages() > MAX_PAGES {
            return Err(Bad::new(
                "size",
                format!(
                    "{} pages per file is more than the 2^31-page (8 TiB) limit",
                    self.file_pages()
                ),
            ));
        }
        match (self.ios, self.io_size) {
            (Some(_), Some(_)) => {
                return Err(Bad::new("io_size", "give either ios or io_size, not both"))
            }
            (Some(n), None) if n == 0 || n > MAX_EVENTS => {
                return Err(Bad::new("ios", format!("{n} is out of range [1, 2^40]")))
            }
            (None, Some(b)) if b < self.bs => {
                return Err(Bad::new(
                    "io_size",
                    format!("{b} bytes is less than one block (bs = {})", self.bs),
                ))
            }
            _ => {}
        }
        if self.events() > MAX_EVENTS {
            let field = match (self.ios, self.io_size) {
                (Some(_), _) => "ios",
                (None, Some(_)) => "io_size",
                (None, None) => "size",
            };
            return Err(Bad::new(
                field,
                format!(
                    "numjobs × IOs per job = {} events is more than the 2^40 limit",
                    self.events()
                ),
            ));
        }
        if let Some(p) = self.rwmixread {
            if self.rw != FioRw::RandRw {
                return Err(Bad::new(
                    "rwmixread",
                    format!("applies to rw = \"randrw\" only, not `{}`", self.rw),
                ));
            }
            if p > 100 {
                return Err(Bad::new(
                    "rwmixread",
                    format!("{p} is out of range [0, 100] (percent)"),
                ));
            }
        }
        if let FioDistribution::Zipf(t) = self.random_distribution {
            if !self.rw.is_random() {
                return Err(Bad::new(
                    "random_distribution",
                    format!("applies to random rw only, not `{}`", self.rw),
                ));
            }
            if !(t.is_finite() && t > 0.0 && t <= MAX_THETA) {
                return Err(Bad::new(
                    "random_distribution",
                    format!("zipf θ {t} is out of range (0, {MAX_THETA}]"),
                ));
            }
        }
        Ok(())
    }
}

/// fio's read/write mix state (io_u.c): the current direction, the IOs issued per
/// direction and how many the current direction may issue before the next draw.
#[derive(Clone, Copy, Debug, Default)]
struct RwMix {
    issues: [u64; 2],
    /// 0: read, 1: write.
    ddir: usize,
    until: u64,
}

impl RwMix {
    /// The next direction (true: write) with `rwmix = [read %, write %]`.
    #[inline]
    fn next(&mut self, rwmix: [u64; 2], rng: &mut Pcg64Mcg) -> bool {
        if self.issues[self.ddir] >= self.until {
            let v: u64 = rng.random_range(1..=100);
            let d = usize::from(v > rwmix[0]);
            if d != self.ddir {
                // set_rwmix_bytes(): diff = rwmix[old ^ 1] = rwmix[new].
                self.until = self.issues[self.ddir] * rwmix[d] / 100;
            }
            self.ddir = d;
        }
        self.issues[self.ddir] += 1;
        self.ddir == 1
    }
}

/// One job's view of one of its files.
#[derive(Debug)]
struct JobFile {
    file: FileId,
    /// Sequential: the next block. Random map: position in the pass's permutation.
    pos: u64,
    /// The random map's permutation for the current pass.
    perm: Option<Permutation>,
}

#[derive(Debug)]
struct Job {
    rng: Pcg64Mcg,
    /// Index into `files` of this job's first file.
    first: usize,
    /// Round-robin cursor over the job's files.
    next_file: u32,
    rwmix: RwMix,
    /// zipf: the rank scatter of this job (fio's hash + per-job offset).
    scatter: Option<Permutation>,
}

#[derive(Debug)]
enum Offsets {
    Sequential,
    /// Uniform with fio's random map: each block once per pass.
    RandomMap,
    /// Uniform, independent draws (`norandommap`).
    Uniform,
    Zipf(Zipf<f64>),
}

/// Direction of the IOs.
#[derive(Clone, Copy, Debug)]
enum Dir {
    Read,
    Write,
    Mix([u64; 2]),
}

/// The generator of a fio workload.
#[derive(Debug)]
pub struct FioGen {
    jobs: Vec<Job>,
    /// Per job, its `nrfiles` files (jobs sharing files each have their own entries).
    files: Vec<JobFile>,
    nrfiles: u32,
    blocks: u64,
    bs_pages: u16,
    offsets: Offsets,
    dir: Dir,
    next_job: usize,
    left: u64,
}

impl FioGen {
    /// Creates the tasks (in memory cgroup `memcg`) and files of `spec` in `sim` (named
    /// after `name`), applies `advice` to every file and seeds one stream per job from
    /// `rng`. A job's own files are opened by its task, shared files by the first job's
    /// (the charges go to `memcg` either way).
    ///
    /// `spec` must be valid ([`FioSpec::validate`]); out-of-range values are clamped.
    pub fn setup(
        sim: &mut Sim,
        spec: &FioSpec,
        name: &str,
        advice: Advice,
        rng: &mut Pcg64Mcg,
        memcg: MemcgId,
    ) -> Result<FioGen, SimError> {
        let numjobs = spec.numjobs.clamp(1, MAX_JOBS) as usize;
        let nrfiles = spec.nrfiles.clamp(1, MAX_NRFILES);
        let file_pages = spec.file_pages().clamp(1, MAX_PAGES);
        let bs_pages = spec.bs_pages().clamp(1, MAX_BS / PAGE);
        let blocks = (file_pages / bs_pages).max(1);
        let mut shared: Vec<FileId> = Vec::new();
        if spec.shared_file {
            for f in 0..nrfiles {
                let file = sim.add_file(&format!("{name}.{f}"), file_pages)?;
                sim.fadvise(file, advice)?;
                shared.push(file);
            }
        }
        let offsets = match (spec.rw.is_random(), spec.random_distribution) {
            (false, _) => Offsets::Sequential,
            (true, FioDistribution::Zipf(t)) => {
                let t = if t.is_finite() {
                    t.clamp(0.0, MAX_THETA)
                } else {
                    FIO_DEF_ZIPF
                };
                Offsets::Zipf(
                    Zipf::new(blocks as f64, t)
                        .map_err(|e| SimError::Setup(format!("fio `{name}`: zipf: {e}")))?,
                )
            }
            (true, FioDistribution::Random) if spec.norandommap => Offsets::Uniform,
            (true, FioDistribution::Random) => Offsets::RandomMap,
        };
        let mut jobs = Vec::with_capacity(numjobs);
        let mut files = Vec::with_capacity(numjobs * nrfiles as usize);
        for j in 0..numjobs {
            let task = sim.add_task(&format!("{name}.{j}"));
            sim.attach_task(task, memcg)?;
            if j == 0 {
                for &file in &shared {
                    sim.open(file, task)?;
                }
            }
            let mut job_rng = Pcg64Mcg::seed_from_u64(rng.next_u64());
            let first = files.len();
            for f in 0..nrfiles {
                let file = if spec.shared_file {
                    shared[f as usize]
                } else {
                    let file = sim.add_file(&format!("{name}.{j}.{f}"), file_pages)?;
                    sim.open(file, task)?;
                    sim.fadvise(file, advice)?;
                    file
                };
                files.push(JobFile {
                    file,
                    pos: 0,
                    perm: None,
                });
            }
            let scatter =
                matches!(offsets, Offsets::Zipf(_)).then(|| Permutation::new(blocks, &mut job_rng));
            jobs.push(Job {
                rng: job_rng,
                first,
                next_file: 0,
                rwmix: RwMix::default(),
                scatter,
            });
        }
        let dir = match spec.rw {
            FioRw::Read | FioRw::RandRead => Dir::Read,
            FioRw::Write | FioRw::RandWrite => Dir::Write,
            FioRw::RandRw => {
                let r = u64::from(spec.rwmixread.unwrap_or(50).min(100));
                Dir::Mix([r, 100 - r])
            }
        };
        Ok(FioGen {
            jobs,
            files,
            nrfiles,
            blocks,
            bs_pages: bs_pages as u16,
            offsets,
            dir,
            next_job: 0,
            left: spec
                .ios_per_job()
                .min(MAX_EVENTS)
                .saturating_mul(numjobs as u64),
        })
    }

    /// The first file (for [`Generator::sink`](crate::Generator::sink)).
    pub fn first_file(&self) -> FileId {
        self.files.first().map_or(0, |f| f.file)
    }

    /// Appends up to `max` IOs to `out`, the jobs in turn; returns how many.
    pub fn fill(&mut self, out: &mut Vec<Event>, max: usize) -> usize {
        let n = self.left.min(max as u64) as usize;
        out.reserve(n);
        let (blocks, pages, nrfiles) = (self.blocks, self.bs_pages, self.nrfiles);
        let njobs = self.jobs.len();
        for _ in 0..n {
            let job = &mut self.jobs[self.next_job];
            self.next_job += 1;
            if self.next_job == njobs {
                self.next_job = 0;
            }
            let jf = &mut self.files[job.first + job.next_file as usize];
            job.next_file += 1;
            if job.next_file == nrfiles {
                job.next_file = 0;
            }
            let write = match self.dir {
                Dir::Read => false,
                Dir::Write => true,
                Dir::Mix(rwmix) => job.rwmix.next(rwmix, &mut job.rng),
            };
            let block = match &self.offsets {
                Offsets::Sequential => {
                    let b = jf.pos;
                    jf.pos = if b + 1 == blocks { 0 } else { b + 1 };
                    b
                }
                Offsets::Uniform => job.rng.random_range(0..blocks),
                Offsets::RandomMap => {
                    if jf.pos == 0 {
                        jf.perm = Some(Permutation::new(blocks, &mut job.rng));
                    }
                    let b = jf.perm.as_ref().map_or(jf.pos, |p| p.apply(jf.pos));
                    jf.pos = if jf.pos + 1 == blocks { 0 } else { jf.pos + 1 };
                    b
                }
                Offsets::Zipf(z) => {
                    let rank = (z.sample(&mut job.rng) as u64).clamp(1, blocks) - 1;
                    job.scatter.as_ref().map_or(rank, |p| p.apply(rank))
                }
            };
            let index = (block * u64::from(pages)) as u32;
            let file = jf.file;
            out.push(if write {
                Event::FileWrite { file, index, pages }
            } else {
                Event::FileRead { file, index, pages }
            });
        }
        self.left -= n as u64;
        n
    }
}

impl super::Model for FioSpec {
    const KIND: &'static str = "fio";
    const REQUIRED: &'static [&'static str] = &["rw", "size"];
    const OPTIONAL: &'static [&'static str] = &[
        "bs",
        "numjobs",
        "nrfiles",
        "shared_file",
        "ios",
        "io_size",
        "rwmixread",
        "random_distribution",
        "norandommap",
    ];
    const TARGET: crate::Target = crate::Target::File;

    fn pages(&self) -> u64 {
        FioSpec::pages(self)
    }

    fn events(&self) -> Option<u64> {
        Some(FioSpec::events(self))
    }

    fn validate(&self) -> Result<(), Bad> {
        FioSpec::validate(self)
    }
}
