//! `pgbench`: PostgreSQL running pgbench's built-in TPC-B-like or select-only
//! transactions, with its shared buffers in anonymous memory and its tables read through
//! the page cache.
//!
//! ## README
//!
//! ```toml
//! [[workload]]
//! kind = "pgbench"
//! name = "postgres"
//! scale = 420                # pgbench -i -s 420: 42M accounts, ≈ 6.1 GiB
//! shared_buffers = "1G"      # default 128M
//! transactions = 1_000_000
//! wal_pages = 2              # WAL written per transaction, 4 KiB pages; default 2
//! max_wal_size = "1G"        # the WAL is reused after this much; default 1G
//! ```
//!
//! One task (`name`) with the shared buffers (an anonymous mapping of `shared_buffers`,
//! 8 KiB per buffer = 2 pages), and the database as files, one per relation as
//! PostgreSQL stores them: `<name>.accounts`, `<name>.accounts_pkey`, `<name>.tellers`,
//! `<name>.branches`, `<name>.history` and the WAL, `<name>.wal`.
//!
//! Each transaction is pgbench's TPC-B-like script with `aid`, `tid`, `bid` uniform over
//! the accounts (100,000 × scale), tellers (10 × scale) and branches (scale):
//!
//! 1. `UPDATE pgbench_accounts … WHERE aid = :aid`: the primary-key index descended from
//!    its root to the leaf holding `aid` (read), then the account's heap block (write);
//! 2. `SELECT abalance … WHERE aid = :aid`: the same index path and heap block (read);
//! 3. `UPDATE pgbench_tellers … WHERE tid = :tid`: the teller's heap block (write);
//! 4. `UPDATE pgbench_branches … WHERE bid = :bid`: the branch's heap block (write);
//! 5. `INSERT INTO pgbench_history …`: the history table's last block (write; a new
//!    block every 157 rows is added without a read, as a relation extension);
//! 6. `END`: the commit's WAL, `wal_pages` pages written at the WAL's end
//!    (`Event::FileWrite`); the WAL file is reused from its start after `max_wal_size`
//!    (PostgreSQL recycles WAL segments after checkpoints).
//!
//! Every block access goes through the shared buffers, kept by the generator as
//! PostgreSQL keeps them (`BufferAlloc`, `StrategyGetBuffer`, src/backend/storage/buffer/):
//! a block in a buffer is a **hit** — two `Event::Access` to the buffer's pages, stores
//! for a write — and its buffer's `usage_count` goes up by one, up to
//! `BM_MAX_USAGE_COUNT` = 5. A **miss** takes a buffer from the free list while there is
//! one, else runs the clock sweep: the hand passes over buffers decrementing
//! `usage_count` and takes the first at 0. A dirty victim is written out first
//! (`Event::FileWrite` of its 8 KiB to its relation), then the block is read
//! (`Event::FileRead` of 8 KiB through the page cache, as PostgreSQL's buffered `pread`)
//! and copied into the buffer (two stores); its `usage_count` starts at 1.
//!
//! Fields (besides the common `name`, `phase`, `weight`, `advice`, `start`):
//!
//! | field | meaning | range | default |
//! |---|---|---|---|
//! | `scale` | pgbench's scale factor (`-s`) | 1..=19999 (32-bit account ids) | required |
//! | `shared_buffers` | PostgreSQL's `shared_buffers`, bytes or size string | 128 KiB (16 buffers)..=8 TiB; rounded down to 8 KiB | `128M` |
//! | `transactions` | transactions to run | 1..=10^10 | required |
//! | `wal_pages` | WAL pages written per commit | 1..=64 | 2 |
//! | `max_wal_size` | size of the reused WAL file | 1 MiB..=1 TiB, at least `wal_pages` | `1G` |
//! | `script` | `tpcb-like` or `select-only` (below) | | `tpcb-like` |
//! | `clients` | backends whose private memory is modelled (below) | 0..=10000 | 0 |
//! | `backend_memory` | private memory of each of those backends | 0..=1 GiB | `4M` |
//! | `binary_size` | the server's binary and libraries, mapped and read at start-up | 0..=1 GiB | 0 |
//! | `full_page_writes` | WAL full-page images and the checkpointer (below) | bool | false |
//! | `fsync` | PostgreSQL's `fsync` and `synchronous_commit`: the writeback it asks for (below) | bool | false |
//! | `tps` | transactions per second of the modelled run: the clock of the background writer (below) | 0..=10^7 | 0: none |
//! | `bgwriter_delay` | ms between background writer rounds | 10..=10000 | 200 |
//! | `bgwriter_lru_maxpages` | most buffers one round writes | 0..=1073741823 | 100 |
//! | `bgwriter_lru_multiplier` | rounds clean this many times the recent allocations | 0..=10 | 2.0 |
//! | `shutdown_checkpoint` | the server's shutdown checkpoint after the last transaction ([`checkpoint`]) | bool | false |
//!
//! The fields after `max_wal_size` are off by default (results of existing scenarios
//! keep their bits); each models one reason VALIDATION.md found the model putting less
//! pressure on the page cache than the real server ("The pgbench model's select-only
//! script and server memory").
//!
//! * `script = "select-only"` is `pgbench -S` (pgbench.c's `builtin_script`
//!   "select-only": `SELECT abalance FROM pgbench_accounts WHERE aid = :aid;`): per
//!   transaction the primary-key descent and the account's heap block, read. A
//!   read-only transaction gets no transaction id, and `RecordTransactionCommit`
//!   (src/backend/access/transam/xact.c) writes a commit record only for one that has
//!   one: no WAL.
//! * `clients = N`: each of N backends (pgbench's `-c`, one server process per client)
//!   has `backend_memory` of private memory (catalog and relation caches, plan cache,
//!   `work_mem` for sorts and hashes: PostgreSQL's docs, "Resource Consumption"), an
//!   anonymous mapping written once at connection. The default 4 MiB is from the
//!   captures of VALIDATION.md: the server's largest `rss + shmem`, 52 MB, less the
//!   32 MB of shared buffers, over 4 clients is 4.6 MiB, an upper bound (the auxiliary
//!   processes and the shared memory outside the buffers are in it too).
//! * `binary_size`: an executable shared mapping of a file of that size, each page
//!   loaded once in order before the first transaction (the server's and its
//!   libraries' start-up faults, with fault-around and mmap read-around; `VM_EXEC`, so
//!   reclaim activates a referenced page on its first young scan). The pgbench
//!   captures faulted 7,229 distinct pages (28 MiB) of fault-around windows.
//! * `full_page_writes = true` (PostgreSQL's default `on`; docs, "Write Ahead Log":
//!   "the PostgreSQL server writes the entire content of each disk page to WAL during
//!   the first modification of that page after a checkpoint"): a TPC-B transaction's
//!   first modification of an account, teller or branch block since the last
//!   checkpoint adds the block's 8 KiB to its commit's WAL write (the history's blocks
//!   are new: their first record initialises the page, `XLOG_HEAP_INIT_PAGE`, no
//!   image). A checkpoint happens when the WAL is about to be reused (`max_wal_size`:
//!   "the maximum size to let the WAL grow during automatic checkpoints"); then the
//!   checkpointer writes every buffer dirty at that moment (`BufferSync`,
//!   src/backend/storage/buffer/bufmgr.c), [`MAX_TX_EVENTS`] buffers scanned between
//!   transactions, and blocks log images again.
//! * `fsync = true` (PostgreSQL's defaults `fsync = on`, `synchronous_commit = on`;
//!   `scripts/realapp/pg.sh` sets both with `FSYNC`): the writeback PostgreSQL asks the
//!   kernel for, as `Event::FileSync`. Each commit's WAL is flushed before the commit
//!   returns (`RecordTransactionCommit` → `XLogFlush` → `issue_xlog_fsync`, src/backend/
//!   access/transam/xlog.c: `wal_sync_method = fdatasync`, the default on Linux), an
//!   `fdatasync` of the WAL file that waits. With `full_page_writes` (the checkpoints),
//!   the checkpointer asks for the writeback of what it wrote every
//!   `checkpoint_flush_after` = 256 kB (32 buffers, the Linux default:
//!   `ScheduleBufferTagForWriteback` → `IssuePendingWritebacks`, bufmgr.c, which sorts
//!   the blocks and merges neighbours into ranges → `pg_flush_data` →
//!   `sync_file_range(SYNC_FILE_RANGE_WRITE)`, no wait), and at the checkpoint's end
//!   `fsync`s every relation file written since the last one, by a backend's eviction
//!   or by itself (`ProcessSyncRequests`, src/backend/storage/sync/sync.c). With
//!   `fsync = off` PostgreSQL makes none of these calls (`pg_flush_data` returns at
//!   once when `enableFsync` is off), as the model without the field. Backends ask
//!   for none either way (`backend_flush_after` = 0).
//! * `tps = N`: PostgreSQL's background writer (`BgBufferSync`, bufmgr.c; module
//!   `bgwriter`), a round every `bgwriter_delay` ms of a clock on which the
//!   transactions run at N per second (the model has no CPU time of its own). A round
//!   scans ahead of the clock sweep and writes the dirty buffers the sweep would take
//!   next (usage count 0), as many as it estimates the next round's allocations need
//!   (`bgwriter_lru_multiplier` × their moving average), at most
//!   `bgwriter_lru_maxpages`; with `fsync` it asks for their writeback every
//!   `bgwriter_flush_after` = 512 kB. The backends then find those victims clean.
//!   PostgreSQL's defaults for the three settings (PostgreSQL 15).
//!
//! `advice` applies to the relation files (PostgreSQL gives none: default `normal`, so
//! the kernel's readahead decides, and a random 8 KiB read reads just that).
//!
//! The number of events depends on the hits and misses, so a pgbench workload has no
//! [`expected_events`](crate::Scenario::expected_events).
//!
//! The generator's own memory: 4 bytes per 8 KiB block of the accounts, index, tellers
//! and branches (the block → buffer map; ≈ 7.5 KiB per scale unit, 146 MiB at the
//! largest scale) and 5 bytes per buffer; the history table, which is only ever
//! appended to, needs one entry.
//!
//! ## Sizing (per scale unit, 8 KiB blocks)
//!
//! From pgbench's table definitions (pgbench.c `initCreateTables`: `pgbench_accounts(aid
//! int, bid int, abalance int, filler char(84))` and alike, fillfactor 100) and
//! PostgreSQL's page layout: a heap tuple is a 24-byte header plus 4 + 4 + 4 + 85 bytes
//! of data (pgbench loads the filler as `''`, blank-padded to 84 characters, plus a
//! 1-byte length), 121 bytes aligned to 128, plus a 4-byte line pointer; (8192 − 24) /
//! 132 = **61 accounts per block**, 1,640 blocks per 100,000 accounts. Tellers and
//! branches are inserted with a NULL filler ("filler column defaults to NULL" in
//! pgbench.c): 3 and 2 ints after a 24-byte header, 44 and 36 bytes with their line
//! pointers, **185 tellers** and **226 branches per block**. A history row (4 ints, a
//! timestamp, a NULL filler) is 52 bytes: **157 rows per block**. The primary-key B-tree holds 16-byte
//! index tuples plus line pointers in leaves filled to 90 % (`BTREE_DEFAULT_FILLFACTOR`):
//! **365 keys per leaf**, 274 leaves per scale unit, and internal pages filled to 70 %
//! (285 downlinks) above them. Scale 1 is then 1,640 + 276 blocks ≈ 15 MiB, which is
//! what `pgbench -i -s 1` creates (`pgbench_accounts` 13 MB, its index 2.2 MB; a
//! pgbench patch on pgsql-hackers sizing `-s` by bytes used "about 15 MiB" per unit).
//! The seed's database (001: scale 420, "5.6G") is a little smaller than the 6.1 GiB
//! this gives for scale 420; set `scale = 383` for 5.6 GiB.
//!
//! Not modelled: MVCC (an UPDATE rewrites the tuple in place: no new tuple versions, no
//! table or index bloat, no HOT, no VACUUM), the teller and branch indexes (always in
//! the buffers), the background writer without `tps` (and without `full_page_writes`
//! no checkpointer either: dirty buffers are written only when evicted), the
//! shutdown checkpoint without `shutdown_checkpoint`, the WAL in 16 MiB segments (one file here,
//! which `fdatasync` walks only where it is dirty), the system catalogs,
//! free-space and visibility maps, the buffer ring strategies of bulk operations,
//! several clients' transactions in parallel (one stream; `clients` adds their
//! memory only), and CPU time per transaction.

