/*
 * la_keysort.h - sorting (key, row) entries by key, stably: the bucketing step of the near tier
 * (LSH band keys, SimHash blocks and containment samples all become sorted multimaps, index/lsh.c),
 * the exact links, the candidates, and rows by id (la_sort_rows_by_id, which keys them by their ids'
 * bytes).
 *
 * The CPU sort (util/keysort.c, the CPU backend's op) is an MSD radix sort of 8-bit digits; the CUDA
 * twin (kernels/keysort.cu, declared in near_cuda.h) is CUB's radix sort over the same entries. Both
 * are stable, so entries with equal keys keep their input order and the two give the same array,
 * entry for entry.
 *
 * Not for: building the lookup table over the sorted entries (index/lsh.c).
 */
#ifndef LA_KEYSORT_H
#define LA_KEYSORT_H

#include <stddef.h>
#include <stdint.h>

#include "leakaudit.h"

#ifdef __cplusplus
extern "C" {
#endif

/* One entry of a bucket table: a 64-bit key and the table row it came from. `aux` fills what would
 * be padding and belongs to the caller once the entries are sorted: the sorts order key and row and
 * leave aux unspecified (the CUDA twin does not move it). */
typedef struct la_key_row {
    uint64_t key;
    uint32_t row;
    uint32_t aux;
} la_key_row;

/* Sort e[0..n) by key ascending, stably, in place. Allocates a scratch copy of the entries (freed
 * before returning). Returns LA_ENOMEM, else LA_OK. Safe to call from many threads on different
 * arrays. */
la_status la_sort_key_rows(la_key_row *e, size_t n);

#ifdef __cplusplus
}
#endif
#endif /* LA_KEYSORT_H */
