//! `opens = N` on the real kernel (issue #15): the probe opens the workload's file N
//! more times, one `struct file` (and `f_ra`) per descriptor as the simulator's
//! `Sim::open_file`, and runs each `FdRead` through its descriptor at the page the
//! generator gave it (`open_offsets`).

mod common;

use common::*;
use mmsim_probe::{run, Plan, RunConfig};

/// Three spread sequential readers of a 300-page file, twice over.
fn readers() -> String {
    format!(
        "seed = 5\n{MACHINE}[[workload]]\nname = \"scan\"\nkind = \"sequential\"\n\
         target = \"file\"\npages = 300\npasses = 2\nadvice = \"normal\"\nopens = 3\n\
         open_offsets = \"spread\"\n"
    )
}

#[test]
fn the_plan_knows_each_descriptor_and_the_dump_matches_the_simulator() {
    let tmp = tempfile::tempdir().unwrap();
    let path = write_scenario(tmp.path(), "readers", &readers());
    let s = mmsim_workloads::Scenario::from_file(&path).unwrap();
    let plan = Plan::new(&s).unwrap();
    assert_eq!(plan.fds(), 3);
    assert_eq!(plan.regions[0].opens, 3);
    assert_eq!(
        (0..4).map(|fd| plan.fd_region(fd)).collect::<Vec<_>>(),
        vec![Some(0), Some(0), Some(0), None]
    );
    let d = tmp.path().join("dump");
    let info = mmsim_probe::dump(&plan, &d).unwrap();
    assert_eq!(info.events, 600);
    assert_eq!(info.per_kind.file_read, 600);
    assert_eq!(info.per_kind.file_read_pages, 600);
    // The dump is the stream the simulator is fed, descriptor by descriptor.
    let sim = simulator_stream(&s);
    assert_eq!(sim.len(), 600);
    assert_eq!(
        sim[..4],
        [
            mmsim_core::Event::FdRead {
                fd: 0,
                index: 0,
                pages: 1
            },
            mmsim_core::Event::FdRead {
                fd: 1,
                index: 100,
                pages: 1
            },
            mmsim_core::Event::FdRead {
                fd: 2,
                index: 200,
                pages: 1
            },
            mmsim_core::Event::FdRead {
                fd: 0,
                index: 1,
                pages: 1
            },
        ]
    );
    assert!(mmsim_probe::verify_dump(&d, None).unwrap().equal);
}

#[test]
fn a_real_run_reads_through_its_own_descriptors() {
    let tmp = tempfile::tempdir().unwrap();
    let path = write_scenario(tmp.path(), "readers", &readers());
    let files = tmp.path().join("files");
    std::fs::create_dir(&files).unwrap();
    let hold = tmp.path().join("hold");
    let child = spawn_held(
        &[
            path.to_str().unwrap(),
            "--dir",
            files.to_str().unwrap(),
            "-q",
        ],
        &hold,
    );
    std::thread::sleep(std::time::Duration::from_millis(50));
    let pid = child.id();
    // The region's file is open four times: the workload's own descriptor (its
    // `read()` state, which FdRead events do not use) and the three readers'.
    let file = files.join("mmsim-probe-0-scan.dat");
    let open = std::fs::read_dir(format!("/proc/{pid}/fd"))
        .unwrap()
        .filter(|e| std::fs::read_link(e.as_ref().unwrap().path()).ok() == Some(file.clone()))
        .count();
    std::fs::remove_file(&hold).unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(open, 4);
    let r = json(&out);
    assert_eq!(r["events"], 600);
    assert_eq!(r["per_kind"]["file_read"], 600);
    assert_eq!(r["workloads"][0]["events"], 600);
    assert_eq!(r["bad_fd"], serde_json::Value::Null);
    // Run in-process too: the same counts through the library.
    let s = mmsim_workloads::Scenario::from_file(&path).unwrap();
    let plan = Plan::new(&s).unwrap();
    let rep = run(
        &plan,
        &RunConfig {
            dir: Some(files.clone()),
            ..RunConfig::default()
        },
        &mut |_| {},
    )
    .unwrap();
    assert_eq!(rep.per_kind.file_read_pages, 600);
    assert_eq!(rep.bad_fd, 0);
}
