//! The cgroup plan of a scenario: its `[[cgroup]]`, `[[cgroup_change]]`,
//! `[[cgroup_cycle]]` and `[[cgroup_move]]` tables checked (paths, versions, knob
//! ranges, overlapping writes, protection) and expanded into groups and timed knob
//! writes, which [`setup`] applies to a [`Sim`] and [`schedule`] lists.

use std::collections::HashMap;

use super::*;

/// Where a write comes from, for error messages.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Src {
    /// `cgroup[i].<knob>` (or `machine.memcg_max` for the top group, i = usize::MAX).
    Group(usize),
    /// `cgroup_change[i].<knob>`.
    Change(usize),
    /// `cgroup_cycle[i].values[j]`.
    Cycle(usize, usize),
    /// `cgroup_cycle[i].final`.
    Final(usize),
}

impl Src {
    fn field(self, knob: MemcgKnob) -> String {
        match self {
            Src::Group(usize::MAX) => "machine.memcg_max".into(),
            Src::Group(i) => format!("cgroup[{i}].{}", knob_name(knob)),
            Src::Change(i) => format!("cgroup_change[{i}].{}", knob_name(knob)),
            Src::Cycle(i, j) => format!("cgroup_cycle[{i}].values[{j}]"),
            Src::Final(i) => format!("cgroup_cycle[{i}].final"),
        }
    }
}

/// One group of the plan; index 0 is `/`.
#[derive(Clone, Debug)]
struct Group {
    path: String,
    /// Last path component (empty for `/`).
    name: String,
    parent: usize,
    /// Its effective version and the `cgroup[i]` that declared it.
    version: Option<(CgroupVersion, usize)>,
}

/// One knob write; `pages` is None while a percentage of a peak is not resolved.
#[derive(Clone, Copy, Debug)]
struct Write {
    /// None: at setup, before anything runs.
    at: Option<u64>,
    group: usize,
    knob: MemcgKnob,
    pages: Option<u64>,
    src: Src,
}

/// The groups and every write, validated.
#[derive(Debug)]
struct Plan {
    groups: Vec<Group>,
    /// Setup writes first, then the timed ones sorted by time (stable: changes in file
    /// order, then cycles in file order).
    writes: Vec<Write>,
}

fn time_range(ns: u64) -> String {
    format!(
        "{} is out of range [0s, {}]",
        format_time(ns),
        format_time(MAX_START_NS)
    )
}

/// The path's components, or what is wrong with it.
pub(super) fn components(path: &str) -> Result<Vec<&str>, String> {
    if path == "/" {
        return Ok(Vec::new());
    }
    let Some(rest) = path.strip_prefix('/') else {
        return Err(format!(
            "`{path}` does not start with `/`; write a path such as \"/a\" or \"/a/b\""
        ));
    };
    let parts: Vec<&str> = rest.split('/').collect();
    for p in &parts {
        if p.is_empty() {
            return Err(format!(
                "`{path}` has an empty name (a doubled or trailing `/`)"
            ));
        }
        if *p == "." || *p == ".." {
            return Err(format!("`{path}`: `{p}` is not a group name"));
        }
        if p.len() > MAX_NAME_LEN
            || !p
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'))
        {
            return Err(format!(
                "`{path}`: `{p}` is not a usable name (1 to {MAX_NAME_LEN} letters, digits, \
                 `.`, `_` or `-`)"
            ));
        }
    }
    Ok(parts)
}

/// Validation context: the scenario and the error constructor.
struct Ctx<'a> {
    s: &'a Scenario,
    groups: Vec<Group>,
    /// Index into `groups` by path, so that a plan of 65,535 groups is checked in
    /// linear time (parent and workload lookups).
    by_path: HashMap<String, usize>,
    /// The peaks (pages) by path, once the calibration ran; None while validating.
    peaks: Option<&'a BTreeMap<String, u64>>,
}

