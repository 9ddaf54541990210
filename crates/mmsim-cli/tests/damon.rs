//! DAMON on the command line: `[machine.damon]` in a scenario (the sysfs tree's
//! names and the modules' parameters), the `damon` object of `--json` and the run
//! report's section, its errors, and seed 002's embedded experiment.

use std::path::Path;

use assert_cmd::Command;
use serde_json::Value;

fn mmsim() -> Command {
    Command::cargo_bin("mmsim").unwrap()
}

fn scenario(dir: &Path, text: &str) -> String {
    let p = dir.join("s.toml");
    std::fs::write(&p, text).unwrap();
    p.to_string_lossy().into_owned()
}

fn ok(args: &[&str]) -> String {
    let out = mmsim().args(args).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{args:?}: {stderr}");
    String::from_utf8(out.stdout).unwrap()
}

/// A task with a 4M hot set and a 28M cold set it touched once, monitored by a vaddr
/// context with a stat scheme for idle regions and a pageout scheme for regions
/// idle for 1 s.
const HOT_COLD: &str = r#"
seed = 1
[machine]
memory = "256M"
swap = { device = "zram", size = "256M" }
cost = { access_ns = 2000 }

[[machine.damon.kdamonds]]
[[machine.damon.kdamonds.contexts]]
operations = "vaddr"
targets = [{}]

[[machine.damon.kdamonds.contexts.schemes]]
action = "stat"
access_pattern = { nr_accesses = { min = 0, max = 0 } }

[[machine.damon.kdamonds.contexts.schemes]]
action = "pageout"
access_pattern = { nr_accesses = { min = 0, max = 0 }, age = { min = 10, max = 4294967295 } }

[[workload]]
name = "cold"
kind = "touch"
target = "anon"
pages = "28M"

[[workload]]
name = "hot"
kind = "uniform"
target = "anon"
pages = "4M"
accesses = 1_500_000
phase = 1
"#;

#[test]
fn a_vaddr_context_reports_its_schemes_in_json_and_text() {
    let dir = tempfile::tempdir().unwrap();
    let path = scenario(dir.path(), HOT_COLD);
    let v: Value = serde_json::from_str(&ok(&["run", &path, "--json", "-q"])).unwrap();
    let d = &v["damon"];
    let c = &d["contexts"][0];
    assert_eq!(c["name"], "kdamond 0");
    assert_eq!(c["ops"], "vaddr");
    assert_eq!(c["schemes"][0]["action"], "stat");
    assert_eq!(c["schemes"][1]["action"], "pageout");
    assert_eq!(c["schemes"][0]["nr_tried"], 329);
    // The whole cold set was paged out to zram and the hot set never was (no
    // swap-ins). vaddr's sz_applied counts whole regions madvise succeeded on,
    // paged out already or not, as the kernel's damos_madvise() does.
    assert_eq!(v["vmstat"]["pswpout"], 7168, "{c}");
    assert_eq!(v["vmstat"]["pswpin"], 0, "{c}");
    assert_eq!(c["schemes"][1]["sz_applied"], 56u64 << 20, "{c}");
    assert_eq!(d["kdamond_cpu_s"], 0.343093314);
    let text = ok(&["run", &path, "-q"]);
    assert!(text.contains("kdamond cpu_s"), "{text}");
    assert!(text.contains("\ndamon\n  kdamond 0 (vaddr): "), "{text}");
}

#[test]
fn without_damon_the_json_has_no_damon_object() {
    let v: Value = serde_json::from_str(&ok(&["run", "zipf-file", "--json", "-q"])).unwrap();
    assert!(v.get("damon").is_none());
}

#[test]
fn a_bad_damon_configuration_names_its_field() {
    let dir = tempfile::tempdir().unwrap();
    let bad = HOT_COLD.replace("action = \"stat\"", "action = \"migrate_hot\"");
    let path = scenario(dir.path(), &bad);
    let out = mmsim().args(["run", &path, "-q"]).output().unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("machine.damon.kdamonds[0].contexts[0].schemes[0].action"),
        "{err}"
    );
    assert!(err.contains("one node"), "{err}");
    let bad = HOT_COLD.replace("operations = \"vaddr\"", "operations = \"paddr\"\nfoo = 1");
    let path = scenario(dir.path(), &bad);
    let out = mmsim().args(["run", &path, "-q"]).output().unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("foo"), "{err}");
}

