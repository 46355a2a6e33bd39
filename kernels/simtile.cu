/*
 * simtile.cu - the CUDA loop of the semantic similarity tiles (see simtile_cuda.h for the contract,
 * simtile_core.h for the shared math, simtile_rescore.c for the host half).
 *
 * Per call: Q is converted once to the GEMM's input type and stays on the device, with its row
 * norms. The seen side S goes through in batches of block_s rows, alternating between two streams,
 * each with its own pinned staging buffer, device batch, tile, candidate buffer and top-k lists, so
 * that one batch uploads and converts while the other multiplies. For every tile of block_q held-out
 * rows, cuBLAS writes the tile (seen-major columns: one held-out row's scores are contiguous) and
 * tile_scan reads it once:
 *   - a pair is a candidate when its fast score is within the proven error bound of the threshold
 *     (margins below); candidates are compacted into the stream's buffer with one atomic per warp;
 *   - each held-out row's list of the L = k + LA_TOPK_SLACK best fast scores lives in device memory;
 *     one block per row merges the tile's contenders into it in shared memory (bitonic sort).
 * The host re-scores both (simtile_rescore.c). Nothing here aborts: every runtime and cuBLAS call
 * goes through LA_CU / LA_CUBLAS, and all device memory is released on every path.
 *
 * Error bounds of the fast scores, for vectors of norms qn, sn (unit round-off u = 2^-11 in fp16 and
 * TF32 inputs, 2^-24 in fp32; TF32 rounding is taken as truncation, 2u):
 *   fp16  inputs 2u + u^2, fp16 tile output u, fp32 accumulation (d + 4) 2^-23, all times qn sn,
 *         plus fp16 underflow sqrt(d) 2^-24 (qn + sn);
 *   tf32  inputs 4u, accumulation (d + 4) 2^-23, times qn sn;
 *   fp32  accumulation (d + 5) 2^-23, times qn sn;
 * each plus 2^-22 qn sn and 2^-20 for the rounding of the reference itself and of the comparison.
 */
#include <cuda_fp16.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cuda_check.cuh"
#include "simtile_core.h"
#include "simtile_cuda.h"
#include "simtile_rescore.h"

#define LA_TOPK_SLACK 32u
#define SCAN_THREADS 256
#define SCAN_VEC 8                              /* scores per thread per chunk (16 bytes of fp16) */
#define SCAN_CHUNK (SCAN_THREADS * SCAN_VEC)    /* scores per block per chunk */
#define SCAN_CAP 4096                           /* shared list entries; >= L + SCAN_CHUNK */
#define DEFAULT_BLOCK_Q 8192
#define DEFAULT_BLOCK_S 16384
#define PAIR_CAP0 (1u << 20)

/* ---- device code -------------------------------------------------------------------------- */

/* Reserve one slot per true predicate across the warp with a single atomic; returns this lane's
 * slot (meaningless when pred is false). Every lane of the warp must call it. */
template <typename C>
__device__ __forceinline__ C warp_reserve(bool pred, C *counter) {
    unsigned mask = __ballot_sync(0xffffffffu, pred);
    if (!mask) return 0;
    int lane = threadIdx.x & 31, leader = __ffs(mask) - 1;
    C base = 0;
    if (lane == leader) base = atomicAdd(counter, (C)__popc(mask));
    base = __shfl_sync(0xffffffffu, base, leader);
    return base + (C)__popc(mask & ((1u << lane) - 1u));
}

/* One warp per row: norm (times 1 + slack for its own rounding) and, for fp16, the converted row.
 * Sets *overflow when a component does not fit fp16. */
__global__ void rows_prepare(const float *X, size_t rows, int d, __half *Xh, float *norm,
                             float nscale, int *overflow) {
    size_t r = (size_t)blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32;
    int lane = threadIdx.x & 31;
    if (r >= rows) return;
    const float *x = X + r * (size_t)d;
    float ss = 0.f;
    int bad = 0;
    for (int t = lane; t < d; t += 32) {
        float v = x[t];
        ss = fmaf(v, v, ss);
        if (Xh) {
            bad |= fabsf(v) > 65504.f;
            Xh[r * (size_t)d + t] = __float2half_rn(v);
        }
    }
    for (int o = 16; o; o >>= 1) ss += __shfl_xor_sync(0xffffffffu, ss, o);
    bad = __any_sync(0xffffffffu, bad);
    if (lane == 0) {
        norm[r] = sqrtf(ss) * nscale;
        if (bad) *overflow = 1;
    }
}

