/*
 * backend_ops.h - the backend table, ggml-style: every operation that runs on more than one device has
 * one signature over a batch, a CPU reference and a CUDA implementation, and a backend is a table of
 * those functions with a name and an availability probe.
 *
 *   la_backend_cpu   the reference: the CPU loops of near_kernels.h, simtile.h and util/la_keysort.h
 *   la_backend_cuda  the CUDA twins of near_cuda.h and simtile_cuda.h (without CUDA compiled in,
 *                    its probe fails with LA_EUNSUPPORTED and so does every op)
 *
 * Integer outputs (signatures, SimHash, band keys, sorted entries) are bit-identical across
 * backends; similarity tiles report the same pairs, cosines and top-k lists (both re-score with the
 * fixed-order product of simtile_core.h). An op returns LA_OK, LA_EINVAL for arguments no backend
 * accepts, LA_ENOMEM, or a device failure (LA_ECUDA, LA_ENODEV, LA_EUNSUPPORTED) after which the
 * caller may run the same op on the reference (index/dispatch.h does this and records it).
 *
 * A table is plain data: tests build their own (a fake that counts calls) and hand it to the
 * dispatcher; nothing here is global or mutable. Next to come: the encoder's ops (encoder.h and
 * encoder_cuda.h already share one signature per op), as further members of this struct.
 *
 * Not for: choosing a backend or falling back (host/backend.c, index/dispatch.c).
 */
#ifndef LA_BACKEND_OPS_H
#define LA_BACKEND_OPS_H

#include <stddef.h>
#include <stdint.h>

#include "la_keysort.h"
#include "leakaudit.h"
#include "simtile.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct la_backend la_backend;

/* Documents in CSR form: document i is items[off[i] .. off[i+1]) of one array (off[0] need not be 0). */

struct la_backend {
    const char *name;   /* "cpu", "cuda", or a test's own */
    int device;         /* 1: runs on an accelerator (what --backend gpu asks for) */
    int host_loops;     /* 1: the ops are plain CPU loops over documents that the caller may split
                           across its own threads (the batch ops then see part of a batch each) */

    /* LA_OK when the backend can run here, with a description ("NVIDIA H200 (compute 9.0, 139.8
     * GiB)") in desc; else the reason in la_last_error(). */
    la_status (*probe)(const la_backend *be, char *desc /* OUT */, size_t desc_size);

    /* Shingle (kind, n as la_cpu_shingle) and MinHash with k permutations each document of text;
     * sig: ndocs * k; nshingles (may be NULL): la_cpu_shingle's count per document. */
    la_status (*shingle_minhash)(const la_backend *be, const char *text, const uint64_t *off, size_t ndocs,
                                 int kind, int n, int k, uint32_t *sig /* OUT */, uint32_t *nshingles /* OUT */);

    /* MinHash with k permutations of each shingle set h[off[i] .. off[i+1]) into sig[i*k ..]. */
    la_status (*minhash)(const la_backend *be, const uint64_t *h, const uint64_t *off, size_t ndocs, int k,
                         uint32_t *sig /* OUT */);

    /* Weighted SimHash of each shingle multiset into out[i] (any order: la_cpu_simhash). */
    la_status (*simhash)(const la_backend *be, const uint64_t *h, const uint64_t *off, size_t ndocs,
                         uint64_t *out /* OUT */);

    /* LSH band keys of ndocs signatures of k slots: keys[i*bands + j]. */
    la_status (*lsh_keys)(const la_backend *be, const uint32_t *sig, size_t ndocs, int k, int bands, int rows,
                          uint64_t *keys /* OUT */);

    /* Stable sort of e[0..n) by key, in place (left as it was on failure). */
    la_status (*sort_keys)(const la_backend *be, la_key_row *e, size_t n);

    /* Similarity tiles with fused threshold and top-k: la_cpu_simtile's contract (simtile.h): S's
     * rows have global indices s_offset.., so the seen side can come in batches with the lists
     * carried across them; *rescored receives the candidates re-scored. On failure hits and the
     * lists are as they were. */
    la_status (*simtile)(const la_backend *be, const float *Q, size_t nq, const float *S, size_t ns, size_t d,
                         uint32_t s_offset, const la_simtile_params *p, la_simtile_hits *hits /* OUT: appended */,
                         uint32_t *top_idx /* IN/OUT */, float *top_cos /* IN/OUT */, size_t *rescored /* OUT */);

    void *ctx;          /* the backend's own data (device options, a test's counters); may be NULL */
};

/* The op members of a table whose functions are named PREFIX_probe, PREFIX_shingle_minhash, ... */
#define LA_BACKEND_OPS(prefix)                                                                       \
    .probe = prefix##_probe, .shingle_minhash = prefix##_shingle_minhash, .minhash = prefix##_minhash, \
    .simhash = prefix##_simhash, .lsh_keys = prefix##_lsh_keys, .sort_keys = prefix##_sort_keys,      \
    .simtile = prefix##_simtile

/* Options of the CUDA backend, pointed to by its ctx (NULL: device 0, fp16 GEMM, memory from the
 * free amount). */
typedef struct la_cuda_backend_opts {
    int device;
    int precision;      /* la_gemm_precision of the tiles (results do not depend on it) */
} la_cuda_backend_opts;

/* The built-in backends (static, read-only; ctx NULL). */
extern const la_backend la_backend_cpu;
extern const la_backend la_backend_cuda;

/* The built-in table, reference first: *n receives its length. */
const la_backend *const *la_backends_builtin(size_t *n /* OUT */);

/* Is this status a device failure, after which the reference may run instead? */
static inline int la_backend_device_failure(la_status s)
{
    return s == LA_ECUDA || s == LA_ENODEV || s == LA_EUNSUPPORTED;
}

#ifdef __cplusplus
}
#endif
#endif /* LA_BACKEND_OPS_H */
