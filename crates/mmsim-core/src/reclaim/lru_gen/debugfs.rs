//! The lru_gen control files (mm/vmscan.c, v6.1 and v6.14):
//! /sys/kernel/debug/lru_gen `+`/`-` commands and /sys/kernel/mm/lru_gen
//! writes.
//!
//! Models `lru_gen_seq_write` (parsing, [`parse_lru_gen_write`]),
//! `run_aging`, `run_eviction`, `run_cmd`, `enabled_store`
//! (`lru_gen_set_enabled`, `lru_gen_change_state`) and `min_ttl_ms_store`,
//! and writes scheduled during a run.
//!
//! A write's commands share one page-table walker: `lru_gen_seq_write()`
//! allocates it before the first command (6.1.176 `set_mm_walk(NULL)`,
//! 6.12.107 `set_mm_walk(NULL, true)`) and frees it after the last
//! (`clear_mm_walk()`), so a look-around during `-`'s eviction acts as
//! kswapd's ([`ScanControl::mm_walk`]). Its `can_swap` (6.1) starts as the
//! zeroed allocation's `false` and is set by an aging that walks page tables.

use super::*;

/// `get_swappiness()`-level check of a swappiness value for commands.
fn check_swappiness(s: u32) -> Result<(), String> {
    if s > SWAPPINESS_ANON_ONLY {
        return Err(format!(
            "swappiness {s} is out of range [0, 201] (201 = anon only)"
        ));
    }
    Ok(())
}

/// The walker `lru_gen_seq_write()` allocates for a write
/// ([`ScanControl::mm_walk`]): zeroed, so 6.1's `walk->can_swap` is false
/// until an aging sets it.
pub(super) const DEBUGFS_WALK: Option<bool> = Some(false);

impl Sim {
    /// The debugfs `+ memcg_id node_id seq [swappiness [force_scan]]`
    /// command (`run_aging`): make generation `seq` + 1 in group `memcg`.
    /// Errors as the kernel's EINVAL/EEXIST would, with a reason.
    pub fn lru_gen_run_aging(
        &mut self,
        memcg: MemcgId,
        seq: u64,
        swappiness: Option<u32>,
        force_scan: bool,
    ) -> Result<(), String> {
        let mut walk = DEBUGFS_WALK;
        self.lru_gen_run_aging_with(memcg, seq, swappiness, force_scan, &mut walk)
    }

    /// [`Sim::lru_gen_run_aging`] with the write's walker `walk`
    /// (`Some(walk->can_swap)`), which the aging's page-table walk updates.
    fn lru_gen_run_aging_with(
        &mut self,
        memcg: MemcgId,
        seq: u64,
        swappiness: Option<u32>,
        force_scan: bool,
        walk: &mut Option<bool>,
    ) -> Result<(), String> {
        if !matches!(self.policy, Policy::Mglru(_)) {
            return Err("lru_gen: the policy is not mglru".into());
        }
        if memcg as usize >= self.memcgs.len() {
            return Err(format!("lru_gen: no memcg {memcg}"));
        }
        let max_seq = self.lrugen(memcg).max_seq;
        if seq > max_seq {
            return Err(format!(
                "lru_gen +: seq {seq} is beyond max_seq {max_seq} (EINVAL)"
            ));
        }
        let mut sc = ScanControl::new(Reclaimer::Memcg, 0, self.clock);
        sc.target = memcg;
        sc.memcg = memcg;
        sc.mm_walk = *walk;
        let sw = match swappiness {
            Some(s) => {
                check_swappiness(s)?;
                s
            }
            None => self.lru_gen_swappiness(memcg, &sc),
        };
        let aged = self.try_to_inc_max_seq(memcg, max_seq, sw, force_scan, &mut sc);
        *walk = sc.mm_walk;
        if !aged {
            return Err(format!(
                "lru_gen +: no new generation after {max_seq} (EEXIST)"
            ));
        }
        Ok(())
    }

