/*
 * la_sort.h - sorting with a context pointer, so a comparison can look rows up without a
 * file-scope variable (the library is safe to call from two threads at once).
 *
 * Portable (qsort_r's argument order differs between libcs, and C11 has none). The sort is a
 * stable merge sort: elements that compare equal keep their input order, as glibc's qsort does in
 * practice, so outputs do not change with the platform.
 */
#ifndef LA_SORT_H
#define LA_SORT_H

#include "leakaudit.h"

#include <stddef.h>
#include <stdint.h>

/* Negative, zero or positive as x sorts before, with or after y; ctx is la_sort's argument. */
typedef int (*la_sort_cmp)(const void *x, const void *y, void *ctx);

/* Sort n elements of `size` bytes at base. Thread-safe (no state beyond the arguments). Needs a
 * scratch buffer of n * size bytes; when it cannot be had, it sorts in place (a heap sort, not
 * stable: only ties between equal elements may then come out in another order). Never fails. */
void la_sort(void *base, size_t n, size_t size, la_sort_cmp cmp, void *ctx);

/* Sort n row indices by the rows' ids (unique in a table, so the order is total): the order of
 * la_sort comparing them with strcmp, by a radix sort of 8 bytes of each id (past the prefix all
 * share) and strcmp only where those tie. */
void la_sort_rows_by_id(uint32_t *idx, size_t n, const la_row *rows);

#endif /* LA_SORT_H */
