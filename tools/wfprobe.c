// wfprobe FILE OPS... : create FILE empty (O_TRUNC), apply buffered writes, then print the
// page-cache folios that hold it: their first page and order, and how many of each order.
// ops: w<idx>x<n>[c<chunk>] = pwrite pages idx..idx+n (4 KiB pages), in pwrite()s of `chunk`
//      pages (default: one pwrite of n pages);
//      b<off>+<len> = one pwrite of len bytes at byte offset off (unaligned writes);
//      d = fsync, then FADV_DONTNEED of this file only (drop its clean cache);
//      M = map the file (its size now) read-only MAP_SHARED at a 2 MiB-aligned address;
//      H = madvise(MADV_HUGEPAGE) on that mapping; t<idx>[x<n>] = read one byte of each of
//      its pages idx..idx+n. With M, a line `faults:` gives the minor and major faults of
//      the t ops (getrusage) and the mapping's FilePmdMapped (/proc/self/smaps).
// The folios are read back without allocating anything: the file is mapped read-only, each
// cached page (mincore) is touched (a minor fault, or fault-around), /proc/self/pagemap gives
// its PFN and /proc/kpageflags its KPF_COMPOUND_HEAD/TAIL bits. A folio is a head page and
// the tails that follow it at consecutive PFNs; a page that is neither is order 0.
// Needs root (PFNs). Run it inside your own memory cgroup; with a limit, set
// WFPROBE_READBACK_CGROUP (below) so that the read-back does not reclaim the file.
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#define KPF_COMPOUND_HEAD 15
#define KPF_COMPOUND_TAIL 16

static void full_pwrite(int fd, const char *buf, size_t len, off_t off) {
    while (len > 0) {
        ssize_t n = pwrite(fd, buf, len, off);
        if (n <= 0) { perror("pwrite"); exit(1); }
        buf += n; len -= n; off += n;
    }
}

