// collapse: MADV_COLLAPSE on the real kernel (mmsim VALIDATION.md, "MADV_COLLAPSE
// against the 6.18 host"). Each case maps a fresh 2 MiB-aligned anonymous region,
// writes some of its pages (order-0 faults: THP `enabled` is madvise and the
// region has no advice, or MADV_NOHUGEPAGE), calls madvise(MADV_COLLAPSE) and
// prints one JSON line: the call's errno, the /proc/vmstat deltas of
// thp_collapse_alloc(_failed), and the region's AnonHugePages and Rss from
// /proc/self/smaps. Run it inside a memory cgroup (validation/khugepaged/run.sh).
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#ifndef MADV_COLLAPSE
#define MADV_COLLAPSE 25
#endif
#define PMD (2UL << 20)
#define PG 4096UL

static long vmstat(const char *name) {
    FILE *f = fopen("/proc/vmstat", "r");
    char k[128];
    long v, r = -1;
    while (f && fscanf(f, "%127s %ld", k, &v) == 2)
        if (!strcmp(k, name)) r = v;
    if (f) fclose(f);
    return r;
}

// AnonHugePages and Rss (kB) of the smaps entry starting at p.
static void smaps(char *p, long *ahp, long *rss) {
    FILE *f = fopen("/proc/self/smaps", "r");
    char line[512];
    int in = 0;
    *ahp = *rss = -1;
    while (f && fgets(line, sizeof line, f)) {
        unsigned long a, b;
        if (sscanf(line, "%lx-%lx ", &a, &b) == 2 && strchr(line, '-') < strchr(line, ' ')) {
            in = a <= (unsigned long)p && (unsigned long)p < b;
            continue;
        }
        if (in) {
            sscanf(line, "AnonHugePages: %ld", ahp);
            sscanf(line, "Rss: %ld", rss);
        }
    }
    if (f) fclose(f);
}

// A line of this process's v1 memory cgroup's memory.stat (bytes), or -1.
static long memcg_stat(const char *name) {
    char path[512], k[128], line[512];
    long v, r = -1;
    FILE *f = fopen("/proc/self/cgroup", "r");
    path[0] = 0;
    while (f && fgets(line, sizeof line, f)) {
        char *m = strstr(line, ":memory:");
        if (m) {
            m[strcspn(m, "\n")] = 0;
            snprintf(path, sizeof path, "/sys/fs/cgroup/memory%s/memory.stat", m + 8);
        }
    }
    if (f) fclose(f);
    f = path[0] ? fopen(path, "r") : NULL;
    while (f && fscanf(f, "%127s %ld", k, &v) == 2)
        if (!strcmp(k, name)) r = v;
    if (f) fclose(f);
    return r;
}

static char *region(size_t len) {
    char *raw = mmap(NULL, len + PMD, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (raw == MAP_FAILED) { perror("mmap"); exit(1); }
    char *p = (char *)(((unsigned long)raw + PMD - 1) & ~(PMD - 1));
    // Trim to [p, p + len) so the VMA is exactly the aligned region.
    if (p > raw) munmap(raw, p - raw);
    munmap(p + len, raw + len + PMD - (p + len));
    return p;
}

// case: name; pmds: region size; touch(i) says whether page i is written;
// nohuge: MADV_NOHUGEPAGE first; dontneed: pages zapped after the writes.
static void run(const char *name, int pmds, int stride, int skip, int nohuge, int untouched_pmds) {
    size_t len = pmds * PMD, pages = len / PG;
    char *p = region(len);
    if (nohuge && madvise(p, len, MADV_NOHUGEPAGE)) { perror("MADV_NOHUGEPAGE"); exit(1); }
    size_t touched_pages = pages - untouched_pmds * (PMD / PG);
    long written = 0;
    for (size_t i = 0; i < touched_pages; i += stride) {
        if (skip && i % 512 == (size_t)skip) continue;
        p[i * PG] = 1;
        written++;
    }
    long ahp0, rss0, ahp1, rss1;
    smaps(p, &ahp0, &rss0);
    long a0 = vmstat("thp_collapse_alloc"), f0 = vmstat("thp_collapse_alloc_failed");
    long n0 = vmstat("thp_scan_exceed_none_pte");
    int r = madvise(p, len, MADV_COLLAPSE);
    int e = r ? errno : 0;
    long a1 = vmstat("thp_collapse_alloc"), f1 = vmstat("thp_collapse_alloc_failed");
    long n1 = vmstat("thp_scan_exceed_none_pte");
    smaps(p, &ahp1, &rss1);
    long huge = memcg_stat("rss_huge");
    printf("{\"case\":\"%s\",\"pmds\":%d,\"written\":%ld,\"errno\":\"%s\",\"thp_collapse_alloc\":%ld,"
           "\"thp_collapse_alloc_failed\":%ld,\"thp_scan_exceed_none_pte\":%ld,"
           "\"anon_huge_kb_before\":%ld,\"rss_kb_before\":%ld,\"anon_huge_kb\":%ld,\"rss_kb\":%ld,"
           "\"memcg_rss_huge_kb\":%ld}\n",
           name, pmds, written, e ? strerrorname_np(e) : "0", a1 - a0, f1 - f0, n1 - n0,
           ahp0, rss0, ahp1, rss1, huge < 0 ? -1 : huge >> 10);
    fflush(stdout);
    munmap(p, len);
}

int main(int argc, char **argv) {
    int pmds = argc > 1 ? atoi(argv[1]) : 32;
    const char *only = argc > 2 ? argv[2] : NULL;
#define CASE(n, ...) if (!only || !strcmp(only, n)) run(n, __VA_ARGS__)
    // Every page written, no advice: every PMD range collapses.
    CASE("dense", pmds, 1, 0, 0, 0);
    // MADV_NOHUGEPAGE: refused (EINVAL), nothing allocated.
    CASE("nohugepage", pmds, 1, 0, 1, 0);
    // One page of each range never written: MADV_COLLAPSE ignores max_ptes_none.
    CASE("511-of-512", pmds, 1, 7, 0, 0);
    // One page in 64 written: still collapses (and RSS grows 64x).
    CASE("sparse-64", pmds, 64, 0, 0, 0);
    // The last range never touched (no page table): SCAN_PMD_NONE.
    CASE("last-pmd-untouched", pmds, 1, 0, 0, 1);
    return 0;
}
