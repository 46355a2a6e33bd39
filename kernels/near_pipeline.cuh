/*
 * near_pipeline.cuh - the host side shared by the near-copy CUDA kernels (minhash.cu, simhash.cu):
 * documents in CSR form go through the device in chunks, alternating between two streams, each with
 * pinned staging buffers, so the upload of one chunk overlaps the kernels of the other. A chunk is
 * at most max_items input items and max_docs documents, sized from the free device memory; a
 * document is never split. Internal to the .cu files.
 */
#ifndef LA_NEAR_PIPELINE_CUH
#define LA_NEAR_PIPELINE_CUH

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cuda_check.cuh"
#include "near_cuda.h"

enum la_near_mode {
    LA_NEAR_TEXT = 0,    /* input: bytes of text; kernels shingle, then MinHash */
    LA_NEAR_HASHES = 1,  /* input: shingle hashes; MinHash */
    LA_NEAR_SIMHASH = 2  /* input: sorted shingle hashes; SimHash */
};

struct la_near_stream {
    cudaStream_t stream;
    cudaEvent_t e0, e1;
    void *h_in;
    uint64_t *h_off, *h_keys, *h_out;
    uint32_t *h_sig, *h_cnt;
    void *d_in;
    uint64_t *d_off, *d_hash, *d_keys, *d_out;
    uint32_t *d_sig, *d_cnt;
    int busy;
    size_t d0, d1;
};

struct la_near_job;
typedef la_status (*la_near_chunk_fn)(const la_near_job *job, la_near_stream *s, size_t nd,
                                      uint64_t base);

struct la_near_job {
    int mode;
    la_cuda_near_opts o;
    const void *in;
    const uint64_t *off;
    size_t ndocs;
    int kind, n, k, bands, rows;
    uint32_t *sig, *cnt; /* outputs (cnt may be NULL) */
    uint64_t *keys, *out;
    la_near_chunk_fn chunk;
    size_t isz, max_items, max_docs;
    double kernel_ms;
    size_t chunks;
    la_near_stream s[2];
};

static inline void la_near_job_init(la_near_job *j, int mode, const la_cuda_near_opts *o) {
    memset(j, 0, sizeof *j);
    j->mode = mode;
    if (o) {
        j->o = *o;
    } else {
        j->o.device = 0;
        j->o.mem_limit = 0;
    }
    j->isz = mode == LA_NEAR_TEXT ? 1 : 8;
}

static size_t la_near_stream_bytes(const la_near_job *j, size_t items, size_t docs) {
    size_t b = items * j->isz + (docs + 1) * 8;
    if (j->mode == LA_NEAR_TEXT) b += (items + docs) * 8 + docs * 4;
    if (j->mode == LA_NEAR_SIMHASH)
        b += docs * 8;
    else
        b += docs * 4 * (size_t)j->k + (j->keys ? docs * 8 * (size_t)j->bands : 0);
    return b;
}

static la_status la_near_alloc(la_near_job *j, la_near_stream *s) {
    const size_t it = j->max_items, dc = j->max_docs;
    LA_CU(cudaStreamCreateWithFlags(&s->stream, cudaStreamNonBlocking));
    LA_CU(cudaEventCreate(&s->e0));
    LA_CU(cudaEventCreate(&s->e1));
    LA_CU(cudaMallocHost(&s->h_in, it * j->isz > 0 ? it * j->isz : 8));
    LA_CU(cudaMallocHost(&s->h_off, (dc + 1) * 8));
    LA_CU(cudaMalloc(&s->d_in, it * j->isz > 0 ? it * j->isz : 8));
    LA_CU(cudaMalloc(&s->d_off, (dc + 1) * 8));
    if (j->mode == LA_NEAR_TEXT) {
        LA_CU(cudaMalloc(&s->d_hash, (it + dc) * 8));
        LA_CU(cudaMalloc(&s->d_cnt, dc * 4));
        LA_CU(cudaMallocHost(&s->h_cnt, dc * 4));
    }
    if (j->mode == LA_NEAR_SIMHASH) {
        LA_CU(cudaMalloc(&s->d_out, dc * 8));
        LA_CU(cudaMallocHost(&s->h_out, dc * 8));
    } else {
        LA_CU(cudaMalloc(&s->d_sig, dc * 4 * (size_t)j->k));
        LA_CU(cudaMallocHost(&s->h_sig, dc * 4 * (size_t)j->k));
        if (j->keys) {
            LA_CU(cudaMalloc(&s->d_keys, dc * 8 * (size_t)j->bands));
            LA_CU(cudaMallocHost(&s->h_keys, dc * 8 * (size_t)j->bands));
        }
    }
    return LA_OK;
}

