/* test_lsh.c - band selection for known thresholds (values from an independent numerical
 * minimization of the same weighted error), the candidate probability, and the bucket table. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdlib.h>

#include "lsh.h"
#include "shingle_core.h"

static void test_known_band_choices(void **state)
{
    struct {
        double t, wfp;
        int b, r;
        double recall;
    } cases[] = {
        {0.5, 0.5, 25, 5, 0.5478}, /* the classic balanced choices at 128 permutations */
        {0.8, 0.5, 9, 13, 0.3988},
        {0.9, 0.5, 5, 25, 0.3110},
        {0.35, 0.1, 42, 3, 0.8413}, /* recall-weighted, as the near tier uses */
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        int b = 0, r = 0;
        double rec = 0;
        assert_int_equal(la_lsh_choose(cases[i].t, 128, cases[i].wfp, 1.0 - cases[i].wfp, &b, &r, &rec), LA_OK);
        assert_int_equal(b, cases[i].b);
        assert_int_equal(r, cases[i].r);
        assert_true(fabs(rec - cases[i].recall) < 1e-3);
        assert_true(b * r <= 128);
    }
}

/* The weighted error of (b, r) by the plain rule: Simpson over 256 intervals of the candidate
 * probability below the threshold and of its complement above, each point from
 * la_lsh_candidate_prob. */
static double plain_error(double t, int b, int r, double wfp)
{
    double fp = 0.0, fn = 0.0, hf = t / 256, hn = (1.0 - t) / 256;
    for (int i = 0; i <= 256; i++) {
        double w = (i == 0 || i == 256) ? 1.0 : (i % 2 ? 4.0 : 2.0);
        fp += w * la_lsh_candidate_prob(i * hf, b, r);
        fn += w * (1.0 - la_lsh_candidate_prob(t + i * hn, b, r));
    }
    return wfp * fp * hf / 3.0 + (1.0 - wfp) * fn * hn / 3.0;
}

/* The choice minimizes that error over every b * r <= K, for thresholds and weights across their
 * range: its error is the least of all, up to rounding. */
static void test_choice_minimizes_the_plain_error(void **state)
{
    int ks[] = {16, 64, 128};
    double wfps[] = {0.15, 0.5};
    for (size_t k = 0; k < 3; k++)
        for (size_t w = 0; w < 2; w++)
            for (int ti = 1; ti <= 19; ti++) {
                double t = ti * 0.05;
                int b, r;
                assert_int_equal(la_lsh_choose(t, ks[k], wfps[w], 1.0 - wfps[w], &b, &r, NULL), LA_OK);
                double chosen = plain_error(t, b, r, wfps[w]), least = INFINITY;
                for (int bb = 1; bb <= ks[k]; bb++)
                    for (int rr = 1; rr <= ks[k] / bb; rr++) {
                        double e = plain_error(t, bb, rr, wfps[w]);
                        if (e < least) least = e;
                    }
                assert_true(chosen <= least + 1e-12);
            }
}

static void test_candidate_probability(void **state)
{
    assert_true(fabs(la_lsh_candidate_prob(0.5, 1, 1) - 0.5) < 1e-12);
    assert_true(fabs(la_lsh_candidate_prob(0.5, 2, 1) - 0.75) < 1e-12);
    assert_true(fabs(la_lsh_candidate_prob(0.5, 1, 2) - 0.25) < 1e-12);
    assert_true(la_lsh_candidate_prob(1.0, 9, 13) == 1.0);
    assert_true(la_lsh_candidate_prob(0.0, 9, 13) == 0.0);
    /* More weight on misses buys recall at the threshold. */
    int b1, r1, b2, r2;
    double rec1, rec2;
    la_lsh_choose(0.5, 128, 0.5, 0.5, &b1, &r1, &rec1);
    la_lsh_choose(0.5, 128, 0.1, 0.9, &b2, &r2, &rec2);
    assert_true(rec2 > rec1);
}

static void test_bad_arguments(void **state)
{
    int b, r;
    assert_int_equal(la_lsh_choose(0.0, 128, 0.5, 0.5, &b, &r, NULL), LA_EINVAL);
    assert_int_equal(la_lsh_choose(1.5, 128, 0.5, 0.5, &b, &r, NULL), LA_EINVAL);
    assert_int_equal(la_lsh_choose(NAN, 128, 0.5, 0.5, &b, &r, NULL), LA_EINVAL);
    assert_int_equal(la_lsh_choose(0.5, 0, 0.5, 0.5, &b, &r, NULL), LA_EINVAL);
    assert_int_equal(la_lsh_choose(0.5, 128, -1.0, 0.5, &b, &r, NULL), LA_EINVAL);
}

