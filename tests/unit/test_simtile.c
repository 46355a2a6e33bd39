/* test_simtile.c - the blocked-GEMM similarity join against a brute-force reference: the same pair
 * set and the same cosines for any block size, thread count and seen-side batching, including
 * pairs placed within a few ulps of the threshold. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "simtile.h"
#include "simtile_core.h"
#include "simtile_i8.h"

#define RAND_FIXTURE_SEED 88172645463325252ull
#include "rand_fixture.h"
/* s = cos(theta) * q + sin(theta) * r, r orthogonal to q: cosine c up to rounding. */
static void at_cosine(const float *q, float *s, size_t d, double c) {
    float *r = malloc(d * sizeof *r);
    random_unit(r, d);
    double dot = 0;
    for (size_t i = 0; i < d; i++) dot += (double)r[i] * q[i];
    for (size_t i = 0; i < d; i++) r[i] = (float)(r[i] - dot * q[i]);
    unit(r, d);
    double sn = sqrt(1 - c * c);
    for (size_t i = 0; i < d; i++) s[i] = (float)(c * q[i] + sn * r[i]);
    free(r);
}

typedef struct corpus {
    float *Q, *S;
    size_t nq, ns, d;
} corpus;

/* Random corpus with planted pairs around thr: some clearly above, some within 1e-6, some below. */
static corpus make_corpus(size_t nq, size_t ns, size_t d, float thr) {
    corpus c = {malloc(nq * d * sizeof(float)), malloc(ns * d * sizeof(float)), nq, ns, d};
    for (size_t i = 0; i < nq; i++) random_unit(c.Q + i * d, d);
    for (size_t i = 0; i < ns; i++) random_unit(c.S + i * d, d);
    const double offs[] = {0.1, 0.02, 3e-6, 1e-6, 2e-7, 0, -2e-7, -1e-6, -3e-6, -0.02};
    for (size_t i = 0; i < ns / 3; i++) {
        size_t q = (i * 7) % nq;
        double cc = thr + offs[i % 10];
        if (cc > 1) cc = 1;
        at_cosine(c.Q + q * d, c.S + ((i * 13) % ns) * d, d, cc);
    }
    return c;
}

static void corpus_free(corpus *c) {
    free(c->Q);
    free(c->S);
}

static int near_threshold(const corpus *c, float thr) {
    int n = 0;
    for (size_t q = 0; q < c->nq; q++)
        for (size_t s = 0; s < c->ns; s++) {
            float e = la_simtile_dot(c->Q + q * c->d, c->S + s * c->d, c->d);
            if (fabsf(e - thr) < 2e-6f) n++;
        }
    return n;
}

/* Brute force with the same fixed-order dot product. */
static void reference(const corpus *c, float thr, uint32_t k, la_simtile_hits *hits,
                      uint32_t *ti, float *tc) {
    la_simtile_top_init(ti, tc, c->nq, k);
    for (size_t q = 0; q < c->nq; q++)
        for (size_t s = 0; s < c->ns; s++) {
            float e = la_simtile_dot(c->Q + q * c->d, c->S + s * c->d, c->d);
            if (e >= thr) {
                if (hits->n == hits->cap) {
                    hits->cap = hits->cap ? hits->cap * 2 : 64;
                    hits->v = realloc(hits->v, hits->cap * sizeof *hits->v);
                }
                hits->v[hits->n++] = (la_simtile_hit){(uint32_t)q, (uint32_t)s, e};
            }
            la_simtile_topk_insert(ti + q * k, tc + q * k, k, (uint32_t)s, e);
        }
}

static void assert_same(const la_simtile_hits *a, const la_simtile_hits *b) {
    assert_int_equal(a->n, b->n);
    for (size_t i = 0; i < a->n; i++) {
        assert_int_equal(a->v[i].q, b->v[i].q);
        assert_int_equal(a->v[i].s, b->v[i].s);
        assert_true(a->v[i].cosine == b->v[i].cosine);
    }
}

