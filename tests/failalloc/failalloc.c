/*
 * failalloc.c - allocation-failure injection for the test build leakaudit_failalloc, SQLite-style:
 * the program's own calls to malloc, calloc, realloc, strdup and strndup are routed here by the
 * linker (--wrap), counted, and LA_FAIL_ALLOC=N makes the Nth one (from 1) return NULL, once.
 * LA_FAIL_ALLOC=0 fails none and prints "allocations: COUNT" to stderr at exit, so a test can walk
 * N over every allocation of a run. Allocations inside the libraries (json-c, zlib, ...) are not
 * counted. Not for: the installed program.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void *__real_malloc(size_t n);
void *__real_calloc(size_t n, size_t k);
void *__real_realloc(void *p, size_t n);
void *__wrap_malloc(size_t n);
void *__wrap_calloc(size_t n, size_t k);
void *__wrap_realloc(void *p, size_t n);
char *__wrap_strdup(const char *s);
char *__wrap_strndup(const char *s, size_t n);

static unsigned long g_count;
static long g_fail_at = -1; /* -1: not read yet; 0: count only */

static void report(void) { fprintf(stderr, "allocations: %lu\n", __atomic_load_n(&g_count, __ATOMIC_RELAXED)); }

static int fail_now(void)
{
    long at = __atomic_load_n(&g_fail_at, __ATOMIC_RELAXED);
    if (at < 0) {
        const char *e = getenv("LA_FAIL_ALLOC");
        at = e ? strtol(e, NULL, 10) : 0;
        if (at < 0) at = 0;
        long expect = -1;
        if (__atomic_compare_exchange_n(&g_fail_at, &expect, at, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED) && e && at == 0)
            atexit(report);
        at = __atomic_load_n(&g_fail_at, __ATOMIC_RELAXED);
    }
    unsigned long k = __atomic_add_fetch(&g_count, 1, __ATOMIC_RELAXED);
    return at > 0 && k == (unsigned long)at;
}

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
