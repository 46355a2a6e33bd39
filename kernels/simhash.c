/*
 * simhash.c - the CPU loop of the weighted 64-bit SimHash (math in simhash_core.h). The input is a
 * shingle multiset; a run of equal hashes votes once with its length as the weight, which adds up
 * to what its values voting one by one would (the near tier signs multisets in text order; sorted,
 * each distinct shingle is one run). Three loops count the same integers: on x86-64 hosts with
 * AVX-512 (F + BW, checked at run time) a masked byte add per shingle (simhash_avx512); with AVX2
 * the hash's bits spread to 64 byte masks by a byte shuffle and a compare (la_cpu_simhash_avx2);
 * elsewhere eight-bit lanes in 64-bit words (SWAR). la_cpu_simhash_portable always takes the last,
 * for tests.
 */
#include "near_kernels.h"
#include "simhash_core.h"

#include <pthread.h>

/* Byte k of k_spread[b] is bit k of b: a shingle's 64 votes as eight 8-byte lanes, so one add
 * counts eight bits (SWAR). The counts are exact integers, so the fingerprint has the bits of
 * la_simhash_vote's loop (which the CUDA kernel runs): bit i is set when the weight of the
 * shingles with bit i set is more than half the total weight. */
#define SP(b) ((((uint64_t)(b) * 0x0101010101010101ull & 0x8040201008040201ull) + 0x7f7f7f7f7f7f7f7full) >> 7 & \
               0x0101010101010101ull)
#define SP4(b) SP(b), SP((b) + 1), SP((b) + 2), SP((b) + 3)
#define SP16(b) SP4(b), SP4((b) + 4), SP4((b) + 8), SP4((b) + 12)
#define SP64(b) SP16(b), SP16((b) + 16), SP16((b) + 32), SP16((b) + 48)
static const uint64_t k_spread[256] = {SP64(0), SP64(64), SP64(128), SP64(192)};

/* Move the byte counters into the 32-bit ones (a lane byte holds at most 255). */
static void flush(uint64_t lane[8], uint64_t ones[64])
{
    for (int j = 0; j < 8; j++) {
        for (int k = 0; k < 8; k++) ones[8 * j + k] += (lane[j] >> (8 * k)) & 0xff;
        lane[j] = 0;
    }
}

/* The fingerprint of the counts: bit b is set when the weight with bit b set is more than half. */
static uint64_t finish(const uint64_t ones[64], uint64_t total)
{
    uint64_t s = 0;
    for (int b = 0; b < 64; b++)
        if (2 * ones[b] > total) s |= 1ull << b;
    return s;
}

/* The walk every loop shares: each run of equal hashes in the sorted h[0 .. n) is one distinct
 * shingle; with its hash in v (la_simhash_hash) and its weight added to total, ADD(part) runs once
 * per piece of the weight of at most 255, and FLUSH (which must empty the byte counters) runs
 * first whenever a piece would take a byte counter past 255. */
#define SIMHASH_PARTS(h, n, v, part, total, FLUSH, ADD)             \
    do {                                                            \
        unsigned held_ = 0; /* weight in the counters since the last flush */ \
        for (size_t i_ = 0, j_; i_ < (n); i_ = j_) {                \
            for (j_ = i_ + 1; j_ < (n) && (h)[j_] == (h)[i_];) j_++; \
            uint64_t v = la_simhash_hash((h)[i_]);                  \
            (total) += j_ - i_;                                     \
            for (size_t w_ = j_ - i_; w_ > 0;) {                    \
                unsigned part = w_ < 255 ? (unsigned)w_ : 255;      \
                if (held_ + part > 255) {                           \
                    FLUSH;                                          \
                    held_ = 0;                                      \
                }                                                   \
                ADD;                                                \
                held_ += part;                                      \
                w_ -= part;                                         \
            }                                                       \
        }                                                           \
    } while (0)

uint64_t la_cpu_simhash_portable(const uint64_t *h, size_t n)
{
    uint64_t ones[64] = {0}, lane[8] = {0}, total = 0;
    SIMHASH_PARTS(h, n, v, part, total, flush(lane, ones),
                  for (int b = 0; b < 8; b++) lane[b] += k_spread[(v >> (8 * b)) & 0xff] * part);
    flush(lane, ones);
    return finish(ones, total);
}

#if defined(__GNUC__) && defined(__x86_64__)
#define LA_SIMHASH_X86 1
#include <immintrin.h>

/* The byte counts of acc added to the 32-bit counts c[0..3] (bytes 16q .. 16q + 15 into c[q]; the
 * lane index of an extract must be a constant). */
__attribute__((target("avx512f,avx512bw"))) static inline void widen(__m512i c[4], __m512i acc)
{
    c[0] = _mm512_add_epi32(c[0], _mm512_cvtepu8_epi32(_mm512_extracti32x4_epi32(acc, 0)));
    c[1] = _mm512_add_epi32(c[1], _mm512_cvtepu8_epi32(_mm512_extracti32x4_epi32(acc, 1)));
    c[2] = _mm512_add_epi32(c[2], _mm512_cvtepu8_epi32(_mm512_extracti32x4_epi32(acc, 2)));
    c[3] = _mm512_add_epi32(c[3], _mm512_cvtepu8_epi32(_mm512_extracti32x4_epi32(acc, 3)));
}

