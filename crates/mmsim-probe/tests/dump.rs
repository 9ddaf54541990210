//! The dumped stream is the simulator's stream: event for event (decoded), byte for byte
//! (encoded), and per workload in its native trace.

mod common;

use std::path::Path;

use common::*;
use mmsim_core::Event;
use mmsim_probe::evlog::{self, LogWriter};
use mmsim_probe::{dump, verify_dump, Plan};
use mmsim_trace::{Format, Record, TraceReader};
use mmsim_workloads::Scenario;

/// The scenarios of the acceptance list, and a few more.
fn scenarios() -> Vec<Scenario> {
    let file_zipf_random = format!(
        "seed = 11\n{MACHINE}\
         [[workload]]\nname = \"db\"\nkind = \"zipf\"\ntarget = \"file\"\npages = \"16M\"\n\
         theta = 0.99\naccesses = 30000\nadvice = \"random\"\nwrite_ratio = 0.1\n"
    );
    let anon_uniform_writes = format!(
        "seed = 12\n{MACHINE}\
         [[workload]]\nkind = \"uniform\"\ntarget = \"anon\"\npages = \"8M\"\naccesses = 25000\n\
         write_ratio = 0.3\n"
    );
    let mmap_sequential = format!(
        "seed = 13\n{MACHINE}\
         [[workload]]\nkind = \"sequential\"\ntarget = \"mmap\"\npages = \"6M\"\npasses = 3\n\
         advice = \"sequential\"\nwrite_ratio = 0.05\n\
         [[workload]]\nkind = \"loop\"\ntarget = \"mmap-exec\"\npages = \"1M\"\niterations = 4\n\
         phase = 1\n"
    );
    let interleaved_weights = format!(
        "seed = 14\n{MACHINE}\
         [[workload]]\nname = \"hot\"\nkind = \"zipf\"\ntarget = \"file\"\npages = \"4M\"\n\
         theta = 0.8\naccesses = 9000\nweight = 3\nscatter = false\n\
         [[workload]]\nname = \"cold\"\nkind = \"uniform\"\ntarget = \"anon\"\npages = \"2M\"\n\
         accesses = 7001\nweight = 1\n"
    );
    let phases = format!(
        "seed = 15\nwarmup_events = 3000\n{MACHINE}\
         [[workload]]\nkind = \"hot-cold\"\ntarget = \"file\"\npages = \"4M\"\n\
         hot_fraction = 0.1\nhot_probability = 0.9\naccesses = 5000\nphase = 2\nwrite_ratio = 0.2\n\
         [[workload]]\nkind = \"touch\"\ntarget = \"anon\"\npages = \"3M\"\n\
         [[workload]]\nkind = \"uniform\"\ntarget = \"mmap\"\npages = \"1M\"\naccesses = 4000\n\
         phase = 2\nweight = 2\n\
         [[workload]]\nkind = \"sequential\"\ntarget = \"file\"\npages = \"2M\"\nphase = 1\n\
         advice = \"normal\"\n"
    );
    vec![
        scenario("file-zipf-random", &file_zipf_random),
        scenario("anon-uniform-writes", &anon_uniform_writes),
        scenario("mmap-sequential", &mmap_sequential),
        scenario("interleaved-weights", &interleaved_weights),
        scenario("phases", &phases),
        mmsim_workloads::embedded_scenario("zipf-file")
            .unwrap()
            .unwrap(),
    ]
}

/// The records of each workload's native trace in a dump.
fn native(path: &Path) -> Vec<Record> {
    let mut r = TraceReader::open(path, Format::Native).unwrap();
    let mut all = Vec::new();
    let mut buf = Vec::new();
    while r.read_batch(&mut buf, 4096).unwrap() > 0 {
        all.extend_from_slice(&buf);
    }
    all
}

