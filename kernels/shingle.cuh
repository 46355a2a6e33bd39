/*
 * shingle.cuh - shingling on the device, one thread per document, for the CUDA kernels that shingle
 * text themselves (minhash.cu). It runs the reference loops of shingle_core.h, the ones the CPU's
 * character path runs and its vectorized word scan is tested against, so the hashes equal
 * la_cpu_shingle's; tests/gpu compares the signatures built on both.
 */
#ifndef LA_SHINGLE_CUH
#define LA_SHINGLE_CUH

#include "near_kernels.h"
#include "shingle_core.h"

/* Shingles of p[0..len) into out (room for la_shingle_bound(len)); returns the count. Words are
 * hashed with la_hash_bytes (shingle.c gathers short words while scanning, to the same value). */
__device__ static size_t la_dev_shingle(const unsigned char *p, size_t len, int kind, int n,
                                        uint64_t *out) {
    if (kind == LA_SHINGLE_WORD) return la_shingle_words(p, len, n, out, (size_t)-1);
    if (kind == LA_SHINGLE_CHAR) return la_shingle_chars(p, len, n, out, (size_t)-1);
    return 0;
}

#endif /* LA_SHINGLE_CUH */
