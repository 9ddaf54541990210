//! Rule tests of descriptors and their `struct file`s (`crate::open::file`,
//! fs/file.c and fs/open.c of v6.12): `dup()`/`dup2()` share one `f_ra`,
//! `close()` of one descriptor leaves the file open, the last reference
//! frees the state, `fork()` copies the descriptor table, exit closes it,
//! and a read or close through a closed descriptor fails with `EBADF`.

use super::*;

fn fd_read(s: &mut Sim, fd: u32, index: u32) {
    s.step(&Event::FdRead {
        fd,
        index,
        pages: 1,
    });
}

fn window(s: &Sim, fd: u32) -> (u32, u32, u32) {
    let ra = s.fd_ra(fd).unwrap();
    (ra.start, ra.size, ra.async_size)
}

fn slot(s: &Sim, fd: u32) -> u32 {
    s.fds[fd as usize].ra_slot
}

/// A 1000-page file opened once by task "t": (sim, task, file, fd).
fn one_open() -> (Sim, u32, u32, u32) {
    let mut s = machine(PolicyName::Cost, 1 << 16, None);
    let task = s.add_task("t");
    let file = s.add_file("f", 1000).unwrap();
    let fd = s.open_file(file, task).unwrap();
    (s, task, file, fd)
}

#[test]
fn a_dup_reads_through_the_same_window() {
    let (mut s, _, _, a) = one_open();
    let b = s.dup_fd(a).unwrap();
    assert_eq!(b, 1);
    assert_eq!(slot(&s, a), slot(&s, b));
    assert_eq!(s.ra_slots.refs(slot(&s, a)), 2);
    // Alternating reads of one sequential stream through the two
    // descriptors ramp one window as a lone reader's: 0..4, 4..12, 12..28,
    // 28..60 (as `two_opens_of_one_file_keep_separate_windows`' fd a).
    for i in 0..13 {
        fd_read(&mut s, if i % 2 == 0 { a } else { b }, i);
    }
    assert_eq!(window(&s, a), (28, 32, 32));
    assert_eq!(window(&s, b), (28, 32, 32));
    assert_eq!(s.acc.file_pages_read, 60);
    assert_eq!((s.acc.accesses, s.acc.misses), (13, 1));
    s.check_invariants().unwrap();
}

#[test]
fn two_opens_do_not_share_what_a_dup_does() {
    // The same reads through two open()s: a's even pages drive the window
    // (b's reads hit what a's brought in), and b's own state saw only the
    // markers it met: one window each, not the dup's one.
    let (mut s, task, file, a) = one_open();
    let b = s.open_file(file, task).unwrap();
    for i in 0..13 {
        fd_read(&mut s, if i % 2 == 0 { a } else { b }, i);
    }
    assert_ne!(slot(&s, a), slot(&s, b));
    assert_eq!((window(&s, a), window(&s, b)), ((28, 32, 32), (4, 8, 8)));
}

#[test]
fn closing_one_dup_leaves_the_file_open() {
    let (mut s, task, _, a) = one_open();
    let b = s.dup_fd(a).unwrap();
    fd_read(&mut s, a, 0);
    s.close_fd(a).unwrap();
    assert!(!s.fd_is_open(a) && s.fd_is_open(b));
    assert_eq!(s.ra_slots.refs(slot(&s, b)), 1);
    // b keeps the state a's read built: 0..4 with the marker at 1.
    assert_eq!(window(&s, b), (0, 4, 3));
    fd_read(&mut s, b, 1);
    assert_eq!(window(&s, b), (4, 8, 8));
    // A read through the closed descriptor: EBADF, nothing simulated.
    let before = s.acc.clone();
    fd_read(&mut s, a, 500);
    assert_eq!(s.acc.bad_fd, 1);
    assert_eq!(
        (s.acc.accesses, s.acc.file_pages_read, s.acc.out_of_range),
        (before.accesses, before.file_pages_read, 0)
    );
    assert!(s.fd_ra(a).is_none() && s.fd_file(a).is_none());
    // close, fadvise and mmap of the closed descriptor fail (EBADF); dup
    // too; and a descriptor id never handed out is unknown.
    let ebadf = "open file 0 is closed (EBADF)";
    assert_eq!(a, 0);
    assert_eq!(s.close_fd(a).unwrap_err().to_string(), ebadf);
    let err = s.fadvise_fd(a, Advice::Random).unwrap_err();
    assert_eq!(err.to_string(), ebadf);
    let err = s.mmap_fd(task, a, 0, 10, false, false).unwrap_err();
    assert_eq!(err.to_string(), ebadf);
    assert_eq!(s.dup_fd(a).unwrap_err().to_string(), ebadf);
    assert_eq!(s.close_fd(7).unwrap_err().to_string(), "no open file 7");
    s.check_invariants().unwrap();
}

