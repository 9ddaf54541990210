//! Real runs on small scenarios in a temporary directory: the events executed per kind,
//! page faults, files created, kept, reused and removed.

mod common;

use std::path::Path;

use common::*;
use mmsim_probe::{run, Plan, RunConfig};
use serde_json::Value;

/// Every target and both file calls, three phases, a warmup: a few MiB.
fn mixed() -> String {
    format!(
        "seed = 21\nwarmup_events = 2000\n{MACHINE}\
         [[workload]]\nname = \"db\"\nkind = \"zipf\"\ntarget = \"file\"\npages = \"4M\"\n\
         theta = 0.9\naccesses = 6000\nadvice = \"random\"\nweight = 2\n\
         [[workload]]\nname = \"heap\"\nkind = \"uniform\"\ntarget = \"anon\"\npages = \"2M\"\n\
         accesses = 3000\nwrite_ratio = 0.5\n\
         [[workload]]\nname = \"log\"\nkind = \"hot-cold\"\ntarget = \"file\"\npages = \"1M\"\n\
         hot_fraction = 0.2\nhot_probability = 0.8\naccesses = 2000\nwrite_ratio = 0.5\nphase = 1\n\
         [[workload]]\nname = \"map\"\nkind = \"sequential\"\ntarget = \"mmap\"\npages = \"2M\"\n\
         passes = 2\nwrite_ratio = 0.25\nphase = 1\n\
         [[workload]]\nname = \"text\"\nkind = \"loop\"\ntarget = \"mmap-exec\"\npages = \"512K\"\n\
         iterations = 3\nphase = 2\n\
         [[workload]]\nname = \"idle\"\nkind = \"touch\"\ntarget = \"anon\"\npages = \"1M\"\nphase = 2\n"
    )
}

fn dir_names(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    names.sort();
    names
}