static void check_config(const corpus *c, float thr, uint32_t k, int threads, size_t bq, size_t bs,
                         size_t batch) {
    la_simtile_hits ref = {0}, got = {0};
    uint32_t *ri = malloc(c->nq * k * sizeof *ri), *gi = malloc(c->nq * k * sizeof *gi);
    float *rc = malloc(c->nq * k * sizeof *rc), *gc = malloc(c->nq * k * sizeof *gc);
    reference(c, thr, k, &ref, ri, rc);
    la_simtile_params p;
    la_simtile_params_default(&p);
    p.threshold = thr;
    p.topk = k;
    p.threads = threads;
    p.block_q = bq;
    p.block_s = bs;
    la_simtile_top_init(gi, gc, c->nq, k);
    la_simtile_stats st = {0};
    for (size_t s0 = 0; s0 < c->ns; s0 += batch) {
        size_t n = c->ns - s0 < batch ? c->ns - s0 : batch;
        assert_int_equal(la_cpu_simtile(c->Q, c->nq, c->S + s0 * c->d, n, c->d, (uint32_t)s0, &p,
                                        &got, gi, gc, &st),
                         LA_OK);
    }
    /* batches append in batch order; bring them into (q, s) order like the reference */
    for (size_t i = 1; i < got.n; i++) {
        la_simtile_hit x = got.v[i];
        size_t j = i;
        while (j > 0 && (got.v[j - 1].q > x.q || (got.v[j - 1].q == x.q && got.v[j - 1].s > x.s))) {
            got.v[j] = got.v[j - 1];
            j--;
        }
        got.v[j] = x;
    }
    assert_same(&ref, &got);
    assert_memory_equal(ri, gi, c->nq * k * sizeof *ri);
    assert_memory_equal(rc, gc, c->nq * k * sizeof *rc);
    assert_true(st.gemm_flops == 2.0 * c->nq * c->ns * c->d);
    la_simtile_hits_free(&ref);
    la_simtile_hits_free(&got);
    free(ri), free(gi), free(rc), free(gc);
}

static void test_matches_brute_force(void **state) {
    const float thr = 0.8f;
    corpus c = make_corpus(150, 900, 48, thr);
    assert_true(near_threshold(&c, thr) > 20); /* the planted pairs do sit at the threshold */
    check_config(&c, thr, 3, 1, 0, 0, c.ns);
    check_config(&c, thr, 3, 2, 0, 0, c.ns);
    check_config(&c, thr, 1, 2, 7, 13, c.ns);   /* ragged tiles */
    check_config(&c, thr, 5, 2, 32, 64, 250);   /* seen side in batches */
    check_config(&c, thr, 2, 1, 1, 1, 97);
    corpus_free(&c);
}

/* Every held-out row has a crowd of seen rows within a few millionths of one cosine, far closer
 * than the int8 path's error bound, spread over the seen side so that they fall in different tiles:
 * the floor rises to the tile's best lower bound before the crowd is re-scored, and the nearest row
 * must still be the one brute force finds, with every tiling and path. */
static corpus make_crowds(size_t nq, size_t ns, size_t d, double at, size_t crowd) {
    corpus c = {malloc(nq * d * sizeof(float)), malloc(ns * d * sizeof(float)), nq, ns, d};
    for (size_t i = 0; i < nq; i++) random_unit(c.Q + i * d, d);
    for (size_t i = 0; i < ns; i++) random_unit(c.S + i * d, d);
    for (size_t q = 0; q < nq; q++)
        for (size_t m = 0; m < crowd; m++) {
            size_t s = (q * 31 + m * (ns / crowd)) % ns;
            at_cosine(c.Q + q * d, c.S + s * d, d, at + (double)((m * 5 + q) % crowd) * 1e-6);
        }
    return c;
}

static void test_nearest_in_a_crowd(void **state) {
    corpus c = make_crowds(24, 960, 256, 0.6, 12);
    check_config(&c, 0.9f, 1, 1, 0, 64, c.ns);
    check_config(&c, 0.9f, 1, 2, 8, 32, 400);
    check_config(&c, 0.6f + 5e-6f, 1, 2, 0, 48, c.ns); /* some of each crowd reach the threshold */
    check_config(&c, 0.9f, 3, 2, 0, 64, c.ns);
    corpus_free(&c);
}

