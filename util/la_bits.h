/*
 * la_bits.h - bit sets (filters): setting a bit, and a set filled on several threads. Threads
 * setting bits of one set, atomically, took each other's cache lines on every other key; so each
 * thread but the first sets its bits in a zeroed copy of its own (la_bits_copies), and the copies
 * are ORed into the set afterwards (la_bits_merge).
 */
#ifndef LA_BITS_H
#define LA_BITS_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "la_alloc.h"

/* Bit `bit` of words[] set. */
static inline void la_bit_set(uint64_t *words, size_t bit) { words[bit >> 6] |= 1ull << (bit & 63); }

/* Zeroed copies of a set of `words` words for threads 1 .. nthreads - 1 (copies[0] is NULL: the
 * first thread sets the set's own bits); NULL with fewer than two threads, and *failed 0. On out
 * of memory NULL and *failed 1. */
static inline uint64_t **la_bits_copies(int nthreads, size_t words, int *failed)
{
    *failed = 0;
    if (nthreads < 2) return NULL;
    uint64_t **copies = la_calloc_n((size_t)nthreads, sizeof *copies);
    for (int w = 1; copies && w < nthreads; w++)
        if (!(copies[w] = la_zalloc_n(words, sizeof **copies))) {
            for (int k = 1; k < w; k++) free(copies[k]);
            free(copies);
            copies = NULL;
        }
    *failed = copies == NULL;
    return copies;
}

/* The set thread `worker` sets its bits in: its copy, or the set itself. */
static inline uint64_t *la_bits_of(uint64_t *set, uint64_t *const *copies, int worker)
{
    return copies && worker ? copies[worker] : set;
}

/* The copies ORed into set (when `merge`), then freed. */
static inline void la_bits_merge(uint64_t *set, uint64_t **copies, int nthreads, size_t words, int merge)
{
    if (!copies) return;
    for (int w = 1; w < nthreads; w++) {
        for (size_t i = 0; merge && i < words; i++) set[i] |= copies[w][i];
        free(copies[w]);
    }
    free(copies);
}

#endif /* LA_BITS_H */
