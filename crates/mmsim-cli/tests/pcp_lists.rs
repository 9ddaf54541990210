//! `machine.policy.pcp_lists` (`mmsim-core`'s `page_alloc/pcp.rs`) from the
//! command line: `--set` writes 6.12 as a TOML number, read as the string;
//! an unknown variant names the field and the allowed values.

mod common;

use common::{bad_input, mmsim};
use predicates::prelude::*;

#[test]
fn pcp_lists_reads_a_number_and_names_the_field() {
    mmsim()
        .args(["run", "zipf-file", "--set", "policy.pcp_lists=6.12"])
        .args(["--print-scenario"])
        .assert()
        .success()
        .stdout(predicate::str::contains("pcp_lists = \"6.12\""));
    bad_input(
        &["run", "--set", "policy.pcp_lists=6.13", "-q"],
        &[
            "machine.policy.pcp_lists",
            "unknown pcp_lists `6.13`; allowed: order-0, 6.12",
        ],
    );
}
