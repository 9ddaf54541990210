//! damo's files: the kdamonds JSON that `damo args damon --format json` prints
//! (read by `--damon CONFIG.json`) and the `json_compressed` record that `damo
//! record` writes (written by `--damon-record OUT`), so that a user's damo
//! configuration runs unchanged and `damo report heatmap|wss|access` reads
//! what mmsim monitored.
//!
//! The JSON is damo's `to_kvpairs()` form (damo's `_damon.py`, checked against
//! damo at commit df6d55fa, 2026-06): `{"kdamonds": [{"state", "pid",
//! "contexts": [{"ops", "targets": [{"pid", "regions": [{"start", "end"}]}],
//! "intervals": {"sample_us", "aggr_us", "ops_update_us", "intervals_goal"},
//! "nr_regions": {"min", "max"}, "schemes": [{"action", "access_pattern":
//! {"sz_bytes", "nr_accesses", "age"}, "apply_interval_us", "quotas":
//! {"time_ms", "sz_bytes", "reset_interval_ms", "goals", "weights"},
//! "watermarks": {"metric", "interval_us", "high_permil", "mid_permil",
//! "low_permil"}, "filters": [{"filter_type", "matching", "allow",
//! "memcg_path", "address_range", "damon_target_idx", "hugepage_size"}]}]}]}]}`
//! (a bare list of kdamonds, or one kdamond, is accepted too). Values are
//! numbers or damo's human-formatted text, parsed as damo's `_damo_fmt_str`
//! does: `"1,073,741,824"`, `"4 KiB"`, `"5 ms"`, `"1 s 500 ms"`, `"20 %"`,
//! `"4 samples"`, `"15 aggr_intervals"`, `"min"`, `"max"`. Keys damo adds that
//! mmsim has no use for (`state`, `refresh_ms`, `probes`, `sample_control`,
//! `pause`, `stats`, `dests`, …) are ignored; `addr_unit` must be 1.
//!
//! A target's `pid` names the scenario's task of that index (tasks are numbered
//! 0, 1, … in the order the scenario's workloads create them); a null pid of a
//! vaddr context monitors every task.

use std::io::Write as _;
use std::path::Path;

use anyhow::{anyhow, bail, Context, Result};
use mmsim_core::damon::sysfs::*;
use serde_json::{json, Map, Value};

/// `ULONG_MAX`, damo's "max".
const ULONG_MAX: f64 = u64::MAX as f64;

/// Reads a damo kdamonds JSON file.
pub fn read_kdamonds(path: &Path) -> Result<Vec<KdamondConfig>> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("--damon {}: cannot read", path.display()))?;
    let v: Value = serde_json::from_str(&text)
        .with_context(|| format!("--damon {}: not JSON", path.display()))?;
    parse_kdamonds(&v).map_err(|e| anyhow!("--damon {}: {e}", path.display()))
}

/// The kdamonds of damo's kvpairs JSON.
pub fn parse_kdamonds(v: &Value) -> Result<Vec<KdamondConfig>> {
    let list = match v {
        Value::Object(o) if o.contains_key("kdamonds") => &o["kdamonds"],
        Value::Object(o) if o.contains_key("contexts") => {
            return Ok(vec![kdamond(v, "kdamonds[0]")?]);
        }
        other => other,
    };
    let arr = list
        .as_array()
        .ok_or_else(|| anyhow!("expected {{\"kdamonds\": [...]}} or a list of kdamonds"))?;
    arr.iter()
        .enumerate()
        .map(|(i, k)| kdamond(k, &format!("kdamonds[{i}]")))
        .collect()
}

fn field<'a>(o: &'a Value, key: &str, at: &str) -> Result<&'a Value> {
    o.get(key).ok_or_else(|| anyhow!("{at}: missing `{key}`"))
}

fn opt<'a>(o: &'a Value, key: &str) -> Option<&'a Value> {
    o.get(key).filter(|v| !v.is_null())
}

fn kdamond(v: &Value, at: &str) -> Result<KdamondConfig> {
    let ctxs = field(v, "contexts", at)?
        .as_array()
        .ok_or_else(|| anyhow!("{at}.contexts: expected a list"))?;
    Ok(KdamondConfig {
        contexts: ctxs
            .iter()
            .enumerate()
            .map(|(i, c)| context(c, &format!("{at}.contexts[{i}]")))
            .collect::<Result<_>>()?,
    })
}

