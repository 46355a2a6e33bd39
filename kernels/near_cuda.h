/*
 * near_cuda.h - the CUDA twins of the near-copy kernels (near_kernels.h): MinHash signatures, LSH band
 * keys, SimHash, and shingling fused with MinHash for text that has not been shingled yet.
 *
 * Each kernel calls the per-element math of shingle_core.h, minhash_core.h and simhash_core.h, the
 * functions the CPU loops call, so every integer is bit-identical to la_cpu_shingle,
 * la_cpu_minhash, la_cpu_lsh_keys and la_cpu_simhash (tests/gpu checks it). Documents come many at a
 * time in CSR form: document i is items[off[i] .. off[i+1]) of one array, off[0] need not be 0.
 * Inputs and outputs are host memory; the functions move them through the device in chunks sized
 * from the free device memory (no managed memory) and return when the outputs are written.
 *
 * No CUDA header is included here. Without CUDA compiled in, every function returns
 * LA_EUNSUPPORTED (near_cuda_stub.c). Candidate pairs from band keys are formed on the host
 * (index/lsh.c), as on the CPU path.
 */
#ifndef LA_NEAR_CUDA_H
#define LA_NEAR_CUDA_H

#include <stddef.h>
#include <stdint.h>

#include "la_keysort.h"
#include "leakaudit.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct la_cuda_near_opts {
    int device;        /* CUDA device index (default 0) */
    size_t mem_limit;  /* device bytes to use at most; 0 = half of the free memory */
} la_cuda_near_opts;

/* What a call did; fields accumulate over calls. */
typedef struct la_cuda_near_stats {
    double seconds;    /* wall time of the calls, transfers included */
    double kernel_ms;  /* device time of the kernels alone (CUDA events, summed over chunks) */
    double bytes;      /* input bytes (text, or 8 per shingle hash) */
    size_t chunks;     /* chunks the input went through the device in */
} la_cuda_near_stats;

void la_cuda_near_opts_default(la_cuda_near_opts *o);

/*
 * MinHash signatures of ndocs shingle sets: set i is h[off[i] .. off[i+1]) (duplicates allowed),
 * signature i goes to sig[i*k .. i*k+k), equal to la_cpu_minhash(h + off[i], off[i+1]-off[i], k).
 * With keys non-NULL, also the LSH band keys (bands * rows <= k): keys[i*bands + j] equal to
 * la_cpu_lsh_keys(sig + i*k, bands, rows). 1 <= k <= LA_MINHASH_MAX_PERM.
 * o and st may be NULL. Returns LA_EINVAL, LA_ENODEV, LA_ECUDA (message in la_last_error),
 * LA_EUNSUPPORTED without CUDA.
 */
la_status la_cuda_minhash(const uint64_t *h, const uint64_t *off, size_t ndocs, int k, int bands,
                          int rows, const la_cuda_near_opts *o, uint32_t *sig /* OUT */,
                          uint64_t *keys /* OUT, may be NULL */, la_cuda_near_stats *st);

/*
 * Weighted SimHash of ndocs SORTED shingle multisets h[off[i] .. off[i+1]) into out[i], equal to
 * la_cpu_simhash(h + off[i], off[i+1] - off[i]). Same statuses as la_cuda_minhash.
 */
la_status la_cuda_simhash(const uint64_t *h, const uint64_t *off, size_t ndocs,
                          const la_cuda_near_opts *o, uint64_t *out /* OUT */,
                          la_cuda_near_stats *st);

/*
 * Shingle and MinHash in one pass on the device: document i is text[off[i] .. off[i+1]) (UTF-8,
 * normalized as the near tier normalizes it), shingled as la_cpu_shingle(kind, n) does, and its
 * signature written to sig[i*k ..] (equal to la_cpu_minhash over those shingles); keys as in
 * la_cuda_minhash; nshingles[i] (may be NULL) receives la_cpu_shingle's count. The text streams
 * through the device in chunks on two CUDA streams (upload of one chunk overlaps the kernels of the
 * other). Same statuses as la_cuda_minhash.
 */
la_status la_cuda_shingle_minhash(const char *text, const uint64_t *off, size_t ndocs, int kind,
                                  int n, int k, int bands, int rows, const la_cuda_near_opts *o,
                                  uint32_t *sig /* OUT */, uint64_t *keys /* OUT, may be NULL */,
                                  uint32_t *nshingles /* OUT, may be NULL */,
                                  la_cuda_near_stats *st);

/*
 * LSH band keys of ndocs signatures the host already has (sig[i*k ..]): keys[i*bands + j] equal to
 * la_cpu_lsh_keys(sig + i*k, bands, rows). Same statuses as la_cuda_minhash; on failure some keys
 * may have been written (the caller recomputes them all).
 */
la_status la_cuda_lsh_keys(const uint32_t *sig, size_t ndocs, int k, int bands, int rows,
                           const la_cuda_near_opts *o, uint64_t *keys /* OUT */);

/*
 * Stable sort of e[0..n) by key on the device (CUB radix sort): the same array as
 * la_sort_key_rows (util/la_keysort.h). o may be NULL. At most INT_MAX entries (LA_EUNSUPPORTED above).
 * Same statuses as la_cuda_minhash; on failure e is left exactly as it was.
 */
la_status la_cuda_sort_key_rows(la_key_row *e, size_t n, const la_cuda_near_opts *o);

#ifdef __cplusplus
}
#endif
#endif /* LA_NEAR_CUDA_H */
