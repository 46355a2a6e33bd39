/* scan.c - byte scans of the readers (see la_scan.h). */
#include "la_scan.h"
#include "la_cpus.h"

#include <stdint.h>
#include <string.h>

#define ONES 0x0101010101010101u
#define HIGH 0x8080808080808080u

static size_t ascii_swar(const unsigned char *s, size_t n)
{
    size_t i = 0;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    for (; n - i >= 8; i += 8) {
        uint64_t x;
        memcpy(&x, s + i, 8);
        if (x & HIGH) return i + (size_t)__builtin_ctzll(x & HIGH) / 8;
    }
#endif
    while (i < n && s[i] < 0x80) i++;
    return i;
}

static int json_special(unsigned char c) { return c == '"' || c == '\\' || c < 0x20; }

static size_t json_plain_swar(const unsigned char *s, size_t n)
{
    size_t i = 0;
    for (; n - i >= 8; i += 8) {
        uint64_t x, quote, slash;
        memcpy(&x, s + i, 8);
        quote = x ^ (ONES * '"');
        slash = x ^ (ONES * '\\');
        /* a zero byte in quote or slash, or a byte below 0x20 in x (exact for "any byte") */
        if ((((quote - ONES) & ~quote) | ((slash - ONES) & ~slash) | ((x - ONES * 0x20) & ~x)) & HIGH) break;
    }
    while (i < n && !json_special(s[i])) i++;
    return i;
}

#if defined(__GNUC__) && defined(__x86_64__)
#include <immintrin.h>
#define SCAN_AVX512 1
#define SCAN_TARGET __attribute__((target("avx512f,avx512bw")))

SCAN_TARGET static inline __m512i block(const unsigned char *s, size_t i, size_t n, __mmask64 *live)
{
    size_t left = n - i;
    *live = left >= 64 ? ~(__mmask64)0 : (((__mmask64)1 << left) - 1);
    return _mm512_maskz_loadu_epi8(*live, s + i);
}

SCAN_TARGET static size_t ascii_avx512(const unsigned char *s, size_t n)
{
    for (size_t i = 0; i < n; i += 64) {
        __mmask64 live;
        uint64_t high = (uint64_t)_mm512_movepi8_mask(block(s, i, n, &live));
        if (high) return i + (size_t)__builtin_ctzll(high);
    }
    return n;
}

SCAN_TARGET static size_t json_plain_avx512(const unsigned char *s, size_t n)
{
    const __m512i quote = _mm512_set1_epi8('"'), slash = _mm512_set1_epi8('\\'), ctl = _mm512_set1_epi8(0x20);
    for (size_t i = 0; i < n; i += 64) {
        __mmask64 live;
        __m512i x = block(s, i, n, &live);
        uint64_t hit = (uint64_t)(_mm512_cmpeq_epi8_mask(x, quote) | _mm512_cmpeq_epi8_mask(x, slash) |
                                  _mm512_cmplt_epu8_mask(x, ctl)) & (uint64_t)live;
        if (hit) return i + (size_t)__builtin_ctzll(hit);
    }
    return n;
}

static int scan_wide = -1; /* unknown yet */

static int have_avx512(void)
{
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw");
}

static int wide(void) { return la_cpu_probe_once(&scan_wide, have_avx512); }
#endif

int la_scan_wide(void)
{
#ifdef SCAN_AVX512
    return wide();
#else
    return 0;
#endif
}

size_t la_scan_ascii(const void *s, size_t n)
{
#ifdef SCAN_AVX512
    if (wide()) return ascii_avx512(s, n);
#endif
    return ascii_swar(s, n);
}

size_t la_scan_json_plain(const void *s, size_t n)
{
#ifdef SCAN_AVX512
    if (wide()) return json_plain_avx512(s, n);
#endif
    return json_plain_swar(s, n);
}

int la_scan_portable(int portable)
{
#ifdef SCAN_AVX512
    int have = have_avx512();
    __atomic_store_n(&scan_wide, portable ? 0 : have, __ATOMIC_RELAXED);
    return have;
#else
    (void)portable;
    return 0;
#endif
}