use mmsim_core::memcg::MemcgId;
use mmsim_core::{Advice, Event, FileId, Sim, SimError, VmaId};
use rand::Rng;
use rand_pcg::Pcg64Mcg;

use super::{Bad, PAGE};
use crate::scenario::MAX_PAGES;

/// PostgreSQL's block size, `BLCKSZ`: 8 KiB.
pub const BLCKSZ: u64 = 8192;
/// 4 KiB pages per block.
pub const PAGES_PER_BLOCK: u32 = 2;
/// Accounts per heap block.
pub const TUPLES_PER_BLOCK: u64 = 61;
/// Tellers per heap block.
pub const TELLERS_PER_BLOCK: u64 = 185;
/// Branches per heap block.
pub const BRANCHES_PER_BLOCK: u64 = 226;
/// History rows per heap block.
pub const HISTORY_PER_BLOCK: u64 = 157;
/// Keys per primary-key leaf.
pub const KEYS_PER_LEAF: u64 = 365;
/// Downlinks per internal B-tree page.
pub const DOWNLINKS: u64 = 285;
/// Largest usage count of a buffer (`BM_MAX_USAGE_COUNT`).
pub const BM_MAX_USAGE_COUNT: u8 = 5;
/// Largest scale: pgbench switches to 64-bit account ids from 20000 on.
pub const MAX_SCALE: u32 = 19_999;
/// Largest number of transactions.
pub const MAX_TRANSACTIONS: u64 = 10_000_000_000;
/// Largest `wal_pages`.
pub const MAX_WAL_PAGES: u32 = 64;