fn context(v: &Value, at: &str) -> Result<ContextConfig> {
    let ops = match text(field(v, "ops", at)?) {
        Some("vaddr") => DamonOps::Vaddr,
        Some("fvaddr") => DamonOps::Fvaddr,
        Some("paddr") => DamonOps::Paddr,
        _ => bail!("{at}.ops: expected vaddr, fvaddr or paddr"),
    };
    if let Some(u) = opt(v, "addr_unit") {
        if nr(u, &format!("{at}.addr_unit"))? != 1.0 {
            bail!("{at}.addr_unit: only 1 is supported (the simulated machine's physical addresses are byte addresses)");
        }
    }
    let mut attrs = MonitoringAttrs::default();
    if let Some(iv) = opt(v, "intervals") {
        let a = format!("{at}.intervals");
        let i = &mut attrs.intervals;
        i.sample_us = int(us(field(iv, "sample_us", &a)?, &format!("{a}.sample_us"))?);
        i.aggr_us = int(us(field(iv, "aggr_us", &a)?, &format!("{a}.aggr_us"))?);
        i.update_us = int(us(
            field(iv, "ops_update_us", &a)?,
            &format!("{a}.ops_update_us"),
        )?);
        if let Some(g) = opt(iv, "intervals_goal") {
            let a = format!("{a}.intervals_goal");
            i.intervals_goal = IntervalsGoal {
                access_bp: int(bp(field(g, "access_bp", &a)?, &format!("{a}.access_bp"))?),
                aggrs: int(nr(field(g, "aggrs", &a)?, &format!("{a}.aggrs"))?),
                min_sample_us: int(us(
                    field(g, "min_sample_us", &a)?,
                    &format!("{a}.min_sample_us"),
                )?),
                max_sample_us: int(us(
                    field(g, "max_sample_us", &a)?,
                    &format!("{a}.max_sample_us"),
                )?),
            };
        }
    }
    if let Some(nrr) = opt(v, "nr_regions") {
        let a = format!("{at}.nr_regions");
        attrs.nr_regions = NrRegions {
            min: int(nr(field(nrr, "min", &a)?, &format!("{a}.min"))?),
            max: int(nr(field(nrr, "max", &a)?, &format!("{a}.max"))?),
        };
    }
    let targets = field(v, "targets", at)?
        .as_array()
        .ok_or_else(|| anyhow!("{at}.targets: expected a list"))?
        .iter()
        .enumerate()
        .map(|(i, t)| target(t, &format!("{at}.targets[{i}]")))
        .collect::<Result<Vec<_>>>()?;
    let (sample, aggr) = (attrs.intervals.sample_us, attrs.intervals.aggr_us);
    let schemes = match opt(v, "schemes") {
        Some(s) => s
            .as_array()
            .ok_or_else(|| anyhow!("{at}.schemes: expected a list"))?
            .iter()
            .enumerate()
            .map(|(i, s)| scheme(s, &format!("{at}.schemes[{i}]"), sample, aggr))
            .collect::<Result<Vec<_>>>()?,
        None => Vec::new(),
    };
    Ok(ContextConfig {
        operations: ops,
        monitoring_attrs: attrs,
        targets,
        schemes,
    })
}

fn target(v: &Value, at: &str) -> Result<TargetConfig> {
    let pid = match opt(v, "pid") {
        None => None,
        Some(p) => Some(
            u32::try_from(int(nr(p, &format!("{at}.pid"))?))
                .map_err(|_| anyhow!("{at}.pid: out of range"))?,
        ),
    };
    let mut regions = Vec::new();
    if let Some(rs) = opt(v, "regions") {
        for (i, r) in rs
            .as_array()
            .ok_or_else(|| anyhow!("{at}.regions: expected a list"))?
            .iter()
            .enumerate()
        {
            regions.push(addr_range(r, &format!("{at}.regions[{i}]"))?);
        }
    }
    Ok(TargetConfig {
        pid_target: pid,
        regions,
    })
}

fn addr_range(v: &Value, at: &str) -> Result<AddrRangeConfig> {
    Ok(AddrRangeConfig {
        start: int(bytes(field(v, "start", at)?, &format!("{at}.start"))?),
        end: int(bytes(field(v, "end", at)?, &format!("{at}.end"))?),
    })
}

