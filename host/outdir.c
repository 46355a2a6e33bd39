/* outdir.c - atomic, durable output directories that never delete a file the tool did not write
 * (see outdir.h). */
#define _GNU_SOURCE /* sync_file_range */
#include "outdir.h"
#include "input.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <sodium.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#if defined(__linux__)
#include <sys/syscall.h>
#include <sys/uio.h>
#endif

/* Present while a temporary directory is being filled; a killed run's one is recognized by it. */
#define LA_OUTDIR_MARKER ".leakaudit-incomplete"

static const char k_manifest_head[] = "# leakaudit output: the files below were written by one run and are replaced by the next\n";

/* ---- state for SIGINT/SIGTERM: plain buffers, so the handler needs no allocation ----
 *
 * The one file-scope mutable state of the library, and on purpose: a signal handler is installed
 * per process and can reach nothing but globals, so what it must clean up (the temporary
 * directory being filled) has to live here. It is the program's (one output directory written
 * at a time, by la_outdir_begin .. commit/abort); an embedder that writes reports from two threads
 * at once gets the cleanup for the latest one only, never a wrong deletion. */

static char g_sig_tmp[PATH_MAX];
static char g_sig_names[32768]; /* NUL-separated names of the files created in g_sig_tmp */
static volatile sig_atomic_t g_sig_len;
static volatile sig_atomic_t g_sig_active;
static int g_sig_installed;
static struct sigaction g_sig_old_int, g_sig_old_term;

/* Remove every file in the open directory fd without allocating: after the swap the folder holds
 * the previous report, whose files this run did not write. Linux only (getdents64). */
static void remove_all_entries(int fd)
{
#if defined(__linux__) && defined(SYS_getdents64)
    struct dirent64_raw {
        uint64_t ino;
        int64_t off;
        unsigned short reclen;
        unsigned char type;
        char name[];
    };
    _Alignas(8) char buf[4096];
    for (int pass = 0; pass < 8; pass++) {
        int removed = 0;
        lseek(fd, 0, SEEK_SET);
        long n;
        while ((n = syscall(SYS_getdents64, fd, buf, sizeof buf)) > 0)
            for (long off = 0; off < n;) {
                struct dirent64_raw *d = (struct dirent64_raw *)(buf + off);
                if (strcmp(d->name, ".") != 0 && strcmp(d->name, "..") != 0 && unlinkat(fd, d->name, 0) == 0) removed = 1;
                off += d->reclen;
            }
        if (!removed) break;
    }
#else
    (void)fd;
#endif
}

static void on_signal(int sig)
{
    if (g_sig_active) {
        int fd = open(g_sig_tmp, O_RDONLY | O_DIRECTORY);
        if (fd >= 0) {
            for (size_t i = 0; i < (size_t)g_sig_len; i += strlen(g_sig_names + i) + 1) unlinkat(fd, g_sig_names + i, 0);
            remove_all_entries(fd);
            close(fd);
        }
        rmdir(g_sig_tmp);
    }
    signal(sig, SIG_DFL);
    raise(sig);
}

/* Name the folder the handler removes (before it is created); no name is being written while the
 * handler could read it. */
static void sig_name(const char *tmp)
{
    g_sig_active = 0;
    snprintf(g_sig_tmp, sizeof g_sig_tmp, "%s", tmp);
    g_sig_len = 0;
    g_sig_active = 1;
}

/* Install the handler; sig_name says which folder it removes. */
static void sig_watch(const char *tmp)
{
    if (tmp) sig_name(tmp);
    if (g_sig_installed) return;
    g_sig_installed = 1;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, &g_sig_old_int);
    sigaction(SIGTERM, &sa, &g_sig_old_term);
    /* a mapped input cut short while its lines are copied into a manifest: input.c's SIGBUS
     * handler says which, then this one removes the folder */
    la_input_on_fault(on_signal);
}

/* Files of one directory may be written from several threads (la_outdir_write and
 * la_outdir_write_from): their names, and the files left open for the commit's fsync, are noted
 * under this lock. */
static pthread_mutex_t g_names_lock = PTHREAD_MUTEX_INITIALIZER;

/* Record a name before the file exists, so the handler can remove it. */
static int sig_add(const char *name)
{
    pthread_mutex_lock(&g_names_lock);
    size_t n = strlen(name) + 1, at = (size_t)g_sig_len;
    int ok = at + n <= sizeof g_sig_names;
    if (ok) {
        memcpy(g_sig_names + at, name, n);
        g_sig_len = (sig_atomic_t)(at + n);
    }
    pthread_mutex_unlock(&g_names_lock);
    return ok;
}

static void sig_unwatch(void)
{
    g_sig_active = 0;
    if (!g_sig_installed) return;
    g_sig_installed = 0;
    sigaction(SIGINT, &g_sig_old_int, NULL);
    sigaction(SIGTERM, &g_sig_old_term, NULL);
    la_input_on_fault(NULL);
}

/* ---- helpers ---- */

static char *join(const char *dir, const char *name)
{
    size_t n = strlen(dir) + strlen(name) + 2;
    char *p = malloc(n);
    if (p) snprintf(p, n, "%s/%s", dir, name);
    return p;
}

static int is_mark(const char *name)
{
    return !strcmp(name, LA_OUTDIR_MARKER) || !strcmp(name, LA_OUTDIR_MANIFEST);
}

/* Remove dir and everything in it. The marker and the manifest go last: a run killed halfway leaves
 * a folder the next run still recognizes as ours (looks_ours) and removes. */
