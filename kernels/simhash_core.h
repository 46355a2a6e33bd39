/*
 * simhash_core.h - per-element math of the 64-bit weighted SimHash, shared by the CPU loop
 * (simhash.c) and a CUDA twin.
 *
 * Each distinct shingle votes with weight w (its count in the text) on 64 bit counters: +w where bit
 * i of la_simhash_hash(shingle) is 1, -w where it is 0. Bit i of the SimHash is 1 when counter i is
 * positive. The shingle hash is remixed with LA_SIMHASH_SEED so that SimHash bits are independent of
 * the MinHash permutations. Integer weights keep the result bit-identical on every backend.
 */
#ifndef LA_SIMHASH_CORE_H
#define LA_SIMHASH_CORE_H

#include <stdint.h>

#include "la_hd.h"
#include "shingle_core.h"

#define LA_SIMHASH_SEED 0x73696d6861736831ull /* "simhash1" */

static inline LA_HD uint64_t la_simhash_hash(uint64_t shingle) { return la_mix64(shingle ^ LA_SIMHASH_SEED); }

/* Add the votes of one shingle (already passed through la_simhash_hash) with weight w. */
static inline LA_HD void la_simhash_vote(int32_t acc[64], uint64_t h, int32_t w)
{
    for (int i = 0; i < 64; i++) acc[i] += ((h >> i) & 1u) ? w : -w;
}

/* Fold the counters into the 64-bit fingerprint. */
static inline LA_HD uint64_t la_simhash_finish(const int32_t acc[64])
{
    uint64_t s = 0;
    for (int i = 0; i < 64; i++)
        if (acc[i] > 0) s |= 1ull << i;
    return s;
}

/* Hamming distance of two fingerprints. */
static inline LA_HD int la_simhash_dist(uint64_t x, uint64_t y)
{
    uint64_t v = x ^ y;
#if defined(__CUDA_ARCH__)
    return __popcll(v);
#elif defined(__GNUC__)
    return __builtin_popcountll(v);
#else
    int c = 0;
    while (v) {
        v &= v - 1;
        c++;
    }
    return c;
#endif
}

#endif /* LA_SIMHASH_CORE_H */