fn scheme(v: &Value, at: &str, sample_us: u64, aggr_us: u64) -> Result<SchemeConfig> {
    let action_text = opt(v, "action").and_then(text).unwrap_or("stat");
    let action: DamosAction = serde_json::from_value(Value::String(action_text.into()))
        .map_err(|_| anyhow!("{at}.action: unknown DAMOS action `{action_text}`"))?;
    let mut s = SchemeConfig {
        action,
        apply_interval_us: match opt(v, "apply_interval_us") {
            Some(x) => int(us(x, &format!("{at}.apply_interval_us"))?),
            None => 0,
        },
        target_nid: None,
        access_pattern: AccessPatternConfig::default(),
        quotas: QuotasConfig::default(),
        watermarks: WatermarksConfig::default(),
        filters: Vec::new(),
    };
    if let Some(p) = opt(v, "access_pattern") {
        let a = format!("{at}.access_pattern");
        let max_nr = (aggr_us / sample_us.max(1)).max(1) as f64;
        let sz = field(p, "sz_bytes", &a)?;
        s.access_pattern.sz = MinMax {
            min: int(bytes(field(sz, "min", &a)?, &format!("{a}.sz_bytes.min"))?),
            max: int(bytes(field(sz, "max", &a)?, &format!("{a}.sz_bytes.max"))?),
        };
        let na = field(p, "nr_accesses", &a)?;
        let mut nra = [0u64; 2];
        for (k, key) in ["min", "max"].iter().enumerate() {
            let f = format!("{a}.nr_accesses.{key}");
            let x = field(na, key, &a)?;
            nra[k] = match unit_value(x) {
                Some((n, "samples")) => int(n),
                Some((_, u)) => bail!("{f}: unknown unit `{u}` (% or samples)"),
                // damo: a percent of the samples per aggregation, int(p × max / 100).
                None => int((percent(x, &f)? * max_nr / 100.0).floor()),
            }
            .min(u32::MAX as u64);
        }
        s.access_pattern.nr_accesses = MinMax {
            min: nra[0],
            max: nra[1],
        };
        let ag = field(p, "age", &a)?;
        let mut age = [0u64; 2];
        for (k, key) in ["min", "max"].iter().enumerate() {
            let f = format!("{a}.age.{key}");
            let x = field(ag, key, &a)?;
            age[k] = match unit_value(x) {
                Some((n, "aggr_intervals")) => int(n),
                // damo's DamonAge: int(usec / aggr_us).
                _ => int((us(x, &f)? / aggr_us.max(1) as f64).floor()),
            }
            .min(u32::MAX as u64);
        }
        s.access_pattern.age = MinMax {
            min: age[0],
            max: age[1],
        };
    }
    if let Some(q) = opt(v, "quotas") {
        let a = format!("{at}.quotas");
        s.quotas.ms = int(ms(field(q, "time_ms", &a)?, &format!("{a}.time_ms"))?);
        s.quotas.bytes = int(bytes(field(q, "sz_bytes", &a)?, &format!("{a}.sz_bytes"))?);
        s.quotas.reset_interval_ms = match field(q, "reset_interval_ms", &a)? {
            Value::String(t) if t == "max" => u32::MAX as u64,
            x => int(ms(x, &format!("{a}.reset_interval_ms"))?),
        };
        if let Some(w) = opt(q, "weights") {
            let wa = format!("{a}.weights");
            s.quotas.weights = WeightsConfig {
                sz_permil: int(permil(
                    field(w, "sz_permil", &wa)?,
                    &format!("{wa}.sz_permil"),
                )?),
                nr_accesses_permil: int(permil(
                    field(w, "nr_accesses_permil", &wa)?,
                    &format!("{wa}.nr_accesses_permil"),
                )?),
                age_permil: int(permil(
                    field(w, "age_permil", &wa)?,
                    &format!("{wa}.age_permil"),
                )?),
            };
        }
        if let Some(goals) = opt(q, "goals").and_then(|g| g.as_array()) {
            for (i, g) in goals.iter().enumerate() {
                let ga = format!("{a}.goals[{i}]");
                let metric = text(field(g, "metric", &ga)?).unwrap_or("");
                let target_metric: GoalMetric =
                    serde_json::from_value(Value::String(metric.into())).map_err(|_| {
                        anyhow!(
                            "{ga}.metric: `{metric}` is not modelled (user_input, \
                             some_mem_psi_us, node_mem_used_bp, node_mem_free_bp)"
                        )
                    })?;
                s.quotas.goals.push(QuotaGoalConfig {
                    target_metric,
                    target_value: int(nr(
                        field(g, "target_value", &ga)?,
                        &format!("{ga}.target_value"),
                    )?),
                    current_value: match opt(g, "current_value") {
                        Some(x) => int(nr(x, &format!("{ga}.current_value"))?),
                        None => 0,
                    },
                });
            }
        }
    }
    if let Some(w) = opt(v, "watermarks") {
        let a = format!("{at}.watermarks");
        s.watermarks = WatermarksConfig {
            metric: match text(field(w, "metric", &a)?) {
                Some("none") => WmarkMetric::None,
                Some("free_mem_rate") => WmarkMetric::FreeMemRate,
                _ => bail!("{a}.metric: expected none or free_mem_rate"),
            },
            interval_us: int(us(
                field(w, "interval_us", &a)?,
                &format!("{a}.interval_us"),
            )?),
            high: int(permil(
                field(w, "high_permil", &a)?,
                &format!("{a}.high_permil"),
            )?),
            mid: int(permil(
                field(w, "mid_permil", &a)?,
                &format!("{a}.mid_permil"),
            )?),
            low: int(permil(
                field(w, "low_permil", &a)?,
                &format!("{a}.low_permil"),
            )?),
        };
    }
    if let Some(fs) = opt(v, "filters").and_then(|f| f.as_array()) {
        for (i, f) in fs.iter().enumerate() {
            s.filters.push(filter(f, &format!("{at}.filters[{i}]"))?);
        }
    }
    Ok(s)
}