static void remove_tree(const char *dir)
{
    DIR *d = opendir(dir);
    if (d) {
        struct dirent *e;
        while ((e = readdir(d))) {
            if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..") || is_mark(e->d_name)) continue;
            char *p = join(dir, e->d_name);
            if (!p) continue;
            struct stat st;
            if (lstat(p, &st) == 0 && S_ISDIR(st.st_mode)) remove_tree(p);
            else unlink(p);
            free(p);
        }
        closedir(d);
        const char *marks[] = {LA_OUTDIR_MANIFEST, LA_OUTDIR_MARKER};
        for (int k = 0; k < 2; k++) {
            char *p = join(dir, marks[k]);
            if (p) unlink(p);
            free(p);
        }
    }
    rmdir(dir);
}

/* LEAKAUDIT_FSYNC=0 skips the fsyncs, for scratch output such as a test suite's (each costs a
 * journal commit); the swap stays atomic, only durability across a power cut is given up. */
static int want_fsync(void)
{
    const char *e = getenv("LEAKAUDIT_FSYNC");
    return !(e && !strcmp(e, "0"));
}

static int fsync_path(const char *path)
{
    if (!want_fsync()) return 0;
    int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) return -1;
    int rc = fsync(fd);
    close(fd);
    return rc;
}

/* The directory that holds path ("." when it has no slash), malloc'ed. */
static char *parent_of(const char *path)
{
    const char *slash = strrchr(path, '/');
    if (!slash) return strdup(".");
    if (slash == path) return strdup("/");
    return strndup(path, (size_t)(slash - path));
}

static int contains_line(const char *list, const char *name)
{
    size_t n = strlen(name);
    for (const char *p = list; *p;) {
        const char *e = strchr(p, '\n');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        if (len == n && !memcmp(p, name, n)) return 1;
        if (!e) break;
        p = e + 1;
    }
    return 0;
}

/* The manifest's text (malloc'ed, NUL-terminated) into *out, or NULL when the directory has none
 * (or one this tool did not write). LA_ENOMEM when it cannot be read for want of memory. */
static la_status read_manifest(const char *dir, char **out)
{
    *out = NULL;
    char *path = join(dir, LA_OUTDIR_MANIFEST);
    if (!path) return la_error(LA_ENOMEM, "out of memory");
    FILE *f = fopen(path, "rb");
    free(path);
    if (!f) return LA_OK;
    size_t cap = 4096, n = 0;
    char *p = malloc(cap);
    la_status s = p ? LA_OK : la_error(LA_ENOMEM, "out of memory");
    while (p) {
        size_t r = fread(p + n, 1, cap - n - 1, f);
        n += r;
        if (r == 0) break;
        if (cap - n < 2) {
            if (cap >= (1u << 24)) break; /* no manifest of ours is that long */
            char *q = realloc(p, cap * 2);
            if (!q) {
                free(p);
                p = NULL;
                s = la_error(LA_ENOMEM, "out of memory");
                break;
            }
            p = q;
            cap *= 2;
        }
    }
    fclose(f);
    if (p) p[n] = '\0';
    if (p && strncmp(p, k_manifest_head, sizeof k_manifest_head - 1) != 0) {
        free(p);
        p = NULL;
    }
    *out = p;
    return s;
}

/* LA_OK when the existing directory `real` may be replaced: empty, or every entry in it is a
 * regular file its manifest lists (or the manifest itself). */
static la_status check_contents(const char *shown, const char *real)
{
    DIR *d = opendir(real);
    if (!d) return la_error(LA_EIO, "--out %s: cannot read the directory: %s", shown, strerror(errno));
    char *manifest = NULL;
    int have_manifest = -1; /* not read yet */
    char foreign[300] = "";
    size_t nforeign = 0;
    la_status s = LA_OK;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..") || !strcmp(e->d_name, LA_OUTDIR_MANIFEST)) continue;
        if (have_manifest < 0) {
            if ((s = read_manifest(real, &manifest)) != LA_OK) break;
            have_manifest = manifest != NULL;
        }
        int ours = 0;
        if (manifest && contains_line(manifest, e->d_name)) {
            char *p = join(real, e->d_name);
            if (!p) {
                s = la_error(LA_ENOMEM, "out of memory");
                break;
            }
            struct stat st;
            ours = lstat(p, &st) == 0 && S_ISREG(st.st_mode);
            free(p);
        }
        if (!ours) {
            if (nforeign < 3) {
                strncat(foreign, nforeign ? ", " : "", sizeof foreign - strlen(foreign) - 1);
                strncat(foreign, e->d_name, sizeof foreign - strlen(foreign) - 1);
            }
            nforeign++;
        }
    }
    closedir(d);
    if (s != LA_OK) {
        free(manifest);
        return s;
    }
    if (nforeign && !have_manifest)
        s = la_error(LA_EINVAL,
                     "--out %s: the directory is not empty and holds no " LA_OUTDIR_MANIFEST
                     ", so leakaudit did not write it (it holds %s%s); refusing to replace it: choose a new or "
                     "empty directory",
                     shown, foreign, nforeign > 3 ? ", ..." : "");
    else if (nforeign)
        s = la_error(LA_EINVAL,
                     "--out %s: holds %zu file%s leakaudit did not write (%s%s); refusing to replace it: move %s away "
                     "or choose another --out",
                     shown, nforeign, nforeign == 1 ? "" : "s", foreign, nforeign > 3 ? ", ..." : "",
                     nforeign == 1 ? "it" : "them");
    free(manifest);
    return s;
}

/* Resolve the target: *real is realpath(dir) when it exists, else dir without trailing slashes.
 * *exists says which. */
