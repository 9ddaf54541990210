//! PostgreSQL's shutdown checkpoint in the pgbench model (`shutdown_checkpoint = true`):
//! after the last transaction the server stops, and its shutdown
//! (`ShutdownXLOG` → `CreateCheckPoint(CHECKPOINT_IS_SHUTDOWN | CHECKPOINT_IMMEDIATE)`,
//! src/backend/access/transam/xlog.c, PostgreSQL 15, the captures' server) runs a
//! checkpoint before it exits: `CheckPointGuts` → `CheckPointBuffers` → `BufferSync`
//! (src/backend/storage/buffer/bufmgr.c), then `ProcessSyncRequests`
//! (src/backend/storage/sync/sync.c).
//!
//! * `BufferSync` marks every dirty buffer (a shutdown checkpoint writes the unlogged
//!   ones too: no `BM_PERMANENT` test), collects their tags in `CkptBufferIds`, sorts
//!   them with `ckpt_buforder_comparator` — tablespace, relation (`relNumber`), fork,
//!   block — and writes each in that order (`SyncOneBuffer`: a `write()` of its 8 KiB
//!   into the page cache, here `Event::FileWrite`, the buffer clean). With `fsync` every
//!   written tag goes to the checkpointer's `WritebackContext`: every
//!   `checkpoint_flush_after` = 32 buffers the pending tags are sorted, merged and handed
//!   to `sync_file_range(SYNC_FILE_RANGE_WRITE)` (`IssuePendingWritebacks`), the rest
//!   at the end. An immediate checkpoint does not sleep between writes
//!   (`CheckpointWriteDelay`), so the writes follow each other.
//! * `ProcessSyncRequests` then `fsync`s every relation file written since the last
//!   checkpoint — by the backends' evictions, the background writer or the checkpoint
//!   itself (the model's `to_sync`) — each an `Event::FileSync` of the whole file that
//!   waits. In the kernel that fsync writes back the dirty page-cache folios reclaim
//!   marked PG_reclaim, and their writes' completion rotates them
//!   (`folio_end_writeback` → `folio_rotate_reclaimable`, counted in `pgrotated`): the
//!   simulator's core does this for every completed write, the fsync's included.
//!   With `fsync = off` PostgreSQL makes neither call (`pg_flush_data` and
//!   `register_dirty_segment` return at once when `enableFsync` is off): the writes only.
//!
//! The relations' order is their relfilenumbers': `pgbench -i` (steps `dtgvp`) creates
//! the tables, then in the data-generation transaction `truncate table
//! pgbench_accounts, pgbench_branches, pgbench_history, pgbench_tellers` gives each a
//! new relfilenumber in that order, and the primary keys are added last
//! ([`RELFILENUMBER_RANK`]). Only the main fork exists here.
//!
//! Not modelled: the checkpoint's WAL record and its flush (a few hundred bytes, the
//! WAL is already flushed at every commit with `fsync`), the other files the real
//! server syncs (the capture's 16 `fsync`s of data files include the system catalogs,
//! the tellers' and branches' indexes and the free-space and visibility maps), the
//! order of `ProcessSyncRequests`' hash table (here relfilenumber order), and the
//! background writer's pending writeback requests, which it drops when it exits.

use super::PAGES_PER_BLOCK;
use super::{issue_writebacks, PgbenchGen, CHECKPOINT_FLUSH_AFTER, DIRTY, MAX_TX_EVENTS, NONE};
use mmsim_core::Event;

/// The model's relation files (the WAL is not one).
const RELATIONS: usize = 5;

/// Rank of each of the model's relations (0 accounts, 1 accounts_pkey, 2 tellers,
/// 3 branches, 4 history) in relfilenumber order: accounts, branches, history,
/// tellers (`pgbench -i`'s `TRUNCATE`), then accounts_pkey (`ALTER TABLE … ADD
/// PRIMARY KEY` after the data).
pub const RELFILENUMBER_RANK: [u8; RELATIONS] = [0, 4, 3, 1, 2];

/// Where the shutdown checkpoint is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    /// Not asked for (`shutdown_checkpoint = false`).
    Off,
    /// To run after the last transaction.
    Waiting,
    /// `BufferSync` writing the sorted buffers.
    Writing,
    /// Done (or never to run).
    Done,
}