/* Zero held-out rows (empty texts) take only the first entries of each tile aside: their lists
 * must still be brute force's (the lowest seen indices, cosine 0), with zero seen rows too, any
 * tiling, batches and list length. */
static void test_zero_rows(void **state) {
    corpus c = make_corpus(40, 300, 48, 0.8f);
    const size_t zq[] = {0, 7, 39}, zs[] = {0, 5, 299};
    for (size_t i = 0; i < 3; i++) {
        memset(c.Q + zq[i] * c.d, 0, c.d * sizeof *c.Q);
        memset(c.S + zs[i] * c.d, 0, c.d * sizeof *c.S);
    }
    check_config(&c, 0.8f, 1, 2, 0, 0, c.ns);
    check_config(&c, 0.8f, 3, 2, 8, 16, 100);
    check_config(&c, 0.8f, 5, 1, 3, 2, 7);
    corpus_free(&c);
}

static void test_other_dims_and_thresholds(void **state) {
    corpus c = make_corpus(64, 700, 384, 0.9f);
    check_config(&c, 0.9f, 4, 2, 0, 0, c.ns);
    check_config(&c, 0.5f, 1, 2, 16, 100, 300);
    corpus_free(&c);
    corpus e = make_corpus(33, 41, 5, 0.95f);
    check_config(&e, 0.95f, 1, 2, 0, 0, e.ns);
    corpus_free(&e);
}

/* The same joins on the sgemm path where the int8 one would run (LEAKAUDIT_NO_INT8). */
static void test_sgemm_path_too(void **state) {
    setenv("LEAKAUDIT_NO_INT8", "1", 1);
    test_matches_brute_force(state);
    test_other_dims_and_thresholds(state);
    test_nearest_in_a_crowd(state);
    test_zero_rows(state);
    unsetenv("LEAKAUDIT_NO_INT8");
}

/* The joins through the AVX2 kernel where the CPU would run the VNNI one (LEAKAUDIT_INT8=avx2);
 * on a CPU without VNNI this is the default path, checked once more. */
static void test_avx2_path_too(void **state) {
    setenv("LEAKAUDIT_INT8", "avx2", 1);
    if (la_simtile_i8_kernel(64) != LA_I8_AVX2) {
        unsetenv("LEAKAUDIT_INT8");
        skip();
    }
    test_matches_brute_force(state);
    test_other_dims_and_thresholds(state);
    test_nearest_in_a_crowd(state);
    test_zero_rows(state);
    unsetenv("LEAKAUDIT_INT8");
}

/* One int8 tile against products computed from the quantized values themselves, and the bound of
 * simtile_i8.h against the exact float product. */
static void check_int8_tile(const float *Q, size_t nq, const float *S, size_t ns, size_t d, int kernel) {
    la_i8_side qi, si;
    assert_int_equal(la_i8_quantize_q(Q, nq, d, 1, &qi), 0);
    assert_int_equal(la_i8_quantize_s(S, ns, d, 1, &si), 0);
    assert_int_equal(qi.kernel, kernel);
    size_t ldc = (ns + LA_I8_NR - 1) / LA_I8_NR * LA_I8_NR;
    int32_t *C = calloc(nq * ldc, sizeof *C);
    la_i8_tile(&qi, 0, nq, &si, 0, ns, C, ldc);
    for (size_t i = 0; i < nq; i++)
        for (size_t j = 0; j < ns; j++) {
            const int8_t *q = (const int8_t *)qi.data + i * qi.dp;
            const uint8_t *panel = si.data + (j / LA_I8_NR) * LA_I8_NR * si.dp;
            int64_t want = 0;
            double exact = 0;
            for (size_t k = 0; k < d; k++) {
                want += (int64_t)q[k] * ((int64_t)panel[(k / 4) * (4 * LA_I8_NR) + (j % LA_I8_NR) * 4 + k % 4] - 128);
                exact += (double)Q[i * d + k] * (double)S[j * d + k];
            }
            assert_int_equal(C[i * ldc + j], want);
            double ra = qi.inv_scale[i], rb = si.inv_scale[j];
            double approx = (double)C[i * ldc + j] * ra * rb;
            double bound = ((double)si.half_l1[j] + (double)qi.half_l1[i]) * ra * rb;
            assert_true(fabs(exact - approx) <= bound + 1e-9 * (1 + fabs(exact)));
            /* the Euclidean form, from each row's norms alone */
            double l2 = (double)qi.err[i] * si.norm[j] + (double)qi.norm[i] * si.err[j] + (double)qi.err[i] * si.err[j];
            assert_true(fabs(exact - approx) <= l2 + 1e-9 * (1 + fabs(exact)));
            /* the norms are those of the rows as quantized and of what rounding left */
            if (j == 0) {
                double nn = 0, ee = 0;
                for (size_t k = 0; k < d; k++) {
                    double v = q[k] * ra, e = (double)Q[i * d + k] - v;
                    nn += v * v, ee += e * e;
                }
                assert_true(qi.norm[i] >= sqrt(nn) && qi.norm[i] <= sqrt(nn) * (1 + 1e-6) + 1e-30);
                assert_true(qi.err[i] >= sqrt(ee) && qi.err[i] <= sqrt(ee) * (1 + 1e-6) + 1e-30);
            }
        }
    la_i8_side_free(&qi);
    la_i8_side_free(&si);
    free(C);
}

