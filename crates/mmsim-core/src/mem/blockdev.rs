//! A block device's timing: latency plus serialized transfer.
//!
//! An IO of n pages submitted at time t starts when the device's transfer
//! pipe is free (`busy_until`), occupies it for n × per-page transfer time,
//! and completes one latency later. Latency overlaps between requests (the
//! device has queue depth), bandwidth does not. This is enough to make swap
//! storms and readahead-less random reads cost what they cost on the device
//! kinds of [`crate::config::DeviceConfig`].
//!
//! The block layer holds a bounded number of requests (`nr_requests`,
//! default `BLKDEV_DEFAULT_RQ` = 128): a writer that finds them all in
//! flight sleeps until one completes. Here a write waits until the backlog
//! is below `queue_depth` pages, so reclaim and the flusher cannot run
//! ahead of the device by more than that.

use crate::config::DeviceConfig;

/// Timing state of one device.
#[derive(Clone, Debug, Default)]
pub(crate) struct BlockDev {
    /// Read latency, ns.
    pub read_ns: u64,
    /// Write latency, ns.
    pub write_ns: u64,
    /// Transfer time per 4 KiB page, ns.
    pub page_ns: u64,
    /// Time the transfer pipe becomes free.
    pub busy_until: u64,
    /// Pages read.
    pub pages_read: u64,
    /// Pages written.
    pub pages_written: u64,
    /// Total time the pipe was busy (for utilisation).
    pub busy_ns: u64,
    /// Most transfer time that may be queued ahead of a new write (queue depth × page time).
    pub max_backlog_ns: u64,
}

/// A submitted write: when it completes, and how long the submitter waited
/// for a free request first.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct WriteIo {
    /// Completion time.
    pub done: u64,
    /// Time the submitter slept for a request slot.
    pub wait: u64,
}

impl BlockDev {
    /// A device with the timing of `cfg`.
    pub(crate) fn new(cfg: &DeviceConfig) -> Self {
        let (read_ns, write_ns, page_ns) = cfg.timing();
        let depth = cfg
            .queue_depth
            .unwrap_or(crate::config::DEFAULT_QUEUE_DEPTH) as u64;
        BlockDev {
            read_ns,
            write_ns,
            page_ns,
            max_backlog_ns: depth * page_ns,
            ..Default::default()
        }
    }

    /// Submits a read of `pages` at `now`; returns its completion time.
    #[inline]
    pub(crate) fn read(&mut self, now: u64, pages: u64) -> u64 {
        self.pages_read += pages;
        self.transfer(now, pages) + self.read_ns
    }

    /// Submits a write of `pages` at `now`, first waiting for a free request
    /// if the device already has `queue_depth` pages of backlog.
    #[inline]
    pub(crate) fn write(&mut self, now: u64, pages: u64) -> WriteIo {
        self.write_placed(now, now, pages)
    }

    /// [`write`](Self::write) by a writer at `now` whose transfer joins the
    /// device's backlog at `place` ≤ `now`: kswapd, whose clock runs a whole
    /// priority iteration ahead of the workload's. The transfer time is
    /// conserved, but the device is not left idle until kswapd's future,
    /// where it would hold up the reads the tasks issue before that time
    /// (on a 0.4 µs ramdisk this had tripled every swap-in's wait).
    #[inline]
    pub(crate) fn write_placed(&mut self, now: u64, place: u64, pages: u64) -> WriteIo {
        let wait = self.busy_until.saturating_sub(now + self.max_backlog_ns);
        self.pages_written += pages;
        let at = now + wait;
        let done = self.transfer(place.min(at), pages).max(at) + self.write_ns;
        WriteIo { done, wait }
    }

    #[inline]
    fn transfer(&mut self, now: u64, pages: u64) -> u64 {
        let start = self.busy_until.max(now);
        let t = pages * self.page_ns;
        self.busy_until = start + t;
        self.busy_ns += t;
        self.busy_until
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{DeviceConfig, DeviceKind};

    #[test]
    fn latency_overlaps_bandwidth_serializes() {
        let mut cfg = DeviceConfig::of(DeviceKind::Custom);
        cfg.read_latency_us = Some(100.0);
        cfg.write_latency_us = Some(10.0);
        cfg.bandwidth_mbps = Some(4096.0 / 1000.0); // 1 ms per page
        let mut d = BlockDev::new(&cfg);
        assert_eq!(d.page_ns, 1_000_000);
        assert_eq!(d.read(0, 1), 1_000_000 + 100_000);
        // second read queued behind the first transfer
        assert_eq!(d.read(0, 1), 2_000_000 + 100_000);
        assert_eq!(
            d.write(5_000_000, 2),
            WriteIo {
                done: 7_000_000 + 10_000,
                wait: 0
            }
        );
    }

    #[test]
    fn a_write_placed_early_does_not_hold_earlier_reads_until_its_time() {
        let mut cfg = DeviceConfig::of(DeviceKind::Custom);
        cfg.read_latency_us = Some(1.0);
        cfg.write_latency_us = Some(1.0);
        cfg.bandwidth_mbps = Some(4096.0 / 1000.0); // 1 ms per page
        let mut d = BlockDev::new(&cfg);
        // kswapd writes at 10 ms, placed at the workload's 2 ms: the
        // transfer runs 2..3 ms, and the write completes after its issue.
        let io = d.write_placed(10_000_000, 2_000_000, 1);
        assert_eq!(io.done, 10_000_000 + 1_000);
        // A read at 2 ms waits for that transfer only, not until 10 ms.
        assert_eq!(d.read(2_000_000, 1), 4_000_000 + 1_000);
        // Unplaced, the same write would hold the read until 11 ms.
        let mut d = BlockDev::new(&cfg);
        d.write(10_000_000, 1);
        assert_eq!(d.read(2_000_000, 1), 12_000_000 + 1_000);
    }

    #[test]
    fn a_full_request_queue_makes_the_writer_wait() {
        let mut cfg = DeviceConfig::of(DeviceKind::Custom);
        cfg.read_latency_us = Some(100.0);
        cfg.bandwidth_mbps = Some(4096.0 / 1000.0); // 1 ms per page
        cfg.queue_depth = Some(2);
        let mut d = BlockDev::new(&cfg);
        assert_eq!(d.write(0, 1).wait, 0);
        assert_eq!(d.write(0, 1).wait, 0);
        // 2 ms of backlog = the queue depth: the third waits for the first to finish.
        let io = d.write(0, 1);
        assert_eq!(io.wait, 0);
        let io = d.write(0, 1);
        assert_eq!(io.wait, 1_000_000);
        assert_eq!(io.done, 4_000_000 + 100_000);
    }
}
