/*
 * shingle_scan.h - the host-only fast paths of word shingling (la_cpu_shingle, la_cpu_hash_bytes in
 * shingle.c), kept apart from shingle_core.h, which the CUDA kernels include.
 *
 * They compute exactly the integers of shingle_core.h (la_hash_bytes, la_is_word_byte), only faster:
 * 8-byte loads through memcpy on little-endian hosts instead of one byte at a time, and the word bytes
 * of 64 bytes of text classified at once into a bit mask (SSE2 on x86-64, a plain loop elsewhere).
 * tests/unit/test_near_fast.c checks them against the reference functions. Not for CUDA: the kernels
 * call shingle_core.h directly. Not a public header.
 */
#ifndef LA_SHINGLE_SCAN_H
#define LA_SHINGLE_SCAN_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "shingle_core.h"

/* LA_SHINGLE_PORTABLE (defined before this header) selects the plain loops everywhere, so that a
 * test on an x86-64 host also checks the code other hosts run. */
#if (defined(__x86_64__) || defined(_M_X64)) && !defined(LA_SHINGLE_PORTABLE)
#include <emmintrin.h>
#define LA_SHINGLE_SSE2 1
#endif

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ && !defined(LA_SHINGLE_PORTABLE)
#define LA_SHINGLE_LE 1
#endif

/* The 8 bytes at p as la_hash_bytes reads them (little-endian), from any alignment. */
static inline uint64_t la_scan_load_le64(const unsigned char *p)
{
#ifdef LA_SHINGLE_LE
    uint64_t w;
    memcpy(&w, p, 8);
    return w;
#else
    uint64_t w = 0;
    for (int k = 0; k < 8; k++) w |= (uint64_t)p[k] << (8 * k);
    return w;
#endif
}

static inline uint64_t la_scan_load_le32(const unsigned char *p)
{
#ifdef LA_SHINGLE_LE
    uint32_t w;
    memcpy(&w, p, 4);
    return w;
#else
    return (uint64_t)p[0] | (uint64_t)p[1] << 8 | (uint64_t)p[2] << 16 | (uint64_t)p[3] << 24;
#endif
}

/* p[0..n) zero-padded to 64 bits, n <= 8, reading no byte outside p[0..n). Overlapping loads write
 * the same byte twice into the same place, which OR leaves as it is. */
static inline uint64_t la_scan_load_le_short(const unsigned char *p, size_t n)
{
    if (n >= 8) return la_scan_load_le64(p);
    if (n >= 4) return la_scan_load_le32(p) | la_scan_load_le32(p + n - 4) << (8 * (n - 4));
    if (n == 0) return 0;
    return (uint64_t)p[0] | (uint64_t)p[n / 2] << (8 * (n / 2)) | (uint64_t)p[n - 1] << (8 * (n - 1));
}

static inline __attribute__((always_inline)) uint64_t la_scan_hash_bytes(const void *data, size_t n)
{
    const unsigned char *p = data;
    uint64_t h = LA_SHINGLE_BYTES_SEED;
    size_t i = 0;
    for (; i + 8 < n; i += 8) h = la_mix64(h ^ la_scan_load_le64(p + i)) + 0x9e3779b97f4a7c15ull;
    /* The last 1..8 bytes: when the string has 8 or more, load the 8 that end it and shift the ones
     * already folded out. */
    uint64_t w = n >= 8 ? la_scan_load_le64(p + n - 8) >> (8 * (8 - (n - i))) : la_scan_load_le_short(p, n);
    return la_mix64(h ^ w ^ ((uint64_t)n << 56) ^ (uint64_t)n);
}

/* Bit j set when p[j] is a word byte (la_is_word_byte), j < 64. Reads p[0..64). */
static inline uint64_t la_scan_word_mask64(const unsigned char *p)
{
#ifdef LA_SHINGLE_SSE2
    /* Unsigned range tests with signed compares: c + (0x80 - lo) maps [lo, lo + n) onto
     * [-128, -128 + n). The top bit of c itself marks the bytes >= 0x80. */
    const __m128i d_off = _mm_set1_epi8((char)(0x80 - '0')), d_lim = _mm_set1_epi8((char)(-128 + 10));
    const __m128i a_off = _mm_set1_epi8((char)(0x80 - 'a')), a_lim = _mm_set1_epi8((char)(-128 + 26));
    const __m128i lower = _mm_set1_epi8(0x20);
    uint64_t m = 0;
    for (int q = 0; q < 4; q++) {
        __m128i c = _mm_loadu_si128((const __m128i *)(const void *)(p + 16 * q));
        __m128i d = _mm_cmplt_epi8(_mm_add_epi8(c, d_off), d_lim);
        __m128i a = _mm_cmplt_epi8(_mm_add_epi8(_mm_or_si128(c, lower), a_off), a_lim);
        m |= (uint64_t)(uint16_t)_mm_movemask_epi8(_mm_or_si128(_mm_or_si128(d, a), c)) << (16 * q);
    }
    return m;
#else
    uint64_t m = 0;
    for (int j = 0; j < 64; j++) m |= (uint64_t)la_is_word_byte(p[j]) << j;
    return m;
#endif
}