    /// The debugfs `- memcg_id node_id seq [swappiness [nr_to_reclaim]]`
    /// command (`run_eviction`): evict generations up to `seq`. Returns the
    /// pages reclaimed.
    pub fn lru_gen_run_eviction(
        &mut self,
        memcg: MemcgId,
        seq: u64,
        swappiness: Option<u32>,
        nr_to_reclaim: Option<u64>,
    ) -> Result<u64, String> {
        let mut walk = DEBUGFS_WALK;
        self.lru_gen_run_eviction_with(memcg, seq, swappiness, nr_to_reclaim, &mut walk)
    }

    /// [`Sim::lru_gen_run_eviction`] with the write's walker `walk`: a
    /// look-around during the eviction finds it in
    /// `current->reclaim_state->mm_walk` (v6.1 and v6.12 `run_eviction()`
    /// under `lru_gen_seq_write()`'s `set_mm_walk()`).
    pub(super) fn lru_gen_run_eviction_with(
        &mut self,
        memcg: MemcgId,
        seq: u64,
        swappiness: Option<u32>,
        nr_to_reclaim: Option<u64>,
        walk: &mut Option<bool>,
    ) -> Result<u64, String> {
        if !matches!(self.policy, Policy::Mglru(_)) {
            return Err("lru_gen: the policy is not mglru".into());
        }
        if memcg as usize >= self.memcgs.len() {
            return Err(format!("lru_gen: no memcg {memcg}"));
        }
        let max_seq = self.lrugen(memcg).max_seq;
        if seq + MIN_NR_GENS > max_seq {
            return Err(format!(
                "lru_gen -: seq {seq} + {MIN_NR_GENS} is beyond max_seq {max_seq} (EINVAL)"
            ));
        }
        let mut sc = ScanControl::new(
            Reclaimer::Memcg,
            nr_to_reclaim.unwrap_or(u64::MAX),
            self.clock,
        );
        sc.target = memcg;
        sc.memcg = memcg;
        sc.priority = 0;
        sc.mm_walk = *walk;
        let sw = match swappiness {
            Some(s) => {
                check_swappiness(s)?;
                s
            }
            None => self.lru_gen_swappiness(memcg, &sc),
        };
        while self.lrugen(memcg).evictable_min_seq(sw) <= seq && sc.nr_reclaimed < sc.nr_to_reclaim
        {
            if self.evict_folios(memcg, &mut sc, sw) == 0 {
                break;
            }
        }
        *walk = sc.mm_walk;
        self.clock += sc.cpu_ns;
        Ok(sc.nr_reclaimed)
    }
}

/// Which debugfs command.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum LruGenOp {
    /// `+`: aging (`run_aging`), with `force_scan`.
    Age {
        /// Walk every PTE table, not only those in the Bloom filter (default true).
        force_scan: bool,
    },
    /// `-`: eviction (`run_eviction`) of up to `nr_to_reclaim` pages.
    Evict {
        /// Pages to reclaim at most (default: unlimited).
        nr_to_reclaim: Option<u64>,
    },
}

/// One command written to /sys/kernel/debug/lru_gen.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct LruGenCommand {
    /// `+` or `-`.
    pub op: LruGenOp,
    /// The group: a `mem_cgroup_id` (1 = the top group) or a cgroup path.
    pub memcg: String,
    /// Node id (only node 0 exists).
    pub node: u32,
    /// The seq argument.
    pub seq: u64,
    /// Swappiness 0..=201, or the group's.
    pub swappiness: Option<u32>,
    /// The command as written.
    pub text: String,
}

