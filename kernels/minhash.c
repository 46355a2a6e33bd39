/*
 * minhash.c - the CPU loop of MinHash signatures and LSH band keys (math in minhash_core.h).
 *
 * The permutation parameters are computed once into a table (they are a pure function of the slot
 * index). The shingle hashes pass in chunks of KEY_CHUNK: each chunk is reduced to 32-bit keys once
 * (la_minhash_key), then every block of slots takes its minima over the chunk's keys. Two loops give
 * the same integers: on x86-64 hosts with AVX-512 (F + DQ, checked at run time) an intrinsics loop (see
 * minhash_avx512); elsewhere a portable loop written so compilers vectorize it (GCC builds clones of it
 * for AVX2 and AVX-512 and picks one at load time). la_cpu_minhash_portable always takes the portable
 * loop, for tests.
 */
#include "minhash_core.h"
#include "near_kernels.h"

#include <pthread.h>
#include <string.h>

enum { KEY_CHUNK = 256 };

static uint32_t perm_a[LA_MINHASH_MAX_PERM], perm_b[LA_MINHASH_MAX_PERM];
static pthread_once_t perm_once = PTHREAD_ONCE_INIT;

static void perm_init(void)
{
    for (uint32_t k = 0; k < LA_MINHASH_MAX_PERM; k++) la_minhash_param(k, &perm_a[k], &perm_b[k]);
}

#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__linux__)
#define LA_MINHASH_CLONES __attribute__((target_clones("arch=x86-64-v4", "avx2", "default")))
#define LA_MINHASH_HAS_CLONES 1
#else
#define LA_MINHASH_CLONES
#endif

/* The portable loops. keys_loop lowers sig[0 .. k) to the minima over nc keys; blocks of 64 slots
 * keep the running minima in registers while the keys stream past. */
LA_MINHASH_CLONES
static void fold_keys(const uint64_t *restrict h, size_t n, uint32_t *restrict key)
{
    for (size_t i = 0; i < n; i++) key[i] = la_minhash_key(h[i]);
}

LA_MINHASH_CLONES
static void keys_loop(const uint32_t *restrict key, size_t nc, int k, const uint32_t *restrict pa,
                      const uint32_t *restrict pb, uint32_t *restrict sig)
{
    enum { BLOCK = 64 };
    int k0 = 0;
    for (; k - k0 >= BLOCK; k0 += BLOCK) {
        uint32_t m[BLOCK];
        memcpy(m, sig + k0, sizeof m);
        for (size_t i = 0; i < nc; i++) {
            uint32_t x = key[i];
            for (int j = 0; j < BLOCK; j++) m[j] = la_minhash_min(m[j], la_minhash_perm(x, pa[k0 + j], pb[k0 + j]));
        }
        memcpy(sig + k0, m, sizeof m);
    }
    for (; k0 < k; k0++) {
        uint32_t m = sig[k0];
        for (size_t i = 0; i < nc; i++) m = la_minhash_min(m, la_minhash_perm(key[i], pa[k0], pb[k0]));
        sig[k0] = m;
    }
}

static void minhash_loop(const uint64_t *h, size_t n, int k, const uint32_t *pa, const uint32_t *pb,
                         uint32_t *sig)
{
    uint32_t key[KEY_CHUNK];
    for (int j = 0; j < k; j++) sig[j] = UINT32_MAX;
    for (size_t i0 = 0; i0 < n; i0 += KEY_CHUNK) {
        size_t nc = n - i0 < KEY_CHUNK ? n - i0 : KEY_CHUNK;
        fold_keys(h + i0, nc, key);
        keys_loop(key, nc, k, pa, pb, sig);
    }
}

#include "mix_avx512.h"
#ifdef LA_MIX_AVX512
#define LA_MINHASH_AVX512 1

/* The AVX-512 loop. Keys: 8 shingle hashes at a time through la_mix64 (two vpmullq), narrowed to 32
 * bits. Slots: 16 per 512-bit vector; per 16 slots and key one vpmulld, one vpaddd, one vpminud. A
 * block of 128 slots holds its 8 vectors of a, b and minima in registers (24 of the 32), so one pass
 * over the keys signs K = 128. Same integers as minhash_loop (tests/unit/test_near_fast.c compares
 * them). */
__attribute__((target("avx512f,avx512dq")))
static void fold_keys_avx512(const uint64_t *h, size_t n, uint32_t *key)
{
    const __m512i seed = _mm512_set1_epi64((long long)LA_MINHASH_SEED);
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        __m512i x = la_mix64_x8(_mm512_xor_si512(_mm512_loadu_si512((const void *)(h + i)), seed));
        _mm256_storeu_si256((void *)(key + i), _mm512_cvtepi64_epi32(x));
    }
    for (; i < n; i++) key[i] = la_minhash_key(h[i]);
}

#define MINHASH_AVX512_BLOCK(NV)                                                                       \
    do {                                                                                               \
        __m512i a[NV], b[NV], m[NV];                                                                   \
        for (int j = 0; j < NV; j++) {                                                                 \
            a[j] = _mm512_loadu_si512((const void *)(pa + k0 + 16 * j));                               \
            b[j] = _mm512_loadu_si512((const void *)(pb + k0 + 16 * j));                               \
            m[j] = _mm512_loadu_si512((const void *)(sig + k0 + 16 * j));                              \
        }                                                                                              \
        for (size_t i = 0; i < nc; i++) {                                                              \
            __m512i x = _mm512_set1_epi32((int)key[i]);                                                \
            for (int j = 0; j < NV; j++)                                                               \
                m[j] = _mm512_min_epu32(m[j], _mm512_add_epi32(_mm512_mullo_epi32(a[j], x), b[j]));    \
        }                                                                                              \
        for (int j = 0; j < NV; j++) _mm512_storeu_si512((void *)(sig + k0 + 16 * j), m[j]);          \
        k0 += 16 * NV;                                                                                 \
    } while (0)

__attribute__((target("avx512f,avx512dq")))
static void minhash_avx512(const uint64_t *h, size_t n, int k, const uint32_t *pa, const uint32_t *pb,
                           uint32_t *sig)
{
    uint32_t key[KEY_CHUNK];
    for (int j = 0; j < k; j++) sig[j] = UINT32_MAX;
    for (size_t i0 = 0; i0 < n; i0 += KEY_CHUNK) {
        size_t nc = n - i0 < KEY_CHUNK ? n - i0 : KEY_CHUNK;
        fold_keys_avx512(h + i0, nc, key);
        int k0 = 0;
        while (k - k0 >= 128) MINHASH_AVX512_BLOCK(8);
        while (k - k0 >= 32) MINHASH_AVX512_BLOCK(2);
        while (k - k0 >= 16) MINHASH_AVX512_BLOCK(1);
        if (k0 < k) keys_loop(key, nc, k - k0, pa + k0, pb + k0, sig + k0);
    }
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

const char *la_cpu_minhash_kernel(void)
{
    pthread_once(&perm_once, perm_and_cpu_init);
#ifdef LA_MINHASH_AVX512
    if (have_avx512) return "AVX-512";
#endif
#ifdef LA_MINHASH_HAS_CLONES
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx2")) return "portable loop (its AVX2 clone)";
#endif
    return "portable loop";
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
