//! The scenario loader on arbitrary text: parse and validate give a scenario or an
//! error naming the field, never a panic (sizes, ranges, cgroup trees, schedules).
#![no_main]

use libfuzzer_sys::fuzz_target;
use mmsim_workloads::Scenario;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(s) = Scenario::parse_toml_str(text, "fuzz.toml") {
        let _ = s.validate();
    }
});