/// A `kind = "pgbench"` workload (see the [module docs](self) for the fields).
#[derive(Clone, Debug, PartialEq)]
pub struct PgbenchSpec {
    /// pgbench's scale factor, 1..=19999.
    pub scale: u32,
    /// Bytes of shared buffers (default 128 MiB).
    pub shared_buffers: u64,
    /// Transactions to run.
    pub transactions: u64,
    /// WAL pages written per commit, 1..=64 (default 2).
    pub wal_pages: u32,
    /// Bytes of WAL before it is reused (default 1 GiB).
    pub max_wal_size: u64,
    /// The transaction script (default TPC-B-like).
    pub script: PgbenchScript,
    /// Backends with private memory (`clients`; default 0: none modelled).
    pub clients: u32,
    /// Private memory per backend, bytes (default [`DEFAULT_BACKEND_MEMORY`]; used only
    /// with `clients`).
    pub backend_memory: u64,
    /// Bytes of the server's binary and libraries mapped and read at start-up
    /// (`binary_size`; default 0: none).
    pub binary_size: u64,
    /// `full_page_writes`: WAL full-page images after each checkpoint, and the
    /// checkpointer writing the dirty buffers (default false).
    pub full_page_writes: bool,
    /// `fsync`: the WAL's `fdatasync` at each commit and the checkpointer's writeback
    /// requests (default false: PostgreSQL with `fsync = off`).
    pub fsync: bool,
    /// Transactions per second of the run being modelled: the model's clock for the
    /// background writer, which runs every `bgwriter_delay` (default 0: no background
    /// writer).
    pub tps: u32,
    /// `bgwriter_delay`, milliseconds between background writer rounds, 10..=10000
    /// (default 200).
    pub bgwriter_delay: u32,
    /// `bgwriter_lru_maxpages`, most buffers a round writes, 0..=1073741823 (default 100).
    pub bgwriter_lru_maxpages: u32,
    /// `bgwriter_lru_multiplier`, 0..=10 (default 2.0).
    pub bgwriter_lru_multiplier: f64,
    /// The shutdown checkpoint after the last transaction ([`checkpoint`]; default false).
    pub shutdown_checkpoint: bool,
}

/// pgbench's built-in scripts (`pgbench -b`, src/bin/pgbench/pgbench.c `builtin_script`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum PgbenchScript {
    /// `tpcb-like`, the default: the five statements of the TPC-B-like transaction.
    #[default]
    TpcbLike,
    /// `select-only` (`pgbench -S`): `SELECT abalance FROM pgbench_accounts WHERE aid =
    /// :aid`, one primary-key lookup and heap fetch; a read-only transaction is assigned
    /// no transaction id and its commit writes no WAL (`RecordTransactionCommit`, which
    /// logs a commit record only when the transaction has an xid).
    SelectOnly,
}

mmsim_core::setting_names! { PgbenchScript, "pgbench script",
    TpcbLike => "tpcb-like",
    SelectOnly => "select-only",
}

impl std::fmt::Display for PgbenchScript {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl serde::Serialize for PgbenchScript {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
    }
}

impl<'de> serde::Deserialize<'de> for PgbenchScript {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<PgbenchScript, D::Error> {
        let s = String::deserialize(d)?;
        s.parse().map_err(serde::de::Error::custom)
    }
}

/// Default private memory per backend with `clients`: 4 MiB (see the module docs).
pub const DEFAULT_BACKEND_MEMORY: u64 = 4 << 20;
/// Most `clients`.
pub const MAX_CLIENTS: u32 = 10_000;
/// Largest `backend_memory` and `binary_size`: 1 GiB.
pub const MAX_PRIVATE: u64 = 1 << 30;

/// Largest `tps`.
pub const MAX_TPS: u32 = 10_000_000;
/// PostgreSQL's default `bgwriter_delay`, ms (guc_tables.c / postgresql.conf.sample).
pub const DEFAULT_BGWRITER_DELAY: u32 = 200;
/// PostgreSQL's default `bgwriter_lru_maxpages`.
pub const DEFAULT_BGWRITER_LRU_MAXPAGES: u32 = 100;
/// PostgreSQL's largest `bgwriter_lru_maxpages` (`INT_MAX / 2`).
pub const MAX_BGWRITER_LRU_MAXPAGES: u32 = (i32::MAX / 2) as u32;
/// PostgreSQL's default `bgwriter_lru_multiplier`.
pub const DEFAULT_BGWRITER_LRU_MULTIPLIER: f64 = 2.0;