#[test]
fn the_last_close_frees_the_state_unless_a_mapping_holds_it() {
    let (mut s, task, file, a) = one_open();
    // One mmap_miss per fault (as `mmap_read_around_counts_mmap_miss_in_the_mappings_open`).
    s.cfg.fault_around_bytes = 4096;
    s.cfg.fault_retry = false;
    let sa = slot(&s, a);
    s.close_fd(a).unwrap();
    assert_eq!(s.ra_slots.refs(sa), 0);
    s.check_invariants().unwrap();
    // The freed state is reused by the next open, fresh.
    let b = s.open_file(file, task).unwrap();
    assert_eq!(slot(&s, b), sa);
    assert_eq!(window(&s, b), (0, 0, 0));
    // A mapping made from b holds its struct file after b's close.
    let vma = s.mmap_fd(task, b, 0, 1000, false, false).unwrap();
    s.close_fd(b).unwrap();
    assert_eq!(s.ra_slots.refs(sa), 1);
    s.step(&Event::Access {
        vma,
        index: 500,
        write: false,
    });
    assert_eq!(s.ra_slots.get(sa).mmap_miss, 1);
    s.check_invariants().unwrap();
}

#[test]
fn dup2_points_the_new_descriptor_at_the_old_file() {
    let (mut s, task, file, a) = one_open();
    let b = s.open_file(file, task).unwrap();
    let sb = slot(&s, b);
    assert_eq!(s.dup2_fd(a, b).unwrap(), b);
    assert_eq!(slot(&s, b), slot(&s, a));
    assert_eq!(s.ra_slots.refs(slot(&s, a)), 2);
    // b's old struct file had no other reference: freed.
    assert_eq!(s.ra_slots.refs(sb), 0);
    // dup2(a, a) changes nothing; a closed new descriptor is reopened.
    assert_eq!(s.dup2_fd(a, a).unwrap(), a);
    assert_eq!(s.ra_slots.refs(slot(&s, a)), 2);
    s.close_fd(b).unwrap();
    s.dup2_fd(a, b).unwrap();
    assert!(s.fd_is_open(b));
    // dup2 onto a descriptor id never handed out: unknown (the kernel would
    // install it; here `new` must exist).
    assert_eq!(s.dup2_fd(a, 9).unwrap_err().to_string(), "no open file 9");
    // dup2 from a closed descriptor: EBADF.
    s.close_fd(b).unwrap();
    let err = s.dup2_fd(b, a).unwrap_err();
    assert_eq!(err.to_string(), format!("open file {b} is closed (EBADF)"));
    s.check_invariants().unwrap();
}

#[test]
fn a_forked_child_reads_through_its_parents_struct_files() {
    let (mut s, task, file, a) = one_open();
    let closed = s.open_file(file, task).unwrap();
    s.close_fd(closed).unwrap();
    let child = s.fork_task(task).unwrap();
    // The parent's one open descriptor is copied; the closed one is not.
    let fds = s.task_fds(child);
    assert_eq!(fds, vec![2]);
    let c = fds[0];
    assert_eq!(slot(&s, c), slot(&s, a));
    assert_eq!(s.ra_slots.refs(slot(&s, a)), 2);
    assert_eq!(s.fd_task(c), Some(child));
    // Parent and child continue one stream in one window.
    fd_read(&mut s, a, 0);
    fd_read(&mut s, c, 1);
    assert_eq!(window(&s, a), (4, 8, 8));
    // The child's exit closes its copy; the parent's stays.
    s.exit_task(child).unwrap();
    assert!(!s.fd_is_open(c) && s.fd_is_open(a));
    assert_eq!(s.ra_slots.refs(slot(&s, a)), 1);
    s.check_invariants().unwrap();
}

#[test]
fn close_events_count_a_closed_descriptor_as_ebadf() {
    let (mut s, _, _, a) = one_open();
    s.step(&Event::FdClose { fd: a });
    assert!(!s.fd_is_open(a));
    s.step(&Event::FdClose { fd: a });
    s.step(&Event::FdClose { fd: 7 });
    assert_eq!((s.acc.bad_fd, s.acc.out_of_range), (1, 1));
    s.check_invariants().unwrap();
}
