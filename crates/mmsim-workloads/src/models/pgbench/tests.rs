//! Unit tests of the pgbench model (moved out of `pgbench.rs` to keep it under the
//! file-size limit).

use super::*;
use mmsim_core::MachineConfig;

/// 16 buffers over scale 1, the accounts' first 16 blocks buffered in order.
fn warm() -> PgbenchGen {
    let mut sim = Sim::new(MachineConfig::default()).unwrap();
    let spec = PgbenchSpec {
        shared_buffers: 16 * BLCKSZ,
        ..PgbenchSpec::new(1, 10)
    };
    let mut g = PgbenchGen::setup(&mut sim, &spec, "pg", Advice::Normal, 0).unwrap();
    for b in 0..16 {
        g.access(b, false);
    }
    assert_eq!(g.next_free, 16, "the free list is used first");
    g
}

/// The buffer a miss on `block` took, and whether it wrote a victim back first.
fn miss(g: &mut PgbenchGen, block: u32) -> (u32, Option<Event>) {
    g.pending.clear();
    g.access(block, false);
    let buf = g.buffer_of(block).unwrap();
    let wb = matches!(g.pending[0], Event::FileWrite { .. }).then(|| g.pending[0]);
    (buf, wb)
}

#[test]
fn usage_counts_and_clock_sweep() {
    let mut g = warm();
    for b in 0..16 {
        assert_eq!(g.state[b], 1, "a loaded buffer starts at usage 1");
    }
    for _ in 0..10 {
        g.access(3, false);
    }
    assert_eq!(g.state[3], BM_MAX_USAGE_COUNT, "usage stops at 5");
    g.access(5, true);
    assert_eq!(g.state[5], 2 | DIRTY);
    // Every buffer is in use: the hand sweeps from 0, decrementing; buffer 0 is the
    // first found at 0 on the second lap.
    assert_eq!(miss(&mut g, 100), (0, None));
    assert_eq!(g.buffer_of(0), None, "block 0 was evicted");
    assert_eq!(miss(&mut g, 101), (1, None));
    assert_eq!(miss(&mut g, 102), (2, None));
    assert_eq!(
        miss(&mut g, 103),
        (4, None),
        "buffer 3 (usage 4 now) is passed"
    );
    assert_eq!(g.state[3], 3);
    for (i, want) in (6..16).enumerate() {
        assert_eq!(miss(&mut g, 104 + i as u32).0, want);
    }
    // Second lap: 0, 1, 2 (usage 1 from their loads) and 4 go to 0; 3 to 2; buffer 5
    // (usage 0 since the first lap, dirty) is the victim: written back, then reused.
    let (buf, wb) = miss(&mut g, 200);
    assert_eq!(buf, 5);
    assert_eq!(
        wb,
        Some(Event::FileWrite {
            file: g.files[ACCOUNTS],
            index: 10,
            pages: 2
        })
    );
    assert_eq!(g.state[3], 2);
    assert_eq!(g.buffer_of(3), Some(3), "the hot block survives");
}

#[test]
fn relations_map_global_blocks() {
    let g = warm();
    let l = PgbenchSpec::new(1, 10).layout();
    assert_eq!(g.relation(0), (ACCOUNTS, 0));
    assert_eq!(g.relation(l.accounts as u32), (INDEX, 0));
    let tellers = (l.accounts + l.index) as u32;
    assert_eq!(g.relation(tellers), (TELLERS, 0));
    assert_eq!(g.relation(tellers + 1), (BRANCHES, 0));
    assert_eq!(g.relation(tellers + 2), (HISTORY, 0));
    assert_eq!(
        g.levels,
        vec![(275, KEYS_PER_LEAF * DOWNLINKS), (1, KEYS_PER_LEAF)]
    );
}