fn filter(v: &Value, at: &str) -> Result<FilterConfig> {
    let ty = text(field(v, "filter_type", at)?).unwrap_or("");
    let filter_type: FilterType = serde_json::from_value(Value::String(ty.into()))
        .map_err(|_| anyhow!("{at}.filter_type: unknown filter type `{ty}`"))?;
    let mut f = FilterConfig {
        filter_type,
        matching: boolean(field(v, "matching", at)?, &format!("{at}.matching"))?,
        allow: match opt(v, "allow").or_else(|| opt(v, "filter_pass")) {
            Some(x) => boolean(x, &format!("{at}.allow"))?,
            None => false,
        },
        memcg_path: None,
        addr_start: 0,
        addr_end: 0,
        target_idx: 0,
        min: 0,
        max: 0,
    };
    match filter_type {
        FilterType::Memcg => {
            f.memcg_path = Some(
                text(field(v, "memcg_path", at)?)
                    .ok_or_else(|| anyhow!("{at}.memcg_path: expected a path"))?
                    .to_string(),
            )
        }
        FilterType::Addr => {
            let r = addr_range(
                field(v, "address_range", at)?,
                &format!("{at}.address_range"),
            )?;
            (f.addr_start, f.addr_end) = (r.start, r.end);
        }
        FilterType::Target => {
            f.target_idx = int(nr(
                field(v, "damon_target_idx", at)?,
                &format!("{at}.damon_target_idx"),
            )?)
        }
        FilterType::HugepageSize => {
            let hs = field(v, "hugepage_size", at)?
                .as_array()
                .filter(|a| a.len() == 2)
                .ok_or_else(|| anyhow!("{at}.hugepage_size: expected [min, max]"))?;
            f.min = int(bytes(&hs[0], &format!("{at}.hugepage_size[0]"))?);
            f.max = int(bytes(&hs[1], &format!("{at}.hugepage_size[1]"))?);
        }
        _ => {}
    }
    Ok(f)
}

fn text(v: &Value) -> Option<&str> {
    v.as_str()
}

fn int(x: f64) -> u64 {
    if x >= ULONG_MAX {
        u64::MAX
    } else {
        x.max(0.0) as u64
    }
}

/// `text_to_nr`: a number, or text with thousands commas, or `min`/`max`.
fn nr(v: &Value, at: &str) -> Result<f64> {
    match v {
        Value::Number(n) => n.as_f64().ok_or_else(|| anyhow!("{at}: not a number")),
        Value::String(s) => parse_nr(s).ok_or_else(|| anyhow!("{at}: `{s}` is not a number")),
        _ => bail!("{at}: expected a number"),
    }
}

