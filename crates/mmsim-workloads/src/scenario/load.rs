//! Loading a scenario (TOML text or file, with error positions) and checking it: the
//! machine, every workload's fields and ranges, published results and cgroups.

use std::path::{Path, PathBuf};

use mmsim_core::{ConfigError, MachineConfig};

use super::raw::{convert, KindError, ScenarioToml};
use super::{
    default_seed, Scenario, Target, TraceFaults, TraceKeys, WorkloadKind, WorkloadSpec, MAX_EVENTS,
    MAX_PAGES, MAX_THETA, MAX_TRACE_FAULT_MAPPINGS, OFFSET_MAX_TOTAL_PAGES,
};
use crate::error::WorkloadError;
use crate::models::{self, Bad, Model};
use crate::tomlpos;

/// The scenario name for a file name: its stem (`postgres-like.toml` → `postgres-like`).
fn stem(name: &str) -> String {
    Path::new(name)
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| name.to_string())
}

impl Scenario {
    /// A scenario with `machine` and `workloads`, seed 1, named `name`.
    pub fn new(name: &str, machine: MachineConfig, workloads: Vec<WorkloadSpec>) -> Scenario {
        Scenario {
            name: name.to_string(),
            source: name.to_string(),
            base_dir: None,
            seed: default_seed(),
            description: None,
            warmup_events: None,
            schedule: Default::default(),
            machine,
            workloads,
            cgroups: Vec::new(),
            cgroup_changes: Vec::new(),
            cgroup_cycles: Vec::new(),
            cgroup_moves: Vec::new(),
            published: Vec::new(),
            lru_gen_writes: Vec::new(),
            damon_module_writes: Vec::new(),
            sample: None,
        }
    }