#[test]
fn the_dump_is_the_simulators_stream() {
    // Each scenario's events: its accesses and passes (the mmap one: 1,536 pages
    // three times and 256 pages four times).
    let all = scenarios();
    let events = [30_000, 25_000, 5632, 16_001, 10_280, 2_000_000];
    assert_eq!(all.len(), events.len());
    for (s, events) in all.into_iter().zip(events) {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("dump");
        let plan = Plan::new(&s).unwrap();
        let info = dump(&plan, &dir).unwrap();
        let sim = simulator_stream(&s);
        assert_eq!(sim.len(), events, "{}", s.name);

        // Event for event.
        let log = evlog::read_all(&dir.join("events.mmev")).unwrap();
        let dumped: Vec<Event> = log.iter().map(|r| r.event).collect();
        assert_eq!(dumped.len(), sim.len(), "{}", s.name);
        if let Some(i) = (0..sim.len()).find(|&i| dumped[i] != sim[i]) {
            panic!(
                "{}: event {i}: dump {:?}, simulator {:?}",
                s.name, dumped[i], sim[i]
            );
        }
        assert!(log.iter().all(|r| !r.idle));
        assert_eq!(info.events, sim.len() as u64);
        assert_eq!(info.per_kind.total(), info.events);
        assert_eq!(
            info.workloads.iter().map(|w| w.events).sum::<u64>(),
            info.events,
            "{}",
            s.name
        );
        if let Some(expected) = s.expected_events() {
            assert_eq!(info.events, expected, "{}", s.name);
        }

        // Byte for byte: the simulator's stream encoded is the file.
        let mut w = LogWriter::new(Path::new("sim"), Vec::new()).unwrap();
        w.write_batch(&sim, false).unwrap();
        let (bytes, _) = w.finish().unwrap();
        assert!(
            bytes == std::fs::read(dir.join("events.mmev")).unwrap(),
            "{}: the event log's bytes differ",
            s.name
        );

        // Per workload: the native trace is its events' pages and write flags.
        for (i, w) in info.workloads.iter().enumerate() {
            let mine: Vec<Record> = sim
                .iter()
                .filter_map(|e| match *e {
                    Event::Access { vma, index, write } if w.region.id_kind == "vma" => {
                        (vma == w.region.id).then_some(Record {
                            key: index as u64,
                            write,
                            cont: false,
                            fault: false,
                            sync: mmsim_trace::SyncSpan::NONE,
                        })
                    }
                    Event::FileRead {
                        file,
                        index,
                        pages: 1,
                    } if w.region.id_kind == "file" => (file == w.region.id).then_some(Record {
                        key: index as u64,
                        write: false,
                        cont: false,
                        fault: false,
                        sync: mmsim_trace::SyncSpan::NONE,
                    }),
                    Event::FileWrite {
                        file,
                        index,
                        pages: 1,
                    } if w.region.id_kind == "file" => (file == w.region.id).then_some(Record {
                        key: index as u64,
                        write: true,
                        cont: false,
                        fault: false,
                        sync: mmsim_trace::SyncSpan::NONE,
                    }),
                    _ => None,
                })
                .collect();
            assert_eq!(mine.len() as u64, w.events, "{} workload {i}", s.name);
            assert_eq!(native(&dir.join(&w.trace)), mine, "{} workload {i}", s.name);
        }

        // And the checker agrees.
        let v = verify_dump(&dir, None).unwrap();
        assert!(v.equal && v.traces_equal, "{}: {v:?}", s.name);
        assert_eq!(v.dump_events, sim.len() as u64);
        assert_eq!(v.simulator_events, sim.len() as u64);
    }
}

#[test]
fn the_sidecar_names_every_region() {
    let s = &scenarios()[4];
    let tmp = tempfile::tempdir().unwrap();
    let info = dump(&Plan::new(s).unwrap(), tmp.path()).unwrap();
    let side: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(tmp.path().join("dump.json")).unwrap())
            .unwrap();
    assert_eq!(side["format"], "mmsim-probe-dump");
    assert_eq!(side["version"], 1);
    assert_eq!(side["event_log"], "events.mmev");
    assert_eq!(side["warmup_events"], 3000);
    assert_eq!(side["events"], info.events);
    let w = side["workloads"].as_array().unwrap();
    let brief: Vec<(String, String, u64, String)> = w
        .iter()
        .map(|w| {
            (
                w["target"].as_str().unwrap().to_string(),
                w["id_kind"].as_str().unwrap().to_string(),
                w["id"].as_u64().unwrap(),
                w["file_name"].as_str().unwrap_or("-").to_string(),
            )
        })
        .collect();
    // Setup order = workload order: files 0 (hot-cold), 1 (behind the mmap), 2 (sequential);
    // VMAs 0 (touch), 1 (mmap).
    let expect = [
        ("file", "file", 0, "mmsim-probe-0-hot-cold-0.dat"),
        ("anon", "vma", 0, "-"),
        ("mmap", "vma", 1, "mmsim-probe-2-uniform-2.dat"),
        ("file", "file", 2, "mmsim-probe-3-sequential-3.dat"),
    ];
    assert_eq!(
        brief,
        expect.map(|(a, b, c, d)| (a.to_string(), b.to_string(), c, d.to_string()))
    );
    assert_eq!(w[2]["sim_file"], 1);
    // The scenario round-trips through the sidecar.
    let back = mmsim_probe::dump::dumped_scenario(tmp.path()).unwrap();
    assert_eq!(back.workloads, s.workloads);
    assert_eq!(back.seed, s.seed);
    assert_eq!(back.name, s.name);
}

