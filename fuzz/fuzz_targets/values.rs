//! The small value parsers every flag and scenario field goes through: sizes,
//! policies, variants, devices, targets and trace formats.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mmsim_core::{CostVariant, DeviceKind, MglruVersion, PolicyName, Size};
use mmsim_trace::CsvSpec;
use mmsim_workloads::{Target, TraceFormat};

fuzz_target!(|data: &[u8]| {
    let Ok(s) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(size) = s.parse::<Size>() {
        // A size that parses prints as a size that parses to the same bytes.
        let again: Size = size.to_string().parse().expect("display parses");
        assert_eq!(again.bytes(), size.bytes());
    }
    if let Ok(spec) = s.parse::<CsvSpec>() {
        // A layout that parses prints as the same layout.
        assert_eq!(
            spec.to_string().parse::<CsvSpec>().expect("display parses"),
            spec
        );
    }
    let _ = s.parse::<PolicyName>();
    let _ = s.parse::<CostVariant>();
    let _ = s.parse::<MglruVersion>();
    let _ = s.parse::<DeviceKind>();
    let _ = s.parse::<Target>();
    let _ = s.parse::<TraceFormat>();
});
