/*
 * minhash_core.h - per-element math of MinHash and LSH band keys, shared by the CPU loop (minhash.c)
 * and a CUDA twin.
 *
 * Permutation k maps a 64-bit shingle hash x to a 32-bit value with a multiply-add-shift hash:
 *
 *   h_k(x) = (uint32_t)((a_k * x + b_k) mod 2^64 >> 32)
 *
 * with a_k (forced odd) and b_k drawn from SplitMix64 seeded by LA_MINHASH_SEED: a_k is output 2k and
 * b_k output 2k+1 of the stream (see la_minhash_param). Slot k of a signature is the minimum of h_k
 * over the shingle set (UINT32_MAX for an empty set). The parameters are a pure function of k, so
 * signatures with K permutations are a prefix of those with more, and equal on every host and device.
 *
 * An LSH band key hashes the band index and the band's r signature values:
 *   key = LA_BAND_SEED ^ band folded through la_mix64, then h = la_mix64(h ^ value) per value.
 */
#ifndef LA_MINHASH_CORE_H
#define LA_MINHASH_CORE_H

#include <stdint.h>

#include "la_hd.h"
#include "shingle_core.h"

#define LA_MINHASH_SEED 0x6d696e6861736831ull /* "minhash1" */
#define LA_BAND_SEED 0x6c736862616e6431ull    /* "lshband1" */

/* Output i of the SplitMix64 stream started at seed. */
static inline LA_HD uint64_t la_splitmix64_at(uint64_t seed, uint64_t i)
{
    return la_mix64(seed + (i + 1) * 0x9e3779b97f4a7c15ull);
}

/* Parameters of permutation k. */
static inline LA_HD void la_minhash_param(uint32_t k, uint64_t *a, uint64_t *b)
{
    *a = la_splitmix64_at(LA_MINHASH_SEED, 2ull * k) | 1u;
    *b = la_splitmix64_at(LA_MINHASH_SEED, 2ull * k + 1);
}

/* Permutation value of shingle hash x. */
static inline LA_HD uint32_t la_minhash_perm(uint64_t x, uint64_t a, uint64_t b)
{
    return (uint32_t)((a * x + b) >> 32);
}

/* The min update of one signature slot. */
static inline LA_HD uint32_t la_minhash_min(uint32_t cur, uint32_t v) { return v < cur ? v : cur; }

/* LSH key of band `band` over its r values. */
static inline LA_HD uint64_t la_band_key(uint32_t band, const uint32_t *values, int r)
{
    uint64_t h = la_mix64(LA_BAND_SEED ^ band);
    for (int i = 0; i < r; i++) h = la_mix64(h ^ values[i]);
    return h;
}

#endif /* LA_MINHASH_CORE_H */
