/*
 * mix_avx512.h - la_mix64 (shingle_core.h) of 8 lanes at once with AVX-512 (F + DQ: two vpmullq),
 * for the CPU loops that mix hashes 8 at a time (MinHash keys, grading's word keys). x86-64 with GCC
 * or clang only (LA_MIX_AVX512 is then defined); the caller checks the CPU at run time.
 */
#ifndef LA_MIX_AVX512_H
#define LA_MIX_AVX512_H

#if defined(__GNUC__) && defined(__x86_64__)
#define LA_MIX_AVX512 1
#include <immintrin.h>

__attribute__((target("avx512f,avx512dq"))) static inline __m512i la_mix64_x8(__m512i x)
{
    x = _mm512_xor_si512(x, _mm512_srli_epi64(x, 30));
    x = _mm512_mullo_epi64(x, _mm512_set1_epi64((long long)0xbf58476d1ce4e5b9ull));
    x = _mm512_xor_si512(x, _mm512_srli_epi64(x, 27));
    x = _mm512_mullo_epi64(x, _mm512_set1_epi64((long long)0x94d049bb133111ebull));
    return _mm512_xor_si512(x, _mm512_srli_epi64(x, 31));
}
#endif

#endif /* LA_MIX_AVX512_H */