static void test_buckets(void **state)
{
    enum { N = 20000 };
    la_bucket_entry *e = malloc(N * sizeof *e);
    /* Keys 0..N/2-1 (mixed), each twice, rows in input order. */
    for (uint32_t i = 0; i < N; i++) e[i] = (la_bucket_entry){.key = la_mix64(i % (N / 2) + 1), .row = i};
    la_buckets *b;
    assert_int_equal(la_buckets_new(e, N, &b), LA_OK);
    assert_int_equal(la_buckets_size(b), N);
    assert_int_equal(la_buckets_keys(b), N / 2);
    for (uint32_t k = 0; k < N / 2; k++) {
        const la_bucket_entry *f;
        assert_int_equal(la_buckets_find(b, la_mix64(k + 1), &f), 2);
        assert_int_equal(f[0].row, k);
        assert_int_equal(f[1].row, k + N / 2);
    }
    const la_bucket_entry *f;
    assert_int_equal(la_buckets_find(b, la_mix64(N + 7), &f), 0);
    la_buckets_free(b);
    la_buckets_free(NULL);

    la_buckets *empty;
    assert_int_equal(la_buckets_new(malloc(1), 0, &empty), LA_OK);
    assert_int_equal(la_buckets_find(empty, 42, &f), 0);
    la_buckets_free(empty);
}

/* A table past the filter's size threshold: every key is found with all its rows (no key turned
 * away by the filter), keys that are absent are not, and neither are keys that share a present
 * key's slot bits or its high half. */
static void test_buckets_filtered(void **state)
{
    enum { KEYS = 60000, N = 3 * KEYS };
    la_bucket_entry *e = malloc(N * sizeof *e);
    for (uint32_t i = 0; i < N; i++) e[i] = (la_bucket_entry){.key = la_mix64(i % KEYS + 1), .row = i};
    la_buckets *b;
    assert_int_equal(la_buckets_new(e, N, &b), LA_OK);
    assert_int_equal(la_buckets_keys(b), KEYS);
    for (uint32_t k = 0; k < KEYS; k++) {
        const la_bucket_entry *f;
        uint64_t key = la_mix64(k + 1);
        la_buckets_prefetch(b, key);
        assert_int_equal(la_buckets_find(b, key, &f), 3);
        assert_int_equal(f[0].row, k);
        assert_int_equal(f[2].row, k + 2 * KEYS);
        assert_int_equal(la_buckets_find(b, key ^ 1ull << 63, &f), 0);
        assert_int_equal(la_buckets_find(b, key ^ 1, &f), 0);
    }
    size_t found = 0;
    for (uint32_t k = 0; k < 200000; k++) {
        const la_bucket_entry *f;
        found += la_buckets_find(b, la_mix64(KEYS + 1 + k), &f);
    }
    assert_int_equal(found, 0);
    la_buckets_free(b);
}

/* Keys of 1 to 1,000 entries each (the slot keeps counts up to 254 and counts the rest in the
 * entries): every key finds all its rows, in input order; a key differing from a present one only
 * in bits the slot's tag leaves out (32 to 39) or in its lowest bit finds none. */
static void test_buckets_counts(void **state)
{
    (void)state;
    static const uint32_t counts[] = {1, 2, 253, 254, 255, 256, 257, 511, 1000, 3};
    enum { NK = sizeof counts / sizeof *counts };
    size_t n = 0;
    for (size_t k = 0; k < NK; k++) n += counts[k];
    la_bucket_entry *e = malloc(n * sizeof *e);
    /* the keys' entries interleaved: entry j of key k after entry j of every key before it */
    size_t w = 0;
    for (uint32_t j = 0; j < 1000; j++)
        for (size_t k = 0; k < NK; k++)
            if (j < counts[k]) e[w++] = (la_bucket_entry){.key = la_mix64(k + 100), .row = (uint32_t)(k * 10000 + j)};
    assert_int_equal(w, n);
    la_buckets *b;
    assert_int_equal(la_buckets_new(e, n, &b), LA_OK);
    assert_int_equal(la_buckets_keys(b), NK);
    for (size_t k = 0; k < NK; k++) {
        const la_bucket_entry *f;
        uint64_t key = la_mix64(k + 100);
        assert_int_equal(la_buckets_find(b, key, &f), counts[k]);
        for (uint32_t j = 0; j < counts[k]; j++) assert_int_equal(f[j].row, k * 10000 + j);
        for (int bit = 32; bit < 40; bit++) assert_int_equal(la_buckets_find(b, key ^ 1ull << bit, &f), 0);
        assert_int_equal(la_buckets_find(b, key ^ 1, &f), 0);
    }
    la_buckets_free(b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_known_band_choices),
        cmocka_unit_test(test_choice_minimizes_the_plain_error),
        cmocka_unit_test(test_candidate_probability),
        cmocka_unit_test(test_buckets_counts),
        cmocka_unit_test(test_bad_arguments),
        cmocka_unit_test(test_buckets),
        cmocka_unit_test(test_buckets_filtered),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
