//! The real-kernel side of `mmsim validate`: runs `mmsim-probe` on this machine's kernel
//! inside a memory cgroup created under the runner's own, with the scenario group's
//! limits, and optionally a swap file or zram device; or, for guest cases, through
//! `tools/validate/guest-run.sh` (qemu).
//!
//! Everything it changes is undone by guards (`Drop`), so also after an error, a panic
//! or Ctrl-C: the cgroups are removed, the swap file or zram device is swapped off and
//! removed, the region files the probe created are deleted. It changes no system-wide setting
//! (`drop_caches` is an action, and only with `--drop-caches`).

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::Ordering;
use std::time::Duration;

use anyhow::{anyhow, bail, Context, Result};
use mmsim_core::DeviceKind;
use mmsim_workloads::cgroups::KnobValue;
use mmsim_workloads::Scenario;

use super::counters::KernelRun;
use crate::progress::CANCEL;
use crate::UsageError;

/// What the kernel group gets, from the scenario's workload group.
#[derive(Clone, Debug, PartialEq)]
pub struct GroupSetup {
    /// The scenario's group path (e.g. `/val`), whose mmsim counters are compared.
    pub path: String,
    /// Hard limit, bytes (None: unlimited).
    pub max: Option<u64>,
    /// v1 soft limit, bytes.
    pub soft_limit: Option<u64>,
    /// Swappiness of the group.
    pub swappiness: u32,
    /// Swap: its kind and size in bytes (None: no swap).
    pub swap: Option<(SwapKind, u64)>,
}

/// The swap device the kernel runner sets up.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SwapKind {
    /// A swap file in `--dir` (scenario devices ssd, hdd, custom).
    File,
    /// A zram device added with `/sys/class/zram-control/hot_add` (scenario device zram).
    Zram,
}

fn knob_bytes(v: &KnobValue, field: &str, source: &str) -> Result<Option<u64>> {
    match *v {
        KnobValue::Max => Ok(None),
        KnobValue::Pages(p) => Ok(Some(p * 4096)),
        KnobValue::Number(0) => Ok(Some(0)),
        _ => Err(UsageError(format!(
            "{source}: {field}: give an absolute size for validation (not `{v}`)"
        ))
        .into()),
    }
}

/// Reads the kernel group's setup from the scenario: all workloads in one group
/// declared by a `[[cgroup]]` table, absolute sizes, no knob changes or cycles.
pub fn group_setup(s: &Scenario) -> Result<GroupSetup> {
    let src = &s.source;
    let bad = |m: String| -> anyhow::Error { UsageError(format!("{src}: {m}")).into() };
    let paths: Vec<Option<&String>> = s.workloads.iter().map(|w| w.cgroup.as_ref()).collect();
    let Some(Some(path)) = paths.first().copied() else {
        return Err(bad(
            "workload[0].cgroup: validation cases put every workload in one [[cgroup]] group"
                .into(),
        ));
    };
    if let Some(i) = paths.iter().position(|p| *p != Some(path)) {
        return Err(bad(format!(
            "workload[{i}].cgroup: every workload must be in `{path}` (one kernel group)"
        )));
    }
    if !s.cgroup_changes.is_empty() || !s.cgroup_cycles.is_empty() {
        return Err(bad(
            "cgroup_change/cgroup_cycle: knob changes over time are not reproduced on the kernel"
                .into(),
        ));
    }
    let (i, spec) = s
        .cgroups
        .iter()
        .enumerate()
        .find(|(_, c)| &c.path == path)
        .ok_or_else(|| bad(format!("no [[cgroup]] table for `{path}`")))?;
    if spec.path.matches('/').count() != 1 || spec.path == "/" {
        return Err(bad(format!(
            "cgroup[{i}].path: `{path}` must be a child of the top group"
        )));
    }
    for (field, v) in [("high", &spec.high), ("low", &spec.low), ("min", &spec.min)] {
        if v.is_some() {
            return Err(bad(format!(
                "cgroup[{i}].{field}: not reproduced by the kernel runner (v1 host)"
            )));
        }
    }
    let max = match &spec.max {
        Some(v) => knob_bytes(v, &format!("cgroup[{i}].max"), src)?,
        None => None,
    };
    let soft_limit = match &spec.soft_limit {
        Some(v) => knob_bytes(v, &format!("cgroup[{i}].soft_limit"), src)?,
        None => None,
    };
    let swappiness = match &spec.swappiness {
        Some(KnobValue::Number(n)) => *n as u32,
        Some(v) => {
            return Err(bad(format!(
                "cgroup[{i}].swappiness: `{v}` is not a number"
            )))
        }
        None => s.machine.swappiness,
    };
    let swap = match s.machine.swap.device {
        DeviceKind::None => None,
        kind => {
            let bytes = s
                .machine
                .swap
                .size
                .map(|z| z.0)
                .ok_or_else(|| bad("machine.swap.size: give the swap size".into()))?;
            let k = if kind == DeviceKind::Zram {
                SwapKind::Zram
            } else {
                SwapKind::File
            };
            Some((k, bytes))
        }
    };
    if s.machine.memcg_max.is_some() {
        return Err(bad(
            "machine.memcg_max: use a [[cgroup]] group with `max` instead".into(),
        ));
    }
    Ok(GroupSetup {
        path: path.clone(),
        max,
        soft_limit,
        swappiness,
        swap,
    })
}