/* The int8 products are exact integers and the bound of simtile_i8.h holds for every pair, with
 * every kernel this CPU has: on spiky vectors (one large component), dense ones, zero rows, d not a
 * multiple of 4, seen sides not a multiple of a panel (an even and an odd number of panels), held-out
 * rows not a multiple of a kernel's rows, and vectors of +-1 only, where every byte is
 * +-127 and a pair of products reaches 2 x 127 x 127 (a 16-bit sum that must not saturate). */
static void test_int8_bound_holds(void **state) {
    if (!la_simtile_i8_available(64)) skip();
    const int kernels[] = {la_simtile_i8_kernel(64), LA_I8_AVX2};
    for (size_t kk = 0; kk < 2; kk++) {
        if (kk == 1 && kernels[0] == LA_I8_AVX2) break; /* no VNNI: the first round ran AVX2 */
        if (kk == 1) setenv("LEAKAUDIT_INT8", "avx2", 1);
        const size_t dims[] = {5, 64, 97, 384};
        for (size_t t = 0; t < 4; t++) {
            size_t d = dims[t], nq = 9, ns = t % 2 ? 37 : 53; /* 4 panels or 3: the VNNI kernel's pair and odd one */
            float *Q = calloc(nq * d, sizeof *Q), *S = calloc(ns * d, sizeof *S);
            uint64_t r = 0x2545F4914F6CDD1Dull + t;
            for (size_t i = 0; i < nq * d; i++) r ^= r << 13, r ^= r >> 7, r ^= r << 17, Q[i] = (float)((double)(r >> 11) / 9007199254740992.0 - 0.5);
            for (size_t i = 0; i < ns * d; i++) r ^= r << 13, r ^= r >> 7, r ^= r << 17, S[i] = (float)((double)(r >> 11) / 9007199254740992.0 - 0.5);
            for (size_t k = 0; k < d; k++) Q[3 * d + k] = 0.0f, S[7 * d + k] = 0.0f; /* zero rows */
            Q[4 * d] = 40.0f;                                                         /* spiky rows */
            S[9 * d + d / 2] = -25.0f;
            check_int8_tile(Q, nq, S, ns, d, kernels[kk]);
            /* +-1 everywhere: same signs, opposite signs, and mixed */
            for (size_t i = 0; i < nq * d; i++) r ^= r << 13, r ^= r >> 7, r ^= r << 17, Q[i] = (r >> 40) & 1 ? 1.0f : -1.0f;
            for (size_t i = 0; i < ns * d; i++) r ^= r << 13, r ^= r >> 7, r ^= r << 17, S[i] = (r >> 40) & 1 ? 1.0f : -1.0f;
            for (size_t k = 0; k < d; k++) S[k] = Q[k], S[d + k] = -Q[k];
            check_int8_tile(Q, nq, S, ns, d, kernels[kk]);
            free(Q), free(S);
        }
        unsetenv("LEAKAUDIT_INT8");
    }
}

/* Quantization splits its rows across threads: the same bytes and per-row values for any count, a
 * partial last panel and d not a multiple of 4 included. */
