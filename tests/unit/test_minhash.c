/* test_minhash.c - MinHash signatures, band keys and SimHash: values pinned from an independent
 * implementation (a short Python script, not this library) of the formulas in
 * kernels/minhash_core.h and simhash_core.h, and the properties a user relies on (set semantics,
 * prefix of K, the estimate tracks Jaccard). The MinHash formulas pinned here:
 *   key(x)  = low 32 bits of la_mix64(x ^ LA_MINHASH_SEED), LA_MINHASH_SEED = "minhash2"
 *   a_k     = (high 32 bits of SplitMix64 output 2k) | 1,  b_k = high 32 bits of output 2k+1
 *   slot k  = min over the set of (a_k * key(x) + b_k) mod 2^32 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "minhash_core.h"
#include "near_kernels.h"
#include "simhash_core.h"

static void test_known_signatures(void **state)
{
    uint32_t a, b;
    la_minhash_param(0, &a, &b);
    assert_true(a == 0xe9a95741u);
    assert_true(b == 0x9d9abe11u);
    la_minhash_param(127, &a, &b);
    assert_true(a == 0x4094e951u);
    assert_true(b == 0x754b8a22u);
    assert_true(la_minhash_key(0) == 0x6b287ae9u);
    assert_true(la_minhash_key(1) == 0xe2d43bbdu);
    uint64_t set[] = {1, 2, 3};
    uint32_t sig[128];
    la_cpu_minhash(set, 3, 4, sig);
    uint32_t want[] = {0x6467f0db, 0x25ceea85, 0x3152904a, 0x0e3ffdb9};
    assert_memory_equal(sig, want, sizeof want);

    const char *text = "the quick brown fox jumps over the lazy dog";
    uint64_t h[16];
    size_t n = la_cpu_shingle(text, strlen(text), LA_SHINGLE_WORD, 2, h, 16);
    assert_int_equal(n, 8);
    la_cpu_minhash(h, n, 4, sig);
    uint32_t want2[] = {0x094461d6, 0x0bc62de6, 0x1e1c1da0, 0x22559187};
    assert_memory_equal(sig, want2, sizeof want2);
    /* K = 128 (the vector blocks): the first slots again, and the last four. */
    la_cpu_minhash(h, n, 128, sig);
    assert_memory_equal(sig, want2, sizeof want2);
    uint32_t want3[] = {0x2676b8f7, 0x13d6f035, 0x03ee0c8e, 0x26941077};
    assert_memory_equal(sig + 124, want3, sizeof want3);
    la_cpu_minhash_portable(h, n, 128, sig);
    assert_memory_equal(sig + 124, want3, sizeof want3);
    la_cpu_shingle_sort(h, n);
    assert_true(la_cpu_simhash(h, n) == 0x06ae30a82199c06eull);
}

static void test_set_semantics_and_prefix(void **state)
{
    uint64_t x[] = {11, 22, 33, 44}, y[] = {44, 22, 22, 11, 33, 11};
    uint32_t sx[128], sy[128], s64[64], empty[8];
    la_cpu_minhash(x, 4, 128, sx);
    la_cpu_minhash(y, 6, 128, sy);
    assert_memory_equal(sx, sy, sizeof sx); /* order and duplicates do not matter */
    la_cpu_minhash(x, 4, 64, s64);
    assert_memory_equal(sx, s64, sizeof s64); /* K=64 is a prefix of K=128 */
    la_cpu_minhash(x, 0, 8, empty);
    for (int i = 0; i < 8; i++) assert_true(empty[i] == UINT32_MAX);
    assert_int_equal(la_cpu_minhash_agree(sx, sy, 128), 128);
}

static void test_estimate_tracks_jaccard(void **state)
{
    /* |A| = |B| = 1000, 600 shared: Jaccard = 600 / 1400 = 0.4286. */
    static uint64_t a[1000], b[1000];
    for (int i = 0; i < 1000; i++) {
        a[i] = la_mix64((uint64_t)i + 1);
        b[i] = la_mix64((uint64_t)(i < 600 ? i : i + 5000) + 1);
    }
    uint32_t sa[512], sb[512];
    la_cpu_minhash(a, 1000, 512, sa);
    la_cpu_minhash(b, 1000, 512, sb);
    double est = la_cpu_minhash_agree(sa, sb, 512) / 512.0;
    assert_true(fabs(est - 600.0 / 1400.0) < 0.06);
    /* Disjoint sets almost never agree. */
    for (int i = 0; i < 1000; i++) b[i] = la_mix64((uint64_t)i + 100000);
    la_cpu_minhash(b, 1000, 512, sb);
    assert_true(la_cpu_minhash_agree(sa, sb, 512) < 10);
}

static void test_band_keys(void **state)
{
    uint32_t s1[8] = {1, 2, 3, 4, 5, 6, 7, 8}, s2[8] = {1, 2, 3, 4, 5, 6, 7, 9};
    uint64_t k1[4], k2[4];
    la_cpu_lsh_keys(s1, 4, 2, k1);
    la_cpu_lsh_keys(s2, 4, 2, k2);
    assert_true(k1[0] == k2[0] && k1[1] == k2[1] && k1[2] == k2[2]);
    assert_true(k1[3] != k2[3]);
    /* The band index is part of the key: equal values in two bands give two keys. */
    uint32_t same[4] = {7, 7, 7, 7};
    uint64_t k[2];
    la_cpu_lsh_keys(same, 2, 2, k);
    assert_true(k[0] != k[1]);
    assert_true(k[0] == la_band_key(0, same, 2));
}

