/*
 * near_kernels.h - the CPU loops of the near-copy tier: shingling, MinHash signatures, LSH band keys
 * and SimHash. Each loop calls the per-element math of kernels/ *_core.h; the CUDA twins
 * (la_cuda_shingle..., la_cuda_minhash, la_cuda_simhash) will call the same functions and return the
 * same integers.
 *
 * These functions are pure: no allocation (except the documented exception), no threads, no I/O.
 * All are safe to call from many threads at once on different buffers.
 */
#ifndef LA_NEAR_KERNELS_H
#define LA_NEAR_KERNELS_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

enum la_shingle_kind {
    LA_SHINGLE_WORD = 0, /* n consecutive words (runs of non-space, non-ASCII-punctuation bytes) */
    LA_SHINGLE_CHAR = 1  /* n consecutive Unicode code points, whitespace runs read as one space */
};

#ifndef LA_SHINGLE_MAX_N
#define LA_SHINGLE_MAX_N 32
#endif
#define LA_MINHASH_MAX_PERM 1024

/* Hash every shingle of text[0..len) (UTF-8) into out[0..cap), in text order, duplicates kept.
 * A text with fewer than n tokens but at least one gives one shingle of all its tokens; an empty
 * text gives none. Returns the number of shingles of the text, which may exceed cap: then only the
 * first cap were written and the caller should retry with a larger buffer. kind is a
 * la_shingle_kind, 1 <= n <= LA_SHINGLE_MAX_N (other values give 0). */
size_t la_cpu_shingle(const char *text, size_t len, int kind, int n, uint64_t *out, size_t cap);

/* la_hash_bytes(p, n) of shingle_core.h, computed with 8-byte loads (memcpy) on little-endian hosts;
 * equal for every input (tests/unit/test_near_fast.c). p may be NULL when n is 0. */
uint64_t la_cpu_hash_bytes(const void *p, size_t n);

/* Upper bound of la_cpu_shingle's result for a text of len bytes (one shingle per byte at most). */
static inline size_t la_shingle_bound(size_t len) { return len + 1; }

/* Sort h[0..n) ascending in place. */
void la_cpu_shingle_sort(uint64_t *h, size_t n);

/* Remove duplicates from a sorted array in place; returns the number of distinct values. */
size_t la_cpu_shingle_unique(uint64_t *h, size_t n);

/* Entries of the table la_cpu_shingle_distinct needs for n values. */
size_t la_shingle_distinct_table(size_t n);

/* The distinct values of h[0..n) (h unchanged) into out[0..): in the order of their first
 * occurrence, or ascending (fewer than 16 values, or values crowding a few slots of the table: they
 * are sorted then). The same h gives the same out. table: la_shingle_distinct_table(n)
 * entries or more, all zero, and left all zero. Returns the number of distinct values. */
size_t la_cpu_shingle_distinct(const uint64_t *h, size_t n, uint64_t *out, uint64_t *table);

/* A distinct set indexed for la_cpu_shingle_index_overlap: its values in a table of their own. */
typedef struct la_shingle_index {
    uint64_t *slot;
    size_t mask;
    int shift;
    int zero; /* the set holds the value 0 (kept apart: 0 marks an empty slot) */
} la_shingle_index;

/* Entries of the table la_cpu_shingle_index needs for n values. */
size_t la_shingle_index_table(size_t n);

/* Index the distinct values set[0..n) in table (la_shingle_index_table(n) entries or more, all zero,
 * borrowed until la_cpu_shingle_index_clear). */
void la_cpu_shingle_index(la_shingle_index *x, const uint64_t *set, size_t n, uint64_t *table);

/* How many of the distinct values a[0..na) the indexed set holds: la_cpu_shingle_overlap's count for
 * sets in any order. */
size_t la_cpu_shingle_index_overlap(const la_shingle_index *x, const uint64_t *a, size_t na);

/* The table all zero again, and x indexes nothing. */
void la_cpu_shingle_index_clear(la_shingle_index *x);

/* Number of values present in both sorted, duplicate-free arrays. */
size_t la_cpu_shingle_overlap(const uint64_t *a, size_t na, const uint64_t *b, size_t nb);

/* MinHash signature with k permutations (1 <= k <= LA_MINHASH_MAX_PERM) of the shingle hashes
 * h[0..n) (duplicates do not matter) into sig[0..k). An empty set gives all UINT32_MAX. */
void la_cpu_minhash(const uint64_t *h, size_t n, int k, uint32_t *sig /* OUT */);

/* Which code la_cpu_minhash runs on this CPU ("AVX-512", or the portable loop and its clone), and
 * la_cpu_simhash ("AVX-512", "AVX2" or "portable loop"): static strings, for leakaudit doctor. */
const char *la_cpu_minhash_kernel(void);
const char *la_cpu_simhash_kernel(void);

/* The same signature as la_cpu_minhash, always from the portable loop (no AVX-512 path): the
 * reference the vector paths are tested against. */
void la_cpu_minhash_portable(const uint64_t *h, size_t n, int k, uint32_t *sig /* OUT */);

/* LSH band keys: keys[j] = la_band_key(j, sig + j*rows, rows) for j in [0, bands). */
void la_cpu_lsh_keys(const uint32_t *sig, int bands, int rows, uint64_t *keys /* OUT */);

/* Number of equal slots of two signatures of k values (the MinHash Jaccard estimate is this / k). */
int la_cpu_minhash_agree(const uint32_t *x, const uint32_t *y, int k);

/* Weighted SimHash of a shingle multiset h[0..n): each distinct value votes with its count. The
 * votes add up alike in any order (a run of equal values votes once with its length, each value of
 * it alone votes with 1); sorted, each run's hash is computed once. */
uint64_t la_cpu_simhash(const uint64_t *h, size_t n);
/* The same with the portable loop whatever the CPU (la_cpu_simhash takes AVX-512 or AVX2 where it
 * can). */
uint64_t la_cpu_simhash_portable(const uint64_t *h, size_t n);
/* The same with the AVX2 loop: on x86-64 CPUs with AVX2 only (la_cpu_simhash_has_avx2 says; other
 * builds and CPUs take the portable loop), for tests. */
uint64_t la_cpu_simhash_avx2(const uint64_t *h, size_t n);
int la_cpu_simhash_has_avx2(void);

#ifdef __cplusplus
}
#endif
#endif /* LA_NEAR_KERNELS_H */