static void test_quantize_any_threads(void **state) {
    const size_t n = 1100, d = 37; /* above the size that splits; 68.75 panels */
    float *X = malloc(n * d * sizeof *X);
    for (size_t i = 0; i < n; i++) random_unit(X + i * d, d);
    for (int side = 0; side < 2; side++) {
        la_i8_side one, more;
        for (int nt = 2; nt <= 3; nt++) {
            assert_int_equal(side ? la_i8_quantize_s(X, n, d, 1, &one) : la_i8_quantize_q(X, n, d, 1, &one), 0);
            assert_int_equal(side ? la_i8_quantize_s(X, n, d, nt, &more) : la_i8_quantize_q(X, n, d, nt, &more), 0);
            size_t rows = side ? (n + LA_I8_NR - 1) / LA_I8_NR * LA_I8_NR : n;
            assert_memory_equal(one.data, more.data, rows * one.dp);
            assert_memory_equal(one.inv_scale, more.inv_scale, n * sizeof *one.inv_scale);
            assert_memory_equal(one.half_l1, more.half_l1, n * sizeof *one.half_l1);
            assert_memory_equal(one.norm, more.norm, n * sizeof *one.norm);
            assert_memory_equal(one.err, more.err, n * sizeof *one.err);
            if (!side) assert_memory_equal(one.sum, more.sum, n * sizeof *one.sum);
            if (side) /* the last panel's lanes past the rows are zeros (stored as 128) */
                for (size_t b = n * 4 % (4 * LA_I8_NR); b < 4 * LA_I8_NR; b++) assert_int_equal(one.data[(rows - LA_I8_NR) * one.dp + b], 128);
            la_i8_side_free(&one);
            la_i8_side_free(&more);
        }
    }
    free(X);
}

static void test_topk_order_is_total(void **state) {
    uint32_t idx[3];
    float cos[3];
    la_simtile_top_init(idx, cos, 1, 3);
    la_simtile_topk_insert(idx, cos, 3, 9, 0.5f);
    la_simtile_topk_insert(idx, cos, 3, 4, 0.5f); /* tie: lower index first */
    la_simtile_topk_insert(idx, cos, 3, 7, 0.9f);
    la_simtile_topk_insert(idx, cos, 3, 1, 0.1f);
    assert_int_equal(idx[0], 7);
    assert_int_equal(idx[1], 4);
    assert_int_equal(idx[2], 9);
    la_simtile_topk_insert(idx, cos, 3, 2, 0.5f); /* ranks before 4 and 9 */
    assert_int_equal(idx[1], 2);
    assert_int_equal(idx[2], 4);
}

static void test_bad_arguments(void **state) {
    la_simtile_params p;
    la_simtile_params_default(&p);
    la_simtile_hits h = {0};
    float v[4] = {1, 0, 0, 0};
    assert_int_equal(la_cpu_simtile(v, 1, v, 1, 0, 0, &p, &h, NULL, NULL, NULL), LA_EINVAL);
    p.topk = 1;
    assert_int_equal(la_cpu_simtile(v, 1, v, 1, 4, 0, &p, &h, NULL, NULL, NULL), LA_EINVAL);
    p.topk = 0;
    assert_int_equal(la_cpu_simtile(v, 1, v, 1, 4, UINT32_MAX, &p, &h, NULL, NULL, NULL), LA_EINVAL);
    assert_int_equal(la_cpu_simtile(v, 1, v, 1, 4, 0, &p, &h, NULL, NULL, NULL), LA_OK);
    assert_int_equal(h.n, 1);
    assert_true(h.v[0].cosine == 1.0f);
    la_simtile_hits_free(&h);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_matches_brute_force),
        cmocka_unit_test(test_other_dims_and_thresholds),
        cmocka_unit_test(test_nearest_in_a_crowd),
        cmocka_unit_test(test_zero_rows),
        cmocka_unit_test(test_sgemm_path_too),
        cmocka_unit_test(test_avx2_path_too),
        cmocka_unit_test(test_int8_bound_holds),
        cmocka_unit_test(test_quantize_any_threads),
        cmocka_unit_test(test_topk_order_is_total),
        cmocka_unit_test(test_bad_arguments),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
