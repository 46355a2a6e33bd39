/*
 * backend_cuda.c - the CUDA backend (backend_ops.h): each op is its twin in near_cuda.h or
 * simtile_cuda.h, which moves the batch through the device in chunks and returns when the outputs
 * are in host memory. Plain C: no CUDA header; without CUDA compiled in, the twins are stubs that
 * return LA_EUNSUPPORTED, and so does the probe.
 */
#include "backend_ops.h"

#include "device.h"
#include "near_cuda.h"
#include "simtile_cuda.h"

#include <stdio.h>

static la_cuda_backend_opts opts_of(const la_backend *be)
{
    la_cuda_backend_opts o = {0, LA_GEMM_FP16};
    if (be && be->ctx) o = *(const la_cuda_backend_opts *)be->ctx;
    return o;
}

static la_cuda_near_opts near_opts(const la_backend *be)
{
    la_cuda_near_opts o;
    la_cuda_near_opts_default(&o);
    o.device = opts_of(be).device;
    return o;
}

static la_status cuda_probe(const la_backend *be, char *desc, size_t desc_size)
{
    int count = 0, dev = opts_of(be).device;
    LA_TRY(la_cuda_device_count(&count));
    if (dev < 0 || dev >= count) return la_error(LA_ENODEV, "CUDA device %d: have %d", dev, count);
    la_device_info info;
    LA_TRY(la_cuda_device_info(dev, &info));
    snprintf(desc, desc_size, "%.200s (compute %d.%d, %.1f GiB)", info.name, info.cc_major, info.cc_minor,
             (double)info.total_mem / (1024.0 * 1024.0 * 1024.0));
    return LA_OK;
}

static la_status cuda_shingle_minhash(const la_backend *be, const char *text, const uint64_t *off, size_t ndocs,
                                      int kind, int n, int k, uint32_t *sig, uint32_t *nshingles)
{
    la_cuda_near_opts o = near_opts(be);
    return la_cuda_shingle_minhash(text, off, ndocs, kind, n, k, 0, 0, &o, sig, NULL, nshingles, NULL);
}

static la_status cuda_minhash(const la_backend *be, const uint64_t *h, const uint64_t *off, size_t ndocs, int k,
                              uint32_t *sig)
{
    la_cuda_near_opts o = near_opts(be);
    return la_cuda_minhash(h, off, ndocs, k, 0, 0, &o, sig, NULL, NULL);
}

static la_status cuda_simhash(const la_backend *be, const uint64_t *h, const uint64_t *off, size_t ndocs,
                              uint64_t *out)
{
    la_cuda_near_opts o = near_opts(be);
    return la_cuda_simhash(h, off, ndocs, &o, out, NULL);
}

static la_status cuda_lsh_keys(const la_backend *be, const uint32_t *sig, size_t ndocs, int k, int bands, int rows,
                               uint64_t *keys)
{
    la_cuda_near_opts o = near_opts(be);
    return la_cuda_lsh_keys(sig, ndocs, k, bands, rows, &o, keys);
}

static la_status cuda_sort_keys(const la_backend *be, la_key_row *e, size_t n)
{
    la_cuda_near_opts o = near_opts(be);
    return la_cuda_sort_key_rows(e, n, &o);
}

static la_status cuda_simtile(const la_backend *be, const float *Q, size_t nq, const float *S, size_t ns, size_t d,
                              uint32_t s_offset,
                              const la_simtile_params *p, la_simtile_hits *hits, uint32_t *top_idx, float *top_cos,
                              size_t *rescored)
{
    la_cuda_simtile_opts o;
    la_cuda_simtile_opts_default(&o);
    o.device = opts_of(be).device;
    o.precision = opts_of(be).precision;
    la_simtile_stats ts = {0};
    LA_TRY(la_cuda_simtile(Q, nq, S, ns, d, s_offset, p, &o, hits, top_idx, top_cos, &ts, NULL));
    *rescored = ts.rescored;
    return LA_OK;
}

const la_backend la_backend_cuda = {.name = "cuda", .device = 1, .host_loops = 0, LA_BACKEND_OPS(cuda)};
