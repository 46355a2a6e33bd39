/*
 * minhash.cu - the CUDA loops of MinHash signatures and LSH band keys, and of shingling fused with
 * MinHash (see near_cuda.h for the contract; the math is minhash_core.h and shingle_core.h, the very
 * functions minhash.c and shingle.c call).
 *
 * Kernels: shingle_docs (one thread per document, the loop of shingle.cuh), minhash_docs (one block
 * of 128 threads per document: each thread owns k/128 signature slots, the document's hashes pass
 * through shared memory 128 at a time, each reduced to its 32-bit key by the thread that loads it, so
 * every load is coalesced and every hash is read from global memory and keyed once), band_keys (one
 * thread per document and band). The host side is one chunked pipeline (near_pipeline.cuh) shared
 * with simhash.cu.
 */
#include "near_pipeline.cuh"
#include "minhash_core.h"
#include "shingle.cuh"

#define MH_THREADS 128

__global__ void shingle_docs(const unsigned char *text, const uint64_t *off, uint64_t base,
                             size_t ndocs, int kind, int n, uint64_t *hash, uint32_t *cnt) {
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= ndocs) return;
    size_t b = off[i] - base, e = off[i + 1] - base;
    /* room for la_shingle_bound(len) = len + 1 hashes per document */
    cnt[i] = (uint32_t)la_dev_shingle(text + b, e - b, kind, n, hash + b + i);
}

/* R = slots per thread (k <= R * MH_THREADS): a compile-time count keeps the minima in registers. */
template <int R>
__global__ void __launch_bounds__(MH_THREADS)
    minhash_docs(const uint64_t *h, const uint64_t *off, uint64_t base, int plus_index,
                 const uint32_t *cnt, size_t ndocs, int k, uint32_t *sig) {
    __shared__ uint32_t tile[MH_THREADS]; /* la_minhash_key of 128 shingle hashes, each computed once */
    const int tid = threadIdx.x;
    uint32_t a[R], b[R];
#pragma unroll
    for (int r = 0; r < R; r++) {
        int j = tid + r * MH_THREADS;
        a[r] = b[r] = 0;
        if (j < k) la_minhash_param((uint32_t)j, &a[r], &b[r]);
    }
    for (size_t doc = blockIdx.x; doc < ndocs; doc += gridDim.x) {
        size_t start = off[doc] - base + (plus_index ? doc : 0);
        size_t n = cnt ? cnt[doc] : off[doc + 1] - off[doc];
        uint32_t m[R];
#pragma unroll
        for (int r = 0; r < R; r++) m[r] = UINT32_MAX;
        for (size_t t0 = 0; t0 < n; t0 += MH_THREADS) {
            __syncthreads();
            if (t0 + tid < n) tile[tid] = la_minhash_key(h[start + t0 + tid]);
            __syncthreads();
            int tn = n - t0 < MH_THREADS ? (int)(n - t0) : MH_THREADS;
            for (int t = 0; t < tn; t++) {
                uint32_t x = tile[t];
#pragma unroll
                for (int r = 0; r < R; r++) m[r] = la_minhash_min(m[r], la_minhash_perm(x, a[r], b[r]));
            }
        }
#pragma unroll
        for (int r = 0; r < R; r++) {
            int j = tid + r * MH_THREADS;
            if (j < k) sig[doc * (size_t)k + j] = m[r];
        }
    }
}

__global__ void band_keys(const uint32_t *sig, size_t ndocs, int k, int bands, int rows,
                          uint64_t *keys) {
    size_t t = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= ndocs * (size_t)bands) return;
    size_t doc = t / bands;
    int j = (int)(t % bands);
    keys[t] = la_band_key((uint32_t)j, sig + doc * k + (size_t)j * rows, rows);
}

/* The pipeline's per-chunk kernels for MinHash (from text or from hashes). */
static la_status minhash_chunk(const la_near_job *job, la_near_stream *s, size_t nd, uint64_t base) {
    const size_t grid_docs = nd < 65535u * 16u ? nd : 65535u * 16u;
    const uint64_t *h = s->d_hash;
    int plus = 0;
    const uint32_t *cnt = NULL;
    if (job->mode == LA_NEAR_TEXT) {
        shingle_docs<<<(unsigned)((nd + 127) / 128), 128, 0, s->stream>>>(
            (const unsigned char *)s->d_in, s->d_off, base, nd, job->kind, job->n, s->d_hash,
            s->d_cnt);
        LA_CU_LAUNCHED();
        plus = 1;
        cnt = s->d_cnt;
    } else {
        h = (const uint64_t *)s->d_in;
    }
    const int k = job->k;
    unsigned g = (unsigned)grid_docs;
    if (k <= MH_THREADS)
        minhash_docs<1><<<g, MH_THREADS, 0, s->stream>>>(h, s->d_off, base, plus, cnt, nd, k, s->d_sig);
    else if (k <= 2 * MH_THREADS)
        minhash_docs<2><<<g, MH_THREADS, 0, s->stream>>>(h, s->d_off, base, plus, cnt, nd, k, s->d_sig);
    else if (k <= 4 * MH_THREADS)
        minhash_docs<4><<<g, MH_THREADS, 0, s->stream>>>(h, s->d_off, base, plus, cnt, nd, k, s->d_sig);
    else
        minhash_docs<8><<<g, MH_THREADS, 0, s->stream>>>(h, s->d_off, base, plus, cnt, nd, k, s->d_sig);
    LA_CU_LAUNCHED();
    if (job->keys) {
        size_t nt = nd * (size_t)job->bands;
        band_keys<<<(unsigned)((nt + 255) / 256), 256, 0, s->stream>>>(s->d_sig, nd, k, job->bands,
                                                                      job->rows, s->d_keys);
        LA_CU_LAUNCHED();
    }
    return LA_OK;
}

