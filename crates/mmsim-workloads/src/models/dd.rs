//! `dd`: a streaming writer (`dd if=/dev/zero of=f bs=1M count=N`) or reader
//! (`dd if=f of=/dev/null bs=1M count=N`), buffered.
//!
//! ## README
//!
//! ```toml
//! [[workload]]
//! kind = "dd"
//! name = "stream"
//! bs = "1M"          # default 512, dd's
//! count = 4096       # blocks
//! read = false       # true: read the file instead (dd if=f of=/dev/null)
//! ```
//!
//! One task and one file (both named `name`) of `bs × count` bytes. dd's loop is one
//! `write()` (or `read()`) of `bs` bytes per block at the next offset: here one
//! `Event::FileWrite` (or `Event::FileRead`) per block, `bs / 4 KiB` pages each. A block
//! smaller than a page (`bs` = 512, 1024 or 2048, as in `dd bs=1024`) is a one-page
//! event, so a page is written (or read) `4096 / bs` times in a row — which the page
//! cache sees as repeated accesses to that page.
//!
//! Writes go to the page cache and are written back by the flusher, as buffered dd does
//! without `oflag=direct` or `conv=fsync`. Reads use the kernel's readahead with the
//! `advice` given (default `normal`: dd gives none), so a streaming reader ramps up its
//! readahead window.
//!
//! Fields (besides the common `name`, `phase`, `weight`, `advice`, `start`):
//!
//! | field | meaning | range | default |
//! |---|---|---|---|
//! | `bs` | block size, bytes or size string | 512, 1024, 2048, or 4k..=64m in multiples of 4 KiB | 512 |
//! | `count` | blocks | 1..=2^40, `bs × count` ≤ 8 TiB | required |
//! | `read` | read the file instead of writing it | | false |
//!
//! Events: `count`.

use mmsim_core::memcg::MemcgId;
use mmsim_core::{Event, FileId, Sim, SimError};

use super::{Bad, MAX_BS, PAGE};
use crate::scenario::{MAX_EVENTS, MAX_PAGES};

/// dd's default block size (`ibs=obs=512`).
pub const DD_DEFAULT_BS: u64 = 512;

/// A `kind = "dd"` workload (see the [module docs](self) for the fields).
#[derive(Clone, Debug, PartialEq)]
pub struct DdSpec {
    /// Block size in bytes (default 512).
    pub bs: u64,
    /// Blocks.
    pub count: u64,
    /// Read the file instead of writing it.
    pub read: bool,
}

impl DdSpec {
    /// `count` writes of `bs` bytes.
    pub fn new(bs: u64, count: u64) -> DdSpec {
        DdSpec {
            bs,
            count,
            read: false,
        }
    }

    /// Pages of the file: ⌈`bs` × `count` / 4096⌉.
    pub fn pages(&self) -> u64 {
        self.bs.saturating_mul(self.count).div_ceil(PAGE)
    }

    /// Events: `count`.
    pub fn events(&self) -> u64 {
        self.count
    }

    /// Checks every field against its range.
    pub fn validate(&self) -> Result<(), Bad> {
        let ok = matches!(self.bs, 512 | 1024 | 2048)
            || (self.bs >= PAGE && self.bs.is_multiple_of(PAGE) && self.bs <= MAX_BS);
        if !ok {
            return Err(Bad::new(
                "bs",
                format!(
                    "{} is not a block size mmsim can issue: allowed 512, 1024, 2048, or 4k..=64m \
                     in multiples of 4 KiB",
                    self.bs
                ),
            ));
        }
        if self.count == 0 || self.count > MAX_EVENTS {
            return Err(Bad::new(
                "count",
                format!("{} is out of range [1, 2^40]", self.count),
            ));
        }
        if self.pages() > MAX_PAGES {
            return Err(Bad::new(
                "count",
                format!(
                    "bs × count = {} pages is more than the 2^31-page (8 TiB) file limit",
                    self.pages()
                ),
            ));
        }
        Ok(())
    }
}

/// The generator of a dd workload.
#[derive(Debug)]
pub struct DdGen {
    file: FileId,
    read: bool,
    /// Pages per block (≥ 1).
    pages: u16,
    /// Blocks per page (≥ 1; > 1 for blocks smaller than a page).
    per_page: u64,
    next: u64,
    count: u64,
}

impl DdGen {
    /// Creates the task (in memory cgroup `memcg`) and its file, opened by the task, in
    /// `sim`; `advice` applies to the file.
    ///
    /// `spec` must be valid ([`DdSpec::validate`]); out-of-range values are clamped.
    pub fn setup(
        sim: &mut Sim,
        spec: &DdSpec,
        name: &str,
        advice: mmsim_core::Advice,
        memcg: MemcgId,
    ) -> Result<DdGen, SimError> {
        let task = sim.add_task(name);
        sim.attach_task(task, memcg)?;
        let file = sim.add_file(name, spec.pages().clamp(1, MAX_PAGES))?;
        sim.open(file, task)?;
        sim.fadvise(file, advice)?;
        let bs = spec.bs.clamp(1, MAX_BS);
        Ok(DdGen {
            file,
            read: spec.read,
            pages: (bs / PAGE).max(1) as u16,
            per_page: (PAGE / bs).max(1),
            next: 0,
            count: spec.count.min(MAX_EVENTS),
        })
    }

    /// The file.
    pub fn file(&self) -> FileId {
        self.file
    }

    /// Appends up to `max` blocks to `out`; returns how many.
    pub fn fill(&mut self, out: &mut Vec<Event>, max: usize) -> usize {
        let n = (self.count - self.next).min(max as u64) as usize;
        out.reserve(n);
        let (file, pages, per_page) = (self.file, self.pages, self.per_page);
        for i in self.next..self.next + n as u64 {
            let index = (i * u64::from(pages) / per_page) as u32;
            out.push(if self.read {
                Event::FileRead { file, index, pages }
            } else {
                Event::FileWrite { file, index, pages }
            });
        }
        self.next += n as u64;
        n
    }
}

impl super::Model for DdSpec {
    const KIND: &'static str = "dd";
    const REQUIRED: &'static [&'static str] = &["count"];
    const OPTIONAL: &'static [&'static str] = &["bs", "read"];
    const TARGET: crate::Target = crate::Target::File;

    fn pages(&self) -> u64 {
        DdSpec::pages(self)
    }

    fn events(&self) -> Option<u64> {
        Some(DdSpec::events(self))
    }

    fn validate(&self) -> Result<(), Bad> {
        DdSpec::validate(self)
    }
}
