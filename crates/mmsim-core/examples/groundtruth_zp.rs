//! Replays the groundtruth program `zp.c` (a C program run on the host kernel): 400 MiB
//! of anonymous memory written once, then read and written once more, in a
//! 256 MiB memory cgroup with swap on an SSD-backed swapfile, and prints the
//! swap counters to compare with the host kernel's run
//! (the host's anon-swap accounting run:
//! pswpin 102,442, pswpout 146,921, pgmajfault 12,811, swap_ra 89,632).
//! mmsim gave pswpin 73,705 until reclaim completed writeback while it ran
//! (see VALIDATION.md, case anon-seq-swap); it now agrees within 0.1 %.
//!
//! The host's memory cgroup was v1, whose limit reclaim waits for writeback;
//! pass `v2` to see the cgroup v2 behaviour instead.
//!
//! `cargo run --release -p mmsim-core --example groundtruth_zp [v1|v2]`
use mmsim_core::*;
fn main() {
    let v2 = std::env::args().nth(1).as_deref() == Some("v2");
    let cfg = MachineConfig {
        cgroup_version: if v2 {
            CgroupVersion::V2
        } else {
            CgroupVersion::V1
        },
        memory: Size(24 << 30),
        memcg_max: Some(Size(256 << 20)),
        swap: DeviceConfig {
            size: Some(Size(2 << 30)),
            ..DeviceConfig::of(DeviceKind::Ssd)
        },
        ..Default::default()
    };
    let mut sim = Sim::new(cfg).unwrap();
    let t = sim.add_task("zp");
    let v = sim.mmap_anon(t, 102400).unwrap();
    let ev: Vec<Event> = (0..102400)
        .map(|i| Event::Access {
            vma: v,
            index: i,
            write: true,
        })
        .collect();
    sim.run(&ev);
    let s = sim.vmstat().clone();
    println!("after fill: pswpout {} pgsteal_anon {} pgscan_anon {} pgactivate {} pgrotated {} now {} ns", s.pswpout, s.pgsteal_anon, s.pgscan_anon, s.pgactivate, s.pgrotated, sim.now());
    println!("{}", sim.debug_summary());
    sim.run(&ev);
    let s2 = sim.vmstat().clone();
    println!(
        "after pass: pswpin {} pswpout {} pgmajfault {} swap_ra {} swap_ra_hit {}",
        s2.pswpin, s2.pswpout, s2.pgmajfault, s2.swap_ra, s2.swap_ra_hit
    );
}
