/*
 * sort.c - la_sort: a stable merge sort with a context, and an in-place heap sort for when no
 * scratch memory can be had.
 */
#include "la_sort.h"

#include "la_alloc.h"

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

void la_sort_rows_by_id(uint32_t *idx, size_t n, const la_row *rows)
{
    la_sort(idx, n, sizeof *idx, cmp_row_id, (void *)rows);
}