static void la_near_release(la_near_stream *s) {
    if (s->stream) cudaStreamSynchronize(s->stream);
    if (s->e0) cudaEventDestroy(s->e0);
    if (s->e1) cudaEventDestroy(s->e1);
    if (s->stream) cudaStreamDestroy(s->stream);
    la_cu_free_host(&s->h_in);
    la_cu_free_host(&s->h_off);
    la_cu_free_host(&s->h_keys);
    la_cu_free_host(&s->h_out);
    la_cu_free_host(&s->h_sig);
    la_cu_free_host(&s->h_cnt);
    la_cu_free(&s->d_in);
    la_cu_free(&s->d_off);
    la_cu_free(&s->d_hash);
    la_cu_free(&s->d_keys);
    la_cu_free(&s->d_out);
    la_cu_free(&s->d_sig);
    la_cu_free(&s->d_cnt);
    cudaGetLastError();
    memset(s, 0, sizeof *s);
}

static la_status la_near_enqueue(la_near_job *j, la_near_stream *s, size_t d0, size_t d1) {
    const size_t nd = d1 - d0;
    const uint64_t base = j->off[d0];
    const size_t items = (size_t)(j->off[d1] - base);
    s->d0 = d0;
    s->d1 = d1;
    s->busy = 1;
    memcpy(s->h_in, (const char *)j->in + base * j->isz, items * j->isz);
    memcpy(s->h_off, j->off + d0, (nd + 1) * 8);
    LA_CU(cudaMemcpyAsync(s->d_in, s->h_in, items * j->isz, cudaMemcpyHostToDevice, s->stream));
    LA_CU(cudaMemcpyAsync(s->d_off, s->h_off, (nd + 1) * 8, cudaMemcpyHostToDevice, s->stream));
    LA_CU(cudaEventRecord(s->e0, s->stream));
    LA_TRY(j->chunk(j, s, nd, base));
    LA_CU(cudaEventRecord(s->e1, s->stream));
    if (j->mode == LA_NEAR_SIMHASH) {
        LA_CU(cudaMemcpyAsync(s->h_out, s->d_out, nd * 8, cudaMemcpyDeviceToHost, s->stream));
    } else {
        LA_CU(cudaMemcpyAsync(s->h_sig, s->d_sig, nd * 4 * (size_t)j->k, cudaMemcpyDeviceToHost,
                              s->stream));
        if (j->keys)
            LA_CU(cudaMemcpyAsync(s->h_keys, s->d_keys, nd * 8 * (size_t)j->bands,
                                  cudaMemcpyDeviceToHost, s->stream));
    }
    if (j->mode == LA_NEAR_TEXT && j->cnt)
        LA_CU(cudaMemcpyAsync(s->h_cnt, s->d_cnt, nd * 4, cudaMemcpyDeviceToHost, s->stream));
    return LA_OK;
}