/// All the events of a workload with `spec` at scale 1, and its generator.
fn events_of(spec: PgbenchSpec) -> (PgbenchGen, Vec<Event>) {
    let mut sim = Sim::new(MachineConfig::default()).unwrap();
    let mut g = PgbenchGen::setup(&mut sim, &spec, "pg", Advice::Normal, 0).unwrap();
    let mut rng = Pcg64Mcg::new(1);
    let mut out = Vec::new();
    while g.fill(&mut rng, &mut out, 1000) > 0 {}
    (g, out)
}

/// select-only: per transaction the index descent (2 levels at scale 1) and the
/// account's heap block, read; no store to a buffer but the loads of misses, no
/// file write (no WAL: a read-only commit logs nothing).
#[test]
fn select_only_reads_one_index_path_and_one_heap_block() {
    let spec = PgbenchSpec {
        script: PgbenchScript::SelectOnly,
        ..PgbenchSpec::new(1, 100)
    };
    let (g, ev) = events_of(spec);
    assert_eq!(g.transactions_done(), 100);
    assert!(!ev.iter().any(|e| matches!(e, Event::FileWrite { .. })));
    let reads = ev
        .iter()
        .filter(|e| matches!(e, Event::FileRead { .. }))
        .count();
    let loads = ev
        .iter()
        .filter(|e| matches!(e, Event::Access { write: false, .. }))
        .count();
    // Each of the 3 blocks is a hit (2 loads) or a miss (a read, 2 stores).
    assert_eq!(loads / 2 + reads, 300);
}

/// The backends' memory must fit one mapping: 10,000 clients of 1 GiB do not.
#[test]
fn backend_memory_beyond_one_mapping_is_refused() {
    let spec = PgbenchSpec {
        clients: MAX_CLIENTS,
        backend_memory: MAX_PRIVATE,
        ..PgbenchSpec::new(1, 1)
    };
    let e = spec.validate().unwrap_err();
    assert!(format!("{e:?}").contains("backend_memory"), "{e:?}");
    let fits = PgbenchSpec {
        clients: 4,
        backend_memory: MAX_PRIVATE,
        ..PgbenchSpec::new(1, 1)
    };
    assert!(fits.validate().is_ok());
}

/// Start-up: the binary's pages are loaded through its mapping, then each backend's
/// private memory is stored to, once each, before the first transaction.
#[test]
fn startup_reads_the_binary_and_writes_the_backends_memory() {
    let spec = PgbenchSpec {
        clients: 2,
        backend_memory: 3 * PAGE,
        binary_size: 5 * PAGE,
        ..PgbenchSpec::new(1, 1)
    };
    let (g, ev) = events_of(spec);
    let (bin, _) = g.binary.unwrap();
    let (private, pages) = g.private.unwrap();
    assert_eq!(pages, 6);
    let want: Vec<Event> = (0..5)
        .map(|index| Event::Access {
            vma: bin,
            index,
            write: false,
        })
        .chain((0..6).map(|index| Event::Access {
            vma: private,
            index,
            write: true,
        }))
        .collect();
    assert_eq!(ev[..11], want[..]);
    assert_eq!(g.transactions_done(), 1);
}

