//! `mmsim run --set KEY=VALUE` (a `[machine]` key, as `compare --set` and the Python
//! package's keyword arguments write it) and `mmsim sweep` (which runs the Python
//! package): results, and every error path.

mod common;

use common::{bad_input, json, mmsim, simulated, trace};

#[test]
fn run_set_writes_machine_keys() {
    let t = trace("lirs/cs.trace.gz");
    let plain = json(&["run", "--trace", &t, "--memcg-max", "200p", "--json"]);
    let set = json(&[
        "run",
        "--trace",
        &t,
        "--memcg-max",
        "200p",
        "--set",
        "page_cluster=0",
        "--set",
        "machine.swap.device=zram",
        "--set",
        "swap.size=64M",
        "--json",
    ]);
    assert_eq!(plain["machine"]["page_cluster"], 3);
    assert_eq!(set["machine"]["page_cluster"], 0);
    assert_eq!(set["machine"]["swap"]["device"], "zram");
    assert_eq!(set["machine"]["swap"]["size"], "64M");
    // The same key through --set and through its flag: the same run (but the
    // process's host-dependent peak heap).
    let by_flag = simulated(json(&[
        "run",
        "--trace",
        &t,
        "--memcg-max",
        "200p",
        "--json",
    ]));
    let by_set = simulated(json(&[
        "run",
        "--trace",
        &t,
        "--set",
        "memcg_max=200p",
        "--json",
    ]));
    assert_eq!(by_flag, by_set);
    assert_eq!(simulated(plain), by_flag);
}

#[test]
fn run_set_errors_name_the_flag_and_field() {
    bad_input(
        &["run", "--set", "page_cluster", "--print-scenario"],
        &["--set page_cluster: expected KEY=VALUE with a [machine] key"],
    );
    bad_input(
        &["run", "--set", "swapiness=1", "--print-scenario"],
        &["--set swapiness=1: machine.swapiness: unknown field `swapiness`"],
    );
    bad_input(
        &["run", "--set", "a..b=1", "--print-scenario"],
        &["`a..b` is not a [machine] key"],
    );
    bad_input(
        &["run", "--set", "swappiness=300", "--print-scenario"],
        &["machine.swappiness: 300 is out of range [0, 200]"],
    );
}

#[test]
fn sweep_without_python_or_package_says_how_to_install() {
    let dir = tempfile::tempdir().unwrap();
    let grid = dir.path().join("grid.toml");
    std::fs::write(&grid, "policy = [\"cost\"]\n").unwrap();
    let out = dir.path().join("out.parquet");
    let missing = dir.path().join("no-python");
    let o = mmsim()
        .env("MMSIM_PYTHON", &missing)
        .args([
            "sweep",
            grid.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
        ])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.starts_with("error: mmsim sweep runs the mmsim Python package"),
        "{err}"
    );
    assert!(
        err.contains("no-python") && err.contains("cannot be started"),
        "{err}"
    );
    assert!(err.contains("pip install ./python"), "{err}");
    // An interpreter without the package (a script that fails the import check).
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let fake = dir.path().join("python-without-mmsim");
        std::fs::write(
            &fake,
            "#!/bin/sh\necho \"ModuleNotFoundError: No module named 'mmsim'\" >&2\nexit 1\n",
        )
        .unwrap();
        std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755)).unwrap();
        let o = mmsim()
            .env("MMSIM_PYTHON", &fake)
            .args([
                "sweep",
                grid.to_str().unwrap(),
                "--out",
                out.to_str().unwrap(),
            ])
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(1), "{err}");
        assert!(
            err.contains("cannot import (ModuleNotFoundError: No module named 'mmsim')"),
            "{err}"
        );
        assert!(!out.exists(), "nothing ran");
    }
}

#[test]
fn sweep_needs_a_grid_and_an_output() {
    let o = mmsim().args(["sweep", "grid.toml"]).output().unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("--out"));
}
