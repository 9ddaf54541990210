//! PostgreSQL's background writer in the pgbench model (`tps` > 0): `BgBufferSync`
//! (src/backend/storage/buffer/bufmgr.c, PostgreSQL 15, the version of the captures'
//! server; the algorithm is unchanged since 8.3's "just-in-time" LRU scan) run every
//! `bgwriter_delay` of the model's clock, `tps` transactions per second.
//!
//! Each round reads where the clock sweep is and how many buffers the backends took
//! since the last round (`StrategySyncStart`: `nextVictimBuffer`, `completePasses`,
//! `numBufferAllocs`), estimates how many reusable buffers the next round's
//! allocations need (the allocations' fast-attack, slow-decline moving average times
//! `bgwriter_lru_multiplier`, at least `NBuffers / (120 s / bgwriter_delay)` beyond
//! the estimated reusable ones already ahead), and scans forward from where it
//! stopped, ahead of the sweep, until it has that many, laps the sweep, or has
//! written `bgwriter_lru_maxpages` buffers. A buffer it meets is reusable when
//! unpinned with usage count 0 (`SyncOneBuffer` with `skip_recently_used`: a buffer
//! in use is passed without a write); a reusable dirty one is written (`FlushBuffer`:
//! an `Event::FileWrite` of its 8 KiB, the buffer clean) and, with `fsync`, its tag
//! scheduled for writeback: every `bgwriter_flush_after` = 512 kB (64 buffers, the
//! Linux default, `DEFAULT_BGWRITER_FLUSH_AFTER`) the pending tags are sorted, merged
//! into ranges and handed to `sync_file_range(SYNC_FILE_RANGE_WRITE)`
//! (`ScheduleBufferTagForWriteback` → `IssuePendingWritebacks`). With `fsync = off`
//! `pg_flush_data` returns at once, so the writes only.
//!
//! Not modelled: hibernation (a round that finds no allocation and has lapped the
//! sweep lets the real bgwriter sleep 50 rounds until a backend wakes it; pgbench
//! allocates every round), the bgwriter's standby snapshots (WAL, `wal_level` ≥
//! replica, every 15 s), and the rounds' own time (they run between transactions).

use super::{PgbenchGen, DIRTY, NONE, PAGES_PER_BLOCK};
use mmsim_core::Event;

/// `bgwriter_flush_after` in buffers: 512 kB of 8 KiB blocks, PostgreSQL's default on
/// Linux (`DEFAULT_BGWRITER_FLUSH_AFTER`, bufmgr.h).
pub const BGWRITER_FLUSH_AFTER: usize = 64;

/// `BgBufferSync`'s smoothing samples for its moving averages (a constant in bufmgr.c).
const SMOOTHING_SAMPLES: f32 = 16.0;
/// `BgBufferSync`'s `scan_whole_pool_milliseconds`: an idle pool is scanned once in 2 min.
const SCAN_WHOLE_POOL_MS: f32 = 120_000.0;

/// The background writer's state: `BgBufferSync`'s statics, its settings and its
/// `WritebackContext`, and the model's clock that schedules its rounds.
#[derive(Debug)]
pub(super) struct BgWriter {
    /// `bgwriter_delay`, ms.
    delay: u32,
    /// `bgwriter_lru_maxpages`.
    lru_maxpages: u32,
    /// `bgwriter_lru_multiplier`.
    lru_multiplier: f64,
    /// The model's clock: transactions × 1000 ms at which the next round is due
    /// (`delay` × `tps` per round).
    next_due: u64,
    /// `delay` × `tps`: one round's length in transactions × 1000.
    period: u64,
    /// Rounds due and not yet run.
    pub(super) due: u32,
    saved_info_valid: bool,
    prev_strategy_buf_id: u32,
    prev_strategy_passes: u32,
    pub(super) next_to_clean: u32,
    pub(super) next_passes: u32,
    smoothed_alloc: f32,
    smoothed_density: f32,
    /// Tags written and not yet handed to the kernel (relation, block), at most
    /// [`BGWRITER_FLUSH_AFTER`] (`fsync` only).
    pub(super) flush_pending: Vec<(u8, u32)>,
    /// Buffers written by the rounds so far (`buf_written_clean` of
    /// `pg_stat_bgwriter`).
    pub(super) written: u64,
    /// Rounds stopped by `bgwriter_lru_maxpages` (`maxwritten_clean`).
    pub(super) maxwritten: u64,
}

