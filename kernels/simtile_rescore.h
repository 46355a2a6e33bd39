/*
 * simtile_rescore.h - the host half of the device similarity tiles (simtile.cu): candidates that the
 * GPU's fast fp16/TF32/fp32 scores picked out are re-scored here with la_simtile_dot, the fixed-order
 * product of simtile_core.h that the CPU path reports, so both backends give the same pairs, cosines
 * and top-k lists. Plain C with OpenMP; it knows nothing of CUDA and builds without it.
 *
 * Internal to kernels/: the public entry point is la_cuda_simtile (simtile_cuda.h).
 */
#ifndef LA_SIMTILE_RESCORE_H
#define LA_SIMTILE_RESCORE_H

#include <stddef.h>
#include <stdint.h>

#include "leakaudit.h"
#include "simtile.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Error bound of a fast cosine against the fixed-order one, for vectors of norms qn and sn:
 * |fast - exact| <= rel * qn * sn + sub * (qn + sn) + abs0. */
typedef struct la_simtile_bound {
    float rel, sub, abs0;
} la_simtile_bound;

/*
 * Re-score n candidate pairs cand[2i] = q (row of Q), cand[2i+1] = s (row of S, before s_offset)
 * and append those with cosine >= thr to hits (unsorted). Uses `threads` OpenMP threads (0 = all).
 * Returns LA_ENOMEM.
 */
la_status la_simtile_rescore_pairs(const float *Q, const float *S, size_t d, uint32_t s_offset,
                                   float thr, const uint32_t *cand, size_t n, int threads,
                                   la_simtile_hits *hits /* OUT: appended */);

/*
 * Merge the device's per-row candidate lists into the caller's top-k lists.
 *   lists_c, lists_i: nlists arrays of nq * L entries (fast score, row of S before s_offset; index
 *     LA_SIMTILE_NONE when empty), each row's list sorted best first by fast score. Everything
 *     the device did not keep in list j scored at most that list's last entry.
 *   s_maxnorm: the largest norm among the rows of S; b: the fast scores' error bound.
 * A row is settled when nothing left off any list could rank within its k best after re-scoring;
 * the other rows keep their lists from before the call and are recomputed by la_cpu_simtile (the CPU
 * reference itself). *ncand counts the candidates re-scored, *ncpu the rows recomputed.
 * Returns LA_ENOMEM or la_cpu_simtile's status; on failure top_idx and top_cos are unchanged.
 */
la_status la_simtile_rescore_topk(const float *Q, size_t nq, const float *S, size_t ns, size_t d,
                                  uint32_t s_offset, const la_simtile_params *p,
                                  const float *const *lists_c, const uint32_t *const *lists_i,
                                  int nlists, uint32_t L, float s_maxnorm, la_simtile_bound b,
                                  uint32_t *top_idx /* IN/OUT */, float *top_cos /* IN/OUT */,
                                  size_t *ncand /* OUT */, size_t *ncpu /* OUT */);

/* Hits of one call sorted by (q, s), as la_cpu_simtile leaves them. */
void la_simtile_hits_sort(la_simtile_hit *v, size_t n);

#ifdef __cplusplus
}
#endif
#endif /* LA_SIMTILE_RESCORE_H */