    pub(super) fn from_parts(t: ScenarioToml) -> Result<Scenario, (usize, KindError)> {
        let workloads = t
            .workloads
            .into_iter()
            .enumerate()
            .map(|(i, w)| convert(w).map_err(|e| (i, e)))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Scenario {
            name: String::new(),
            source: String::new(),
            base_dir: None,
            seed: t.seed,
            description: t.description,
            machine: t.machine,
            warmup_events: t.warmup_events,
            schedule: t.schedule,
            workloads,
            cgroups: t.cgroups,
            cgroup_changes: t.cgroup_changes,
            cgroup_cycles: t.cgroup_cycles,
            cgroup_moves: t.cgroup_moves,
            published: t.published,
            lru_gen_writes: t.lru_gen_writes,
            damon_module_writes: t.damon_module_writes,
            sample: t.sample,
        })
    }

    /// Parses a scenario from TOML text without validating the values (see
    /// [`validate`](Scenario::validate)); `name` (e.g. the file name) is used in errors
    /// and, without its extension, as the scenario name.
    ///
    /// Errors give the line, column and field path, e.g.
    /// `s.toml: line 3, column 10: machine.memory: zero size `0M`; sizes must be positive`.
    pub fn parse_toml_str(text: &str, name: &str) -> Result<Scenario, WorkloadError> {
        let t: ScenarioToml = toml::from_str(text).map_err(|e| {
            let pos = e.span().map(|span| tomlpos::locate(text, span.start));
            let mut field = pos.as_ref().and_then(|p| p.field.clone());
            let mut message = e.message().trim_end().to_string();
            // `[machine.fs]` before any `[machine]` makes the machine table there, so
            // the machine's own missing `memory` is reported at the sub-table's header.
            if message == "missing field `memory`"
                && field.as_deref().is_some_and(|f| f.starts_with("machine."))
            {
                message = format!(
                    "missing field `memory` (the machine's memory size, e.g. `memory = \"4G\"` \
                     under `[machine]`; this `[{}]` table makes the `[machine]` table without it)",
                    field.as_deref().unwrap_or_default()
                );
                field = Some("machine".into());
            }
            // serde names the Rust type a table deserialises into; say what to write.
            for (ty, table) in [
                (
                    "struct DeviceConfig",
                    "a device table, e.g. `{ device = \"zram\", size = \"1G\" }` \
                     or a `[machine.swap]` section with `device` and `size`",
                ),
                (
                    "struct PolicyConfig",
                    "a policy table, e.g. `{ name = \"mglru\" }` or a `[machine.policy]` section",
                ),
                ("struct MachineConfig", "a `[machine]` table"),
            ] {
                if message.contains(ty) {
                    message =
                        message.replace(&format!("expected {ty}"), &format!("expected {table}"));
                }
            }
            WorkloadError::Parse {
                file: name.to_string(),
                line: pos.as_ref().map(|p| p.line),
                column: pos.as_ref().map(|p| p.column),
                field,
                message,
            }
        })?;
        let mut s = Scenario::from_parts(t).map_err(|(i, e)| {
            let table = format!("workload[{i}]");
            let pos = e
                .field
                .and_then(|f| tomlpos::find(text, &table, Some(f)))
                .or_else(|| tomlpos::find(text, &table, None));
            WorkloadError::Parse {
                file: name.to_string(),
                line: pos.as_ref().map(|p| p.line),
                column: pos.as_ref().map(|p| p.column),
                field: Some(match e.field {
                    Some(f) => format!("{table}.{f}"),
                    None => table,
                }),
                message: e.message,
            }
        })?;
        s.name = stem(name);
        s.source = name.to_string();
        Ok(s)
    }

    /// Parses and [validates](Scenario::validate) a scenario from TOML text.
    pub fn from_toml_str(text: &str, name: &str) -> Result<Scenario, WorkloadError> {
        let s = Scenario::parse_toml_str(text, name)?;
        s.validate()?;
        Ok(s)
    }

    /// Reads, parses and validates the scenario file at `path`; relative trace paths in
    /// it are relative to its directory.
    pub fn from_file(path: &Path) -> Result<Scenario, WorkloadError> {
        let mut s = Scenario::parse_file(path)?;
        s.validate()?;
        s.base_dir = path.parent().map(Path::to_path_buf);
        Ok(s)
    }

    /// Like [`from_file`](Scenario::from_file) without validating.
    pub fn parse_file(path: &Path) -> Result<Scenario, WorkloadError> {
        let name = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|source| WorkloadError::Io {
            file: name.clone(),
            source,
        })?;
        let mut s = Scenario::parse_toml_str(&text, &name)?;
        s.base_dir = path.parent().map(Path::to_path_buf);
        Ok(s)
    }

    /// The scenario as TOML text (what [`from_toml_str`](Scenario::from_toml_str) reads).
    pub fn to_toml_string(&self) -> String {
        toml::to_string(self).unwrap_or_else(|e| format!("# cannot render scenario: {e}\n"))
    }

    /// Where a trace path of this scenario points: as given if absolute, else relative to
    /// [`base_dir`](Scenario::base_dir).
    pub fn resolve_path(&self, path: &Path) -> PathBuf {
        match &self.base_dir {
            Some(dir) if path.is_relative() && !dir.as_os_str().is_empty() => dir.join(path),
            _ => path.to_path_buf(),
        }
    }

    /// Total events of all workloads, if known before running (not when a trace has no
    /// `limit`, nor with a `pgbench` workload, whose reads and write-backs depend on its
    /// buffer hits). Idle waits for a `start` are not events.
    pub fn expected_events(&self) -> Option<u64> {
        self.workloads
            .iter()
            .try_fold(0u64, |acc, w| Some(acc.saturating_add(w.kind.events()?)))
    }

    /// Checks the machine (as [`MachineConfig::validate`], fields prefixed `machine.`),
    /// every workload's values against their ranges, and the cgroups, their changes and
    /// cycles ([`crate::cgroups::validate`]); the error names the field, e.g.
    /// `workload[2].theta: 7 is out of range [0, 5]` or `cgroup[1].max: …`.
    pub fn validate(&self) -> Result<(), WorkloadError> {
        let invalid = |field: String, message: String| WorkloadError::Invalid {
            file: self.source.clone(),
            field,
            message,
        };
        self.machine
            .validate()
            .map_err(|e| invalid(machine_field(&e), e.message))?;
        if let Some(sample) = &self.sample {
            sample.validate().map_err(|(f, m)| invalid(f, m))?;
        }
        if let (Some(w), Some(total)) = (self.warmup_events, self.expected_events()) {
            if w >= total {
                return Err(invalid(
                    "warmup_events".into(),
                    format!("{w} leaves nothing to measure: the workloads issue {total} events"),
                ));
            }
        }
        for (i, w) in self.lru_gen_writes.iter().enumerate() {
            if self.machine.policy.name != mmsim_core::PolicyName::Mglru {
                return Err(invalid(
                    format!("lru_gen_write[{i}]"),
                    "the lru_gen files are written under the mglru policy only; set \
                     [machine.policy] name = \"mglru\""
                        .into(),
                ));
            }
            mmsim_core::reclaim::lru_gen::parse_lru_gen_file_write(w.path(), &w.write).map_err(
                |e| {
                    let f = if e.starts_with("unknown file") {
                        "path"
                    } else {
                        "write"
                    };
                    invalid(format!("lru_gen_write[{i}].{f}"), e)
                },
            )?;
        }
        for (i, w) in self.damon_module_writes.iter().enumerate() {
            let m = mmsim_core::DamonModule::parse(&w.module)
                .map_err(|e| invalid(format!("damon_module_write[{i}].module"), e))?;
            mmsim_core::damon::module_params::check_write(m, &w.param, &w.value)
                .map_err(|e| invalid(format!("damon_module_write[{i}].param"), e))?;
        }
        if self.workloads.is_empty() {
            return Err(invalid(
                "workload".into(),
                "the scenario has no workloads; add at least one [[workload]] table".into(),
            ));
        }
        // A map, not a scan: scenarios with tens of thousands of workloads load in
        // linear time.
        let mut names: std::collections::HashMap<String, usize> =
            std::collections::HashMap::with_capacity(self.workloads.len());
        for (i, w) in self.workloads.iter().enumerate() {
            let field = |f: &str| format!("workload[{i}].{f}");
            let name = w.display_name(i);
            if let Some(n) = &w.name {
                if n.trim().is_empty() || n.len() > 128 || n.chars().any(char::is_control) {
                    return Err(invalid(
                        field("name"),
                        format!("{n:?} is not a usable name (1 to 128 printable characters)"),
                    ));
                }
            }
            if let Some(j) = names.get(&name) {
                return Err(invalid(
                    field("name"),
                    format!("`{name}` is already the name of workload[{j}]; names must be unique"),
                ));
            }
            names.insert(name, i);
            if !(1..=1000).contains(&w.weight) {
                return Err(invalid(
                    field("weight"),
                    format!("{} is out of range [1, 1000]", w.weight),
                ));
            }
            if w.start > models::MAX_START_NS {
                return Err(invalid(
                    field("start"),
                    format!(
                        "{} is out of range [0s, 1000000s]",
                        models::format_time(w.start)
                    ),
                ));
            }
            if let Some(t) = w.kind.model_target() {
                if w.target != t {
                    return Err(invalid(
                        field("target"),
                        format!(
                            "kind `{}` takes no target (it is `{t}` by construction), not `{}`",
                            w.kind.name(),
                            w.target
                        ),
                    ));
                }
                if w.write_ratio.is_some()
                    && !matches!(w.kind, WorkloadKind::Eater(_) | WorkloadKind::Tabs(_))
                {
                    return Err(invalid(
                        field("write_ratio"),
                        format!("does not apply to kind `{}`", w.kind.name()),
                    ));
                }
            }
            let bad = |b: Bad| invalid(field(b.field), b.message);
            if let Some(r) = w.write_ratio {
                if !(0.0..=1.0).contains(&r) {
                    return Err(invalid(
                        field("write_ratio"),
                        format!("{r} is out of range [0, 1]"),
                    ));
                }
                if w.target == Target::MmapExec && r > 0.0 {
                    return Err(invalid(
                        field("write_ratio"),
                        format!("{r}: an mmap-exec mapping (program text) is read-only; use 0"),
                    ));
                }
            }
            let check_pages = |pages: u64| {
                if (1..=MAX_PAGES).contains(&pages) {
                    Ok(())
                } else {
                    Err(invalid(
                        field("pages"),
                        format!("{pages} is out of range [1, {MAX_PAGES}] pages"),
                    ))
                }
            };
            let check_count = |name: &str, n: u64| {
                if (1..=MAX_EVENTS).contains(&n) {
                    Ok(())
                } else {
                    Err(invalid(
                        field(name),
                        format!("{n} is out of range [1, 2^40]"),
                    ))
                }
            };
            let check_fraction = |name: &str, v: f64, zero_ok: bool| {
                let ok = v.is_finite() && v <= 1.0 && (v > 0.0 || (zero_ok && v == 0.0));
                if ok {
                    Ok(())
                } else if zero_ok {
                    Err(invalid(field(name), format!("{v} is out of range [0, 1]")))
                } else {
                    Err(invalid(field(name), format!("{v} is out of range (0, 1]")))
                }
            };
            match w.thp_advice {
                Some(_) if w.target == Target::File => {
                    return Err(invalid(
                        field("thp_advice"),
                        "madvise needs a mapping: target = \"anon\", \"mmap\", \
                         \"mmap-private\" or \"mmap-exec\" (a `file` target is read and written through a \
                         descriptor)"
                            .into(),
                    ));
                }
                Some(_)
                    if matches!(
                        w.kind,
                        WorkloadKind::Trace {
                            keys: TraceKeys::Offset,
                            ..
                        }
                    ) =>
                {
                    return Err(invalid(
                        field("thp_advice"),
                        "not with trace_keys = \"offset\": the replay maps each traced \
                         file itself, and thp_advice does not reach those mappings"
                            .into(),
                    ));
                }
                Some(mmsim_core::VmaThpAdvice::None) => {
                    return Err(invalid(
                        field("thp_advice"),
                        "\"none\" is no madvise call: use \"hugepage\" or \"nohugepage\" \
                         (or leave thp_advice out)"
                            .into(),
                    ));
                }
                _ => {}
            }
            if let Some(o) = &w.open_offsets {
                let Some(n) = w.opens else {
                    return Err(invalid(
                        field("open_offsets"),
                        "the readers' start pages need opens = N (the readers)".into(),
                    ));
                };
                let pages = w.kind.pages();
                if o.starts(n, pages).is_none() {
                    let why = match o {
                        super::OpenOffsets::Named(s) => format!(
                            "unknown layout \"{s}\": use \"spread\" or a list of {n} \
                             start pages, one per open"
                        ),
                        super::OpenOffsets::Pages(v) if v.len() as u64 != n => {
                            format!("{} start pages for opens = {n}: give one per open", v.len())
                        }
                        super::OpenOffsets::Pages(_) => format!(
                            "a start page is beyond the file's {pages} pages (the last is {})",
                            pages.saturating_sub(1)
                        ),
                    };
                    return Err(invalid(field("open_offsets"), why));
                }
            }
            if let Some(n) = w.opens {
                if !(1..=super::MAX_OPENS).contains(&n) {
                    return Err(invalid(
                        field("opens"),
                        format!("{n} is out of range [1, {}]", super::MAX_OPENS),
                    ));
                }
                if w.target != Target::File || matches!(w.kind, WorkloadKind::Trace { .. }) {
                    return Err(invalid(
                        field("opens"),
                        "opens are descriptors read with read(): they need target = \"file\" \
                         and an access-pattern kind (not a trace replay)"
                            .into(),
                    ));
                }
            }
            match &w.kind {
                WorkloadKind::Uniform { pages, accesses } => {
                    check_pages(*pages)?;
                    check_count("accesses", *accesses)?;
                }
                WorkloadKind::Zipf {
                    pages,
                    theta,
                    accesses,
                    ..
                } => {
                    check_pages(*pages)?;
                    if !(theta.is_finite() && (0.0..=MAX_THETA).contains(theta)) {
                        return Err(invalid(
                            field("theta"),
                            format!("{theta} is out of range [0, {MAX_THETA}]"),
                        ));
                    }
                    check_count("accesses", *accesses)?;
                }
                WorkloadKind::Sequential { pages, passes: n }
                | WorkloadKind::Loop {
                    pages,
                    iterations: n,
                } => {
                    check_pages(*pages)?;
                    let what = if matches!(w.kind, WorkloadKind::Loop { .. }) {
                        "iterations"
                    } else {
                        "passes"
                    };
                    check_count(what, *n)?;
                    if pages.saturating_mul(*n) > MAX_EVENTS {
                        return Err(invalid(
                            field(what),
                            format!(
                                "pages × {what} = {} events is more than the 2^40 limit",
                                pages.saturating_mul(*n)
                            ),
                        ));
                    }
                }
                WorkloadKind::HotCold {
                    pages,
                    hot_fraction,
                    hot_probability,
                    accesses,
                } => {
                    check_pages(*pages)?;
                    check_fraction("hot_fraction", *hot_fraction, false)?;
                    check_fraction("hot_probability", *hot_probability, true)?;
                    check_count("accesses", *accesses)?;
                }
                WorkloadKind::Touch {
                    pages,
                    stride,
                    collapse,
                    passes,
                    unmap,
                    remap,
                    fork_writes,
                    touched,
                    skip_every,
                    skip_offset,
                    advise_after,
                    snapshots,
                } => {
                    check_pages(*pages)?;
                    if let Some(n) = fork_writes {
                        let excluded = [
                            ("unmap", *unmap),
                            ("remap", *remap),
                            ("collapse", *collapse),
                            ("skip_every", skip_every.is_some()),
                        ];
                        if let Some((other, _)) = excluded.iter().find(|e| e.1) {
                            return Err(invalid(
                                field("fork_writes"),
                                format!(
                                    "fork_writes and {other} exclude each other: fork_writes \
                                     ends each pass with a fork"
                                ),
                            ));
                        }
                        if w.target != Target::Anon {
                            return Err(invalid(
                                field("fork_writes"),
                                format!(
                                    "fork of a `{}` region is not modelled: fork_writes needs \
                                     target = \"anon\"",
                                    w.target
                                ),
                            ));
                        }
                        if *n > *pages {
                            return Err(invalid(
                                field("fork_writes"),
                                format!(
                                    "{n} pages is out of range [0, {pages}] (the region's \
                                     pages): the child writes the first `fork_writes` pages"
                                ),
                            ));
                        }
                    }
                    if *collapse && w.target != Target::Anon {
                        return Err(invalid(
                            field("collapse"),
                            format!(
                                "MADV_COLLAPSE of a `{}` region is file collapse, which is not \
                                 modelled: collapse needs target = \"anon\"",
                                w.target
                            ),
                        ));
                    }
                    if !(1..=(*pages).max(1)).contains(stride) {
                        return Err(invalid(
                            field("stride"),
                            format!("{stride} is out of range [1, {pages}] (the region's pages)"),
                        ));
                    }
                    check_count("passes", *passes)?;
                    let events = pages.div_ceil((*stride).max(1)).saturating_mul(*passes);
                    if events > MAX_EVENTS {
                        return Err(invalid(
                            field("passes"),
                            format!(
                                "pages / stride × passes = {events} events is more than the \
                                 2^40 limit"
                            ),
                        ));
                    }
                    if *unmap && w.target == Target::File {
                        return Err(invalid(
                            field("unmap"),
                            "unmap needs a mapping to unmap: target = \"anon\", \"mmap\", \
                             \"mmap-private\" or \"mmap-exec\" (a `file` target is read and written through a \
                             descriptor)"
                                .into(),
                        ));
                    }
                    if *unmap && *collapse {
                        return Err(invalid(
                            field("unmap"),
                            "unmap and collapse exclude each other: the collapse runs after \
                             the last pass, whose pages unmap has already zapped"
                                .into(),
                        ));
                    }
                    if *unmap && skip_every.is_some() {
                        return Err(invalid(
                            field("unmap"),
                            "unmap with skip_every is not supported: a pass that is \
                             unmapped touches every `stride`-th page"
                                .into(),
                        ));
                    }
                    if *remap {
                        let excluded = [
                            ("unmap", *unmap),
                            ("collapse", *collapse),
                            ("skip_every", skip_every.is_some()),
                        ];
                        if let Some((other, _)) = excluded.iter().find(|e| e.1) {
                            return Err(invalid(
                                field("remap"),
                                format!(
                                    "remap and {other} exclude each other: remap ends each \
                                     pass with a munmap and mmap of the whole region"
                                ),
                            ));
                        }
                        if w.target == Target::File {
                            return Err(invalid(
                                field("remap"),
                                "remap needs a mapping: target = \"anon\", \"mmap\", \
                                 \"mmap-private\" or \"mmap-exec\" (a `file` target is read \
                                 and written through a descriptor)"
                                    .into(),
                            ));
                        }
                    }
                    if let Some(t) = touched {
                        if *t == 0 && *remap {
                            // mmap1: passes of mmap and munmap only.
                        } else if !(1..=*pages).contains(t) {
                            return Err(invalid(
                                field("touched"),
                                format!(
                                    "{t} pages is out of range [1, {pages}] (the region's \
                                     pages): the touches cover the first `touched` pages \
                                     (0 only with remap)"
                                ),
                            ));
                        }
                    }
                    match skip_every {
                        Some(e) if !(2..=(*pages).max(2)).contains(e) => {
                            return Err(invalid(
                                field("skip_every"),
                                format!(
                                    "{e} is out of range [2, {pages}] (the region's pages): \
                                     one page in `skip_every` is never touched"
                                ),
                            ));
                        }
                        Some(_) if *stride != 1 => {
                            return Err(invalid(
                                field("skip_every"),
                                format!(
                                    "needs stride = 1 (it is {stride}): skip_every leaves one \
                                     page out of every `skip_every` consecutive pages"
                                ),
                            ));
                        }
                        Some(e) if skip_offset >= e => {
                            return Err(invalid(
                                field("skip_offset"),
                                format!(
                                    "{skip_offset} is out of range [0, {}] (skip_every − 1)",
                                    e - 1
                                ),
                            ));
                        }
                        None if *skip_offset != 0 => {
                            return Err(invalid(
                                field("skip_offset"),
                                "needs skip_every (the period the offset is in)".into(),
                            ));
                        }
                        _ => {}
                    }
                    match advise_after {
                        Some(_) if w.target != Target::Anon => {
                            return Err(invalid(
                                field("advise_after"),
                                format!(
                                    "MADV_HUGEPAGE/MADV_NOHUGEPAGE are modelled on anonymous \
                                     VMAs only, not on a `{}` region: advise_after needs \
                                     target = \"anon\"",
                                    w.target
                                ),
                            ));
                        }
                        Some(mmsim_core::VmaThpAdvice::None) => {
                            return Err(invalid(
                                field("advise_after"),
                                "\"none\" is no madvise call: use \"hugepage\" or \
                                 \"nohugepage\" (or leave advise_after out)"
                                    .into(),
                            ));
                        }
                        _ => {}
                    }
                    if snapshots.len() > 64 {
                        return Err(invalid(
                            field("snapshots"),
                            format!("{} times: at most 64", snapshots.len()),
                        ));
                    }
                    let mut prev = 0.0;
                    for (j, &t) in snapshots.iter().enumerate() {
                        if !(t.is_finite() && t > prev && t <= 3600.0) {
                            return Err(invalid(
                                format!("{}[{j}]", field("snapshots")),
                                format!(
                                    "{t} s: the times are seconds after the last touch, \
                                     increasing, in (0, 3600]{}",
                                    if j > 0 {
                                        format!(" (the one before is {prev})")
                                    } else {
                                        String::new()
                                    }
                                ),
                            ));
                        }
                        prev = t;
                    }
                }
                WorkloadKind::Trace {
                    path,
                    format,
                    limit,
                    pages,
                    keys,
                    requests,
                    read_calls,
                    faults,
                    fault_mappings,
                    ..
                } => {
                    if path.as_os_str().is_empty() {
                        return Err(invalid(field("path"), "is empty".into()));
                    }
                    if *read_calls
                        && !matches!(
                            format,
                            crate::TraceFormat::Auto
                                | crate::TraceFormat::Fixed(mmsim_trace::Format::Filemap)
                        )
                    {
                        return Err(invalid(
                            field("trace_read_calls"),
                            format!(
                                "joins the mm_filemap_get_pages events of one read, so it needs \
                                 format = \"filemap\" (here format = \"{format}\")"
                            ),
                        ));
                    }
                    if *faults != TraceFaults::Read
                        && (*keys != TraceKeys::Offset || w.target != Target::File)
                    {
                        return Err(invalid(
                            field("trace_faults"),
                            format!(
                                "\"{faults}\" maps each traced file next to the file the replay reads, \
                                 so it needs trace_keys = \"offset\" and target = \"file\" (here \
                                 trace_keys = \"{keys}\", target = \"{}\")",
                                w.target
                            ),
                        ));
                    }
                    if !(1..=MAX_TRACE_FAULT_MAPPINGS).contains(fault_mappings) {
                        return Err(invalid(
                            field("trace_fault_mappings"),
                            format!(
                                "{fault_mappings} is out of range [1, {MAX_TRACE_FAULT_MAPPINGS}] \
                                 (mappings of each traced file)"
                            ),
                        ));
                    }
                    if *fault_mappings != 1 && *faults == TraceFaults::Read {
                        return Err(invalid(
                            field("trace_fault_mappings"),
                            "needs trace_faults = \"mapped\" or \"mapped-exec\": with \
                             trace_faults = \"read\" nothing is mapped"
                                .into(),
                        ));
                    }
                    if *requests && (*keys != TraceKeys::Offset || w.target != Target::File) {
                        return Err(invalid(
                            field("trace_requests"),
                            format!(
                                "replays a request's pages as one read or write of a file, so it needs \
                                 trace_keys = \"offset\" and target = \"file\" (here trace_keys = \"{keys}\", \
                                 target = \"{}\")",
                                w.target
                            ),
                        ));
                    }
                    if let Some(l) = limit {
                        check_count("limit", *l)?;
                    }
                    match (pages, keys) {
                        (Some(p), TraceKeys::Offset)
                            if !(1..=OFFSET_MAX_TOTAL_PAGES).contains(p) =>
                        {
                            return Err(invalid(
                                field("pages"),
                                format!(
                                    "{p} is out of range [1, {OFFSET_MAX_TOTAL_PAGES}] pages \
                                     (the largest file of a trace_keys = \"offset\" replay)"
                                ),
                            ));
                        }
                        (Some(p), _) => check_pages(*p)?,
                        (None, _) => {}
                    }
                }
                kind => {
                    if let Some(checked) = with_model!(kind, m => Model::validate(m)) {
                        checked.map_err(bad)?;
                    }
                }
            }
        }
        for (i, p) in self.published.iter().enumerate() {
            p.validate()
                .map_err(|(f, m)| invalid(format!("published[{i}].{f}"), m))?;
        }
        crate::cgroups::validate(self)
    }
}

/// The scenario path of a machine configuration field (the core already
/// names fields by their `machine.` path; anything else is prefixed).
fn machine_field(e: &ConfigError) -> String {
    if e.field.starts_with("machine.") {
        e.field.clone()
    } else {
        format!("machine.{}", e.field)
    }
}
