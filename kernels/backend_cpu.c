/*
 * backend_cpu.c - the reference backend (backend_ops.h): each op is the CPU loop of near_kernels.h,
 * la_keysort.h or simtile.h run over the batch, one document after another. No threads of its own
 * (host_loops: the dispatcher splits batches across its workers), except the tiles, which use
 * OpenMP inside la_cpu_simtile.
 */
#include "backend_ops.h"

#include "near_kernels.h"

#include <stdio.h>
#include <stdlib.h>

static la_status cpu_probe(const la_backend *be, char *desc, size_t desc_size)
{
    snprintf(desc, desc_size, "CPU (reference loops)");
    return LA_OK;
}

static la_status cpu_shingle_minhash(const la_backend *be, const char *text, const uint64_t *off, size_t ndocs,
                                     int kind, int n, int k, uint32_t *sig, uint32_t *nshingles)
{
    if (k < 1 || k > LA_MINHASH_MAX_PERM) return la_error(LA_EINVAL, "minhash: k %d: expected 1..%d", k, LA_MINHASH_MAX_PERM);
    size_t largest = 0;
    for (size_t i = 0; i < ndocs; i++)
        if (off[i + 1] - off[i] > largest) largest = (size_t)(off[i + 1] - off[i]);
    uint64_t *buf = malloc(la_shingle_bound(largest) * sizeof *buf);
    if (!buf) return la_error(LA_ENOMEM, "out of memory shingling a document of %zu bytes", largest);
    for (size_t i = 0; i < ndocs; i++) {
        size_t len = (size_t)(off[i + 1] - off[i]);
        size_t m = la_cpu_shingle(text + off[i], len, kind, n, buf, la_shingle_bound(len));
        la_cpu_minhash(buf, m, k, sig + i * (size_t)k);
        if (nshingles) nshingles[i] = m > UINT32_MAX ? UINT32_MAX : (uint32_t)m;
    }
    free(buf);
    return LA_OK;
}

static la_status cpu_minhash(const la_backend *be, const uint64_t *h, const uint64_t *off, size_t ndocs, int k,
                             uint32_t *sig)
{
    if (k < 1 || k > LA_MINHASH_MAX_PERM) return la_error(LA_EINVAL, "minhash: k %d: expected 1..%d", k, LA_MINHASH_MAX_PERM);
    for (size_t i = 0; i < ndocs; i++) la_cpu_minhash(h + off[i], (size_t)(off[i + 1] - off[i]), k, sig + i * (size_t)k);
    return LA_OK;
}

static la_status cpu_simhash(const la_backend *be, const uint64_t *h, const uint64_t *off, size_t ndocs,
                             uint64_t *out)
{
    for (size_t i = 0; i < ndocs; i++) out[i] = la_cpu_simhash(h + off[i], (size_t)(off[i + 1] - off[i]));
    return LA_OK;
}

static la_status cpu_lsh_keys(const la_backend *be, const uint32_t *sig, size_t ndocs, int k, int bands, int rows,
                              uint64_t *keys)
{
    if (k < 1 || bands < 1 || rows < 1 || (long)bands * rows > k)
        return la_error(LA_EINVAL, "band keys: %d bands of %d rows do not fit %d slots", bands, rows, k);
    for (size_t i = 0; i < ndocs; i++) la_cpu_lsh_keys(sig + i * (size_t)k, bands, rows, keys + i * (size_t)bands);
    return LA_OK;
}

static la_status cpu_sort_keys(const la_backend *be, la_key_row *e, size_t n) { return la_sort_key_rows(e, n); }

static la_status cpu_simtile(const la_backend *be, const float *Q, size_t nq, const float *S, size_t ns, size_t d,
                             uint32_t s_offset,
                             const la_simtile_params *p, la_simtile_hits *hits, uint32_t *top_idx, float *top_cos,
                             size_t *rescored)
{
    la_simtile_stats ts = {0};
    LA_TRY(la_cpu_simtile(Q, nq, S, ns, d, s_offset, p, hits, top_idx, top_cos, &ts));
    *rescored = ts.rescored;
    return LA_OK;
}

const la_backend la_backend_cpu = {.name = "cpu", .device = 0, .host_loops = 1, LA_BACKEND_OPS(cpu)};

const la_backend *const *la_backends_builtin(size_t *n)
{
    static const la_backend *const table[] = {&la_backend_cpu, &la_backend_cuda};
    *n = sizeof table / sizeof *table;
    return table;
}