/* Bit j of *digits set when p[j] is an ASCII digit, j < 64; the word bytes as la_scan_word_mask64
 * returns them. Reads p[0..64). */
static inline uint64_t la_scan_word_digit_mask64(const unsigned char *p, uint64_t *digits)
{
#ifdef LA_SHINGLE_SSE2
    const __m128i d_off = _mm_set1_epi8((char)(0x80 - '0')), d_lim = _mm_set1_epi8((char)(-128 + 10));
    const __m128i a_off = _mm_set1_epi8((char)(0x80 - 'a')), a_lim = _mm_set1_epi8((char)(-128 + 26));
    const __m128i lower = _mm_set1_epi8(0x20);
    uint64_t m = 0, dm = 0;
    for (int q = 0; q < 4; q++) {
        __m128i c = _mm_loadu_si128((const __m128i *)(const void *)(p + 16 * q));
        __m128i d = _mm_cmplt_epi8(_mm_add_epi8(c, d_off), d_lim);
        __m128i a = _mm_cmplt_epi8(_mm_add_epi8(_mm_or_si128(c, lower), a_off), a_lim);
        m |= (uint64_t)(uint16_t)_mm_movemask_epi8(_mm_or_si128(_mm_or_si128(d, a), c)) << (16 * q);
        dm |= (uint64_t)(uint16_t)_mm_movemask_epi8(d) << (16 * q);
    }
    *digits = dm;
    return m;
#else
    uint64_t m = 0, dm = 0;
    for (int j = 0; j < 64; j++) {
        m |= (uint64_t)la_is_word_byte(p[j]) << j;
        dm |= (uint64_t)(p[j] >= '0' && p[j] <= '9') << j;
    }
    *digits = dm;
    return m;
#endif
}

/* la_scan_block_mask with the digits of the block in *digits (bits past the text clear). */
static inline uint64_t la_scan_block_masks(const unsigned char *p, size_t len, size_t base, uint64_t *digits)
{
    if (len - base >= 64) return la_scan_word_digit_mask64(p + base, digits);
    uint64_t m = 0, dm = 0;
    for (size_t k = 0; k < len - base; k++) {
        m |= (uint64_t)la_is_word_byte(p[base + k]) << k;
        dm |= (uint64_t)(p[base + k] >= '0' && p[base + k] <= '9') << k;
    }
    *digits = dm;
    return m;
}

/* Token hash of the word p[s..s+l) of a text of len bytes: la_hash_bytes, with the common case of a
 * word of up to 8 bytes that is not at the very end of the text read as one 8-byte load and a mask.
 * (A branch-free variant for words of up to 16 bytes, which always computes the first fold, measured
 * slower on the generator corpus, where 86% of the words have at most 8 bytes.) */
static inline uint64_t la_scan_word_token(const unsigned char *p, size_t s, size_t l, size_t len)
{
    if (l > 8) return la_scan_hash_bytes(p + s, l);
    uint64_t w = s + 8 <= len ? la_scan_load_le64(p + s) & (~0ull >> (64 - 8 * l)) : la_scan_load_le_short(p + s, l);
    return la_mix64(LA_SHINGLE_BYTES_SEED ^ w ^ ((uint64_t)l << 56) ^ (uint64_t)l);
}

/* Word bytes of the 64 bytes at base of text p[0..len) as a bit mask (la_scan_word_mask64); the last,
 * partial block is read byte by byte, never past the text, and its missing bytes count as no word, so
 * a word ending the text ends there. */
static inline uint64_t la_scan_block_mask(const unsigned char *p, size_t len, size_t base)
{
    if (len - base >= 64) return la_scan_word_mask64(p + base);
    uint64_t m = 0;
    for (size_t k = 0; k < len - base; k++) m |= (uint64_t)la_is_word_byte(p[base + k]) << k;
    return m;
}

#endif /* LA_SHINGLE_SCAN_H */