impl Ctx<'_> {
    fn invalid(&self, field: String, message: String) -> WorkloadError {
        WorkloadError::Invalid {
            file: self.s.source.clone(),
            field,
            message,
        }
    }

    fn group(&self, path: &str, field: String) -> Result<usize, WorkloadError> {
        if let Some(&g) = self.by_path.get(path) {
            return Ok(g);
        }
        let declared: Vec<&str> = self.groups.iter().map(|g| g.path.as_str()).collect();
        let why = match components(path) {
            Err(e) => e,
            Ok(_) => format!("no group `{path}`"),
        };
        Err(self.invalid(
            field,
            format!(
                "{why}; the groups are {} (declare others with [[cgroup]])",
                declared.join(", ")
            ),
        ))
    }

    /// Checks that group `g` has `knob`, `field` naming the write.
    fn check_knob(&self, g: usize, knob: MemcgKnob, field: &str) -> Result<(), WorkloadError> {
        if g == 0 {
            let why = match knob {
                MemcgKnob::High
                | MemcgKnob::Low
                | MemcgKnob::Min
                | MemcgKnob::SwapMax
                | MemcgKnob::SwapHigh => Some(format!(
                    "the top group `/` has no {} (nor does the kernel's root cgroup); set it \
                     on a group below `/`",
                    knob.file()
                )),
                MemcgKnob::Swappiness => Some(
                    "the top group's memory.swappiness is vm.swappiness: set \
                     machine.swappiness"
                        .to_string(),
                ),
                _ => None,
            };
            if let Some(why) = why {
                return Err(self.invalid(field.to_string(), why));
            }
        }
        if let Some((v, decl)) = self.groups[g].version {
            if !v.has(knob) {
                let has: Vec<&str> = KNOBS
                    .iter()
                    .filter(|&&k| v.has(k))
                    .map(|&k| knob_name(k))
                    .collect();
                return Err(self.invalid(
                    field.to_string(),
                    format!(
                        "{} is not a cgroup {} knob, and `{}` is {} (cgroup[{decl}].version); \
                         {} groups have {}",
                        knob.file(),
                        v.name(),
                        self.groups[g].path,
                        v.name(),
                        v.name(),
                        has.join(", ")
                    ),
                ));
            }
        }
        Ok(())
    }

    /// The value in pages (or 0..=200 for swappiness); None for a percentage of a peak
    /// not measured yet.
    fn resolve(
        &self,
        g: usize,
        knob: MemcgKnob,
        v: KnobValue,
        of: Option<Reference>,
        field: &str,
    ) -> Result<Option<u64>, WorkloadError> {
        let bad = |m: String| Err(self.invalid(field.to_string(), m));
        if knob == MemcgKnob::Swappiness {
            return match v {
                KnobValue::Number(n) if n <= 200 => Ok(Some(n)),
                KnobValue::Number(n) => bad(format!("{n} is out of range [0, 200]")),
                v => bad(format!(
                    "`{v}`: swappiness is a number in [0, 200], not a size"
                )),
            };
        }
        match v {
            KnobValue::Max => Ok(Some(u64::MAX)),
            KnobValue::Pages(p) => Ok(Some(p)),
            KnobValue::Number(0) => Ok(Some(0)),
            KnobValue::Number(n) => bad(format!(
                "{n} has no unit: write \"{n}p\" for pages or a size such as \"512M\" \
                 (or 0, or \"max\")"
            )),
            KnobValue::Percent(x) => {
                if !(0.0..=MAX_PERCENT).contains(&x) {
                    return bad(format!("{x}% is out of range [0%, {MAX_PERCENT}%]"));
                }
                let Some(of) = of else {
                    return bad(format!(
                        "{x}% of what? Give the table an `of`: a size measured before \
                         (of = \"1G\") or \"peak\" (the group's peak, from a calibration run)"
                    ));
                };
                let reference = match of {
                    Reference::Pages(p) => p,
                    Reference::Peak => match self.peaks {
                        None => return Ok(None),
                        Some(peaks) => match peaks.get(&self.groups[g].path) {
                            Some(&p) => p,
                            None => return Ok(None),
                        },
                    },
                };
                Ok(Some((reference as f64 * x / 100.0).floor() as u64))
            }
        }
    }

    /// `of` of a table: an error if no value is a percentage.
    fn check_of(
        &self,
        of: Option<Reference>,
        values: &[KnobValue],
        field: String,
    ) -> Result<Option<Reference>, WorkloadError> {
        match of {
            Some(r) if !values.iter().any(|v| matches!(v, KnobValue::Percent(_))) => Err(self
                .invalid(
                    field,
                    format!("`of = \"{r}\"` but no value of the table is a percentage"),
                )),
            Some(r) => Ok(Some(r)),
            None => Ok(None),
        }
    }
}

