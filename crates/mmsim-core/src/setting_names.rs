//! One spelling table per string-valued setting.
//!
//! A scenario file, `--set` and the command-line flags all name a setting's
//! value by a string (`policy = "mglru"`, `--schedule fair`). Each such enum
//! declares its spellings once with [`setting_names!`](crate::setting_names!): the canonical name
//! (used in files, reports and JSON), any accepted aliases, and the noun the
//! error names. The macro generates `name()`, `NAMES` and `FromStr`, so every
//! setting rejects an unknown value with the same wording:
//!
//! ```text
//! unknown policy `fifo`; allowed: lru, scanned-rotated, cost (alias classic), mglru
//! ```

/// The error of an unknown value: the noun, the value, and each canonical
/// name with its aliases.
#[doc(hidden)]
pub fn unknown_value(what: &str, value: &str, names: &[(&str, &[&str])]) -> String {
    let allowed: Vec<String> = names
        .iter()
        .map(|(name, aliases)| match aliases {
            [] => (*name).to_string(),
            _ => format!("{name} (alias {})", aliases.join(", ")),
        })
        .collect();
    format!("unknown {what} `{value}`; allowed: {}", allowed.join(", "))
}

/// Declares the spellings of a string-valued setting enum:
///
/// ```ignore
/// setting_names! { PolicyName, "policy",
///     Lru => "lru",
///     Cost => "cost" | "classic",
/// }
/// ```
///
/// generates `PolicyName::name(self) -> &'static str` (the first spelling),
/// `PolicyName::NAMES` (canonical names in declaration order) and
/// `FromStr for PolicyName` (every spelling; anything else is the error of
/// [`setting_names::unknown_value`](crate::setting_names::unknown_value)).
#[macro_export]
macro_rules! setting_names {
    ($ty:ident, $what:literal, $($variant:ident => $name:literal $(| $alias:literal)*),+ $(,)?) => {
        impl $ty {
            /// Canonical names, in declaration order.
            pub const NAMES: &'static [&'static str] = &[$($name),+];
            /// The canonical name: the one scenario files, reports and JSON use.
            pub fn name(self) -> &'static str {
                match self {
                    $($ty::$variant => $name,)+
                }
            }
        }
        impl ::std::str::FromStr for $ty {
            type Err = String;
            fn from_str(s: &str) -> Result<Self, String> {
                match s {
                    $($name $(| $alias)* => Ok($ty::$variant),)+
                    _ => Err($crate::setting_names::unknown_value(
                        $what,
                        s,
                        &[$(($name, &[$($alias),*])),+],
                    )),
                }
            }
        }
    };
}

#[cfg(test)]
mod tests {
    use crate::config::{CostVariant, DeviceKind, MglruVersion, PolicyName, SoftLimitReclaim};

    /// Every canonical name parses to the variant whose `name()` it is.
    fn round_trips<T: std::str::FromStr<Err = String> + Copy>(
        names: &[&str],
        name: fn(T) -> &'static str,
    ) {
        for n in names {
            let v: T = n.parse().unwrap();
            assert_eq!(name(v), *n);
        }
    }

    #[test]
    fn canonical_names_round_trip_and_aliases_parse() {
        round_trips::<PolicyName>(PolicyName::NAMES, PolicyName::name);
        round_trips::<CostVariant>(CostVariant::NAMES, CostVariant::name);
        round_trips::<MglruVersion>(MglruVersion::NAMES, MglruVersion::name);
        round_trips::<DeviceKind>(DeviceKind::NAMES, DeviceKind::name);
        round_trips::<SoftLimitReclaim>(SoftLimitReclaim::NAMES, SoftLimitReclaim::name);
        round_trips::<crate::HugepageReadaround>(
            crate::HugepageReadaround::NAMES,
            crate::HugepageReadaround::name,
        );
        assert_eq!("classic".parse::<PolicyName>(), Ok(PolicyName::Cost));
        assert_eq!("lru_gen".parse::<PolicyName>(), Ok(PolicyName::Mglru));
        assert_eq!("6.1".parse::<MglruVersion>(), Ok(MglruVersion::V6_1));
    }

    #[test]
    fn an_unknown_value_lists_names_and_aliases() {
        assert_eq!(
            "fifo".parse::<PolicyName>(),
            Err(
                "unknown policy `fifo`; allowed: lru, scanned-rotated, cost (alias classic), \
                 mglru (alias lru_gen)"
                    .to_string()
            )
        );
        assert_eq!(
            "tape".parse::<DeviceKind>(),
            Err("unknown device `tape`; allowed: none, zram, ssd, hdd, custom, fs".to_string())
        );
        // Names are matched exactly: no case folding, no trimming.
        assert!("LRU".parse::<PolicyName>().is_err());
        assert!(" lru".parse::<PolicyName>().is_err());
    }
}