/* Byte b of the accumulator counts bit b's weight since the last flush: the shingle's hash is the
 * mask of a byte add of its weight. Flushed into four vectors of 32-bit counts before a byte could
 * pass 255. */
__attribute__((target("avx512f,avx512bw")))
static uint64_t simhash_avx512(const uint64_t *h, size_t n)
{
    __m512i acc = _mm512_setzero_si512(), c[4];
    for (int q = 0; q < 4; q++) c[q] = _mm512_setzero_si512();
    uint64_t total = 0;
    SIMHASH_PARTS(h, n, v, part, total, (widen(c, acc), acc = _mm512_setzero_si512()),
                  acc = _mm512_mask_add_epi8(acc, (__mmask64)v, acc, _mm512_set1_epi8((char)part)));
    uint32_t lanes[64];
    widen(c, acc);
    for (int q = 0; q < 4; q++) _mm512_storeu_si512((void *)(lanes + 16 * q), c[q]);
    uint64_t ones[64];
    for (int b = 0; b < 64; b++) ones[b] = lanes[b];
    return finish(ones, total);
}

/* Byte j of the two accumulators counts bit j's weight since the last flush: the hash's four bytes
 * of each half go to the eight bytes of their bits (a byte shuffle of the broadcast half), a compare
 * of each byte with its bit makes the mask, and the mask's bytes of the weight are added. The byte
 * counts move into 32-bit ones before one could pass 255. */
__attribute__((target("avx2"))) static inline __m256i bit_bytes(uint32_t half, __m256i spread, __m256i bits)
{
    __m256i b = _mm256_shuffle_epi8(_mm256_set1_epi32((int)half), spread);
    return _mm256_cmpeq_epi8(_mm256_and_si256(b, bits), bits);
}

__attribute__((target("avx2"))) static void flush_avx2(__m256i acc[2], uint64_t ones[64])
{
    unsigned char bytes[64];
    _mm256_storeu_si256((__m256i *)bytes, acc[0]);
    _mm256_storeu_si256((__m256i *)(bytes + 32), acc[1]);
    for (int b = 0; b < 64; b++) ones[b] += bytes[b];
    acc[0] = acc[1] = _mm256_setzero_si256();
}

__attribute__((target("avx2"))) static uint64_t simhash_avx2(const uint64_t *h, size_t n)
{
    /* byte j of a lane takes byte j / 8 of the half (the second lane: bytes 2 and 3) */
    const __m256i spread = _mm256_setr_epi8(0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1,
                                            2, 2, 2, 2, 2, 2, 2, 2, 3, 3, 3, 3, 3, 3, 3, 3);
    const __m256i bits = _mm256_set1_epi64x((long long)0x8040201008040201ull);
    __m256i acc[2] = {_mm256_setzero_si256(), _mm256_setzero_si256()};
    uint64_t ones[64] = {0}, total = 0;
    __m256i lo, hi;
    SIMHASH_PARTS(h, n, v, part, total, flush_avx2(acc, ones),
                  (lo = bit_bytes((uint32_t)v, spread, bits), hi = bit_bytes((uint32_t)(v >> 32), spread, bits),
                   acc[0] = _mm256_add_epi8(acc[0], _mm256_and_si256(lo, _mm256_set1_epi8((char)part))),
                   acc[1] = _mm256_add_epi8(acc[1], _mm256_and_si256(hi, _mm256_set1_epi8((char)part)))));
    flush_avx2(acc, ones);
    return finish(ones, total);
}

static int have_avx512, have_avx2;
static pthread_once_t cpu_once = PTHREAD_ONCE_INIT;

static void cpu_init(void)
{
    __builtin_cpu_init();
    have_avx512 = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw");
    have_avx2 = __builtin_cpu_supports("avx2");
}
#endif

int la_cpu_simhash_has_avx2(void)
{
#ifdef LA_SIMHASH_X86
    pthread_once(&cpu_once, cpu_init);
    return have_avx2;
#else
    return 0;
#endif
}

uint64_t la_cpu_simhash_avx2(const uint64_t *h, size_t n)
{
#ifdef LA_SIMHASH_X86
    if (la_cpu_simhash_has_avx2()) return simhash_avx2(h, n);
#endif
    return la_cpu_simhash_portable(h, n);
}

const char *la_cpu_simhash_kernel(void)
{
#ifdef LA_SIMHASH_X86
    pthread_once(&cpu_once, cpu_init);
    if (have_avx512) return "AVX-512";
    if (have_avx2) return "AVX2";
#endif
    return "portable loop";
}

uint64_t la_cpu_simhash(const uint64_t *h, size_t n)
{
#ifdef LA_SIMHASH_X86
    pthread_once(&cpu_once, cpu_init);
    if (have_avx512) return simhash_avx512(h, n);
    if (have_avx2) return simhash_avx2(h, n);
#endif
    return la_cpu_simhash_portable(h, n);
}
