//! Prints which pages of a file are cached after a sequence of reads, in the same
//! notation as `tools/raprobe.c` prints them for the real kernel, so the two can be
//! compared op for op:
//!
//! ```text
//! cargo run --release -p mmsim-core --example readahead_probe -- PAGES RA_KB OPS...
//! gcc -O2 -o /tmp/raprobe tools/raprobe.c && /tmp/raprobe FILE OPS...
//! ```
//!
//! OPS: `r<idx>[x<n>]` pread of n pages at idx; `R`/`S`/`N` fadvise
//! RANDOM/SEQUENTIAL/NORMAL; `m<idx>` a read fault on a shared mapping of the file;
//! `M` madvise(MADV_RANDOM) on it; `s` is raprobe's sleep (lets asynchronous
//! readahead complete before `mincore`, which counts only uptodate folios), a
//! no-op here. RA_KB is the device's `read_ahead_kb`. With `LARGE_FOLIOS=1` in
//! the environment the filesystem has large folios (`machine.fs.large_folios`).
use mmsim_core::{Advice, Event, MachineConfig, Sim, Size};

fn main() {
    let a: Vec<String> = std::env::args().skip(1).collect();
    let pages: u64 = a[0].parse().expect("PAGES");
    let ra_kb: u32 = a[1].parse().expect("RA_KB");
    let mut cfg = MachineConfig {
        memory: Size(4 << 30),
        read_ahead_kb: ra_kb,
        max_sectors_kb: 4096,
        ..MachineConfig::default()
    };
    cfg.fs.large_folios = std::env::var("LARGE_FOLIOS").is_ok_and(|v| v == "1");
    let mut sim = Sim::new(cfg).expect("machine");
    let task = sim.add_task("probe");
    let file = sim.add_file("f", pages).expect("file");
    let vma = sim.mmap_file(task, file, 0, pages, false).expect("mmap");
    for op in &a[2..] {
        let (kind, rest) = op.split_at(1);
        let mut nums = rest.split('x').map(|s| s.parse::<u32>().unwrap_or(1));
        let idx = nums.next().unwrap_or(0);
        let n = nums.next().unwrap_or(1);
        match kind {
            "r" => sim.step(&Event::FileRead {
                file,
                index: idx,
                pages: n as u16,
            }),
            "m" => sim.step(&Event::Access {
                vma,
                index: idx,
                write: false,
            }),
            "R" => sim.fadvise(file, Advice::Random).unwrap(),
            "S" => sim.fadvise(file, Advice::Sequential).unwrap(),
            "N" => sim.fadvise(file, Advice::Normal).unwrap(),
            "M" => sim.madvise(vma, Advice::Random).unwrap(),
            "s" => {}
            _ => panic!("unknown op {op}"),
        }
    }
    println!("{}", sim.cached_ranges(file));
}