/// Parses what a write to /sys/kernel/debug/lru_gen holds (`lru_gen_seq_write`):
/// commands separated by `,`, `;` or newlines, each
/// `+ memcg_id node_id seq [swappiness [force_scan]]` or
/// `- memcg_id node_id seq [swappiness [nr_to_reclaim]]`. `memcg_id` may also be a
/// cgroup path (`/`, `/a/b`). The error says what is wrong and what is allowed.
pub(crate) fn parse_lru_gen_write(text: &str) -> Result<Vec<LruGenCommand>, String> {
    let mut out = Vec::new();
    for cmd in text.split([',', ';', '\n']) {
        let cmd = cmd.trim();
        if cmd.is_empty() {
            continue;
        }
        let f: Vec<&str> = cmd.split_whitespace().collect();
        let usage = "expected `+ memcg_id node_id seq [swappiness [force_scan]]` or \
                     `- memcg_id node_id seq [swappiness [nr_to_reclaim]]`";
        if f.len() < 4 || f.len() > 6 {
            return Err(format!("`{cmd}`: {usage}"));
        }
        let num = |s: &str, what: &str| {
            s.parse::<u64>()
                .map_err(|_| format!("`{cmd}`: {what} `{s}` is not a number"))
        };
        let memcg = f[1].to_string();
        if !memcg.starts_with('/') {
            num(&memcg, "memcg_id")?;
        }
        let node = num(f[2], "node_id")?;
        if node != 0 {
            return Err(format!("`{cmd}`: node_id {node}: only node 0 exists"));
        }
        let seq = num(f[3], "seq")?;
        let swappiness = match f.get(4) {
            Some(s) => {
                let v = num(s, "swappiness")?;
                if v > SWAPPINESS_ANON_ONLY as u64 {
                    return Err(format!(
                        "`{cmd}`: swappiness {v} is out of range [0, 201] (201 = anon only)"
                    ));
                }
                Some(v as u32)
            }
            None => None,
        };
        let extra = f.get(5).map(|s| num(s, "the last field")).transpose()?;
        let op = match f[0] {
            "+" => LruGenOp::Age {
                force_scan: extra.is_none_or(|v| v != 0),
            },
            "-" => LruGenOp::Evict {
                nr_to_reclaim: extra,
            },
            o => return Err(format!("`{cmd}`: unknown command `{o}`; {usage}")),
        };
        out.push(LruGenCommand {
            op,
            memcg,
            node: node as u32,
            seq,
            swappiness,
            text: cmd.to_string(),
        });
    }
    if out.is_empty() {
        return Err("no command; expected `+ ...` or `- ...`".into());
    }
    Ok(out)
}

/// /sys/kernel/debug/lru_gen.
pub const LRU_GEN_DEBUG: &str = "/sys/kernel/debug/lru_gen";
/// /sys/kernel/mm/lru_gen/enabled.
pub(crate) const LRU_GEN_ENABLED: &str = "/sys/kernel/mm/lru_gen/enabled";
/// /sys/kernel/mm/lru_gen/min_ttl_ms.
pub(crate) const LRU_GEN_MIN_TTL: &str = "/sys/kernel/mm/lru_gen/min_ttl_ms";

/// A parsed write to one of the lru_gen files.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LruGenFileWrite {
    /// Commands for /sys/kernel/debug/lru_gen.
    Debug(Vec<LruGenCommand>),
    /// New capabilities for /sys/kernel/mm/lru_gen/enabled.
    Enabled(u32),
    /// New /sys/kernel/mm/lru_gen/min_ttl_ms.
    MinTtlMs(u64),
}

