//! The buddy allocator mirrors the simulator's free-page accounting: over
//! the first million events of several embedded scenarios, `Sim::check_invariants`
//! (zone free pages == `Node::free`, `mem_map` names exactly the live
//! folios' frames) holds after every batch, and at the end buddyinfo, with
//! the per-CPU list, accounts for every free page.

use mmsim_core::Sim;
use mmsim_workloads::{embedded_scenario, Batch, EventStream};

/// Events per scenario: enough to fill memory and reclaim in the small ones.
const EVENTS: u64 = 1_000_000;

fn check_scenario(name: &str) {
    let s = embedded_scenario(name).unwrap().unwrap();
    let mut sim = Sim::new(s.machine.clone()).unwrap();
    mmsim_workloads::cgroups::setup(&mut sim, &s).unwrap();
    let mut stream = EventStream::build(&s, &mut sim).unwrap();
    mmsim_workloads::cgroups::schedule_moves(&mut sim, &s, stream.tasks()).unwrap();
    let mut done = 0u64;
    let mut batches = 0u64;
    while let Some(batch) = stream.next_batch(sim.now()).unwrap() {
        match batch {
            Batch::Idle(idle) => {
                for e in idle {
                    if let mmsim_core::Event::Think { ns } = *e {
                        sim.idle(ns);
                    }
                }
            }
            Batch::Events(out) => {
                sim.run(out);
                done += out.len() as u64;
            }
        }
        batches += 1;
        // Every batch while memory fills, then every 16th (the check walks mem_map).
        if batches < 64 || batches.is_multiple_of(16) {
            sim.check_invariants()
                .unwrap_or_else(|e| panic!("{name} after {done} events: {e}"));
        }
        if done >= EVENTS {
            break;
        }
    }
    sim.check_invariants()
        .unwrap_or_else(|e| panic!("{name} at the end: {e}"));
    let r = sim.finish();
    let listed: u64 = r.buddyinfo.iter().enumerate().map(|(k, n)| n << k).sum();
    // mmsim's nr_free_pages is `Node::free`, which counts the per-CPU
    // list's pages too (the kernel's NR_FREE_PAGES does not).
    assert_eq!(
        listed + r.pcp_pages,
        r.vmstat.nr_free_pages,
        "{name}: buddyinfo + per-CPU pages vs nr_free_pages"
    );
    let by_type: u64 = r
        .pagetypeinfo
        .free_blocks
        .iter()
        .flat_map(|b| b.iter().enumerate().map(|(k, n)| n << k))
        .sum();
    assert_eq!(by_type, listed, "{name}: pagetypeinfo vs buddyinfo");
}

#[test]
fn zone_free_pages_equal_node_free_in_embedded_scenarios() {
    for name in [
        "zipf-file",
        "memcached",
        "dd-vs-eater",
        "many-tabs",
        "softlimit-kbuild-vs-eater",
    ] {
        check_scenario(name);
    }
}
