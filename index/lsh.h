/*
 * lsh.h - locality-sensitive hashing helpers of the near tier: the choice of b bands of r rows for a
 * Jaccard threshold, and a bucket table (a sorted multimap from 64-bit keys to row indices) used for
 * LSH band keys, SimHash blocks and containment samples alike.
 *
 * Not for: computing signatures or keys (kernels/), verifying pairs (near.c).
 */
#ifndef LA_LSH_H
#define LA_LSH_H

#include <stddef.h>
#include <stdint.h>

#include "la_keysort.h"
#include "leakaudit.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Probability that a pair with Jaccard s shares at least one of b bands of r MinHash rows:
 * 1 - (1 - s^r)^b. */
double la_lsh_candidate_prob(double s, int bands, int rows);

/* Choose bands and rows (bands * rows <= num_perm) for a Jaccard threshold in (0, 1) by minimizing
 * fp_weight * FP + fn_weight * FN, where FP is the integral of the candidate probability over
 * [0, threshold] and FN the integral of its complement over [threshold, 1] (the standard
 * construction, Leskovec, Rajaraman, Ullman, "Mining of Massive Datasets", ch. 3). Ties keep the
 * fewest bands. expected_recall (may be NULL) receives la_lsh_candidate_prob(threshold, b, r).
 * Returns LA_EINVAL for a threshold outside (0, 1], num_perm < 1 or negative weights. */
la_status la_lsh_choose(double threshold, int num_perm, double fp_weight, double fn_weight,
                        int *bands /* OUT */, int *rows /* OUT */, double *expected_recall /* OUT */);

/* ---- bucket table ---------------------------------------------------------------------------- */

/* An entry: a key and its row (util/la_keysort.h, so the backends can sort the entries). */
typedef la_key_row la_bucket_entry;

typedef struct la_buckets la_buckets;

/* Build a table from n entries. Takes ownership of `entries` (malloc'ed; freed with the table, also
 * on failure). Entries with equal keys keep their input order. The table is read-only afterwards and
 * safe to query from many threads. */
la_status la_buckets_new(la_bucket_entry *entries, size_t n, la_buckets **out /* OUT */);
/* The same from entries already sorted by key (stably: la_sort_key_rows or a backend's
 * sort_keys), which is not sorted again. */
la_status la_buckets_new_sorted(la_bucket_entry *entries, size_t n, la_buckets **out /* OUT */);
void la_buckets_free(la_buckets *b);

/* The entries whose key equals `key`: returns their count and points *first at the first of them
 * (borrowed; valid while the table lives). Returns 0 when there are none. */
size_t la_buckets_find(const la_buckets *b, uint64_t key, const la_bucket_entry **first /* OUT */);

/* A hint that la_buckets_find(b, key) follows soon: starts loading the slot it reads first. Changes
 * nothing else; safe from many threads. */
void la_buckets_prefetch(const la_buckets *b, uint64_t key);

/* Number of entries and of distinct keys. */
size_t la_buckets_size(const la_buckets *b);
size_t la_buckets_keys(const la_buckets *b);

#ifdef __cplusplus
}
#endif
#endif /* LA_LSH_H */