__global__ void lists_fill(float *c, uint32_t *i, size_t n) {
    size_t t = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (t < n) {
        c[t] = -INFINITY;
        i[t] = LA_SIMTILE_NONE;
    }
}

__global__ void random_fill(__half *h, float *f, size_t n, uint64_t seed) {
    size_t t = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= n) return;
    uint64_t x = seed + t * 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    x ^= x >> 31;
    float v = ((float)(x >> 40) / 16777216.f - 0.5f) * 0.1f;
    if (h) h[t] = __float2half_rn(v);
    if (f) f[t] = v;
}

struct scan_args {
    int mq, ms;             /* tile: held-out rows, seen rows */
    size_t ldc;             /* elements between held-out rows in the tile (multiple of 8) */
    uint32_t q0, s0;        /* first held-out row of the tile (in Q), first seen row (in S) */
    const float *qnorm;     /* by row of Q */
    const float *snorm;     /* by row of the batch */
    float thr, rel, sub, abs0;
    uint32_t *pairs;        /* 2 * pair_cap: (q, s) */
    unsigned long long *npairs;
    size_t pair_cap;
    uint32_t L;             /* list length; 0: no top-k */
    float *list_c;          /* nq * L fast scores, best first */
    uint32_t *list_i;       /* nq * L rows of S */
};

__device__ __forceinline__ bool ranks_before(float c, uint32_t s, float kc, uint32_t ks) {
    return c > kc || (c == kc && s < ks);
}

/* Sort the first n entries of the shared list best first (n padded to a power of two). */
__device__ void block_sort(float *bc, uint32_t *bi, int n) {
    int m = 1;
    while (m < n) m <<= 1;
    for (int t = n + threadIdx.x; t < m; t += blockDim.x) {
        bc[t] = -INFINITY;
        bi[t] = LA_SIMTILE_NONE;
    }
    __syncthreads();
    for (int k = 2; k <= m; k <<= 1)
        for (int j = k >> 1; j > 0; j >>= 1) {
            for (int t = threadIdx.x; t < m; t += blockDim.x) {
                int u = t ^ j;
                if (u <= t) continue;
                bool up = (t & k) == 0;
                bool sw = up ? ranks_before(bc[u], bi[u], bc[t], bi[t])
                             : ranks_before(bc[t], bi[t], bc[u], bi[u]);
                if (sw) {
                    float c = bc[t];
                    bc[t] = bc[u];
                    bc[u] = c;
                    uint32_t i = bi[t];
                    bi[t] = bi[u];
                    bi[u] = i;
                }
            }
            __syncthreads();
        }
}

template <typename T> __device__ __forceinline__ void load8(const T *p, float v[8]);
template <> __device__ __forceinline__ void load8<__half>(const __half *p, float v[8]) {
    uint4 w = *(const uint4 *)p;
    const __half2 *h = (const __half2 *)&w;
    for (int i = 0; i < 4; i++) {
        float2 f = __half22float2(h[i]);
        v[2 * i] = f.x;
        v[2 * i + 1] = f.y;
    }
}
template <> __device__ __forceinline__ void load8<float>(const float *p, float v[8]) {
    float4 a = ((const float4 *)p)[0], b = ((const float4 *)p)[1];
    v[0] = a.x; v[1] = a.y; v[2] = a.z; v[3] = a.w;
    v[4] = b.x; v[5] = b.y; v[6] = b.z; v[7] = b.w;
}

