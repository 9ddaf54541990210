//! Unit tests of the shutdown checkpoint (exact event lists).

use super::super::*;
use super::RELFILENUMBER_RANK;
use mmsim_core::MachineConfig;
use rand_pcg::Pcg64Mcg;

/// A generator over scale 1 with `buffers` buffers and the run's transactions all
/// done (so `fill` goes to the shutdown), `fsync` and `shutdown_checkpoint` as given.
fn ended(buffers: u32, fsync: bool, shutdown: bool) -> PgbenchGen {
    let mut sim = Sim::new(MachineConfig::default()).unwrap();
    let spec = PgbenchSpec {
        shared_buffers: u64::from(buffers) * BLCKSZ,
        fsync,
        shutdown_checkpoint: shutdown,
        ..PgbenchSpec::new(1, 10)
    };
    let mut g = PgbenchGen::setup(&mut sim, &spec, "pg", Advice::Normal, 0).unwrap();
    g.tx_left = 0;
    g
}

/// A backend's access to `block` (the events it queued dropped: the tests look at
/// what the shutdown adds).
fn load(g: &mut PgbenchGen, block: u32, write: bool) {
    g.access(block, write);
    g.pending.clear();
    g.pos = 0;
}

/// Every event `fill` still has to give.
fn drain(g: &mut PgbenchGen) -> Vec<Event> {
    let mut rng = Pcg64Mcg::new(1);
    let mut out = Vec::new();
    while g.fill(&mut rng, &mut out, 7) > 0 {}
    out
}

fn write(file: FileId, block: u32) -> Event {
    Event::FileWrite {
        file,
        index: block * 2,
        pages: 2,
    }
}

fn range(file: FileId, first: u32, blocks: u16) -> Event {
    Event::FileSync {
        file,
        index: first * 2,
        pages: blocks * 2,
        wait: false,
    }
}

fn fsync(file: FileId) -> Event {
    Event::FileSync {
        file,
        index: 0,
        pages: 0,
        wait: true,
    }
}

/// Scale 1: accounts blocks 0..1640, the index 1640..1916, tellers 1916, branches
/// 1917, history from 1918. Buffers 0..8 hold, in this order: history 0 (new, dirty),
/// accounts 5 (dirty), index 3 (dirty), tellers 0 (dirty), accounts 2 (dirty),
/// branches 0 (dirty), accounts 7 (read: clean), index 1 (dirty). `BufferSync` writes
/// the 7 dirty ones sorted by relfilenumber — accounts, branches, history, tellers,
/// accounts_pkey — and block; with `fsync` the 7 blocks' writeback (fewer than 32:
/// asked for at the end, sorted, no two neighbours), then an `fsync` of each of the
/// five relations in the same order, waiting. `fill` gives them after the last
/// transaction, and nothing after them.
#[test]
fn the_shutdown_checkpoint_writes_the_dirty_buffers_in_relfilenumber_order_then_fsyncs() {
    let mut g = ended(16, true, true);
    for (block, dirty) in [
        (1918, true),
        (5, true),
        (1643, true),
        (1916, true),
        (2, true),
        (1917, true),
        (7, false),
        (1641, true),
    ] {
        load(&mut g, block, dirty);
    }
    assert_eq!(g.to_sync, 0, "nothing evicted");
    let [acc, idx, tel, bra, his] = g.files;
    let ev = drain(&mut g);
    let want = vec![
        write(acc, 2),
        write(acc, 5),
        write(bra, 0),
        write(his, 0),
        write(tel, 0),
        write(idx, 1),
        write(idx, 3),
        // IssuePendingWritebacks: the tags sorted (the model's relation order).
        range(acc, 2, 1),
        range(acc, 5, 1),
        range(idx, 1, 1),
        range(idx, 3, 1),
        range(tel, 0, 1),
        range(bra, 0, 1),
        range(his, 0, 1),
        // ProcessSyncRequests.
        fsync(acc),
        fsync(bra),
        fsync(his),
        fsync(tel),
        fsync(idx),
    ];
    assert_eq!(ev, want);
    assert!(
        g.state.iter().all(|&s| s & DIRTY == 0),
        "every buffer clean"
    );
    assert_eq!(g.shutdown_checkpoint_stats(), Some((7, 5)));
    assert_eq!((g.to_sync, g.flush_pending.len()), (0, 0));
    assert!(drain(&mut g).is_empty(), "one shutdown checkpoint");
    assert_eq!(RELFILENUMBER_RANK, [0, 4, 3, 1, 2]);
}

/// 40 dirty buffers holding accounts blocks 39 down to 0: written in block order
/// 0..40 (sorted, unlike the buffer-order scan of the running checkpointer), the
/// writeback of the first 32 asked for as one range after the 32nd write
/// (`checkpoint_flush_after`), the last 8 at the end, then the relation's `fsync`.
/// A relation written earlier by a backend's eviction (here the history, marked as
/// such) is `fsync`ed too, though the checkpoint writes none of its blocks. Without
/// `fsync` the 40 writes only.
#[test]
fn the_shutdown_checkpoint_asks_for_writeback_every_32_buffers_and_fsyncs_what_was_written() {
    let mut g = ended(40, true, true);
    for b in (0..40).rev() {
        load(&mut g, b, true);
    }
    g.to_sync |= 1 << HISTORY;
    let (acc, his) = (g.files[ACCOUNTS], g.files[HISTORY]);
    let mut want: Vec<Event> = (0..32).map(|b| write(acc, b)).collect();
    want.push(range(acc, 0, 32));
    want.extend((32..40).map(|b| write(acc, b)));
    want.push(range(acc, 32, 8));
    want.push(fsync(acc));
    want.push(fsync(his));
    assert_eq!(drain(&mut g), want);
    assert_eq!(g.shutdown_checkpoint_stats(), Some((40, 2)));

    let mut g = ended(40, false, true);
    for b in (0..40).rev() {
        load(&mut g, b, true);
    }
    let want: Vec<Event> = (0..40).map(|b| write(acc, b)).collect();
    assert_eq!(drain(&mut g), want);
    assert_eq!(g.shutdown_checkpoint_stats(), Some((40, 0)));
}

/// More dirty buffers than one step writes ([`MAX_TX_EVENTS`]): the checkpoint goes
/// on over several `fill` calls and writes each buffer once.
#[test]
fn a_long_shutdown_checkpoint_takes_several_steps() {
    let n = 3 * MAX_TX_EVENTS as u32 + 5;
    let mut g = ended(n, false, true);
    for b in 0..n {
        load(&mut g, b, true);
    }
    let acc = g.files[ACCOUNTS];
    // The first step: MAX_TX_EVENTS writes queued (`fill` gives them first).
    assert!(g.shutdown_checkpoint());
    assert_eq!(g.pending.len(), MAX_TX_EVENTS);
    let want: Vec<Event> = (0..n).map(|b| write(acc, b)).collect();
    assert_eq!(drain(&mut g), want);
    assert_eq!(g.shutdown_checkpoint_stats(), Some((u64::from(n), 0)));
}

/// Off (the default): the run ends with its dirty buffers unwritten, as before.
#[test]
fn without_shutdown_checkpoint_the_run_ends_after_its_last_transaction() {
    let mut g = ended(16, true, false);
    load(&mut g, 5, true);
    assert!(drain(&mut g).is_empty());
    assert_eq!(g.state[0] & DIRTY, DIRTY);
    assert_eq!(g.shutdown_checkpoint_stats(), None);
}
