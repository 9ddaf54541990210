//! Models of real programs: `fio`, `kv` (memcached + memtier_benchmark), `pgbench`
//! (PostgreSQL), `dd`, `eater` (a memory eater) and `kbuild` (a parallel kernel build).
//!
//! The access-pattern kinds (`uniform`, `zipf`, …) describe *one* region and *one*
//! stream of page touches. The model kinds describe a *program*: the tasks, files and
//! mappings it creates, and the system calls and loads/stores it makes, following the
//! program's own rules (fio's offset generators and `fadvise_hint`, memtier's key
//! patterns and set:get ratio, PostgreSQL's clock-sweep buffer replacement, dd's block
//! loop). Each model lives in its own module with its scenario fields, their ranges and
//! defaults, and where the behaviour was checked:
//!
//! | kind | stands for | module |
//! |---|---|---|
//! | `fio` | `fio --rw=randread --bs=4k --numjobs=8 --size=1408m --buffered=1` | [`fio`] |
//! | `kv` | memcached filled and read by `memtier_benchmark` | [`kv`] |
//! | `pgbench` | PostgreSQL running pgbench's TPC-B-like transaction | [`pgbench`] |
//! | `dd` | `dd if=/dev/zero of=f bs=1M count=N` (or `if=f of=/dev/null`) | [`dd`] |
//! | `eater` | `stress-ng --vm`, a "memeater": malloc, touch, re-touch | [`eater`] |
//! | `kbuild` | `make -j8` of a kernel: sources and shared headers read, compilers' heaps, objects written | [`kbuild`] |
//! | `tabs` | a browser's tabs on a small client: renderer heaps loaded, then switching (seed 000's client) | [`tabs`] |
//!
//! ## Common fields
//!
//! Model workloads take the common fields `name`, `phase`, `weight`, `advice`, `start`
//! and `cgroup` (see [`WorkloadSpec`](crate::WorkloadSpec)); they do not take `target` (each
//! model knows what it maps and opens) and, except `eater`, not `write_ratio` (the
//! program decides what it writes: fio's `rw`, memtier's `ratio`, pgbench's
//! transaction, dd's direction).
//!
//! Sizes (`bs`, `size`, `value_size`, `io_size`, `shared_buffers`, `max_wal_size`) are
//! a byte count (`4096`) or a size string (`"4k"`, `"1408m"`, `"1G"`, `"100p"` for
//! pages), as fio and dd write them. Times (`start`) are strings with a unit: `"2s"`,
//! `"500ms"`, `"1.5s"`, `"250us"`, `"100ns"`, `"2min"`, `"1h"`.
//!
//! ## What the models leave out
//!
//! The simulated machine runs one event at a time on one clock, so concurrency is
//! interleaving: fio's jobs take one IO each in turn, pgbench's clients are one stream
//! of transactions, and IO depth (`iodepth`, io_uring batching) is not modelled — every
//! read is a synchronous buffered `pread`. Each module lists its own simplifications.
//!
//! ## Adding a model kind
//!
//! Each model's spec implements [`Model`]: its `kind` name, its required and optional
//! fields (the lists the "does not apply" and "needs the field" errors print), the target
//! it stands for, its size and event count, and `validate` (errors name the field and
//! the allowed range). The scenario reaches it by `match` through one list of model
//! variants (`with_model!` in `scenario/mod.rs`), never through `dyn`, and generating
//! events is a `match` on the generator enum (`gen.rs`). To add a kind `foo` today:
//!
//! 1. `models/foo.rs`: `FooSpec` with `impl Model`, and `FooGen` with `setup` and `fill`
//!    (draw from the generator's RNG only in `fill`, in a fixed order); `pub mod foo`
//!    here.
//! 2. `scenario/mod.rs`: the variant `WorkloadKind::Foo(FooSpec)`, its arm in
//!    `with_model!` and in `kind_name`.
//! 3. `scenario/raw.rs`: the `KindName::Foo` variant (its `name` and `fields` arms read
//!    the `Model` constants), the TOML fields of `FooSpec` in `RawWorkload` (a field
//!    name another kind already has, such as `size` or `theta`, is shared), their
//!    entries in `convert`'s `present` list, the arms of `convert` and
//!    `From<WorkloadSpec>`, and `KindName::is_model` (plus `common` and the
//!    `write_ratio` checks if the model takes `write_ratio`, as `eater` and `tabs` do).
//! 4. `gen.rs`: the `Pattern::Foo` variant, its `Generator::build` arm and `fill` arm.
//!
//! Steps 3 and 4 keep this from being three places: the flat `RawWorkload`
//! table (one serde struct, so an unknown field's error lists every field) and the
//! generator enum still name every kind.