static la_status resolve(const char *dir, char **shown, char **real, int *exists)
{
    *shown = *real = NULL;
    *exists = 0;
    size_t len = strlen(dir);
    while (len > 1 && dir[len - 1] == '/') len--;
    if (len == 0) return la_error(LA_EINVAL, "--out: empty directory name");
    *shown = strndup(dir, len);
    if (!*shown) return la_error(LA_ENOMEM, "out of memory");
    struct stat st;
    if (stat(*shown, &st) != 0) {
        if (lstat(*shown, &st) == 0)
            return la_error(LA_EINVAL, "--out %s: a symbolic link to something that does not exist", *shown);
        *real = strdup(*shown);
        return *real ? LA_OK : la_error(LA_ENOMEM, "out of memory");
    }
    if (!S_ISDIR(st.st_mode)) return la_error(LA_EINVAL, "--out %s: exists and is not a directory", *shown);
    *real = realpath(*shown, NULL);
    if (!*real) return la_error(LA_EIO, "--out %s: cannot resolve the path: %s", *shown, strerror(errno));
    if (!strcmp(*real, "/")) return la_error(LA_EINVAL, "--out %s: the root directory cannot be an output directory", *shown);
    *exists = 1;
    return LA_OK;
}

la_status la_outdir_check(const char *dir, const char *const *inputs, size_t ninputs)
{
    char *shown, *real;
    int exists;
    la_status s = resolve(dir, &shown, &real, &exists);
    if (s == LA_OK && exists) s = check_contents(shown, real);
    size_t rl = real ? strlen(real) : 0;
    for (size_t k = 0; s == LA_OK && exists && k < ninputs; k++) {
        if (!inputs[k] || !strcmp(inputs[k], "-")) continue;
        char *in = realpath(inputs[k], NULL);
        if (in && !strncmp(in, real, rl) && in[rl] == '/')
            s = la_error(LA_EINVAL, "--out %s: holds the input %s; refusing to write over inputs (choose another --out)",
                         shown, inputs[k]);
        free(in);
    }
    free(shown);
    free(real);
    return s;
}

/* Create every missing parent directory of path (like mkdir -p on its dirname). */
static la_status make_parents(const char *shown, const char *path)
{
    char *p = strdup(path);
    if (!p) return la_error(LA_ENOMEM, "out of memory");
    for (char *q = p + 1; *q; q++) {
        if (*q != '/') continue;
        *q = '\0';
        if (mkdir(p, 0755) != 0 && errno != EEXIST) {
            la_status s = la_error(LA_EIO, "--out %s: cannot create %s: %s", shown, p, strerror(errno));
            free(p);
            return s;
        }
        *q = '/';
    }
    free(p);
    return LA_OK;
}

/* A directory a run of this tool left: not a link, only regular files, and its marker or manifest;
 * or empty (a run killed between creating it and its marker). */
static int looks_ours(const char *path)
{
    struct stat st;
    if (lstat(path, &st) != 0 || !S_ISDIR(st.st_mode)) return 0;
    DIR *d = opendir(path);
    if (!d) return 0;
    int marked = 0, others = 0, entries = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
        entries++;
        if (!strcmp(e->d_name, LA_OUTDIR_MARKER) || !strcmp(e->d_name, LA_OUTDIR_MANIFEST)) marked = 1;
        char *p = join(path, e->d_name);
        if (!p || lstat(p, &st) != 0 || !S_ISREG(st.st_mode)) others = 1;
        free(p);
    }
    closedir(d);
    return entries == 0 || (marked && !others);
}

/* The previous report's tree, swapped out by a commit: with la_outdir_defer_removal, removed on a
 * thread of its own while the caller goes on (the audit command frees its memory meanwhile: most of
 * the removal is the kernel dropping the old manifests' cached pages), joined by la_outdir_settle;
 * else removed before the commit returns. Until it is gone the signal handler stays, and removes
 * it as it would have before the commit returned; a run killed by SIGKILL meanwhile leaves it as
 * FINAL.tmp-PID-*, which the next run removes (clean_stale). */
static int g_defer_removal, g_remover_running, g_watch_kept;
static pthread_t g_remover;

static void *remove_main(void *dir)
{
    remove_tree(dir);
    free(dir);
    return NULL;
}

void la_outdir_defer_removal(int on) { g_defer_removal = on; }

/* The previous report's cached pages, dropped on a thread of their own while the audit computes
 * (la_outdir_release_previous), joined before the new report is begun or at la_outdir_settle. */
static int g_releaser_running;
static pthread_t g_releaser;

static void *release_main(void *arg)
{
    char *dir = arg, *manifest = NULL;
    if (read_manifest(dir, &manifest) == LA_OK && manifest) {
        for (char *line = manifest + sizeof k_manifest_head - 1; *line;) {
            char *nl = strchr(line, '\n');
            if (nl) *nl = '\0';
            char *path = *line && !strchr(line, '/') ? join(dir, line) : NULL;
            int fd = path ? open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC) : -1;
            struct stat st;
            if (fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) (void)posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
            if (fd >= 0) close(fd);
            free(path);
            if (!nl) break;
            line = nl + 1;
        }
    }
    free(manifest);
    free(dir);
    return NULL;
}

void la_outdir_release_previous(const char *dir)
{
    if (g_releaser_running || !dir) return;
    char *copy = strdup(dir);
    if (copy && pthread_create(&g_releaser, NULL, release_main, copy) == 0) g_releaser_running = 1;
    else free(copy);
}

static void join_releaser(void)
{
    if (!g_releaser_running) return;
    pthread_join(g_releaser, NULL);
    g_releaser_running = 0;
}

static void join_remover(void)
{
    if (!g_remover_running) return;
    pthread_join(g_remover, NULL);
    g_remover_running = 0;
}

