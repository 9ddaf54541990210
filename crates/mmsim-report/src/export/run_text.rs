//! The human-readable result of one run, as `mmsim run` prints it: the machine,
//! the workloads, the results, the reclaim profiles, the lru_gen view, PSI, the memory
//! cgroups, `/proc/vmstat` and what each trace replay read.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::io;

use mmsim_core::memcg::MemcgReport;
use mmsim_core::{DeviceConfig, DeviceKind, PolicyName};
use mmsim_workloads::{Scenario, ScenarioResult};

fn device(d: &DeviceConfig, with_size: bool) -> String {
    if d.device == DeviceKind::None {
        return "none".into();
    }
    if d.device == DeviceKind::Fs {
        let size = d
            .size
            .filter(|_| with_size)
            .map_or(String::new(), |s| format!(" {s}"));
        return format!("fs{size} (a partition on the filesystem's disk, sharing its queue)");
    }
    let (r, w, per_page) = d.timing();
    let name = format!("{:?}", d.device).to_lowercase();
    let size = match (with_size, d.size) {
        (true, Some(s)) => format!(" {s}"),
        _ => String::new(),
    };
    let mbps = 4096.0 / per_page.max(1) as f64 * 1e3;
    format!(
        "{name}{size} (read {} µs, write {} µs, {:.0} MB/s)",
        r as f64 / 1e3,
        w as f64 / 1e3,
        mbps
    )
}

/// Rows under a header: the first column left-aligned, the others right-aligned, two
/// spaces apart, indented by two.
fn grid(t: &mut String, header: &[&str], rows: &[Vec<String>]) {
    let widths: Vec<usize> = (0..header.len())
        .map(|i| {
            rows.iter()
                .map(|r| r[i].chars().count())
                .chain([header[i].len()])
                .max()
                .unwrap_or(0)
        })
        .collect();
    let mut line = |cells: &[&str]| {
        let mut l = String::from(" ");
        for (i, (c, w)) in cells.iter().zip(&widths).enumerate() {
            if i == 0 {
                let _ = write!(l, " {c:<w$}");
            } else {
                let _ = write!(l, "  {c:>w$}");
            }
        }
        let _ = writeln!(t, "{}", l.trim_end());
    };
    line(header);
    for r in rows {
        let cells: Vec<&str> = r.iter().map(String::as_str).collect();
        line(&cells);
    }
}