/// Block counts of the relations for a scale factor.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Layout {
    /// Heap blocks of `pgbench_accounts`.
    pub accounts: u64,
    /// Blocks of `pgbench_accounts_pkey`: the metapage, the leaves, the upper levels.
    pub index: u64,
    /// Heap blocks of `pgbench_tellers`.
    pub tellers: u64,
    /// Heap blocks of `pgbench_branches`.
    pub branches: u64,
    /// Heap blocks `pgbench_history` grows to.
    pub history: u64,
    /// Pages of the WAL file.
    pub wal_pages: u64,
    /// Blocks per index level, leaves first, root last (at most 8 levels).
    pub levels: [u64; 8],
    /// Number of index levels.
    pub depth: usize,
}

impl PgbenchSpec {
    /// pgbench at `scale` with 128 MiB of shared buffers and `transactions`.
    pub fn new(scale: u32, transactions: u64) -> PgbenchSpec {
        PgbenchSpec {
            scale,
            shared_buffers: 128 << 20,
            transactions,
            wal_pages: 2,
            max_wal_size: 1 << 30,
            script: PgbenchScript::TpcbLike,
            clients: 0,
            backend_memory: DEFAULT_BACKEND_MEMORY,
            binary_size: 0,
            full_page_writes: false,
            fsync: false,
            tps: 0,
            bgwriter_delay: DEFAULT_BGWRITER_DELAY,
            bgwriter_lru_maxpages: DEFAULT_BGWRITER_LRU_MAXPAGES,
            bgwriter_lru_multiplier: DEFAULT_BGWRITER_LRU_MULTIPLIER,
            shutdown_checkpoint: false,
        }
    }

    /// Accounts: 100,000 per scale unit.
    pub fn accounts(&self) -> u64 {
        100_000 * u64::from(self.scale.max(1))
    }

    /// Buffers: `shared_buffers` / 8 KiB.
    pub fn buffers(&self) -> u64 {
        self.shared_buffers / BLCKSZ
    }

    /// The relations' sizes.
    pub fn layout(&self) -> Layout {
        let scale = u64::from(self.scale.max(1));
        let leaves = self.accounts().div_ceil(KEYS_PER_LEAF);
        let mut levels = [0u64; 8];
        levels[0] = leaves;
        let mut depth = 1;
        while levels[depth - 1] > 1 && depth < levels.len() {
            levels[depth] = levels[depth - 1].div_ceil(DOWNLINKS);
            depth += 1;
        }
        // With full_page_writes a TPC-B transaction logs at most 3 block images.
        let per_tx = u64::from(self.wal_pages)
            + if self.full_page_writes {
                3 * u64::from(FPI_PAGES)
            } else {
                0
            };
        let wal_pages = (self.max_wal_size / PAGE)
            .min(self.transactions.saturating_mul(per_tx))
            .max(u64::from(self.wal_pages).max(1));
        Layout {
            accounts: self.accounts().div_ceil(TUPLES_PER_BLOCK),
            index: 1 + levels[..depth].iter().sum::<u64>(),
            tellers: (10 * scale).div_ceil(TELLERS_PER_BLOCK),
            branches: scale.div_ceil(BRANCHES_PER_BLOCK),
            history: self.transactions.div_ceil(HISTORY_PER_BLOCK).max(1),
            wal_pages,
            levels,
            depth,
        }
    }

    /// Pages of the shared buffers, the relations and the WAL.
    pub fn pages(&self) -> u64 {
        let l = self.layout();
        let blocks = l.accounts + l.index + l.tellers + l.branches + l.history;
        (self.buffers() + blocks) * u64::from(PAGES_PER_BLOCK)
            + l.wal_pages
            + self.private_pages()
            + self.binary_size.div_ceil(PAGE)
    }

    /// Pages of the backends' private memory (`clients` × `backend_memory`).
    pub fn private_pages(&self) -> u64 {
        u64::from(self.clients) * self.backend_memory.div_ceil(PAGE)
    }

    /// Checks every field against its range.
    pub fn validate(&self) -> Result<(), Bad> {
        if !(1..=MAX_SCALE).contains(&self.scale) {
            return Err(Bad::new(
                "scale",
                format!(
                    "{} is out of range [1, {MAX_SCALE}] (32-bit account ids)",
                    self.scale
                ),
            ));
        }
        let max_buffers = MAX_PAGES / u64::from(PAGES_PER_BLOCK);
        if !(16..=max_buffers).contains(&self.buffers()) {
            return Err(Bad::new(
                "shared_buffers",
                format!(
                    "{} bytes is {} buffers of 8 KiB; allowed 16 (128k) to {max_buffers} (8t)",
                    self.shared_buffers,
                    self.buffers()
                ),
            ));
        }
        if !(1..=MAX_TRANSACTIONS).contains(&self.transactions) {
            return Err(Bad::new(
                "transactions",
                format!(
                    "{} is out of range [1, {MAX_TRANSACTIONS}]",
                    self.transactions
                ),
            ));
        }
        if !(1..=MAX_WAL_PAGES).contains(&self.wal_pages) {
            return Err(Bad::new(
                "wal_pages",
                format!("{} is out of range [1, {MAX_WAL_PAGES}]", self.wal_pages),
            ));
        }
        if !((1 << 20)..=(1 << 40)).contains(&self.max_wal_size)
            || self.max_wal_size / PAGE < u64::from(self.wal_pages)
        {
            return Err(Bad::new(
                "max_wal_size",
                format!(
                    "{} bytes is out of range [1m, 1t] or smaller than one commit's WAL",
                    self.max_wal_size
                ),
            ));
        }
        if self.clients > MAX_CLIENTS {
            return Err(Bad::new(
                "clients",
                format!("{} is out of range [0, {MAX_CLIENTS}]", self.clients),
            ));
        }
        for (field, v) in [
            ("backend_memory", self.backend_memory),
            ("binary_size", self.binary_size),
        ] {
            if v > MAX_PRIVATE {
                return Err(Bad::new(
                    field,
                    format!("{v} bytes is out of range [0, 1g]"),
                ));
            }
        }
        if self.tps > MAX_TPS {
            return Err(Bad::new(
                "tps",
                format!("{} is out of range [0, {MAX_TPS}]", self.tps),
            ));
        }
        if !(10..=10_000).contains(&self.bgwriter_delay) {
            return Err(Bad::new(
                "bgwriter_delay",
                format!(
                    "{} ms is out of range [10, 10000] (PostgreSQL's bounds)",
                    self.bgwriter_delay
                ),
            ));
        }
        if self.bgwriter_lru_maxpages > MAX_BGWRITER_LRU_MAXPAGES {
            return Err(Bad::new(
                "bgwriter_lru_maxpages",
                format!(
                    "{} is out of range [0, {MAX_BGWRITER_LRU_MAXPAGES}] (PostgreSQL's bounds)",
                    self.bgwriter_lru_maxpages
                ),
            ));
        }
        if !(0.0..=10.0).contains(&self.bgwriter_lru_multiplier) {
            return Err(Bad::new(
                "bgwriter_lru_multiplier",
                format!(
                    "{} is out of range [0, 10] (PostgreSQL's bounds)",
                    self.bgwriter_lru_multiplier
                ),
            ));
        }
        // The backends' memory is one mapping of at most 2^31 pages, and the
        // model's pages at most MAX_PAGES, like every other region.
        if self.private_pages() > 1 << 31 || self.pages() > MAX_PAGES {
            return Err(Bad::new(
                "backend_memory",
                format!(
                    "{} clients x {} bytes is {} pages of backend memory; with the database \
                     the model needs {} pages, more than a mapping ({}) or the model ({MAX_PAGES}) \
                     may hold",
                    self.clients,
                    self.backend_memory,
                    self.private_pages(),
                    self.pages(),
                    1u64 << 31
                ),
            ));
        }
        Ok(())
    }
}

