//! Unit tests of `sim.rs` (kept apart so that `sim.rs` stays under the project's
//! 1,200-line limit for source files).

use super::mm_init::{sampled_watermarks, watermarks};

#[test]
fn watermarks_follow_the_kernel_formula() {
    // 4 GiB: lowmem 4194304 kB → int_sqrt(67108864) = 8192 kB = 2048 pages;
    // gap = max(512, 1048576·10/10000 = 1048) → low 3096, high 4144.
    assert_eq!(watermarks(1 << 20, None, 10), (2048, 3096, 4144));
    // 16 MiB: int_sqrt(16384·16) = 512 kB = 128 pages, gap = max(32, 4) = 32
    assert_eq!(watermarks(4096, None, 10), (128, 160, 192));
    // 1 TiB: int_sqrt(2^34) = 131072 kB = 32768 pages (the 256 MiB cap is hit at 4 TiB)
    assert_eq!(watermarks(1 << 28, None, 10).0, 32768);
}

#[test]
fn sampled_watermarks_are_the_whole_machines_scaled() {
    // 1 GiB sampled at 1/2: the whole node's min 1024, low 1286, high 1548 (gap
    // max(256, 262144·10/10000 = 262)), halved; the small node's own formula would
    // give int_sqrt(2097152) = 1448 kB → min 362, 1.41 times too large a share.
    assert_eq!(watermarks(1 << 18, None, 10), (1024, 1286, 1548));
    assert_eq!(sampled_watermarks(1 << 17, 0.5, None, 10), (512, 643, 774));
    // 1 % of 1 GiB: 2621 pages, min 10, low 13, high 15.
    assert_eq!(sampled_watermarks(2621, 0.01, None, 10), (10, 13, 15));
    // A given min_free_kbytes is the whole machine's.
    assert_eq!(sampled_watermarks(1 << 17, 0.5, Some(8192), 10).0, 1024);
}
