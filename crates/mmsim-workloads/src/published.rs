//! Published results a scenario reproduces: `[[published]]`.
//!
//! A scenario that models a benchmark from a paper or a mailing-list post can
//! carry the numbers that post reports, so that `mmsim compare` prints them
//! beside the simulated ones and says whether the simulation moves the same way.
//! Each entry is the change of one compared metric between two configurations,
//! as the source reports it:
//!
//! ```toml
//! [[published]]
//! metric = "pgmajfault"                        # a metric of `mmsim compare`
//! baseline = "soft_limit_reclaim=tree"         # the configuration it is measured against
//! compared = "soft_limit_reclaim=seed-004"     # the configuration whose change it is
//! change_pct = -97.1                           # the published change, percent
//! source = "seed 004 TEST 1, 0-limit: major faults avg 196081.83 -> 5627.33"
//! ```
//!
//! | field | meaning | range |
//! |---|---|---|
//! | `metric` | a metric name as `mmsim compare` lists it (`runtime_s`, `memcg:/A:pgsteal`, …); checked when comparing | 1..=128 characters |
//! | `baseline`, `compared` | configurations as `mmsim compare` names them: `key=value` pairs joined by commas | 1..=8 pairs each, over the same keys, different values |
//! | `change_pct` | the published change of `compared` against `baseline`, percent | -100..=1000000 |
//! | `source` | where the number comes from, with the raw values | 1..=400 characters |
//! | `not_modelled` | optional: why mmsim cannot reproduce this change (its cause is a mechanism mmsim does not model); the row is shown with its simulated change and this reason, and not judged | 1..=400 characters |
//!
//! A comparison shows an entry for every pair of its configurations that have the
//! entry's settings and agree on every other compared setting; `mmsim compare NAME`
//! with no axis compares the axes the entries name. The simulated change *agrees* when
//! it has the published sign, counting changes within ±1 % as no change.
//!
//! The experiment an entry reproduces is the seed its `source` names first: a source
//! starting with `seed NNN` (three digits) belongs to seed NNN ([`Published::seed`]).
//! `mmsim reproduce NNN` runs every embedded scenario with entries of that seed (see
//! `mmsim_report::reproduce`); a new seed is added by embedding a scenario whose
//! entries' sources start with its number.
//!
//! The numbers are a reference, not a target the simulator is tuned to: a
//! scenario scales the benchmark down and models its programs, so magnitudes
//! differ; the direction is what a scenario test asserts.

use serde::{Deserialize, Serialize};

/// One published result: see the module documentation.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Published {
    /// A compare metric's name.
    pub metric: String,
    /// The configuration the change is measured against (`key=value,...`).
    pub baseline: String,
    /// The configuration whose change it is.
    pub compared: String,
    /// The published change, percent.
    pub change_pct: f64,
    /// Where the number comes from.
    pub source: String,
    /// Why mmsim does not model this change (None: it does). Such an entry is shown
    /// beside its simulated change but not judged: it counts neither as agreeing nor
    /// as disagreeing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub not_modelled: Option<String>,
}

/// Changes within this many percent count as no change when directions are compared.
pub const NO_CHANGE_PCT: f64 = 1.0;

/// The `key=value` pairs of a configuration name, or why it is not one.
pub fn settings(name: &str) -> Result<Vec<(&str, &str)>, String> {
    let pairs: Vec<(&str, &str)> = name
        .split(',')
        .map(|p| {
            p.split_once('=')
                .filter(|(k, v)| !k.trim().is_empty() && !v.trim().is_empty())
                .map(|(k, v)| (k.trim(), v.trim()))
                .ok_or_else(|| format!("`{p}` is not key=value"))
        })
        .collect::<Result<_, _>>()?;
    if pairs.len() > 8 {
        return Err(format!("{} settings; at most 8", pairs.len()));
    }
    for (i, (k, _)) in pairs.iter().enumerate() {
        if pairs[..i].iter().any(|(k2, _)| k2 == k) {
            return Err(format!("`{k}` is set twice"));
        }
    }
    Ok(pairs)
}

/// Whether a simulated change has the direction of a published one.
pub fn agrees(published_pct: f64, simulated_pct: f64) -> bool {
    let sign = |x: f64| {
        if x.abs() <= NO_CHANGE_PCT {
            0
        } else if x > 0.0 {
            1
        } else {
            -1
        }
    };
    sign(published_pct) == sign(simulated_pct)
}