/// A column of a per-group table: its header and the cell of a group's report.
type GroupColumn = (&'static str, fn(&MemcgReport) -> String);

/// A limit's cell: `max` for none.
fn limit(v: Option<u64>) -> String {
    v.map_or("max".to_string(), |v| v.to_string())
}

/// `memory.current` and the limits (pages).
const USAGE_COLUMNS: &[GroupColumn] = &[
    ("current", |m| m.current.to_string()),
    ("anon", |m| m.anon.to_string()),
    ("file", |m| m.file.to_string()),
    ("swap", |m| m.swap_current.to_string()),
    ("max", |m| limit(m.max)),
    ("high", |m| limit(m.high)),
    ("low", |m| m.low.to_string()),
    ("min", |m| m.min.to_string()),
    ("swap.max", |m| limit(m.swap_max_limit)),
    ("soft_limit", |m| limit(m.soft_limit)),
];

/// `memory.events` (and `memory.swap.events`), with the time throttled over
/// `memory.high`.
const EVENTS_COLUMNS: &[GroupColumn] = &[
    ("max", |m| m.events_max.to_string()),
    ("high", |m| m.events.high.to_string()),
    ("low", |m| m.events.low.to_string()),
    ("oom", |m| m.events.oom.to_string()),
    ("oom_kill", |m| m.events.oom_kill.to_string()),
    ("swap_high", |m| m.events.swap_high.to_string()),
    ("swap_max", |m| m.events.swap_max.to_string()),
    ("swap_fail", |m| m.events.swap_fail.to_string()),
    ("throttled_s", |m| {
        format!("{:.3}", m.events.high_throttle_ns as f64 / 1e9)
    }),
];

/// `memory.stat`'s reclaim, refault and fault counters.
const STAT_COLUMNS: &[GroupColumn] = &[
    ("pgscan", |m| m.pgscan.to_string()),
    ("pgsteal", |m| m.pgsteal.to_string()),
    ("refault_anon", |m| {
        m.events.workingset_refault_anon.to_string()
    }),
    ("refault_file", |m| {
        m.events.workingset_refault_file.to_string()
    }),
    ("pgfault", |m| m.events.pgfault.to_string()),
    ("pgmajfault", |m| m.events.pgmajfault.to_string()),
];

/// One row per group under `title`: its path, then a cell per column.
fn group_grid(
    t: &mut String,
    title: &str,
    columns: &[GroupColumn],
    groups: &BTreeMap<String, MemcgReport>,
) {
    let header: Vec<&str> = std::iter::once(title)
        .chain(columns.iter().map(|c| c.0))
        .collect();
    let rows: Vec<Vec<String>> = groups
        .iter()
        .map(|(path, m)| {
            std::iter::once(path.clone())
                .chain(columns.iter().map(|c| (c.1)(m)))
                .collect()
        })
        .collect();
    grid(t, &header, &rows);
}

/// The per-group tables (`memory.current` and the limits, `memory.events`, `memory.stat`
/// counters), one row per group, hierarchical as cgroup v2 reports them.
pub fn cgroups_table(groups: &BTreeMap<String, MemcgReport>) -> String {
    let mut t = String::new();
    let _ = writeln!(
        t,
        "memory cgroups (pages; a group counts its descendants too)"
    );
    group_grid(&mut t, "cgroup", USAGE_COLUMNS, groups);
    t.push('\n');
    group_grid(&mut t, "memory.events", EVENTS_COLUMNS, groups);
    t.push('\n');
    group_grid(&mut t, "memory.stat", STAT_COLUMNS, groups);
    if groups.values().any(|m| m.kmem.is_some()) {
        // machine.kmem_accounting: the kernel memory lines of memory.stat.
        t.push('\n');
        let kib = |b: u64| format!("{:.1}", b as f64 / 1024.0);
        let rows: Vec<Vec<String>> = groups
            .iter()
            .filter_map(|(path, m)| m.kmem.as_ref().map(|k| (path, k)))
            .map(|(path, k)| {
                vec![
                    path.clone(),
                    kib(k.kernel),
                    kib(k.kernel_stack),
                    kib(k.pagetables),
                    kib(k.slab_reclaimable),
                    kib(k.slab_unreclaimable),
                    k.workingset_nodereclaim.to_string(),
                    k.xa_nodes.to_string(),
                    k.shadow_nodes.to_string(),
                    k.kmem_usage_in_bytes.map_or("-".into(), kib),
                ]
            })
            .collect();
        grid(
            &mut t,
            &[
                "kernel memory (KiB)",
                "kernel",
                "kernel_stack",
                "pagetables",
                "slab_reclaimable",
                "slab_unreclaimable",
                "workingset_nodereclaim",
                "xa_nodes",
                "shadow_nodes",
                "kmem.usage (v1)",
            ],
            &rows,
        );
    }
    t
}

/// The `cgroups` line's parenthesis: the machine's hierarchy, the groups whose knobs
/// are of the other version (a `version` of their own or their parent's), and the
/// soft-limit design when a group has a soft limit, e.g. `cgroup v2; v1 knobs: /v1;
/// soft limits reclaimed by the tree design`.
fn cgroup_versions(s: &Scenario) -> String {
    let m = &s.machine;
    let machine = match m.cgroup_version {
        mmsim_core::config::CgroupVersion::V1 => "v1",
        mmsim_core::config::CgroupVersion::V2 => "v2",
    };
    let mut text = format!("cgroup {machine}");
    // Parents come before their children, so one pass inherits versions.
    let mut version: BTreeMap<&str, Option<&str>> = BTreeMap::new();
    let mut other = Vec::new();
    for c in &s.cgroups {
        let parent = match c.path.rsplit_once('/') {
            Some((p, _)) if !p.is_empty() => p,
            _ => "/",
        };
        let v = c
            .version
            .map(|v| v.name())
            .or(version.get(parent).copied().flatten());
        version.insert(c.path.as_str(), v);
        if v.is_some_and(|v| v != machine) && c.path != "/" {
            other.push(c.path.as_str());
        }
    }
    if !other.is_empty() {
        let knobs = if machine == "v1" { "v2" } else { "v1" };
        text.push_str(&format!("; {knobs} knobs: {}", other.join(", ")));
    }
    if s.cgroups.iter().any(|c| c.soft_limit.is_some()) {
        // The design's name as a scenario file spells it.
        let design = serde_json::to_value(m.soft_limit_reclaim)
            .ok()
            .and_then(|v| v.as_str().map(str::to_string))
            .unwrap_or_default();
        text.push_str(&format!("; soft limits reclaimed by the {design} design"));
    }
    text
}

/// The report of run `r` of scenario `s`: machine header, `notes` (as `note` lines),
/// workloads, results, reclaim profiles, lru_gen, PSI, memory cgroups (when there are
/// groups besides `/`), `/proc/vmstat` (every counter with `all_counters`, else the
/// non-zero ones), trace statistics.
pub fn run_report(
    s: &Scenario,
    r: &ScenarioResult,
    notes: &[String],
    all_counters: bool,
) -> String {
    let m = &s.machine;
    let rr = &r.result;
    let mut t = String::new();
    // `write!` to a String cannot fail.
    let mut line = |label: &str, value: String| {
        let _ = writeln!(t, "{label:<16}{value}");
    };

    line("scenario", r.scenario.clone());
    if let Some(d) = &r.description {
        line("", d.clone());
    }
    if r.partial {
        let of = s
            .expected_events()
            .map_or(String::new(), |t| format!(" of {t}"));
        line(
            "PARTIAL",
            format!(
                "interrupted by Ctrl-C after {}{of} events: the counters cover only these",
                r.events
            ),
        );
        if r.warmup_events == 0 && s.warmup_events.is_some_and(|w| w > 0) {
            line(
                "",
                "still in the warmup: the counters were never zeroed and include it".into(),
            );
        }
    }
    line("seed", r.seed.to_string());
    if r.warmup_events > 0 {
        line(
            "measured",
            format!(
                "after {} warmup events (counters zeroed then)",
                r.warmup_events
            ),
        );
    }
    let policy = match m.policy.name {
        PolicyName::Cost => format!("cost ({:?} weighting)", m.policy.cost_variant)
            .replace("V5_8", "v5.8")
            .replace("V6_2", "v6.2"),
        PolicyName::Mglru => format!(
            "mglru ({}, lru_gen/enabled {:#06x}, min_ttl_ms {})",
            m.policy.mglru_version.name(),
            m.policy.lru_gen_enabled,
            m.policy.min_ttl_ms
        ),
        p => p.name().to_string(),
    };
    line("policy", policy);
    if m.policy.memcg_stats_flush == mmsim_core::MemcgStatsFlush::Ratelimited {
        line(
            "memcg stats",
            format!(
                "ratelimited: reclaim reads the flush of every {} ms (6.12+)",
                m.policy.memcg_stats_flush_ms
            ),
        );
        if m.policy.memcg_stats_read_ms > 0 {
            line(
                "memcg stats",
                format!(
                    "a memory.stat reader every {} ms flushes each top group past the update threshold{}",
                    m.policy.memcg_stats_read_ms,
                    match m.policy.memcg_stats_cpus {
                        0 => String::new(),
                        n => format!(" of {n} CPUs"),
                    }
                ),
            );
        }
    }
    let [min, low, high] = rr.watermarks;
    line(
        "memory",
        format!(
            "{} ({} pages); watermarks min {min}, low {low}, high {high} pages",
            m.memory,
            m.memory.pages()
        ),
    );
    line("swap", device(&m.swap, true));
    line("fs", device(&m.fs, false));
    line("swappiness", m.swappiness.to_string());
    if m.cpus > 1 {
        line(
            "cpus",
            format!(
                "{} (the workload's tasks share them; lru_lock contention modelled)",
                m.cpus
            ),
        );
    }
    let top = s
        .cgroups
        .iter()
        .position(|c| c.path == "/" && c.max.is_some());
    line(
        "memcg max",
        match (m.memcg_max, top) {
            (Some(max), _) => format!("{max} ({} pages)", max.pages()),
            (None, Some(i)) => format!(
                "{} (cgroup[{i}], the top group)",
                s.cgroups[i].max.map(|v| v.to_string()).unwrap_or_default()
            ),
            (None, None) => "none".into(),
        },
    );
    if s.cgroups.iter().any(|c| c.path != "/") {
        let paths: Vec<&str> = s.cgroups.iter().map(|c| c.path.as_str()).collect();
        line(
            "cgroups",
            format!("{} ({})", paths.join(", "), cgroup_versions(s)),
        );
    }
    if !s.cgroup_changes.is_empty() || !s.cgroup_cycles.is_empty() || !s.cgroup_moves.is_empty() {
        line(
            "cgroup writes",
            format!(
                "{} change(s), {} cycle(s) of knobs over time, {} move(s) of workloads",
                s.cgroup_changes.len(),
                s.cgroup_cycles.len(),
                s.cgroup_moves.len()
            ),
        );
    }
    if !s.damon_module_writes.is_empty() {
        line(
            "damon writes",
            format!(
                "{} write(s) to DAMON module parameters over time",
                s.damon_module_writes.len()
            ),
        );
    }
    for note in notes {
        line("note", note.clone());
    }
    if let Some(q) = &rr.shadow_quantised {
        line(
            "note",
            format!(
                "refault distances quantised to {} pages: shadow entries hold {} bits of \
                 memcg id and {} of eviction time, so bucket_order = {} (a 64-bit kernel is \
                 exact here)",
                1u64 << q.bucket_order,
                q.memcg_id_bits,
                q.eviction_bits,
                q.bucket_order
            ),
        );
    }
    for warning in &r.warnings {
        line("WARNING", warning.clone());
    }
    let _ = writeln!(t, "\nworkloads");
    let wname = r.workloads.iter().map(|w| w.name.len()).max().unwrap_or(0);
    let in_groups = s.workloads.iter().any(|w| w.cgroup_path() != "/");
    for (i, w) in r.workloads.iter().enumerate() {
        let group = match s.workloads.get(i) {
            Some(spec) if in_groups => format!("  in {}", spec.cgroup_path()),
            _ => String::new(),
        };
        let done = match w.end_ns {
            Some(ns) if r.workloads.len() > 1 => format!("  done at {:.3} s", ns as f64 / 1e9),
            _ => String::new(),
        };
        let _ = writeln!(
            t,
            "  {:<wname$}  phase {:<3} {:<10} {:<9} {:>10} pages {:>12} events{done}{group}",
            w.name, w.phase, w.kind, w.target, w.pages, w.events
        );
    }

    let a = &rr.access;
    let _ = writeln!(t, "\nresults");
    let mut line = |label: &str, value: String| {
        let _ = writeln!(t, "  {label:<18}{value}");
    };
    line("accesses", a.accesses.to_string());
    line("hits", a.hits.to_string());
    line("misses", a.misses.to_string());
    line("miss ratio", format!("{:.6}", rr.miss_ratio));
    if a.out_of_range > 0 {
        line("out of range", a.out_of_range.to_string());
    }
    if a.bad_fd > 0 {
        line("closed fd (EBADF)", a.bad_fd.to_string());
    }
    if a.dropped_killed > 0 {
        line("dropped (killed)", a.dropped_killed.to_string());
    }
    line("runtime_s", format!("{:.6}", rr.runtime_s));
    line("throughput", format!("{:.1} accesses/s", rr.throughput));
    line("kswapd cpu_s", format!("{:.6}", rr.kswapd_cpu_s));
    if let Some(d) = &rr.damon {
        line(
            "kdamond cpu_s",
            format!(
                "{:.6} ({:.2} % of one CPU)",
                d.kdamond_cpu_s,
                if rr.runtime_s > 0.0 {
                    d.kdamond_cpu_s * 100.0 / rr.runtime_s
                } else {
                    0.0
                }
            ),
        );
    }
    line("reclaim stall_s", format!("{:.6}", rr.reclaim_stall_s));
    line("io wait_s", format!("{:.6}", rr.io_wait_s));
    if rr.cpus > 1 {
        line(
            "lru_lock",
            format!(
                "{:.6} s spinning (all CPUs); busiest lock held {:.2} % of the time",
                rr.lru_lock_wait_s, rr.lru_lock_busy_pct
            ),
        );
    }
    line(
        "memcg usage",
        match rr.memcg_max_pages {
            Some(max) => format!(
                "{} pages of {max} (max events {})",
                rr.memcg_usage_pages, rr.memcg_max_events
            ),
            None => format!("{} pages", rr.memcg_usage_pages),
        },
    );
    if let Some(f) = &rr.mmsim_memcg_flush {
        line(
            "memcg flushes",
            format!(
                "periodic {}, reclaim {}, ratelimited {} ({} skipped under the threshold), \
                 memory.stat reads {} ({} skipped) (mmsim's counts)",
                f.periodic, f.reclaim, f.ratelimited, f.ratelimited_skipped, f.read, f.read_skipped
            ),
        );
    }
    line("swap used", format!("{} pages", rr.swap_used_pages));
    line(
        "sim memory",
        format!(
            "{:.1} bytes/resident folio, {:.2} bytes/tracked page, {:.1} MiB heap{}",
            rr.sim_bytes_per_resident_folio,
            rr.sim_bytes_per_tracked_page,
            rr.sim_heap_bytes as f64 / (1 << 20) as f64,
            r.host_heap_peak_bytes.map_or(String::new(), |b| format!(
                " (process heap peak {:.1} MiB)",
                b as f64 / (1 << 20) as f64
            ))
        ),
    );

    profile_table(&mut t, "kswapd profile", &rr.kswapd_profile);
    profile_table(
        &mut t,
        "direct and memcg reclaim profile, the workload's tasks on all CPUs",
        &rr.direct_profile,
    );

    if let Some(d) = &rr.damon {
        damon_table(&mut t, d);
    }

    if let Some(lg) = &rr.lru_gen {
        t.push('\n');
        t.push_str(&lru_gen_table(lg));
    }

    let _ = writeln!(t, "\n/proc/pressure/memory");
    for (name, l) in [("some", &rr.psi.some), ("full", &rr.psi.full)] {
        let _ = writeln!(
            t,
            "  {name} avg10={:.2} avg60={:.2} avg300={:.2} total={}",
            l.avg10, l.avg60, l.avg300, l.total
        );
    }

    let _ = writeln!(
        t,
        "\n/proc/buddyinfo (free blocks per order 0..10; {} more free pages on the per-CPU list)",
        rr.pcp_pages
    );
    let mut line = String::from("  Node 0, zone   Normal");
    for n in rr.buddyinfo {
        let _ = write!(line, " {n:6}");
    }
    let _ = writeln!(t, "{line}");

    if !rr.mthp.is_empty() {
        mthp_table(&mut t, &rr.mthp, rr.anon_thp_pages);
    }
    if let Some(tlb) = &rr.tlb {
        tlb_lines(&mut t, tlb);
    }

    if rr.memcg.len() > 1 {
        t.push('\n');
        t.push_str(&cgroups_table(&rr.memcg));
    }

    let pairs = rr.vmstat.pairs();
    let shown: Vec<_> = pairs
        .iter()
        .filter(|(_, v)| all_counters || *v != 0)
        .collect();
    let width = shown.iter().map(|(n, _)| n.len()).max().unwrap_or(0);
    let _ = writeln!(
        t,
        "\n/proc/vmstat{}",
        if all_counters { "" } else { " (non-zero)" }
    );
    for (name, v) in shown {
        let _ = writeln!(t, "  {name:<width$} {v}");
    }

    for tr in &r.trace {
        let _ = writeln!(t, "\ntrace {}", tr.workload);
        let _ = writeln!(t, "  path              {}", tr.path);
        let _ = writeln!(
            t,
            "  format            {}{}, compression {}",
            tr.format,
            match &tr.detected_because {
                Some(why) => format!(" (detected: {why})"),
                None if tr.format_detected => " (detected)".to_string(),
                None => String::new(),
            },
            tr.compression
        );
        let rd = &tr.read;
        let _ = writeln!(t, "  records           {}", rd.records);
        let _ = writeln!(
            t,
            "  references        {} ({} writes{})",
            rd.references,
            rd.writes,
            if rd.syncs > 0 {
                format!(
                    ", {} syncs: the program's fsync or sync_file_range",
                    rd.syncs
                )
            } else {
                String::new()
            }
        );
        let _ = writeln!(t, "  distinct keys     {}", tr.distinct);
        if tr.keys == "offset" {
            let _ = writeln!(
                t,
                "  keys              offset: page offsets in {} file(s) of {} pages; {} \
                 references beyond the per-file limit skipped",
                tr.files, tr.layout_pages, tr.skipped_beyond_limit
            );
        } else {
            let _ = writeln!(
                t,
                "  keys              dense (numbered by first appearance)"
            );
        }
        let skipped: Vec<String> = rd
            .skipped()
            .into_iter()
            .map(|(what, n)| format!("{n} {what}"))
            .collect();
        let _ = writeln!(
            t,
            "  skipped           {}",
            if skipped.is_empty() {
                "nothing".to_string()
            } else {
                skipped.join(", ")
            }
        );
        if tr.limited {
            let _ = writeln!(t, "  stopped at --limit before the end of the trace");
        }
    }
    t
}

/// The data TLB (`[machine.tlb]`; printed only when it is on): loads, STLB
/// hits, walks by entry size, their time, and the CONFIG_DEBUG_TLBFLUSH flush counters.
fn tlb_lines(t: &mut String, r: &mmsim_core::TlbReport) {
    let pct = |n: u64| {
        if r.dtlb_loads == 0 {
            0.0
        } else {
            n as f64 * 100.0 / r.dtlb_loads as f64
        }
    };
    let _ = writeln!(
        t,
        "\ndata TLB: {} loads, {} L1 misses ({:.2}%), {} STLB hits, {} walks ({:.2}%; \
         4K {}, 16K {}, 64K {}, 2M {}), {:.4} s",
        r.dtlb_loads,
        r.l1_dtlb_misses,
        pct(r.l1_dtlb_misses),
        r.stlb_hits,
        r.dtlb_load_misses,
        pct(r.dtlb_load_misses),
        r.walks_4k,
        r.walks_16k,
        r.walks_64k,
        r.walks_2m,
        r.tlb_miss_s
    );
    let _ = writeln!(
        t,
        "  nr_tlb_local_flush_all {}, nr_tlb_local_flush_one {}, nr_tlb_remote_flush {}, \
         nr_tlb_remote_flush_received {}",
        r.nr_tlb_local_flush_all,
        r.nr_tlb_local_flush_one,
        r.nr_tlb_remote_flush,
        r.nr_tlb_remote_flush_received
    );
}

/// Multi-size THP (printed only when `[machine.thp]` allows some size, so runs
/// without it print nothing new): each size's `hugepages-<size>kB/stats` counters,
/// one row per size that allocated, fell back, swapped out or split, and the pages
/// held in large anonymous folios at the end (`AnonHugePages` for every size).
fn mthp_table(t: &mut String, sizes: &[mmsim_core::MthpSizeReport], anon_thp_pages: u64) {
    let _ = writeln!(
        t,
        "\n/sys/kernel/mm/transparent_hugepage/hugepages-<size>/stats ({anon_thp_pages} pages \
         in large anon folios at the end)"
    );
    let rows: Vec<Vec<String>> = sizes
        .iter()
        .filter(|m| m.stats != mmsim_core::MthpStats::default())
        .map(|m| {
            let s = &m.stats;
            vec![
                m.size.clone(),
                s.anon_fault_alloc.to_string(),
                s.anon_fault_fallback.to_string(),
                s.anon_fault_fallback_charge.to_string(),
                s.swpout.to_string(),
                s.swpout_fallback.to_string(),
                s.split.to_string(),
                s.nr_anon.to_string(),
            ]
        })
        .collect();
    if rows.is_empty() {
        let _ = writeln!(t, "  no large folio allocated, tried or split");
        return;
    }
    grid(
        t,
        &[
            "size",
            "anon_fault_alloc",
            "anon_fault_fallback",
            "anon_fault_fallback_charge",
            "swpout",
            "swpout_fallback",
            "split",
            "nr_anon",
        ],
        &rows,
    );
    // The counters of partial unmap and of 6.13's swap-in, one line per size
    // that has any (absent otherwise, so older runs print as before).
    for m in sizes {
        let s = &m.stats;
        let more = [
            ("split_deferred", s.split_deferred),
            ("nr_anon_partially_mapped", s.nr_anon_partially_mapped),
            ("swpin", s.swpin),
            ("swpin_fallback", s.swpin_fallback),
            ("swpin_fallback_charge", s.swpin_fallback_charge),
        ];
        if more.iter().all(|(_, v)| *v == 0) {
            continue;
        }
        let line: Vec<String> = more.iter().map(|(k, v)| format!("{k} {v}")).collect();
        let _ = writeln!(t, "  {:<6} {}", m.size, line.join(", "));
    }
}

/// The final lru_gen view, as /sys/kernel/debug/lru_gen_full prints it: per group
/// and node, each generation's seq, age in ms and anon/file pages, then the tiers'
/// refaulted/evicted/protected counters; and the walker's counters.
pub fn lru_gen_table(lg: &mmsim_core::reclaim::lru_gen::LruGenReport) -> String {
    let mut t = String::new();
    let _ = writeln!(
        t,
        "lru_gen ({}, enabled {:#06x}, min_ttl_ms {})",
        lg.version, lg.enabled, lg.min_ttl_ms
    );
    for g in &lg.memcgs {
        let _ = writeln!(t, "memcg {:>5} {}", g.memcg_id, g.path);
        let _ = writeln!(t, " node {:>5}", g.node);
        for gen in &g.gens {
            let mark = |ty: usize| if gen.seq < g.min_seq[ty] { "x" } else { " " };
            let _ = writeln!(
                t,
                " {:>10} {:>10} {:>10}{} {:>10}{}",
                gen.seq,
                gen.age_ms,
                gen.anon,
                mark(0),
                gen.file,
                mark(1)
            );
        }
        for (ty, name) in [(0, "anon"), (1, "file")] {
            let tr = &g.tiers[ty];
            let cells: Vec<String> = (0..4)
                .map(|i| {
                    format!(
                        "{}r {}e {}p {}R {}T",
                        tr.refaulted[i],
                        tr.evicted[i],
                        tr.protected[i],
                        tr.avg_refaulted[i],
                        tr.avg_total[i]
                    )
                })
                .collect();
            let _ = writeln!(t, "   {name} tiers: {}", cells.join(" | "));
        }
    }
    for w in &lg.writes {
        let _ = writeln!(t, "at {:.3} s: {} → {}", w.t, w.command, w.result);
    }
    let s = &lg.stats;
    let _ = writeln!(
        t,
        "aging {} (walks {}: {}t {}y, tables skipped {} added {}), look-around {} ({} young), promoted {}, tier-protected {}, min_ttl OOM kills {}",
        s.aging,
        s.walks,
        s.leaf_total,
        s.leaf_young,
        s.tables_skipped,
        s.tables_added,
        s.look_around,
        s.look_around_young,
        s.promoted,
        s.tier_protected,
        s.min_ttl_oom
    );
    t
}

/// Where a reclaimer's simulated CPU went, by kernel function (nothing if it did not run).
fn profile_table(t: &mut String, title: &str, p: &mmsim_core::ReclaimProfile) {
    if p.total_ns() == 0 {
        return;
    }
    let total = p.total_ns() as f64;
    let pct = |ns: u64| 100.0 * ns as f64 / total;
    let _ = writeln!(t, "\n{title} (simulated CPU by kernel function)");
    for (name, ns) in [
        ("page_vma_mapped_walk (rmap)", p.rmap_ns),
        ("zram compression", p.compress_ns),
        ("LRU isolate/sort/putback", p.lru_ns),
        ("page-table walk + look-around", p.pt_walk_ns),
        ("freeing", p.free_ns),
        ("pageout submission", p.pageout_ns),
        ("lru_lock spinning", p.lock_ns),
    ] {
        if ns > 0 {
            let _ = writeln!(t, "  {name:<31}{:>6.2}%  {:.6} s", pct(ns), ns as f64 / 1e9);
        }
    }
    let _ = writeln!(
        t,
        "  {} rmap walks, {} PTEs walked",
        p.rmap_walks, p.ptes_walked
    );
}

/// Writes [`run_report`], what `mmsim run` prints after any introduction.
pub fn write_run_report(
    w: &mut dyn io::Write,
    s: &Scenario,
    r: &ScenarioResult,
    notes: &[String],
    all_counters: bool,
) -> io::Result<()> {
    w.write_all(run_report(s, r, notes, all_counters).as_bytes())
}

/// DAMON's contexts and their schemes' stats (sysfs `schemes/<N>/stats/`),
/// and the modules' stats parameters.
fn damon_table(t: &mut String, d: &mmsim_core::DamonReport) {
    let _ = writeln!(t, "\ndamon");
    for c in &d.contexts {
        let _ = writeln!(
            t,
            "  {} ({}): {} samples, {} aggregations, {} regions, intervals {} us / {} us, cpu {:.6} s",
            c.name,
            c.ops,
            c.nr_samples,
            c.nr_aggregations,
            c.nr_regions,
            c.sample_us,
            c.aggr_us,
            c.kdamond_cpu_s
        );
        if c.schemes.is_empty() {
            continue;
        }
        let _ = writeln!(
            t,
            "    {:<12} {:>10} {:>14} {:>10} {:>14} {:>14} {:>10}",
            "action",
            "nr_tried",
            "sz_tried",
            "nr_applied",
            "sz_applied",
            "sz_filter_pass",
            "qt_exceeds"
        );
        for s in &c.schemes {
            let st = &s.stat;
            let _ = writeln!(
                t,
                "    {:<12} {:>10} {:>14} {:>10} {:>14} {:>14} {:>10}",
                s.action,
                st.nr_tried,
                st.sz_tried,
                st.nr_applied,
                st.sz_applied,
                st.sz_ops_filter_passed,
                st.qt_exceeds
            );
        }
    }
    for (k, v) in &d.module_stats {
        let _ = writeln!(t, "  {k:<34}{v}");
    }
    if !d.module_writes.is_empty() {
        let _ = writeln!(t, "  module parameter writes");
        for w in &d.module_writes {
            let what = if w.param == "commit" {
                format!("{} (commit_inputs)", w.module)
            } else {
                format!("{}.{}={}", w.module, w.param, w.value.trim_end())
            };
            let _ = writeln!(t, "    {:>10.3} s  {what:<44} {}", w.t_s, w.result);
        }
    }
}