#[test]
fn seed_002_plrus_against_mprs_agrees_on_faults_and_pressure() {
    let v: Value = serde_json::from_str(&ok(&["compare", "plrus-parsec-like", "--json"])).unwrap();
    let published = v["published"].as_array().unwrap();
    let row = |m: &str| {
        published
            .iter()
            .find(|p| p["metric"] == m)
            .unwrap_or_else(|| panic!("{m}"))
    };
    // The post: pgmajfaults -14 %, memory PSI some -10 %.
    assert_eq!(row("pgmajfault")["agrees"], true, "{}", row("pgmajfault"));
    assert_eq!(
        row("psi_some_total_us")["agrees"],
        true,
        "{}",
        row("psi_some_total_us")
    );
    // Runtime: the post's -3.74 %; here faster too, but by less than the
    // comparison's no-change band (zram faults cost little of a run dominated by
    // compute): see VALIDATION.md.
    assert_eq!(row("runtime_s")["simulated_pct"], -0.15460120320822057);
    // kdamond: the post measured 2.61 % of one CPU, "below 4 % as expected".
    let plrus = v["configs"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == "damon.lru_sort.enabled=true")
        .unwrap();
    let pct = plrus["runs"][0]["metrics"]["damon:kdamond_cpu_pct"]
        .as_f64()
        .unwrap();
    assert_eq!(pct, 0.4825075045616656);
    let mprs = v["configs"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == "damon.lru_sort.enabled=false")
        .unwrap();
    assert_eq!(mprs["runs"][0]["metrics"]["damon:kdamond_cpu_pct"], 0.0);
}

/// What `damo args damon --format json` prints for a vaddr pageout scheme (its
/// human-formatted values as damo writes them).
const DAMO_KDAMONDS: &str = r#"{"kdamonds": [{"state": "on", "pid": 1234, "contexts": [{
  "ops": "vaddr", "addr_unit": "1",
  "targets": [{"pid": null, "obsolete": false, "regions": []}],
  "intervals": {"sample_us": "5 ms", "aggr_us": "100 ms", "ops_update_us": "1 s"},
  "nr_regions": {"min": "10", "max": "1,000"},
  "schemes": [{"action": "pageout",
     "access_pattern": {"sz_bytes": {"min": "4.000 KiB", "max": "max"},
        "nr_accesses": {"min": "0 %", "max": "0 %"}, "age": {"min": "1 s", "max": "max"}},
     "apply_interval_us": "0 ns",
     "quotas": {"time_ms": "10 ms", "sz_bytes": "128.000 MiB", "reset_interval_ms": "1 s", "goals": [],
        "weights": {"sz_permil": "0 %", "nr_accesses_permil": "0 %", "age_permil": "100 %"}},
     "watermarks": {"metric": "none", "interval_us": "0 ns", "high_permil": "0 %", "mid_permil": "0 %", "low_permil": "0 %"},
     "filters": []}]}]}]}
"#;

fn read_record(path: &Path) -> Value {
    use std::io::Read as _;
    let bytes = std::fs::read(path).unwrap();
    let mut text = String::new();
    flate2::read::ZlibDecoder::new(&bytes[..])
        .read_to_string(&mut text)
        .unwrap();
    serde_json::from_str(&text).unwrap()
}

#[test]
fn damos_json_runs_as_is_and_the_record_is_damos_format() {
    let dir = tempfile::tempdir().unwrap();
    let no_damon = HOT_COLD[..HOT_COLD.find("[[machine.damon.kdamonds]]").unwrap()].to_string()
        + &HOT_COLD[HOT_COLD.find("[[workload]]").unwrap()..];
    let path = scenario(dir.path(), &no_damon);
    let cfg = dir.path().join("kdamonds.json");
    std::fs::write(&cfg, DAMO_KDAMONDS).unwrap();
    let rec = dir.path().join("damon.data");
    let out = ok(&[
        "run",
        &path,
        "--damon",
        cfg.to_str().unwrap(),
        "--damon-record",
        rec.to_str().unwrap(),
        "--json",
        "-q",
    ]);
    let v: Value = serde_json::from_str(&out).unwrap();
    let c = &v["damon"]["contexts"][0];
    assert_eq!(c["schemes"][0]["action"], "pageout");
    // The cold set went out: idle for "1 s" (10 aggregations).
    assert_eq!(v["vmstat"]["pswpout"], 7168, "{c}");
    // The snapshots went to the record, not into the report.
    assert!(v["damon"].get("record").is_none());
    // damo's json_compressed record: one record per target (a null pid
    // monitors both tasks), a snapshot per aggregation.
    let r = read_record(&rec);
    let records = r.as_array().unwrap();
    assert_eq!(records.len(), 2);
    let nr_aggr = c["nr_aggregations"].as_u64().unwrap() as usize;
    for (i, rec) in records.iter().enumerate() {
        assert_eq!(rec["kdamond_idx"], 0);
        assert_eq!(rec["target_id"], i);
        assert_eq!(rec["intervals"]["sample_us"], "5000");
        assert_eq!(rec["intervals"]["aggr_us"], "100000");
        let snaps = rec["snapshots"].as_array().unwrap();
        assert_eq!(snaps.len(), nr_aggr);
        let s = &snaps[1];
        let t = |k: &str| s[k].as_str().unwrap().parse::<u64>().unwrap();
        assert_eq!(t("end_time") - t("start_time"), 100_000_000);
        let regions = s["regions"].as_array().unwrap();
        assert_eq!(regions.len(), [11, 5][i], "target {i}");
        let total: u64 = regions
            .iter()
            .map(|r| {
                let st: u64 = r["start"].as_str().unwrap().parse().unwrap();
                let en: u64 = r["end"].as_str().unwrap().parse().unwrap();
                assert!(r["nr_accesses"]["samples"].as_u64().unwrap() <= 20);
                en - st
            })
            .sum();
        assert_eq!(s["total_bytes"], total.to_string());
    }
}