int main(int argc, char **argv) {
    if (argc < 3) { fprintf(stderr, "usage: wfprobe FILE OPS...\n"); return 2; }
    int fd = open(argv[1], O_RDWR | O_CREAT | O_TRUNC, 0644);
    if (fd < 0) { perror("open"); return 1; }
    // The buffer is as large as the largest pwrite (it is charged to the group too).
    size_t bufsz = 4096;
    for (int i = 2; i < argc; i++) {
        char *a = argv[i];
        size_t need = 0;
        if (a[0] == 'w') {
            strtol(a + 1, &a, 10);
            long n = 1, chunk = 0;
            if (*a == 'x') n = strtol(a + 1, &a, 10);
            if (*a == 'c') chunk = strtol(a + 1, &a, 10);
            need = (size_t)(chunk > 0 && chunk < n ? chunk : n) * 4096;
        } else if (a[0] == 'b') {
            strtol(a + 1, &a, 10);
            if (*a == '+') need = strtol(a + 1, &a, 10);
        }
        if (need > bufsz) bufsz = (need + 4095) & ~4095UL;
    }
    char *buf = aligned_alloc(4096, bufsz);
    char *pm_map = NULL;
    size_t mlen = 0;
    long minflt = 0, majflt = 0;
    volatile char touched = 0;
    memset(buf, 0x5a, bufsz);
    for (int i = 2; i < argc; i++) {
        char *a = argv[i];
        if (a[0] == 'w') {
            long idx = strtol(a + 1, &a, 10), n = 1, chunk = 0;
            if (*a == 'x') n = strtol(a + 1, &a, 10);
            if (*a == 'c') chunk = strtol(a + 1, &a, 10);
            if (chunk <= 0) chunk = n;
            for (long p = idx; p < idx + n; p += chunk) {
                long k = chunk < idx + n - p ? chunk : idx + n - p;
                full_pwrite(fd, buf, (size_t)k * 4096, (off_t)p * 4096);
            }
        } else if (a[0] == 'b') {
            long off = strtol(a + 1, &a, 10), len = 0;
            if (*a == '+') len = strtol(a + 1, &a, 10);
            full_pwrite(fd, buf, (size_t)len, (off_t)off);
        } else if (a[0] == 'd') {
            fsync(fd);
            posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
        } else if (a[0] == 'M') {
            struct stat st0; fstat(fd, &st0);
            mlen = (st0.st_size + 4095) & ~4095UL;
            char *r = mmap(NULL, mlen + (2UL << 20), PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
            if (r == MAP_FAILED) { perror("mmap reserve"); return 1; }
            char *al = (char *)(((uintptr_t)r + (2UL << 20) - 1) & ~((2UL << 20) - 1));
            pm_map = mmap(al, mlen, PROT_READ, MAP_SHARED | MAP_FIXED, fd, 0);
            if (pm_map == MAP_FAILED) { perror("mmap fixed"); return 1; }
        } else if (a[0] == 'H') {
            if (!pm_map || madvise(pm_map, mlen, MADV_HUGEPAGE)) { perror("MADV_HUGEPAGE"); return 1; }
        } else if (a[0] == 't') {
            long idx = strtol(a + 1, &a, 10), n = 1;
            if (*a == 'x') n = strtol(a + 1, &a, 10);
            if (!pm_map || (size_t)(idx + n) * 4096 > mlen) { fprintf(stderr, "t outside M\n"); return 2; }
            struct rusage r0, r1;
            getrusage(RUSAGE_SELF, &r0);
            for (long p = idx; p < idx + n; p++) touched += pm_map[p * 4096];
            getrusage(RUSAGE_SELF, &r1);
            minflt += r1.ru_minflt - r0.ru_minflt;
            majflt += r1.ru_majflt - r0.ru_majflt;
        } else { fprintf(stderr, "bad op %s\n", argv[i]); return 2; }
    }
    if (pm_map) {
        // FilePmdMapped of our mapping in smaps.
        FILE *sm = fopen("/proc/self/smaps", "r");
        char line[256];
        int in = 0;
        long pmd_kb = -1;
        while (sm && fgets(line, sizeof line, sm)) {
            unsigned long lo, hi;
            if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2 && strchr(line, '-') < strchr(line, ' ')) {
                in = lo == (uintptr_t)pm_map;
                continue;
            }
            if (in && sscanf(line, "FilePmdMapped: %ld kB", &pmd_kb) == 1) break;
        }
        if (sm) fclose(sm);
        printf("faults: minflt=%ld majflt=%ld FilePmdMapped=%ld kB\n", minflt, majflt, pmd_kb);
    }
    struct stat st; fstat(fd, &st);
    size_t pages = (st.st_size + 4095) / 4096;
    if (pages == 0) { printf("empty\n"); return 0; }
    // Read back from another group (WFPROBE_READBACK_CGROUP: a cgroup.procs to move to):
    // the file's folios stay charged where they were written, so reclaim in that group
    // does not run while they are read back. MADV_RANDOM: a fault on a page reclaimed
    // since mincore reads just that page, no read-around that would add folios.
    const char *rb = getenv("WFPROBE_READBACK_CGROUP");
    if (rb) {
        FILE *cg = fopen(rb, "w");
        if (!cg || fprintf(cg, "%d\n", getpid()) < 0 || fclose(cg)) { perror(rb); return 1; }
    }
    char *map = mmap(NULL, pages * 4096, PROT_READ, MAP_SHARED, fd, 0);
    if (map == MAP_FAILED) { perror("mmap"); return 1; }
    madvise(map, pages * 4096, MADV_RANDOM);
    unsigned char *vec = malloc(pages);
    mincore(map, pages * 4096, vec);
    volatile char sink;
    for (size_t p = 0; p < pages; p++)
        if (vec[p] & 1) sink = map[p * 4096];
    (void)sink;
    int pm = open("/proc/self/pagemap", O_RDONLY), kf = open("/proc/kpageflags", O_RDONLY);
    if (pm < 0 || kf < 0) { perror("open /proc"); return 1; }
    uint64_t *pfn = calloc(pages, 8), *fl = calloc(pages, 8);
    for (size_t p = 0; p < pages; p++) {
        uint64_t e = 0;
        pread(pm, &e, 8, ((uintptr_t)map / 4096 + p) * 8);
        if (!(vec[p] & 1) || !(e >> 63)) continue;
        pfn[p] = e & ((1ULL << 55) - 1);
        pread(kf, &fl[p], 8, pfn[p] * 8);
    }
    long hist[16] = {0};
    size_t p = 0;
    long run_start = -1, run_order = -1, run_end = 0;
    while (p < pages) {
        if (!pfn[p]) {
            p++;
            continue;
        }
        size_t n = 1;
        if (fl[p] >> KPF_COMPOUND_HEAD & 1)
            while (p + n < pages && pfn[p + n] == pfn[p] + n && (fl[p + n] >> KPF_COMPOUND_TAIL & 1)) n++;
        int order = 0;
        while ((1UL << order) < n) order++;
        if ((1UL << order) != n) order = -1;  // not a whole folio (partly cached or unmapped)
        if (order >= 0) hist[order]++;
        if (order != run_order || (long)p != run_end) {
            if (run_start >= 0) printf("%ld..%ld/o%ld ", run_start, run_end, run_order);
            run_start = p; run_order = order;
        }
        run_end = p + n;
        p += n;
    }
    if (run_start >= 0) printf("%ld..%ld/o%ld", run_start, run_end, run_order);
    printf("\nfolios:");
    for (int o = 0; o < 16; o++)
        if (hist[o]) printf(" o%d=%ld", o, hist[o]);
    printf("\n");
    return 0;
}