/// No buffer / no block.
const NONE: u32 = u32::MAX;
/// Relations, in the order of the global block numbering.
const ACCOUNTS: usize = 0;
const INDEX: usize = 1;
const TELLERS: usize = 2;
const BRANCHES: usize = 3;
const HISTORY: usize = 4;

/// The generator of a pgbench workload: the transaction script and PostgreSQL's shared
/// buffer pool.
#[derive(Debug)]
pub struct PgbenchGen {
    buffers_vma: VmaId,
    /// File of each relation.
    files: [FileId; 5],
    /// First global block of each relation (and the end, at index 5).
    starts: [u32; 6],
    wal: FileId,
    wal_file_pages: u32,
    wal_pages: u16,
    wal_pos: u32,
    /// Global block → buffer, `NONE` if not buffered, for every relation but the
    /// history (4 bytes per 8 KiB block: ≈ 7.5 KiB per scale unit).
    buf_of: Vec<u32>,
    /// The history block being appended to and its buffer (`NONE`: not buffered). Only
    /// the last history block is ever accessed, so one entry maps the history table.
    history_cur: (u32, u32),
    /// Buffer → global block, `NONE` if free.
    tag: Vec<u32>,
    /// Buffer → usage count (low 7 bits) and dirty (bit 7).
    state: Vec<u8>,
    /// Buffers never used yet: `next_free..buffers`.
    next_free: u32,
    /// The clock-sweep hand.
    hand: u32,
    accounts: u64,
    tellers: u64,
    branches: u64,
    /// Index levels: first block (relative to the index file) and keys per block.
    levels: Vec<(u32, u64)>,
    /// History blocks added so far.
    history_extended: u32,
    tx_left: u64,
    tx_done: u64,
    /// Events of the transaction (at most [`MAX_TX_EVENTS`], one more with `fsync`) or
    /// of the checkpointer's step being emitted (reused).
    pending: Vec<Event>,
    pos: usize,
    script: PgbenchScript,
    /// Start-up: the binary's mapping and pages, then the backends' private memory and
    /// its pages, touched in order before the first transaction; `startup_pos` counts
    /// the pages touched so far.
    binary: Option<(VmaId, u32)>,
    private: Option<(VmaId, u32)>,
    startup_pos: u64,
    /// `full_page_writes`: one bit per global block but the history's, set at the
    /// block's first modification since the last checkpoint (empty when off).
    fpw: Vec<u64>,
    /// Full-page images of the transaction being built, in WAL pages.
    fpi_pages: u32,
    /// The checkpointer's scan of the buffers after a checkpoint (`== tag.len()`: none
    /// running).
    ckpt_pos: u32,
    /// `fsync`: commits flush the WAL, the checkpointer asks for writeback.
    fsync: bool,
    /// The checkpointer's writes not yet handed to the kernel for writeback (relation,
    /// block in it; at most [`CHECKPOINT_FLUSH_AFTER`]: PostgreSQL's `WritebackContext`).
    flush_pending: Vec<(u8, u32)>,
    /// Relations written since the last checkpoint (bit per relation), which the
    /// checkpoint's end `fsync`s (`fsync` only).
    to_sync: u8,
    /// Completed passes of the clock sweep (`completePasses`, freelist.c).
    passes: u32,
    /// Buffers allocated since the background writer last looked
    /// (`numBufferAllocs`).
    allocs: u32,
    /// The background writer (`tps` > 0).
    bgwriter: Option<bgwriter::BgWriter>,
    /// The shutdown checkpoint (`shutdown_checkpoint`).
    shutdown: checkpoint::Shutdown,
}

/// Most events one transaction emits without `fsync`: 2 lookups of up to 8 index levels
/// and 5 heap blocks, each at most a write-out, a read and 2 stores, plus the WAL write
/// (`fsync` adds the WAL's flush, one more). Also the checkpointer's step, in buffers
/// scanned per call (kept when `fsync` came, so that no checkpoint moves).
pub const MAX_TX_EVENTS: usize = (2 * 8 + 5) * 4 + 1;

/// `checkpoint_flush_after` in buffers: 256 kB of 8 KiB blocks, PostgreSQL's default on
/// Linux (`DEFAULT_CHECKPOINT_FLUSH_AFTER`, bufmgr.h).
pub const CHECKPOINT_FLUSH_AFTER: usize = 32;

/// WAL pages of one full-page image: the 8 KiB block.
const FPI_PAGES: u32 = PAGES_PER_BLOCK;

const DIRTY: u8 = 0x80;

