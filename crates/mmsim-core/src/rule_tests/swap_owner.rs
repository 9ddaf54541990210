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