/// Parses a write of `text` to the lru_gen file `path`: `enabled` takes
/// `y`/`Y` (all), `n`/`N` (none) or a number (decimal or 0x hex) in
/// 0..=7 (`enabled_store`); `min_ttl_ms` a number of ms in 0..=2^32−1
/// (`min_ttl_ms_store`); the debugfs file commands
/// (`parse_lru_gen_write`).
pub fn parse_lru_gen_file_write(path: &str, text: &str) -> Result<LruGenFileWrite, String> {
    let t = text.trim();
    let number = |t: &str| match t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
        Some(h) => u64::from_str_radix(h, 16).ok(),
        None => t.parse::<u64>().ok(),
    };
    match path {
        LRU_GEN_DEBUG => parse_lru_gen_write(text).map(LruGenFileWrite::Debug),
        LRU_GEN_ENABLED => {
            let caps = match t {
                "y" | "Y" => Some(7),
                "n" | "N" => Some(0),
                _ => number(t),
            };
            match caps {
                Some(c) if c <= 7 => Ok(LruGenFileWrite::Enabled(c as u32)),
                _ => Err(format!(
                    "`{t}`: expected y, n or a number in [0, 0x7] (bits: 0 core, 1 mm walk, 2 non-leaf young)"
                )),
            }
        }
        LRU_GEN_MIN_TTL => match number(t) {
            Some(ms) if ms <= u32::MAX as u64 => Ok(LruGenFileWrite::MinTtlMs(ms)),
            _ => Err(format!("`{t}`: expected milliseconds in [0, 4294967295]")),
        },
        _ => Err(format!(
            "unknown file `{path}`; allowed: {LRU_GEN_DEBUG}, {LRU_GEN_ENABLED}, {LRU_GEN_MIN_TTL}"
        )),
    }
}

/// A debugfs write run during the simulation, and what it returned.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LruGenWriteLog {
    /// When, simulated seconds.
    pub t: f64,
    /// The command.
    pub command: String,
    /// `ok` (for `-`: pages reclaimed), or the error.
    pub result: String,
}

impl Sim {
    /// Resolves a command's group: a `mem_cgroup_id` or a path.
    pub(super) fn lru_gen_memcg(&self, c: &LruGenCommand) -> Result<MemcgId, String> {
        if c.memcg.starts_with('/') {
            return self
                .memcg_by_path(&c.memcg)
                .ok_or_else(|| format!("`{}`: no cgroup {}", c.text, c.memcg));
        }
        let id: u64 = c
            .memcg
            .parse()
            .map_err(|_| format!("`{}`: bad memcg_id", c.text))?;
        self.memcgs
            .iter()
            .position(|g| g.id as u64 == id)
            .map(|i| i as MemcgId)
            .ok_or_else(|| format!("`{}`: no memcg with id {id}", c.text))
    }

    /// Runs one parsed command now, with its write's walker `walk`; the
    /// result as the log shows it.
    pub(crate) fn lru_gen_run_command(
        &mut self,
        c: &LruGenCommand,
        walk: &mut Option<bool>,
    ) -> Result<String, String> {
        let m = self.lru_gen_memcg(c)?;
        match c.op {
            LruGenOp::Age { force_scan } => self
                .lru_gen_run_aging_with(m, c.seq, c.swappiness, force_scan, walk)
                .map(|()| "ok".to_string()),
            LruGenOp::Evict { nr_to_reclaim } => self
                .lru_gen_run_eviction_with(m, c.seq, c.swappiness, nr_to_reclaim, walk)
                .map(|n| format!("ok, {n} pages reclaimed")),
        }
    }

    /// Schedules a write of `text` to the lru_gen file `path` ([`LRU_GEN_DEBUG`],
    /// `LRU_GEN_ENABLED`, `LRU_GEN_MIN_TTL`) at simulated time `at` (ns):
    /// parsed and its groups checked now; run when the workload clock reaches
    /// `at`, its results logged in the report (a command's error, like the
    /// kernel's EINVAL/EEXIST to the writer, does not stop the run).
    pub fn schedule_lru_gen_write(
        &mut self,
        at: u64,
        path: &str,
        text: &str,
    ) -> Result<(), SimError> {
        if self.cfg.policy.name != crate::config::PolicyName::Mglru {
            return Err(SimError::Setup(format!("{path}: the policy is not mglru")));
        }
        let w = parse_lru_gen_file_write(path, text).map_err(SimError::Setup)?;
        if let LruGenFileWrite::Debug(cmds) = &w {
            for c in cmds {
                self.lru_gen_memcg(c).map_err(SimError::Setup)?;
            }
        }
        let i = self.lru_gen.pending.partition_point(|x| x.0 > at);
        self.lru_gen.pending.insert(i, (at, w));
        let next = self.next_lru_gen_write();
        self.timers.set(crate::timer::TimerKind::LruGenWrite, next);
        Ok(())
    }

