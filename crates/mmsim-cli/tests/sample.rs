//! `mmsim run --sample RATE` and `compare --sample`: SHARDS-sampled runs, their
//! scaling, their marking as estimates and their errors.

mod common;

use common::{bad_input, json, mmsim, simulated, trace};

fn w106() -> String {
    trace("cloudphysics/w106.trace.xz")
}

#[test]
fn sample_rates_out_of_range_are_refused() {
    for r in ["0", "-0.5", "1.5", "NaN"] {
        bad_input(
            &["run", "--sample", r, "-q"],
            &[
                &format!("--sample {r}"),
                "sample.rate",
                "out of range (0, 1]",
            ],
        );
    }
    bad_input(
        &["run", "--sample", "0.5", "--sample-block", "3", "-q"],
        &["sample.block_pages: 3 is not a power of two in [1, 1024]"],
    );
    bad_input(
        &["run", "--sample-block", "8", "-q"],
        &["--sample-block: the run is not sampled; give --sample RATE"],
    );
}

#[test]
fn a_rate_too_small_for_the_machine_is_an_error_naming_the_rate() {
    let t = w106();
    bad_input(
        &[
            "run", "--trace", &t, "--memory", "16M", "--sample", "0.01", "-q",
        ],
        &[
            "sample.rate: 0.01 is too small for this machine",
            "40 pages",
            "minimum for a sampled machine, 256 pages",
            "at least 6.25e-2",
        ],
    );
}

#[test]
fn a_whole_run_has_no_sample_and_a_sampled_run_is_marked_and_scaled() {
    let t = w106();
    let whole = json(&[
        "run", "--trace", &t, "--memory", "64M", "--policy", "lru", "--limit", "200000", "--json",
    ]);
    assert!(whole.get("sample").is_none());
    let args = [
        "run", "--trace", &t, "--memory", "64M", "--policy", "lru", "--limit", "200000",
        "--sample", "0.25", "--json",
    ];
    let s = json(&args);
    let smp = &s["sample"];
    assert_eq!(smp["rate"], 0.25);
    assert_eq!(smp["scale"], 4.0);
    assert_eq!(smp["block_pages"][0], 8);
    assert_eq!(
        smp["note"],
        "sampled at 25% (SHARDS spatial sampling of pages): counters are estimates ×4"
    );
    assert_eq!(s["warnings"][0], smp["note"]);
    // The machine is a quarter of the whole one (64M / 4 = 4096 pages of 4 KiB).
    assert_eq!(s["machine"]["memory"], "16M");
    assert_eq!(s["machine"]["sample_rate"], 0.25);
    // Every reference was offered; accesses are exact (SHARDS_adj), misses estimated.
    assert_eq!(smp["events_offered"], 200_000);
    assert_eq!(s["accesses"], whole["accesses"]);
    let kept = smp["events_kept"].as_u64().unwrap();
    // 23 % of the references fall in the sampled pages (the hash picks 25 % of pages).
    assert_eq!(kept, 46_639);
    let adj = s["miss_ratio"].as_f64().unwrap();
    assert_eq!(adj, smp["miss_ratio_adj"].as_f64().unwrap());
    let misses = s["misses"].as_u64().unwrap();
    assert_eq!(
        s["hits"].as_u64().unwrap() + misses,
        s["accesses"].as_u64().unwrap()
    );
    // Same seed, same bits.
    assert_eq!(simulated(json(&args)), simulated(s));
    // The text report says it first.
    mmsim()
        .args(&args[..args.len() - 1])
        .assert()
        .success()
        .stderr(predicates::str::contains(
            "warning: sampled at 25% (SHARDS spatial sampling of pages): counters are \
             estimates ×4",
        ));
}

#[test]
fn the_scenario_field_and_compare_sample_too() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.toml");
    std::fs::write(
        &path,
        "seed = 5\n[machine]\nmemory = \"64M\"\n[sample]\nrate = 0.5\nblock_pages = 4\n\
         [[workload]]\nkind = \"zipf\"\ntarget = \"file\"\npages = \"128M\"\ntheta = 0.9\n\
         accesses = 50000\n",
    )
    .unwrap();
    let p = path.display().to_string();
    let s = json(&["run", &p, "--json"]);
    assert_eq!(s["sample"]["rate"], 0.5);
    assert_eq!(s["sample"]["block_pages"][0], 4);
    assert_eq!(s["sample"]["events_offered"], 50_000);
    assert_eq!(s["machine"]["memory"], "32M");
    // --sample overrides the scenario's rate and keeps its block.
    let s = json(&["run", &p, "--sample", "0.25", "--json"]);
    assert_eq!(s["sample"]["rate"], 0.25);
    assert_eq!(s["sample"]["block_pages"][0], 4);
    // compare runs every configuration sampled.
    mmsim()
        .args([
            "compare", &p, "--policy", "lru,cost", "--sample", "0.25", "--jobs", "1",
        ])
        .assert()
        .success()
        .stdout(predicates::str::contains(
            "sampled at 25% (SHARDS spatial sampling of pages): counters are estimates ×4",
        ));
}

/// A sampled replay under `--keys offset`: the sampler decides on the trace's own
/// keys (file and page offset), before the layout maps them, so every reference
/// is offered, a kept page keeps all its references, and the run is repeatable.
#[test]
fn a_sampled_offset_replay_filters_keys_before_the_layout() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("files.txt");
    let mut text = String::new();
    // 4 files × 512 pages, each page read twice (two passes), and after each pass an
    // fsync of each file: syncs are no page accesses, so not offered to the sample.
    for _pass in 0..2 {
        for page in 0..512u64 {
            for ino in 1..=4 {
                let ofs = page << 12;
                text += &format!(
                    "  cat 1234 [000] 10.000001: filemap:mm_filemap_get_pages: dev=8:1 \
                     ino={ino} ofs={ofs}-{}\n",
                    ofs + 4095
                );
            }
        }
        for ino in 1..=4 {
            text += &format!(
                "  cat 1234 [000] 10.000002: ext4:ext4_writepages: dev 8,1 ino {ino} \
                 nr_to_write 9223372036854775807 pages_skipped 0 range_start 0 \
                 range_end 9223372036854775807 sync_mode 1 for_kupdate 0 range_cyclic 0 \
                 writeback_index 0\n"
            );
        }
    }
    std::fs::write(&path, &text).unwrap();
    let p = path.to_str().unwrap();
    let args = [
        "run", "--trace", p, "--keys", "offset", "--memory", "64M", "--sample", "0.5", "--json",
        "-q",
    ];
    let s = json(&args);
    let smp = &s["sample"];
    assert_eq!(smp["events_offered"], 4096);
    assert_eq!(s["trace"][0]["syncs"], 8);
    let kept = smp["events_kept"].as_u64().unwrap();
    // Both passes over a kept page are kept: an even count, and about half.
    assert_eq!(kept % 2, 0, "{kept}");
    assert!((1024..=3072).contains(&kept), "{kept}");
    assert_eq!(s["trace"][0]["keys"], "offset");
    assert_eq!(simulated(json(&args)), simulated(s));
}
