// raprobe FILE OPS... : drop the file's page cache (FADV_DONTNEED), apply ops, print cached pages as ranges.
// ops: r<idx>[x<n>] = pread n pages at idx; R = fadvise RANDOM; S = SEQUENTIAL; N = NORMAL; m<idx> = mmap read fault (MAP_SHARED);
// s = sleep 200 ms (lets asynchronous readahead complete: mincore counts only uptodate folios)
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
int main(int argc, char **argv) {
    int fd = open(argv[1], O_RDONLY);
    struct stat st; fstat(fd, &st);
    size_t pages = st.st_size / 4096;
    posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
    char *buf = aligned_alloc(4096, 1 << 24);
    char *map = mmap(NULL, st.st_size, PROT_READ, MAP_SHARED, fd, 0);
    volatile char sink;
    for (int i = 2; i < argc; i++) {
        char *a = argv[i];
        if (a[0] == 'r') { long idx = strtol(a + 1, &a, 10); long n = 1; if (*a == 'x') n = strtol(a + 1, NULL, 10); pread(fd, buf, n * 4096, idx * 4096); }
        else if (a[0] == 'm') { long idx = strtol(a + 1, NULL, 10); sink = map[idx * 4096]; }
        else if (a[0] == 'R') posix_fadvise(fd, 0, 0, POSIX_FADV_RANDOM);
        else if (a[0] == 'S') posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
        else if (a[0] == 'N') posix_fadvise(fd, 0, 0, POSIX_FADV_NORMAL);
        else if (a[0] == 'M') madvise(map, st.st_size, MADV_RANDOM);
        else if (a[0] == 's') usleep(200000);
    }
    unsigned char *vec = malloc(pages);
    mincore(map, st.st_size, vec);
    long start = -1;
    for (size_t p = 0; p <= pages; p++) {
        int in = p < pages && (vec[p] & 1);
        if (in && start < 0) start = p;
        if (!in && start >= 0) { printf("%ld..%zu ", start, p); start = -1; }
    }
    printf("\n");
    return 0;
}
