//! Error paths: every message names the field, the option, or the file and the call.

mod common;

use common::*;
use mmsim_probe::{Plan, ProbeError, RunConfig};

const FILE_WL: &str =
    "[[workload]]\nkind = \"uniform\"\ntarget = \"file\"\npages = 64\naccesses = 10\n";

fn unsupported(toml: &str) -> (String, String) {
    match Plan::new(&scenario("u", toml)) {
        Err(ProbeError::Unsupported { field, message, .. }) => (field, message),
        other => panic!("expected Unsupported, got {other:?}"),
    }
}

#[test]
fn unsupported_kinds_and_fields_are_named() {
    let (field, message) = unsupported(&format!(
        "{FILE_WL}[[workload]]\nkind = \"fio\"\nrw = \"randread\"\nsize = \"4m\"\nios = 100\n"
    ));
    assert_eq!(field, "workload[1].kind");
    assert!(message.contains("`fio` is a program model"), "{message}");
    for model in [
        "[[workload]]\nkind = \"eater\"\nsize = \"4M\"\n",
        "[[workload]]\nkind = \"dd\"\nbs = 1024\ncount = 100\n",
    ] {
        let (field, _) = unsupported(model);
        assert_eq!(field, "workload[0].kind");
    }
    let (field, message) = unsupported(&format!(
        "{FILE_WL}[[workload]]\nkind = \"touch\"\ntarget = \"anon\"\npages = 4\nstart = \"1ms\"\n"
    ));
    assert_eq!(field, "workload[1].start");
    assert!(message.contains("simulated clock"), "{message}");
    let (field, message) =
        unsupported("[[workload]]\nkind = \"trace\"\ntarget = \"anon\"\npath = \"t.txt\"\n");
    assert_eq!(field, "workload[0].pages");
    assert!(message.contains("2^31"), "{message}");
}

#[test]
fn writes_at_simulated_times_are_refused() {
    let groups = "[[cgroup]]\npath = \"/a\"\n[[workload]]\nname = \"w\"\nkind = \"uniform\"\n\
                  target = \"file\"\npages = 64\naccesses = 10\ncgroup = \"/a\"\n";
    for (table, extra) in [
        (
            "cgroup_change",
            "[[cgroup_change]]\nat = \"1s\"\npath = \"/a\"\nmax = \"1M\"\n",
        ),
        (
            "cgroup_cycle",
            "[[cgroup_cycle]]\npath = \"/a\"\nknob = \"max\"\nvalues = [\"1M\"]\n\
             durations = [\"1s\"]\nuntil = \"2s\"\n",
        ),
        (
            "cgroup_move",
            "[[cgroup_move]]\nat = \"1s\"\nworkload = \"w\"\nto = \"/\"\n",
        ),
    ] {
        let (field, message) = unsupported(&format!("{groups}{extra}"));
        assert_eq!(field, format!("{table}[0]"));
        assert!(message.contains("simulated times"), "{message}");
    }
}

#[test]
fn many_cpus_are_refused() {
    let (field, message) = unsupported(&format!("[machine]\nmemory = \"1G\"\ncpus = 4\n{FILE_WL}"));
    assert_eq!(field, "machine.cpus");
    assert!(message.contains("one CPU"), "{message}");
}

#[test]
fn the_fair_schedule_is_refused() {
    let (field, message) = unsupported(&format!("schedule = \"fair\"\n{FILE_WL}"));
    assert_eq!(field, "schedule");
    assert!(message.contains("simulated time"), "{message}");
}

#[test]
fn an_invalid_scenario_is_the_scenarios_error() {
    let e = Plan::new(&mmsim_workloads::Scenario::new(
        "bad",
        Default::default(),
        vec![mmsim_workloads::WorkloadSpec::new(
            mmsim_workloads::Target::Anon,
            mmsim_workloads::WorkloadKind::touch(0),
        )],
    ))
    .unwrap_err();
    assert!(matches!(e, ProbeError::Scenario(_)), "{e:?}");
    assert!(e.to_string().contains("workload[0].pages"), "{e}");
}

