//! Rule tests of ext4's buffer heads on written page-cache folios, charged
//! to the folio's group (`machine.fs.buffer_heads`,
//! `crate::kmem::buffer_head`; fs/buffer.c `folio_alloc_buffers` with
//! `GFP_NOFS | __GFP_ACCOUNT`, v6.18): one per page of a folio a write
//! dirties, none for reads, freed when reclaim frees the folio.

use super::*;
use crate::kmem::buffer_head::BH_BYTES;
use crate::kmem::XA_NODE_BYTES;
use crate::memcg::{MemcgId, ROOT};

/// A 256 MiB machine with large folios and kernel memory accounting, a
/// group `/a` (`memory.max` = `max` pages if given) whose task writes and
/// reads a 100,000-page file with `FADV_RANDOM`; `fs.buffer_heads` as given.
fn bh_machine(buffer_heads: bool, max: Option<u64>) -> (Sim, MemcgId, u32) {
    let mut cfg = super::filefolio::lf_config(1 << 16);
    cfg.kmem_accounting = true;
    cfg.fs.buffer_heads = buffer_heads;
    let mut s = Sim::new(cfg).unwrap();
    let a = s.add_memcg(ROOT, "a").unwrap();
    if let Some(m) = max {
        s.set_memcg_max(a, m).unwrap();
    }
    let t = s.add_task("t");
    s.attach_task(t, a).unwrap();
    let file = s.add_file("f", 100_000).unwrap();
    s.open(file, t).unwrap();
    s.fadvise(file, Advice::Random).unwrap();
    (s, a, file)
}

fn write(s: &mut Sim, file: u32, index: u32, pages: u16) {
    s.step(&Event::FileWrite { file, index, pages });
}

fn read(s: &mut Sim, file: u32, index: u32, pages: u16) {
    s.step(&Event::FileRead { file, index, pages });
}

/// `fsync` of the whole file, waited for: every dirty folio written back.
fn fsync(s: &mut Sim, file: u32) {
    s.step(&Event::FileSync {
        file,
        index: 0,
        pages: 0,
        wait: true,
    });
}

/// (buffer heads, `slab_reclaimable` bytes) of group `m`.
fn bh(s: &Sim, m: MemcgId) -> (u64, u64) {
    let r = s.kmem_report(m).unwrap();
    (r.buffer_heads, r.slab_reclaimable)
}

/// An 8-page write makes one order-3 folio and 8 buffer heads (896 bytes
/// beside the folio's one xarray leaf, 592); writing it again, or a part
/// of it, adds none; a read adds none; a write into a page a read brought
/// in gives that folio its buffers.
#[test]
fn a_write_gives_each_page_of_its_folio_a_buffer_head_once() {
    let (mut s, a, file) = bh_machine(true, None);
    write(&mut s, file, 0, 8);
    assert_eq!(super::filefolio::folios(&s, file, 8), vec![(0, 3)]);
    assert_eq!(bh(&s, a), (8, 8 * BH_BYTES + XA_NODE_BYTES));
    write(&mut s, file, 0, 8);
    write(&mut s, file, 4, 2);
    assert_eq!(bh(&s, a).0, 8);
    read(&mut s, file, 100, 2);
    assert_eq!(bh(&s, a).0, 8);
    assert!(!s.has_buffers(file, 100));
    write(&mut s, file, 101, 1);
    assert_eq!(
        bh(&s, a).0,
        8 + s.folios[super::file_folio(&s, file, 101)].nr_pages()
    );
    assert!(s.has_buffers(file, 101));
    s.check_invariants().unwrap();
}

/// Reclaim frees a written folio's buffers with it
/// (`filemap_release_folio` → `try_to_free_buffers`): after an `fsync`
/// cleaned the 8-page folio, reads under a 64-page limit evict it and the
/// group holds no buffer head; its `slab_reclaimable` is its xarray
/// nodes' again.
#[test]
fn reclaim_frees_the_buffers_with_the_folio() {
    let (mut s, a, file) = bh_machine(true, Some(64));
    write(&mut s, file, 0, 8);
    fsync(&mut s, file);
    assert_eq!(bh(&s, a).0, 8);
    for i in 1000..1200 {
        read(&mut s, file, i, 1);
    }
    assert!(super::filefolio::folios(&s, file, 8).is_empty());
    assert!(!s.has_buffers(file, 0));
    let nodes = s.kmem_report(a).unwrap().xa_nodes;
    assert_eq!(bh(&s, a), (0, nodes * XA_NODE_BYTES));
    s.check_invariants().unwrap();
}

/// The charge takes the group's room: 3,600 pages written (order-3
/// folios) and synced in a 4,000-page group carry 3,600 × 112 bytes of
/// buffer heads; after 2,000 more pages are read, the group holds fewer
/// page-cache pages than the same run without `fs.buffer_heads`.
#[test]
fn buffer_heads_take_the_groups_room_from_the_page_cache() {
    let run = |on: bool| {
        let (mut s, a, file) = bh_machine(on, Some(4000));
        for i in 0..450 {
            write(&mut s, file, i * 8, 8);
        }
        fsync(&mut s, file);
        for i in 0..2000 {
            read(&mut s, file, 10_000 + i, 1);
        }
        s.check_invariants().unwrap();
        let file_pages = s.memcgs[a as usize].lruvec.lists[LruList::InactiveFile as usize].pages
            + s.memcgs[a as usize].lruvec.lists[LruList::ActiveFile as usize].pages;
        (file_pages, s.kmem_pages(a), bh(&s, a).0)
    };
    // Without: 3,960 page-cache pages, 14 kernel pages (the task's and the
    // xarray nodes'). With: the 1,920 written pages still cached carry
    // 1,920 buffer heads (215,040 bytes: 52 pages more charged), and the
    // group keeps 40 page-cache pages fewer; the 1,680 evicted took theirs.
    assert_eq!(run(false), (3960, 14, 0));
    assert_eq!(run(true), (3920, 66, 1920));
}

/// `fs.buffer_heads` is a filesystem setting, charged as kernel memory.
#[test]
fn buffer_heads_need_kernel_memory_accounting() {
    let mut cfg = super::filefolio::lf_config(1 << 16);
    cfg.fs.buffer_heads = true;
    let e = Sim::new(cfg).err().expect("refused");
    assert!(format!("{e}").contains("machine.fs.buffer_heads"), "{e}");
    let mut cfg = super::filefolio::lf_config(1 << 16);
    cfg.kmem_accounting = true;
    cfg.swap.buffer_heads = true;
    let e = Sim::new(cfg).err().expect("refused");
    assert!(format!("{e}").contains("machine.swap.buffer_heads"), "{e}");
}
