/*
 * simtile.h - exact cosine similarity join by blocked GEMM with fused thresholding and top-k.
 *
 * Given held-out vectors Q (nq x d) and a batch of seen vectors S (ns x d), both row-major and
 * L2-normalized, la_cpu_simtile computes Q * S^T tile by tile (cblas_sgemm on OpenBLAS, or int8
 * products with an error bound where the CPU has AVX-512 VNNI or AVX2: simtile_i8.h), and while
 * each tile is still in cache keeps (a) every pair with cosine >= threshold and (b) for every
 * held-out row its k nearest seen rows. It never holds the nq x ns matrix: memory is one tile per
 * thread. It is the CPU twin of the GPU tile kernel (simtile.cu, same math in simtile_core.h).
 *
 * The seen side may arrive in batches: call once per batch with its offset; the top-k lists carry
 * across calls. Candidates near the threshold and all reported cosines are re-scored with the
 * fixed-order dot product of simtile_core.h, so every backend reports the same pair set.
 *
 * Not for: building or querying an index (index/semantic.c decides which path runs).
 */
#ifndef LA_SIMTILE_H
#define LA_SIMTILE_H

#include <stddef.h>
#include <stdint.h>

#include "leakaudit.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Seen rows per tile by default. A seen side given in batches of a multiple of it is cut into the
 * same tiles as in one call, so the CPU computes the same products and keeps the same lists. */
#define LA_SIMTILE_BLOCK_S 2048

typedef struct la_simtile_params {
    float threshold;  /* keep pairs with cosine >= threshold */
    uint32_t topk;    /* nearest seen rows kept per held-out row; 0 for none */
    int threads;      /* OpenMP threads; 0 = the OpenMP default */
    size_t block_q;   /* held-out rows per tile; 0 = default */
    size_t block_s;   /* seen rows per tile; 0 = default */
} la_simtile_params;

/* One pair above the threshold: q indexes Q, s is the seen row's global index (offset added). */
typedef struct la_simtile_hit {
    uint32_t q, s;
    float cosine;
} la_simtile_hit;

/* A growable array of hits; zero-initialize, release with la_simtile_hits_free. */
typedef struct la_simtile_hits {
    la_simtile_hit *v;
    size_t n, cap;
} la_simtile_hits;

typedef struct la_simtile_stats {
    double gemm_flops;     /* 2 * nq * ns * d, accumulated over calls */
    size_t rescored;       /* candidates within the margin of the threshold that were re-scored */
} la_simtile_stats;

void la_simtile_params_default(la_simtile_params *p);
void la_simtile_hits_free(la_simtile_hits *h);
/* Append one hit; 0, or -1 when out of memory. */
int la_simtile_hits_push(la_simtile_hits *h, uint32_t q, uint32_t s, float c);

/* Prepare top-k lists for nq held-out rows: idx = LA_SIMTILE_NONE, cos = -inf. */
void la_simtile_top_init(uint32_t *top_idx, float *top_cos, size_t nq, uint32_t k);

/*
 * Join Q (nq x d) against one batch S (ns x d) whose first row has global index s_offset.
 *   hits: pairs with cosine >= threshold are appended, sorted by (q, s) within this call.
 *   top_idx, top_cos: nq * p->topk entries, best first per row, updated in place (may be NULL when
 *   topk is 0). Initialize once with la_simtile_top_init before the first batch.
 *   stats: accumulated; may be NULL.
 * Vectors must be finite; unit length is what makes the scores cosines. Thread safety: the
 * function uses p->threads OpenMP threads itself; distinct calls on distinct outputs may run
 * concurrently. Returns LA_EINVAL for bad sizes, LA_ENOMEM.
 */
la_status la_cpu_simtile(const float *Q, size_t nq, const float *S, size_t ns, size_t d,
                         uint32_t s_offset, const la_simtile_params *p,
                         la_simtile_hits *hits /* OUT: appended */,
                         uint32_t *top_idx /* IN/OUT */, float *top_cos /* IN/OUT */,
                         la_simtile_stats *stats /* IN/OUT */);

#ifdef __cplusplus
}
#endif
#endif /* LA_SIMTILE_H */
