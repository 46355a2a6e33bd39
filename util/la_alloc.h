/*
 * la_alloc.h - allocation with sizes that cannot overflow, and growing an array.
 *
 * Every `count * size` the library allocates goes through these helpers: a product that does not
 * fit in size_t is a failed allocation (NULL), never a short buffer. A count of zero allocates one
 * element, so a successful call always returns a pointer that may be freed (and, for the callers
 * that sort or scan empty arrays, a valid one). Only libc below this file; no error is recorded
 * here: the caller knows what it was allocating and says so with la_error(LA_ENOMEM, ...).
 */
#ifndef LA_ALLOC_H
#define LA_ALLOC_H

#include <stddef.h>
#include <stdint.h>

/* *out = a * b and 1 when the product fits in size_t; 0 (and *out untouched) otherwise. */
static inline int la_size_mul(size_t a, size_t b, size_t *out)
{
    if (b && a > SIZE_MAX / b) return 0;
    *out = a * b;
    return 1;
}

/* malloc of n elements of `size` bytes (at least one element); NULL on overflow or no memory. */
void *la_malloc_n(size_t n, size_t size);
/* malloc of n * m elements of `size` bytes (at least one element); NULL on overflow or no memory. */
void *la_malloc_nm(size_t n, size_t m, size_t size);
/* calloc of n elements of `size` bytes (at least one element); NULL on overflow or no memory. */
void *la_calloc_n(size_t n, size_t size);
/* Zeroed memory as la_calloc_n, its pages faulted in for writing now (la_populate): for a table
 * whose slots are read before they are written (a probe, a `|=`). calloc leaves fresh pages
 * unmapped: the first read of one maps the shared zero page, which the first write then copies: two
 * faults a page, and with other threads of the process running, a flush of their TLBs (an interrupt
 * to each CPU, costly in a virtual machine). */
void *la_zalloc_n(size_t n, size_t size);
/* Fault in the pages of [p, p + n) that lie wholly inside it for writing, in one call where the
 * kernel can (MADV_POPULATE_WRITE, Linux 5.14), for memory about to be filled from its start: one
 * system call in place of a fault a page (faster from four pages on: 16 KiB pieces of 64 MiB took
 * 25 ms against 33 ms faulted a page at a time). Does nothing elsewhere, or for less than 16 KiB. */
void la_populate(void *p, size_t n);
/* realloc to n elements of `size` bytes (at least one element); NULL on overflow or no memory,
 * and then p is untouched and still owned by the caller. */
void *la_realloc_n(void *p, size_t n, size_t size);

/* strndup that reads at most n bytes of s (stopping at a NUL before them): glibc's strndup does too,
 * but sanitizers' string checks read s to its end, which over a file buffer is quadratic. NULL when
 * out of memory. */
char *la_strndup(const char *s, size_t n);

/* Make room for `need` elements of `size` bytes in *p (capacity *cap elements), doubling from
 * `first` elements. Returns 1 on success (then *cap >= need), 0 on overflow or no memory (*p and
 * *cap untouched). */
int la_grow(void **p, size_t *cap, size_t need, size_t size, size_t first);

#endif /* LA_ALLOC_H */
