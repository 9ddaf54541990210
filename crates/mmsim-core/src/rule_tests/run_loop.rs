//! `Sim::run`'s batch loop: its three parts (both prefetch stages ahead,
//! the folio stage only, neither) step every event once, in order, for
//! every batch length, as `Sim::step` called per event does. Prefetches
//! change no state, so a batch and its events stepped one by one end in
//! the same machine.

use super::*;

/// An `lru` machine (16 MiB, zram swap) whose root group holds 48 pages,
/// with one task's 96-page anonymous VMA, so that a batch both hits and
/// faults (and swaps).
fn small() -> (Sim, u32) {
    let mut s = machine(PolicyName::Lru, 4096, Some(256));
    s.memcgs[0].max = 48;
    let t = s.add_task("t");
    let vma = s.mmap_anon(t, 96).unwrap();
    (s, vma)
}

#[test]
fn a_batch_of_any_length_steps_each_event_once_in_order() {
    // A fixed stream: loads and stores over the VMA, some pages repeated.
    let events: Vec<Event> = (0..40u32)
        .map(|i| Event::Access {
            vma: 0,
            index: (i * 37 + i / 3) % 96,
            write: i % 3 == 0,
        })
        .collect();
    // Shorter than one stage (8), than both (16), and longer.
    for n in 0..=events.len() {
        let (mut a, vma) = small();
        let (mut b, _) = small();
        assert_eq!(vma, 0);
        a.run(&events[..n]);
        for ev in &events[..n] {
            b.step(ev);
        }
        let what = |s: &Sim| {
            (
                s.acc.accesses,
                s.acc.hits,
                s.acc.misses,
                s.clock,
                s.vmas[0].ptes.clone(),
            )
        };
        assert_eq!(a.acc.accesses, n as u64, "batch of {n}");
        assert_eq!(what(&a), what(&b), "batch of {n}");
    }
}