/// How the host runner works.
#[derive(Clone, Debug)]
pub struct HostOptions {
    /// The `mmsim-probe` binary.
    pub probe: PathBuf,
    /// Directory for the region files and the swap file.
    pub dir: PathBuf,
    /// `sync; echo 3 > /proc/sys/vm/drop_caches` before each run (machine-wide).
    pub drop_caches: bool,
    /// Capture per-memcg events with bpftrace (this binary).
    pub bpftrace: Option<PathBuf>,
    /// Longest a probe run may take.
    pub timeout: Duration,
    /// Progress messages on stderr.
    pub verbose: bool,
    /// Run the probe with `--anon-read-alloc` (the case's `anon_read_alloc`).
    pub anon_read_alloc: bool,
    /// Wait before each run (the case's `pause_s`).
    pub pause: Duration,
}

fn say(o: &HostOptions, m: &str) {
    if o.verbose {
        eprintln!("validate: {m}");
    }
}

fn write_file(p: &Path, v: &str) -> Result<()> {
    std::fs::write(p, v).with_context(|| format!("writing `{v}` to {}", p.display()))
}

/// `name value` lines → map (non-numeric values skipped).
pub fn kv(text: &str) -> BTreeMap<String, u64> {
    text.lines()
        .filter_map(|l| {
            let mut it = l.split_whitespace();
            let (k, v) = (it.next()?, it.next()?);
            Some((k.to_string(), v.parse().ok()?))
        })
        .collect()
}

fn read_kv(p: &Path) -> Result<BTreeMap<String, u64>> {
    Ok(kv(
        &std::fs::read_to_string(p).with_context(|| format!("reading {}", p.display()))?
    ))
}

/// `some … total=N` and `full … total=N` of a pressure file.
pub fn psi_totals(text: &str) -> (Option<u64>, Option<u64>) {
    let mut out = (None, None);
    for l in text.lines() {
        let total = l
            .split_whitespace()
            .find_map(|t| t.strip_prefix("total="))
            .and_then(|t| t.parse().ok());
        if l.starts_with("some") {
            out.0 = total;
        } else if l.starts_with("full") {
            out.1 = total;
        }
    }
    out
}

fn is_root() -> bool {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("Uid:"))
                .and_then(|l| l.split_whitespace().nth(2).map(|u| u == "0"))
        })
        .unwrap_or(false)
}

/// The memory controller this process is under.
#[derive(Clone, Debug)]
enum Controller {
    /// v1: the runner's own memcg directory.
    V1(PathBuf),
    /// v2: the runner's own cgroup directory (memory enabled in it).
    V2(PathBuf),
}

fn own_cgroups() -> Result<(Controller, Option<PathBuf>)> {
    let text = std::fs::read_to_string("/proc/self/cgroup").context("reading /proc/self/cgroup")?;
    let mut v1 = None;
    let mut v2 = None;
    for l in text.lines() {
        let mut f = l.splitn(3, ':');
        let (_, ctl, path) = (f.next(), f.next().unwrap_or(""), f.next().unwrap_or(""));
        if ctl.split(',').any(|c| c == "memory") {
            v1 = Some(PathBuf::from(format!("/sys/fs/cgroup/memory{path}")));
        } else if ctl.is_empty() {
            v2 = Some(path.to_string());
        }
    }
    let unified = ["/sys/fs/cgroup/unified", "/sys/fs/cgroup"]
        .iter()
        .map(Path::new)
        .find(|p| p.join("cgroup.controllers").exists());
    let v2dir = match (&v2, unified) {
        (Some(p), Some(root)) => Some(root.join(p.trim_start_matches('/'))),
        _ => None,
    };
    if let Some(dir) = v1 {
        if dir.join("memory.limit_in_bytes").exists() {
            return Ok((Controller::V1(dir), v2dir));
        }
    }
    if let Some(dir) = &v2dir {
        let ctl = std::fs::read_to_string(dir.join("cgroup.controllers")).unwrap_or_default();
        if ctl.split_whitespace().any(|c| c == "memory") {
            return Ok((Controller::V2(dir.clone()), None));
        }
    }
    bail!(UsageError(
        "no memory controller: neither a v1 memory cgroup nor a cgroup2 group with the \
         memory controller is available to this process; the kernel runner refuses to run"
            .into()
    ))
}