#[test]
fn a_real_run_executes_every_event_of_the_stream() {
    let tmp = tempfile::tempdir().unwrap();
    let path = write_scenario(tmp.path(), "mixed", &mixed());
    let files = tmp.path().join("files");
    std::fs::create_dir(&files).unwrap();
    // What the stream holds, from the dump (no memory touched).
    let d = run_probe(&[
        path.to_str().unwrap(),
        "--dump",
        tmp.path().join("dump").to_str().unwrap(),
        "-q",
    ]);
    assert!(d.status.success(), "{}", stderr(&d));
    let dumped = json(&d);

    let o = run_probe(&[
        path.to_str().unwrap(),
        "--dir",
        files.to_str().unwrap(),
        "--quiet",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stderr(&o).is_empty(), "{}", stderr(&o));
    let r = json(&o);
    let total = 6000 + 3000 + 2000 + 1024 + 3 * 128 + 256;
    assert_eq!(r["events"], total);
    assert_eq!(r["run"]["events"], total);
    assert_eq!(r["per_kind"], dumped["per_kind"]);
    let k = &r["per_kind"];
    assert_eq!(
        k["file_read"].as_u64().unwrap() + k["file_write"].as_u64().unwrap(),
        8000
    );
    assert_eq!(
        k["access_read"].as_u64().unwrap() + k["access_write"].as_u64().unwrap(),
        3000 + 1024 + 384 + 256
    );
    // Half of the log's 2000 events are writes, give or take.
    assert!(
        (800..1200).contains(&k["file_write"].as_u64().unwrap()),
        "{k}"
    );
    assert_eq!(k["think"], 0);
    let per: Vec<(String, u64)> = r["workloads"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| {
            (
                w["name"].as_str().unwrap().to_string(),
                w["events"].as_u64().unwrap(),
            )
        })
        .collect();
    let expect = [
        ("db", 6000),
        ("heap", 3000),
        ("log", 2000),
        ("map", 1024),
        ("text", 384),
        ("idle", 256),
    ];
    assert_eq!(per, expect.map(|(n, e)| (n.to_string(), e)));
    // Warmup and measured part split at event 2000.
    assert_eq!(r["warmup"]["events"], 2000);
    assert_eq!(r["measured"]["events"], total - 2000);
    // The pid is the probe's, a child of this test.
    let pid = r["pid"].as_u64().unwrap() as u32;
    assert!(pid > 1 && pid != std::process::id());
    // Every anon page written at least once faults at least once: `idle` touches 256
    // pages, `heap` writes ~1500 times into 512 pages, the mapping is 512 pages.
    assert!(r["run"]["minflt"].as_i64().unwrap() >= 256 + 512, "{r}");
    // The host's resident peak (binary, libraries, allocator): it cannot be exact.
    assert!(r["maxrss_kb"].as_i64().unwrap() > 0);
    assert_eq!(r["evicted"], true);
    // The files were created in --dir and removed.
    assert_eq!(
        r["workloads"][0]["file"],
        files.join("mmsim-probe-0-db.dat").to_str().unwrap()
    );
    assert_eq!(r["workloads"][0]["file_state"], "created, removed");
    assert!(dir_names(&files).is_empty(), "{:?}", dir_names(&files));
}

#[test]
fn an_anon_touch_of_n_pages_takes_at_least_n_minor_faults() {
    let n = 4096u64; // 16 MiB
    let s = scenario(
        "touch",
        &format!("{MACHINE}[[workload]]\nkind = \"touch\"\ntarget = \"anon\"\npages = {n}\n"),
    );
    let plan = Plan::new(&s).unwrap();
    let r = run(&plan, &RunConfig::default(), &mut |_| {}).unwrap();
    assert_eq!(r.events, n);
    assert_eq!(r.per_kind.access_write, n);
    assert!(r.run.minflt >= n as i64, "minflt {} < {n}", r.run.minflt);
    // Not wildly more: no huge pages, no double faults (read then write).
    assert!(r.run.minflt < 2 * n as i64, "minflt {}", r.run.minflt);
    // The touch itself never reads from disk. A few major faults can still come from
    // the test binary's own text, paged out between runs by the host (these machines
    // run a kdamond that pages out idle page cache): seen once in a loaded run.
    assert!(r.run.majflt < 16, "majflt {}", r.run.majflt);
    assert_eq!(r.pid, std::process::id());
    assert!(r.workloads[0].file.is_none());
}

#[test]
fn keep_prepare_and_reuse() {
    let tmp = tempfile::tempdir().unwrap();
    let toml = format!(
        "{MACHINE}[[workload]]\nname = \"f\"\nkind = \"uniform\"\ntarget = \"file\"\n\
         pages = 300\naccesses = 1000\nadvice = \"random\"\n\
         [[workload]]\nname = \"m\"\nkind = \"sequential\"\ntarget = \"mmap\"\npages = 100\n"
    );
    let path = write_scenario(tmp.path(), "small", &toml);
    let files = tmp.path().join("files");
    std::fs::create_dir(&files).unwrap();
    let dir = files.to_str().unwrap();
    let p = path.to_str().unwrap();
    let want = ["mmsim-probe-0-f.dat", "mmsim-probe-1-m.dat"];

    // --prepare: files created and kept, nothing run.
    let o = run_probe(&[p, "--dir", dir, "--prepare", "-q"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let r = json(&o);
    assert_eq!(r["prepare_only"], true);
    assert_eq!(r["events"], 0);
    assert_eq!(r["workloads"][0]["file_state"], "created, kept");
    assert_eq!(dir_names(&files), want);
    assert_eq!(
        std::fs::metadata(files.join(want[0])).unwrap().len(),
        300 * 4096
    );
    let content = std::fs::read(files.join(want[1])).unwrap();
    assert_eq!(content.len(), 100 * 4096);
    assert_eq!(
        &content[4096..4104],
        &2u64.to_le_bytes(),
        "page 1 is numbered"
    );
    assert!(
        content.chunks(4096).all(|pg| pg.iter().any(|&b| b != 0)),
        "no page is all zeros"
    );

    // Without --reuse, existing files are not overwritten.
    let o = run_probe(&[p, "--dir", dir, "-q"]);
    assert_eq!(o.status.code(), Some(1));
    let e = stderr(&o);
    assert!(
        e.contains("create") && e.contains("mmsim-probe-0-f.dat") && e.contains("--reuse"),
        "{e}"
    );

    // --reuse runs on them and leaves them.
    let o = run_probe(&[p, "--dir", dir, "--reuse", "-q"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let r = json(&o);
    assert_eq!(r["events"], 1100);
    assert_eq!(r["per_kind"]["file_read"], 1000);
    assert_eq!(r["workloads"][1]["file_state"], "reused");
    assert_eq!(dir_names(&files), want);

    // A reused file of the wrong size is refused.
    std::fs::OpenOptions::new()
        .write(true)
        .open(files.join(want[0]))
        .unwrap()
        .set_len(4096)
        .unwrap();
    let o = run_probe(&[p, "--dir", dir, "--reuse", "-q"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("exactly 1228800"), "{}", stderr(&o));

    // --keep after a normal run.
    for w in want {
        std::fs::remove_file(files.join(w)).unwrap();
    }
    let o = run_probe(&[p, "--dir", dir, "--keep", "-q"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(json(&o)["workloads"][0]["file_state"], "created, kept");
    assert_eq!(dir_names(&files), want);
}

#[test]
fn the_output_can_go_to_a_file_and_progress_to_stderr() {
    let tmp = tempfile::tempdir().unwrap();
    let toml = format!(
        "{MACHINE}[[workload]]\nkind = \"uniform\"\ntarget = \"anon\"\npages = 64\n\
         accesses = 100\nwrite_ratio = 1\n"
    );
    let path = write_scenario(tmp.path(), "tiny", &toml);
    let out = tmp.path().join("r.json");
    let o = run_probe(&[
        path.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "--think",
        "sleep",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(o.stdout.is_empty());
    assert!(stderr(&o).contains("100 events"), "{}", stderr(&o));
    let r: Value = serde_json::from_str(&std::fs::read_to_string(out).unwrap()).unwrap();
    assert_eq!(r["per_kind"]["access_write"], 100);
    assert_eq!(r["think"], "sleep");
}

#[test]
fn a_trace_replay_with_pages_runs_and_dumps_the_same_stream() {
    let tmp = tempfile::tempdir().unwrap();
    let trace = tmp.path().join("t.txt");
    let keys: String = (0..3000u64)
        .map(|i| format!("{}\n", (i * 7919) % 500 + 10_000))
        .collect();
    std::fs::write(&trace, keys).unwrap();
    let toml = format!(
        "{MACHINE}[[workload]]\nkind = \"trace\"\ntarget = \"file\"\npath = \"t.txt\"\n\
         format = \"text\"\npages = 600\nwrite_ratio = 0.1\n\
         [[workload]]\nkind = \"trace\"\ntarget = \"anon\"\npath = \"t.txt\"\nformat = \"text\"\n\
         pages = 500\nlimit = 1000\n"
    );
    let path = write_scenario(tmp.path(), "trace", &toml);
    let s = mmsim_workloads::Scenario::from_file(&path).unwrap();
    let plan = Plan::new(&s).unwrap();
    let d = tmp.path().join("dump");
    let info = mmsim_probe::dump(&plan, &d).unwrap();
    assert_eq!(info.events, 4000);
    assert_eq!(simulator_stream(&s).len(), 4000);
    assert!(mmsim_probe::verify_dump(&d, None).unwrap().equal);
    let files = tmp.path().join("files");
    std::fs::create_dir(&files).unwrap();
    let r = run(
        &plan,
        &RunConfig {
            dir: Some(files.clone()),
            ..RunConfig::default()
        },
        &mut |_| {},
    )
    .unwrap();
    assert_eq!(r.per_kind, info.per_kind);
    assert_eq!(r.events, 4000);
    assert!(dir_names(&files).is_empty());
}

/// `--hold FILE`: after the last event the probe creates FILE with its pid and waits,
/// its memory still mapped, until FILE is removed; then it reports as usual. With
/// `--dump` it is refused.
#[test]
fn hold_waits_for_its_file_to_go() {
    let tmp = tempfile::tempdir().unwrap();
    let scen = tmp.path().join("s.toml");
    std::fs::write(
        &scen,
        format!(
            "seed = 3\n{MACHINE}[[workload]]\nname = \"heap\"\nkind = \"uniform\"\n\
             target = \"anon\"\npages = \"1M\"\naccesses = 500\n"
        ),
    )
    .unwrap();
    let hold = tmp.path().join("hold");
    let mut child = spawn_held(&[scen.to_str().unwrap(), "-q"], &hold);
    let pid: u32 = std::fs::read_to_string(&hold)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    assert_eq!(pid, child.id());
    // Still holding: the process has not exited and its anon mapping is there.
    std::thread::sleep(std::time::Duration::from_millis(100));
    assert!(child.try_wait().unwrap().is_none());
    let maps = std::fs::read_to_string(format!("/proc/{pid}/maps")).unwrap();
    assert!(
        maps.lines().any(|l| {
            let r = l.split_whitespace().next().unwrap();
            let (a, b) = r.split_once('-').unwrap();
            u64::from_str_radix(b, 16).unwrap() - u64::from_str_radix(a, 16).unwrap() == 1 << 20
        }),
        "no 1 MiB mapping held:\n{maps}"
    );
    std::fs::remove_file(&hold).unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(json(&out)["events"], 500);

    let o = run_probe(&[
        scen.to_str().unwrap(),
        "--dump",
        tmp.path().join("d").to_str().unwrap(),
        "--hold",
        hold.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("--hold"), "{}", stderr(&o));
}

/// Rss of the mapping of exactly `bytes` in `/proc/<pid>/smaps`, KiB.
fn mapping_rss_kb(pid: u32, bytes: u64) -> u64 {
    let smaps = std::fs::read_to_string(format!("/proc/{pid}/smaps")).unwrap();
    let mut in_it = false;
    for l in smaps.lines() {
        let first = l.split_whitespace().next().unwrap_or("");
        if let Some((a, b)) = first.split_once('-') {
            if let (Ok(a), Ok(b)) = (u64::from_str_radix(a, 16), u64::from_str_radix(b, 16)) {
                in_it = b - a == bytes;
                continue;
            }
        }
        if in_it {
            if let Some(v) = l.strip_prefix("Rss:") {
                return v.trim().trim_end_matches("kB").trim().parse().unwrap();
            }
        }
    }
    panic!("no mapping of {bytes} bytes in /proc/{pid}/smaps:\n{smaps}");
}

/// `--ready FILE`: once the regions are mapped and before the first event, the probe
/// creates FILE with its pid and waits until it is removed: the anon region is mapped
/// but has no page yet; after the removal it runs every event (the touch populates all
/// 256 pages) and reports as usual. With `--prepare` it is refused.
#[test]
fn ready_waits_before_the_first_event() {
    let tmp = tempfile::tempdir().unwrap();
    let scen = tmp.path().join("s.toml");
    std::fs::write(
        &scen,
        format!(
            "seed = 3\n{MACHINE}[[workload]]\nname = \"heap\"\nkind = \"touch\"\n\
             target = \"anon\"\npages = \"1M\"\n"
        ),
    )
    .unwrap();
    let ready = tmp.path().join("ready");
    let hold = tmp.path().join("hold");
    let mut child = probe()
        .args([
            scen.to_str().unwrap(),
            "-q",
            "--ready",
            ready.to_str().unwrap(),
            "--hold",
            hold.to_str().unwrap(),
        ])
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let wait_for = |p: &Path| {
        let t0 = std::time::Instant::now();
        while !p.exists() {
            assert!(
                t0.elapsed().as_secs() < 60,
                "{} never appeared",
                p.display()
            );
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
    };
    wait_for(&ready);
    let pid: u32 = std::fs::read_to_string(&ready)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    assert_eq!(pid, child.id());
    std::thread::sleep(std::time::Duration::from_millis(100));
    assert!(child.try_wait().unwrap().is_none());
    assert!(!hold.exists());
    assert_eq!(mapping_rss_kb(pid, 1 << 20), 0);
    std::fs::remove_file(&ready).unwrap();
    wait_for(&hold);
    assert_eq!(mapping_rss_kb(pid, 1 << 20), 1024);
    std::fs::remove_file(&hold).unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(json(&out)["events"], 256);

    let o = run_probe(&[scen.to_str().unwrap(), "--prepare", "--ready", "x"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("--ready"), "{}", stderr(&o));
}

/// The `VmFlags` in `/proc/<pid>/smaps` of the first mapping of at least `bytes`
/// (without MADV_NOHUGEPAGE the region may merge with a neighbouring anon mapping).
fn mapping_vmflags(pid: u32, bytes: u64) -> String {
    let smaps = std::fs::read_to_string(format!("/proc/{pid}/smaps")).unwrap();
    let mut in_it = false;
    for l in smaps.lines() {
        let first = l.split_whitespace().next().unwrap_or("");
        if let Some((a, b)) = first.split_once('-') {
            if let (Ok(a), Ok(b)) = (u64::from_str_radix(a, 16), u64::from_str_radix(b, 16)) {
                in_it = b - a >= bytes;
                continue;
            }
        }
        if in_it {
            if let Some(v) = l.strip_prefix("VmFlags:") {
                return v.trim().to_string();
            }
        }
    }
    panic!("no mapping of {bytes} bytes in /proc/{pid}/smaps:\n{smaps}");
}

/// An anon region gets MADV_NOHUGEPAGE (`nh` in VmFlags) while `[machine.thp]` allows
/// no size, nothing when 64 KiB is on (the runner's sysfs decides), and
/// MADV_HUGEPAGE (`hg`) with `vma_advice = "hugepage"`.
#[test]
fn anon_thp_advice_follows_the_scenario() {
    if !Path::new("/sys/kernel/mm/transparent_hugepage/enabled").exists() {
        eprintln!("skipped: no THP in this kernel");
        return;
    }
    // (machine, the workload's thp_advice line, VM_NOHUGEPAGE, VM_HUGEPAGE).
    for (thp, advice, want_nh, want_hg) in [
        ("", "", true, false),
        (
            "[machine.thp]\nhugepages-64kB.enabled = \"always\"\n",
            "",
            false,
            false,
        ),
        (
            "[machine.thp]\nhugepages-64kB.enabled = \"madvise\"\nvma_advice = \"hugepage\"\n",
            "",
            false,
            true,
        ),
        // The workload's own advice.
        (
            "[machine.thp]\nhugepages-64kB.enabled = \"madvise\"\n",
            "thp_advice = \"hugepage\"\n",
            false,
            true,
        ),
        // ... in place of the machine's.
        (
            "[machine.thp]\nhugepages-64kB.enabled = \"madvise\"\nvma_advice = \"hugepage\"\n",
            "thp_advice = \"nohugepage\"\n",
            true,
            false,
        ),
        // Without large folios in the simulator the mapping keeps VM_NOHUGEPAGE.
        ("", "thp_advice = \"hugepage\"\n", true, false),
    ] {
        let tmp = tempfile::tempdir().unwrap();
        let scen = tmp.path().join("s.toml");
        std::fs::write(
            &scen,
            format!(
                "seed = 3\n{MACHINE}{thp}[[workload]]\nname = \"heap\"\nkind = \"touch\"\n\
                 target = \"anon\"\npages = \"64M\"\nstride = 4096\n{advice}"
            ),
        )
        .unwrap();
        let hold = tmp.path().join("hold");
        let child = probe()
            .args([
                scen.to_str().unwrap(),
                "-q",
                "--hold",
                hold.to_str().unwrap(),
            ])
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let t0 = std::time::Instant::now();
        while !hold.exists() {
            assert!(t0.elapsed().as_secs() < 60, "the hold file never appeared");
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
        let flags = mapping_vmflags(child.id(), 64 << 20);
        let has = |f: &str| flags.split_whitespace().any(|x| x == f);
        assert_eq!(has("nh"), want_nh, "{thp:?}: VmFlags {flags}");
        assert_eq!(has("hg"), want_hg, "{thp:?}: VmFlags {flags}");
        std::fs::remove_file(&hold).unwrap();
        let out = child.wait_with_output().unwrap();
        assert!(out.status.success(), "{}", stderr(&out));
    }
}

/// A touch under MADV_NOHUGEPAGE whose MADV_COLLAPSE is refused (EINVAL kept as
/// `collapse_errno`), then MADV_HUGEPAGE (`advise_after`) and two snapshots: the
/// probe reads AnonHugePages at each zero-length Think, after sleeping the waits.
#[test]
fn advice_after_the_touch_and_snapshots_are_executed() {
    if !Path::new("/sys/kernel/mm/transparent_hugepage/enabled").exists() {
        eprintln!("skipped: no THP in this kernel");
        return;
    }
    let s = scenario(
        "snap",
        &format!(
            "{MACHINE}[machine.thp]\nenabled = \"madvise\"\nvma_advice = \"nohugepage\"\n\
             [[workload]]\nkind = \"touch\"\ntarget = \"anon\"\npages = \"4M\"\n\
             collapse = true\nadvise_after = \"hugepage\"\nsnapshots = [0.15, 0.3]\n"
        ),
    );
    let plan = Plan::new(&s).unwrap();
    let cfg = RunConfig {
        think: mmsim_probe::ThinkMode::Sleep,
        ..RunConfig::default()
    };
    let t0 = std::time::Instant::now();
    let r = run(&plan, &cfg, &mut |_| {}).unwrap();
    assert!(t0.elapsed().as_secs_f64() >= 0.3);
    // 1024 stores, the collapse, the advice, 2 + 1 + 2 + 1 Thinks (0.15 s: 100 + 50
    // ms and a mark; 0.15 s more: the same).
    assert_eq!(r.events, 1024 + 2 + 6);
    assert_eq!(
        (r.per_kind.collapse, r.per_kind.thp_advice, r.per_kind.think),
        (1, 1, 6)
    );
    assert_eq!((r.collapse_failed, r.collapse_errno), (Some(1), Some(22)));
    assert_eq!(r.anon_huge_kb_at.len(), 2);
    assert!(
        r.snapshot_s[0] >= 0.15 && r.snapshot_s[1] >= 0.3 && r.snapshot_s[1] < 30.0,
        "{:?}",
        r.snapshot_s
    );
}

/// `target = "mmap-private"` maps the file MAP_PRIVATE: the run's stores fault (each
/// page copied) and the file on disk stays as it was prepared.
#[test]
fn a_private_mapping_is_written_without_changing_the_file() {
    let tmp = tempfile::tempdir().unwrap();
    let toml = format!(
        "{MACHINE}[[workload]]\nname = \"p\"\nkind = \"touch\"\ntarget = \"mmap-private\"\n\
         pages = 256\n"
    );
    let path = write_scenario(tmp.path(), "private", &toml);
    let files = tmp.path().join("files");
    std::fs::create_dir(&files).unwrap();
    let (dir, p) = (files.to_str().unwrap(), path.to_str().unwrap());
    let o = run_probe(&[p, "--dir", dir, "--prepare", "-q"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let before = std::fs::read(files.join("mmsim-probe-0-p.dat")).unwrap();
    let o = run_probe(&[p, "--dir", dir, "--reuse", "-q"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let r = json(&o);
    assert_eq!(r["per_kind"]["access_write"], 256);
    assert!(r["run"]["minflt"].as_i64().unwrap() + r["run"]["majflt"].as_i64().unwrap() >= 256);
    let after = std::fs::read(files.join("mmsim-probe-0-p.dat")).unwrap();
    assert!(before == after, "MAP_PRIVATE stores reached the file");
}
