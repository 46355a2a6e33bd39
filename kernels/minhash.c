/*
 * minhash.c - the CPU loop of MinHash signatures and LSH band keys (math in minhash_core.h).
 *
 * The permutation parameters are computed once into a table (they are a pure function of the slot
 * index). The slot loop is written so compilers vectorize it; on x86-64 GCC builds clones for AVX2 and
 * AVX-512 and picks one at load time, which changes speed only: the integers are the same.
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

/* Blocks of 64 slots keep the running minima in registers while the shingles stream past. */
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

void la_cpu_minhash(const uint64_t *h, size_t n, int k, uint32_t *sig)
{
    if (k < 1) return;
    if (k > LA_MINHASH_MAX_PERM) k = LA_MINHASH_MAX_PERM;
    pthread_once(&perm_once, perm_init);
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