impl PgbenchGen {
    /// Creates the task (in memory cgroup `memcg`), the shared buffers and the relation
    /// and WAL files (opened by the task) in `sim`; `advice` applies to the relation
    /// files.
    ///
    /// `spec` must be valid ([`PgbenchSpec::validate`]); out-of-range values are clamped.
    pub fn setup(
        sim: &mut Sim,
        spec: &PgbenchSpec,
        name: &str,
        advice: Advice,
        memcg: MemcgId,
    ) -> Result<PgbenchGen, SimError> {
        let spec = PgbenchSpec {
            scale: spec.scale.clamp(1, MAX_SCALE),
            transactions: spec.transactions.clamp(1, MAX_TRANSACTIONS),
            wal_pages: spec.wal_pages.clamp(1, MAX_WAL_PAGES),
            clients: spec.clients.min(MAX_CLIENTS),
            backend_memory: spec.backend_memory.min(MAX_PRIVATE),
            binary_size: spec.binary_size.min(MAX_PRIVATE),
            ..spec.clone()
        };
        let l = spec.layout();
        let buffers = spec
            .buffers()
            .clamp(16, MAX_PAGES / u64::from(PAGES_PER_BLOCK));
        let task = sim.add_task(name);
        sim.attach_task(task, memcg)?;
        let buffers_vma = sim.mmap_anon(task, buffers * u64::from(PAGES_PER_BLOCK))?;
        let blocks = [l.accounts, l.index, l.tellers, l.branches, l.history];
        let names = [
            "accounts",
            "accounts_pkey",
            "tellers",
            "branches",
            "history",
        ];
        let mut files = [0; 5];
        let mut starts = [0u32; 6];
        for r in 0..5 {
            let file = sim.add_file(
                &format!("{name}.{}", names[r]),
                blocks[r] * u64::from(PAGES_PER_BLOCK),
            )?;
            sim.open(file, task)?;
            sim.fadvise(file, advice)?;
            files[r] = file;
            starts[r + 1] = starts[r] + blocks[r] as u32;
        }
        let wal = sim.add_file(&format!("{name}.wal"), l.wal_pages)?;
        sim.open(wal, task)?;
        // The index file: the metapage, then the levels from the leaves up.
        let mut levels = Vec::with_capacity(l.depth);
        let mut first = 1u32;
        let mut keys_per_block = KEYS_PER_LEAF;
        for &n in &l.levels[..l.depth] {
            levels.push((first, keys_per_block));
            first += n as u32;
            keys_per_block = keys_per_block.saturating_mul(DOWNLINKS);
        }
        levels.reverse(); // root first, as a descent visits them
                          // The server's binary and libraries: one executable shared mapping of a file.
        let binary = match spec.binary_size.div_ceil(PAGE) {
            0 => None,
            pages => {
                let file = sim.add_file(&format!("{name}.binary"), pages)?;
                Some((sim.mmap_file(task, file, 0, pages, true)?, pages as u32))
            }
        };
        let private = match spec.private_pages() {
            0 => None,
            pages => Some((sim.mmap_anon(task, pages)?, pages as u32)),
        };
        let fpw = if spec.full_page_writes {
            vec![0u64; (starts[HISTORY] as usize).div_ceil(64)]
        } else {
            Vec::new()
        };
        Ok(PgbenchGen {
            buffers_vma,
            files,
            starts,
            wal,
            wal_file_pages: l.wal_pages as u32,
            wal_pages: spec.wal_pages as u16,
            wal_pos: 0,
            buf_of: vec![NONE; starts[HISTORY] as usize],
            history_cur: (NONE, NONE),
            tag: vec![NONE; buffers as usize],
            state: vec![0; buffers as usize],
            next_free: 0,
            hand: 0,
            accounts: spec.accounts(),
            tellers: 10 * u64::from(spec.scale),
            branches: u64::from(spec.scale),
            levels,
            history_extended: 0,
            tx_left: spec.transactions,
            tx_done: 0,
            // A background writer round emits at most a write and a writeback range
            // per buffer written.
            pending: Vec::with_capacity(if spec.tps > 0 {
                MAX_TX_EVENTS.max(2 * u64::from(spec.bgwriter_lru_maxpages).min(buffers) as usize)
            } else {
                MAX_TX_EVENTS
            }),
            pos: 0,
            script: spec.script,
            binary,
            private,
            startup_pos: 0,
            fpw,
            fpi_pages: 0,
            ckpt_pos: buffers as u32,
            fsync: spec.fsync,
            flush_pending: Vec::with_capacity(if spec.fsync {
                CHECKPOINT_FLUSH_AFTER
            } else {
                0
            }),
            to_sync: 0,
            passes: 0,
            allocs: 0,
            bgwriter: (spec.tps > 0).then(|| {
                bgwriter::BgWriter::new(
                    spec.tps.min(MAX_TPS),
                    spec.bgwriter_delay.clamp(10, 10_000),
                    spec.bgwriter_lru_maxpages.min(MAX_BGWRITER_LRU_MAXPAGES),
                    spec.bgwriter_lru_multiplier.clamp(0.0, 10.0),
                )
            }),
            shutdown: checkpoint::Shutdown::new(spec.shutdown_checkpoint),
        })
    }

    /// The shared buffers' mapping.
    pub fn buffers_vma(&self) -> VmaId {
        self.buffers_vma
    }

    /// The buffer of global block `block`, if it is in the shared buffers.
    pub fn buffer_of(&self, block: u32) -> Option<u32> {
        if block >= self.starts[5] {
            return None;
        }
        Some(self.lookup(block)).filter(|&b| b != NONE)
    }

    /// `BufTableLookup`: the buffer of `block` or `NONE`.
    #[inline]
    fn lookup(&self, block: u32) -> u32 {
        if block >= self.starts[HISTORY] {
            if block == self.history_cur.0 {
                self.history_cur.1
            } else {
                NONE
            }
        } else {
            self.buf_of[block as usize]
        }
    }

    /// Maps `block` to `buf` (`NONE`: unmaps it).
    #[inline]
    fn map(&mut self, block: u32, buf: u32) {
        if block >= self.starts[HISTORY] {
            if buf != NONE {
                self.history_cur = (block, buf);
            } else if block == self.history_cur.0 {
                self.history_cur.1 = NONE;
            }
        } else {
            self.buf_of[block as usize] = buf;
        }
    }

    /// The relation (0 accounts, 1 index, 2 tellers, 3 branches, 4 history) of a
    /// global block, and the block within it.
    #[inline]
    fn relation(&self, block: u32) -> (usize, u32) {
        let mut r = 0;
        while r < 4 && block >= self.starts[r + 1] {
            r += 1;
        }
        (r, block - self.starts[r])
    }