    /// Runs the lru_gen writes due by `now` (from its timer).
    pub(crate) fn run_lru_gen_writes(&mut self, now: u64) {
        while self.lru_gen.pending.last().is_some_and(|w| w.0 <= now) {
            let (_, w) = self.lru_gen.pending.pop().expect("checked");
            let t = self.clock as f64 / 1e9;
            match w {
                LruGenFileWrite::Debug(cmds) => {
                    // One walker for the whole write.
                    let mut walk = DEBUGFS_WALK;
                    for c in cmds {
                        let result = match self.lru_gen_run_command(&c, &mut walk) {
                            Ok(r) => r,
                            Err(e) => format!("error: {e}"),
                        };
                        self.lru_gen.log.push(LruGenWriteLog {
                            t,
                            command: c.text.clone(),
                            result,
                        });
                    }
                }
                LruGenFileWrite::Enabled(caps) => {
                    let moved = self.lru_gen_set_enabled(caps);
                    self.lru_gen.log.push(LruGenWriteLog {
                        t,
                        command: format!("{LRU_GEN_ENABLED} = {caps:#06x}"),
                        result: format!("ok, {moved} folios moved"),
                    });
                }
                LruGenFileWrite::MinTtlMs(ms) => {
                    self.lru_gen.min_ttl_ns = ms * 1_000_000;
                    self.lru_gen.log.push(LruGenWriteLog {
                        t,
                        command: format!("{LRU_GEN_MIN_TTL} = {ms}"),
                        result: "ok".into(),
                    });
                }
            }
        }
    }

    /// A write to /sys/kernel/mm/lru_gen/enabled (`enabled_store`): sets the
    /// capabilities; toggling the core bit switches the policy and moves
    /// every evictable folio (`lru_gen_change_state`): on, `fill_evictable`
    /// from the classic lists into generations by the insertion rule (active
    /// folios young); off, `drain_evictable` back onto the classic lists
    /// (folios of the two youngest generations active). Returns the number
    /// of folios moved.
    pub fn lru_gen_set_enabled(&mut self, caps: u32) -> u64 {
        let was = matches!(self.policy, Policy::Mglru(_));
        let core = caps & LRU_GEN_CORE != 0;
        self.lru_gen.enabled = caps;
        let mut moved = 0;
        if core && !was {
            self.policy = Policy::Mglru(self.lru_gen.version);
            for m in 0..self.memcgs.len() {
                for lru in LruList::EVICTABLE {
                    while let Some(f) =
                        self.memcgs[m].lruvec.lists[lru as usize].pop_tail(&mut self.folios)
                    {
                        self.lru_gen_add_folio(f, false);
                        moved += 1;
                    }
                }
            }
        } else if !core && was {
            for m in 0..self.memcgs.len() {
                for gen in 0..MAX_NR_GENS as usize {
                    for ty in [ANON, FILE] {
                        loop {
                            let f = self.memcgs[m].lruvec.lrugen.lists[gen][ty].tail;
                            if f == NIL {
                                break;
                            }
                            self.lru_gen_del_folio(f, false);
                            let lru = LruList::of_flags(self.folios[f].flags);
                            self.memcgs[m].lruvec.lists[lru as usize].push_head(
                                &mut self.folios,
                                f,
                                lru as u8,
                            );
                            moved += 1;
                        }
                    }
                }
            }
            self.policy = Policy::Classic(crate::sim::ClassicRules::current(
                self.cfg.policy.cost_variant,
            ));
        }
        moved
    }

    /// When the next scheduled debugfs write is due.
    pub(crate) fn next_lru_gen_write(&self) -> Option<u64> {
        self.lru_gen.pending.last().map(|w| w.0)
    }
}