/// full_page_writes: a transaction's first modification of each block since the
/// checkpoint adds its 8 KiB image to the commit's WAL; the next modification of
/// the same block does not. The WAL reused (here after 3 commits' worth) is a
/// checkpoint: images again, and the checkpointer writes the dirty buffers.
#[test]
fn full_page_writes_log_a_blocks_first_modification_after_a_checkpoint() {
    let mut sim = Sim::new(MachineConfig::default()).unwrap();
    let spec = PgbenchSpec {
        full_page_writes: true,
        ..PgbenchSpec::new(1, 10)
    };
    let mut g = PgbenchGen::setup(&mut sim, &spec, "pg", Advice::Normal, 0).unwrap();
    let wal = g.wal;
    let wal_write = |g: &PgbenchGen| {
        g.pending
            .iter()
            .find_map(|e| match *e {
                Event::FileWrite { file, pages, .. } if file == wal => Some(pages),
                _ => None,
            })
            .unwrap()
    };
    let mut rng = Pcg64Mcg::new(1);
    g.transaction(&mut rng);
    // Account, teller and branch blocks: 3 images (history blocks are new).
    assert_eq!(wal_write(&g), 2 + 3 * 2);
    g.transaction(&mut rng);
    // Scale 1: one teller and one branch block, already logged; a new account
    // block (1,640 of them) almost surely.
    assert_eq!(wal_write(&g), 2 + 2);
    // Reuse the WAL: the next commit does not fit, a checkpoint.
    g.wal_file_pages = g.wal_pos + 1;
    g.transaction(&mut rng);
    assert_eq!(g.ckpt_pos, 0, "a checkpoint started");
    assert_eq!(g.fpw.iter().map(|w| w.count_ones()).sum::<u32>(), 0);
    assert!(g.checkpointer(), "dirty buffers to write");
    let writes = g
        .pending
        .iter()
        .filter(|e| matches!(e, Event::FileWrite { .. }))
        .count();
    // The teller, branch and history blocks and the accounts' (2 or 3).
    assert!((5..=6).contains(&writes), "{writes}");
    assert!(g.state.iter().all(|s| s & DIRTY == 0));
}

/// `fsync`: a TPC-B commit writes its WAL and then `fdatasync`s the WAL file, waiting
/// (`XLogFlush`); the same transaction without `fsync` ends at the WAL write.
#[test]
fn fsync_flushes_each_commits_wal_and_waits() {
    for fsync in [false, true] {
        let mut sim = Sim::new(MachineConfig::default()).unwrap();
        let spec = PgbenchSpec {
            fsync,
            ..PgbenchSpec::new(1, 10)
        };
        let mut g = PgbenchGen::setup(&mut sim, &spec, "pg", Advice::Normal, 0).unwrap();
        let mut rng = Pcg64Mcg::new(1);
        g.transaction(&mut rng);
        g.transaction(&mut rng);
        let wal = g.wal;
        let n = g.pending.len();
        let write = Event::FileWrite {
            file: wal,
            index: 2,
            pages: 2,
        };
        let flush = Event::FileSync {
            file: wal,
            index: 0,
            pages: 0,
            wait: true,
        };
        let syncs = g
            .pending
            .iter()
            .filter(|e| matches!(e, Event::FileSync { .. }))
            .count();
        if fsync {
            assert_eq!(g.pending[n - 2..], [write, flush]);
            assert_eq!(syncs, 1);
        } else {
            assert_eq!(g.pending[n - 1], write);
            assert_eq!(syncs, 0);
        }
    }
}

/// `fsync` with checkpoints: the checkpointer asks for the writeback of every 32
/// buffers it wrote (`checkpoint_flush_after` = 256 kB), sorted by relation and block
/// and merged into ranges, without waiting; at the end it `fsync`s each relation
/// written since the last checkpoint, waiting. 40 dirty buffers: accounts blocks 0..40
/// loaded out of order; the first 32 written (buffers 0..32 hold blocks 39 down to 8)
/// are one range, blocks 8..40; the last 8 (blocks 7 down to 0) another.
#[test]
fn the_checkpointer_asks_for_writeback_every_32_buffers_and_fsyncs_at_its_end() {
    let mut sim = Sim::new(MachineConfig::default()).unwrap();
    let spec = PgbenchSpec {
        shared_buffers: 40 * BLCKSZ,
        full_page_writes: true,
        fsync: true,
        ..PgbenchSpec::new(1, 10)
    };
    let mut g = PgbenchGen::setup(&mut sim, &spec, "pg", Advice::Normal, 0).unwrap();
    for b in (0..40).rev() {
        g.access(b, true);
    }
    g.checkpoint();
    assert!(g.checkpointer());
    let acc = g.files[ACCOUNTS];
    let write = |block: u32| Event::FileWrite {
        file: acc,
        index: block * 2,
        pages: 2,
    };
    let range = |first: u32, blocks: u16, wait| Event::FileSync {
        file: acc,
        index: first * 2,
        pages: blocks * 2,
        wait,
    };
    let mut want: Vec<Event> = (8..40).rev().map(write).collect();
    want.push(range(8, 32, false));
    want.extend((0..8).rev().map(write));
    want.push(range(0, 8, false));
    want.push(Event::FileSync {
        file: acc,
        index: 0,
        pages: 0,
        wait: true,
    });
    assert_eq!(g.pending, want);
    assert_eq!((g.to_sync, g.flush_pending.len()), (0, 0));
    // Without `fsync` the same checkpoint only writes.
    let mut sim = Sim::new(MachineConfig::default()).unwrap();
    let spec = PgbenchSpec {
        fsync: false,
        ..spec
    };
    let mut g = PgbenchGen::setup(&mut sim, &spec, "pg", Advice::Normal, 0).unwrap();
    for b in (0..40).rev() {
        g.access(b, true);
    }
    g.checkpoint();
    assert!(g.checkpointer());
    let want: Vec<Event> = (0..40).rev().map(write).collect();
    assert_eq!(g.pending, want);
}