/// The shutdown checkpoint's state.
#[derive(Debug)]
pub(super) struct Shutdown {
    phase: Phase,
    /// `CkptBufferIds`: (relation rank, block in the relation, buffer) of every buffer
    /// dirty when it started, sorted; built once, at the end of the run.
    ids: Vec<(u8, u32, u32)>,
    /// The next of `ids` to write.
    next: usize,
    /// Buffers written (`ckpt_bufs_written`, "checkpoint complete: wrote N buffers").
    written: u64,
    /// Relation files `fsync`ed (`ProcessSyncRequests`).
    synced: u32,
}

impl Shutdown {
    /// The state of a run with `shutdown_checkpoint = on`.
    pub(super) fn new(on: bool) -> Shutdown {
        Shutdown {
            phase: if on { Phase::Waiting } else { Phase::Off },
            ids: Vec::new(),
            next: 0,
            written: 0,
            synced: 0,
        }
    }
}

impl PgbenchGen {
    /// The shutdown checkpoint's next step, its events queued in `pending` (at most
    /// [`MAX_TX_EVENTS`] buffers written per step; the writeback requests and the
    /// `fsync`s at the end); returns whether it queued any. Called once the last
    /// transaction is out; returns false when there is none or it is over.
    pub(super) fn shutdown_checkpoint(&mut self) -> bool {
        self.pending.clear();
        self.pos = 0;
        match self.shutdown.phase {
            Phase::Off | Phase::Done => return false,
            Phase::Waiting => self.buffer_sync_start(),
            Phase::Writing => {}
        }
        let ids = std::mem::take(&mut self.shutdown.ids);
        let end = (self.shutdown.next + MAX_TX_EVENTS).min(ids.len());
        for &(_, _, b) in &ids[self.shutdown.next..end] {
            // SyncOneBuffer(b, skip_recently_used = false): written if still dirty.
            let s = &mut self.state[b as usize];
            let block = self.tag[b as usize];
            if *s & DIRTY == 0 || block == NONE {
                continue;
            }
            *s &= !DIRTY;
            let (r, off) = self.relation(block);
            self.pending.push(Event::FileWrite {
                file: self.files[r],
                index: off * PAGES_PER_BLOCK,
                pages: PAGES_PER_BLOCK as u16,
            });
            self.shutdown.written += 1;
            if self.fsync {
                self.to_sync |= 1 << r;
                self.flush_pending.push((r as u8, off));
                if self.flush_pending.len() == CHECKPOINT_FLUSH_AFTER {
                    issue_writebacks(&self.files, &mut self.flush_pending, &mut self.pending);
                }
            }
        }
        self.shutdown.next = end;
        if end < ids.len() {
            self.shutdown.ids = ids;
            return true;
        }
        // BufferSync's end, then ProcessSyncRequests.
        self.shutdown.phase = Phase::Done;
        if self.fsync {
            issue_writebacks(&self.files, &mut self.flush_pending, &mut self.pending);
            for rank in 0..RELATIONS as u8 {
                let r = RELFILENUMBER_RANK.iter().position(|&k| k == rank).unwrap();
                if self.to_sync & (1 << r) != 0 {
                    self.pending.push(Event::FileSync {
                        file: self.files[r],
                        index: 0,
                        pages: 0,
                        wait: true,
                    });
                    self.shutdown.synced += 1;
                }
            }
            self.to_sync = 0;
        }
        !self.pending.is_empty()
    }

    /// `BufferSync`'s first half: every dirty buffer's tag in `CkptBufferIds`, sorted
    /// by relation (relfilenumber) and block (`sort_checkpoint_bufferids`).
    fn buffer_sync_start(&mut self) {
        let mut ids = Vec::new();
        for (b, (&s, &block)) in self.state.iter().zip(&self.tag).enumerate() {
            if s & DIRTY != 0 && block != NONE {
                let (r, off) = self.relation(block);
                ids.push((RELFILENUMBER_RANK[r], off, b as u32));
            }
        }
        ids.sort_unstable();
        self.shutdown.ids = ids;
        self.shutdown.next = 0;
        self.shutdown.phase = Phase::Writing;
    }

    /// The shutdown checkpoint's buffers written and relation files `fsync`ed; `None`
    /// without `shutdown_checkpoint`.
    pub fn shutdown_checkpoint_stats(&self) -> Option<(u64, u32)> {
        (self.shutdown.phase != Phase::Off).then_some((self.shutdown.written, self.shutdown.synced))
    }
}

#[cfg(test)]
mod tests;