/// Checks the moves: a time in range, a workload of the scenario, a declared group,
/// and no workload moved twice at one time.
fn moves(cx: &Ctx) -> Result<(), WorkloadError> {
    let names: Vec<String> =
        cx.s.workloads
            .iter()
            .enumerate()
            .map(|(i, w)| w.display_name(i))
            .collect();
    for (i, m) in cx.s.cgroup_moves.iter().enumerate() {
        if m.at > MAX_START_NS {
            return Err(cx.invalid(format!("cgroup_move[{i}].at"), time_range(m.at)));
        }
        if !names.contains(&m.workload) {
            return Err(cx.invalid(
                format!("cgroup_move[{i}].workload"),
                format!(
                    "no workload `{}`; the workloads are {}",
                    m.workload,
                    names.join(", ")
                ),
            ));
        }
        cx.group(&m.to, format!("cgroup_move[{i}].to"))?;
        if let Some(j) = cx.s.cgroup_moves[..i]
            .iter()
            .position(|o| o.at == m.at && o.workload == m.workload)
        {
            return Err(cx.invalid(
                format!("cgroup_move[{i}]"),
                format!(
                    "moves `{}` at {} as cgroup_move[{j}] does; move a workload once at a time",
                    m.workload,
                    format_time(m.at)
                ),
            ));
        }
    }
    Ok(())
}

/// Schedules the moves of `s` in `sim`: at each move's time, every task of the workload
/// (`tasks[i]`: the task ids of workload `i`, as [`crate::EventStream::tasks`] gives
/// them) is written to the group's `cgroup.procs`. Moves due at the same time as knob
/// writes are made after them, in file order. `s` must be valid and its groups set up.
pub fn schedule_moves(
    sim: &mut Sim,
    s: &Scenario,
    tasks: &[std::ops::Range<mmsim_core::TaskId>],
) -> Result<(), WorkloadError> {
    for (i, m) in s.cgroup_moves.iter().enumerate() {
        let field = format!("cgroup_move[{i}]");
        let w = s
            .workloads
            .iter()
            .enumerate()
            .position(|(k, w)| w.display_name(k) == m.workload);
        let (Some(w), Some(g)) = (w, sim.memcg_by_path(&m.to)) else {
            return Err(WorkloadError::Invalid {
                file: s.source.clone(),
                field,
                message: "names a workload or group the scenario does not have".into(),
            });
        };
        for t in tasks[w].clone() {
            sim.schedule_memcg_knob(m.at, g, MemcgKnob::Procs, u64::from(t))
                .map_err(|source| WorkloadError::Setup {
                    what: field.clone(),
                    source,
                })?;
        }
    }
    Ok(())
}