impl Published {
    /// Checks the fields; Err is (field, message).
    pub fn validate(&self) -> Result<(), (&'static str, String)> {
        let text = |field: &'static str, v: &str, max: usize| {
            if v.trim().is_empty() || v.chars().count() > max || v.chars().any(char::is_control) {
                Err((
                    field,
                    format!("must be 1..={max} characters without control characters"),
                ))
            } else {
                Ok(())
            }
        };
        text("metric", &self.metric, 128)?;
        text("source", &self.source, 400)?;
        if let Some(why) = &self.not_modelled {
            text("not_modelled", why, 400)?;
        }
        let base = settings(&self.baseline).map_err(|e| ("baseline", e))?;
        let comp = settings(&self.compared).map_err(|e| ("compared", e))?;
        let mut bk: Vec<&str> = base.iter().map(|p| p.0).collect();
        let mut ck: Vec<&str> = comp.iter().map(|p| p.0).collect();
        bk.sort_unstable();
        ck.sort_unstable();
        if bk != ck {
            return Err((
                "compared",
                format!(
                    "sets {} but baseline sets {}: both must set the same keys",
                    ck.join(", "),
                    bk.join(", ")
                ),
            ));
        }
        if base.iter().all(|p| comp.contains(p)) {
            return Err((
                "compared",
                "is the baseline itself: a published change needs two configurations".into(),
            ));
        }
        if !(self.change_pct.is_finite() && (-100.0..=1e6).contains(&self.change_pct)) {
            return Err((
                "change_pct",
                format!("{} is out of range [-100, 1000000]", self.change_pct),
            ));
        }
        Ok(())
    }

    /// The seed (published experiment) this entry reproduces: the three digits after
    /// `seed ` at the start of `source` (`"seed 004 TEST 1: ..."` is `"004"`), or None.
    pub fn seed(&self) -> Option<&str> {
        let digits = self.source.strip_prefix("seed ")?.get(..3)?;
        let rest = &self.source["seed ".len() + 3..];
        (digits.bytes().all(|b| b.is_ascii_digit())
            && !rest.starts_with(|c: char| c.is_ascii_alphanumeric()))
        .then_some(digits)
    }

    /// The keys this entry compares.
    pub fn keys(&self) -> Vec<&str> {
        settings(&self.baseline)
            .map(|s| s.into_iter().map(|p| p.0).collect())
            .unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(baseline: &str, compared: &str, pct: f64) -> Published {
        Published {
            metric: "runtime_s".into(),
            baseline: baseline.into(),
            compared: compared.into(),
            change_pct: pct,
            source: "a post".into(),
            not_modelled: None,
        }
    }

    #[test]
    fn entries_are_checked() {
        assert_eq!(entry("a=1", "a=2", -30.0).validate(), Ok(()));
        assert_eq!(entry("a=1,b=x", "b=x,a=2", 5.0).validate(), Ok(()));
        let field = |e: Published| e.validate().unwrap_err().0;
        assert_eq!(field(entry("a=1", "a=1", 1.0)), "compared");
        assert_eq!(field(entry("a=1", "b=2", 1.0)), "compared");
        assert_eq!(field(entry("a", "a=2", 1.0)), "baseline");
        assert_eq!(field(entry("a=1,a=2", "a=3,a=4", 1.0)), "baseline");
        assert_eq!(field(entry("a=1", "a=2", -101.0)), "change_pct");
        assert_eq!(field(entry("a=1", "a=2", f64::NAN)), "change_pct");
        let mut e = entry("a=1", "a=2", 1.0);
        e.source = String::new();
        assert_eq!(field(e), "source");
        let mut e = entry("a=1", "a=2", 1.0);
        e.not_modelled = Some(" ".into());
        assert_eq!(field(e), "not_modelled");
        let mut e = entry("a=1", "a=2", 1.0);
        e.not_modelled = Some("a file-side change".into());
        assert_eq!(e.validate(), Ok(()));
    }

    #[test]
    fn the_seed_is_named_first_in_the_source() {
        let with = |source: &str| Published {
            source: source.into(),
            ..entry("a=1", "a=2", 1.0)
        };
        assert_eq!(with("seed 004 TEST 1: x").seed(), Some("004"));
        assert_eq!(with("seed 000").seed(), Some("000"));
        assert_eq!(with("seed 0042 x").seed(), None);
        assert_eq!(with("seed 04 x").seed(), None);
        assert_eq!(with("a post, seed 001").seed(), None);
        assert_eq!(with("seed").seed(), None);
    }

    #[test]
    fn directions() {
        assert!(agrees(-69.6, -33.0));
        assert!(agrees(12.0, 400.0));
        assert!(agrees(0.5, -0.9));
        assert!(!agrees(-10.7, 1.4));
        assert!(!agrees(-10.7, 0.2));
    }
}