pub mod dd;
pub mod eater;
pub mod fio;
pub mod kbuild;
pub mod kv;
pub mod pgbench;
pub mod tabs;

use std::fmt;

use mmsim_core::Size;
use serde::{Deserialize, Deserializer};

/// A value of a model's field that is out of range: which field (its name within the
/// workload table) and what is wrong, including the allowed range.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Bad {
    /// The field, e.g. `bs`.
    pub field: &'static str,
    /// What is wrong and what is allowed.
    pub message: String,
}

impl Bad {
    pub(crate) fn new(field: &'static str, message: impl Into<String>) -> Bad {
        Bad {
            field,
            message: message.into(),
        }
    }
}

/// A model of a program as a workload kind: its `kind` name, its fields, the target it
/// stands for, its size, its event count and the checks of its fields. Each model's
/// spec implements it; [`WorkloadKind`](crate::WorkloadKind) has one variant per model
/// and reaches the implementation by `match` (no `dyn`), so generating events stays
/// monomorphic.
pub trait Model {
    /// The `kind` name in a `[[workload]]` table, e.g. `fio`.
    const KIND: &'static str;
    /// Fields the kind requires besides the common ones, in the order error messages
    /// list them.
    const REQUIRED: &'static [&'static str];
    /// Optional fields of the kind besides the common ones.
    const OPTIONAL: &'static [&'static str];
    /// What the model mostly uses, reported as its [`WorkloadSpec::target`](crate::WorkloadSpec::target).
    const TARGET: crate::Target;

    /// Pages of all its files and mappings together.
    fn pages(&self) -> u64;

    /// Events it generates, if known before running.
    fn events(&self) -> Option<u64>;

    /// Checks every field against its range; the error names the field and the range.
    fn validate(&self) -> Result<(), Bad>;
}

/// The target a model stands for (its [`Model::TARGET`]).
pub(crate) fn target_of<M: Model>(_: &M) -> crate::Target {
    M::TARGET
}

/// The required and optional fields of a model (its [`Model`] constants).
pub(crate) fn fields_of<M: Model>() -> (&'static [&'static str], &'static [&'static str]) {
    (M::REQUIRED, M::OPTIONAL)
}

/// 4 KiB, the simulated page.
pub const PAGE: u64 = 4096;

/// Largest block size of `fio` and `dd`: 64 MiB (16384 pages, within one event's
/// 65535-page limit).
pub const MAX_BS: u64 = 64 << 20;

/// Latest `start`: 10^6 simulated seconds (11.6 days).
pub const MAX_START_NS: u64 = 1_000_000 * 1_000_000_000;

/// Human form of a byte count: `4k`, `1408m`, `3g`, or plain bytes when not a whole
/// number of KiB.
pub fn format_bytes(b: u64) -> String {
    for (shift, unit) in [(40, "t"), (30, "g"), (20, "m"), (10, "k")] {
        if b >= 1 << shift && b.is_multiple_of(1 << shift) {
            return format!("{}{unit}", b >> shift);
        }
    }
    b.to_string()
}

/// A byte count: a non-negative integer (bytes) or a size string (`"4k"`, `"1G"`,
/// `"100p"`).
pub(crate) fn de_opt_bytes<'de, D: Deserializer<'de>>(d: D) -> Result<Option<u64>, D::Error> {
    struct V;
    impl serde::de::Visitor<'_> for V {
        type Value = u64;
        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("a number of bytes or a size such as \"4k\", \"1408m\" or \"1G\"")
        }
        fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<u64, E> {
            Ok(v)
        }
        fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<u64, E> {
            u64::try_from(v).map_err(|_| E::custom(format!("{v} bytes is negative")))
        }
        fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<u64, E> {
            v.parse::<Size>().map(Size::bytes).map_err(E::custom)
        }
    }
    d.deserialize_any(V).map(Some)
}

