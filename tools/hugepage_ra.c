// hugepage_ra FILE N [RANDOM]: which do_sync_mmap_readahead() the running kernel has for
// a MADV_HUGEPAGE file mapping (mmsim's `machine.hugepage_readaround`).
//
// Creates FILE sparse (3N+3 2 MiB chunks, uncached), maps it read-only MAP_SHARED,
// madvise(MADV_HUGEPAGE) (and MADV_RANDOM unless RANDOM is 0), reads one byte in N
// chunks three apart (each a page-cache miss in a chunk nothing was read into), then
// counts the mapping's resident pages (mincore). Up to 6.18 every miss reads its window:
// N x 512 pages under MADV_RANDOM. From 6.19 each miss first counts against the file's
// mmap_miss, which a PMD-mapped fault never takes back, so past MMAP_LOTSAMISS (100)
// misses a fault reads its page alone: about 100 x 512 + (N - 100). Needs a filesystem
// with large folios (ext4 on 6.16+, xfs) so that the chunks are PMD-mapped: check that
// /proc/vmstat thp_file_mapped rises by N. The file is unlinked and its cache dropped
// at the end. Build: cc -O2 -o hugepage_ra tools/hugepage_ra.c
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

int main(int argc, char **argv) {
    if (argc < 3) {
        fprintf(stderr, "usage: hugepage_ra FILE N [RANDOM]\n");
        return 2;
    }
    const char *path = argv[1];
    long n = atol(argv[2]);
    int random_advice = argc > 3 ? atoi(argv[3]) : 1;
    const size_t chunk = 2ul << 20, len = (size_t)(3 * n + 3) * chunk;
    if (n < 1 || n > 100000) {
        fprintf(stderr, "N must be in 1..=100000\n");
        return 2;
    }
    int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
    if (fd < 0 || ftruncate(fd, len)) {
        perror(path);
        return 1;
    }
    posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
    // A 2 MiB-aligned address, so that each chunk can be PMD-mapped.
    char *area = mmap(NULL, len + chunk, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    char *at = (char *)(((unsigned long)area + chunk - 1) & ~(chunk - 1));
    char *p = mmap(at, len, PROT_READ, MAP_SHARED | MAP_FIXED, fd, 0);
    if (area == MAP_FAILED || p == MAP_FAILED) {
        perror("mmap");
        return 1;
    }
    if (madvise(p, len, MADV_HUGEPAGE) || (random_advice && madvise(p, len, MADV_RANDOM))) {
        perror("madvise");
        return 1;
    }
    volatile char sink = 0;
    for (long i = 0; i < n; i++)
        sink += p[(size_t)(3 * i + 1) * chunk + 7 * 4096];
    const size_t pages = len / 4096;
    unsigned char *vec = malloc(pages);
    if (!vec || mincore(p, len, vec)) {
        perror("mincore");
        return 1;
    }
    size_t resident = 0, after100 = 0;
    for (size_t i = 0; i < pages; i++) {
        if (vec[i] & 1) {
            resident++;
            if (i >= (size_t)(3 * 100 + 1) * 512)
                after100++;
        }
    }
    printf("faults %ld resident %zu (after the 100th fault's chunk: %zu)\n", n, resident,
           after100);
    munmap(area, len + chunk);
    posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
    close(fd);
    unlink(path);
    return 0;
}