    /// `StrategyGetBuffer`: a free buffer, else the clock sweep's victim.
    #[inline]
    fn victim(&mut self) -> u32 {
        let n = self.tag.len() as u32;
        self.allocs = self.allocs.wrapping_add(1);
        if self.next_free < n {
            self.next_free += 1;
            return self.next_free - 1;
        }
        loop {
            let b = self.hand;
            self.hand = if b + 1 == n {
                self.passes = self.passes.wrapping_add(1);
                0
            } else {
                b + 1
            };
            let s = &mut self.state[b as usize];
            if *s & !DIRTY == 0 {
                return b;
            }
            *s -= 1;
        }
    }

    /// One access to global block `block` through the shared buffers (`ReadBuffer` and
    /// `PinBuffer` or `BufferAlloc`), pushed to `pending`.
    fn access(&mut self, block: u32, write: bool) {
        if write && !self.fpw.is_empty() && block < self.starts[HISTORY] {
            // full_page_writes: the first modification of a block after a checkpoint
            // logs the whole block (XLogInsert's backup block, `XLogRecordAssemble`).
            let (w, bit) = ((block / 64) as usize, 1u64 << (block % 64));
            if self.fpw[w] & bit == 0 {
                self.fpw[w] |= bit;
                self.fpi_pages += FPI_PAGES;
            }
        }
        let vma = self.buffers_vma;
        let b = self.lookup(block);
        if b != NONE {
            let s = &mut self.state[b as usize];
            if *s & !DIRTY < BM_MAX_USAGE_COUNT {
                *s += 1;
            }
            if write {
                *s |= DIRTY;
            }
            for p in 0..PAGES_PER_BLOCK {
                self.pending.push(Event::Access {
                    vma,
                    index: b * PAGES_PER_BLOCK + p,
                    write,
                });
            }
            return;
        }
        let buf = self.victim();
        let old = self.tag[buf as usize];
        if old != NONE {
            if self.state[buf as usize] & DIRTY != 0 {
                let (r, off) = self.relation(old);
                self.to_sync |= 1 << r;
                self.pending.push(Event::FileWrite {
                    file: self.files[r],
                    index: off * PAGES_PER_BLOCK,
                    pages: PAGES_PER_BLOCK as u16,
                });
            }
            self.map(old, NONE);
        }
        let (r, off) = self.relation(block);
        let extend = r == HISTORY && off >= self.history_extended;
        if extend {
            self.history_extended = off + 1;
        } else {
            self.pending.push(Event::FileRead {
                file: self.files[r],
                index: off * PAGES_PER_BLOCK,
                pages: PAGES_PER_BLOCK as u16,
            });
        }
        self.tag[buf as usize] = block;
        self.map(block, buf);
        self.state[buf as usize] = 1 | if write || extend { DIRTY } else { 0 };
        for p in 0..PAGES_PER_BLOCK {
            self.pending.push(Event::Access {
                vma,
                index: buf * PAGES_PER_BLOCK + p,
                write: true,
            });
        }
    }

    /// The index descent to the leaf of 0-based account `aid`, root first.
    fn index_lookup(&mut self, aid: u64) {
        let base = self.starts[INDEX];
        for i in 0..self.levels.len() {
            let (first, keys) = self.levels[i];
            self.access(base + first + (aid / keys) as u32, false);
        }
    }

    /// Queues the events of the next transaction.
    fn transaction(&mut self, rng: &mut Pcg64Mcg) {
        self.pending.clear();
        self.pos = 0;
        let aid = rng.random_range(0..self.accounts);
        let account = self.starts[ACCOUNTS] + (aid / TUPLES_PER_BLOCK) as u32;
        if self.script == PgbenchScript::SelectOnly {
            // SELECT abalance … WHERE aid = :aid; a read-only commit writes no WAL.
            self.index_lookup(aid);
            self.access(account, false);
            self.tx_done += 1;
            self.tx_left -= 1;
            if let Some(bg) = self.bgwriter.as_mut() {
                bg.tick(self.tx_done);
            }
            return;
        }
        let tid = rng.random_range(0..self.tellers);
        let bid = rng.random_range(0..self.branches);
        // UPDATE pgbench_accounts, then SELECT abalance: the index path and the heap block.
        self.index_lookup(aid);
        self.access(account, true);
        self.index_lookup(aid);
        self.access(account, false);
        self.access(
            self.starts[TELLERS] + (tid / TELLERS_PER_BLOCK) as u32,
            true,
        );
        self.access(
            self.starts[BRANCHES] + (bid / BRANCHES_PER_BLOCK) as u32,
            true,
        );
        let h = (self.tx_done / HISTORY_PER_BLOCK) as u32;
        self.access(
            self.starts[HISTORY] + h.min(self.starts[5] - self.starts[4] - 1),
            true,
        );
        // Commit: the WAL, with the transaction's full-page images.
        let pages = (u32::from(self.wal_pages) + std::mem::take(&mut self.fpi_pages))
            .min(self.wal_file_pages) as u16;
        if self.wal_pos + u32::from(pages) > self.wal_file_pages {
            self.wal_pos = 0;
            if !self.fpw.is_empty() {
                self.checkpoint();
            }
        }
        self.pending.push(Event::FileWrite {
            file: self.wal,
            index: self.wal_pos,
            pages,
        });
        if self.fsync {
            // XLogFlush: the commit waits for its WAL on the device (fdatasync).
            self.pending.push(Event::FileSync {
                file: self.wal,
                index: 0,
                pages: 0,
                wait: true,
            });
        }
        self.wal_pos += u32::from(pages);
        self.tx_done += 1;
        self.tx_left -= 1;
        if let Some(bg) = self.bgwriter.as_mut() {
            bg.tick(self.tx_done);
        }
    }

    /// A checkpoint, when the WAL is about to be reused (`max_wal_size`: PostgreSQL
    /// starts one before the WAL since the last would exceed it): the next modification
    /// of every block logs a full-page image again, and the checkpointer writes every
    /// buffer dirty now (`BufferSync`). Here it writes them all before the next
    /// transaction, in chunks of [`MAX_TX_EVENTS`] buffers scanned (`fill`), as one
    /// burst; PostgreSQL spreads the writes over `checkpoint_completion_target` of the
    /// interval while transactions go on (not modelled).
    fn checkpoint(&mut self) {
        self.fpw.fill(0);
        self.ckpt_pos = 0;
    }