/// Builds and checks the plan of `s`'s groups and writes; `peaks` resolves percentages
/// of peaks (None while validating: such values are left unresolved and not compared).
fn plan(s: &Scenario, peaks: Option<&BTreeMap<String, u64>>) -> Result<Plan, WorkloadError> {
    let mut cx = Ctx {
        s,
        groups: vec![Group {
            path: "/".into(),
            name: String::new(),
            parent: 0,
            version: None,
        }],
        by_path: HashMap::from([("/".to_string(), 0)]),
        peaks,
    };
    // Where each path is first declared, for the duplicate check.
    let mut declared: HashMap<&str, usize> = HashMap::with_capacity(s.cgroups.len());
    // The groups.
    for (i, c) in s.cgroups.iter().enumerate() {
        let field = format!("cgroup[{i}].path");
        let parts = components(&c.path).map_err(|m| cx.invalid(field.clone(), m))?;
        if let Some(&j) = declared.get(c.path.as_str()) {
            return Err(cx.invalid(
                field,
                format!("`{}` is already declared by cgroup[{j}]", c.path),
            ));
        }
        let version = |parent_v: Option<(CgroupVersion, usize)>| match (c.version, parent_v) {
            (Some(v), Some((pv, d))) if v != pv => Err(cx.invalid(
                format!("cgroup[{i}].version"),
                format!(
                    "`{}` is {} but its ancestor is {} (cgroup[{d}].version); v1 and v2 are \
                     separate hierarchies, a child has its parent's version",
                    c.path,
                    v.name(),
                    pv.name()
                ),
            )),
            (Some(v), _) => Ok(Some((v, i))),
            (None, p) => Ok(p),
        };
        declared.insert(c.path.as_str(), i);
        if parts.is_empty() {
            let v = version(None)?;
            cx.groups[0].version = v;
            if cx.groups.len() > 1 && v.is_some() {
                return Err(cx.invalid(
                    format!("cgroup[{i}].version"),
                    "declare `/` before the other groups to give it a version (its \
                     children inherit it)"
                        .into(),
                ));
            }
            continue;
        }
        let parent_path = match c.path.rfind('/') {
            Some(0) | None => "/".to_string(),
            Some(k) => c.path[..k].to_string(),
        };
        let Some(&parent) = cx.by_path.get(parent_path.as_str()) else {
            return Err(cx.invalid(
                field,
                format!(
                    "the parent `{parent_path}` of `{}` is not declared; declare [[cgroup]] \
                     path = \"{parent_path}\" before it",
                    c.path
                ),
            ));
        };
        if cx.groups.len() >= MAX_MEMCGS {
            return Err(cx.invalid(
                field,
                format!("too many groups: at most {} besides `/`", MAX_MEMCGS - 1),
            ));
        }
        let v = version(cx.groups[parent].version)?;
        cx.by_path.insert(c.path.clone(), cx.groups.len());
        cx.groups.push(Group {
            path: c.path.clone(),
            name: parts.last().copied().unwrap_or_default().to_string(),
            parent,
            version: v,
        });
    }
    // The workloads' groups.
    for (k, w) in s.workloads.iter().enumerate() {
        if let Some(p) = &w.cgroup {
            cx.group(p, format!("workload[{k}].cgroup"))?;
        }
    }

    let mut writes: Vec<Write> = Vec::new();
    // Setup writes.
    if let Some(m) = s.machine.memcg_max {
        writes.push(Write {
            at: None,
            group: 0,
            knob: MemcgKnob::Max,
            pages: Some(m.pages()),
            src: Src::Group(usize::MAX),
        });
    }
    for (i, c) in s.cgroups.iter().enumerate() {
        let g = cx.group(&c.path, format!("cgroup[{i}].path"))?;
        let knobs = c.knobs();
        let values: Vec<KnobValue> = knobs.iter().map(|k| k.1).collect();
        let of = cx.check_of(c.of, &values, format!("cgroup[{i}].of"))?;
        for (knob, v) in knobs {
            let src = Src::Group(i);
            let field = src.field(knob);
            cx.check_knob(g, knob, &field)?;
            if g == 0 && knob == MemcgKnob::Max && s.machine.memcg_max.is_some() {
                return Err(cx.invalid(
                    field,
                    "machine.memcg_max already sets the top group's memory.max; set one of \
                     them"
                        .into(),
                ));
            }
            let pages = cx.resolve(g, knob, v, of, &field)?;
            writes.push(Write {
                at: None,
                group: g,
                knob,
                pages,
                src,
            });
        }
    }
    let setup = writes.len();
    // Changes.
    let mut budget = MAX_KNOB_WRITES;
    for (i, c) in s.cgroup_changes.iter().enumerate() {
        if c.at > MAX_START_NS {
            return Err(cx.invalid(format!("cgroup_change[{i}].at"), time_range(c.at)));
        }
        let g = cx.group(&c.path, format!("cgroup_change[{i}].path"))?;
        let knobs = c.knobs();
        if knobs.is_empty() {
            return Err(cx.invalid(
                format!("cgroup_change[{i}]"),
                "writes no knob; give one or more of max, high, low, min, swap_max, \
                 swap_high, soft_limit, swappiness"
                    .into(),
            ));
        }
        let values: Vec<KnobValue> = knobs.iter().map(|k| k.1).collect();
        let of = cx.check_of(c.of, &values, format!("cgroup_change[{i}].of"))?;
        for (knob, v) in knobs {
            let src = Src::Change(i);
            let field = src.field(knob);
            cx.check_knob(g, knob, &field)?;
            let pages = cx.resolve(g, knob, v, of, &field)?;
            if budget == 0 {
                return Err(cx.invalid(
                    field,
                    format!("more than {MAX_KNOB_WRITES} knob writes in all"),
                ));
            }
            budget -= 1;
            writes.push(Write {
                at: Some(c.at),
                group: g,
                knob,
                pages,
                src,
            });
        }
    }
    // Cycles.
    for (i, c) in s.cgroup_cycles.iter().enumerate() {
        let f = |name: &str| format!("cgroup_cycle[{i}].{name}");
        let g = cx.group(&c.path, f("path"))?;
        cx.check_knob(g, c.knob, &f("knob"))?;
        let n = c.values.len();
        if !(1..=MAX_CYCLE_VALUES).contains(&n) {
            return Err(cx.invalid(
                f("values"),
                format!("{n} values; a cycle has 1 to {MAX_CYCLE_VALUES}"),
            ));
        }
        if c.durations.len() != n {
            return Err(cx.invalid(
                f("durations"),
                format!(
                    "{} durations for {n} values; give one duration per value",
                    c.durations.len()
                ),
            ));
        }
        for (j, &d) in c.durations.iter().enumerate() {
            if d == 0 || d > MAX_START_NS {
                return Err(cx.invalid(
                    format!("cgroup_cycle[{i}].durations[{j}]"),
                    format!(
                        "{} is out of range (0s, {}]",
                        format_time(d),
                        format_time(MAX_START_NS)
                    ),
                ));
            }
        }
        if c.start > MAX_START_NS {
            return Err(cx.invalid(f("start"), time_range(c.start)));
        }
        if c.until > MAX_START_NS || c.until <= c.start {
            return Err(cx.invalid(
                f("until"),
                format!(
                    "{} is out of range ({}, {}]: after `start`",
                    format_time(c.until),
                    format_time(c.start),
                    format_time(MAX_START_NS)
                ),
            ));
        }
        let mut all: Vec<KnobValue> = c.values.clone();
        all.extend(c.final_value);
        let of = cx.check_of(c.of, &all, f("of"))?;
        let mut resolved = Vec::with_capacity(n);
        for (j, &v) in c.values.iter().enumerate() {
            let field = Src::Cycle(i, j).field(c.knob);
            resolved.push(cx.resolve(g, c.knob, v, of, &field)?);
        }
        let fin = match c.final_value {
            Some(v) => Some(cx.resolve(g, c.knob, v, of, &f("final"))?),
            None => None,
        };
        // Count before expanding.
        let period: u64 = c.durations.iter().sum();
        let span = c.until - c.start;
        let count = (span / period)
            .saturating_mul(n as u64)
            .saturating_add(n as u64)
            .saturating_add(1);
        if count > budget {
            let mut exact = 0u64;
            let mut t = c.start;
            let mut j = 0;
            while t < c.until && exact <= budget {
                exact += 1;
                t += c.durations[j];
                j = (j + 1) % n;
            }
            exact += u64::from(fin.is_some());
            if exact > budget {
                return Err(cx.invalid(
                    f("until"),
                    format!(
                        "the cycle writes more than {budget} times before {} (at most \
                         {MAX_KNOB_WRITES} writes in all changes and cycles); use longer \
                         durations or an earlier `until`",
                        format_time(c.until)
                    ),
                ));
            }
        }
        let mut t = c.start;
        let mut j = 0;
        while t < c.until {
            writes.push(Write {
                at: Some(t),
                group: g,
                knob: c.knob,
                pages: resolved[j],
                src: Src::Cycle(i, j),
            });
            budget -= 1;
            t += c.durations[j];
            j = (j + 1) % n;
        }
        if let Some(p) = fin {
            writes.push(Write {
                at: Some(c.until),
                group: g,
                knob: c.knob,
                pages: p,
                src: Src::Final(i),
            });
            budget -= 1;
        }
    }
    overlaps(&cx)?;
    moves(&cx)?;
    writes[setup..].sort_by_key(|w| w.at);
    protection(&cx, &writes)?;
    Ok(Plan {
        groups: cx.groups,
        writes,
    })
}

