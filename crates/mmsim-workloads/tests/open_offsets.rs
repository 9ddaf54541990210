//! `open_offsets` with `opens = N` (issue #15 stage C): N readers of one file,
//! each through its own `open()`, streaming from its own start page.

use mmsim_core::Event;
use mmsim_workloads::gen::Generator;
use mmsim_workloads::{run_scenario, RunOptions, Scenario};

fn text(pages: u64, opens: u64, offsets: &str) -> String {
    format!(
        "seed = 1\n[machine]\nmemory = \"64M\"\n[[workload]]\nkind = \"sequential\"\n\
         target = \"file\"\npages = {pages}\npasses = 1\nopens = {opens}\n{offsets}\n"
    )
}

/// The (descriptor, page) of each read of the workload.
fn reads(text: &str) -> Vec<(u32, u32)> {
    let s = Scenario::from_toml_str(text, "o.toml").unwrap_or_else(|e| panic!("{e}"));
    let mut sim = mmsim_core::Sim::new(s.machine.clone()).unwrap();
    let mut g = Generator::build(&mut sim, &s.workloads[0], "o", 1, "o", None).unwrap();
    let mut out = Vec::new();
    while g.fill(&mut out, 100).unwrap() > 0 {}
    out.iter()
        .map(|e| match *e {
            Event::FdRead { fd, index, pages } => {
                assert_eq!(pages, 1);
                (fd, index)
            }
            e => panic!("unexpected {e:?}"),
        })
        .collect()
}

#[test]
fn spread_readers_stream_from_their_own_parts_of_the_file() {
    // 12 pages, 3 readers: starts 0, 4, 8; reader j's m-th read at start + m.
    let r = reads(&text(12, 3, "open_offsets = \"spread\""));
    let expect: Vec<(u32, u32)> = (0..12u32).map(|k| (k % 3, 4 * (k % 3) + k / 3)).collect();
    assert_eq!(r, expect);
    // Without open_offsets: one stream dealt round-robin (page k through k mod 3).
    let plain = reads(&text(12, 3, ""));
    assert_eq!(plain, (0..12u32).map(|k| (k % 3, k)).collect::<Vec<_>>());
}

#[test]
fn listed_starts_wrap_at_the_end_of_the_file() {
    let r = reads(&text(12, 3, "open_offsets = [10, 0, 5]"));
    let reader = |j: u32| -> Vec<u32> {
        r.iter()
            .filter(|&&(fd, _)| fd == j)
            .map(|&(_, i)| i)
            .collect()
    };
    assert_eq!(reader(0), vec![10, 11, 0, 1]);
    assert_eq!(reader(1), vec![0, 1, 2, 3]);
    assert_eq!(reader(2), vec![5, 6, 7, 8]);
}

#[test]
fn spread_sequential_readers_each_keep_a_readahead_window() {
    // Two sequential readers of one 20000-page file: dealt one stream, each
    // descriptor sees a stride of 2 and the pages the other brought in; spread,
    // each ramps its own window over its own half: one sync miss each at its
    // start, and one more where reader 0's window runs into pages of reader 1's
    // half that 64M (16384 pages) no longer holds, read again.
    let run = |offsets: &str| {
        let s = Scenario::from_toml_str(&text(20000, 2, offsets), "o.toml").unwrap();
        let r = run_scenario(&s, &mut RunOptions::default()).unwrap();
        let a = &r.result.access;
        (a.accesses, a.misses, a.file_pages_read, a.bad_fd)
    };
    assert_eq!(run("open_offsets = \"spread\""), (20000, 3, 20044, 0));
    assert_eq!(run(""), (20000, 1, 20000, 0));
}

#[test]
fn bad_open_offsets_are_errors() {
    let err = |opens: &str, offsets: &str| {
        let t = format!(
            "seed = 1\n[[workload]]\nkind = \"sequential\"\ntarget = \"file\"\npages = 100\n\
             passes = 1\n{opens}\n{offsets}\n"
        );
        Scenario::from_toml_str(&t, "bad.toml")
            .map(|_| ())
            .unwrap_err()
            .to_string()
    };
    assert_eq!(
        err("opens = 3", "open_offsets = \"even\""),
        "bad.toml: workload[0].open_offsets: unknown layout \"even\": use \"spread\" or a \
         list of 3 start pages, one per open"
    );
    assert_eq!(
        err("opens = 3", "open_offsets = [0, 50]"),
        "bad.toml: workload[0].open_offsets: 2 start pages for opens = 3: give one per open"
    );
    assert_eq!(
        err("opens = 3", "open_offsets = [0, 50, 100]"),
        "bad.toml: workload[0].open_offsets: a start page is beyond the file's 100 pages \
         (the last is 99)"
    );
    assert_eq!(
        err("", "open_offsets = \"spread\""),
        "bad.toml: workload[0].open_offsets: the readers' start pages need opens = N (the \
         readers)"
    );
}
