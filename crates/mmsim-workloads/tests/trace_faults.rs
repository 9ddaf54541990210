//! `trace_faults = "mapped"`: a `filemap` trace's page faults and fault-around replayed
//! as loads through mappings of their files, so that reclaim sees a mapped page's young
//! PTE as the kernel's `folio_check_references` (mm/vmscan.c, v6.18) does:
//!
//! ```text
//! if (referenced_ptes) {
//!     folio_set_referenced(folio);
//!     if (referenced_folio || referenced_ptes > 1) return FOLIOREF_ACTIVATE;
//!     if ((vm_flags & VM_EXEC) && folio_is_file_lru(folio)) return FOLIOREF_ACTIVATE;
//!     return FOLIOREF_KEEP;
//! }
//! if (referenced_folio && folio_is_file_lru(folio)) return FOLIOREF_RECLAIM_CLEAN;
//! ```

use std::fmt::Write as _;
use std::path::PathBuf;

use mmsim_core::Sim;
use mmsim_workloads::{Batch, EventStream, Scenario};

fn write_trace(name: &str, text: &str) -> PathBuf {
    static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join("trace_faults")
        .join(format!("{}-{n}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path
}

/// `mm_filemap_fault` of page 0 of inode 0xa (file 0 of the replay: a one-page file).
fn fault_a(t: &mut String) {
    writeln!(
        t,
        "  pg 7 [000] 1.000001: filemap:mm_filemap_fault: dev=8:1 ino=a ofs=0"
    )
    .unwrap();
}

/// `mm_filemap_get_pages` of page `page` of inode 0xb (file 1).
fn read_b(t: &mut String, page: u64) {
    let ofs = page << 12;
    writeln!(
        t,
        "  pg 7 [000] 1.000002: filemap:mm_filemap_get_pages: dev=8:1 ino=b ofs={ofs}-{}",
        ofs + 4095
    )
    .unwrap();
}

/// What the replay left: the state of page 0 of file 0 (mapcount, active; `None`: not
/// cached), pgactivate, pgscan of the group, and the trace report's mapped references.
struct Outcome {
    a0: Option<(u32, bool)>,
    pgactivate: u64,
    pgscan: u64,
    mapped_references: u64,
}

/// Replays `trace` in a group of 64 pages (256K) with `extra` workload fields (advice
/// normal: under `random` the mappings would have no recency, `vma_has_recency`, and
/// reclaim would ignore their young PTEs).
fn replay(trace: &str, extra: &str) -> Outcome {
    let path = write_trace("t.txt", trace);
    let toml = format!(
        "[machine]\nmemory = \"64M\"\n\n[[cgroup]]\npath = \"/t\"\nmax = \"256K\"\n\n\
         [[workload]]\nkind = \"trace\"\npath = {:?}\nformat = \"filemap\"\n\
         target = \"file\"\ntrace_keys = \"offset\"\ncgroup = \"/t\"\n\
         {extra}\n",
        path.display().to_string()
    );
    let s = Scenario::from_toml_str(&toml, "t.toml").unwrap_or_else(|e| panic!("{e}"));
    let mut sim = Sim::new(s.machine.clone()).unwrap();
    mmsim_workloads::cgroups::setup(&mut sim, &s).unwrap();
    let mut stream = EventStream::build(&s, &mut sim).unwrap();
    while let Some(batch) = stream.next_batch(sim.now()).unwrap() {
        if let Batch::Events(out) = batch {
            sim.run(out);
        }
    }
    let a0 = sim.file_folio_state(0, 0);
    let mapped_references = stream.trace_reports()[0].mapped_references;
    let v = sim.vmstat();
    Outcome {
        a0,
        pgactivate: v.pgactivate,
        pgscan: v.pgscan_file,
        mapped_references,
    }
}

/// A fault record maps its page: under `mapped` the faulted page of file 0 ends
/// cached and mapped once (mapcount 1), under `read` (the default) it is read and not
/// mapped; with two mappings (`trace_fault_mappings = 2`) the second fault record of
/// the page goes to the second mapping (the kernel reports a fault only for a page
/// the faulting process had not mapped): mapcount 2. No reclaim here.
#[test]
fn a_fault_record_maps_its_page() {
    let mut one = String::new();
    fault_a(&mut one);
    let mut two = one.clone();
    fault_a(&mut two);
    let read = replay(&one, "");
    assert_eq!(read.a0, Some((0, false)));
    assert_eq!(read.mapped_references, 0);
    let mapped = replay(&one, "trace_faults = \"mapped\"");
    assert_eq!(mapped.a0, Some((1, false)));
    assert_eq!(mapped.mapped_references, 1);
    let again = replay(&two, "trace_faults = \"mapped\"");
    assert_eq!(again.a0, Some((1, false)), "one mapping: mapped once");
    let two_maps = replay(&two, "trace_faults = \"mapped\"\ntrace_fault_mappings = 2");
    assert_eq!(two_maps.a0, Some((2, false)));
    assert_eq!(two_maps.mapped_references, 2);
    for r in [read, mapped, again, two_maps] {
        assert_eq!((r.pgactivate, r.pgscan), (0, 0));
    }
}

/// Reclaim of a faulted page, against 200 pages of file 1 read once each, in a
/// scattered order (page `(73 i + 1) mod 200`: no readahead beyond the first reads),
/// through a 64-page group. File 1's pages are read once (PG_referenced, no PTE):
/// each is reclaimed when scanned (`FOLIOREF_RECLAIM_CLEAN`), none activated.
///
/// * One fault record, `mapped`: the first scan finds the PTE young, sets
///   PG_referenced and keeps the page (`FOLIOREF_KEEP`); the next finds it old but
///   referenced and reclaims it: not cached at the end, nothing activated.
/// * A second fault record of the page (still mapped in the replay: a load that sets
///   the PTE young again) between the two scans: the second scan finds PTE young and
///   PG_referenced, and activates it (`FOLIOREF_ACTIVATE`): pgactivate 1, the page
///   on the active list at the end.
/// * One fault record, `mapped-exec`: a referenced folio of an executable file
///   mapping is activated on its first young scan.
/// * One fault record, two mappings: the same record maps it once; with two
///   records both PTEs are young at the first scan (`referenced_ptes` 2): activated
///   there.
#[test]
fn a_second_reference_to_a_mapped_page_activates_it_at_reclaim() {
    let stream = |second_at: Option<u64>| {
        let mut t = String::new();
        fault_a(&mut t);
        for i in 0..200 {
            if Some(i) == second_at {
                fault_a(&mut t);
            }
            read_b(&mut t, (73 * i + 1) % 200);
        }
        t
    };
    let once = replay(&stream(None), "trace_faults = \"mapped\"");
    assert_eq!(
        once.a0, None,
        "kept at the first scan, reclaimed at the second"
    );
    assert_eq!(once.pgactivate, 0);
    assert_eq!(once.pgscan, 177);
    let read_once = replay(&stream(None), "");
    assert_eq!(read_once.a0, None);
    assert_eq!(read_once.pgactivate, 0);
    let twice = replay(&stream(Some(100)), "trace_faults = \"mapped\"");
    assert_eq!(twice.a0, Some((1, true)), "activated at the second scan");
    assert_eq!(twice.pgactivate, 1);
    let exec = replay(&stream(None), "trace_faults = \"mapped-exec\"");
    assert_eq!(
        exec.a0,
        Some((1, true)),
        "VM_EXEC: activated at the first scan"
    );
    assert_eq!(exec.pgactivate, 1);
    let mut both = String::new();
    fault_a(&mut both);
    both.push_str(&stream(None));
    let two_ptes = replay(&both, "trace_faults = \"mapped\"\ntrace_fault_mappings = 2");
    assert_eq!(two_ptes.a0, Some((2, true)), "two young PTEs: activated");
    assert_eq!(two_ptes.pgactivate, 1);
}

/// `trace_faults` and `trace_fault_mappings` errors name the field.
#[test]
fn trace_faults_errors_name_the_field() {
    let bad = |extra: &str| {
        let toml = format!(
            "[[workload]]\nkind = \"trace\"\npath = \"t.txt\"\nformat = \"filemap\"\n{extra}\n"
        );
        Scenario::from_toml_str(&toml, "t.toml")
            .unwrap_err()
            .to_string()
    };
    let e = bad("target = \"file\"\ntrace_faults = \"mapped\"");
    assert!(
        e.contains("workload[0].trace_faults: \"mapped\" maps each traced file")
            && e.contains("trace_keys = \"dense\", target = \"file\""),
        "{e}"
    );
    let e = bad("target = \"mmap\"\ntrace_keys = \"offset\"\ntrace_faults = \"mapped-exec\"");
    assert!(e.contains("target = \"mmap\""), "{e}");
    let e = bad("target = \"file\"\ntrace_keys = \"offset\"\ntrace_faults = \"mmap\"");
    assert!(
        e.contains("unknown trace faults `mmap`; allowed: read, mapped, mapped-exec"),
        "{e}"
    );
    let e = bad(
        "target = \"file\"\ntrace_keys = \"offset\"\ntrace_faults = \"mapped\"\n\
         trace_fault_mappings = 65",
    );
    assert!(
        e.contains("workload[0].trace_fault_mappings: 65 is out of range [1, 64]"),
        "{e}"
    );
    let e = bad("target = \"file\"\ntrace_keys = \"offset\"\ntrace_fault_mappings = 2");
    assert!(
        e.contains("workload[0].trace_fault_mappings: needs trace_faults = \"mapped\""),
        "{e}"
    );
}

/// The new fields of `trace` and `pgbench` survive the scenario's TOML round trip and
/// are written only when set.
#[test]
fn new_fields_round_trip_and_stay_out_when_unset() {
    let toml = "[[workload]]\nkind = \"trace\"\npath = \"t.txt\"\nformat = \"filemap\"\n\
                target = \"file\"\ntrace_keys = \"offset\"\ntrace_faults = \"mapped-exec\"\n\
                trace_fault_mappings = 3\n\n[[workload]]\nkind = \"pgbench\"\nscale = 2\n\
                transactions = 5\nscript = \"select-only\"\nclients = 4\n\
                binary_size = \"28M\"\nfull_page_writes = true\nfsync = true\n";
    let s = Scenario::from_toml_str(toml, "t.toml").unwrap_or_else(|e| panic!("{e}"));
    let text = s.to_toml_string();
    for want in [
        "trace_faults = \"mapped-exec\"",
        "trace_fault_mappings = 3",
        "script = \"select-only\"",
        "clients = 4",
        "backend_memory = \"4m\"",
        "binary_size = \"28m\"",
        "full_page_writes = true",
        "fsync = true",
    ] {
        assert!(text.contains(want), "{want} in:\n{text}");
    }
    let again = Scenario::from_toml_str(&text, "t.toml").unwrap();
    assert_eq!(again.to_toml_string(), text);
    let plain = Scenario::from_toml_str(
        "[[workload]]\nkind = \"pgbench\"\nscale = 2\ntransactions = 5\n",
        "t.toml",
    )
    .unwrap()
    .to_toml_string();
    for absent in [
        "script",
        "clients",
        "backend_memory",
        "binary_size",
        "full_page_writes",
        "fsync",
    ] {
        assert!(!plain.contains(absent), "{absent} in:\n{plain}");
    }
}
