/*
 * sort.c - la_sort: a stable merge sort with a context, and an in-place heap sort for when no
 * scratch memory can be had.
 */
#include "la_sort.h"

#include "la_alloc.h"
#include "la_keysort.h"

#include <stdlib.h>
#include <string.h>

#define INSERTION_RUN 12

static void swap_bytes(char *a, char *b, size_t size)
{
    while (size--) {
        char t = *a;
        *a++ = *b;
        *b++ = t;
    }
}

/* Insertion sort of [lo, hi) (stable), using tmp (one element) to hold the element moved. */
static void insertion(char *base, size_t lo, size_t hi, size_t size, la_sort_cmp cmp, void *ctx, char *tmp)
{
    for (size_t i = lo + 1; i < hi; i++) {
        if (cmp(base + (i - 1) * size, base + i * size, ctx) <= 0) continue;
        memcpy(tmp, base + i * size, size);
        size_t j = i;
        while (j > lo && cmp(base + (j - 1) * size, tmp, ctx) > 0) {
            memcpy(base + j * size, base + (j - 1) * size, size);
            j--;
        }
        memcpy(base + j * size, tmp, size);
    }
}

/* Sort [lo, hi) of base with scratch (same size as base). */
static void merge_sort(char *base, char *scratch, size_t lo, size_t hi, size_t size, la_sort_cmp cmp, void *ctx)
{
    if (hi - lo <= INSERTION_RUN) {
        insertion(base, lo, hi, size, cmp, ctx, scratch + lo * size);
        return;
    }
    size_t mid = lo + (hi - lo) / 2;
    merge_sort(base, scratch, lo, mid, size, cmp, ctx);
    merge_sort(base, scratch, mid, hi, size, cmp, ctx);
    if (cmp(base + (mid - 1) * size, base + mid * size, ctx) <= 0) return; /* already in order */
    memcpy(scratch + lo * size, base + lo * size, (mid - lo) * size);
    size_t i = lo, j = mid, k = lo;
    while (i < mid && j < hi) {
        /* <= keeps the left run's element first on ties: stable */
        if (cmp(scratch + i * size, base + j * size, ctx) <= 0) memcpy(base + k++ * size, scratch + i++ * size, size);
        else memcpy(base + k++ * size, base + j++ * size, size);
    }
    if (i < mid) memcpy(base + k * size, scratch + i * size, (mid - i) * size);
}

static void sift_down(char *base, size_t root, size_t n, size_t size, la_sort_cmp cmp, void *ctx)
{
    for (;;) {
        size_t child = 2 * root + 1;
        if (child >= n) return;
        if (child + 1 < n && cmp(base + child * size, base + (child + 1) * size, ctx) < 0) child++;
        if (cmp(base + root * size, base + child * size, ctx) >= 0) return;
        swap_bytes(base + root * size, base + child * size, size);
        root = child;
    }
}

static void heap_sort(char *base, size_t n, size_t size, la_sort_cmp cmp, void *ctx)
{
    for (size_t i = n / 2; i-- > 0;) sift_down(base, i, n, size, cmp, ctx);
    for (size_t end = n; end-- > 1;) {
        swap_bytes(base, base + end * size, size);
        sift_down(base, 0, end, size, cmp, ctx);
    }
}

void la_sort(void *base, size_t n, size_t size, la_sort_cmp cmp, void *ctx)
{
    if (n < 2 || size == 0) return;
    char *scratch = la_malloc_n(n, size);
    if (!scratch) {
        heap_sort(base, n, size, cmp, ctx);
        return;
    }
    merge_sort(base, scratch, 0, n, size, cmp, ctx);
    free(scratch);
}

static int cmp_row_id(const void *x, const void *y, void *ctx)
{
    const la_row *rows = ctx;
    return strcmp(rows[*(const uint32_t *)x].id, rows[*(const uint32_t *)y].id);
}

/* 8 bytes of id s from `skip` on (after the prefix every id shares), big-endian and zero-padded:
 * keys order as strcmp orders the ids where they differ. */
static uint64_t id_bytes(const char *s, size_t skip)
{
    uint64_t k = 0;
    const unsigned char *u = (const unsigned char *)s + skip;
    int i = 0;
    for (; i < 8 && u[i]; i++) k = k << 8 | u[i];
    return i ? k << (8 * (8 - i)) : 0; /* a shift by 64 is undefined */
}

/* The ids of a run of equal keys go on past the key's 8 bytes (its last byte is not padding): they
 * are ordered by strcmp. */
static int cmp_key_run(const void *x, const void *y, void *ctx)
{
    return cmp_row_id(&((const la_key_row *)x)->row, &((const la_key_row *)y)->row, ctx);
}

/* The ids are read once into keys (no row is looked up again but where two keys tie), radix
 * sorted, and runs of tied keys sorted by strcmp: the order of la_sort with cmp_row_id. */
void la_sort_rows_by_id(uint32_t *idx, size_t n, const la_row *rows)
{
    if (n < 2) return;
    la_key_row *v = la_malloc_n(n, sizeof *v);
    /* the prefix every id shares */
    const char *first = rows[idx[0]].id;
    size_t skip = strlen(first);
    for (size_t i = 1; v && i < n && skip; i++) {
        const char *s = rows[idx[i]].id;
        size_t k = 0;
        while (k < skip && s[k] == first[k]) k++;
        skip = k;
    }
    for (size_t i = 0; v && i < n; i++) v[i] = (la_key_row){.key = id_bytes(rows[idx[i]].id, skip), .row = idx[i]};
    if (!v || la_sort_key_rows(v, n) != LA_OK) {
        free(v);
        la_sort(idx, n, sizeof *idx, cmp_row_id, (void *)rows);
        return;
    }
    for (size_t i = 0; i < n;) {
        size_t e = i + 1;
        while (e < n && v[e].key == v[i].key) e++;
        if (e - i > 1 && (v[i].key & 0xFF)) la_sort(v + i, e - i, sizeof *v, cmp_key_run, (void *)rows);
        i = e;
    }
    for (size_t i = 0; i < n; i++) idx[i] = v[i].row;
    free(v);
}