/// Cycles of the same knob that overlap, changes inside them, changes at the same time.
fn overlaps(cx: &Ctx<'_>) -> Result<(), WorkloadError> {
    let s = cx.s;
    let path_of = |p: &str| cx.groups.iter().position(|g| g.path == p);
    // (group, knob, start, end (inclusive?), index)
    let spans: Vec<(Option<usize>, MemcgKnob, u64, u64, bool)> = s
        .cgroup_cycles
        .iter()
        .map(|c| {
            (
                path_of(&c.path),
                c.knob,
                c.start,
                c.until,
                c.final_value.is_some(),
            )
        })
        .collect();
    let inside = |t: u64, (_, _, a, b, closed): (Option<usize>, MemcgKnob, u64, u64, bool)| {
        t >= a && (t < b || (closed && t == b))
    };
    for (i, &(g, k, a, b, closed)) in spans.iter().enumerate() {
        for (j, &(h, l, c, d, closed2)) in spans[..i].iter().enumerate() {
            if g != h || k != l {
                continue;
            }
            // Half-open unless closed by a final write.
            let end1 = if closed { b.saturating_add(1) } else { b };
            let end2 = if closed2 { d.saturating_add(1) } else { d };
            if a < end2 && c < end1 {
                return Err(cx.invalid(
                    format!("cgroup_cycle[{i}]"),
                    format!(
                        "cycles {} of `{}` from {} to {}, overlapping cgroup_cycle[{j}] \
                         ({} to {}); one cycle per knob at a time",
                        knob_name(k),
                        s.cgroup_cycles[i].path,
                        format_time(a),
                        format_time(b),
                        format_time(c),
                        format_time(d)
                    ),
                ));
            }
        }
    }
    for (i, ch) in s.cgroup_changes.iter().enumerate() {
        let g = path_of(&ch.path);
        for (knob, _) in ch.knobs() {
            if let Some(j) = spans
                .iter()
                .position(|&sp| sp.0 == g && sp.1 == knob && inside(ch.at, sp))
            {
                return Err(cx.invalid(
                    Src::Change(i).field(knob),
                    format!(
                        "at {}, inside cgroup_cycle[{j}] ({} to {}), which cycles {} of `{}`; \
                         the cycle would overwrite it",
                        format_time(ch.at),
                        format_time(spans[j].2),
                        format_time(spans[j].3),
                        knob_name(knob),
                        ch.path
                    ),
                ));
            }
            if let Some(j) = s.cgroup_changes[..i].iter().position(|o| {
                o.at == ch.at && path_of(&o.path) == g && o.knobs().iter().any(|x| x.0 == knob)
            }) {
                return Err(cx.invalid(
                    Src::Change(i).field(knob),
                    format!(
                        "cgroup_change[{j}] writes {} of `{}` at the same time ({})",
                        knob_name(knob),
                        ch.path,
                        format_time(ch.at)
                    ),
                ));
            }
        }
    }
    Ok(())
}