void la_outdir_settle(void)
{
    join_releaser();
    join_remover();
    if (g_watch_kept) {
        g_watch_kept = 0;
        sig_unwatch();
    }
}

/* Remove the tree at dir (owned). */
static void remove_old(char *dir)
{
    join_remover(); /* one at a time */
    if (g_defer_removal && pthread_create(&g_remover, NULL, remove_main, dir) == 0) {
        g_remover_running = 1;
        return;
    }
    remove_main(dir);
}

/* Remove FINAL.tmp-PID-* and FINAL.old-PID-* left by runs whose process is gone. An .old one is
 * the previous report of a run killed in mid-swap (only where RENAME_EXCHANGE is missing): when
 * FINAL is missing it is put back. */
static void clean_stale(const char *final)
{
    char *parent = parent_of(final);
    const char *slash = strrchr(final, '/');
    const char *base = slash ? slash + 1 : final;
    size_t bl = strlen(base);
    DIR *d = parent ? opendir(parent) : NULL;
    if (!d) {
        free(parent);
        return;
    }
    struct dirent *e;
    while ((e = readdir(d))) {
        const char *n = e->d_name;
        if (strncmp(n, base, bl) != 0 || (strncmp(n + bl, ".tmp-", 5) != 0 && strncmp(n + bl, ".old-", 5) != 0)) continue;
        char *end;
        long pid = strtol(n + bl + 5, &end, 10);
        if (pid <= 0 || *end != '-') continue;
        if (kill((pid_t)pid, 0) == 0 || errno != ESRCH) continue; /* still running (or not ours to ask) */
        char *p = join(parent, n);
        if (p && looks_ours(p)) {
            struct stat st;
            if (n[bl + 1] == 'o' && stat(final, &st) != 0) rename(p, final);
            else remove_tree(p);
        }
        free(p);
    }
    closedir(d);
    free(parent);
}

/* Write every byte of iov[0..n) to fd (n <= IOV_MAX), resuming after a short writev. */
static la_status write_iov(int fd, const char *path, struct iovec *iov, int n)
{
    while (n > 0) {
        ssize_t w = writev(fd, iov, n);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) return la_error(LA_EIO, "%s: write failed: %s", path, w < 0 ? strerror(errno) : "no progress");
        size_t done = (size_t)w;
        while (n > 0 && done >= iov->iov_len) done -= iov->iov_len, iov++, n--;
        if (n > 0) iov->iov_base = (char *)iov->iov_base + done, iov->iov_len -= done;
    }
    return LA_OK;
}

/* A written file still open, its fsync left for la_outdir_commit (sync_all). */
typedef struct la_outdir_unsynced {
    int fd;
    char *path;
} la_outdir_unsynced;

/* How many files wait for their fsync at most; a file beyond them is fsynced as it is closed. */
enum { MOST_UNSYNCED = 64 };
/* A file's disk writes are started each time this many more bytes of it are written. */
#define WRITEBACK_STEP ((off_t)8 << 20)

/* Start the disk writes of bytes [from, to) of fd without waiting for them (Linux); the fsync at
 * the commit then finds them done or under way. */
static void start_writeback(int fd, off_t from, off_t to)
{
#if defined(__linux__) && defined(SYNC_FILE_RANGE_WRITE)
    if (to > from) (void)sync_file_range(fd, from, to - from, SYNC_FILE_RANGE_WRITE);
#else
    (void)fd, (void)from, (void)to;
#endif
}

/* Keep fd open for the commit's fsync; 0 when the list is full or out of memory (then the caller
 * fsyncs it now). Takes path on success. */
static int defer_sync(la_outdir *o, int fd, char *path)
{
    pthread_mutex_lock(&g_names_lock);
    int ok = o->nunsynced < MOST_UNSYNCED;
    if (ok && o->nunsynced == o->capunsynced) {
        size_t cap = o->capunsynced ? o->capunsynced * 2 : 16;
        la_outdir_unsynced *v = realloc(o->unsynced, cap * sizeof *v);
        if (v) o->unsynced = v, o->capunsynced = cap;
        else ok = 0;
    }
    if (ok) o->unsynced[o->nunsynced++] = (la_outdir_unsynced){fd, path};
    pthread_mutex_unlock(&g_names_lock);
    return ok;
}

/* fsync and close every file left open for the commit; the first failure is returned. With
 * sync = 0 (an abort) they are only closed. */
static la_status sync_all(la_outdir *o, int sync)
{
    la_status s = LA_OK;
    for (size_t k = 0; k < o->nunsynced; k++) {
        la_outdir_unsynced *u = &o->unsynced[k];
        if (sync && s == LA_OK && fsync(u->fd) != 0) s = la_error(LA_EIO, "%s: write failed (fsync): %s", u->path, strerror(errno));
        if (close(u->fd) != 0 && sync && s == LA_OK) s = la_error(LA_EIO, "%s: write failed: %s", u->path, strerror(errno));
        free(u->path);
    }
    free(o->unsynced);
    o->unsynced = NULL;
    o->nunsynced = o->capunsynced = 0;
    return s;
}

/* A file written from pieces (la_outdir_write_from) passes to direct writes (O_DIRECT: from
 * buffers of its own straight to the disk, not through the page cache) once it holds this many
 * bytes, when the file system takes them and the commit fsyncs (it waits for the disk then
 * anyway): a manifest as large as its input (a GB) then takes no page cache, whose fresh pages
 * cost more than the copy into them, and on a virtual machine whose host takes back the memory
 * the guest frees, much more (docs/performance.md). The bytes are the same.
 * LEAKAUDIT_DIRECT_FROM sets the size in bytes (0: from the first block; "off": never), for
 * tests. */
