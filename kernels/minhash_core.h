/*
 * minhash_core.h - per-element math of MinHash and LSH band keys, shared by the CPU loops (minhash.c)
 * and the CUDA twin (minhash.cu).
 *
 * Each 64-bit shingle hash x is first reduced to a 32-bit key, once per shingle:
 *
 *   key(x) = (uint32_t)la_mix64(x ^ LA_MINHASH_SEED)          (low half of the SplitMix64 finalizer)
 *
 * and permutation k maps the key with a multiply-add modulo 2^32:
 *
 *   h_k(x) = (a_k * key(x) + b_k) mod 2^32
 *
 * a_k (forced odd) is the high half of output 2k and b_k the high half of output 2k+1 of SplitMix64
 * seeded by LA_MINHASH_SEED (see la_minhash_param). Slot k of a signature is the minimum of h_k over
 * the shingle set (UINT32_MAX for an empty set). The parameters are a pure function of k, so
 * signatures with K permutations are a prefix of those with more, and equal on every host and device.
 *
 * Why this family: with a_k odd, h_k is a bijection of 32-bit keys (a true permutation: two distinct
 * keys never tie), and it needs one 32 x 32 -> 32 bit multiply, so 16 slots fit one 512-bit vector
 * (vpmulld) and a GPU thread needs no 64-bit multiply. The mixed key makes the input look uniform
 * whatever the caller's hashes are (small integers included), and a bijection of uniform keys gives
 * each slot an unbiased minimum. Two shingles of one document pair get the same key with probability
 * 2^-32 (about |A| |B| / 2^32 such pairs between documents A and B: 6e-6 for two 160-shingle rows,
 * 0.02 for two 10,000-shingle ones); such a pair counts as shared in every slot. Correlation between
 * slots i and j comes from short vectors of the lattice {(u, v) : u a_i = v a_j mod 2^32} (then
 * u h_i - v h_j is a constant mod 2^32); for these seeds the shortest such vector over all pairs of the
 * first 128 slots has length 992, over the first 1024 slots 120 (docs/near.md).
 *
 * An LSH band key hashes the band index and the band's r signature values:
 *   key = LA_BAND_SEED ^ band folded through la_mix64, then h = la_mix64(h ^ value) per value.
 */
#ifndef LA_MINHASH_CORE_H
#define LA_MINHASH_CORE_H

#include <stdint.h>

#include "la_hd.h"
#include "shingle_core.h"

#define LA_MINHASH_SEED 0x6d696e6861736832ull /* "minhash2" (the family before this one used "minhash1") */
#define LA_BAND_SEED 0x6c736862616e6431ull    /* "lshband1" */

/* Output i of the SplitMix64 stream started at seed. */
static inline LA_HD uint64_t la_splitmix64_at(uint64_t seed, uint64_t i)
{
    return la_mix64(seed + (i + 1) * 0x9e3779b97f4a7c15ull);
}

/* Parameters of permutation k. */
static inline LA_HD void la_minhash_param(uint32_t k, uint32_t *a, uint32_t *b)
{
    *a = (uint32_t)(la_splitmix64_at(LA_MINHASH_SEED, 2ull * k) >> 32) | 1u;
    *b = (uint32_t)(la_splitmix64_at(LA_MINHASH_SEED, 2ull * k + 1) >> 32);
}

/* The 32-bit key of shingle hash x, computed once per shingle (not per permutation). */
static inline LA_HD uint32_t la_minhash_key(uint64_t x) { return (uint32_t)la_mix64(x ^ LA_MINHASH_SEED); }

/* Permutation value of key x (from la_minhash_key): unsigned arithmetic wraps modulo 2^32. */
static inline LA_HD uint32_t la_minhash_perm(uint32_t x, uint32_t a, uint32_t b) { return (uint32_t)(a * x + b); }

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
