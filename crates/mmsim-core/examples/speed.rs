//! Quick speed probe: zipf(0.9)-like accesses over 1 M file pages, memcg at 10 %.
//! (The real benchmark is `mmsim bench`; this one needs no other crate.)
use mmsim_core::*;
use std::time::Instant;

fn main() {
    let pages: u64 = 1_000_000;
    let n = 10_000_000usize;
    // Zipf via inverse-CDF table on a xorshift stream.
    let theta = 0.9f64;
    let mut cdf = Vec::with_capacity(pages as usize);
    let mut acc = 0.0;
    for i in 1..=pages {
        acc += 1.0 / (i as f64).powf(theta);
        cdf.push(acc);
    }
    let mut x = 0x9e3779b97f4a7c15u64;
    let mut keys = Vec::with_capacity(n);
    for _ in 0..n {
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        let u = (x.wrapping_mul(0x2545f4914f6cdd1d) >> 11) as f64 / (1u64 << 53) as f64 * acc;
        let r = cdf.partition_point(|&c| c < u) as u64;
        keys.push((r.wrapping_mul(0x9e3779b97f4a7c15) % pages) as u32);
    }
    let args: Vec<String> = std::env::args().collect();
    let only = |v: &str, i: usize| args.get(i).is_none_or(|a| a == v);
    for policy in ["lru", "cost", "scanned-rotated"] {
        for target in ["file", "anon"] {
            if !only(policy, 1) || !only(target, 2) {
                continue;
            }
            let cfg = MachineConfig {
                memory: Size(16 << 30),
                memcg_max: Some(Size::from_pages(
                    pages
                        * std::env::var("PCT")
                            .ok()
                            .and_then(|v| v.parse::<u64>().ok())
                            .unwrap_or(10)
                        / 100,
                )),
                policy: PolicyConfig {
                    name: policy.parse().unwrap(),
                    ..Default::default()
                },
                swap: DeviceConfig {
                    size: Some(Size(8 << 30)),
                    ..DeviceConfig::of(DeviceKind::Zram)
                },
                ..Default::default()
            };
            let mut sim = Sim::new(cfg).unwrap();
            let t = sim.add_task("t");
            let vma = sim.mmap_anon(t, pages).unwrap();
            let file = sim.add_file("f", pages).unwrap();
            let ev: Vec<Event> = keys
                .iter()
                .map(|&k| {
                    if target == "file" {
                        Event::FileRead { file, index: k }
                    } else {
                        Event::Access {
                            vma,
                            index: k,
                            write: false,
                        }
                    }
                })
                .collect();
            let t0 = Instant::now();
            sim.run(&ev);
            let dt = t0.elapsed().as_secs_f64();
            let r = sim.finish();
            if std::env::var("VMSTAT").is_ok() {
                for (k, v) in r.vmstat.pairs() {
                    if v > 0 {
                        println!("    {k} {v}");
                    }
                }
            }
            println!(
                "{policy:>16} {target:>5}: {:6.2} M acc/s  miss {:.4}  {:.1} B/folio {:.1} B/page",
                n as f64 / dt / 1e6,
                r.miss_ratio,
                r.sim_bytes_per_resident_folio,
                r.sim_bytes_per_tracked_page
            );
        }
    }
}