#define DIRECT_FROM ((off_t)64 << 20)
#ifndef O_DIRECT
#define O_DIRECT 0 /* no direct writes here: direct_begin declines */
#endif
/* Bytes of a direct write, and the alignment of its buffer, its size and its place in the file. */
#define DIRECT_BLOCK ((size_t)4 << 20)
#define DIRECT_ALIGN ((size_t)4096)

static off_t direct_from(void)
{
    const char *e = getenv("LEAKAUDIT_DIRECT_FROM");
    if (!e || !*e) return DIRECT_FROM;
    if (!strcmp(e, "off")) return -1;
    char *end;
    unsigned long long v = strtoull(e, &end, 10);
    return *end ? DIRECT_FROM : (off_t)v;
}

/* The first `want` bytes of pieces iov[0 .. n) written; the pieces then start after them (a piece
 * cut where they end). Returns the pieces left. */
static int write_head(int fd, const char *path, struct iovec *iov, int n, size_t want, la_status *s)
{
    int k = 0;
    size_t got = 0;
    while (k < n && got + iov[k].iov_len <= want) got += iov[k++].iov_len;
    struct iovec cut = {0};
    size_t used = want - got; /* of the piece cut (write_iov moves the pieces it writes part of) */
    if (k < n && used > 0) {
        cut = iov[k];
        iov[k].iov_len = used;
        k++;
    }
    *s = write_iov(fd, path, iov, k);
    if (cut.iov_base) {
        k--;
        iov[k] = (struct iovec){(char *)cut.iov_base + used, cut.iov_len - used};
    }
    memmove(iov, iov + k, (size_t)(n - k) * sizeof *iov);
    return n - k;
}

/* Whole blocks of a file in direct writes: the pieces copied into an aligned buffer while threads
 * of its own write the buffers filled before, DIRECT_WRITERS blocks at once (a disk takes two
 * requests at a time faster than one), so the copying and the disk overlap. */
enum { DIRECT_WRITERS = 2, DIRECT_BUFS = DIRECT_WRITERS + 1 };
enum { BUF_FREE, BUF_FILLING, BUF_QUEUED, BUF_WRITING };

typedef struct direct_out {
    int fd;
    const char *path;
    char *buf[DIRECT_BUFS];   /* DIRECT_BLOCK bytes each, DIRECT_ALIGN-aligned */
    int cur;                  /* the buffer being filled */
    size_t n;                 /* its bytes */
    off_t at;                 /* where in the file it goes */
    int on;                   /* started: the threads run */
    int nthreads;
    pthread_t thread[DIRECT_WRITERS];
    pthread_mutex_t lock;
    pthread_cond_t cond;
    /* under lock: each buffer's state, bytes and place; whether to stop; the first failure (an
     * errno); whether O_DIRECT is still set */
    int state[DIRECT_BUFS];
    size_t len[DIRECT_BUFS];
    off_t off[DIRECT_BUFS];
    int stop, err, direct;
} direct_out;

/* n bytes at `at`; a direct write the file system refuses (EINVAL) clears O_DIRECT and goes through
 * the page cache, as does whatever follows. Returns 0 or an errno. */
static int direct_pwrite(direct_out *d, const char *p, size_t n, off_t at, int *direct)
{
    while (n > 0) {
        ssize_t w = pwrite(d->fd, p, n, at);
        if (w < 0 && errno == EINTR) continue;
        if (w < 0 && errno == EINVAL && *direct) {
            int fl = fcntl(d->fd, F_GETFL);
            if (fl < 0 || fcntl(d->fd, F_SETFL, fl & ~O_DIRECT) != 0) return errno;
            *direct = 0;
            continue;
        }
        if (w <= 0) return w < 0 ? errno : EIO;
        p += w, n -= (size_t)w, at += w;
    }
    return 0;
}

/* A buffer in `state`, or -1; under lock. */
static int direct_find(const direct_out *d, int state)
{
    for (int i = 0; i < DIRECT_BUFS; i++)
        if (d->state[i] == state) return i;
    return -1;
}

static void *direct_main(void *arg)
{
    direct_out *d = arg;
    pthread_mutex_lock(&d->lock);
    for (;;) {
        int k;
        while ((k = direct_find(d, BUF_QUEUED)) < 0 && !d->stop) pthread_cond_wait(&d->cond, &d->lock);
        if (k < 0) break;
        d->state[k] = BUF_WRITING;
        int direct = d->direct;
        pthread_mutex_unlock(&d->lock);
        int err = direct_pwrite(d, d->buf[k], d->len[k], d->off[k], &direct);
        pthread_mutex_lock(&d->lock);
        if (!direct) d->direct = 0;
        if (err && !d->err) d->err = err;
        d->state[k] = BUF_FREE;
        pthread_cond_broadcast(&d->cond);
    }
    pthread_mutex_unlock(&d->lock);
    return NULL;
}

static la_status direct_failed(const direct_out *d, int err)
{
    return la_error(LA_EIO, "%s: write failed: %s", d->path, strerror(err));
}

/* The full buffer to the threads, and a free one to fill (waiting for one when none is). */
static la_status direct_submit(direct_out *d)
{
    pthread_mutex_lock(&d->lock);
    d->state[d->cur] = BUF_QUEUED;
    d->len[d->cur] = d->n;
    d->off[d->cur] = d->at;
    pthread_cond_broadcast(&d->cond);
    int k = -1;
    while (!d->err && (k = direct_find(d, BUF_FREE)) < 0) pthread_cond_wait(&d->cond, &d->lock);
    int err = d->err;
    if (k >= 0) d->state[k] = BUF_FILLING;
    pthread_mutex_unlock(&d->lock);
    if (err) return direct_failed(d, err);
    d->at += (off_t)d->n;
    d->n = 0;
    d->cur = k;
    return LA_OK;
}