#[test]
fn remap_is_refused_naming_the_field() {
    let s = mmsim_workloads::Scenario::from_toml_str(
        "[[workload]]\nkind = \"touch\"\ntarget = \"anon\"\npages = \"1M\"\ntouched = 0\n\
         remap = true\npasses = 3\n",
        "remap",
    )
    .unwrap();
    let e = Plan::new(&s).unwrap_err();
    assert!(e.to_string().contains("workload[0].remap"), "{e}");
}

#[test]
fn the_command_line_reports_unsupported_kinds_with_exit_2() {
    let tmp = tempfile::tempdir().unwrap();
    let p = write_scenario(
        tmp.path(),
        "fio",
        "[[workload]]\nkind = \"fio\"\nrw = \"randread\"\nsize = \"4m\"\nios = 100\n",
    );
    let o = run_probe(&[p.to_str().unwrap(), "--dir", tmp.path().to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    let e = stderr(&o);
    assert!(
        e.contains("fio.toml: workload[0].kind: kind `fio` is a program model"),
        "{e}"
    );
    // The dump refuses it too (it could not be executed).
    let o = run_probe(&[
        p.to_str().unwrap(),
        "--dump",
        tmp.path().join("d").to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(!tmp.path().join("d").exists());
    // An unknown name.
    let o = run_probe(&["no-such-scenario"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stderr(&o).contains("not an embedded scenario"),
        "{}",
        stderr(&o)
    );
    // An embedded scenario with a model.
    let o = run_probe(&["memcached"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("workload[0].kind"), "{}", stderr(&o));
}

#[test]
fn file_targets_need_an_existing_dir() {
    let tmp = tempfile::tempdir().unwrap();
    let p = write_scenario(tmp.path(), "f", FILE_WL);
    let o = run_probe(&[p.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o)
            .contains("workload[0] \"uniform-0\" (target file) needs a real file: give --dir"),
        "{}",
        stderr(&o)
    );
    let missing = tmp.path().join("nowhere");
    let o = run_probe(&[p.to_str().unwrap(), "--dir", missing.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stderr(&o).contains(&format!("stat (--dir) {}", missing.display())),
        "{}",
        stderr(&o)
    );
    let o = run_probe(&[p.to_str().unwrap(), "--dir", p.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("not a directory"), "{}", stderr(&o));
}

#[test]
fn a_file_that_cannot_be_created_names_the_file_and_the_call() {
    // /proc accepts no new files, even from root.
    let s = scenario("f", FILE_WL);
    let plan = Plan::new(&s).unwrap();
    let cfg = RunConfig {
        dir: Some("/proc".into()),
        ..RunConfig::default()
    };
    let e = mmsim_probe::run(&plan, &cfg, &mut |_| {}).unwrap_err();
    assert!(
        matches!(e, ProbeError::Syscall { call: "create", .. }),
        "{e:?}"
    );
    assert!(
        e.to_string()
            .starts_with("create /proc/mmsim-probe-0-uniform-0.dat: "),
        "{e}"
    );

    // Something in the way (a directory where the file goes): nothing is overwritten, and
    // the files created before the failure are removed.
    let tmp = tempfile::tempdir().unwrap();
    let two = format!(
        "{FILE_WL}[[workload]]\nkind = \"zipf\"\ntarget = \"file\"\npages = 64\ntheta = 0.5\n\
         accesses = 10\n"
    );
    let p = write_scenario(tmp.path(), "two", &two);
    let files = tmp.path().join("files");
    std::fs::create_dir_all(files.join("mmsim-probe-1-zipf-1.dat")).unwrap();
    let o = run_probe(&[p.to_str().unwrap(), "--dir", files.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    let err = stderr(&o);
    assert!(err.contains("create (it exists"), "{err}");
    assert!(err.contains("mmsim-probe-1-zipf-1.dat"), "{err}");
    let left: Vec<_> = std::fs::read_dir(&files)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(
        left,
        ["mmsim-probe-1-zipf-1.dat"],
        "the first file was removed"
    );
    // A symbolic link in the way is not followed, even with --reuse.
    std::fs::remove_dir(files.join("mmsim-probe-1-zipf-1.dat")).unwrap();
    let outside = tmp.path().join("outside.dat");
    std::fs::write(&outside, vec![7u8; 64 * 4096]).unwrap();
    std::os::unix::fs::symlink(&outside, files.join("mmsim-probe-1-zipf-1.dat")).unwrap();
    let o = run_probe(&[
        p.to_str().unwrap(),
        "--dir",
        files.to_str().unwrap(),
        "--reuse",
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("not a regular file"), "{}", stderr(&o));
    assert_eq!(std::fs::read(&outside).unwrap(), vec![7u8; 64 * 4096]);
}

#[test]
fn max_memory_and_max_disk_guard_the_sizes() {
    let tmp = tempfile::tempdir().unwrap();
    let p = write_scenario(
        tmp.path(),
        "big",
        "[[workload]]\nname = \"big\"\nkind = \"touch\"\ntarget = \"anon\"\npages = \"2G\"\n\
         [[workload]]\nname = \"m\"\nkind = \"touch\"\ntarget = \"mmap\"\npages = \"16M\"\n",
    );
    let dir = tmp.path().to_str().unwrap();
    // Default 1G.
    let o = run_probe(&[p.to_str().unwrap(), "--dir", dir]);
    assert_eq!(o.status.code(), Some(2));
    let e = stderr(&o);
    assert!(
        e.contains("mapped memory: the scenario needs 2164260864 bytes")
            && e.contains("anon \"big\" 2147483648 bytes + mmap \"m\" 16777216 bytes")
            && e.contains("--max-memory 1073741824"),
        "{e}"
    );
    let o = run_probe(&[p.to_str().unwrap(), "--dir", dir, "--max-memory", "100M"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("--max-memory 104857600"),
        "{}",
        stderr(&o)
    );
    // Memory allowed, disk not.
    let o = run_probe(&[
        p.to_str().unwrap(),
        "--dir",
        dir,
        "--max-memory",
        "3G",
        "--max-disk",
        "8M",
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("file space: the scenario needs 16777216 bytes"),
        "{}",
        stderr(&o)
    );
    // Nothing was created.
    let names: Vec<_> = std::fs::read_dir(tmp.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names, ["big.toml"]);
    // A bad size.
    let o = run_probe(&[p.to_str().unwrap(), "--max-memory", "lots"]);
    assert_eq!(o.status.code(), Some(2));
}

#[test]
fn check_dump_of_something_else_is_an_error() {
    let tmp = tempfile::tempdir().unwrap();
    let o = run_probe(&["--check-dump", tmp.path().to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("dump.json"), "{}", stderr(&o));
    let o = run_probe(&[]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("give a SCENARIO"), "{}", stderr(&o));
}

/// `trace_keys = "offset"`: a trace of one file (keys below 2^40) on `target = "file"`
/// is one region as long as the trace's last referenced page, as the simulator laid
/// it out; a trace of two files, or another target, is refused naming `trace_keys`.
#[test]
fn offset_trace_replays_are_one_file_only() {
    let dir = std::env::temp_dir().join(format!("mmsim-probe-offset-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let one = dir.join("one.txt");
    std::fs::write(&one, "7\n8\n9\n300\n301\n").unwrap();
    let two = dir.join("two.txt");
    std::fs::write(&two, format!("7\n{}\n", (1u64 << 40) + 5)).unwrap();
    let wl = |path: &std::path::Path, target: &str| {
        format!(
            "[[workload]]\nkind = \"trace\"\ntarget = \"{target}\"\npath = \"{}\"\n\
             format = \"text\"\ntrace_keys = \"offset\"\npages = 4096\n",
            path.display()
        )
    };
    let plan = Plan::new(&scenario("o", &wl(&one, "file"))).unwrap();
    assert_eq!(plan.regions.len(), 1);
    assert_eq!(plan.regions[0].pages, 302, "up to the last referenced page");
    let (field, message) = unsupported(&wl(&two, "file"));
    assert_eq!(field, "workload[0].trace_keys");
    assert!(message.contains("2 files"), "{message}");
    let (field, message) = unsupported(&wl(&one, "anon"));
    assert_eq!(field, "workload[0].trace_keys");
    assert!(message.contains("target = \"file\""), "{message}");
    std::fs::remove_dir_all(&dir).unwrap();
}
