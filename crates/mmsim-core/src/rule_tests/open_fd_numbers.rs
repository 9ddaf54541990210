//! Rule tests of descriptor numbers (`crate::open::file`, fs/file.c of
//! v6.12): `alloc_fd()`/`find_next_fd()` hand out the lowest free number of
//! the task's table (0–2 held by stdio), `dup()` too, `dup2()` puts the file
//! at exactly `newfd` and closes what was there, `fork()` copies the numbers.

use super::*;

/// A 1000-page file and task "t": (sim, task, file).
fn setup() -> (Sim, u32, u32) {
    let mut s = machine(PolicyName::Cost, 1 << 16, None);
    let task = s.add_task("t");
    let file = s.add_file("f", 1000).unwrap();
    (s, task, file)
}

fn numbers(s: &Sim, fds: &[u32]) -> Vec<Option<u32>> {
    fds.iter().map(|&fd| s.fd_number(fd)).collect()
}

#[test]
fn open_and_dup_take_the_lowest_free_number() {
    let (mut s, task, file) = setup();
    let a = s.open_file(file, task).unwrap();
    let b = s.open_file(file, task).unwrap();
    let c = s.dup_fd(a).unwrap();
    // 0, 1, 2 are stdio: the first open() is 3.
    assert_eq!(numbers(&s, &[a, b, c]), vec![Some(3), Some(4), Some(5)]);
    // close(3), close(5): the next open() takes 3, the next dup() 5.
    s.close_fd(a).unwrap();
    s.close_fd(c).unwrap();
    let d = s.open_file(file, task).unwrap();
    let e = s.dup_fd(b).unwrap();
    assert_eq!((d, e), (3, 4));
    assert_eq!(
        numbers(&s, &[a, b, c, d, e]),
        vec![None, Some(4), None, Some(3), Some(5)]
    );
    // Another task's table is its own: its first open() is 3 as well.
    let u = s.add_task("u");
    let f = s.open_file(file, u).unwrap();
    assert_eq!(s.fd_number(f), Some(3));
    assert_eq!(s.fd_of_number(task, 3), Some(d));
    assert_eq!(s.fd_of_number(u, 3), Some(f));
    assert_eq!(s.task_fds(task), vec![d, b, e]);
    s.check_invariants().unwrap();
}

#[test]
fn dup2_takes_exactly_newfd_and_closes_what_held_it() {
    let (mut s, task, file) = setup();
    let a = s.open_file(file, task).unwrap();
    let b = s.open_file(file, task).unwrap();
    let slot_b = s.fds[b as usize].ra_slot;
    // dup2(3, 4): 4 now names a's file; b's own struct file is put.
    let n = s.dup2_number(a, 4).unwrap();
    assert_eq!(n, b);
    assert_eq!(s.fd_number(b), Some(4));
    assert_eq!(s.fds[b as usize].ra_slot, s.fds[a as usize].ra_slot);
    assert_eq!(s.ra_slots.refs(s.fds[a as usize].ra_slot), 2);
    assert_eq!(s.ra_slots.refs(slot_b), 0);
    // dup2(3, 9): a free number past the lowest one, taken as asked.
    let g = s.dup2_number(a, 9).unwrap();
    assert_eq!(s.fd_number(g), Some(9));
    // dup2(3, 1) replaces stdout; once it is closed, 1 is the lowest free.
    let o = s.dup2_number(a, 1).unwrap();
    assert_eq!(s.fd_number(o), Some(1));
    assert_eq!(
        s.open_file(file, task).map(|fd| s.fd_number(fd)).unwrap(),
        Some(5)
    );
    s.close_fd(o).unwrap();
    let h = s.open_file(file, task).unwrap();
    assert_eq!(s.fd_number(h), Some(1));
    // dup2 onto a closed id whose number was taken since: that one goes.
    let c = s.dup2_fd(b, o).unwrap();
    assert_eq!(c, o);
    assert_eq!(s.fd_number(o), Some(1));
    assert_eq!(s.fd_number(h), None);
    assert_eq!(s.fd_of_number(task, 1), Some(o));
    // dup2(fd, its own number) leaves it as it is.
    assert_eq!(s.dup2_number(a, 3).unwrap(), a);
    assert_eq!(s.ra_slots.refs(s.fds[a as usize].ra_slot), 4);
    s.check_invariants().unwrap();
}

#[test]
fn fork_copies_the_numbers_and_the_child_allocates_in_its_own_table() {
    let (mut s, task, file) = setup();
    let a = s.open_file(file, task).unwrap();
    let b = s.open_file(file, task).unwrap();
    s.close_fd(a).unwrap();
    let child = s.fork_task(task).unwrap();
    let kids = s.task_fds(child);
    assert_eq!(kids.len(), 1);
    assert_eq!(s.fd_number(kids[0]), Some(4));
    assert_eq!(s.fds[kids[0] as usize].ra_slot, s.fds[b as usize].ra_slot);
    // The child's next open() is 3 (free in its copy too), the parent's also.
    let k = s.open_file(file, child).unwrap();
    let p = s.open_file(file, task).unwrap();
    assert_eq!((s.fd_number(k), s.fd_number(p)), (Some(3), Some(3)));
    s.check_invariants().unwrap();
}

#[test]
fn explain_names_the_descriptor_number_a_read_went_through() {
    use crate::config::{MachineConfig, Size};
    use crate::explain::ExplainConfig;
    let cfg = MachineConfig {
        memory: Size::from_pages(1 << 16),
        explain: Some(ExplainConfig {
            pages: vec!["f:7".into(), "f:500".into()],
            ..Default::default()
        }),
        ..Default::default()
    };
    let mut s = Sim::new(cfg).unwrap();
    let task = s.add_task("t");
    let file = s.add_file("f", 1000).unwrap();
    let a = s.open_file(file, task).unwrap();
    let b = s.open_file(file, task).unwrap();
    s.fadvise_fd(b, crate::readahead::Advice::Random).unwrap();
    // close(3) and dup(4): the dup is numbered 3.
    s.close_fd(a).unwrap();
    let c = s.dup_fd(b).unwrap();
    assert_eq!((s.fd_number(b), s.fd_number(c)), (Some(4), Some(3)));
    let read = |fd, index| Event::FdRead {
        fd,
        index,
        pages: 1,
    };
    s.run(&[read(b, 500), read(c, 7)]);
    let r = s.finish().explain.unwrap();
    let first: Vec<String> = r
        .pages
        .iter()
        .map(|p| format!("{}: {}", p.events[0].func, p.events[0].text))
        .collect();
    assert_eq!(
        first,
        vec![
            "filemap_read: page-cache miss in read(fd 3): page_cache_sync_ra → \
             force_page_cache_ra (FADV_RANDOM: the requested pages only); folio_add_lru → \
             inactive_file, PG_referenced"
                .to_string(),
            "filemap_read: page-cache miss in read(fd 4): page_cache_sync_ra → \
             force_page_cache_ra (FADV_RANDOM: the requested pages only); folio_add_lru → \
             inactive_file, PG_referenced"
                .to_string(),
        ]
    );
}