fn parse_nr(s: &str) -> Option<f64> {
    let t = s.trim();
    match t {
        "min" => return Some(0.0),
        "max" => return Some(ULONG_MAX),
        _ => {}
    }
    let t: String = t.chars().filter(|&c| c != ',').collect();
    t.parse::<f64>().ok().filter(|x| x.is_finite() && *x >= 0.0)
}

/// `"4 samples"` → (4, "samples").
fn unit_value(v: &Value) -> Option<(f64, &str)> {
    let s = v.as_str()?;
    let mut it = s.split_whitespace();
    let (n, u) = (it.next()?, it.next()?);
    if it.next().is_some() || u == "%" {
        return None;
    }
    Some((parse_nr(n)?, u))
}

/// `text_to_bytes`: a number, or a number with B/K/KB/KiB/M/…/E suffix.
fn bytes(v: &Value, at: &str) -> Result<f64> {
    if let Ok(x) = nr(v, at) {
        return Ok(x);
    }
    let s = v.as_str().unwrap_or("").trim();
    const UNITS: &[(&str, u32)] = &[
        ("KiB", 10),
        ("MiB", 20),
        ("GiB", 30),
        ("TiB", 40),
        ("PiB", 50),
        ("EiB", 60),
        ("KB", 10),
        ("MB", 20),
        ("GB", 30),
        ("TB", 40),
        ("PB", 50),
        ("EB", 60),
        ("K", 10),
        ("M", 20),
        ("G", 30),
        ("T", 40),
        ("P", 50),
        ("E", 60),
        ("B", 0),
    ];
    for (u, shift) in UNITS {
        if let Some(n) = s.strip_suffix(u).and_then(parse_nr) {
            return Ok((n * (1u64 << shift) as f64).min(ULONG_MAX));
        }
    }
    bail!("{at}: `{s}` is not a size (e.g. 4096, \"4 KiB\", \"1,073,741,824\")")
}

/// `text_to_ns` then to µs: `"5 ms"`, `"1 s 500 ms"`, `"100us"`, a number (µs).
fn us(v: &Value, at: &str) -> Result<f64> {
    if let Ok(x) = nr(v, at) {
        return Ok(x);
    }
    let s = v.as_str().unwrap_or("");
    let fields: Vec<&str> = s.split_whitespace().collect();
    let mut total_ns = 0.0;
    let mut i = 0;
    while i < fields.len() {
        // "5 ms" is two fields, "5ms" one.
        let (num, unit) = match fields.get(i + 1) {
            Some(u) if u.chars().all(|c| c.is_ascii_alphabetic()) => (fields[i], *u),
            _ => {
                let f = fields[i];
                let split = f
                    .find(|c: char| c.is_ascii_alphabetic())
                    .ok_or_else(|| anyhow!("{at}: `{s}` is not a time (e.g. \"5 ms\")"))?;
                (&f[..split], &f[split..])
            }
        };
        let n = parse_nr(num).ok_or_else(|| anyhow!("{at}: `{s}` is not a time"))?;
        let mult = match unit {
            "ns" => 1.0,
            "us" => 1e3,
            "ms" => 1e6,
            "s" => 1e9,
            "m" => 60e9,
            "h" => 3600e9,
            "d" => 86400e9,
            _ => bail!("{at}: unknown time unit `{unit}` in `{s}`"),
        };
        total_ns += n * mult;
        i += if fields
            .get(i + 1)
            .is_some_and(|u| u.chars().all(|c| c.is_ascii_alphabetic()))
        {
            2
        } else {
            1
        };
    }
    Ok(total_ns / 1e3)
}

fn ms(v: &Value, at: &str) -> Result<f64> {
    if let Ok(x) = nr(v, at) {
        return Ok(x);
    }
    Ok(us(v, at)? / 1e3)
}

/// `text_to_ratio`: a number, or `"20 %"`, as a ratio.
fn ratio(v: &Value, at: &str) -> Result<Option<f64>> {
    match v {
        Value::String(s) => {
            let t = s.trim();
            if let Some(p) = t.strip_suffix('%') {
                let x =
                    parse_nr(p.trim()).ok_or_else(|| anyhow!("{at}: `{s}` is not a percentage"))?;
                return Ok(Some(x / 100.0));
            }
            Ok(None)
        }
        _ => Ok(None),
    }
}

