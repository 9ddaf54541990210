//! Prints the page-cache folios of a file after a sequence of buffered writes, in
//! the notation `tools/wfprobe.c` prints them for the real kernel (runs
//! `first..end/oORDER`, then `folios: oK=N` per order), so the two can be compared op
//! for op:
//!
//! ```text
//! cargo run --release -p mmsim-core --example write_probe -- PAGES MEMCG_MB OPS...
//! gcc -O2 -o /tmp/wfprobe tools/wfprobe.c && /tmp/wfprobe FILE OPS...
//! ```
//!
//! OPS: `w<idx>x<n>[c<chunk>]` writes pages idx..idx+n in writes of `chunk` pages
//! (default one write); `b<off>+<len>` (a write at a byte offset) is not expressible
//! here: give its pages as `w`. MEMCG_MB is the limit of the writer's group (v1), 0
//! for none. The filesystem has large folios (`machine.fs.large_folios`) unless
//! `LARGE_FOLIOS=0` is in the environment.
use mmsim_core::{CgroupVersion, Event, MachineConfig, Sim, Size};

fn main() {
    let a: Vec<String> = std::env::args().skip(1).collect();
    if a.len() < 2 {
        eprintln!("usage: write_probe PAGES MEMCG_MB OPS...");
        std::process::exit(2);
    }
    let pages: u64 = a[0].parse().expect("PAGES");
    let memcg_mb: u64 = a[1].parse().expect("MEMCG_MB");
    let mut cfg = MachineConfig {
        memory: Size(4 << 30),
        cgroup_version: CgroupVersion::V1,
        memcg_max: (memcg_mb > 0).then_some(Size(memcg_mb << 20)),
        ..MachineConfig::default()
    };
    cfg.fs.large_folios = !std::env::var("LARGE_FOLIOS").is_ok_and(|v| v == "0");
    let mut sim = Sim::new(cfg).expect("machine");
    let task = sim.add_task("probe");
    let file = sim.add_file("f", pages).expect("file");
    sim.open(file, task).expect("open");
    let mut writes = Vec::new();
    for op in &a[2..] {
        let Some(rest) = op.strip_prefix('w') else {
            eprintln!("unknown op {op}");
            std::process::exit(2);
        };
        let (range, chunk) = rest.split_once('c').unwrap_or((rest, ""));
        let (idx, n) = range.split_once('x').unwrap_or((range, "1"));
        let (idx, n): (u32, u32) = (idx.parse().expect("idx"), n.parse().expect("n"));
        let chunk: u32 = chunk.parse().unwrap_or(n).clamp(1, u32::from(u16::MAX));
        writes.push((idx, n, chunk));
    }
    // wfprobe's buffer, as large as its largest write, filled before the writes
    // (charged to the same group).
    let buf = writes.iter().map(|w| w.2.min(w.1)).max().unwrap_or(1);
    let vma = sim.mmap_anon(task, u64::from(buf)).expect("buffer");
    for index in 0..buf {
        sim.step(&Event::Access {
            vma,
            index,
            write: true,
        });
    }
    for (idx, n, chunk) in writes {
        let mut p = idx;
        while p < idx + n {
            let k = chunk.min(idx + n - p);
            sim.step(&Event::FileWrite {
                file,
                index: p,
                pages: k as u16,
            });
            p += k;
        }
    }
    println!("{}", sim.cached_folios(file));
}
