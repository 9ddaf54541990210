//! Unit tests of `config.rs` (kept apart so that `config.rs` stays under the project's
//! 1,200-line limit for source files).

use super::*;

#[test]
fn sizes_parse_with_suffixes_and_pages() {
    assert_eq!("512M".parse::<Size>().unwrap().pages(), 131072);
    assert_eq!("4g".parse::<Size>().unwrap().bytes(), 4 << 30);
    assert_eq!("100p".parse::<Size>().unwrap().pages(), 100);
    assert_eq!("4096".parse::<Size>().unwrap().pages(), 1);
    assert_eq!(Size(512 << 20).to_string(), "512M");
    assert_eq!(Size::from_pages(3).to_string(), "12K");
    assert_eq!(Size(6000).to_string(), "6000");
}

#[test]
fn bad_sizes_are_rejected_with_reason() {
    assert!("0".parse::<Size>().unwrap_err().contains("zero"));
    assert!("-5M".parse::<Size>().unwrap_err().contains("negative"));
    assert!("12Q".parse::<Size>().unwrap_err().contains("suffix"));
    assert!("x12".parse::<Size>().unwrap_err().contains("not a size"));
    assert!("1.5G".parse::<Size>().unwrap_err().contains("not a size"));
    assert!("99999999T"
        .parse::<Size>()
        .unwrap_err()
        .contains("larger than the largest size, 1024T"));
}

#[test]
fn binary_unit_spellings_and_their_traps() {
    for t in ["512M", "512MB", "512MiB", "512m", "524288K", "524288KiB"] {
        assert_eq!(t.parse::<Size>().unwrap().bytes(), 512 << 20, "{t}");
    }
    assert_eq!("4096b".parse::<Size>().unwrap().bytes(), 4096);
    // An uppercase P is a petabyte, never pages.
    let e = "2P".parse::<Size>().unwrap_err();
    assert!(e.contains("petabyte") && e.contains("lowercase p"), "{e}");
    // `max` is cgroup v2's word for no limit, not a size.
    let e = "max".parse::<Size>().unwrap_err();
    assert!(
        e.contains("`max` is not a size") && e.contains("no limit"),
        "{e}"
    );
    let e = "1iB".parse::<Size>().unwrap_err();
    assert!(e.contains("unknown size suffix `iB`"), "{e}");
}

#[test]
fn validation_names_the_field() {
    let mut c = MachineConfig {
        swappiness: 201,
        ..Default::default()
    };
    assert_eq!(c.validate().unwrap_err().field, "machine.swappiness");
    c.swappiness = 60;
    c.memory = Size(1 << 20);
    assert_eq!(c.validate().unwrap_err().field, "machine.memory");
    c.memory = Size(1 << 30);
    c.swap = DeviceConfig::of(DeviceKind::Zram);
    assert_eq!(c.validate().unwrap_err().field, "machine.swap.size");
    c.swap.size = Some(Size(1 << 30));
    c.swap.queue_depth = Some(0);
    assert_eq!(c.validate().unwrap_err().field, "machine.swap.queue_depth");
    c.swap.queue_depth = None;
    c.page_cluster = 6;
    assert_eq!(c.validate().unwrap_err().field, "machine.page_cluster");
    c.page_cluster = 3;
    for cpus in [0, 4097] {
        c.cpus = cpus;
        let e = c.validate().unwrap_err();
        assert_eq!(e.field, "machine.cpus");
        assert!(e.to_string().contains("[1, 4096]"), "{e}");
    }
    c.cpus = 36;
    assert!(c.validate().is_ok());
    c.pagetable_frames = true;
    let e = c.validate().unwrap_err();
    assert_eq!(e.field, "machine.pagetable_frames");
    assert!(e.to_string().contains("kmem_accounting = true"), "{e}");
    c.kmem_accounting = true;
    assert!(c.validate().is_ok());
    c.cpus = 1;
    assert!(c.validate().is_ok());
}

#[test]
fn kswapd_soft_limit_rounds_needs_the_tree_on_the_classic_lru() {
    let mut c = MachineConfig::default();
    c.policy.kswapd_soft_limit_rounds = true;
    assert!(c.validate().is_ok());
    c.soft_limit_reclaim = SoftLimitReclaim::Seed004;
    let e = c.validate().unwrap_err();
    assert_eq!(e.field, "machine.policy.kswapd_soft_limit_rounds");
    assert!(
        e.to_string()
            .contains("soft_limit_reclaim = \"seed-004\" models no soft-limit pass in kswapd"),
        "{e}"
    );
    c.soft_limit_reclaim = SoftLimitReclaim::Off;
    let e = c.validate().unwrap_err();
    assert!(
        e.to_string().contains("soft_limit_reclaim = \"off\""),
        "{e}"
    );
    c.soft_limit_reclaim = SoftLimitReclaim::Tree;
    c.policy.name = PolicyName::Mglru;
    let e = c.validate().unwrap_err();
    assert_eq!(e.field, "machine.policy.kswapd_soft_limit_rounds");
    assert!(
        e.to_string()
            .contains("policy.name = \"mglru\" models no soft-limit pass"),
        "{e}"
    );
    c.policy.kswapd_soft_limit_rounds = false;
    assert!(c.validate().is_ok());
}

#[test]
fn slab_frames_need_kmem_accounting_and_one_zone() {
    // (kmem_accounting, dma_zone_pages, the error's hint or None).
    let cases = [
        (false, 0, Some("kmem_accounting = true")),
        (true, 0, None),
        (true, 4096, Some("dma_zone_pages = 0")),
    ];
    for (kmem, dma, hint) in cases {
        let c = MachineConfig {
            slab_frames: true,
            kmem_accounting: kmem,
            dma_zone_pages: dma,
            ..Default::default()
        };
        match (c.validate(), hint) {
            (Ok(()), None) => {}
            (Err(e), Some(h)) => {
                assert_eq!(e.field, "machine.slab_frames");
                assert!(e.to_string().contains(h), "{e}");
            }
            (r, h) => panic!("kmem {kmem}, dma {dma}: {r:?}, expected {h:?}"),
        }
    }
}
