/*
 * failalloc.c - allocation-failure injection for the test build leakaudit_failalloc, SQLite-style:
 * the program's own calls to malloc, calloc, realloc, strdup and strndup are routed here by the
 * linker (--wrap), counted, and LA_FAIL_ALLOC=N makes the Nth one (from 1) return NULL, once.
 * LA_FAIL_ALLOC=0 fails none and prints "allocations: COUNT" to stderr at exit, so a test can walk
 * N over every allocation of a run. Allocations inside the libraries (json-c, zlib, ...) are not
 * counted. Its calls to unlink are counted the same way: LA_KILL_AT_UNLINK=N kills the process
 * (SIGKILL) right before the Nth one, LA_KILL_AT_UNLINK=0 prints "unlinks: COUNT" at exit, so a
 * test can stop a run at every step of removing a folder. Not for: the installed program.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>

void *__real_malloc(size_t n);
void *__real_calloc(size_t n, size_t k);
void *__real_realloc(void *p, size_t n);
void *__wrap_malloc(size_t n);
void *__wrap_calloc(size_t n, size_t k);
void *__wrap_realloc(void *p, size_t n);
char *__wrap_strdup(const char *s);
char *__wrap_strndup(const char *s, size_t n);

/* One kind of call, counted; the Nth (from 1) is the one to fail, N read from the environment at
 * the first call (-1: not read yet; 0: none, and the count is printed at exit). */
typedef struct counter {
    const char *env, *label;
    unsigned long count;
    long at;
} counter;

static counter g_allocs = {"LA_FAIL_ALLOC", "allocations", 0, -1};
static counter g_unlinks = {"LA_KILL_AT_UNLINK", "unlinks", 0, -1};

static void report(counter *c) { fprintf(stderr, "%s: %lu\n", c->label, __atomic_load_n(&c->count, __ATOMIC_RELAXED)); }
static void report_allocs(void) { report(&g_allocs); }
static void report_unlinks(void) { report(&g_unlinks); }

/* Count one call; 1 when it is the one to fail. */
static int hit(counter *c, void (*at_exit)(void))
{
    long at = __atomic_load_n(&c->at, __ATOMIC_RELAXED);
    if (at < 0) {
        const char *e = getenv(c->env);
        at = e ? strtol(e, NULL, 10) : 0;
        if (at < 0) at = 0;
        long expect = -1;
        if (__atomic_compare_exchange_n(&c->at, &expect, at, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED) && e && at == 0)
            atexit(at_exit);
        at = __atomic_load_n(&c->at, __ATOMIC_RELAXED);
    }
    unsigned long k = __atomic_add_fetch(&c->count, 1, __ATOMIC_RELAXED);
    return at > 0 && k == (unsigned long)at;
}

static int fail_now(void) { return hit(&g_allocs, report_allocs); }

void *__wrap_malloc(size_t n) { return fail_now() ? NULL : __real_malloc(n); }
void *__wrap_calloc(size_t n, size_t k) { return fail_now() ? NULL : __real_calloc(n, k); }
void *__wrap_realloc(void *p, size_t n) { return fail_now() ? NULL : __real_realloc(p, n); }

char *__wrap_strdup(const char *s)
{
    size_t n = strlen(s) + 1;
    char *p = __wrap_malloc(n);
    if (p) memcpy(p, s, n);
    return p;
}

char *__wrap_strndup(const char *s, size_t n)
{
    size_t len = strnlen(s, n);
    char *p = __wrap_malloc(len + 1);
    if (p) {
        memcpy(p, s, len);
        p[len] = '\0';
    }
    return p;
}

int __real_unlink(const char *path);
int __wrap_unlink(const char *path);

int __wrap_unlink(const char *path)
{
    if (hit(&g_unlinks, report_unlinks)) raise(SIGKILL);
    return __real_unlink(path);
}