/* One block per held-out row of the tile. */
template <typename T>
__global__ void __launch_bounds__(SCAN_THREADS) tile_scan(const T *C, scan_args a) {
    __shared__ float bc[SCAN_CAP];
    __shared__ uint32_t bi[SCAN_CAP];
    __shared__ int cnt;
    const int qi = blockIdx.x;
    const uint32_t q = a.q0 + (uint32_t)qi;
    const T *row = C + (size_t)qi * a.ldc;
    const float qn = a.qnorm[q];
    const int L = (int)a.L;
    float tau = -INFINITY;
    if (L) {
        for (int t = threadIdx.x; t < L; t += blockDim.x) {
            bc[t] = a.list_c[(size_t)q * L + t];
            bi[t] = a.list_i[(size_t)q * L + t];
        }
        if (threadIdx.x == 0) cnt = L;
        __syncthreads();
        tau = bc[L - 1];
    }
    for (int base = 0; base < a.ms; base += SCAN_CHUNK) {
        const int j0 = base + threadIdx.x * SCAN_VEC;
        float v[SCAN_VEC];
        if (j0 < a.ms) load8<T>(row + j0, v);
#pragma unroll
        for (int u = 0; u < SCAN_VEC; u++) {
            const int j = j0 + u;
            const bool in = j < a.ms;
            const float c = in ? v[u] : -INFINITY;
            bool pair = false;
            if (in) {
                float sn = a.snorm[j];
                pair = c >= a.thr - (a.rel * qn * sn + a.sub * (qn + sn) + a.abs0);
            }
            unsigned long long slot = warp_reserve<unsigned long long>(pair, a.npairs);
            if (pair && slot < a.pair_cap) {
                a.pairs[2 * slot] = q;
                a.pairs[2 * slot + 1] = a.s0 + (uint32_t)j;
            }
            if (L) {
                bool top = in && c >= tau;
                int pos = warp_reserve<int>(top, &cnt);
                if (top) {
                    bc[pos] = c;
                    bi[pos] = a.s0 + (uint32_t)j;
                }
            }
        }
        if (!L) continue;
        __syncthreads();
        int n = cnt;
        if (n > SCAN_CAP - SCAN_CHUNK) {
            block_sort(bc, bi, n);
            if (threadIdx.x == 0) cnt = L;
            __syncthreads();
            tau = bc[L - 1];
        }
        __syncthreads();
    }
    if (!L) return;
    __syncthreads();
    int n = cnt;
    if (n > L) block_sort(bc, bi, n);
    for (int t = threadIdx.x; t < L; t += blockDim.x) {
        a.list_c[(size_t)q * L + t] = bc[t];
        a.list_i[(size_t)q * L + t] = bi[t];
    }
}

/* ---- host side ---------------------------------------------------------------------------- */