static la_status la_near_finish(la_near_job *j, la_near_stream *s) {
    if (!s->busy) return LA_OK;
    const size_t nd = s->d1 - s->d0;
    LA_CU(cudaStreamSynchronize(s->stream));
    float ms = 0;
    LA_CU(cudaEventElapsedTime(&ms, s->e0, s->e1));
    j->kernel_ms += ms;
    j->chunks++;
    if (j->mode == LA_NEAR_SIMHASH) {
        memcpy(j->out + s->d0, s->h_out, nd * 8);
    } else {
        memcpy(j->sig + s->d0 * (size_t)j->k, s->h_sig, nd * 4 * (size_t)j->k);
        if (j->keys) memcpy(j->keys + s->d0 * (size_t)j->bands, s->h_keys, nd * 8 * (size_t)j->bands);
    }
    if (j->mode == LA_NEAR_TEXT && j->cnt) memcpy(j->cnt + s->d0, s->h_cnt, nd * 4);
    s->busy = 0;
    return LA_OK;
}

static la_status la_near_plan(la_near_job *j) {
    size_t largest = 0;
    for (size_t i = 0; i < j->ndocs; i++) {
        if (j->off[i + 1] < j->off[i])
            return la_error(LA_EINVAL, "near (CUDA): offsets decrease at document %zu", i);
        size_t len = (size_t)(j->off[i + 1] - j->off[i]);
        if (len > largest) largest = len;
    }
    if (j->mode == LA_NEAR_TEXT && largest >= UINT32_MAX)
        return la_error(LA_EINVAL, "near (CUDA): a document of %zu bytes", largest);
    size_t fr = 0, tot = 0;
    LA_CU(cudaMemGetInfo(&fr, &tot));
    size_t limit = j->o.mem_limit ? j->o.mem_limit : fr / 2;
    if (limit > fr) limit = fr;
    size_t items = j->mode == LA_NEAR_TEXT ? ((size_t)64 << 20) : ((size_t)16 << 20);
    size_t docs = (size_t)1 << 18;
    if (items < largest) items = largest;
    if (docs > j->ndocs) docs = j->ndocs;
    while (2 * la_near_stream_bytes(j, items, docs) > limit && (items / 2 >= largest || docs > 1)) {
        if (items / 2 >= largest && items > 4096) items /= 2;
        if (docs > 1) docs = (docs + 1) / 2;
        if (items <= 4096 && docs == 1) break;
    }
    if (2 * la_near_stream_bytes(j, items, docs) > limit)
        return la_error(LA_ECUDA, "near (CUDA): a document of %zu items needs more than the %zu MiB "
                        "of device memory usable", largest, limit >> 20);
    j->max_items = items;
    j->max_docs = docs;
    return LA_OK;
}

static la_status la_near_loop(la_near_job *j) {
    LA_TRY(la_cu_use_device(j->o.device));
    LA_TRY(la_near_plan(j));
    for (int i = 0; i < 2; i++) LA_TRY(la_near_alloc(j, &j->s[i]));
    size_t d0 = 0, c = 0;
    while (d0 < j->ndocs) {
        size_t d1 = d0;
        while (d1 < j->ndocs && d1 - d0 < j->max_docs && j->off[d1 + 1] - j->off[d0] <= j->max_items)
            d1++;
        la_near_stream *s = &j->s[c & 1];
        LA_TRY(la_near_finish(j, s));
        LA_TRY(la_near_enqueue(j, s, d0, d1));
        d0 = d1;
        c++;
    }
    for (int i = 0; i < 2; i++) LA_TRY(la_near_finish(j, &j->s[i]));
    return LA_OK;
}

/* Run a job: all chunks, then release everything, on success and failure alike. */
static la_status la_near_run(la_near_job *j, la_cuda_near_stats *st) {
    if (j->ndocs == 0) return LA_OK;
    if (!j->in || !j->off) return la_error(LA_EINVAL, "near (CUDA): bad arguments");
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    la_status rc = la_near_loop(j);
    for (int i = 0; i < 2; i++) la_near_release(&j->s[i]);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    if (rc == LA_OK && st) {
        st->seconds += (double)(t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) * 1e-9;
        st->kernel_ms += j->kernel_ms;
        st->bytes += (double)(j->off[j->ndocs] - j->off[0]) * (double)j->isz;
        st->chunks += j->chunks;
    }
    return rc;
}

#endif /* LA_NEAR_PIPELINE_CUH */