/// A child's `low`/`min` may not exceed its parent's while the parent sets one: checked
/// after the setup writes and after all writes of each time.
fn protection(cx: &Ctx<'_>, writes: &[Write]) -> Result<(), WorkloadError> {
    let n = cx.groups.len();
    // Per group: (low, min) values (None: unknown) and the source of the last write.
    let mut val: Vec<[(Option<u64>, Option<Src>); 2]> = vec![[(Some(0), None); 2]; n];
    let slot = |k: MemcgKnob| match k {
        MemcgKnob::Low => Some(0),
        MemcgKnob::Min => Some(1),
        _ => None,
    };
    let mut i = 0;
    while i < writes.len() {
        let at = writes[i].at;
        let mut end = i;
        while end < writes.len() && writes[end].at == at {
            let w = &writes[end];
            if let Some(k) = slot(w.knob) {
                val[w.group][k] = (w.pages, Some(w.src));
            }
            end += 1;
        }
        // Latest first: a conflict is reported at the later of its two writes.
        for w in writes[i..end].iter().rev() {
            let Some(k) = slot(w.knob) else { continue };
            let knob = w.knob;
            let g = w.group;
            // Against the parent.
            let check = |child: usize| -> Result<(), WorkloadError> {
                let p = cx.groups[child].parent;
                if child == 0 || p == 0 {
                    return Ok(());
                }
                let (Some(cv), csrc) = val[child][k] else {
                    return Ok(());
                };
                let (Some(pv), psrc) = val[p][k] else {
                    return Ok(());
                };
                if pv == 0 || pv == u64::MAX || cv <= pv {
                    return Ok(());
                }
                let show = |v: u64| {
                    if v == u64::MAX {
                        "max".to_string()
                    } else {
                        KnobValue::Pages(v).to_string()
                    }
                };
                let by =
                    |s: Option<Src>| s.map_or(String::new(), |s| format!(", {}", s.field(knob)));
                let when = match at {
                    None => String::new(),
                    Some(t) => format!(" at {}", format_time(t)),
                };
                Err(cx.invalid(
                    w.src.field(knob),
                    format!(
                        "{}{when}: {} of `{}` ({}{}) would be larger than its parent `{}`'s \
                         ({}{}); a child's protection cannot exceed its parent's",
                        show(w.pages.unwrap_or(0)),
                        knob.file(),
                        cx.groups[child].path,
                        show(cv),
                        by(csrc),
                        cx.groups[p].path,
                        show(pv),
                        by(psrc)
                    ),
                ))
            };
            check(g)?;
            for c in 1..n {
                if cx.groups[c].parent == g && c != g {
                    check(c)?;
                }
            }
        }
        i = end;
    }
    Ok(())
}

