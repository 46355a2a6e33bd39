/*
 * minhash.c - the CPU loop of MinHash signatures and LSH band keys (math in minhash_core.h).
 *
 * The permutation parameters are computed once into a table (they are a pure function of the slot
 * index). Two loops give the same integers: on x86-64 hosts with AVX-512 (F + DQ, checked at run time)
 * an intrinsics loop that keeps 64-bit minima (see minhash_avx512); elsewhere a portable loop written so
 * compilers vectorize it (GCC builds clones of it for AVX2 and AVX-512 and picks one at load time).
 * la_cpu_minhash_portable always takes the portable loop, for tests.
 */
#include "minhash_core.h"
#include "near_kernels.h"

#include <pthread.h>
#include <string.h>

static uint64_t perm_a[LA_MINHASH_MAX_PERM], perm_b[LA_MINHASH_MAX_PERM];
static pthread_once_t perm_once = PTHREAD_ONCE_INIT;

static void perm_init(void)
{
    for (uint32_t k = 0; k < LA_MINHASH_MAX_PERM; k++) la_minhash_param(k, &perm_a[k], &perm_b[k]);
}

#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__linux__)
#define LA_MINHASH_CLONES __attribute__((target_clones("arch=x86-64-v4", "avx2", "default")))
#else
#define LA_MINHASH_CLONES
#endif

/* The portable loop. Blocks of 64 slots keep the running minima in registers while the shingles
 * stream past. */
LA_MINHASH_CLONES
static void minhash_loop(const uint64_t *restrict h, size_t n, int k, const uint64_t *restrict pa,
                         const uint64_t *restrict pb, uint32_t *restrict sig)
{
    enum { BLOCK = 64 };
    for (int k0 = 0; k0 < k; k0 += BLOCK) {
        int nk = k - k0 < BLOCK ? k - k0 : BLOCK;
        if (nk == BLOCK) {
            uint32_t m[BLOCK];
            for (int j = 0; j < BLOCK; j++) m[j] = UINT32_MAX;
            for (size_t i = 0; i < n; i++) {
                uint64_t x = h[i];
                for (int j = 0; j < BLOCK; j++) m[j] = la_minhash_min(m[j], la_minhash_perm(x, pa[k0 + j], pb[k0 + j]));
            }
            memcpy(sig + k0, m, sizeof m);
        } else {
            for (int j = 0; j < nk; j++) sig[k0 + j] = UINT32_MAX;
            for (size_t i = 0; i < n; i++) {
                uint64_t x = h[i];
                for (int j = 0; j < nk; j++)
                    sig[k0 + j] = la_minhash_min(sig[k0 + j], la_minhash_perm(x, pa[k0 + j], pb[k0 + j]));
            }
        }
    }
}

#if defined(__GNUC__) && defined(__x86_64__)
#define LA_MINHASH_AVX512 1
#include <immintrin.h>

/* The AVX-512 loop. la_minhash_perm is the high half of v = a * x + b (mod 2^64), and a shift right is
 * monotone, so min over x of (v >> 32) equals (min over x of v) >> 32: the minima are kept as full
 * 64-bit values (vpminuq) and shifted once at the end, which saves the per-shingle shift and the
 * 64 -> 32 bit narrowing. Per 8 slots and shingle: one vpmullq, one vpaddq, one vpminuq; 128 slots
 * are 16 accumulators, so one pass over the shingles signs K = 128. Same integers as minhash_loop
 * (tests/unit/test_near_fast.c compares them). */
#define MINHASH_AVX512_BLOCK(NV)                                                                       \
    do {                                                                                               \
        __m512i m[NV];                                                                                 \
        const uint64_t *a = pa + k0, *b = pb + k0;                                                     \
        for (int j = 0; j < NV; j++) m[j] = _mm512_set1_epi64(-1);                                     \
        for (size_t i = 0; i < n; i++) {                                                               \
            __m512i x = _mm512_set1_epi64((long long)h[i]);                                            \
            for (int j = 0; j < NV; j++) {                                                             \
                __m512i aj = _mm512_loadu_si512((const void *)(a + 8 * j));                            \
                __m512i bj = _mm512_loadu_si512((const void *)(b + 8 * j));                            \
                m[j] = _mm512_min_epu64(m[j], _mm512_add_epi64(_mm512_mullo_epi64(aj, x), bj));        \
            }                                                                                          \
        }                                                                                              \
        for (int j = 0; j < NV; j++)                                                                   \
            _mm256_storeu_si256((void *)(sig + k0 + 8 * j), _mm512_cvtepi64_epi32(_mm512_srli_epi64(m[j], 32))); \
        k0 += 8 * NV;                                                                                  \
    } while (0)

__attribute__((target("avx512f,avx512dq")))
static void minhash_avx512(const uint64_t *h, size_t n, int k, const uint64_t *pa, const uint64_t *pb,
                           uint32_t *sig)
{
    int k0 = 0;
    while (k - k0 >= 128) MINHASH_AVX512_BLOCK(16);
    while (k - k0 >= 32) MINHASH_AVX512_BLOCK(4);
    while (k - k0 >= 8) MINHASH_AVX512_BLOCK(1);
    if (k0 < k) minhash_loop(h, n, k - k0, pa + k0, pb + k0, sig + k0);
}

static int have_avx512;

static void cpu_init(void)
{
    __builtin_cpu_init();
    have_avx512 = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq");
}
#endif

static void perm_and_cpu_init(void)
{
    perm_init();
#ifdef LA_MINHASH_AVX512
    cpu_init();
#endif
}

void la_cpu_minhash(const uint64_t *h, size_t n, int k, uint32_t *sig)
{
    if (k < 1) return;
    if (k > LA_MINHASH_MAX_PERM) k = LA_MINHASH_MAX_PERM;
    pthread_once(&perm_once, perm_and_cpu_init);
#ifdef LA_MINHASH_AVX512
    if (have_avx512) {
        minhash_avx512(h, n, k, perm_a, perm_b, sig);
        return;
    }
#endif
    minhash_loop(h, n, k, perm_a, perm_b, sig);
}

void la_cpu_minhash_portable(const uint64_t *h, size_t n, int k, uint32_t *sig)
{
    if (k < 1) return;
    if (k > LA_MINHASH_MAX_PERM) k = LA_MINHASH_MAX_PERM;
    pthread_once(&perm_once, perm_and_cpu_init);
    minhash_loop(h, n, k, perm_a, perm_b, sig);
}

void la_cpu_lsh_keys(const uint32_t *sig, int bands, int rows, uint64_t *keys)
{
    for (int j = 0; j < bands; j++) keys[j] = la_band_key((uint32_t)j, sig + (size_t)j * rows, rows);
}

int la_cpu_minhash_agree(const uint32_t *x, const uint32_t *y, int k)
{
    int c = 0;
    for (int i = 0; i < k; i++) c += x[i] == y[i];
    return c;
}