/// A generator over scale 1 with `buffers` buffers, the background writer on
/// (`tps` 784: a round every 157 transactions), `maxpages` and `fsync`; buffer `b`
/// loaded with accounts block `buffers - 1 - b`, dirty, usage count 0 except the
/// buffers in `used` (usage 1).
fn bg_pool(buffers: u32, maxpages: u32, fsync: bool, used: &[u32]) -> PgbenchGen {
    let mut sim = Sim::new(MachineConfig::default()).unwrap();
    let spec = PgbenchSpec {
        shared_buffers: u64::from(buffers) * BLCKSZ,
        fsync,
        tps: 784,
        bgwriter_lru_maxpages: maxpages,
        ..PgbenchSpec::new(1, 10)
    };
    let mut g = PgbenchGen::setup(&mut sim, &spec, "pg", Advice::Normal, 0).unwrap();
    for b in (0..buffers).rev() {
        g.access(b, true);
    }
    for b in 0..buffers as usize {
        g.state[b] = DIRTY | u8::from(used.contains(&(b as u32)));
    }
    g
}

/// The accounts write of block `block`, and a writeback range of `blocks` from `first`.
fn acc_write(g: &PgbenchGen, block: u32) -> Event {
    Event::FileWrite {
        file: g.files[ACCOUNTS],
        index: block * 2,
        pages: 2,
    }
}

/// `BgBufferSync`'s first round over 16 buffers just loaded (16 allocations, the
/// sweep not started): it expects 2 × 16 allocations, so it scans the whole pool
/// from the sweep's position and writes every dirty buffer with usage count 0;
/// buffers 3 and 7 (usage 1) are passed though dirty. Without `fsync` no writeback
/// is asked for; the backends' sweep then takes buffer 0 without writing it.
#[test]
fn the_background_writer_cleans_the_dirty_buffers_the_sweep_takes_next() {
    let mut g = bg_pool(16, 100, false, &[3, 7]);
    assert_eq!((g.hand, g.passes, g.allocs), (0, 0, 16));
    g.bgwriter.as_mut().unwrap().due = 1;
    g.pending.clear();
    let mut out = Vec::new();
    let mut rng = Pcg64Mcg::new(1);
    // The round runs before the next transaction; take just its events.
    let n = g.fill(&mut rng, &mut out, 14);
    assert_eq!(n, 14);
    let want: Vec<Event> = (0..16)
        .filter(|b| ![3, 7].contains(b))
        .map(|b| acc_write(&g, 15 - b))
        .collect();
    assert_eq!(out, want);
    assert_eq!(g.bgwriter_stats(), Some((14, 0)));
    assert_eq!(g.allocs, 0, "StrategySyncStart resets the count");
    assert_eq!(g.state[0], 0, "clean, usage 0");
    assert_eq!(g.state[3], 1 | DIRTY, "recently used: left dirty");
    // A miss now takes buffer 0 (usage 0) without a write-back.
    assert_eq!(miss(&mut g, 100), (0, None));
    // The next round: the sweep moved one buffer for one allocation; the last
    // round's scan is a pass ahead of it, one buffer short of lapping it: buffer 0,
    // just loaded (usage 1), passed without a write.
    assert!(!g.bg_buffer_sync());
    let bg = g.bgwriter.as_ref().unwrap();
    assert_eq!((bg.next_to_clean, bg.next_passes), (1, 1));
}

