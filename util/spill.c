/* spill.c - memory backed by an unlinked file, its pages released from the process (see la_spill.h). */
#include "la_spill.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

/* How often the store's thread looks at how much of the file is mapped, and how much it lets stay
 * mapped unless told otherwise (la_spill_set_mapped_max). A read of one byte maps up to 64 KiB
 * around it (the kernel's fault-around), so reading rows in random order maps the file quickly:
 * 10,000 random reads map 600 MB. */
#define CHECK_MS 20
#define MAPPED_MAX ((size_t)64 << 20)

struct la_spill {
    int fd;
    char dir[512];
    char *base;          /* the reserved range */
    size_t reserved;     /* its bytes */
    size_t used;         /* bytes mapped from the file, from base; under lock */
    size_t page;
    size_t mapped_max;   /* file pages the process may map past its floor before a release; under lock */
    pthread_mutex_t lock;
    pthread_cond_t wake;
    int stop;            /* under lock */
    int thread_started;
    pthread_t thread;
};

/* The process's resident pages that are shared or file-backed (statm's third field), in bytes:
 * the store's mapped pages and the program's own code. SIZE_MAX when it cannot be read. */
static size_t mapped_file_bytes(size_t page)
{
    FILE *f = fopen("/proc/self/statm", "r");
    unsigned long size, resident, shared;
    int ok = f && fscanf(f, "%lu %lu %lu", &size, &resident, &shared) == 3;
    if (f) fclose(f);
    return ok ? (size_t)shared * page : SIZE_MAX;
}

/* Every CHECK_MS, unmap the store's pages once more than mapped_max of them are mapped, until told
 * to stop. What else the process maps from files (its code, its libraries) is the floor: what is
 * left right after a release, or less when less is seen. Reading a released page maps it again
 * from the page cache (or the file); a page being written keeps its bytes (they are the file's). */
static void *release_loop(void *arg)
{
    la_spill *s = arg;
    size_t floor = mapped_file_bytes(s->page);
    unsigned blind = 0;
    pthread_mutex_lock(&s->lock);
    while (!s->stop) {
        struct timespec until;
        clock_gettime(CLOCK_REALTIME, &until);
        until.tv_nsec += CHECK_MS * 1000000L;
        if (until.tv_nsec >= 1000000000L) until.tv_sec++, until.tv_nsec -= 1000000000L;
        pthread_cond_timedwait(&s->wake, &s->lock, &until);
        size_t used = s->used, most = s->mapped_max;
        if (s->stop || !used) continue;
        pthread_mutex_unlock(&s->lock);
        size_t now = mapped_file_bytes(s->page);
        if (now < floor) floor = now;
        /* without /proc, every tenth look */
        if (now == SIZE_MAX ? ++blind % 10 == 0 : now - floor > most) {
            madvise(s->base, used, MADV_DONTNEED);
            floor = mapped_file_bytes(s->page);
        }
        pthread_mutex_lock(&s->lock);
    }
    pthread_mutex_unlock(&s->lock);
    return NULL;
}