static la_status direct_put(direct_out *d, const struct iovec *iov, int n)
{
    for (int k = 0; k < n; k++) {
        const char *p = iov[k].iov_base;
        size_t left = iov[k].iov_len;
        while (left > 0) {
            size_t take = DIRECT_BLOCK - d->n < left ? DIRECT_BLOCK - d->n : left;
            memcpy(d->buf[d->cur] + d->n, p, take);
            d->n += take, p += take, left -= take;
            if (d->n == DIRECT_BLOCK) LA_TRY(direct_submit(d));
        }
    }
    return LA_OK;
}

static void direct_free_bufs(direct_out *d)
{
    for (int i = 0; i < DIRECT_BUFS; i++) free(d->buf[i]);
}

/* Wait for the blocks handed out and stop the threads; with `ok`, the last part block through the
 * page cache (O_DIRECT cleared) and the file offset at the end. Frees the buffers. */
static la_status direct_end(direct_out *d, int ok)
{
    if (!d->on) return LA_OK;
    pthread_mutex_lock(&d->lock);
    while (direct_find(d, BUF_QUEUED) >= 0 || direct_find(d, BUF_WRITING) >= 0) pthread_cond_wait(&d->cond, &d->lock);
    d->stop = 1;
    pthread_cond_broadcast(&d->cond);
    int err = d->err, direct = d->direct;
    pthread_mutex_unlock(&d->lock);
    for (int t = 0; t < d->nthreads; t++) pthread_join(d->thread[t], NULL);
    d->on = 0;
    la_status s = err ? direct_failed(d, err) : LA_OK;
    if (ok && s == LA_OK && direct) {
        int fl = fcntl(d->fd, F_GETFL);
        if (fl < 0 || fcntl(d->fd, F_SETFL, fl & ~O_DIRECT) != 0)
            s = la_error(LA_EIO, "%s: cannot leave direct writes: %s", d->path, strerror(errno));
        direct = 0;
    }
    if (ok && s == LA_OK) {
        err = direct_pwrite(d, d->buf[d->cur], d->n, d->at, &direct);
        if (err) s = direct_failed(d, err);
        else if (lseek(d->fd, d->at + (off_t)d->n, SEEK_SET) < 0)
            s = la_error(LA_EIO, "%s: cannot seek: %s", d->path, strerror(errno));
    }
    pthread_cond_destroy(&d->cond);
    pthread_mutex_destroy(&d->lock);
    direct_free_bufs(d);
    return ok ? s : LA_OK;
}


/* Open fd for direct writes from its offset `at` on (a multiple of DIRECT_ALIGN), the writing
 * threads started; 0 where the file system has none, or no buffer or thread could be had (the
 * file is then written through the page cache as before). */
static int direct_begin(direct_out *d, int fd, const char *path, off_t at)
{
    *d = (direct_out){.fd = fd, .path = path, .at = at, .direct = 1};
    int fl = fcntl(fd, F_GETFL), ok = fl >= 0 && O_DIRECT != 0;
    for (int i = 0; i < DIRECT_BUFS; i++) ok &= (d->buf[i] = aligned_alloc(DIRECT_ALIGN, DIRECT_BLOCK)) != NULL;
    if (!ok || fcntl(fd, F_SETFL, fl | O_DIRECT) != 0) {
        direct_free_bufs(d);
        return 0;
    }
    pthread_mutex_init(&d->lock, NULL);
    pthread_cond_init(&d->cond, NULL);
    d->state[0] = BUF_FILLING;
    d->on = 1;
    while (d->nthreads < DIRECT_WRITERS && pthread_create(&d->thread[d->nthreads], NULL, direct_main, d) == 0)
        d->nthreads++;
    if (d->nthreads == 0) {
        pthread_cond_destroy(&d->cond);
        pthread_mutex_destroy(&d->lock);
        direct_free_bufs(d);
        d->on = 0;
        (void)fcntl(fd, F_SETFL, fl);
        return 0;
    }
    return 1;
}

/* One file of the temporary directory, its bytes handed out by `fill` a batch of at most max pieces
 * at a time (la_outdir_fill: how many, 0 at the end, -1 on a failure), gathered by writev; with
 * `direct`, in direct writes past DIRECT_FROM bytes (where the file system has them). Its disk
 * writes start as it grows; it stays open for the commit's fsync (or, past MOST_UNSYNCED files,
 * is fsynced and closed here). */
