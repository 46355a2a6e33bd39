/*
 * simtile_cuda.h - the CUDA twin of la_cpu_simtile (simtile.h): the same join of held-out vectors Q
 * against seen vectors S, with the same pair set, the same cosines and the same top-k lists.
 *
 * How: Q is held on the device whole; S streams through in batches on two CUDA streams (double
 * buffered: batch i+1 uploads while batch i multiplies). Each tile of Q x S^T is one cuBLAS GEMM
 * (fp16 inputs with fp32 accumulation by default; TF32 or plain fp32 selectable), followed by one
 * fused kernel that reads the tile once and (a) compacts every pair whose fast cosine is within a
 * proven error bound of the threshold, (b) keeps each held-out row's best candidates. The host then
 * re-scores every candidate with la_simtile_dot (simtile_core.h), the fixed-order product the CPU
 * uses, so reported pairs and cosines are bit-identical to la_cpu_simtile. The full nq x ns matrix
 * never exists: device memory is Q, two seen batches and two tiles, sized from cudaMemGetInfo.
 *
 * No CUDA header is included here. Without CUDA compiled in, la_cuda_simtile returns
 * LA_EUNSUPPORTED (simtile_cuda_stub.c). No managed memory is used.
 */
#ifndef LA_SIMTILE_CUDA_H
#define LA_SIMTILE_CUDA_H

#include <stddef.h>
#include <stdint.h>

#include "leakaudit.h"
#include "simtile.h"

#ifdef __cplusplus
extern "C" {
#endif

/* GEMM precision of the fast path. Reported results do not depend on it (every candidate is
 * re-scored); speed and the number of candidates re-scored do. */
typedef enum la_gemm_precision {
    LA_GEMM_FP16 = 0, /* fp16 inputs, fp32 accumulation, fp16 tile (default: fastest) */
    LA_GEMM_TF32 = 1, /* fp32 inputs on TF32 tensor cores, fp32 tile */
    LA_GEMM_FP32 = 2  /* plain fp32 (no tensor cores), fp32 tile */
} la_gemm_precision;

/* Largest top-k the device keeps per held-out row; la_cuda_simtile returns LA_EUNSUPPORTED above. */
#define LA_CUDA_SIMTILE_MAX_TOPK 256

typedef struct la_cuda_simtile_opts {
    int device;           /* CUDA device index (default 0) */
    int precision;        /* la_gemm_precision (default LA_GEMM_FP16) */
    size_t block_q;       /* held-out rows per GEMM tile; 0 = default (4096) */
    size_t block_s;       /* seen rows per batch and tile; 0 = default (16384) */
    size_t mem_limit;     /* device bytes to use at most; 0 = 3/4 of cudaMemGetInfo's free memory */
} la_cuda_simtile_opts;

/* What the device run did, beyond la_simtile_stats. All fields accumulate over calls. */
typedef struct la_cuda_simtile_stats {
    double gemm_flops;     /* 2 * nq * ns * d */
    double seconds;        /* wall time inside la_cuda_simtile */
    double gemm_ms;        /* device time of the GEMMs alone (CUDA events), 0 unless opts asked */
    size_t pair_candidates;/* pairs re-scored on the host */
    size_t topk_candidates;/* top-k candidates re-scored on the host */
    size_t cpu_rows;       /* held-out rows whose top-k the device could not settle (near-ties past
                              its list), recomputed by la_cpu_simtile */
    size_t pair_retries;   /* batches re-run because the candidate buffer was too small */
    size_t block_q, block_s; /* the tile shape used (after fitting into memory) */
} la_cuda_simtile_stats;

void la_cuda_simtile_opts_default(la_cuda_simtile_opts *o);

/*
 * Same contract as la_cpu_simtile (simtile.h): join Q (nq x d) against S (ns x d), whose first row
 * has global index s_offset; append pairs with cosine >= p->threshold to hits sorted by (q, s)
 * within this call; update the top-k lists (best first, initialized by la_simtile_top_init);
 * accumulate stats. p->threads is used only for the host-side re-scoring fallback (la_cpu_simtile on
 * unsettled rows). o and cstats may be NULL (defaults; no device stats).
 *
 * Q and S are host memory, borrowed for the call. Vectors must be finite; fp16 needs every
 * component within +-65504 (unit vectors always are), else LA_EINVAL.
 *
 * Returns LA_OK; LA_EINVAL (bad sizes); LA_EUNSUPPORTED (no CUDA in this build, or topk >
 * LA_CUDA_SIMTILE_MAX_TOPK); LA_ENODEV (no device); LA_ECUDA (any CUDA or cuBLAS failure, including
 * out of device memory, with the call and the runtime's message in la_last_error); LA_ENOMEM (host).
 * On any failure hits, top_idx and top_cos are left exactly as they were on entry, so the caller
 * can run la_cpu_simtile on the same arguments instead. Not thread safe with itself on one device
 * (it sizes its batches from the free memory).
 */
la_status la_cuda_simtile(const float *Q, size_t nq, const float *S, size_t ns, size_t d,
                          uint32_t s_offset, const la_simtile_params *p,
                          const la_cuda_simtile_opts *o,
                          la_simtile_hits *hits /* OUT: appended */,
                          uint32_t *top_idx /* IN/OUT */, float *top_cos /* IN/OUT */,
                          la_simtile_stats *stats /* IN/OUT */,
                          la_cuda_simtile_stats *cstats /* IN/OUT */);

/*
 * Plain cuBLAS GEMM at the shape and precision la_cuda_simtile uses for its tiles, for the
 * benchmark's reference: C (m x n) = A (m x d) * B (n x d)^T on device buffers it allocates and
 * fills itself, repeated `reps` times after one warm-up. *tflops receives the measured rate.
 * out_fp32: write the tile in fp32 even for LA_GEMM_FP16. LA_EUNSUPPORTED without CUDA.
 */
la_status la_cuda_gemm_reference(size_t m, size_t n, size_t d, int precision, int out_fp32,
                                 int reps, int device, double *tflops /* OUT */);

#ifdef __cplusplus
}
#endif
#endif /* LA_SIMTILE_CUDA_H */