static la_status check_k(int k, int bands, int rows, const uint64_t *keys) {
    if (k < 1 || k > LA_MINHASH_MAX_PERM)
        return la_error(LA_EINVAL, "minhash: k %d: expected 1..%d", k, LA_MINHASH_MAX_PERM);
    if (keys && (bands < 1 || rows < 1 || (long)bands * rows > k))
        return la_error(LA_EINVAL, "minhash: %d bands of %d rows do not fit %d slots", bands, rows, k);
    return LA_OK;
}

extern "C" la_status la_cuda_minhash(const uint64_t *h, const uint64_t *off, size_t ndocs, int k,
                                     int bands, int rows, const la_cuda_near_opts *o,
                                     uint32_t *sig, uint64_t *keys, la_cuda_near_stats *st) {
    LA_TRY(check_k(k, bands, rows, keys));
    la_near_job job;
    la_near_job_init(&job, LA_NEAR_HASHES, o);
    job.in = h;
    job.off = off;
    job.ndocs = ndocs;
    job.k = k;
    job.bands = bands;
    job.rows = rows;
    job.sig = sig;
    job.keys = keys;
    job.chunk = minhash_chunk;
    return la_near_run(&job, st);
}

extern "C" la_status la_cuda_shingle_minhash(const char *text, const uint64_t *off, size_t ndocs,
                                             int kind, int n, int k, int bands, int rows,
                                             const la_cuda_near_opts *o, uint32_t *sig,
                                             uint64_t *keys, uint32_t *nshingles,
                                             la_cuda_near_stats *st) {
    LA_TRY(check_k(k, bands, rows, keys));
    if (kind != LA_SHINGLE_WORD && kind != LA_SHINGLE_CHAR)
        return la_error(LA_EINVAL, "shingle: kind %d: expected word or char", kind);
    if (n < 1 || n > LA_SHINGLE_MAX_N)
        return la_error(LA_EINVAL, "shingle: size %d: expected 1..%d", n, LA_SHINGLE_MAX_N);
    la_near_job job;
    la_near_job_init(&job, LA_NEAR_TEXT, o);
    job.in = text;
    job.off = off;
    job.ndocs = ndocs;
    job.kind = kind;
    job.n = n;
    job.k = k;
    job.bands = bands;
    job.rows = rows;
    job.sig = sig;
    job.keys = keys;
    job.cnt = nshingles;
    job.chunk = minhash_chunk;
    return la_near_run(&job, st);
}

/* Band keys of signatures the host already has: chunks of documents up, keys down, one thread per
 * (document, band) as in the fused path. Outputs are written chunk by chunk. */
static la_status lsh_keys_on_device(const uint32_t *sig, size_t ndocs, int k, int bands, int rows,
                                    const la_cuda_near_opts *o, uint64_t *keys, uint32_t **d_sig,
                                    uint64_t **d_keys) {
    LA_TRY(la_cu_use_device(o ? o->device : 0));
    size_t fr = 0, tot = 0;
    LA_CU(cudaMemGetInfo(&fr, &tot));
    size_t limit = o && o->mem_limit ? o->mem_limit : fr / 2;
    size_t per_doc = (size_t)k * 4 + (size_t)bands * 8;
    size_t chunk = limit / per_doc;
    if (chunk > ((size_t)1 << 20)) chunk = (size_t)1 << 20;
    if (chunk > ndocs) chunk = ndocs;
    if (chunk == 0) return la_error(LA_ECUDA, "band keys (CUDA): no device memory for one signature");
    LA_CU(cudaMalloc(d_sig, chunk * (size_t)k * 4));
    LA_CU(cudaMalloc(d_keys, chunk * (size_t)bands * 8));
    for (size_t d0 = 0; d0 < ndocs; d0 += chunk) {
        size_t nd = ndocs - d0 < chunk ? ndocs - d0 : chunk;
        LA_CU(cudaMemcpy(*d_sig, sig + d0 * (size_t)k, nd * (size_t)k * 4, cudaMemcpyHostToDevice));
        size_t nt = nd * (size_t)bands;
        band_keys<<<(unsigned)((nt + 255) / 256), 256>>>(*d_sig, nd, k, bands, rows, *d_keys);
        LA_CU_LAUNCHED();
        LA_CU(cudaMemcpy(keys + d0 * (size_t)bands, *d_keys, nd * (size_t)bands * 8, cudaMemcpyDeviceToHost));
    }
    return LA_OK;
}

extern "C" la_status la_cuda_lsh_keys(const uint32_t *sig, size_t ndocs, int k, int bands, int rows,
                                      const la_cuda_near_opts *o, uint64_t *keys) {
    if (k < 1 || k > LA_MINHASH_MAX_PERM || bands < 1 || rows < 1 || (long)bands * rows > k)
        return la_error(LA_EINVAL, "band keys: %d bands of %d rows do not fit %d slots", bands, rows, k);
    if (ndocs == 0) return LA_OK;
    if (!sig || !keys) return la_error(LA_EINVAL, "band keys (CUDA): bad arguments");
    uint32_t *d_sig = NULL;
    uint64_t *d_keys = NULL;
    la_status s = lsh_keys_on_device(sig, ndocs, k, bands, rows, o, keys, &d_sig, &d_keys);
    la_cu_free(&d_sig);
    la_cu_free(&d_keys);
    cudaGetLastError();
    return s;
}
