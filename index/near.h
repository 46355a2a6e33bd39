/*
 * near.h - the near-copy evidence tier: one entry point that finds every pair of rows across the
 * held-out boundary whose shingle sets overlap enough, from three candidate paths, each candidate
 * verified on the true shingle sets before it is reported:
 *
 *   LSH        MinHash signatures (K permutations) cut into b bands of r rows; rows sharing a band
 *              key are candidates. b and r come from the Jaccard threshold (la_lsh_choose).
 *   SimHash    64-bit weighted SimHash; rows within Hamming distance k, found exactly with k+1
 *              block tables (pigeonhole: two fingerprints within k bits agree on one of k+1 blocks).
 *   containment  each row's bottom-m shingle hashes (a uniform sample of its set) are indexed; every
 *              row on the other side looks all its shingles up, and a row whose sample is hit often
 *              enough is a candidate for being contained in it (a short test question quoted inside
 *              a long dev passage, which MinHash misses because their Jaccard is low).
 *
 * A candidate is reported when its true Jaccard >= threshold, or its containment
 * |A n B| / min(|A|, |B|) >= containment_threshold and the smaller set has at least
 * containment_min_shingles shingles. Not for: reading files, normalizing text (the pipeline fills
 * la_row.norm first), clustering or reporting.
 */
#ifndef LA_NEAR_H
#define LA_NEAR_H

#include <stddef.h>
#include <stdint.h>

#include "dispatch.h"
#include "leakaudit.h"
#include "near_kernels.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct la_near_params {
    int shingle_kind;              /* LA_SHINGLE_WORD or LA_SHINGLE_CHAR */
    int shingle_size;              /* n of the n-grams, 1..LA_SHINGLE_MAX_N */
    int num_perm;                  /* K MinHash permutations, 1..LA_MINHASH_MAX_PERM */
    double threshold;              /* Jaccard threshold in (0, 1] */
    double containment_threshold;  /* in (0, 1]; above 1 disables the containment test and path */
    int containment_min_shingles;  /* the smaller set needs this many shingles for containment */
    int containment_sample;        /* m: bottom-m sample size per row, 1..64 */
    int simhash_k;                 /* Hamming radius of SimHash candidates, 0..7; -1 disables */
    double lsh_fp_weight;          /* weights of the band selection */
    double lsh_fn_weight;
    int within;                    /* also pairs inside one partition */
    int threads;                   /* worker threads; 0 = online CPUs */
    la_exec *exec;                 /* where the signature, band key and bucket ops run, logged per
                                      stage (dispatch.h); NULL = the CPU reference. Borrowed. */
    /* Progress, or NULL: a phase begins ("signatures", "candidates" over rows, "verification" over
     * candidates) with its total, then its units as they are done (from any worker thread). */
    void (*phase_begins)(void *ctx, const char *phase, size_t total, const char *unit);
    void (*phase_adds)(void *ctx, size_t n);
    void *progress_ctx;
    const uint8_t *skip;           /* NULL, or one flag per row: a flagged row still counts in the
                                      shingle frequencies the containment samples are drawn from, but
                                      is not signed, bucketed, probed or paired (a shard of the seen
                                      side: host/shard.h). Borrowed. */
    size_t set_cache_bytes;        /* keep every row's shingle set between the phases when all of
                                      them fit in this many bytes (8 per distinct shingle), instead
                                      of shingling each row again per phase; 0 (the default): never.
                                      Results are the same either way. */
} la_near_params;

/* The defaults documented in docs/near.md. */
void la_near_params_default(la_near_params *p /* OUT */);

typedef struct la_near_stats {
    int bands, rows;               /* LSH shape chosen from the threshold */
    double expected_recall;        /* P(LSH candidate | Jaccard == threshold) */
    size_t rows_signed;            /* rows with at least one shingle (flagged rows not counted) */
    size_t rows_signed_heldout;    /* of them, held-out rows */
    size_t candidates_lsh;         /* distinct pairs proposed by each path */
    size_t candidates_simhash;
    size_t candidates_containment;
    size_t candidates;             /* distinct pairs verified */
    size_t verified;               /* pairs reported (passed verification) */
    double seconds_signatures;     /* wall time of each phase */
    double seconds_candidates;
    double seconds_verify;
} la_near_stats;

/* Find near copies in table t across the boundary of partition heldout_part.
 *
 * Rows with norm == NULL, or whose normalized text has no shingle, are skipped. Pairs are formed
 * between a held-out row and a row of any other partition (b = the held-out row, a = the other);
 * with p->within also between two rows of the same partition (a < b). Each reported pair is
 * appended to `out` with kinds = LA_KIND_NEAR, jaccard, containment, minhash (agreeing slots / K) and
 * simhash_dist set; the appended pairs are sorted by (b, a) and identical for any thread count.
 * stats (may be NULL) is filled on success.
 *
 * The stages "near_signatures", "near_simhash", "near_band_keys" and "near_buckets" run through
 * p->exec (the pairs are the same on every backend); the candidate probes and the verification run
 * on the CPU. p == NULL uses the defaults. The table is only read; call from one thread per table.
 * Returns LA_EINVAL for bad parameters or an unknown partition, LA_ENOMEM, or a
 * device failure of p->exec's backend when it has no fallback. On failure `out` keeps its previous pairs. */
la_status la_near_find(const la_table *t, uint32_t heldout_part, const la_near_params *p,
                       la_pairs *out /* OUT: appended */, la_near_stats *stats /* OUT */);

#ifdef __cplusplus
}
#endif
#endif /* LA_NEAR_H */