#[test]
fn damon_flag_errors_name_the_file_and_field() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = dir.path().join("kdamonds.json");
    std::fs::write(&cfg, DAMO_KDAMONDS.replace("\"pageout\"", "\"teleport\"")).unwrap();
    let out = mmsim()
        .args(["run", "zipf-file", "-q", "--damon", cfg.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("kdamonds[0].contexts[0].schemes[0].action"),
        "{err}"
    );
    assert!(err.contains("teleport"), "{err}");
    std::fs::write(&cfg, "{not json").unwrap();
    let out = mmsim()
        .args(["run", "zipf-file", "-q", "--damon", cfg.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("not JSON"));
    let out = mmsim()
        .args(["run", "zipf-file", "-q", "--damon-record", "x.data"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("runs no DAMON"), "{err}");
}

/// HOT_COLD's workloads under DAMON_RECLAIM (min_age 1 s, watermarks open),
/// disabled at the start, with `[[damon_module_write]]` tables appended.
fn reclaim_writes(writes: &str) -> String {
    let base = HOT_COLD.split("[[machine.damon.kdamonds]]").next().unwrap();
    let workloads = HOT_COLD.split_once("[[workload]]").unwrap().1;
    format!(
        "{base}[machine.damon.reclaim]\nmin_age = 500_000\nwmarks_high = 1000\n\
         wmarks_mid = 999\nwmarks_low = 0\n\n{writes}\n[[workload]]{workloads}"
    )
}

#[test]
fn damon_module_writes_start_the_module_and_are_listed() {
    let dir = tempfile::tempdir().unwrap();
    let path = scenario(
        dir.path(),
        &reclaim_writes(
            "[[damon_module_write]]\nat = \"200ms\"\nmodule = \"reclaim\"\nparam = \"enabled\"\nvalue = true\n\n\
             [[damon_module_write]]\nat = \"1500ms\"\nmodule = \"reclaim\"\nparam = \"quota_sz\"\nvalue = \"0x1000\"\n",
        ),
    );
    let v: Value = serde_json::from_str(&ok(&["run", &path, "--json", "-q"])).unwrap();
    let w = &v["damon"]["module_writes"];
    assert_eq!(w[0]["module"], "damon_reclaim");
    assert_eq!(w[0]["param"], "enabled");
    assert_eq!(w[0]["value"], "Y");
    assert_eq!(w[0]["result"], "kdamond started with the parameters");
    assert_eq!(w[1]["param"], "quota_sz");
    assert!(
        w[1]["result"].as_str().unwrap().starts_with("stored"),
        "{w}"
    );
    let c = &v["damon"]["contexts"][0];
    assert_eq!(c["name"], "damon_reclaim");
    // Started at 200 ms: cold memory is paged out; the quota_sz write was
    // never committed, so the effective size quota stays 128 MiB.
    assert_eq!(v["vmstat"]["pswpout"], 1397, "{c}");
    assert_eq!(c["schemes"][0]["esz"], 128u64 << 20, "{c}");
    let text = ok(&["run", &path, "-q"]);
    assert!(text.contains("module parameter writes"), "{text}");
    assert!(text.contains("damon_reclaim.enabled=Y"), "{text}");
    assert!(text.contains("damon_reclaim.quota_sz=0x1000"), "{text}");
    // The same write after the run's end: no kdamond ever ran.
    let path = scenario(
        dir.path(),
        &reclaim_writes(
            "[[damon_module_write]]\nat = \"1h\"\nmodule = \"reclaim\"\nparam = \"enabled\"\nvalue = \"Y\"\n",
        ),
    );
    let v: Value = serde_json::from_str(&ok(&["run", &path, "--json", "-q"])).unwrap();
    assert_eq!(v["vmstat"]["pswpout"], 0);
    assert_eq!(v["damon"]["contexts"].as_array().unwrap().len(), 0);
}

#[test]
fn bad_damon_module_writes_name_the_table_and_field() {
    let dir = tempfile::tempdir().unwrap();
    for (write, want) in [
        (
            "module = \"stat\"\nparam = \"enabled\"\nvalue = \"Y\"",
            "damon_module_write[0].module: unknown DAMON module `stat`",
        ),
        (
            "module = \"reclaim\"\nparam = \"hot_thres_access_freq\"\nvalue = 1",
            "damon_module_write[0].param: damon_reclaim has no parameter `hot_thres_access_freq`",
        ),
        (
            "module = \"lru_sort\"\nparam = \"nr_hot_quota_exceeds\"\nvalue = 1",
            "read-only (mode 0400)",
        ),
        (
            "module = \"reclaim\"\nparam = \"enabled\"\nvalue = \"maybe\"",
            "`maybe` is not a boolean",
        ),
        (
            "module = \"reclaim\"\nparam = \"min_nr_regions\"\nvalue = 2000\n\n\
             [[damon_module_write]]\nat = \"2s\"\nmodule = \"reclaim\"\nparam = \"enabled\"\nvalue = \"Y\"",
            "damon_module_write[1]: enabled=Y would apply invalid parameters",
        ),
    ] {
        let path = scenario(
            dir.path(),
            &reclaim_writes(&format!("[[damon_module_write]]\nat = \"1s\"\n{write}\n")),
        );
        let out = mmsim().args(["run", &path, "-q"]).output().unwrap();
        assert!(!out.status.success(), "{write}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(want), "{write}: {err}");
    }
}

#[test]
fn damon_reclaim_saves_memory_on_the_parsec_like_kernels() {
    let v: Value =
        serde_json::from_str(&ok(&["compare", "damon-reclaim-parsec-like", "--json"])).unwrap();
    let published = v["published"].as_array().unwrap();
    let row = |m: &str| {
        published
            .iter()
            .find(|p| p["metric"] == m)
            .unwrap_or_else(|| panic!("{m}"))
    };
    // Memory saved: the group's resident memory at the end falls (prcl: -93 %
    // of the resident set in its best case).
    let mem = row("memcg:/bench:current");
    assert_eq!(mem["agrees"], true, "{mem}");
    assert_eq!(mem["simulated_pct"], -14.122425426136365, "{mem}");
    // Slowdown: prcl's +1.22 %. Here no paged-out page is touched again
    // (what DAMON_RECLAIM finds cold in phase 1 stays cold) and kdamond has a
    // CPU of its own, so the runtime does not change: not faster, and
    // recorded as a disagreement in VALIDATION.md.
    let rt = row("runtime_s");
    assert_eq!(rt["simulated_pct"], 0.0, "{rt}");
    let on = v["configs"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == "damon.reclaim.enabled=true")
        .unwrap();
    let m = &on["runs"][0]["metrics"];
    assert_eq!(m["pswpout"], 6363.0, "{m}");
    // kdamond: well below the 4 % of one CPU the post expects.
    assert_eq!(m["damon:kdamond_cpu_pct"], 0.29073047486651027);
}

#[test]
fn the_html_report_has_the_access_heatmap_of_a_damon_run() {
    let dir = tempfile::tempdir().unwrap();
    let path = scenario(dir.path(), HOT_COLD);
    let page = dir.path().join("r.html");
    let json = ok(&[
        "run",
        &path,
        "-q",
        "--json",
        "--report",
        page.to_str().unwrap(),
    ]);
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(html.contains("<h2>DAMON access heatmap</h2>"));
    let div = html
        .split("<div class=\"heatmap\"")
        .nth(1)
        .expect("a heatmap")
        .split('>')
        .next()
        .unwrap();
    assert!(div.contains("data-ctx=\"0\" data-target=\"0\""), "{div}");
    let snapshots: u64 = div
        .split("data-snapshots=\"")
        .nth(1)
        .unwrap()
        .split('"')
        .next()
        .unwrap()
        .parse()
        .unwrap();
    assert!(snapshots > 10, "{div}");
    // The snapshots went into the page, not the JSON.
    let v: Value = serde_json::from_str(&json).unwrap();
    assert!(v["damon"].get("record").is_none());
    // Without DAMON, no heatmap.
    ok(&["run", "zipf-file", "-q", "--report", page.to_str().unwrap()]);
    assert!(!std::fs::read_to_string(&page).unwrap().contains("heatmap"));
}