/// Parses a time with a unit (`"2s"`, `"500ms"`, `"1.5s"`, `"250us"`, `"100ns"`,
/// `"2min"`, `"1h"`) into nanoseconds, rounding a fraction of a nanosecond down.
pub fn parse_time(s: &str) -> Result<u64, String> {
    let t = s.trim();
    let usage = "write a time such as \"2s\", \"500ms\", \"1.5s\" or \"250us\" \
                 (units: ns, us, ms, s, min, h)";
    if t.starts_with('-') {
        return Err(format!("negative time `{t}`; times are at least 0"));
    }
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (num, unit) = (&t[..split], t[split..].trim());
    if num.is_empty() || num == "." {
        return Err(format!("`{t}` is not a time; {usage}"));
    }
    let unit_ns: u64 = match unit {
        "ns" => 1,
        "us" | "µs" => 1_000,
        "ms" => 1_000_000,
        "s" => 1_000_000_000,
        "min" => 60_000_000_000,
        "h" => 3_600_000_000_000,
        "" => return Err(format!("`{t}` has no unit; {usage}")),
        "m" => return Err(format!("`{t}`: `m` is ambiguous; use `ms` or `min`")),
        _ => return Err(format!("`{t}`: unknown unit `{unit}`; {usage}")),
    };
    let (int, frac) = match num.split_once('.') {
        Some((i, f)) => (i, f),
        None => (num, ""),
    };
    let digits_ok = |d: &str| d.bytes().all(|b| b.is_ascii_digit());
    if (int.is_empty() && frac.is_empty()) || !digits_ok(int) || !digits_ok(frac) {
        return Err(format!("`{t}` is not a time; {usage}"));
    }
    let too_big = || format!("`{t}` is too large");
    let whole: u64 = if int.is_empty() {
        0
    } else {
        int.parse().map_err(|_| too_big())?
    };
    let mut ns = whole.checked_mul(unit_ns).ok_or_else(too_big)?;
    // The fraction, digit by digit: exact for every unit (at most 13 digits matter).
    let mut scale = unit_ns;
    for b in frac.bytes().take(16) {
        scale /= 10;
        ns = ns
            .checked_add(u64::from(b - b'0') * scale)
            .ok_or_else(too_big)?;
        if scale == 0 {
            break;
        }
    }
    Ok(ns)
}

/// The shortest exact form of `ns` for [`parse_time`]: `2s`, `500ms`, `1500us`, `7ns`.
pub fn format_time(ns: u64) -> String {
    for (unit, name) in [
        (3_600_000_000_000, "h"),
        (60_000_000_000, "min"),
        (1_000_000_000, "s"),
        (1_000_000, "ms"),
        (1_000, "us"),
    ] {
        if ns >= unit && ns.is_multiple_of(unit) {
            return format!("{}{name}", ns / unit);
        }
    }
    format!("{ns}ns")
}

/// A time string (see [`parse_time`]) as nanoseconds.
pub(crate) fn de_opt_time<'de, D: Deserializer<'de>>(d: D) -> Result<Option<u64>, D::Error> {
    struct V;
    impl serde::de::Visitor<'_> for V {
        type Value = u64;
        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("a time such as \"2s\" or \"500ms\"")
        }
        fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<u64, E> {
            parse_time(v).map_err(E::custom)
        }
        fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<u64, E> {
            Err(E::custom(format!(
                "{v} has no unit; write a time string such as \"{v}s\" or \"{v}ms\""
            )))
        }
        fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<u64, E> {
            self.visit_i64(v as i64)
        }
        fn visit_f64<E: serde::de::Error>(self, v: f64) -> Result<u64, E> {
            Err(E::custom(format!(
                "{v} has no unit; write a time string such as \"{v}s\""
            )))
        }
    }
    d.deserialize_any(V).map(Some)
}

/// A string-typed field's value parsed with `FromStr`, for `Deserialize` impls.
pub(crate) fn de_from_str<'de, D, T>(d: D) -> Result<T, D::Error>
where
    D: Deserializer<'de>,
    T: std::str::FromStr<Err = String>,
{
    let s = String::deserialize(d)?;
    s.parse().map_err(serde::de::Error::custom)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times() {
        assert_eq!(parse_time("2s"), Ok(2_000_000_000));
        assert_eq!(parse_time("500ms"), Ok(500_000_000));
        assert_eq!(parse_time("1.5s"), Ok(1_500_000_000));
        assert_eq!(parse_time(".25ms"), Ok(250_000));
        assert_eq!(parse_time("0s"), Ok(0));
        assert_eq!(parse_time("3 us"), Ok(3_000));
        assert_eq!(parse_time("1.0000000009s"), Ok(1_000_000_000));
        assert_eq!(parse_time("2min"), Ok(120_000_000_000));
        for bad in [
            "",
            "s",
            "2",
            "-1s",
            "1m",
            "1.2.3s",
            "abc",
            "2 parsecs",
            "99999999999h",
        ] {
            assert!(parse_time(bad).is_err(), "{bad}");
        }
        for ns in [0, 7, 1_000, 1_500_000, 2_000_000_000, 120_000_000_000] {
            assert_eq!(parse_time(&format_time(ns)), Ok(ns));
        }
        assert_eq!(format_time(1_000_000), "1ms");
    }

    #[test]
    fn bytes() {
        assert_eq!(format_bytes(4096), "4k");
        assert_eq!(format_bytes(1408 << 20), "1408m");
        assert_eq!(format_bytes(1000), "1000");
        assert_eq!("1408m".parse::<Size>().unwrap().bytes(), 1408 << 20);
    }
}