/// Checks the scenario's groups, changes and cycles and the workloads' `cgroup` fields
/// (percentages of `"peak"` are checked for range only: their values are known once the
/// calibration ran). Called by [`Scenario::validate`].
pub fn validate(s: &Scenario) -> Result<(), WorkloadError> {
    plan(s, None).map(|_| ())
}

/// Whether some value of `s` is a percentage of a peak (so that running it takes a
/// calibration run first).
pub fn needs_calibration(s: &Scenario) -> bool {
    let peak = |of: Option<Reference>, mut vals: std::vec::IntoIter<KnobValue>| {
        of == Some(Reference::Peak) && vals.any(|v| matches!(v, KnobValue::Percent(_)))
    };
    let set = |knobs: Vec<(MemcgKnob, KnobValue)>| -> Vec<KnobValue> {
        knobs.into_iter().map(|(_, v)| v).collect()
    };
    s.cgroups
        .iter()
        .any(|c| peak(c.of, set(c.knobs()).into_iter()))
        || s.cgroup_changes
            .iter()
            .any(|c| peak(c.of, set(c.knobs()).into_iter()))
        || s.cgroup_cycles.iter().any(|c| {
            let mut v = c.values.clone();
            v.extend(c.final_value);
            peak(c.of, v.into_iter())
        })
}

/// The calibration scenario of `s`: the same workloads and groups with no knob set,
/// changed or cycled, no `machine.memcg_max`, on a machine with the most memory.
pub fn calibration_scenario(s: &Scenario) -> Scenario {
    let mut c = s.clone();
    c.machine.memcg_max = None;
    c.machine.memory = Size(MAX_MEMORY_PAGES * PAGE_SIZE);
    c.cgroups = s
        .cgroups
        .iter()
        .map(|g| CgroupSpec {
            version: g.version,
            ..CgroupSpec::new(&g.path)
        })
        .collect();
    c.cgroup_changes.clear();
    c.cgroup_cycles.clear();
    c
}

