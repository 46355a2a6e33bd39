/*
 * alloc.c - checked allocation (la_alloc.h).
 */
#include "la_alloc.h"

#include <stdlib.h>
#include <string.h>
#ifdef __linux__
#include <sys/mman.h>
#endif

void *la_malloc_n(size_t n, size_t size)
{
    size_t bytes;
    if (!la_size_mul(n ? n : 1, size, &bytes)) return NULL;
    return malloc(bytes ? bytes : 1);
}

void *la_malloc_nm(size_t n, size_t m, size_t size)
{
    size_t count;
    if (!la_size_mul(n ? n : 1, m ? m : 1, &count)) return NULL;
    return la_malloc_n(count, size);
}

void *la_calloc_n(size_t n, size_t size) { return calloc(n ? n : 1, size ? size : 1); }

void *la_zalloc_n(size_t n, size_t size)
{
    size_t bytes;
    if (!la_size_mul(n ? n : 1, size ? size : 1, &bytes)) return NULL;
    /* calloc leaves fresh pages unmapped (they read as zeros) and clears reused memory; the fresh
     * ones are then faulted in for writing, in one call */
    void *p = calloc(1, bytes);
    if (p) la_populate(p, bytes);
    return p;
}

void la_populate(void *p, size_t n)
{
#if defined(__linux__) && defined(MADV_POPULATE_WRITE)
    enum { PAGE = 4096 };
    if (n < ((size_t)16 << 10)) return;
    uintptr_t a = ((uintptr_t)p + PAGE - 1) & ~(uintptr_t)(PAGE - 1), e = ((uintptr_t)p + n) & ~(uintptr_t)(PAGE - 1);
    if (e > a) (void)madvise((void *)a, e - a, MADV_POPULATE_WRITE);
#else
    (void)p;
    (void)n;
#endif
}

void *la_realloc_n(void *p, size_t n, size_t size)
{
    size_t bytes;
    if (!la_size_mul(n ? n : 1, size, &bytes)) return NULL;
    return realloc(p, bytes ? bytes : 1);
}

int la_grow(void **p, size_t *cap, size_t need, size_t size, size_t first)
{
    if (need <= *cap) return 1;
    size_t c = *cap ? *cap : (first ? first : 1);
    while (c < need) {
        if (c > SIZE_MAX / 2) {
            c = need;
            break;
        }
        c *= 2;
    }
    void *q = la_realloc_n(*p, c, size);
    if (!q) return 0;
    *p = q;
    *cap = c;
    return 1;
}

char *la_strndup(const char *s, size_t n)
{
    const char *nul = memchr(s, 0, n);
    size_t k = nul ? (size_t)(nul - s) : n;
    char *d = malloc(k + 1);
    if (!d) return NULL;
    memcpy(d, s, k);
    d[k] = '\0';
    return d;
}
