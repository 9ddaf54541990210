use mmsim_core::*;
fn main() {
    let cfg = MachineConfig {
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
        "after pass: pswpin {} pgmajfault {} pgfault {}",
        s2.pswpin,
        s2.pgmajfault,
        s2.pgfault - s.pgfault
    );
}