/// The peak `memory.current` (pages) of every group of `s`, from its calibration run
/// ([`calibration_scenario`]); an error if the run reclaimed or killed in a group that a
/// percentage refers to, or charged nothing to it.
pub fn peaks(s: &Scenario) -> Result<BTreeMap<String, u64>, WorkloadError> {
    let cal = calibration_scenario(s);
    let r = crate::run::run_scenario(&cal, &mut crate::RunOptions::default())?;
    let mut out = BTreeMap::new();
    let invalid = |field: String, message: String| WorkloadError::Invalid {
        file: s.source.clone(),
        field,
        message,
    };
    // The tables whose percentages refer to peaks, for the errors.
    let mut users: Vec<(String, String)> = Vec::new();
    for (i, c) in s.cgroups.iter().enumerate() {
        if c.of == Some(Reference::Peak) {
            users.push((c.path.clone(), format!("cgroup[{i}].of")));
        }
    }
    for (i, c) in s.cgroup_changes.iter().enumerate() {
        if c.of == Some(Reference::Peak) {
            users.push((c.path.clone(), format!("cgroup_change[{i}].of")));
        }
    }
    for (i, c) in s.cgroup_cycles.iter().enumerate() {
        if c.of == Some(Reference::Peak) {
            users.push((c.path.clone(), format!("cgroup_cycle[{i}].of")));
        }
    }
    for (path, field) in users {
        if out.contains_key(&path) {
            continue;
        }
        let Some(m) = r.result.memcg.get(&path) else {
            return Err(invalid(
                field,
                format!("the calibration run has no group `{path}`"),
            ));
        };
        if m.pgsteal > 0 || m.events.oom_kill > 0 {
            return Err(invalid(
                field,
                format!(
                    "the calibration run reclaimed {} pages from `{path}` and killed {} tasks \
                     in it, so its memory.current at the end is not its peak; give the \
                     reference as a size (of = \"…\")",
                    m.pgsteal, m.events.oom_kill
                ),
            ));
        }
        if m.current == 0 {
            return Err(invalid(
                field,
                format!(
                    "`{path}` has no memory at the end of the calibration run (no workload \
                     charges it), so it has no peak to take a percentage of"
                ),
            ));
        }
        out.insert(path, m.current);
    }
    Ok(out)
}

/// Creates the groups of `s` in `sim` (in declared order), writes their knobs, and
/// schedules the changes and cycles ([`Sim::schedule_memcg_knob`]); first, if some value
/// is a percentage of a peak, runs the calibration ([`peaks`]). `machine.memcg_max` is
/// set by [`Sim::new`] already and not written again.
///
/// `s` must be valid; errors name the field.
pub fn setup(sim: &mut Sim, s: &Scenario) -> Result<(), WorkloadError> {
    let measured;
    let peaks = if needs_calibration(s) {
        measured = peaks(s)?;
        Some(&measured)
    } else {
        None
    };
    let p = plan(s, peaks)?;
    let mut ids: Vec<MemcgId> = Vec::with_capacity(p.groups.len());
    for (i, g) in p.groups.iter().enumerate() {
        if i == 0 {
            ids.push(ROOT);
            continue;
        }
        let id = sim
            .add_memcg(ids[g.parent], &g.name)
            .map_err(|source| WorkloadError::Setup {
                what: format!("cgroup `{}`", g.path),
                source,
            })?;
        ids.push(id);
    }
    for w in &p.writes {
        if w.src == Src::Group(usize::MAX) {
            continue;
        }
        // Every value is resolved: the peaks are known.
        let pages = w.pages.unwrap_or(u64::MAX);
        let r = match w.at {
            None => sim.set_memcg_knob(ids[w.group], w.knob, pages),
            Some(t) => sim.schedule_memcg_knob(t, ids[w.group], w.knob, pages),
        };
        r.map_err(|source| WorkloadError::Setup {
            what: w.src.field(w.knob),
            source,
        })?;
    }
    Ok(())
}

/// One knob write of a scenario, resolved (see [`schedule`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KnobWrite {
    /// Simulated time in ns; `None` for the writes made at setup, before anything runs.
    pub at: Option<u64>,
    /// The group.
    pub path: String,
    /// The knob.
    pub knob: MemcgKnob,
    /// Pages (0..=200 for swappiness; `u64::MAX`: "max").
    pub value: u64,
}

/// The knob writes `s` makes, resolved, in the order they are made: the setup writes
/// (`machine.memcg_max` and the `[[cgroup]]` knobs), then the changes and cycles by time.
/// Percentages of peaks run the calibration first ([`peaks`]).
pub fn schedule(s: &Scenario) -> Result<Vec<KnobWrite>, WorkloadError> {
    let measured;
    let peaks = if needs_calibration(s) {
        measured = peaks(s)?;
        Some(&measured)
    } else {
        None
    };
    let p = plan(s, peaks)?;
    Ok(p.writes
        .iter()
        .map(|w| KnobWrite {
            at: w.at,
            path: p.groups[w.group].path.clone(),
            knob: w.knob,
            value: w.pages.unwrap_or(u64::MAX),
        })
        .collect())
}