namespace {

struct stream_ctx {
    cudaStream_t stream;
    cublasHandle_t blas;
    float *h_stage;             /* pinned: block_s * d floats */
    float *h_snorm;             /* pinned: block_s norms, for the largest seen norm */
    unsigned long long *h_np;   /* pinned: candidate count */
    float *d_S32;
    __half *d_S16;
    float *d_snorm;
    void *d_C;
    uint32_t *d_pairs;
    size_t pair_cap;
    unsigned long long *d_np;
    float *d_list_c;
    uint32_t *d_list_i;
    int busy;
    size_t batch;
};

struct ctx {
    /* inputs */
    const float *Q, *S;
    size_t nq, ns, d;
    uint32_t s_offset;
    la_simtile_params p;
    la_cuda_simtile_opts o;
    /* derived */
    size_t bq, bs, ldc, L;
    la_simtile_bound b;
    float nscale;
    float s_maxnorm;
    /* device */
    __half *d_Q16;
    float *d_Q32, *d_qnorm;
    int *d_overflow;
    stream_ctx sc[2];
    /* host results */
    la_simtile_hits hits;
    uint32_t *h_pairs;
    size_t h_pairs_cap;
    size_t pair_candidates, pair_retries;
};

size_t round_up(size_t x, size_t m) { return (x + m - 1) / m * m; }

la_simtile_bound make_bound(int precision, size_t d) {
    const double u16 = 1.0 / 2048.0, e23 = 1.0 / 8388608.0, e24 = e23 / 2;
    la_simtile_bound b;
    double rel, sub = 0.0;
    if (precision == LA_GEMM_FP16) {
        rel = 2 * u16 + u16 * u16 + u16 + (double)(d + 4) * e23;
        sub = sqrt((double)d) * e24 + e24;
    } else if (precision == LA_GEMM_TF32) {
        rel = 4 * u16 + 4 * u16 * u16 + (double)(d + 4) * e23;
    } else {
        rel = (double)(d + 5) * e23;
    }
    rel += 4 * e24;
    b.rel = (float)(rel * 1.0625);
    b.sub = (float)(sub * 1.0625);
    b.abs0 = (float)(1.0 / 1048576.0);
    return b;
}

size_t in_bytes(int precision) { return precision == LA_GEMM_FP16 ? 2 : 4; }

/* Device bytes the call needs at this tile shape. */
size_t need_bytes(const ctx *c, size_t bq, size_t bs) {
    size_t ib = in_bytes(c->o.precision), ob = ib;
    size_t ldc = round_up(bs, 8);
    size_t q = c->nq * c->d * ib + c->nq * 4 + (ib == 2 ? c->nq * c->d * 4 : 0);
    size_t lists = 2 * c->nq * c->L * 8;
    size_t per = bs * c->d * 4 + (ib == 2 ? bs * c->d * 2 : 0) + bs * 4 + bq * ldc * ob +
                 (size_t)PAIR_CAP0 * 8 + 64;
    return q + lists + 2 * per + ((size_t)96 << 20); /* cuBLAS workspaces and slack */
}

la_status fit_tiles(ctx *c) {
    size_t fr = 0, tot = 0;
    LA_CU(cudaMemGetInfo(&fr, &tot));
    size_t limit = c->o.mem_limit ? c->o.mem_limit : fr / 4 * 3;
    if (limit > fr) limit = fr;
    size_t bq = c->o.block_q ? c->o.block_q : DEFAULT_BLOCK_Q;
    size_t bs = c->o.block_s ? c->o.block_s : DEFAULT_BLOCK_S;
    if (bq > c->nq) bq = c->nq;
    if (bs > c->ns) bs = c->ns;
    while (need_bytes(c, bq, bs) > limit && (bq > 256 || bs > 256)) {
        if (bs >= bq && bs > 256)
            bs /= 2;
        else
            bq /= 2;
    }
    if (need_bytes(c, bq, bs) > limit)
        return la_error(LA_ECUDA, "simtile: %zu held-out rows of %zu dims need %zu MiB of device "
                        "memory, %zu MiB usable", c->nq, c->d, need_bytes(c, bq, bs) >> 20,
                        limit >> 20);
    c->bq = bq;
    c->bs = bs;
    c->ldc = round_up(bs, 8);
    return LA_OK;
}

la_status prepare_q(ctx *c) {
    const size_t nq = c->nq, d = c->d;
    LA_CU(cudaMalloc(&c->d_qnorm, nq * sizeof(float)));
    LA_CU(cudaMalloc(&c->d_overflow, sizeof(int)));
    LA_CU(cudaMemset(c->d_overflow, 0, sizeof(int)));
    LA_CU(cudaMalloc(&c->d_Q32, nq * d * sizeof(float)));
    LA_CU(cudaMemcpy(c->d_Q32, c->Q, nq * d * sizeof(float), cudaMemcpyHostToDevice));
    if (c->o.precision == LA_GEMM_FP16) LA_CU(cudaMalloc(&c->d_Q16, nq * d * sizeof(__half)));
    unsigned blocks = (unsigned)((nq + 7) / 8);
    rows_prepare<<<blocks, 256>>>(c->d_Q32, nq, (int)d, c->d_Q16, c->d_qnorm, c->nscale,
                                  c->d_overflow);
    LA_CU_LAUNCHED();
    if (c->d_Q16) {
        LA_CU(cudaDeviceSynchronize());
        la_cu_free(&c->d_Q32); /* fp16 path: only the converted copy stays */
    }
    return LA_OK;
}

la_status prepare_stream(ctx *c, stream_ctx *s) {
    const size_t bs = c->bs, d = c->d;
    size_t ob = in_bytes(c->o.precision);
    LA_CU(cudaStreamCreateWithFlags(&s->stream, cudaStreamNonBlocking));
    LA_CUBLAS(la_cublas_create(&s->blas));
    LA_CUBLAS(la_cublas_set_stream(s->blas, s->stream));
    LA_CU(cudaMallocHost(&s->h_stage, bs * d * sizeof(float)));
    LA_CU(cudaMallocHost(&s->h_snorm, bs * sizeof(float)));
    LA_CU(cudaMallocHost(&s->h_np, sizeof(unsigned long long)));
    LA_CU(cudaMalloc(&s->d_S32, bs * d * sizeof(float)));
    if (c->o.precision == LA_GEMM_FP16) LA_CU(cudaMalloc(&s->d_S16, bs * d * sizeof(__half)));
    LA_CU(cudaMalloc(&s->d_snorm, bs * sizeof(float)));
    LA_CU(cudaMalloc(&s->d_C, c->bq * c->ldc * ob));
    s->pair_cap = PAIR_CAP0;
    LA_CU(cudaMalloc(&s->d_pairs, s->pair_cap * 2 * sizeof(uint32_t)));
    LA_CU(cudaMalloc(&s->d_np, sizeof(unsigned long long)));
    if (c->L) {
        size_t n = c->nq * c->L;
        LA_CU(cudaMalloc(&s->d_list_c, n * sizeof(float)));
        LA_CU(cudaMalloc(&s->d_list_i, n * sizeof(uint32_t)));
        lists_fill<<<(unsigned)((n + 255) / 256), 256, 0, s->stream>>>(s->d_list_c, s->d_list_i, n);
        LA_CU_LAUNCHED();
    }
    return LA_OK;
}

void release_stream(stream_ctx *s) {
    if (s->stream) cudaStreamSynchronize(s->stream);
    if (s->blas) la_cublas_destroy(s->blas);
    if (s->stream) cudaStreamDestroy(s->stream);
    la_cu_free_host(&s->h_stage);
    la_cu_free_host(&s->h_snorm);
    la_cu_free_host(&s->h_np);
    la_cu_free(&s->d_S32);
    la_cu_free(&s->d_S16);
    la_cu_free(&s->d_snorm);
    la_cu_free(&s->d_C);
    la_cu_free(&s->d_pairs);
    la_cu_free(&s->d_np);
    la_cu_free(&s->d_list_c);
    la_cu_free(&s->d_list_i);
    memset(s, 0, sizeof *s);
}

void release(ctx *c) {
    for (int i = 0; i < 2; i++) release_stream(&c->sc[i]);
    la_cu_free(&c->d_Q16);
    la_cu_free(&c->d_Q32);
    la_cu_free(&c->d_qnorm);
    la_cu_free(&c->d_overflow);
    cudaGetLastError();
    free(c->h_pairs);
    la_simtile_hits_free(&c->hits);
}

/* One GEMM into the stream's tile: C (seen-major, ldc) = S_batch (rows x d) * Q[q0..q0+mq)^T. */
la_status tile_gemm(const ctx *c, const stream_ctx *s, size_t rows, size_t q0, size_t mq) {
    const float one = 1.0f, zero = 0.0f;
    const int m = (int)rows, n = (int)mq, k = (int)c->d, ld = (int)c->d;
    if (c->o.precision == LA_GEMM_FP16) {
        LA_CUBLAS(la_cublas_gemm_ex(s->blas, CUBLAS_OP_T, CUBLAS_OP_N, m, n, k, &one, s->d_S16, CUDA_R_16F,
                               ld, c->d_Q16 + q0 * c->d, CUDA_R_16F, ld, &zero, s->d_C, CUDA_R_16F,
                               (int)c->ldc, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
    } else {
        cublasComputeType_t ct = c->o.precision == LA_GEMM_TF32 ? CUBLAS_COMPUTE_32F_FAST_TF32
                                                                 : CUBLAS_COMPUTE_32F;
        LA_CUBLAS(la_cublas_gemm_ex(s->blas, CUBLAS_OP_T, CUBLAS_OP_N, m, n, k, &one, s->d_S32, CUDA_R_32F,
                               ld, c->d_Q32 + q0 * c->d, CUDA_R_32F, ld, &zero, s->d_C, CUDA_R_32F,
                               (int)c->ldc, ct, CUBLAS_GEMM_DEFAULT));
    }
    return LA_OK;
}

/* GEMM and scan every held-out tile against the batch resident in s. update_top 0 re-runs a
 * batch for its pairs only (after the candidate buffer overflowed). */
la_status batch_tiles(ctx *c, stream_ctx *s, size_t rows, int update_top) {
    LA_CU(cudaMemsetAsync(s->d_np, 0, sizeof *s->d_np, s->stream));
    for (size_t q0 = 0; q0 < c->nq; q0 += c->bq) {
        size_t mq = c->nq - q0 < c->bq ? c->nq - q0 : c->bq;
        LA_TRY(tile_gemm(c, s, rows, q0, mq));
        scan_args a;
        a.mq = (int)mq;
        a.ms = (int)rows;
        a.ldc = c->ldc;
        a.q0 = (uint32_t)q0;
        a.s0 = (uint32_t)(s->batch * c->bs);
        a.qnorm = c->d_qnorm;
        a.snorm = s->d_snorm;
        a.thr = c->p.threshold;
        a.rel = c->b.rel;
        a.sub = c->b.sub;
        a.abs0 = c->b.abs0;
        a.pairs = s->d_pairs;
        a.npairs = s->d_np;
        a.pair_cap = s->pair_cap;
        a.L = update_top ? (uint32_t)c->L : 0;
        a.list_c = s->d_list_c;
        a.list_i = s->d_list_i;
        if (c->o.precision == LA_GEMM_FP16)
            tile_scan<__half><<<(unsigned)mq, SCAN_THREADS, 0, s->stream>>>((const __half *)s->d_C, a);
        else
            tile_scan<float><<<(unsigned)mq, SCAN_THREADS, 0, s->stream>>>((const float *)s->d_C, a);
        LA_CU_LAUNCHED();
    }
    LA_CU(cudaMemcpyAsync(s->h_np, s->d_np, sizeof *s->d_np, cudaMemcpyDeviceToHost, s->stream));
    return LA_OK;
}

la_status enqueue_batch(ctx *c, stream_ctx *s, size_t batch) {
    const size_t d = c->d, s0 = batch * c->bs;
    const size_t rows = c->ns - s0 < c->bs ? c->ns - s0 : c->bs;
    s->batch = batch;
    s->busy = 1;
    memcpy(s->h_stage, c->S + s0 * d, rows * d * sizeof(float));
    LA_CU(cudaMemcpyAsync(s->d_S32, s->h_stage, rows * d * sizeof(float), cudaMemcpyHostToDevice,
                          s->stream));
    rows_prepare<<<(unsigned)((rows + 7) / 8), 256, 0, s->stream>>>(s->d_S32, rows, (int)d, s->d_S16,
                                                                    s->d_snorm, c->nscale,
                                                                    c->d_overflow);
    LA_CU_LAUNCHED();
    LA_CU(cudaMemcpyAsync(s->h_snorm, s->d_snorm, rows * sizeof(float), cudaMemcpyDeviceToHost,
                          s->stream));
    return batch_tiles(c, s, rows, 1);
}

/* Wait for the stream's batch, bring its pair candidates back and re-score them. */
la_status finish_batch(ctx *c, stream_ctx *s) {
    if (!s->busy) return LA_OK;
    const size_t s0 = s->batch * c->bs;
    const size_t rows = c->ns - s0 < c->bs ? c->ns - s0 : c->bs;
    LA_CU(cudaStreamSynchronize(s->stream));
    for (size_t j = 0; j < rows; j++)
        if (s->h_snorm[j] > c->s_maxnorm) c->s_maxnorm = s->h_snorm[j];
    size_t n = (size_t)*s->h_np;
    if (n > s->pair_cap) {
        /* Too many candidates for the buffer: grow it and run this batch again, pairs only. */
        la_cu_free(&s->d_pairs);
        s->pair_cap = n + n / 4;
        LA_CU(cudaMalloc(&s->d_pairs, s->pair_cap * 2 * sizeof(uint32_t)));
        c->pair_retries++;
        LA_TRY(batch_tiles(c, s, rows, 0));
        LA_CU(cudaStreamSynchronize(s->stream));
        n = (size_t)*s->h_np;
        if (n > s->pair_cap) return la_error(LA_EINTERNAL, "simtile: candidate count changed on re-run");
    }
    if (n) {
        if (c->h_pairs_cap < n) {
            uint32_t *v = (uint32_t *)realloc(c->h_pairs, n * 2 * sizeof *v);
            if (!v) return la_error(LA_ENOMEM, "simtile: out of memory for %zu candidates", n);
            c->h_pairs = v;
            c->h_pairs_cap = n;
        }
        LA_CU(cudaMemcpy(c->h_pairs, s->d_pairs, n * 2 * sizeof(uint32_t), cudaMemcpyDeviceToHost));
        LA_TRY(la_simtile_rescore_pairs(c->Q, c->S, c->d, c->s_offset, c->p.threshold, c->h_pairs,
                                        n, c->p.threads, &c->hits));
        c->pair_candidates += n;
    }
    s->busy = 0;
    return LA_OK;
}

la_status run(ctx *c, la_simtile_hits *hits, uint32_t *top_idx, float *top_cos,
              la_simtile_stats *stats, la_cuda_simtile_stats *cs) {
    LA_TRY(la_cu_use_device(c->o.device));
    LA_TRY(fit_tiles(c));
    LA_TRY(prepare_q(c));
    for (int i = 0; i < 2; i++) LA_TRY(prepare_stream(c, &c->sc[i]));
    LA_CU(cudaDeviceSynchronize());

    size_t nbatch = (c->ns + c->bs - 1) / c->bs;
    for (size_t b = 0; b < nbatch; b++) {
        stream_ctx *s = &c->sc[b & 1];
        LA_TRY(finish_batch(c, s));
        LA_TRY(enqueue_batch(c, s, b));
    }
    for (int i = 0; i < 2; i++) LA_TRY(finish_batch(c, &c->sc[i]));
    int overflow = 0;
    LA_CU(cudaMemcpy(&overflow, c->d_overflow, sizeof overflow, cudaMemcpyDeviceToHost));
    if (overflow)
        return la_error(LA_EINVAL, "simtile: a vector component exceeds the fp16 range; "
                        "use fp32 or TF32, or normalize the vectors");

    /* Room for the pairs first, so that nothing can fail once the top-k lists have changed. */
    la_simtile_hits_sort(c->hits.v, c->hits.n);
    if (c->hits.n && hits->cap < hits->n + c->hits.n) {
        la_simtile_hit *v = (la_simtile_hit *)realloc(hits->v, (hits->n + c->hits.n) * sizeof *v);
        if (!v) return la_error(LA_ENOMEM, "simtile: out of memory for %zu pairs", c->hits.n);
        hits->v = v;
        hits->cap = hits->n + c->hits.n;
    }
    size_t ncand = 0, ncpu = 0;
    if (c->L) {
        size_t n = c->nq * c->L;
        float *lc[2] = {NULL, NULL};
        uint32_t *li[2] = {NULL, NULL};
        la_status st = LA_OK;
        for (int i = 0; i < 2 && st == LA_OK; i++) {
            lc[i] = (float *)malloc(n * sizeof(float));
            li[i] = (uint32_t *)malloc(n * sizeof(uint32_t));
            if (!lc[i] || !li[i]) {
                st = la_error(LA_ENOMEM, "simtile: out of memory for the top-k lists");
                break;
            }
            cudaError_t e1 = cudaMemcpy(lc[i], c->sc[i].d_list_c, n * sizeof(float), cudaMemcpyDeviceToHost);
            cudaError_t e2 = cudaMemcpy(li[i], c->sc[i].d_list_i, n * sizeof(uint32_t), cudaMemcpyDeviceToHost);
            if (e1 != cudaSuccess || e2 != cudaSuccess)
                st = la_error(LA_ECUDA, "%s:%d: cudaMemcpy(top-k lists): %s", __FILE__, __LINE__,
                              cudaGetErrorString(e1 != cudaSuccess ? e1 : e2));
        }
        if (st == LA_OK)
            st = la_simtile_rescore_topk(c->Q, c->nq, c->S, c->ns, c->d, c->s_offset, &c->p,
                                         (const float *const *)lc, (const uint32_t *const *)li, 2,
                                         (uint32_t)c->L, c->s_maxnorm, c->b, top_idx, top_cos,
                                         &ncand, &ncpu);
        for (int i = 0; i < 2; i++) {
            free(lc[i]);
            free(li[i]);
        }
        LA_TRY(st);
    }

    /* Success from here on: hand the pairs over. */
    if (c->hits.n) {
        memcpy(hits->v + hits->n, c->hits.v, c->hits.n * sizeof *hits->v);
        hits->n += c->hits.n;
    }
    if (stats) {
        stats->gemm_flops += 2.0 * (double)c->nq * (double)c->ns * (double)c->d;
        stats->rescored += c->pair_candidates;
    }
    if (cs) {
        cs->gemm_flops += 2.0 * (double)c->nq * (double)c->ns * (double)c->d;
        cs->pair_candidates += c->pair_candidates;
        cs->topk_candidates += ncand;
        cs->cpu_rows += ncpu;
        cs->pair_retries += c->pair_retries;
        cs->block_q = c->bq;
        cs->block_s = c->bs;
    }
    return LA_OK;
}

double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

} /* namespace */

extern "C" void la_cuda_simtile_opts_default(la_cuda_simtile_opts *o) {
    o->device = 0;
    o->precision = LA_GEMM_FP16;
    o->block_q = 0;
    o->block_s = 0;
    o->mem_limit = 0;
}

extern "C" la_status la_cuda_simtile(const float *Q, size_t nq, const float *S, size_t ns, size_t d,
                                     uint32_t s_offset, const la_simtile_params *p,
                                     const la_cuda_simtile_opts *o, la_simtile_hits *hits,
                                     uint32_t *top_idx, float *top_cos, la_simtile_stats *stats,
                                     la_cuda_simtile_stats *cstats) {
    if (!p || !hits || d == 0 || d > INT32_MAX || (p->topk && (!top_idx || !top_cos)))
        return la_error(LA_EINVAL, "simtile: bad arguments");
    if ((uint64_t)s_offset + ns > UINT32_MAX)
        return la_error(LA_EINVAL, "simtile: seen row index past 2^32");
    if (nq > INT32_MAX) return la_error(LA_EINVAL, "simtile: more than 2^31 held-out rows");
    if (nq == 0 || ns == 0) return LA_OK;
    if (!isfinite(p->threshold)) return la_error(LA_EINVAL, "simtile: threshold must be finite");
    if (p->topk > LA_CUDA_SIMTILE_MAX_TOPK)
        return la_error(LA_EUNSUPPORTED, "simtile: the device keeps at most %d neighbours per row, "
                        "asked for %u", LA_CUDA_SIMTILE_MAX_TOPK, p->topk);
    ctx c;
    memset(&c, 0, sizeof c);
    c.Q = Q;
    c.S = S;
    c.nq = nq;
    c.ns = ns;
    c.d = d;
    c.s_offset = s_offset;
    c.p = *p;
    if (o)
        c.o = *o;
    else
        la_cuda_simtile_opts_default(&c.o);
    if (c.o.precision < LA_GEMM_FP16 || c.o.precision > LA_GEMM_FP32)
        return la_error(LA_EINVAL, "simtile: unknown GEMM precision %d", c.o.precision);
    c.L = p->topk ? p->topk + LA_TOPK_SLACK : 0;
    c.b = make_bound(c.o.precision, d);
    c.nscale = (float)(1.0 + (double)(d + 8) / 8388608.0);
    double t0 = now_s();
    la_status st = run(&c, hits, top_idx, top_cos, stats, cstats);
    release(&c);
    if (st == LA_OK && cstats) cstats->seconds += now_s() - t0;
    return st;
}

extern "C" la_status la_cuda_gemm_reference(size_t m, size_t n, size_t d, int precision,
                                            int out_fp32, int reps, int device, double *tflops) {
    *tflops = 0;
    struct ref {
        void *A = nullptr, *B = nullptr, *C = nullptr;
        cublasHandle_t h = nullptr;
        cudaEvent_t e0 = nullptr, e1 = nullptr;
        ~ref() {
            if (h) la_cublas_destroy(h);
            if (e0) cudaEventDestroy(e0);
            if (e1) cudaEventDestroy(e1);
            la_cu_free(&A);
            la_cu_free(&B);
            la_cu_free(&C);
            cudaGetLastError();
        }
    } r;
    LA_TRY(la_cu_use_device(device));
    const int fp16 = precision == LA_GEMM_FP16;
    const size_t ib = fp16 ? 2 : 4, ob = fp16 && !out_fp32 ? 2 : 4;
    const size_t ldc = round_up(m, 8);
    LA_CU(cudaMalloc(&r.A, m * d * ib));
    LA_CU(cudaMalloc(&r.B, n * d * ib));
    LA_CU(cudaMalloc(&r.C, ldc * n * ob));
    random_fill<<<(unsigned)((m * d + 255) / 256), 256>>>(fp16 ? (__half *)r.A : nullptr,
                                                          fp16 ? nullptr : (float *)r.A, m * d, 1);
    LA_CU_LAUNCHED();
    random_fill<<<(unsigned)((n * d + 255) / 256), 256>>>(fp16 ? (__half *)r.B : nullptr,
                                                          fp16 ? nullptr : (float *)r.B, n * d, 2);
    LA_CU_LAUNCHED();
    LA_CUBLAS(la_cublas_create(&r.h));
    LA_CU(cudaEventCreate(&r.e0));
    LA_CU(cudaEventCreate(&r.e1));
    const float one = 1.0f, zero = 0.0f;
    cudaDataType_t it = fp16 ? CUDA_R_16F : CUDA_R_32F, ot = ob == 2 ? CUDA_R_16F : CUDA_R_32F;
    cublasComputeType_t ct = precision == LA_GEMM_TF32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
    for (int i = 0; i <= reps; i++) {
        if (i == 1) LA_CU(cudaEventRecord(r.e0));
        LA_CUBLAS(la_cublas_gemm_ex(r.h, CUBLAS_OP_T, CUBLAS_OP_N, (int)m, (int)n, (int)d, &one, r.A, it,
                               (int)d, r.B, it, (int)d, &zero, r.C, ot, (int)ldc, ct,
                               CUBLAS_GEMM_DEFAULT));
    }
    LA_CU(cudaEventRecord(r.e1));
    LA_CU(cudaEventSynchronize(r.e1));
    float ms = 0;
    LA_CU(cudaEventElapsedTime(&ms, r.e0, r.e1));
    if (ms > 0) *tflops = 2.0 * (double)m * (double)n * (double)d * reps / (ms * 1e-3) / 1e12;
    return LA_OK;
}
