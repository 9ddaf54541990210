//! What a run reports about the multi-gen LRU: the
//! /sys/kernel/debug/lru_gen_full view (`lru_gen_seq_show`, v6.1 and
//! v6.14) per group, its samples over time, and [`LruGenReport`].

use super::*;

/// Walk statistics (the `lru_gen_full` walker line) and other counters.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct LruGenStats {
    /// `inc_max_seq` calls that made a generation.
    pub aging: u64,
    /// Page-table walk rounds (`walk_mm` over a group's mms).
    pub walks: u64,
    /// PTEs examined by the walk (`MM_LEAF_TOTAL`).
    pub leaf_total: u64,
    /// Young PTEs found by the walk (`MM_LEAF_YOUNG`).
    pub leaf_young: u64,
    /// PTE tables skipped because the Bloom filter did not hold them.
    pub tables_skipped: u64,
    /// PTE tables added to a Bloom filter (`MM_NONLEAF_ADDED`).
    pub tables_added: u64,
    /// `lru_gen_look_around` calls (young target PTEs).
    pub look_around: u64,
    /// Young neighbour PTEs look-around found.
    pub look_around_young: u64,
    /// Folios promoted in place (`folio_update_gen` moved the generation).
    pub promoted: u64,
    /// Folios moved to min_seq + 1 by tier protection (sort_folio).
    pub tier_protected: u64,
    /// OOM kills invoked by `lru_gen_age_node` for `min_ttl_ms`.
    pub min_ttl_oom: u64,
}

/// One generation in the lru_gen debugfs view.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LruGenGen {
    /// Sequence number.
    pub seq: u64,
    /// Birth time (`timestamps[]`), ms of simulated time.
    pub birth_ms: u64,
    /// Age: now − birth, ms.
    pub age_ms: u64,
    /// Anonymous pages (0 if below the type's min_seq).
    pub anon: u64,
    /// File pages.
    pub file: u64,
}

/// Per-tier PID controller counters of one type (`lru_gen_full`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct LruGenTiers {
    /// `avg_refaulted` per tier (R).
    pub avg_refaulted: [u64; MAX_NR_TIERS],
    /// `avg_total` per tier (T).
    pub avg_total: [u64; MAX_NR_TIERS],
    /// `refaulted` per tier of the current generation (r).
    pub refaulted: [u64; MAX_NR_TIERS],
    /// `evicted` per tier (e).
    pub evicted: [u64; MAX_NR_TIERS],
    /// `protected` per tier (p).
    pub protected: [u64; MAX_NR_TIERS],
}

/// The lru_gen debugfs view of one group on node 0.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LruGenMemcg {
    /// `mem_cgroup_id`.
    pub memcg_id: u16,
    /// Cgroup path.
    pub path: String,
    /// Node id.
    pub node: u32,
    /// max_seq.
    pub max_seq: u64,
    /// min_seq [anon, file].
    pub min_seq: [u64; 2],
    /// The generations from the oldest to max_seq (`lru_gen_full`: the last 4).
    pub gens: Vec<LruGenGen>,
    /// Tiers: [anon, file].
    pub tiers: [LruGenTiers; 2],
}

/// A sample of the lru_gen view over time.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LruGenSample {
    /// Simulated time, s.
    pub t: f64,
    /// Every group.
    pub memcgs: Vec<LruGenMemcg>,
}

/// What a run reports about the multi-gen LRU.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LruGenReport {
    /// `v6.1` or `v6.14`.
    pub version: String,
    /// `/sys/kernel/mm/lru_gen/enabled`.
    pub enabled: u32,
    /// `/sys/kernel/mm/lru_gen/min_ttl_ms`.
    pub min_ttl_ms: u64,
    /// Counters.
    pub stats: LruGenStats,
    /// The final view (`lru_gen_full`).
    pub memcgs: Vec<LruGenMemcg>,
    /// The view over time: at most one sample per `SAMPLE_NS` of simulated
    /// time, taken when a generation is made.
    pub series: Vec<LruGenSample>,
    /// The /sys/kernel/debug/lru_gen writes of the scenario and their results.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub writes: Vec<LruGenWriteLog>,
}

/// Minimum spacing of the time series samples: 1 s.
pub(crate) const SAMPLE_NS: u64 = 1_000_000_000;
/// Most samples kept.
pub(crate) const MAX_SAMPLES: usize = 600;

impl Sim {
    /// The lru_gen_full view of every group now.
    pub(crate) fn lru_gen_view(&self) -> Vec<LruGenMemcg> {
        let now = self.clock;
        self.memcgs
            .iter()
            .map(|g| {
                let lg = &g.lruvec.lrugen;
                let first = lg.max_seq.saturating_sub(MAX_NR_GENS - 1);
                let gens = (first..=lg.max_seq)
                    .map(|seq| {
                        let gen = lru_gen_from_seq(seq);
                        let pages = |ty: usize| {
                            if seq < lg.min_seq[ty] {
                                0
                            } else {
                                lg.pages(gen, ty)
                            }
                        };
                        LruGenGen {
                            seq,
                            birth_ms: lg.timestamps[gen] / 1_000_000,
                            age_ms: now.saturating_sub(lg.timestamps[gen]) / 1_000_000,
                            anon: pages(ANON),
                            file: pages(FILE),
                        }
                    })
                    .collect();
                let tiers = [ANON, FILE].map(|ty| LruGenTiers {
                    avg_refaulted: lg.avg_refaulted[ty],
                    avg_total: lg.avg_total[ty],
                    refaulted: lg.refaulted[ty],
                    evicted: lg.evicted[ty],
                    protected: lg.protected[ty],
                });
                LruGenMemcg {
                    memcg_id: g.id,
                    path: g.path.clone(),
                    node: 0,
                    max_seq: lg.max_seq,
                    min_seq: lg.min_seq,
                    gens,
                    tiers,
                }
            })
            .collect()
    }

    /// Appends a time-series sample if a second has passed since the last.
    pub(super) fn lru_gen_sample(&mut self, now: u64) {
        if self
            .lru_gen
            .last_sample
            .is_some_and(|t| now < t + SAMPLE_NS)
            || self.lru_gen.series.len() >= MAX_SAMPLES
        {
            return;
        }
        self.lru_gen.last_sample = Some(now);
        let memcgs = self.lru_gen_view();
        self.lru_gen.series.push(LruGenSample {
            t: now as f64 / 1e9,
            memcgs,
        });
    }

    /// The run's MGLRU report, None under other policies.
    pub(crate) fn lru_gen_report(&self) -> Option<LruGenReport> {
        if self.cfg.policy.name != crate::config::PolicyName::Mglru {
            return None;
        }
        let v = self.lru_gen.version;
        Some(LruGenReport {
            version: v.name().into(),
            enabled: self.lru_gen.enabled,
            min_ttl_ms: self.lru_gen.min_ttl_ns / 1_000_000,
            stats: self.lru_gen.stats,
            memcgs: self.lru_gen_view(),
            series: self.lru_gen.series.clone(),
            writes: self.lru_gen.log.clone(),
        })
    }
}