impl BgWriter {
    /// A background writer for `tps` transactions per second (> 0).
    pub(super) fn new(tps: u32, delay: u32, lru_maxpages: u32, lru_multiplier: f64) -> BgWriter {
        let period = u64::from(delay) * u64::from(tps);
        BgWriter {
            delay,
            lru_maxpages,
            lru_multiplier,
            next_due: period,
            period,
            due: 0,
            saved_info_valid: false,
            prev_strategy_buf_id: 0,
            prev_strategy_passes: 0,
            next_to_clean: 0,
            next_passes: 0,
            smoothed_alloc: 0.0,
            smoothed_density: 10.0,
            flush_pending: Vec::with_capacity(BGWRITER_FLUSH_AFTER),
            written: 0,
            maxwritten: 0,
        }
    }

    /// The model's clock after `tx_done` transactions: the rounds whose time
    /// (`k × bgwriter_delay`, k ≥ 1) has come become due.
    pub(super) fn tick(&mut self, tx_done: u64) {
        while tx_done.saturating_mul(1000) >= self.next_due {
            self.due += 1;
            self.next_due += self.period;
        }
    }
}

impl PgbenchGen {
    /// `StrategySyncStart`: the clock sweep's position and completed passes, and the
    /// buffers allocated since the last call (reset).
    fn strategy_sync_start(&mut self) -> (u32, u32, u32) {
        (self.hand, self.passes, std::mem::take(&mut self.allocs))
    }

