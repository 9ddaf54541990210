//! [`Size`], the memory size of a scenario field (`512M`, `131072p`), and its
//! parser (split out of config.rs to keep it short; `crate::config` re-exports
//! it).

use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

use crate::PAGE_SIZE;

/// A memory size in bytes, parsed from `4096`, `64K`, `512M`, `4G`, `1T` or `1000p` (pages).
///
/// Sizes that are not a whole number of 4 KiB pages are rounded down to pages
/// by [`Size::pages`]; zero and negative sizes are rejected by the parser.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Size(pub u64);

impl Size {
    /// Size from a number of 4 KiB pages.
    pub const fn from_pages(pages: u64) -> Size {
        Size(pages * PAGE_SIZE)
    }
    /// Whole 4 KiB pages in this size.
    pub const fn pages(self) -> u64 {
        self.0 / PAGE_SIZE
    }
    /// Bytes.
    pub const fn bytes(self) -> u64 {
        self.0
    }
}

/// Largest size accepted anywhere (1 PiB): keeps page counts within u32 arenas' reach
/// checks and rules out overflow in byte arithmetic.
pub(crate) const MAX_SIZE_BYTES: u64 = 1 << 50;

impl FromStr for Size {
    type Err = String;
    fn from_str(s: &str) -> Result<Size, String> {
        let t = s.trim();
        if t.is_empty() {
            return Err("empty size; write e.g. 512M, 4G or 1000p".into());
        }
        if t.starts_with('-') {
            return Err(format!("negative size `{t}`; sizes must be positive"));
        }
        if t.eq_ignore_ascii_case("max") {
            return Err("`max` is not a size here: give a size (512M, 4G, 1000p), \
                 or leave the setting out for no limit"
                .into());
        }
        let (num, suffix) = split_size_suffix(t);
        let mult = match suffix {
            "" | "b" | "B" => 1,
            // Pages are a lowercase p only: an uppercase P reads as petabytes.
            "p" => PAGE_SIZE,
            "P" | "PB" | "PiB" => {
                return Err(format!(
                    "`{t}`: petabyte sizes are not taken (the largest is 1024T); \
                     pages are a lowercase p, as in 1000p"
                ))
            }
            _ => match suffix.trim_end_matches("iB").trim_end_matches('B') {
                "k" | "K" => 1 << 10,
                "m" | "M" => 1 << 20,
                "g" | "G" => 1 << 30,
                "t" | "T" => 1 << 40,
                _ => {
                    return Err(format!(
                        "unknown size suffix `{suffix}` in `{t}`; use K, M, G, T \
                         (KiB, MB, ... also read as powers of 1024) or p (pages)"
                    ))
                }
            },
        };
        let n: u64 = num
            .trim()
            .parse()
            .map_err(|_| format!("`{t}` is not a size; write e.g. 512M, 4G or 1000p"))?;
        if n == 0 {
            return Err(format!("zero size `{t}`; sizes must be positive"));
        }
        let bytes = n
            .checked_mul(mult)
            .filter(|b| *b <= MAX_SIZE_BYTES)
            .ok_or_else(|| format!("size `{t}` is larger than the largest size, 1024T"))?;
        Ok(Size(bytes))
    }
}

/// Splits `512MiB` into `("512", "MiB")`: the suffix is the trailing run of
/// letters.
fn split_size_suffix(t: &str) -> (&str, &str) {
    let start = t
        .char_indices()
        .rev()
        .take_while(|(_, c)| c.is_ascii_alphabetic())
        .last()
        .map_or(t.len(), |(i, _)| i);
    (&t[..start], &t[start..])
}

impl fmt::Display for Size {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let b = self.0;
        for (unit, shift) in [("T", 40), ("G", 30), ("M", 20), ("K", 10)] {
            if b >= 1 << shift && b.is_multiple_of(1 << shift) {
                return write!(f, "{}{}", b >> shift, unit);
            }
        }
        if b.is_multiple_of(PAGE_SIZE) {
            write!(f, "{}p", b / PAGE_SIZE)
        } else {
            write!(f, "{b}")
        }
    }
}

impl Serialize for Size {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.to_string())
    }
}

impl<'de> Deserialize<'de> for Size {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Size, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Raw {
            Int(i64),
            Str(String),
        }
        match Raw::deserialize(d)? {
            Raw::Int(n) if n > 0 => Ok(Size(n as u64)),
            Raw::Int(n) => Err(serde::de::Error::custom(format!(
                "size {n} must be positive"
            ))),
            Raw::Str(s) => s.parse().map_err(serde::de::Error::custom),
        }
    }
}
