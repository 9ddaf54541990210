//! Rule tests of the `lru` policy's charge walk (`Sim::lru_charge_counters`,
//! `Sim::page_counter_try_charge_high`): v6.12 `page_counter_try_charge`
//! (mm/page_counter.c) charging on the way up and cancelling below a group
//! without room, `try_charge_memcg`'s batch-then-page choice and its
//! `memory.high` test (mm/memcontrol.c).

use super::*;
use crate::memcg::MemcgId;

/// An `lru` machine with groups a (under the root) and b (under a), their
/// usages set to 10 pages (the root's to 20) and limits wide open.
fn nested() -> (Sim, MemcgId, MemcgId) {
    let mut s = machine(PolicyName::Lru, 1 << 16, None);
    let a = s.add_memcg(0, "a").unwrap();
    let b = s.add_memcg(a, "b").unwrap();
    for (m, usage) in [(0, 20), (a, 10), (b, 10)] {
        s.memcgs[m as usize].usage = usage;
    }
    (s, a, b)
}

fn usages(s: &Sim, a: MemcgId, b: MemcgId) -> [u64; 3] {
    [0, a, b].map(|m| s.memcgs[m as usize].usage)
}

#[test]
fn a_full_ancestor_fails_the_charge_and_the_groups_below_it_are_cancelled() {
    // b has room, a (max 10) has none: the walk charged b on its way up
    // and takes the page back (`page_counter_cancel`); a is returned.
    let (mut s, a, b) = nested();
    s.memcgs[a as usize].max = 10;
    assert_eq!(s.page_counter_try_charge_high(b, 64, 1), Err(a));
    assert_eq!(usages(&s, a, b), [20, 10, 10]);
}

#[test]
fn the_batch_is_charged_when_every_group_has_room_for_it_else_the_page() {
    let (mut s, a, b) = nested();
    assert_eq!(s.page_counter_try_charge_high(b, 64, 1), Ok((64, false)));
    assert_eq!(usages(&s, a, b), [84, 74, 74]);
    // a has room for 26 more pages: the page, not the batch.
    s.memcgs[a as usize].max = 100;
    assert_eq!(s.page_counter_try_charge_high(b, 64, 1), Ok((1, false)));
    assert_eq!(usages(&s, a, b), [85, 75, 75]);
}

#[test]
fn memory_high_is_owed_only_when_the_charged_pages_cross_it() {
    // a's limit leaves room for the page only, so one page is charged. b's
    // `memory.high` is 20 pages above its usage: the batch would cross it
    // (the walk's loose test), the page does not, and nothing is owed.
    let (mut s, a, b) = nested();
    s.memcgs[a as usize].max = 11;
    s.memcgs[b as usize].high = 30;
    s.cur_memcg = b;
    assert!(s.try_charge_memcg(1, crate::gfp::GFP_KERNEL));
    assert_eq!(usages(&s, a, b), [21, 11, 11]);
    assert_eq!(s.pages_over_high, 0);
    assert_eq!(s.stock.1, 0);
    // At b's `memory.high` the next page crosses it: one page owed.
    s.memcgs[a as usize].max = 12;
    s.memcgs[b as usize].high = 11;
    assert!(s.try_charge_memcg(1, crate::gfp::GFP_KERNEL));
    assert_eq!(usages(&s, a, b), [22, 12, 12]);
    assert_eq!(s.pages_over_high, 1);
}

#[test]
fn a_full_root_cancels_every_group_below_it() {
    // b and a have room, the root (max 20) has none: the walk charged b
    // and a on its way up and takes the page back from both.
    let (mut s, a, b) = nested();
    s.memcgs[0].max = 20;
    assert_eq!(s.page_counter_try_charge_high(b, 64, 1), Err(0));
    assert_eq!(usages(&s, a, b), [20, 10, 10]);
}

#[test]
fn a_batch_that_crosses_memory_high_owes_the_whole_batch() {
    // Every group has room for the batch: 64 pages charged, b ends at 74,
    // over its `memory.high` of 50, so `try_charge_memcg` owes the batch
    // (`current->memcg_nr_pages_over_high += batch`), not the excess.
    let (mut s, a, b) = nested();
    s.memcgs[b as usize].high = 50;
    s.cur_memcg = b;
    assert!(s.try_charge_memcg(1, crate::gfp::GFP_KERNEL));
    assert_eq!(usages(&s, a, b), [84, 74, 74]);
    assert_eq!(s.pages_over_high, 64);
}