    /// Queues the checkpointer's next writes (at most [`MAX_TX_EVENTS`] buffers
    /// scanned); returns whether it queued anything.
    fn checkpointer(&mut self) -> bool {
        self.pending.clear();
        self.pos = 0;
        let n = self.tag.len() as u32;
        let end = (self.ckpt_pos + MAX_TX_EVENTS as u32).min(n);
        for b in self.ckpt_pos..end {
            let s = &mut self.state[b as usize];
            let block = self.tag[b as usize];
            if *s & DIRTY != 0 && block != NONE {
                *s &= !DIRTY;
                let (r, off) = self.relation(block);
                self.pending.push(Event::FileWrite {
                    file: self.files[r],
                    index: off * PAGES_PER_BLOCK,
                    pages: PAGES_PER_BLOCK as u16,
                });
                if self.fsync {
                    self.to_sync |= 1 << r;
                    self.flush_pending.push((r as u8, off));
                    if self.flush_pending.len() == CHECKPOINT_FLUSH_AFTER {
                        self.issue_pending_writebacks();
                    }
                }
            }
        }
        self.ckpt_pos = end;
        if end == n && self.fsync {
            // The checkpoint's end: the writebacks left, then `ProcessSyncRequests`.
            self.issue_pending_writebacks();
            for r in 0..5 {
                if self.to_sync & (1 << r) != 0 {
                    self.pending.push(Event::FileSync {
                        file: self.files[r],
                        index: 0,
                        pages: 0,
                        wait: true,
                    });
                }
            }
            self.to_sync = 0;
        }
        !self.pending.is_empty()
    }

    /// `IssuePendingWritebacks` of the checkpointer's pending writes ([`issue_writebacks`]).
    fn issue_pending_writebacks(&mut self) {
        issue_writebacks(&self.files, &mut self.flush_pending, &mut self.pending);
    }

    /// Queues the next start-up events (the binary's pages read through its mapping,
    /// then the backends' private memory written once); returns whether it queued any.
    fn startup(&mut self) -> bool {
        self.pending.clear();
        self.pos = 0;
        let bin = self.binary.map_or(0, |(_, p)| u64::from(p));
        let private = self.private.map_or(0, |(_, p)| u64::from(p));
        while self.pending.len() < MAX_TX_EVENTS && self.startup_pos < bin + private {
            let i = self.startup_pos;
            self.startup_pos += 1;
            let ev = match (self.binary, self.private) {
                (Some((vma, _)), _) if i < bin => Event::Access {
                    vma,
                    index: i as u32,
                    write: false,
                },
                (_, Some((vma, _))) => Event::Access {
                    vma,
                    index: (i - bin) as u32,
                    write: true,
                },
                _ => break,
            };
            self.pending.push(ev);
        }
        !self.pending.is_empty()
    }

    /// Appends up to `max` events to `out`; returns how many.
    pub fn fill(&mut self, rng: &mut Pcg64Mcg, out: &mut Vec<Event>, max: usize) -> usize {
        let mut n = 0;
        while n < max {
            if self.pos == self.pending.len() {
                if self.startup() || (self.ckpt_pos < self.tag.len() as u32 && self.checkpointer())
                {
                    // Start-up or checkpoint events queued.
                } else if self.bgwriter.as_ref().is_some_and(|bg| bg.due > 0) && {
                    self.bgwriter.as_mut().unwrap().due -= 1;
                    self.bg_buffer_sync()
                } {
                    // A background writer round's writes queued.
                } else if self.tx_left == 0 {
                    if !self.shutdown_checkpoint() {
                        break;
                    }
                } else {
                    self.transaction(rng);
                }
            }
            let take = (self.pending.len() - self.pos).min(max - n);
            out.extend_from_slice(&self.pending[self.pos..self.pos + take]);
            self.pos += take;
            n += take;
        }
        n
    }

    /// Transactions completed (all their events generated or queued).
    pub fn transactions_done(&self) -> u64 {
        self.tx_done
    }

    /// Buffers the background writer wrote (`pg_stat_bgwriter.buffers_clean`) and its
    /// rounds stopped by `bgwriter_lru_maxpages` (`maxwritten_clean`); `None` without
    /// one.
    pub fn bgwriter_stats(&self) -> Option<(u64, u64)> {
        self.bgwriter.as_ref().map(|bg| (bg.written, bg.maxwritten))
    }
}

impl super::Model for PgbenchSpec {
    const KIND: &'static str = "pgbench";
    const REQUIRED: &'static [&'static str] = &["scale", "transactions"];
    const OPTIONAL: &'static [&'static str] = &[
        "shared_buffers",
        "wal_pages",
        "max_wal_size",
        "script",
        "clients",
        "backend_memory",
        "binary_size",
        "full_page_writes",
        "fsync",
        "tps",
        "bgwriter_delay",
        "bgwriter_lru_maxpages",
        "bgwriter_lru_multiplier",
        "shutdown_checkpoint",
    ];
    const TARGET: crate::Target = crate::Target::File;

    fn pages(&self) -> u64 {
        PgbenchSpec::pages(self)
    }

    fn events(&self) -> Option<u64> {
        None
    }

    fn validate(&self) -> Result<(), Bad> {
        PgbenchSpec::validate(self)
    }
}

/// `IssuePendingWritebacks` (src/backend/storage/buffer/bufmgr.c): pending written
/// tags sorted by relation and block, neighbouring blocks merged into one range, each
/// range handed to the kernel with `sync_file_range(SYNC_FILE_RANGE_WRITE)`
/// (`smgrwriteback` → `FileWriteback` → `pg_flush_data`), which does not wait; `tags`
/// is emptied. Shared by the checkpointer's and the background writer's contexts.
fn issue_writebacks(files: &[FileId; 5], tags: &mut Vec<(u8, u32)>, out: &mut Vec<Event>) {
    tags.sort_unstable();
    let mut i = 0;
    while i < tags.len() {
        let (r, first) = tags[i];
        let mut n = 1;
        while i + n < tags.len() && tags[i + n] == (r, first + n as u32) {
            n += 1;
        }
        out.push(Event::FileSync {
            file: files[r as usize],
            index: first * PAGES_PER_BLOCK,
            pages: (n as u32 * PAGES_PER_BLOCK) as u16,
            wait: false,
        });
        i += n;
    }
    tags.clear();
}

mod bgwriter;
pub use bgwriter::BGWRITER_FLUSH_AFTER;
pub mod checkpoint;

#[cfg(test)]
mod tests;