la_status la_spill_open(const char *dir, la_spill **out)
{
    *out = NULL;
    if (!dir || !*dir) dir = getenv("TMPDIR");
    if (!dir || !*dir) {
        /* /var/tmp is meant for large files; a container with a read-only root may have only /tmp */
        dir = access("/var/tmp", W_OK | X_OK) == 0 || access("/tmp", W_OK | X_OK) != 0 ? "/var/tmp" : "/tmp";
    }
    la_spill *s = calloc(1, sizeof *s);
    if (!s) return la_error(LA_ENOMEM, "out of memory");
    snprintf(s->dir, sizeof s->dir, "%s", dir);
    s->fd = -1;
    s->page = (size_t)sysconf(_SC_PAGESIZE);
    s->mapped_max = MAPPED_MAX;
    pthread_mutex_init(&s->lock, NULL);
    pthread_cond_init(&s->wake, NULL);
    char path[600];
    snprintf(path, sizeof path, "%s/leakaudit-spill-XXXXXX", dir);
    s->fd = mkstemp(path);
    if (s->fd < 0) {
        la_status st = la_error(LA_EIO, "%s: cannot make a spill file for the row text: %s (set TMPDIR to a directory with room)",
                                dir, strerror(errno));
        la_spill_close(s);
        return st;
    }
    unlink(path);
    (void)fcntl(s->fd, F_SETFD, FD_CLOEXEC);
    /* addresses only: no memory and no swap are committed for a PROT_NONE range */
    for (size_t want = (size_t)1 << 40; want >= (size_t)1 << 26 && !s->base; want /= 2) {
        void *p = mmap(NULL, want, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        if (p != MAP_FAILED) s->base = p, s->reserved = want;
    }
    if (!s->base) {
        la_spill_close(s);
        return la_error(LA_EIO, "%s: cannot reserve addresses for the spilled row text: %s", dir, strerror(errno));
    }
    if (pthread_create(&s->thread, NULL, release_loop, s) != 0) {
        la_spill_close(s);
        return la_error(LA_EIO, "cannot start the spill store's thread");
    }
    s->thread_started = 1;
    *out = s;
    return LA_OK;
}

la_status la_spill_alloc(la_spill *s, size_t n, void **out)
{
    *out = NULL;
    if (n > SIZE_MAX - s->page) return la_error(LA_ENOMEM, "a block of %zu bytes is too large to spill", n);
    size_t len = (n + s->page - 1) / s->page * s->page;
    if (!len) len = s->page;
    pthread_mutex_lock(&s->lock);
    la_status st = LA_OK;
    size_t at = s->used;
    if (len > s->reserved - at) {
        st = la_error(LA_ENOMEM, "%s: the spilled row text passed %zu MiB, all the addresses this process could reserve", s->dir, s->reserved >> 20);
    } else {
        int rc = posix_fallocate(s->fd, (off_t)at, (off_t)len);
        if (rc != 0) {
            st = la_error(LA_EIO, "%s: cannot spill %zu MiB of row text: %s (set TMPDIR to a directory with room)", s->dir,
                          (at + len) >> 20, strerror(rc));
        } else if (mmap(s->base + at, len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, s->fd, (off_t)at) == MAP_FAILED) {
            st = la_error(LA_EIO, "%s: cannot map the spill file: %s", s->dir, strerror(errno));
        } else {
            s->used = at + len;
            *out = s->base + at;
        }
    }
    pthread_mutex_unlock(&s->lock);
    return st;
}

la_status la_spill_extend(la_spill *s, size_t total, void **base)
{
    *base = s->base;
    pthread_mutex_lock(&s->lock);
    size_t used = s->used;
    pthread_mutex_unlock(&s->lock);
    if (total <= used) return LA_OK;
    void *p = NULL;
    LA_TRY(la_spill_alloc(s, total - used, &p));
    return LA_OK;
}

size_t la_spill_bytes(la_spill *s)
{
    if (!s) return 0;
    pthread_mutex_lock(&s->lock);
    size_t used = s->used;
    pthread_mutex_unlock(&s->lock);
    return used;
}

const char *la_spill_dir(const la_spill *s) { return s->dir; }

void la_spill_set_mapped_max(la_spill *s, size_t bytes)
{
    pthread_mutex_lock(&s->lock);
    s->mapped_max = bytes ? bytes : MAPPED_MAX;
    pthread_mutex_unlock(&s->lock);
}

void la_spill_close(la_spill *s)
{
    if (!s) return;
    if (s->thread_started) {
        pthread_mutex_lock(&s->lock);
        s->stop = 1;
        pthread_cond_signal(&s->wake);
        pthread_mutex_unlock(&s->lock);
        pthread_join(s->thread, NULL);
    }
    if (s->base) munmap(s->base, s->reserved);
    if (s->fd >= 0) close(s->fd);
    pthread_cond_destroy(&s->wake);
    pthread_mutex_destroy(&s->lock);
    free(s);
}