/// Removes a directory (a cgroup) when dropped, retrying while it drains.
struct DirGuard(PathBuf);

impl Drop for DirGuard {
    fn drop(&mut self) {
        for _ in 0..50 {
            match std::fs::remove_dir(&self.0) {
                Ok(()) => return,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => return,
                Err(_) => std::thread::sleep(Duration::from_millis(100)),
            }
        }
        eprintln!(
            "validate: warning: could not remove {}; remove it by hand (rmdir)",
            self.0.display()
        );
    }
}

/// A swap file or zram device, swapped off and removed when dropped.
struct SwapGuard {
    /// The swap file or `/dev/zramN`.
    file: PathBuf,
    /// The zram device number (None: a file).
    zram: Option<u32>,
    on: bool,
}

const ZRAM_CONTROL: &str = "/sys/class/zram-control";

impl Drop for SwapGuard {
    fn drop(&mut self) {
        if self.on {
            let ok = Command::new("swapoff")
                .arg(&self.file)
                .status()
                .is_ok_and(|s| s.success());
            if !ok {
                eprintln!(
                    "validate: warning: `swapoff {}` failed; swap it off and remove it by hand",
                    self.file.display()
                );
                return;
            }
        }
        match self.zram {
            Some(n) => {
                let _ = std::fs::write(format!("/sys/block/zram{n}/reset"), "1");
                if std::fs::write(Path::new(ZRAM_CONTROL).join("hot_remove"), n.to_string())
                    .is_err()
                {
                    eprintln!(
                        "validate: warning: could not remove zram{n} \
                         (echo {n} > {ZRAM_CONTROL}/hot_remove)"
                    );
                }
            }
            None => {
                let _ = std::fs::remove_file(&self.file);
            }
        }
    }
}