    /// One round of the background writer (`BgBufferSync`), its events queued in
    /// `pending`; returns whether it queued any.
    pub(super) fn bg_buffer_sync(&mut self) -> bool {
        self.pending.clear();
        self.pos = 0;
        let nbuffers = self.tag.len() as u32;
        let (strategy_buf_id, strategy_passes, recent_alloc) = self.strategy_sync_start();
        let Some(bg) = self.bgwriter.as_mut() else {
            return false;
        };
        if bg.lru_maxpages == 0 {
            bg.saved_info_valid = false;
            return false;
        }
        // How far the sweep moved since the last round, and how far ahead of it the
        // last round's scan reached (`bufs_to_lap`).
        let strategy_delta;
        let bufs_to_lap;
        if bg.saved_info_valid {
            let passes_delta = strategy_passes.wrapping_sub(bg.prev_strategy_passes) as i32;
            strategy_delta = i64::from(strategy_buf_id) - i64::from(bg.prev_strategy_buf_id)
                + i64::from(passes_delta) * i64::from(nbuffers);
            if (bg.next_passes.wrapping_sub(strategy_passes) as i32) > 0 {
                // One pass ahead of the sweep.
                bufs_to_lap = strategy_buf_id as i32 - bg.next_to_clean as i32;
            } else if bg.next_passes == strategy_passes && bg.next_to_clean >= strategy_buf_id {
                // Same pass, at or ahead of it.
                bufs_to_lap = (nbuffers - (bg.next_to_clean - strategy_buf_id)) as i32;
            } else {
                // Behind: start again at the sweep.
                bg.next_to_clean = strategy_buf_id;
                bg.next_passes = strategy_passes;
                bufs_to_lap = nbuffers as i32;
            }
        } else {
            strategy_delta = 0;
            bg.next_to_clean = strategy_buf_id;
            bg.next_passes = strategy_passes;
            bufs_to_lap = nbuffers as i32;
        }
        bg.prev_strategy_buf_id = strategy_buf_id;
        bg.prev_strategy_passes = strategy_passes;
        bg.saved_info_valid = true;
        // Buffers the sweep scanned per allocation (1 / density of reusable ones).
        if strategy_delta > 0 && recent_alloc > 0 {
            let scans_per_alloc = strategy_delta as f32 / recent_alloc as f32;
            bg.smoothed_density += (scans_per_alloc - bg.smoothed_density) / SMOOTHING_SAMPLES;
        }
        let bufs_ahead = nbuffers as i32 - bufs_to_lap;
        let reusable_buffers_est = (bufs_ahead as f32 / bg.smoothed_density) as i32;
        // Fast attack, slow decline.
        if bg.smoothed_alloc <= recent_alloc as f32 {
            bg.smoothed_alloc = recent_alloc as f32;
        } else {
            bg.smoothed_alloc += (recent_alloc as f32 - bg.smoothed_alloc) / SMOOTHING_SAMPLES;
        }
        let mut upcoming_alloc_est = (f64::from(bg.smoothed_alloc) * bg.lru_multiplier) as i32;
        if upcoming_alloc_est == 0 {
            bg.smoothed_alloc = 0.0;
        }
        let min_scan_buffers = (nbuffers as f32 / (SCAN_WHOLE_POOL_MS / bg.delay as f32)) as i32;
        if upcoming_alloc_est < min_scan_buffers + reusable_buffers_est {
            upcoming_alloc_est = min_scan_buffers + reusable_buffers_est;
        }
        // The LRU scan.
        let mut num_to_scan = bufs_to_lap;
        let mut num_written = 0u32;
        let mut reusable_buffers = reusable_buffers_est;
        while num_to_scan > 0 && reusable_buffers < upcoming_alloc_est {
            let b = bg.next_to_clean;
            bg.next_to_clean += 1;
            if bg.next_to_clean >= nbuffers {
                bg.next_to_clean = 0;
                bg.next_passes = bg.next_passes.wrapping_add(1);
            }
            num_to_scan -= 1;
            // SyncOneBuffer(b, skip_recently_used = true).
            let s = &mut self.state[b as usize];
            if *s & !DIRTY != 0 {
                continue; // recently used: not a candidate
            }
            reusable_buffers += 1;
            let block = self.tag[b as usize];
            if *s & DIRTY == 0 || block == NONE {
                continue; // clean or never used
            }
            *s &= !DIRTY;
            let (r, off) = relation(&self.starts, block);
            self.to_sync |= 1 << r;
            self.pending.push(Event::FileWrite {
                file: self.files[r],
                index: off * PAGES_PER_BLOCK,
                pages: PAGES_PER_BLOCK as u16,
            });
            if self.fsync {
                bg.flush_pending.push((r as u8, off));
                if bg.flush_pending.len() == BGWRITER_FLUSH_AFTER {
                    super::issue_writebacks(&self.files, &mut bg.flush_pending, &mut self.pending);
                }
            }
            num_written += 1;
            if num_written >= bg.lru_maxpages {
                bg.maxwritten += 1;
                break;
            }
        }
        bg.written += u64::from(num_written);
        // The scan counts as an allocation scan for the density estimate.
        let new_strategy_delta = bufs_to_lap - num_to_scan;
        let new_recent_alloc = reusable_buffers - reusable_buffers_est;
        if new_strategy_delta > 0 && new_recent_alloc > 0 {
            let scans_per_alloc = new_strategy_delta as f32 / new_recent_alloc as f32;
            bg.smoothed_density += (scans_per_alloc - bg.smoothed_density) / SMOOTHING_SAMPLES;
        }
        !self.pending.is_empty()
    }
}

/// The relation of global block `block` and the block within it (as
/// `PgbenchGen::relation`, without borrowing the generator).
fn relation(starts: &[u32; 6], block: u32) -> (usize, u32) {
    let mut r = 0;
    while r < 4 && block >= starts[r + 1] {
        r += 1;
    }
    (r, block - starts[r])
}
