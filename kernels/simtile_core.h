/*
 * simtile_core.h - per-element math of the semantic similarity tiles, shared by the CPU loop
 * (simtile.c) and the CUDA kernel to come (simtile.cu).
 *
 * The fast paths (cblas_sgemm, cuBLAS, FAISS) compute cosines in fp32 with an order of operations
 * of their own, so two backends can disagree in the last bits. Every pair that is reported, and
 * every candidate within LA_SIMTILE_MARGIN of the threshold, is therefore re-scored here with one
 * fixed-order dot product. Each fp32 product is exact in double, so the double accumulation gives
 * the same bits whether or not a compiler contracts it into an FMA; the result is rounded to fp32.
 * That makes the reported pair set and the reported cosines identical across backends. The order:
 * component i goes into partial sum i mod 8, in increasing i, and the eight sums are added as a
 * fixed tree; eight independent chains run eight times faster than one on a CPU whose double add
 * takes several cycles, and a compiler may not reorder them (no -ffast-math in this project).
 *
 * Not for: the bulk of the work (that is a GEMM), or anything that needs memory allocation.
 */
#ifndef LA_SIMTILE_CORE_H
#define LA_SIMTILE_CORE_H

#include <stddef.h>
#include <stdint.h>

#include "la_hd.h"

/* Candidates with a fast-path cosine >= threshold - LA_SIMTILE_MARGIN are re-scored. fp32 GEMM
 * error on unit vectors of d <= 4096 is well below 1e-5; the margin leaves a factor of ten. */
#define LA_SIMTILE_MARGIN 1e-4f

/* "no neighbour" marker in the top-k index arrays */
#define LA_SIMTILE_NONE UINT32_MAX

/* Fixed-order dot product of two fp32 vectors (see the file comment). */
LA_HD static inline float la_simtile_dot(const float *a, const float *b, size_t d) {
    double p[8] = {0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0};
    size_t i = 0;
    for (; i + 8 <= d; i += 8)
        for (int j = 0; j < 8; j++) p[j] += (double)a[i + j] * (double)b[i + j];
    for (size_t j = 0; j < 8 && i + j < d; j++) p[j] += (double)a[i + j] * (double)b[i + j];
    return (float)(((p[0] + p[1]) + (p[2] + p[3])) + ((p[4] + p[5]) + (p[6] + p[7])));
}

/* The lowest fast-path value in a row of a tile that still needs a look: a pair candidate
 * (threshold - margin) or a top-k candidate (the current k-th best, re-scored, - margin). */
LA_HD static inline float la_simtile_floor(float threshold, const float *top_cos, uint32_t k) {
    float t = threshold;
    if (k > 0 && top_cos[k - 1] < t) t = top_cos[k - 1];
    return t - LA_SIMTILE_MARGIN;
}

/* Does (c, s) rank before (kc, ks)? Higher cosine first, then the lower index, so the order is
 * total and every backend keeps the same k. */
LA_HD static inline int la_simtile_before(float c, uint32_t s, float kc, uint32_t ks) {
    return c > kc || (c == kc && s < ks);
}

/* Insert (s, c) into a top-k list sorted best first (idx LA_SIMTILE_NONE, cos -inf when empty).
 * No-op when it does not rank before the current k-th entry. */
LA_HD static inline void la_simtile_topk_insert(uint32_t *idx, float *cos, uint32_t k, uint32_t s,
                                                float c) {
    if (k == 0 || !la_simtile_before(c, s, cos[k - 1], idx[k - 1])) return;
    uint32_t i = k - 1;
    while (i > 0 && la_simtile_before(c, s, cos[i - 1], idx[i - 1])) {
        cos[i] = cos[i - 1];
        idx[i] = idx[i - 1];
        i--;
    }
    cos[i] = c;
    idx[i] = s;
}

#endif /* LA_SIMTILE_CORE_H */