fn run_cmd(cmd: &mut Command) -> Result<()> {
    let out = cmd.output().with_context(|| format!("running {cmd:?}"))?;
    if !out.status.success() {
        bail!(
            "{cmd:?} failed ({}): {}",
            out.status,
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    Ok(())
}

/// A zram device of its own (hot_add; never an existing one), as swap.
fn make_zram(bytes: u64) -> Result<SwapGuard> {
    let n: u32 = std::fs::read_to_string(Path::new(ZRAM_CONTROL).join("hot_add"))
        .with_context(|| format!("reading {ZRAM_CONTROL}/hot_add (is zram built in?)"))?
        .trim()
        .parse()
        .context("parsing the new zram device's number")?;
    let mut g = SwapGuard {
        file: PathBuf::from(format!("/dev/zram{n}")),
        zram: Some(n),
        on: false,
    };
    write_file(
        Path::new(&format!("/sys/block/zram{n}/disksize")),
        &bytes.to_string(),
    )?;
    for _ in 0..50 {
        if g.file.exists() {
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    run_cmd(Command::new("mkswap").arg(&g.file))?;
    run_cmd(Command::new("swapon").arg(&g.file))?;
    g.on = true;
    Ok(g)
}

fn make_swap(dir: &Path, bytes: u64) -> Result<SwapGuard> {
    let file = dir.join("mmsim-validate.swap");
    let mut g = SwapGuard {
        file: file.clone(),
        zram: None,
        on: false,
    };
    let _ = std::fs::remove_file(&file);
    run_cmd(
        Command::new("fallocate")
            .arg("-l")
            .arg(bytes.to_string())
            .arg(&file),
    )?;
    std::fs::set_permissions(&file, std::os::unix::fs::PermissionsExt::from_mode(0o600))
        .with_context(|| format!("chmod 600 {}", file.display()))?;
    run_cmd(Command::new("mkswap").arg(&file))?;
    run_cmd(Command::new("swapon").arg(&file))?;
    g.on = true;
    Ok(g)
}

/// Waits for a child, killing it when Ctrl-C was pressed or after `timeout`.
fn wait_child(
    mut child: Child,
    what: &str,
    timeout: Option<Duration>,
) -> Result<std::process::ExitStatus> {
    let start = std::time::Instant::now();
    loop {
        if let Some(st) = child
            .try_wait()
            .with_context(|| format!("waiting for {what}"))?
        {
            return Ok(st);
        }
        if CANCEL.load(Ordering::Relaxed) {
            let _ = child.kill();
            let _ = child.wait();
            bail!("interrupted (Ctrl-C) during {what}; everything set up was undone");
        }
        if let Some(t) = timeout.filter(|t| start.elapsed() > *t) {
            let _ = child.kill();
            let _ = child.wait();
            bail!(
                "{what} ran longer than {} s (--timeout) and was stopped; everything set \
                 up was undone",
                t.as_secs()
            );
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

const BPF_SCRIPT: &str = "\
tracepoint:memcg:count_memcg_events { @e[args->id, args->item] = sum(args->val); @c[comm, args->id] = count(); }
tracepoint:memcg:mod_memcg_lruvec_state { @s[args->id, args->item] = sum(args->val); }
END { print(@e); print(@s); print(@c); clear(@e); clear(@s); clear(@c); }
";

/// A bpftrace capture of the `memcg:*` tracepoints.
struct Bpf {
    child: Option<Child>,
    out: PathBuf,
    /// tracefs was mounted by us (unmounted when dropped).
    mounted: bool,
}

const TRACEFS: &str = "/sys/kernel/tracing";

impl Bpf {
    fn start(bin: &Path, dir: &Path) -> Result<Bpf> {
        // bpftrace finds tracepoints through tracefs; mount it for the capture if it
        // is not (and unmount it afterwards).
        let mut mounted = false;
        if !Path::new(TRACEFS).join("events").exists() {
            run_cmd(Command::new("mount").args(["-t", "tracefs", "nodev", TRACEFS]))?;
            mounted = true;
        }
        let mut me = Bpf {
            child: None,
            out: dir.join("mmsim-validate-memcg.out"),
            mounted,
        };
        let script = dir.join("mmsim-validate-memcg.bt");
        std::fs::write(&script, BPF_SCRIPT).context("writing the bpftrace script")?;
        let out = me.out.clone();
        let f = std::fs::File::create(&out).context("creating the bpftrace output")?;
        let mut child = Command::new(bin)
            .arg(&script)
            .stdout(f)
            .stderr(Stdio::piped())
            .spawn()
            .with_context(|| format!("starting {}", bin.display()))?;
        // bpftrace prints "Attaching N probes..." on stdout once attached.
        let mut ready = false;
        for _ in 0..200 {
            if std::fs::read_to_string(&out).is_ok_and(|t| t.contains("Attaching")) {
                ready = true;
                break;
            }
            if let Some(st) = child.try_wait()? {
                let mut err = String::new();
                if let Some(mut e) = child.stderr.take() {
                    let _ = std::io::Read::read_to_string(&mut e, &mut err);
                }
                bail!("bpftrace exited ({st}): {}", err.trim());
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        if !ready {
            let _ = child.kill();
            let _ = child.wait();
            bail!("bpftrace did not attach within 20 s");
        }
        me.child = Some(child);
        Ok(me)
    }

    /// Stops the capture (SIGINT) and maps the probe's memcg items to vmstat names.
    fn finish(mut self, comm: &str) -> Result<BTreeMap<String, i64>> {
        let child = self.child.take().expect("running");
        let pid = child.id().to_string();
        let _ = Command::new("kill").arg("-INT").arg(&pid).status();
        let out = child.wait_with_output().context("waiting for bpftrace")?;
        let _ = out;
        let text = std::fs::read_to_string(&self.out).context("reading the bpftrace output")?;
        parse_bpf(&text, comm, &std::fs::read_to_string("/proc/vmstat")?)
    }
}

impl Drop for Bpf {
    fn drop(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
        let _ = std::fs::remove_file(&self.out);
        let _ = std::fs::remove_file(self.out.with_extension("bt"));
        if self.mounted {
            let _ = Command::new("umount").arg(TRACEFS).status();
        }
    }
}

/// Maps bpftrace's `@e[id, item]: v` / `@s[...]` / `@c[comm, id]: n` lines to names:
/// event item i is the i-th /proc/vmstat name from `pgpgin` (enum vm_event_item), state
/// item i the i-th from `nr_inactive_anon` (enum node_stat_item). The memcg is the one
/// `comm` charged most events to.
pub fn parse_bpf(text: &str, comm: &str, vmstat: &str) -> Result<BTreeMap<String, i64>> {
    let names: Vec<&str> = vmstat
        .lines()
        .filter_map(|l| l.split_whitespace().next())
        .collect();
    let pos = |n: &str| names.iter().position(|x| *x == n);
    let ev0 = pos("pgpgin").ok_or_else(|| anyhow!("/proc/vmstat has no pgpgin"))?;
    let st0 =
        pos("nr_inactive_anon").ok_or_else(|| anyhow!("/proc/vmstat has no nr_inactive_anon"))?;
    let st1 = pos("nr_dirty_threshold").unwrap_or(names.len());
    let mut ids: BTreeMap<i64, i64> = BTreeMap::new();
    let mut rows = Vec::new();
    for l in text.lines() {
        let Some(rest) = l.strip_prefix('@') else {
            continue;
        };
        let Some((key, val)) = rest.split_once("]: ") else {
            continue;
        };
        let Some((kind, key)) = key.split_once('[') else {
            continue;
        };
        let Ok(val) = val.trim().parse::<i64>() else {
            continue;
        };
        let Some((a, b)) = key.rsplit_once(", ") else {
            continue;
        };
        if kind == "c" {
            if a == comm {
                if let Ok(id) = b.parse::<i64>() {
                    *ids.entry(id).or_default() += val;
                }
            }
        } else if let (Ok(id), Ok(item)) = (a.parse::<i64>(), b.parse::<usize>()) {
            rows.push((kind.to_string(), id, item, val));
        }
    }
    let Some((&id, _)) = ids.iter().max_by_key(|(_, n)| **n) else {
        bail!("bpftrace saw no memcg event of `{comm}`");
    };
    let mut out = BTreeMap::new();
    for (kind, mid, item, val) in rows {
        if mid != id {
            continue;
        }
        let name = if kind == "e" {
            names.get(ev0 + item).copied()
        } else if kind == "s" && st0 + item < st1 {
            names.get(st0 + item).copied()
        } else {
            None
        };
        if let Some(n) = name {
            out.insert(n.to_string(), val);
        }
    }
    Ok(out)
}

/// `num_online_cpus()` from /sys/devices/system/cpu/online's list (`0-1`, `0,2-3`).
fn online_cpus(list: &str) -> Option<u32> {
    let mut n = 0;
    for part in list.trim().split(',') {
        let (a, b) = part.split_once('-').unwrap_or((part, part));
        let (a, b): (u32, u32) = (a.parse().ok()?, b.parse().ok()?);
        n += b.checked_sub(a)? + 1;
    }
    Some(n)
}

fn probe_report(json: &str) -> Result<BTreeMap<String, f64>> {
    let v: serde_json::Value = serde_json::from_str(json).context("parsing the probe's JSON")?;
    let run = v
        .get("run")
        .and_then(|r| r.as_object())
        .ok_or_else(|| anyhow!("the probe's JSON has no `run`"))?;
    let mut out: BTreeMap<String, f64> = run
        .iter()
        .filter_map(|(k, v)| Some((k.clone(), v.as_f64()?)))
        .collect();
    // What the probe saw of its MADV_COLLAPSE calls (present only when it made some).
    for k in ["collapse_failed", "anon_huge_kb", "collapse_errno"] {
        if let Some(x) = v.get(k).and_then(|x| x.as_f64()) {
            out.insert(k.to_string(), x);
        }
    }
    // A touch's `snapshots`: `anon_huge_kb@1`, … and `snapshot_s@1`, … (1-based).
    for k in ["anon_huge_kb_at", "snapshot_s"] {
        let name = k.trim_end_matches("_at");
        for (i, x) in v
            .get(k)
            .and_then(|x| x.as_array())
            .into_iter()
            .flatten()
            .enumerate()
        {
            if let Some(x) = x.as_f64() {
                out.insert(format!("{name}@{}", i + 1), x);
            }
        }
    }
    Ok(out)
}

/// Runs the case `runs` times on this machine's kernel.
pub fn run_host(
    scenario_path: &Path,
    setup: &GroupSetup,
    runs: u32,
    o: &HostOptions,
) -> Result<Vec<KernelRun>> {
    if !is_root() {
        bail!(UsageError(
            "the kernel runner needs root (it creates memory cgroups and swap); \
             use --from-results to compare recorded kernel results"
                .into()
        ));
    }
    let (ctl, psi_parent) = own_cgroups()?;
    if !o.probe.exists() {
        bail!(UsageError(format!(
            "{}: no such probe binary (cargo build --release -p mmsim-probe, or --probe)",
            o.probe.display()
        )));
    }
    std::fs::create_dir_all(&o.dir).with_context(|| format!("creating {}", o.dir.display()))?;
    let scen = scenario_path
        .canonicalize()
        .with_context(|| format!("{}", scenario_path.display()))?;

    // Region files, created outside the group.
    say(o, &format!("preparing the files in {}", o.dir.display()));
    let out = Command::new(&o.probe)
        .arg(&scen)
        .arg("--dir")
        .arg(&o.dir)
        .args(["--prepare", "-q"])
        .output()
        .context("running mmsim-probe --prepare")?;
    if !out.status.success() {
        bail!(
            "mmsim-probe --prepare failed: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    let prep: serde_json::Value = serde_json::from_slice(&out.stdout)?;
    let files: Vec<PathBuf> = prep["workloads"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|w| {
            w["file_state"]
                .as_str()
                .is_some_and(|s| s.starts_with("created"))
        })
        .filter_map(|w| w["file"].as_str().map(PathBuf::from))
        .collect();
    struct Files(Vec<PathBuf>);
    impl Drop for Files {
        fn drop(&mut self) {
            for f in &self.0 {
                let _ = std::fs::remove_file(f);
            }
        }
    }
    let _files = Files(files);

    let _swap = match setup.swap {
        Some((SwapKind::File, bytes)) => {
            say(o, &format!("swap file of {} MiB", bytes >> 20));
            Some(make_swap(&o.dir, bytes)?)
        }
        Some((SwapKind::Zram, bytes)) => {
            let g = make_zram(bytes)?;
            say(
                o,
                &format!("{} of {} MiB as swap", g.file.display(), bytes >> 20),
            );
            Some(g)
        }
        None => None,
    };

    let mut results = Vec::new();
    for run in 0..runs {
        if CANCEL.load(Ordering::Relaxed) {
            bail!("interrupted (Ctrl-C); everything set up was undone");
        }
        if o.drop_caches {
            run_cmd(&mut Command::new("sync"))?;
            write_file(Path::new("/proc/sys/vm/drop_caches"), "3")?;
        }
        if !o.pause.is_zero() {
            say(
                o,
                &format!("waiting {} s (the case's pause_s)", o.pause.as_secs()),
            );
            let end = std::time::Instant::now() + o.pause;
            while std::time::Instant::now() < end && !CANCEL.load(Ordering::Relaxed) {
                std::thread::sleep(Duration::from_millis(100));
            }
            if CANCEL.load(Ordering::Relaxed) {
                bail!("interrupted (Ctrl-C); everything set up was undone");
            }
        }
        let name = format!("mmsim-validate-{}-{run}", std::process::id());
        let (memdir, v1) = match &ctl {
            Controller::V1(d) => (d.join(&name), true),
            Controller::V2(d) => (d.join(&name), false),
        };
        std::fs::create_dir(&memdir).with_context(|| format!("mkdir {}", memdir.display()))?;
        let _g1 = DirGuard(memdir.clone());
        let psidir = match (&psi_parent, v1) {
            (Some(p), true) => {
                let d = p.join(&name);
                std::fs::create_dir(&d).with_context(|| format!("mkdir {}", d.display()))?;
                Some(d)
            }
            (_, false) => Some(memdir.clone()),
            _ => None,
        };
        let _g2 = psidir.clone().filter(|_| v1).map(DirGuard);
        if v1 {
            write_file(
                &memdir.join("memory.limit_in_bytes"),
                &setup.max.map_or("-1".into(), |b| b.to_string()),
            )?;
            if let Some(s) = setup.soft_limit {
                write_file(&memdir.join("memory.soft_limit_in_bytes"), &s.to_string())?;
            }
            write_file(
                &memdir.join("memory.swappiness"),
                &setup.swappiness.to_string(),
            )?;
        } else {
            write_file(
                &memdir.join("memory.max"),
                &setup.max.map_or("max".into(), |b| b.to_string()),
            )?;
            if setup.soft_limit.is_some() {
                bail!(UsageError("soft_limit needs a v1 memory controller".into()));
            }
        }
        let stat0 = read_kv(&memdir.join("memory.stat"))?;
        let vm0 = read_kv(Path::new("/proc/vmstat"))?;
        let psi0 = psidir
            .as_ref()
            .and_then(|d| std::fs::read_to_string(d.join("memory.pressure")).ok())
            .map(|t| psi_totals(&t));
        let bpf = match &o.bpftrace {
            Some(b) => Some(Bpf::start(b, &o.dir)?),
            None => None,
        };
        let out_json = o.dir.join(format!("{name}.json"));
        let mut procs = vec![memdir.join("cgroup.procs")];
        if v1 {
            procs.extend(psidir.iter().map(|d| d.join("cgroup.procs")));
        }
        let mut script = String::new();
        for i in 0..procs.len() {
            script.push_str(&format!("echo $$ > \"${}\" || exit 97; ", i + 1));
        }
        script.push_str(&format!("shift {}; exec \"$@\"", procs.len()));
        say(
            o,
            &format!("run {}/{runs} in {}", run + 1, memdir.display()),
        );
        let child = Command::new("sh")
            .arg("-c")
            .arg(&script)
            .arg("sh")
            .args(&procs)
            .arg(&o.probe)
            .arg(&scen)
            .arg("--dir")
            .arg(&o.dir)
            .args(o.anon_read_alloc.then_some("--anon-read-alloc"))
            // Think events come only from a touch's `snapshots` here (the plan
            // rejects start times): sleeping leaves the CPUs to the kernel's own
            // threads (khugepaged runs at nice 19), as khugepaged.c's usleep does.
            .args(["--think", "sleep"])
            .args(["--reuse", "-q", "--out"])
            .arg(&out_json)
            .stdin(Stdio::null())
            .spawn()
            .context("starting the probe")?;
        let st = wait_child(child, "the probe run", Some(o.timeout))?;
        let events = match bpf {
            Some(b) => b.finish("mmsim-probe")?,
            None => BTreeMap::new(),
        };
        if !st.success() {
            bail!("the probe run failed ({st}) in {}", memdir.display());
        }
        let json = std::fs::read_to_string(&out_json)
            .with_context(|| format!("reading {}", out_json.display()))?;
        let _ = std::fs::remove_file(&out_json);
        let stat1 = read_kv(&memdir.join("memory.stat"))?;
        let vm1 = read_kv(Path::new("/proc/vmstat"))?;
        let psi1 = psidir
            .as_ref()
            .and_then(|d| std::fs::read_to_string(d.join("memory.pressure")).ok())
            .map(|t| psi_totals(&t));
        let delta = |a: &BTreeMap<String, u64>, b: &BTreeMap<String, u64>| {
            b.iter()
                .map(|(k, v)| (k.clone(), v.saturating_sub(a.get(k).copied().unwrap_or(0))))
                .collect::<BTreeMap<_, _>>()
        };
        let mut memcg = delta(&stat0, &stat1);
        for k in [
            "cache",
            "rss",
            "mapped_file",
            "swap",
            "anon",
            "file",
            "inactive_anon",
            "active_anon",
            "inactive_file",
            "active_file",
        ] {
            if let Some(v) = stat1.get(k) {
                memcg.insert(k.to_string(), *v);
            }
        }
        if v1 {
            // The group's kernel memory (the v1 `kmem` page counter of
            // `memcg_account_kmem`): at the end (page-cache xarray nodes and
            // what else outlives the probe) and its peak (with the probe's
            // page tables and task structures while it ran). Bytes.
            for f in ["kmem.usage_in_bytes", "kmem.max_usage_in_bytes"] {
                if let Ok(t) = std::fs::read_to_string(memdir.join(format!("memory.{f}"))) {
                    if let Ok(v) = t.trim().parse::<u64>() {
                        memcg.insert(f.replace('.', "_"), v);
                    }
                }
            }
        }
        let vmstat = delta(&vm0, &vm1)
            .into_iter()
            .filter(|(k, v)| {
                *v != 0
                    && (k.starts_with("pswp")
                        || k == "workingset_nodereclaim"
                        || k.starts_with("swp")
                        || k.starts_with("swap_ra")
                        || k.starts_with("zswp")
                        || k.starts_with("thp_collapse_alloc"))
            })
            .collect();
        let (psi_some_us, psi_full_us) = match (psi0, psi1) {
            (Some(a), Some(b)) => (
                b.0.zip(a.0).map(|(b, a)| b.saturating_sub(a)),
                b.1.zip(a.1).map(|(b, a)| b.saturating_sub(a)),
            ),
            _ => (None, None),
        };
        let mut probe = probe_report(&json)?;
        // The update threshold of the 6.12+ memcg statistics flush counts them.
        let cpus = std::fs::read_to_string("/sys/devices/system/cpu/online");
        if let Some(n) = cpus.ok().as_deref().and_then(online_cpus) {
            probe.insert("online_cpus".into(), f64::from(n));
        }
        let r = KernelRun {
            memcg,
            memcg_events: events,
            vmstat,
            probe,
            psi_some_us,
            psi_full_us,
            damon: BTreeMap::new(),
            thp: BTreeMap::new(),
            ..KernelRun::default()
        };
        say(
            o,
            &format!(
                "  wall {:.2} s, inblock {}, pgmajfault {}, refault_file {}, refault_anon {}",
                r.probe.get("wall_s").copied().unwrap_or(0.0),
                r.probe.get("inblock").copied().unwrap_or(0.0),
                r.memcg.get("pgmajfault").copied().unwrap_or(0),
                r.memcg.get("workingset_refault_file").copied().unwrap_or(0),
                r.memcg.get("workingset_refault_anon").copied().unwrap_or(0),
            ),
        );
        results.push(r);
    }
    Ok(results)
}

/// Runs a guest case through `script` (tools/validate/guest-run.sh): it boots the
/// guest kernel under qemu `runs` times and prints one JSON object per run (a
/// [`KernelRun`] plus `kernel_release`) on lines starting with `MMV-RUN `.
pub fn run_guest(
    script: &Path,
    scenario_path: &Path,
    kernel_package: Option<&str>,
    lru_gen: bool,
    runs: u32,
    probe: &Path,
    verbose: bool,
) -> Result<(Vec<KernelRun>, String)> {
    if !script.exists() {
        bail!(UsageError(format!(
            "{}: no guest runner script (--guest-script)",
            script.display()
        )));
    }
    let mut cmd = Command::new("bash");
    if let Some(k) = kernel_package {
        cmd.env("KPKG", k);
    }
    let mut child = cmd
        .arg(script)
        .arg(scenario_path)
        .env("LRUGEN", if lru_gen { "y" } else { "0" })
        .env("RUNS", runs.to_string())
        .env("PROBE", probe)
        .stdout(Stdio::piped())
        .stdin(Stdio::null())
        .spawn()
        .with_context(|| format!("starting {}", script.display()))?;
    let stdout = child.stdout.take().expect("piped");
    let mut out = Vec::new();
    let mut release = String::new();
    for line in BufReader::new(stdout).lines() {
        let line = line?;
        if let Some(j) = line.strip_prefix("MMV-RUN ") {
            let v: serde_json::Value = serde_json::from_str(j)
                .with_context(|| format!("parsing the guest's line `{line}`"))?;
            if let Some(r) = v["kernel_release"].as_str() {
                release = r.to_string();
            }
            // lru_gen/enabled as the guest read it back: 0x0000 off, else a bit mask
            // of the enabled components ("absent" without CONFIG_LRU_GEN).
            let lru = v["lru_gen"].as_str().unwrap_or("absent");
            let on = lru != "absent" && !lru.trim_start_matches("0x").trim_matches('0').is_empty();
            if on != lru_gen {
                let _ = child.kill();
                bail!(
                    "the guest's lru_gen/enabled reads `{lru}`, but the case needs MGLRU {}",
                    if lru_gen { "on" } else { "off" }
                );
            }
            out.push(serde_json::from_value::<KernelRun>(v["run"].clone())?);
        } else if verbose {
            eprintln!("guest: {line}");
        }
        if CANCEL.load(Ordering::Relaxed) {
            let _ = child.kill();
        }
    }
    let st = wait_child(child, "the guest runner", None)?;
    if !st.success() || out.len() != runs as usize {
        bail!(
            "the guest runner {} ended with {st} after {} of {runs} runs",
            script.display(),
            out.len()
        );
    }
    Ok((out, release))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bpf_lines_map_to_vmstat_names() {
        let vm = "nr_free_pages 1\nnr_inactive_anon 2\nnr_active_anon 3\nnr_dirty_threshold 4\npgpgin 5\npgpgout 6\npgscan 7\n";
        let t = "Attaching 3 probes...\n@e[12, 0]: 100\n@e[12, 2]: 40\n@e[13, 0]: 9\n@s[12, 1]: -3\n@c[mmsim-probe, 12]: 50\n@c[mmsim-probe, 13]: 2\n@c[sh, 13]: 99\n";
        let m = parse_bpf(t, "mmsim-probe", vm).unwrap();
        assert_eq!(m.get("pgpgin"), Some(&100));
        assert_eq!(m.get("pgscan"), Some(&40));
        assert_eq!(m.get("nr_active_anon"), Some(&-3));
        assert_eq!(m.len(), 3);
        assert_eq!(
            parse_bpf(t, "nobody", vm).unwrap_err().to_string(),
            "bpftrace saw no memcg event of `nobody`"
        );
    }

    #[test]
    fn psi_totals_parse() {
        let t = "some avg10=0.00 avg60=0.00 avg300=0.00 total=1234\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=99\n";
        assert_eq!(psi_totals(t), (Some(1234), Some(99)));
    }

    #[test]
    fn online_cpu_lists_count() {
        assert_eq!(online_cpus("0-1\n"), Some(2));
        assert_eq!(online_cpus("0"), Some(1));
        assert_eq!(online_cpus("0,2-3,8"), Some(4));
        assert_eq!(online_cpus("3-1"), None);
        assert_eq!(online_cpus(""), None);
    }
}
