/*
 * simhash.cu - the CUDA loop of the weighted 64-bit SimHash (contract in near_cuda.h, math in
 * simhash_core.h, the functions simhash.c calls). One thread per document walks its sorted shingle
 * multiset run by run, as simhash.c does; the 64 counters stay in registers (la_simhash_vote's loop
 * unrolls to constant indices). Integer votes make the result bit-identical to the CPU's.
 */
#include "near_pipeline.cuh"
#include "simhash_core.h"

__global__ void simhash_docs(const uint64_t *h, const uint64_t *off, uint64_t base, size_t ndocs,
                             uint64_t *out) {
    size_t doc = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (doc >= ndocs) return;
    const uint64_t *p = h + (off[doc] - base);
    size_t n = (size_t)(off[doc + 1] - off[doc]);
    int32_t acc[64];
#pragma unroll
    for (int i = 0; i < 64; i++) acc[i] = 0;
    size_t i = 0;
    while (i < n) {
        size_t j = i + 1;
        while (j < n && p[j] == p[i]) j++;
        la_simhash_vote(acc, la_simhash_hash(p[i]), (int32_t)(j - i));
        i = j;
    }
    out[doc] = la_simhash_finish(acc);
}

static la_status simhash_chunk(const la_near_job *job, la_near_stream *s, size_t nd, uint64_t base) {
    simhash_docs<<<(unsigned)((nd + 127) / 128), 128, 0, s->stream>>>((const uint64_t *)s->d_in,
                                                                      s->d_off, base, nd, s->d_out);
    LA_CU_LAUNCHED();
    return LA_OK;
}

extern "C" void la_cuda_near_opts_default(la_cuda_near_opts *o) {
    o->device = 0;
    o->mem_limit = 0;
}

extern "C" la_status la_cuda_simhash(const uint64_t *h, const uint64_t *off, size_t ndocs,
                                     const la_cuda_near_opts *o, uint64_t *out,
                                     la_cuda_near_stats *st) {
    la_near_job job;
    la_near_job_init(&job, LA_NEAR_SIMHASH, o);
    job.in = h;
    job.off = off;
    job.ndocs = ndocs;
    job.out = out;
    job.chunk = simhash_chunk;
    return la_near_run(&job, st);
}