static la_status write_file_with(la_outdir *o, const char *name, la_outdir_fill fill, void *ctx, int direct)
{
    char *p = join(o->tmp, name);
    if (!p) return la_error(LA_ENOMEM, "out of memory");
    if (!sig_add(name)) {
        free(p);
        return la_error(LA_EINTERNAL, "--out %s: too many output files", o->shown);
    }
    la_status s = LA_OK;
    int fd = open(p, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd < 0) s = la_error(LA_EIO, "%s: cannot create: %s", p, strerror(errno));
    int sync = want_fsync();
    /* direct only where the commit waits for the disk anyway (the fsyncs) */
    off_t size = 0, started = 0, from = direct && sync ? direct_from() : -1;
    direct_out d = {0};
    struct iovec iov[LA_OUTDIR_IOV];
    for (int n; s == LA_OK;) {
        n = fill(ctx, iov, LA_OUTDIR_IOV, &s);
        if (n < 0 && s == LA_OK) s = la_error(LA_EINTERNAL, "%s: its contents failed without a reason", p);
        if (n <= 0) break;
        off_t batch = 0;
        for (int k = 0; k < n; k++) batch += (off_t)iov[k].iov_len;
        if (d.on) {
            s = direct_put(&d, iov, n);
            size += batch;
            continue;
        }
        if (from >= 0 && size + batch > from) {
            /* through the page cache up to a block boundary, then direct */
            off_t edge = (size + (off_t)DIRECT_ALIGN - 1) / (off_t)DIRECT_ALIGN * (off_t)DIRECT_ALIGN;
            if (size + batch > edge) {
                n = write_head(fd, p, iov, n, (size_t)(edge - size), &s);
                if (s == LA_OK && direct_begin(&d, fd, p, edge)) s = direct_put(&d, iov, n), n = 0;
                from = -1; /* tried once */
            }
        }
        if (s == LA_OK && n > 0) s = write_iov(fd, p, iov, n);
        size += batch;
        if (s == LA_OK && sync && size - started >= WRITEBACK_STEP) {
            start_writeback(fd, started, size);
            started = size;
        }
    }
    la_status ended = direct_end(&d, s == LA_OK);
    if (s == LA_OK) s = ended;
    if (fd >= 0 && s == LA_OK && sync) {
        start_writeback(fd, started, size);
        if (defer_sync(o, fd, p)) return LA_OK;
        if (fsync(fd) != 0) s = la_error(LA_EIO, "%s: write failed (fsync): %s", p, strerror(errno));
    }
    if (fd >= 0 && close(fd) != 0 && s == LA_OK) s = la_error(LA_EIO, "%s: write failed: %s", p, strerror(errno));
    free(p);
    return s;
}

/* The bytes of one buffer as a single piece. */
typedef struct bytes_src {
    const void *data;
    size_t n;
    int done;
} bytes_src;

static int fill_bytes(void *ctx, struct iovec *iov, int max, la_status *failed)
{
    (void)failed;
    bytes_src *b = ctx;
    if (b->done || b->n == 0 || max < 1) return 0;
    b->done = 1;
    iov[0] = (struct iovec){(void *)b->data, b->n};
    return 1;
}

static la_status write_file(la_outdir *o, const char *name, const void *data, size_t n)
{
    bytes_src b = {data, n, 0};
    return write_file_with(o, name, fill_bytes, &b, 0);
}

la_status la_outdir_begin(const char *dir, la_outdir *o)
{
    join_releaser(); /* the previous report's files are read below: not while they are released */
    memset(o, 0, sizeof *o);
    int exists;
    la_status s = resolve(dir, &o->shown, &o->final, &exists);
    if (s == LA_OK && exists) s = check_contents(o->shown, o->final);
    if (s == LA_OK) s = make_parents(o->shown, o->final);
    if (s != LA_OK) {
        la_outdir_abort(o);
        return s;
    }
    clean_stale(o->final);
    size_t n = strlen(o->final) + 40;
    if (n >= sizeof g_sig_tmp) {
        la_outdir_abort(o);
        return la_error(LA_EIO, "--out %s: path too long", dir);
    }
    o->tmp = malloc(n);
    if (!o->tmp) {
        la_outdir_abort(o);
        return la_error(LA_ENOMEM, "out of memory");
    }
    /* The name is known to the SIGINT/SIGTERM handler before the folder exists: a signal can come on
     * any thread at any moment, and must never leave a folder behind that the handler did not know. */
    sig_watch(NULL);
    int made = 0;
    for (int attempt = 0; attempt < 64 && !made; attempt++) {
        uint32_t r = randombytes_random();
        snprintf(o->tmp, n, "%s.tmp-%ld-%08x", o->final, (long)getpid(), (unsigned)r);
        sig_name(o->tmp);
        if (mkdir(o->tmp, 0755) == 0) made = 1;
        else if (errno != EEXIST) break;
    }
    if (!made) {
        s = la_error(LA_EIO, "--out %s: cannot create a directory beside it: %s", o->shown, strerror(errno));
        free(o->tmp);
        o->tmp = NULL;
        la_outdir_abort(o);
        return s;
    }
    s = write_file(o, LA_OUTDIR_MARKER, "", 0);
    if (s != LA_OK) la_outdir_abort(o);
    return s;
}

/* Check a name and note it among the files written (o->names) before the file is written; *copy is
 * the note, which written() takes out again and frees when the file could not be written. */
static la_status name_file_locked(la_outdir *o, const char *name, char **copy)
{
    if (strchr(name, '/') || !strcmp(name, LA_OUTDIR_MANIFEST) || !strcmp(name, LA_OUTDIR_MARKER) || name[0] == '.')
        return la_error(LA_EINTERNAL, "output file name %s is not allowed", name);
    for (size_t k = 0; k < o->nnames; k++)
        if (!strcmp(o->names[k], name)) return la_error(LA_EINTERNAL, "output file %s written twice", name);
    if (o->nnames == o->capnames) {
        size_t cap = o->capnames ? o->capnames * 2 : 16;
        char **v = realloc(o->names, cap * sizeof *v);
        if (!v) return la_error(LA_ENOMEM, "out of memory");
        o->names = v;
        o->capnames = cap;
    }
    *copy = strdup(name);
    if (!*copy) return la_error(LA_ENOMEM, "out of memory");
    /* the slot is taken now, so a file written at the same time on another thread cannot take it */
    o->names[o->nnames++] = *copy;
    return LA_OK;
}

static la_status name_file(la_outdir *o, const char *name, char **copy)
{
    pthread_mutex_lock(&g_names_lock);
    la_status s = name_file_locked(o, name, copy);
    pthread_mutex_unlock(&g_names_lock);
    return s;
}