/// `bgwriter_lru_maxpages` stops a round: 2 of the 14 dirty reusable buffers written,
/// `maxwritten_clean` counted; the next round goes on from where it stopped.
#[test]
fn bgwriter_lru_maxpages_stops_a_round() {
    let mut g = bg_pool(16, 2, false, &[]);
    assert!(g.bg_buffer_sync());
    assert_eq!(g.pending, [acc_write(&g, 15), acc_write(&g, 14)]);
    assert_eq!(g.bgwriter_stats(), Some((2, 1)));
    assert!(g.bg_buffer_sync());
    assert_eq!(g.pending, [acc_write(&g, 13), acc_write(&g, 12)]);
    assert_eq!(g.bgwriter_stats(), Some((4, 2)));
}

/// With `fsync` the round's writes are scheduled for writeback: the 64th asks for the
/// sorted, merged range (buffers 0..64 hold blocks 79 down to 16: one range of 64
/// blocks), the other 16 wait in the context for the next rounds.
#[test]
fn the_background_writer_asks_for_writeback_every_64_buffers() {
    let mut g = bg_pool(80, 100, true, &[]);
    assert!(g.bg_buffer_sync());
    let mut want: Vec<Event> = (16..80).rev().map(|b| acc_write(&g, b)).collect();
    want.push(Event::FileSync {
        file: g.files[ACCOUNTS],
        index: 16 * 2,
        pages: 64 * 2,
        wait: false,
    });
    want.extend((0..16).rev().map(|b| acc_write(&g, b)));
    assert_eq!(g.pending, want);
    assert_eq!(g.bgwriter.as_ref().unwrap().flush_pending.len(), 16);
    assert_eq!(
        g.to_sync, 1,
        "the accounts relation to fsync at the checkpoint"
    );
}

/// The model's clock: at 784 transactions per second a 200 ms round is due after
/// transactions 157 (156.8), 314 (313.6) and 471 (470.4); at 1 per second, five
/// rounds after each transaction.
#[test]
fn bgwriter_rounds_follow_tps_and_bgwriter_delay() {
    let mut bg = bgwriter::BgWriter::new(784, 200, 100, 2.0);
    let mut at = Vec::new();
    for tx in 1..=500 {
        bg.tick(tx);
        if bg.due > 0 {
            at.push((tx, bg.due));
            bg.due = 0;
        }
    }
    assert_eq!(at, [(157, 1), (314, 1), (471, 1)]);
    let mut bg = bgwriter::BgWriter::new(1, 200, 100, 2.0);
    bg.tick(1);
    assert_eq!(bg.due, 5);
    // The generator's transactions drive that clock, in either script: at 1
    // per second the first transaction makes five rounds due (none before it).
    for script in [PgbenchScript::TpcbLike, PgbenchScript::SelectOnly] {
        let mut sim = Sim::new(MachineConfig::default()).unwrap();
        let spec = PgbenchSpec {
            tps: 1,
            script,
            ..PgbenchSpec::new(1, 10)
        };
        let mut g = PgbenchGen::setup(&mut sim, &spec, "pg", Advice::Normal, 0).unwrap();
        assert_eq!(g.bgwriter.as_ref().unwrap().due, 0, "{script:?}");
        g.transaction(&mut Pcg64Mcg::new(1));
        assert_eq!(
            (g.tx_done, g.bgwriter.as_ref().unwrap().due),
            (1, 5),
            "{script:?}"
        );
    }
}