fn percent(v: &Value, at: &str) -> Result<f64> {
    match ratio(v, at)? {
        Some(r) => Ok(r * 100.0),
        None => nr(v, at),
    }
}

fn permil(v: &Value, at: &str) -> Result<f64> {
    match ratio(v, at)? {
        Some(r) => Ok(r * 1000.0),
        None => nr(v, at),
    }
}

fn bp(v: &Value, at: &str) -> Result<f64> {
    match ratio(v, at)? {
        Some(r) => Ok(r * 10_000.0),
        None => nr(v, at),
    }
}

fn boolean(v: &Value, at: &str) -> Result<bool> {
    match v {
        Value::Bool(b) => Ok(*b),
        Value::String(s) => match s.to_ascii_lowercase().as_str() {
            "y" | "yes" | "true" => Ok(true),
            "n" | "no" | "false" => Ok(false),
            _ => bail!("{at}: `{s}` is not a boolean"),
        },
        _ => bail!("{at}: expected a boolean"),
    }
}

/// Writes the run's aggregation snapshots as damo's `json_compressed` record
/// (`write_json_compressed`: zlib-compressed JSON, numbers in damo's raw
/// form): one record per (context, target), with `kdamond_idx`,
/// `context_idx`, `intervals`, `target_id`, and a snapshot per aggregation
/// interval whose regions carry `nr_accesses` (samples and percent) and `age`
/// (µs and aggregation intervals).
pub fn write_record(path: &Path, report: &mmsim_core::DamonReport) -> Result<()> {
    let mut records: Vec<Value> = Vec::new();
    let mut index: Vec<((usize, usize), usize)> = Vec::new();
    for snap in &report.record {
        let key = (snap.ctx, snap.target);
        let i = match index.iter().find(|(k, _)| *k == key) {
            Some(&(_, i)) => i,
            None => {
                let c = &report.contexts[snap.ctx];
                records.push(json!({
                    "kdamond_idx": snap.ctx,
                    "context_idx": 0,
                    "intervals": {
                        "sample_us": c.sample_us.to_string(),
                        "aggr_us": c.aggr_us.to_string(),
                        "ops_update_us": "0",
                    },
                    "scheme_idx": null,
                    "target_id": snap.target,
                    "scheme_filters": [],
                    "snapshots": [],
                    "data_source": "unknown",
                }));
                index.push((key, records.len() - 1));
                records.len() - 1
            }
        };
        let c = &report.contexts[snap.ctx];
        let max_nr = (c.aggr_us / c.sample_us.max(1)).max(1);
        let regions: Vec<Value> = snap
            .regions
            .iter()
            .map(|&(start, end, nr, age)| {
                json!({
                    "start": start.to_string(),
                    "end": end.to_string(),
                    "nr_accesses": {"samples": nr, "percent": nr as u64 * 100 / max_nr},
                    "age": {"usec": age as u64 * c.aggr_us, "aggr_intervals": age},
                    "probe_hits": [],
                    "sz_filter_passed": "0",
                })
            })
            .collect();
        let total: u64 = snap.regions.iter().map(|r| r.1 - r.0).sum();
        let mut s = Map::new();
        s.insert("start_time".into(), json!(snap.start_ns.to_string()));
        s.insert("end_time".into(), json!(snap.end_ns.to_string()));
        s.insert("regions".into(), Value::Array(regions));
        s.insert("total_bytes".into(), json!(total.to_string()));
        s.insert("damos_stats".into(), Value::Null);
        s.insert("sample_interval_us".into(), json!(c.sample_us.to_string()));
        records[i]["snapshots"]
            .as_array_mut()
            .expect("a list")
            .push(Value::Object(s));
    }
    let text = serde_json::to_string_pretty(&records)?;
    let file = std::fs::File::create(path)
        .with_context(|| format!("--damon-record {}: cannot create", path.display()))?;
    let mut z = flate2::write::ZlibEncoder::new(file, flate2::Compression::default());
    z.write_all(text.as_bytes())
        .and_then(|_| z.finish().map(|_| ()))
        .with_context(|| format!("--damon-record {}: write failed", path.display()))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn human_formatted_values_parse_as_damo_parses_them() {
        assert_eq!(nr(&json!("1,073,741,824"), "x").unwrap(), 1_073_741_824.0);
        assert_eq!(bytes(&json!("4 KiB"), "x").unwrap(), 4096.0);
        assert_eq!(bytes(&json!("1.500 MiB"), "x").unwrap(), 1_572_864.0);
        assert_eq!(bytes(&json!("max"), "x").unwrap(), ULONG_MAX);
        assert_eq!(us(&json!("5 ms"), "x").unwrap(), 5000.0);
        assert_eq!(us(&json!("1 s 500 ms"), "x").unwrap(), 1_500_000.0);
        assert_eq!(us(&json!("100us"), "x").unwrap(), 100.0);
        assert_eq!(us(&json!("0 ns"), "x").unwrap(), 0.0);
        assert_eq!(ms(&json!("1 s"), "x").unwrap(), 1000.0);
        assert_eq!(percent(&json!("20 %"), "x").unwrap(), 20.0);
        assert_eq!(permil(&json!("50 %"), "x").unwrap(), 500.0);
        assert_eq!(
            us(&json!("5 parsecs"), "x").unwrap_err().to_string(),
            "x: unknown time unit `parsecs` in `5 parsecs`"
        );
        assert_eq!(
            bytes(&json!("lots"), "x").unwrap_err().to_string(),
            "x: `lots` is not a size (e.g. 4096, \"4 KiB\", \"1,073,741,824\")"
        );
    }

    #[test]
    fn a_damo_scheme_converts_to_the_sysfs_units() {
        let v = json!({"kdamonds": [{"state": "on", "pid": 1, "contexts": [{
            "ops": "paddr",
            "addr_unit": "1",
            "targets": [{"pid": null, "obsolete": false, "regions": [
                {"start": "4,294,967,296", "end": "5,368,709,120"}]}],
            "intervals": {"sample_us": "5 ms", "aggr_us": "100 ms", "ops_update_us": "1 s"},
            "nr_regions": {"min": "10", "max": "1,000"},
            "schemes": [{
                "action": "lru_prio",
                "access_pattern": {
                    "sz_bytes": {"min": "4.000 KiB", "max": "max"},
                    "nr_accesses": {"min": "20 %", "max": "100 %"},
                    "age": {"min": "5 s", "max": "max"}},
                "apply_interval_us": "0 ns",
                "quotas": {"time_ms": "20 ms", "sz_bytes": "0 B",
                    "reset_interval_ms": "1 s", "goals": [],
                    "weights": {"sz_permil": "0 %", "nr_accesses_permil": "100 %",
                        "age_permil": "100 %"}},
                "watermarks": {"metric": "none", "interval_us": "0 ns",
                    "high_permil": "0 %", "mid_permil": "0 %", "low_permil": "0 %"},
                "filters": [{"filter_type": "memcg", "matching": true, "allow": false,
                    "memcg_path": "/bench", "address_range": null,
                    "damon_target_idx": null, "hugepage_size": null}],
                "stats": {"nr_tried": "0"}}]}]}]});
        let k = parse_kdamonds(&v).unwrap();
        let c = &k[0].contexts[0];
        assert_eq!(c.operations, DamonOps::Paddr);
        assert_eq!(c.targets[0].regions[0].start, 4 << 30);
        assert_eq!(c.monitoring_attrs.intervals.update_us, 1_000_000);
        assert_eq!(c.monitoring_attrs.nr_regions.max, 1000);
        let s = &c.schemes[0];
        assert_eq!(s.action, DamosAction::LruPrio);
        assert_eq!(s.access_pattern.sz.min, 4096);
        // 20 % of 20 samples; 5 s of 100 ms aggregations.
        assert_eq!(s.access_pattern.nr_accesses.min, 4);
        assert_eq!(s.access_pattern.nr_accesses.max, 20);
        assert_eq!(s.access_pattern.age.min, 50);
        assert_eq!(s.access_pattern.age.max, u32::MAX as u64);
        assert_eq!((s.quotas.ms, s.quotas.reset_interval_ms), (20, 1000));
        assert_eq!(s.quotas.weights.nr_accesses_permil, 1000);
        assert_eq!(s.filters[0].memcg_path.as_deref(), Some("/bench"));
        let mut bad = v.clone();
        bad["kdamonds"][0]["contexts"][0]["schemes"][0]["action"] = json!("teleport");
        let e = parse_kdamonds(&bad).unwrap_err().to_string();
        assert!(
            e.contains("kdamonds[0].contexts[0].schemes[0].action"),
            "{e}"
        );
    }
}
