/*
 * shingle.cuh - the device loop of shingling, one thread per document, included by the CUDA kernels
 * that shingle text themselves (minhash.cu). It walks the text exactly as shingle.c's loops do and
 * builds every hash from shingle_core.h, so the hashes equal la_cpu_shingle's; tests/gpu compares
 * the signatures built on both, which also guards against the two loops drifting apart.
 */
#ifndef LA_SHINGLE_CUH
#define LA_SHINGLE_CUH

#include "near_kernels.h"
#include "shingle_core.h"

/* Shingles of p[0..len) into out (room for la_shingle_bound(len)); returns the count. Words are
 * hashed with la_hash_bytes (shingle.c gathers short words while scanning, to the same value). */
__device__ static size_t la_dev_shingle_words(const unsigned char *p, size_t len, int n,
                                              uint64_t *out) {
    uint64_t ring[LA_SHINGLE_MAX_N];
    size_t ntok = 0, nout = 0, i = 0;
    int end = 0;
    while (i < len) {
        while (i < len && !la_is_word_byte(p[i])) i++;
        if (i >= len) break;
        size_t s = i;
        while (i < len && la_is_word_byte(p[i])) i++;
        ring[end] = la_hash_bytes(p + s, i - s);
        if (++end == n) end = 0;
        ntok++;
        if (ntok >= (size_t)n) out[nout++] = la_shingle_fold(ring, n, end, n);
    }
    if (ntok > 0 && ntok < (size_t)n) out[nout++] = la_shingle_fold(ring, n, end, (int)ntok);
    return nout;
}

__device__ static size_t la_dev_shingle_chars(const unsigned char *p, size_t len, int n,
                                              uint64_t *out) {
    uint64_t ring[LA_SHINGLE_MAX_N];
    size_t ntok = 0, nout = 0, i = 0;
    int end = 0;
    while (len > 0 && la_is_space_byte(p[len - 1])) len--;
    while (i < len && la_is_space_byte(p[i])) i++;
    while (i < len) {
        uint32_t cp;
        if (la_is_space_byte(p[i])) {
            while (i < len && la_is_space_byte(p[i])) i++;
            cp = ' ';
        } else {
            size_t l;
            cp = la_utf8_next(p + i, len - i, &l);
            i += l;
        }
        ring[end] = la_char_token(cp);
        if (++end == n) end = 0;
        ntok++;
        if (ntok >= (size_t)n) out[nout++] = la_shingle_fold(ring, n, end, n);
    }
    if (ntok > 0 && ntok < (size_t)n) out[nout++] = la_shingle_fold(ring, n, end, (int)ntok);
    return nout;
}

__device__ static size_t la_dev_shingle(const unsigned char *p, size_t len, int kind, int n,
                                        uint64_t *out) {
    if (kind == LA_SHINGLE_WORD) return la_dev_shingle_words(p, len, n, out);
    if (kind == LA_SHINGLE_CHAR) return la_dev_shingle_chars(p, len, n, out);
    return 0;
}

#endif /* LA_SHINGLE_CUH */