static void test_simhash(void **state)
{
    /* One shingle: the fingerprint is that shingle's remixed hash. */
    uint64_t one = 1234567;
    assert_true(la_cpu_simhash(&one, 1) == la_simhash_hash(one));
    /* Weights are counts: pinned value of {5 (twice), 7}. */
    uint64_t w[] = {5, 5, 7};
    assert_true(la_cpu_simhash(w, 3) == 0xefa4a19aef30db91ull);
    assert_int_equal(la_simhash_dist(0, ~0ull), 64);
    assert_int_equal(la_simhash_dist(0xf0, 0x0f), 8);
    /* A small edit of a long text moves the fingerprint a little; an unrelated text, about half. */
    static uint64_t a[400], b[400], c[400];
    for (int i = 0; i < 400; i++) {
        a[i] = la_mix64((uint64_t)i + 1);
        b[i] = la_mix64((uint64_t)(i < 390 ? i : i + 1000) + 1);
        c[i] = la_mix64((uint64_t)i + 77777);
    }
    la_cpu_shingle_sort(a, 400);
    la_cpu_shingle_sort(b, 400);
    la_cpu_shingle_sort(c, 400);
    uint64_t ha = la_cpu_simhash(a, 400), hb = la_cpu_simhash(b, 400), hc = la_cpu_simhash(c, 400);
    assert_true(la_simhash_dist(ha, hb) <= 8);
    assert_true(la_simhash_dist(ha, hc) >= 16);
}


static int cmp_u64(const void *x, const void *y)
{
    uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;
    return (a > b) - (a < b);
}

/* The shingle sort against qsort: sizes around its thresholds, uniform hashes, many equal ones,
 * hashes crowded into one bucket, and sorted and reversed input. */
static void test_shingle_sort(void **state)
{
    (void)state;
    static const size_t sizes[] = {0, 1, 2, 24, 25, 127, 128, 129, 300, 1000, 4095, 4096, 8192, 16385, 70000};
    uint64_t *a = malloc(70000 * sizeof *a), *b = malloc(70000 * sizeof *b);
    assert_non_null(a);
    assert_non_null(b);
    uint64_t x = 12345;
    for (int kind = 0; kind < 5; kind++)
        for (size_t s = 0; s < sizeof sizes / sizeof *sizes; s++) {
            size_t n = sizes[s];
            for (size_t i = 0; i < n; i++) {
                x = la_mix64(x + i);
                a[i] = kind == 0 ? x
                       : kind == 1 ? x % 7                          /* many equal values */
                       : kind == 2 ? (x >> 20) | 0xfff0000000000000ull /* one top bucket */
                       : kind == 3 ? (uint64_t)i * 977              /* sorted */
                                   : ~(uint64_t)i;                  /* reversed */
            }
            memcpy(b, a, n * sizeof *a);
            la_cpu_shingle_sort(a, n);
            if (n) qsort(b, n, sizeof *b, cmp_u64);
            assert_memory_equal(a, b, n * sizeof *a);
        }
    free(a);
    free(b);
}

/* The CPU SimHash counts eight bits per add (one masked byte add of 64 bits with AVX-512, 32 byte
 * masks per add with AVX2, eight 8-bit lanes of a word without); each must give the bits of the
 * per-bit vote loop that the CUDA kernel runs, for runs of equal shingles of any weight (past the
 * byte counters' 255 too), sorted or shuffled. */
static void test_simhash_matches_vote_loop(void **state)
{
    (void)state;
    uint64_t *h = malloc(5000 * sizeof *h);
    assert_non_null(h);
    uint64_t x = 99;
    for (int round = 0; round < 200; round++) {
        size_t n = 0, want = (size_t)(round * 23 % 4000) + 1;
        while (n < want) {
            x = la_mix64(x + 1);
            size_t run = round % 3 == 0 ? 1 : (size_t)(x % (round % 3 == 1 ? 5 : 700)) + 1;
            for (size_t k = 0; k < run && n < want; k++) h[n++] = x >> 3;
        }
        la_cpu_shingle_sort(h, n);
        int32_t acc[64] = {0};
        for (size_t i = 0; i < n;) {
            size_t j = i + 1;
            while (j < n && h[j] == h[i]) j++;
            la_simhash_vote(acc, la_simhash_hash(h[i]), (int32_t)(j - i));
            i = j;
        }
        assert_true(la_cpu_simhash(h, n) == la_simhash_finish(acc));
        assert_true(la_cpu_simhash_portable(h, n) == la_simhash_finish(acc));
        assert_true(la_cpu_simhash_avx2(h, n) == la_simhash_finish(acc));
        /* in any order the votes add up alike (the near tier signs other-side rows unsorted) */
        for (size_t i = n; i > 1; i--) {
            x = la_mix64(x + i);
            size_t j = (size_t)(x % i);
            uint64_t t = h[i - 1];
            h[i - 1] = h[j];
            h[j] = t;
        }
        assert_true(la_cpu_simhash(h, n) == la_simhash_finish(acc));
        assert_true(la_cpu_simhash_portable(h, n) == la_simhash_finish(acc));
        assert_true(la_cpu_simhash_avx2(h, n) == la_simhash_finish(acc));
    }
    if (!la_cpu_simhash_has_avx2()) print_message("no AVX2 on this CPU: its SimHash loop was not tested\n");
    free(h);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_known_signatures),   cmocka_unit_test(test_set_semantics_and_prefix),
        cmocka_unit_test(test_estimate_tracks_jaccard), cmocka_unit_test(test_band_keys),
        cmocka_unit_test(test_simhash),            cmocka_unit_test(test_shingle_sort),
        cmocka_unit_test(test_simhash_matches_vote_loop),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
