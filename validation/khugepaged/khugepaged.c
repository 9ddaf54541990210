// khugepaged: how fast khugepaged collapses a region on the real kernel (mmsim
// VALIDATION.md, "khugepaged against the 6.18 host"). Maps a 2 MiB-aligned
// anonymous region of PMDS PMD ranges, writes every page under MADV_NOHUGEPAGE
// (order-0 faults), then madvise(MADV_HUGEPAGE): the mm is registered with
// khugepaged, which wakes at once. Prints, every 500 ms for SECONDS seconds, the
// region's AnonHugePages and khugepaged's pages_collapsed and full_scans
// (deltas). Changes no system setting (the advice is the region's own).
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#define PMD (2UL << 20)
#define KH "/sys/kernel/mm/transparent_hugepage/khugepaged/"

static long readl(const char *path) {
    FILE *f = fopen(path, "r");
    long v = -1;
    if (f && fscanf(f, "%ld", &v) != 1) v = -1;
    if (f) fclose(f);
    return v;
}

static long anon_huge_kb(char *p) {
    FILE *f = fopen("/proc/self/smaps", "r");
    char line[512];
    int in = 0;
    long v = -1;
    while (f && fgets(line, sizeof line, f)) {
        unsigned long a, b;
        if (sscanf(line, "%lx-%lx ", &a, &b) == 2 && strchr(line, '-') < strchr(line, ' ')) {
            in = a <= (unsigned long)p && (unsigned long)p < b;
            continue;
        }
        if (in) sscanf(line, "AnonHugePages: %ld", &v);
    }
    if (f) fclose(f);
    return v;
}

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec / 1e9;
}

int main(int argc, char **argv) {
    int pmds = argc > 1 ? atoi(argv[1]) : 32, secs = argc > 2 ? atoi(argv[2]) : 35;
    size_t len = pmds * PMD;
    char *raw = mmap(NULL, len + PMD, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (raw == MAP_FAILED) return 1;
    char *p = (char *)(((unsigned long)raw + PMD - 1) & ~(PMD - 1));
    if (p > raw) munmap(raw, p - raw);
    munmap(p + len, raw + len + PMD - (p + len));
    if (madvise(p, len, MADV_NOHUGEPAGE)) { perror("MADV_NOHUGEPAGE"); return 1; }
    for (size_t i = 0; i < len; i += 4096) p[i] = 1;
    long c0 = readl(KH "pages_collapsed"), s0 = readl(KH "full_scans");
    printf("{\"pmds\":%d,\"pages_to_scan\":%ld,\"scan_sleep_millisecs\":%ld,\"anon_huge_kb\":%ld}\n",
           pmds, readl(KH "pages_to_scan"), readl(KH "scan_sleep_millisecs"), anon_huge_kb(p));
    double t0 = now();
    if (madvise(p, len, MADV_HUGEPAGE)) { perror("MADV_HUGEPAGE"); return 1; }
    long last = -2;
    while (now() - t0 < secs) {
        long ahp = anon_huge_kb(p);
        long c = readl(KH "pages_collapsed") - c0, s = readl(KH "full_scans") - s0;
        if (ahp != last)
            printf("{\"t_s\":%.2f,\"anon_huge_kb\":%ld,\"pages_collapsed\":%ld,\"full_scans\":%ld}\n",
                   now() - t0, ahp, c, s);
        fflush(stdout);
        last = ahp;
        usleep(100000);
    }
    printf("{\"t_s\":%.2f,\"anon_huge_kb\":%ld,\"pages_collapsed\":%ld,\"full_scans\":%ld}\n", now() - t0,
           anon_huge_kb(p), readl(KH "pages_collapsed") - c0, readl(KH "full_scans") - s0);
    return 0;
}