/* A file that was not written leaves the list again. */
static la_status written(la_outdir *o, char *copy, la_status s)
{
    if (s == LA_OK) return LA_OK;
    pthread_mutex_lock(&g_names_lock);
    for (size_t k = 0; k < o->nnames; k++)
        if (o->names[k] == copy) {
            memmove(o->names + k, o->names + k + 1, (o->nnames - k - 1) * sizeof *o->names);
            o->nnames--;
            break;
        }
    pthread_mutex_unlock(&g_names_lock);
    free(copy);
    return s;
}

static int cmp_name(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

la_status la_outdir_write(la_outdir *o, const char *name, const la_buf *b)
{
    char *copy;
    LA_TRY(name_file(o, name, &copy));
    return written(o, copy, write_file(o, name, b->p, b->n));
}

la_status la_outdir_write_from(la_outdir *o, const char *name, la_outdir_fill fill, void *ctx)
{
    char *copy;
    LA_TRY(name_file(o, name, &copy));
    return written(o, copy, write_file_with(o, name, fill, ctx, 1));
}

/* Swap tmp and final in one step; 1 when done, 0 when the system cannot (then errno says why). */
static int exchange(const char *a, const char *b)
{
#if defined(__linux__) && defined(SYS_renameat2)
    return syscall(SYS_renameat2, AT_FDCWD, a, AT_FDCWD, b, 2 /* RENAME_EXCHANGE */) == 0;
#else
    errno = ENOSYS;
    return 0;
#endif
}

la_status la_outdir_commit(la_outdir *o)
{
    la_buf m = {0};
    la_buf_puts(&m, k_manifest_head);
    /* sorted: files written on several threads finish in any order */
    if (o->nnames > 1) qsort(o->names, o->nnames, sizeof *o->names, cmp_name);
    for (size_t k = 0; k < o->nnames; k++) {
        la_buf_puts(&m, o->names[k]);
        la_buf_putc(&m, '\n');
    }
    la_status s = la_buf_status(&m);
    if (s == LA_OK) s = write_file(o, LA_OUTDIR_MANIFEST, m.p, m.n);
    la_buf_free(&m);
    /* every file on disk before the directory that names them */
    la_status synced = sync_all(o, 1);
    if (s == LA_OK) s = synced;
    char *marker = s == LA_OK ? join(o->tmp, LA_OUTDIR_MARKER) : NULL;
    if (s == LA_OK && !marker) s = la_error(LA_ENOMEM, "out of memory");
    if (s == LA_OK && unlink(marker) != 0) s = la_error(LA_EIO, "%s: cannot remove: %s", marker, strerror(errno));
    free(marker);
    if (s == LA_OK && fsync_path(o->tmp) != 0)
        s = la_error(LA_EIO, "%s: cannot flush the directory: %s", o->tmp, strerror(errno));
    /* the target may have changed while the run computed: look again right before the swap */
    struct stat st;
    int exists = stat(o->final, &st) == 0;
    if (s == LA_OK && exists && !S_ISDIR(st.st_mode)) s = la_error(LA_EINVAL, "--out %s: exists and is not a directory", o->shown);
    if (s == LA_OK && exists) s = check_contents(o->shown, o->final);
    if (s == LA_OK && exists) {
        if (exchange(o->tmp, o->final)) {
            remove_old(o->tmp); /* now the previous report */
            o->tmp = NULL;
        } else if (errno == ENOSYS || errno == EINVAL || errno == ENOTSUP) {
            /* no RENAME_EXCHANGE here: move the old one aside first (a killed run is repaired by the next) */
            size_t n = strlen(o->final) + 40;
            char *old = malloc(n);
            if (!old) s = la_error(LA_ENOMEM, "out of memory");
            else {
                snprintf(old, n, "%s.old-%ld-XXXXXX", o->final, (long)getpid());
                if (!mkdtemp(old) || rename(o->final, old) != 0) {
                    s = la_error(LA_EIO, "--out %s: cannot move the previous report aside: %s", o->shown, strerror(errno));
                    rmdir(old);
                } else if (rename(o->tmp, o->final) != 0) {
                    s = la_error(LA_EIO, "--out %s: cannot move the new report into place: %s", o->shown, strerror(errno));
                    rename(old, o->final);
                } else {
                    remove_tree(old);
                }
                free(old);
            }
        } else {
            s = la_error(LA_EIO, "--out %s: cannot move the new report into place: %s", o->shown, strerror(errno));
        }
    } else if (s == LA_OK && rename(o->tmp, o->final) != 0) {
        s = la_error(LA_EIO, "--out %s: cannot move the new report into place: %s", o->shown, strerror(errno));
    }
    if (s == LA_OK) {
        free(o->tmp);
        o->tmp = NULL;
        char *parent = parent_of(o->final);
        if (parent) fsync_path(parent);
        free(parent);
    }
    la_outdir_abort(o);
    return s;
}

void la_outdir_abort(la_outdir *o)
{
    sync_all(o, 0);
    if (o->tmp) remove_tree(o->tmp);
    if (g_remover_running) g_watch_kept = 1; /* la_outdir_settle drops the handler */
    else sig_unwatch();
    for (size_t k = 0; k < o->nnames; k++) free(o->names[k]);
    free(o->names);
    free(o->tmp);
    free(o->final);
    free(o->shown);
    memset(o, 0, sizeof *o);
}

la_status la_outdir_finish(la_outdir *o, la_status s)
{
    if (s != LA_OK) {
        la_outdir_abort(o);
        return s;
    }
    return la_outdir_commit(o);
}