#[test]
fn the_checker_finds_a_changed_event_and_another_seed() {
    let s = &scenarios()[3];
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    dump(&Plan::new(s).unwrap(), dir).unwrap();
    // Another seed is another stream.
    let mut other = s.clone();
    other.seed += 1;
    let v = verify_dump(dir, Some(&other)).unwrap();
    assert!(!v.equal);
    assert!(
        v.first_difference
            .as_deref()
            .unwrap()
            .starts_with("event 0:"),
        "{v:?}"
    );
    // Change event 1000's page index.
    let log = dir.join("events.mmev");
    let mut bytes = std::fs::read(&log).unwrap();
    let at = 16 + 1000 * 16 + 8;
    bytes[at] ^= 1;
    std::fs::write(&log, &bytes).unwrap();
    let v = verify_dump(dir, None).unwrap();
    assert!(!v.equal);
    assert!(v.traces_equal, "the traces were not touched");
    assert!(
        v.first_difference
            .as_deref()
            .unwrap()
            .starts_with("event 1000:"),
        "{v:?}"
    );
    // A log cut short: the simulator goes on.
    bytes[at] ^= 1;
    bytes.truncate(16 + 500 * 16);
    bytes.extend_from_slice(&evlog::FOOTER_MAGIC);
    bytes.extend_from_slice(&500u64.to_le_bytes());
    std::fs::write(&log, &bytes).unwrap();
    let v = verify_dump(dir, None).unwrap();
    assert!(!v.equal);
    assert_eq!(v.dump_events, 500);
    assert!(
        v.first_difference
            .as_deref()
            .unwrap()
            .contains("the dump has ended"),
        "{v:?}"
    );
}

#[test]
fn dump_and_check_from_the_command_line() {
    let tmp = tempfile::tempdir().unwrap();
    let toml = format!(
        "seed = 3\n{MACHINE}\
         [[workload]]\nkind = \"zipf\"\ntarget = \"file\"\npages = \"4M\"\ntheta = 0.9\n\
         accesses = 5000\nadvice = \"random\"\n\
         [[workload]]\nkind = \"touch\"\ntarget = \"anon\"\npages = \"1M\"\nphase = 1\n"
    );
    let path = write_scenario(tmp.path(), "cli", &toml);
    let dump_dir = tmp.path().join("d");
    let o = run_probe(&[
        path.to_str().unwrap(),
        "--dump",
        dump_dir.to_str().unwrap(),
        "--quiet",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stderr(&o).is_empty(), "--quiet: {}", stderr(&o));
    let info = json(&o);
    assert_eq!(info["events"], 5000 + 256);
    assert_eq!(info["per_kind"]["file_read"], 5000);
    assert_eq!(info["per_kind"]["access_write"], 256);
    // No region file was created anywhere: only the dump.
    let mut names: Vec<String> = std::fs::read_dir(tmp.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    names.sort();
    assert_eq!(names, ["cli.toml", "d"]);

    let o = run_probe(&["--check-dump", dump_dir.to_str().unwrap(), "-q"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v = json(&o);
    assert_eq!(v["equal"], true);
    assert_eq!(v["simulator_events"], 5256);
    // With the scenario given, and with another seed: different, exit 1.
    let o = run_probe(&[
        path.to_str().unwrap(),
        "--check-dump",
        dump_dir.to_str().unwrap(),
        "--seed",
        "4",
        "-q",
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert_eq!(json(&o)["equal"], false);
    assert!(stderr(&o).contains("differs"), "{}", stderr(&o));
}
