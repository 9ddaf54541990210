//! The event loop: the workload's events executed one at a time on CPU 0
//! ([`Sim::step`]), expired timers first, and the batch loop ([`Sim::run`]) that
//! prefetches the page-table or page-cache slot and folio of events ahead.

use super::Sim;
use crate::event::Event;

impl Sim {
    /// Executes one event. This is the per-access hot path.
    #[inline(always)]
    pub fn step(&mut self, ev: &Event) {
        if self.clock >= self.timers.next_expiry() {
            self.run_timers();
        }
        match *ev {
            Event::Access { vma, index, write } => self.access(vma, index, write),
            Event::FileRead { file, index, pages } => self.filemap_read(file, index, pages),
            Event::FdRead { fd, index, pages } => self.fd_read(fd, index, pages),
            Event::FdClose { fd } => self.fd_close_event(fd),
            Event::FileWrite { file, index, pages } => {
                self.generic_perform_write(file, index, pages)
            }
            Event::FileSync { .. } => self.file_sync(ev),
            Event::Think { ns } => self.advance(ns),
            Event::Discard { vma, index, pages } => self.madvise_dontneed(vma, index, pages),
            Event::Collapse { vma, index, pages } => self.collapse_event(vma, index, pages),
            Event::ThpAdvice { vma, advice } => self.thp_advice_event(vma, advice),
            Event::Remap { vma } => self.remap_event(vma),
            Event::Fork { vma, pages } => self.fork_event(vma, pages),
        }
        if self.pages_over_high > 0 {
            self.mem_cgroup_handle_over_high();
        }
    }

    /// Executes a batch of events.
    ///
    /// Accesses to large footprints are bound by memory latency (the PTE or
    /// page-cache slot and then the folio are random loads), so the batch is
    /// software-pipelined: the slot of event i + 2·D and the folio of event
    /// i + D are prefetched while event i executes. Prefetches are hints
    /// only; they change no state.
    pub fn run(&mut self, events: &[Event]) {
        if self.kmem.is_some() {
            self.kmem_charge_tasks();
        }
        if self.tp.is_some() || self.xp.is_some() {
            if self.xp.is_some() {
                self.run_explained(events);
            } else {
                self.run_traced(events);
            }
            return;
        }
        const D: usize = 8;
        // The loop in three parts, so that the steady state tests neither
        // distance against the batch's end (and indexes only through
        // windows the compiler knows are in bounds): events with both
        // stages ahead, then those with only the folio stage ahead, then
        // the last D. The same prefetches for the same events as one loop
        // with both tests.
        let n = events.len();
        let steady = n.saturating_sub(2 * D);
        // `steady` windows: none when n ≤ 2·D.
        for w in events.windows(2 * D + 1) {
            self.prefetch_slot(&w[2 * D]);
            self.prefetch_folio(&w[D]);
            self.step(&w[0]);
        }
        let middle = n.saturating_sub(D).max(steady);
        for i in steady..middle {
            self.prefetch_folio(&events[i + D]);
            self.step(&events[i]);
        }
        for ev in &events[middle..] {
            self.step(ev);
        }
    }

    /// [`Sim::run`] with the tracepoints on: each event's task becomes the one
    /// the tracepoints name, and a buffered read emits `mm_filemap_get_pages`
    /// (`filemap_get_pages`, before the read) for its whole range. The untraced
    /// loop pays one test per batch for this.
    #[cold]
    pub(crate) fn run_traced(&mut self, events: &[Event]) {
        use crate::tracepoint::TpTask;
        for ev in events {
            match *ev {
                Event::Access { vma, .. } => {
                    if let Some(v) = self.vmas.get(vma as usize) {
                        self.tp_task = TpTask::Task(v.task);
                    }
                }
                Event::FileRead { file, index, pages } => {
                    self.tp_task = self.tp_file_task(file);
                    self.tp_get_pages(file, index, pages);
                }
                Event::FdRead { fd, index, pages } => {
                    if let (Some(file), Some(task)) = (self.fd_file(fd), self.fd_task(fd)) {
                        self.tp_task = TpTask::Task(task);
                        self.tp_get_pages(file, index, pages);
                    }
                }
                Event::FileWrite { file, .. } => self.tp_task = self.tp_file_task(file),
                _ => {} // Think, Discard, Collapse, ThpAdvice, FileSync: no tracepoint
            }
            self.step(ev);
        }
    }

    /// The PTE or page-cache slot an event will read, if it exists yet, and
    /// whether it is a PTE: two tests (Access first), not a six-way jump table.
    #[inline(always)]
    fn slot_ref(&self, ev: &Event) -> Option<(&u32, bool)> {
        if let Event::Access { vma, index, .. } = *ev {
            return Some((self.vmas.get(vma as usize)?.ptes.get(index as usize)?, true));
        }
        if let Event::FileRead { file, index, .. } | Event::FileWrite { file, index, .. } = *ev {
            let slots = &self.files.get(file as usize)?.slots;
            return Some((slots.get(index as usize)?, false));
        }
        None
    }

    /// First stage: the address of the PTE or page-cache slot an event
    /// will read. Only the VMA or file is looked up with a bounds check
    /// (its table is read); the slot's address is computed without one, as
    /// a prefetch never faults: an index past the table (a page not touched
    /// yet) prefetches a line nothing reads, a hint with no effect on state.
    #[inline]
    fn prefetch_slot(&self, ev: &Event) {
        if let Event::Access { vma, index, .. } = *ev {
            if let Some(v) = self.vmas.get(vma as usize) {
                prefetch(v.ptes.as_ptr().wrapping_add(index as usize) as *const u8);
            }
        } else if let Event::FileRead { file, index, .. } | Event::FileWrite { file, index, .. } =
            *ev
        {
            if let Some(fo) = self.files.get(file as usize) {
                prefetch(fo.slots.as_ptr().wrapping_add(index as usize) as *const u8);
            }
        }
    }

    /// Second stage: the slot has been prefetched; prefetch what it points
    /// to — the resident folio, or for a swapped-out anonymous page its swap
    /// slot (which `do_swap_page` reads first).
    #[inline]
    fn prefetch_folio(&self, ev: &Event) {
        let Some((&v, pte)) = self.slot_ref(ev) else {
            return;
        };
        if v & crate::mem::pagetable::PTE_PRESENT != 0 {
            let f = if pte {
                v & crate::mem::pagetable::PTE_FOLIO_MASK
            } else {
                v & !crate::mem::filemap::SLOT_FOLIO
            };
            self.folios.prefetch(f);
        } else if v != 0 && pte {
            if let Some(swap) = self.swap.as_ref() {
                // An address only (see `prefetch_slot`): no bounds check.
                prefetch(swap.slots.as_ptr().wrapping_add((v - 1) as usize) as *const u8);
                if let Some(owner) = swap.owner_ref(v - 1) {
                    prefetch(owner as *const crate::memcg::MemcgId as *const u8);
                }
            }
        }
    }
}

/// A cache prefetch hint (no-op where the architecture has none).
#[inline(always)]
pub(crate) fn prefetch(p: *const u8) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: prefetch never faults, whatever the address.
    unsafe {
        std::arch::x86_64::_mm_prefetch(p as *const i8, std::arch::x86_64::_MM_HINT_T0)
    };
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}
