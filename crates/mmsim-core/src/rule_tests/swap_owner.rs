//! The swap device's owner map (`swap_cgroup`) is kept only once a slot is
//! charged to a group other than the root (issue #18 item 6): what every
//! slot reads back, and the host bytes, before and after.

use crate::config::{DeviceConfig, DeviceKind};
use crate::mem::swap::SwapDevice;

/// Root-only charges keep no owner bytes and read back as the root's; the
/// first other group's charge allocates the map over the slots in use
/// (the root's entries 0), after which every charge is written, root's
/// included, and released slots give back the group they were charged to.
#[test]
fn the_owner_map_is_allocated_at_the_first_non_root_charge() {
    let mut d = SwapDevice::new(&DeviceConfig::of(DeviceKind::Ssd), 64);
    for want in 0..4 {
        assert_eq!(d.alloc(0), Some(want));
    }
    // Slots only: no owner bytes, no free list yet.
    assert_eq!(d.heap_bytes(), d.slots.capacity() * 4);
    assert_eq!((0..4).map(|s| d.owner(s)).collect::<Vec<_>>(), [0; 4]);
    assert!(d.owner_ref(0).is_none());
    // Slot 1 freed and reused by group 3: the map appears, 2 B per slot.
    assert_eq!(d.release(1), 0);
    assert_eq!(d.alloc(3), Some(1));
    assert_eq!((0..4).map(|s| d.owner(s)).collect::<Vec<_>>(), [0, 3, 0, 0]);
    assert_eq!(d.owner_ref(1), Some(&3));
    assert!(d.heap_bytes() >= d.slots.capacity() * 4 + 4 * 2);
    // A root charge after that is written too (slot 1 back to the root),
    // and contiguous slots take their group.
    assert_eq!(d.release(1), 3);
    assert_eq!(d.alloc(0), Some(1));
    assert_eq!(d.alloc_contig(5, 4), Some(4));
    assert_eq!(
        (0..8).map(|s| d.owner(s)).collect::<Vec<_>>(),
        [0, 0, 0, 0, 5, 5, 5, 5]
    );
    assert_eq!(d.release(6), 5);
    assert_eq!(d.alloc(0), Some(6));
    assert_eq!(d.owner(6), 0);
}

/// The free-slot stack lives in the free slots' own words (issue #18 item
/// 3): freed slots come back last-freed first, exactly as from the `Vec`
/// stack it replaced (so every slot number, and every result, is kept),
/// alignment padding of `alloc_contig` joins the stack, and the device's
/// bytes are its slot array alone whatever was freed.
#[test]
fn freed_slots_are_reused_last_freed_first_and_cost_no_bytes() {
    let mut d = SwapDevice::new(&DeviceConfig::of(DeviceKind::Ssd), 4096);
    for want in 0..6 {
        assert_eq!(d.alloc(0), Some(want));
    }
    // 1024 slots reserved at the first push (a sixteenth of 0, at least 1024).
    assert_eq!(d.slots.capacity(), 1024);
    for s in [1, 5, 3] {
        d.release(s);
    }
    assert_eq!(d.used, 3);
    assert_eq!(d.heap_bytes(), 1024 * 4);
    let free: Vec<u32> = (0..6).filter(|&s| d.is_free(s)).collect();
    assert_eq!(free, [1, 3, 5]);
    assert!(d.is_free(6), "never used");
    assert_eq!(
        (0..4).map(|_| d.alloc(0).unwrap()).collect::<Vec<_>>(),
        [3, 5, 1, 6]
    );
    // An allocated slot reads 0 until its user writes it.
    assert_eq!(&d.slots[..7], &[0; 7]);
    // Slots 7..8 skipped to align 4 contiguous slots at 8: they are reused
    // next, 7 (pushed last) first.
    assert_eq!(d.alloc_contig(0, 4), Some(8));
    assert_eq!(d.used, 11);
    assert_eq!(d.alloc(0), Some(7));
    assert_eq!(d.alloc(0), Some(12));
    assert_eq!(d.free_slots(), [false; 13]);
}

/// The slot array grows by a sixteenth (at least 1024 slots), not by
/// `Vec`'s doubling.
#[test]
fn the_slot_array_grows_by_a_sixteenth() {
    let mut d = SwapDevice::new(&DeviceConfig::of(DeviceKind::Ssd), 1 << 20);
    for _ in 0..20_000 {
        d.alloc(0).unwrap();
    }
    // 1024, 2048, ... 16384 by 1024; then 16384 + 1024, 17408 + 1088, 18496 + 1156, 19652 + 1228.
    assert_eq!(d.slots.capacity(), 20_880);
}
