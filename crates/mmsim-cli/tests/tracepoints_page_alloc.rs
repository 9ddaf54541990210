//! `mmsim run --tracepoints kmem:mm_page_alloc,kmem:mm_page_free,kmem:mm_page_pcpu_drain`
//! (`mmsim_core::tracepoint::kmem_page`, v6.12 include/trace/events/kmem.h): one
//! `mm_page_alloc` per page the run allocates and one `mm_page_free` per page it
//! frees (the counters `pgalloc_normal` and `pgfree`), each drained page freed
//! before its `mm_page_pcpu_drain`, and no result moves.

mod common;

use common::{json, mmsim, random_trace, validation_case};

/// (event name, fields) of a `perf script` line.
fn event(line: &str) -> (&str, &str) {
    let rest = &line[line.find(": ").unwrap() + 2..];
    rest.split_once(": ").unwrap()
}

/// The `pfn=` of an event's fields.
fn pfn(fields: &str) -> &str {
    fields
        .split(' ')
        .find_map(|kv| kv.strip_prefix("pfn="))
        .unwrap()
}

#[test]
fn page_events_match_the_allocation_and_free_counters_and_change_no_result() {
    let dir = tempfile::tempdir().unwrap();
    let input = random_trace(dir.path(), 5000);
    let out = dir.path().join("tp.txt");
    let o = out.display().to_string();
    let mut base = vec!["run", "--trace", &input];
    base.extend(["--as", "file", "--memory", "16M", "--memcg-max", "4M", "-q"]);
    base.push("--json");
    let mut traced = base.clone();
    traced.extend([
        "--tracepoints",
        "kmem:mm_page_alloc,kmem:mm_page_free,kmem:mm_page_pcpu_drain",
        "--tracepoints-out",
        &o,
    ]);
    let mut with = json(&traced);
    let mut without = json(&base);
    let text = std::fs::read_to_string(&out).unwrap();
    let l: Vec<&str> = text.lines().collect();
    let count = |name: &str| l.iter().filter(|x| event(x).0 == name).count() as u64;
    let vm = &with["vmstat"];
    // Every allocation succeeded (no NULL line) and each is one page.
    assert_eq!(l.iter().filter(|x| x.contains("page=(nil)")).count(), 0);
    assert_eq!(
        count("kmem:mm_page_alloc"),
        vm["pgalloc_normal"].as_u64().unwrap()
    );
    assert_eq!(count("kmem:mm_page_free"), vm["pgfree"].as_u64().unwrap());
    assert_eq!(
        (
            count("kmem:mm_page_alloc"),
            count("kmem:mm_page_free"),
            count("kmem:mm_page_pcpu_drain")
        ),
        (3525, 2538, 0)
    );
    // The first event: the reader's first page-cache page (readahead's mask),
    // the zone's first frame, by the reader at time 0.
    assert_eq!(
        l[0],
        "          in.txt    1000 [000]     0.000000: kmem:mm_page_alloc: \
         page=0xffffea0004000000 pfn=0x100000 order=0 migratetype=1 \
         gfp_flags=GFP_NOFS|__GFP_HIGHMEM|__GFP_NOWARN|__GFP_NORETRY|__GFP_COMP|\
         __GFP_HARDWALL|__GFP_MOVABLE"
    );
    // No page is freed twice without an allocation between.
    let mut free = std::collections::HashSet::new();
    for x in &l {
        let (name, f) = event(x);
        if name == "kmem:mm_page_free" {
            assert!(free.insert(pfn(f).to_string()), "{x}");
        } else {
            free.remove(pfn(f));
        }
    }
    for v in [&mut with, &mut without] {
        let o = v.as_object_mut().unwrap();
        o.remove("host_heap_peak_bytes");
        o.remove("machine");
    }
    assert_eq!(with, without);
    // The event names in the error of a pattern that selects nothing.
    let bad = mmsim()
        .args([
            "run",
            "--tracepoints",
            "kmem:mm_page",
            "--tracepoints-out",
            &o,
        ])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&bad.stderr);
    assert!(
        err.contains("kmem:mm_page_alloc, kmem:mm_page_free, kmem:mm_page_pcpu_drain"),
        "{err}"
    );
}

/// compact-mthp-always between 18.337 s and 18.5766 s: kswapd's reclaim frees
/// pages and the free that reaches the per-CPU `high` drains (by kswapd, just
/// after its `mm_page_free`), 64 KiB folios are allocated (order 4,
/// `GFP_TRANSHUGE|__GFP_NORETRY`), and the window's last event is a failed
/// one: page NULL, pfn 0.
#[test]
fn compact_mthp_always_shows_drains_after_frees_and_a_failed_64k_folio() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("tp.txt");
    let o = out.display().to_string();
    let case = validation_case("compact-mthp-always");
    mmsim()
        .args([
            "run",
            &case,
            "-q",
            "--tracepoints",
            "kmem:mm_page_alloc,kmem:mm_page_free,kmem:mm_page_pcpu_drain",
            "--tracepoints-filter",
            "from=18.337s,to=18.5766s",
            "--tracepoints-out",
            &o,
        ])
        .assert()
        .success();
    let text = std::fs::read_to_string(&out).unwrap();
    let l: Vec<&str> = text.lines().collect();
    let count = |pat: &str| l.iter().filter(|x| x.contains(pat)).count();
    assert_eq!(
        [
            count("kmem:mm_page_alloc:"),
            count("kmem:mm_page_free:"),
            count("kmem:mm_page_pcpu_drain:"),
            count("page=(nil)"),
            count("mm_page_alloc: page=0xffffea") - count(" order=0 migratetype=1 gfp"),
        ],
        [2635, 7719, 6387, 1, 170]
    );
    let first_drain = l.iter().position(|x| x.contains("pcpu_drain")).unwrap();
    assert_eq!(
        &l[first_drain - 1..=first_drain],
        [
            "         kswapd0      80 [001]    18.337865: kmem:mm_page_free: \
             page=0xffffea0004050840 pfn=0x101421 order=0",
            "         kswapd0      80 [001]    18.337865: kmem:mm_page_pcpu_drain: \
             page=0xffffea0004693100 pfn=0x11a4c4 order=0 migratetype=1",
        ]
    );
    assert!(l.contains(
        &"            anon    1002 [000]    18.576598: kmem:mm_page_alloc: page=(nil) \
          pfn=0x0 order=4 migratetype=1 gfp_flags=GFP_TRANSHUGE|__GFP_NORETRY"
    ));
}
