/* test_backend_dispatch.c - the dispatch and fallback without a device: a fake backend, registered
 * by this test in its own table, counts every op it is handed and runs the CPU reference (or fails
 * like a broken device). The near tier and the semantic tiles on real text (examples/gsm8k) route
 * every op through it and give the CPU's pairs; a failing fake falls back to the CPU with the
 * reason per stage, or fails the call when there is no fallback (--backend gpu); selection over a
 * table picks the fake when its probe works, and says why it did not when it does not; a large
 * sort on the CPU, cut into parts, gives the one stable order. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend.h"
#include "dispatch.h"
#include "embed_lexical.h"
#include "gsm8k_fixture.h"
#include "near.h"
#include "semantic.h"
#include "sort_fixture.h"

enum { OP_SHINGLE_MINHASH, OP_MINHASH, OP_SIMHASH, OP_LSH_KEYS, OP_SORT_KEYS, OP_SIMTILE, OP_COUNT };

typedef struct fake {
    int calls[OP_COUNT];
    int broken;          /* every op fails with LA_ECUDA */
    int no_device;       /* the probe fails */
} fake;

#define FAKE_OP(op, call)                                                          \
    fake *f = be->ctx;                                                             \
    f->calls[op]++;                                                                \
    if (f->broken) return la_error(LA_ECUDA, "fake device: kernel launch failed"); \
    return call

static la_status fake_probe(const la_backend *be, char *desc, size_t n)
{
    if (((fake *)be->ctx)->no_device) return la_error(LA_ENODEV, "fake: no device present");
    snprintf(desc, n, "fake device");
    return LA_OK;
}
static la_status fake_shingle_minhash(const la_backend *be, const char *text, const uint64_t *off, size_t nd, int kind,
                                      int n, int k, uint32_t *sig, uint32_t *cnt)
{
    FAKE_OP(OP_SHINGLE_MINHASH, la_backend_cpu.shingle_minhash(be, text, off, nd, kind, n, k, sig, cnt));
}
static la_status fake_minhash(const la_backend *be, const uint64_t *h, const uint64_t *off, size_t nd, int k,
                              uint32_t *sig)
{
    FAKE_OP(OP_MINHASH, la_backend_cpu.minhash(be, h, off, nd, k, sig));
}
static la_status fake_simhash(const la_backend *be, const uint64_t *h, const uint64_t *off, size_t nd, uint64_t *out)
{
    FAKE_OP(OP_SIMHASH, la_backend_cpu.simhash(be, h, off, nd, out));
}
static la_status fake_lsh_keys(const la_backend *be, const uint32_t *sig, size_t nd, int k, int bands, int rows,
                               uint64_t *keys)
{
    FAKE_OP(OP_LSH_KEYS, la_backend_cpu.lsh_keys(be, sig, nd, k, bands, rows, keys));
}
static la_status fake_sort_keys(const la_backend *be, la_key_row *e, size_t n)
{
    FAKE_OP(OP_SORT_KEYS, la_backend_cpu.sort_keys(be, e, n));
}
static la_status fake_simtile(const la_backend *be, const float *Q, size_t nq, const float *S, size_t ns, size_t d,
                              uint32_t off, const la_simtile_params *p, la_simtile_hits *hits, uint32_t *ti, float *tc, size_t *re)
{
    FAKE_OP(OP_SIMTILE, la_backend_cpu.simtile(be, Q, nq, S, ns, d, off, p, hits, ti, tc, re));
}

static la_backend fake_backend(fake *f)
{
    memset(f, 0, sizeof *f);
    return (la_backend){.name = "fake", .device = 1, .host_loops = 0, LA_BACKEND_OPS(fake), .ctx = f};
}

static int feq(float x, float y) { return x == y || (isnan(x) && isnan(y)); }

static void same_pairs(const la_pairs *a, const la_pairs *b)
{
    assert_int_equal(a->n, b->n);
    for (size_t i = 0; i < a->n; i++) {
        assert_int_equal(a->v[i].a, b->v[i].a);
        assert_int_equal(a->v[i].b, b->v[i].b);
        assert_true(feq(a->v[i].jaccard, b->v[i].jaccard) && feq(a->v[i].minhash, b->v[i].minhash) &&
                    feq(a->v[i].cosine, b->v[i].cosine) && a->v[i].simhash_dist == b->v[i].simhash_dist);
    }
}

static const char *near_stages[] = {"near_signatures", "near_simhash", "near_band_keys", "near_buckets"};

static la_status near_with(const gsm8k *g, la_exec *x, la_pairs *out)
{
    la_near_params p;
    la_near_params_default(&p);
    p.threads = 2;
    p.exec = x;
    return la_near_find(g->f.t, g->f.test, &p, out, NULL);
}

/* A sort large enough for the dispatcher to cut into parts gives the stable order, entry for entry,
 * at any thread count: hash-like keys with repeats, keys under a common prefix (as candidate
 * pairs are), and one key everywhere. */
static void test_sort_in_parts(void **state)
{
    (void)state;
    size_t n = 700000;
    la_key_row *in = malloc(n * sizeof *in), *v = malloc(n * sizeof *v);
    indexed *ref = malloc(n * sizeof *ref);
    assert_true(in && v && ref);
    uint64_t r = 0x9e3779b97f4a7c15ull;
    for (int kind = 0; kind < 3; kind++) {
        for (size_t i = 0; i < n; i++) {
            r ^= r << 13, r ^= r >> 7, r ^= r << 17;
            uint64_t key = kind == 0 ? (r % 200000) * 0xd6e8feb86659fd93ull : kind == 1 ? 1ull << 62 | (r % 60000) << 17 | (r >> 50) : 42;
            in[i] = (la_key_row){.key = key, .row = (uint32_t)i};
            ref[i] = (indexed){in[i], i};
        }
        qsort(ref, n, sizeof *ref, cmp_indexed);
        for (int threads = 1; threads <= 3; threads++) {
            la_exec x;
            la_exec_init(&x, &la_backend_cpu, NULL, threads);
            memcpy(v, in, n * sizeof *v);
            assert_int_equal(la_exec_sort_keys(&x, "near_buckets", v, n), LA_OK);
            for (size_t i = 0; i < n; i++) {
                assert_true(v[i].key == ref[i].e.key);
                assert_int_equal(v[i].row, ref[i].e.row);
            }
            const la_stage *st = la_exec_stage(&x, "near_buckets");
            assert_non_null(st);
            assert_int_equal(st->calls, 1);
        }
    }
    free(in);
    free(v);
    free(ref);
}

static void test_near_through_the_table(void **state)
{
    gsm8k g;
    gsm8k_load(&g);
    la_pairs ref = {0}, got = {0};
    assert_int_equal(near_with(&g, NULL, &ref), LA_OK);
    assert_true(ref.n > 0); /* the example has planted near copies */
    fake f;
    la_backend fb = fake_backend(&f);
    la_exec x;
    la_exec_init(&x, &fb, &la_backend_cpu, 2);
    assert_int_equal(near_with(&g, &x, &got), LA_OK);
    same_pairs(&ref, &got);
    /* every near op went to the fake, a signature batch at once (no host_loops): the example is one
     * batch, so the band keys are one call as well */
    assert_true(f.calls[OP_MINHASH] >= 1 && f.calls[OP_SIMHASH] >= 1 && f.calls[OP_LSH_KEYS] == f.calls[OP_MINHASH]);
    assert_true(f.calls[OP_SORT_KEYS] >= 3); /* LSH, SimHash and containment tables */
    assert_int_equal(f.calls[OP_SIMTILE], 0);
    for (size_t i = 0; i < 4; i++) {
        const la_stage *st = la_exec_stage(&x, near_stages[i]);
        assert_non_null(st);
        assert_string_equal(st->backend, "fake");
        assert_true(st->device && st->fallback[0] == 0 && st->items > 0);
    }
    assert_string_equal(x.note, "");
    la_pairs_free(&ref);
    la_pairs_free(&got);
    gsm8k_free(&g);
}

static void test_near_falls_back_with_the_reason(void **state)
{
    gsm8k g;
    gsm8k_load(&g);
    la_pairs ref = {0}, got = {0};
    assert_int_equal(near_with(&g, NULL, &ref), LA_OK);
    fake f;
    la_backend fb = fake_backend(&f);
    f.broken = 1;
    la_exec x;
    la_exec_init(&x, &fb, &la_backend_cpu, 2);
    assert_int_equal(near_with(&g, &x, &got), LA_OK);
    same_pairs(&ref, &got);
    /* the first op failed once; everything after it went straight to the CPU */
    int total = 0;
    for (int k = 0; k < OP_COUNT; k++) total += f.calls[k];
    assert_int_equal(total, 1);
    for (size_t i = 0; i < 4; i++) {
        const la_stage *st = la_exec_stage(&x, near_stages[i]);
        assert_non_null(st);
        assert_string_equal(st->backend, "cpu");
        assert_false(st->device);
        assert_non_null(strstr(st->fallback, "fake device: kernel launch failed"));
    }
    assert_non_null(strstr(x.note, "on fake: fake device: kernel launch failed"));
    la_pairs_free(&ref);
    la_pairs_free(&got);
    gsm8k_free(&g);
}

static void test_no_fallback_fails(void **state)
{
    gsm8k g;
    gsm8k_load(&g);
    la_pairs got = {0};
    fake f;
    la_backend fb = fake_backend(&f);
    f.broken = 1;
    la_exec x;
    la_exec_init(&x, &fb, NULL, 2);
    assert_int_equal(near_with(&g, &x, &got), LA_ECUDA);
    assert_non_null(strstr(la_last_error(), "on the fake backend: fake device: kernel launch failed"));
    assert_int_equal(got.n, 0);
    la_pairs_free(&got);
    gsm8k_free(&g);
}

/* Lexical embeddings of the example: the semantic tiles through the fake, then broken. */
static void test_tiles_through_the_table(void **state)
{
    gsm8k g;
    gsm8k_load(&g);
    float *emb;
    assert_int_equal(la_semantic_embed_lexical(g.f.t, 0, 2, &emb), LA_OK);
    size_t dim = 0;
    la_embed_lexical_params ep;
    la_embed_lexical_params_default(&ep);
    dim = ep.dim;
    la_semantic_params p;
    la_semantic_params_default(&p);
    p.threshold = 0.5;
    p.topk = 2;
    p.method = LA_SEMANTIC_TILES;
    la_pairs ref = {0}, got = {0}, fell = {0};
    la_semantic_stats st;
    assert_int_equal(la_semantic_find(g.f.t, g.f.test, emb, dim, &p, &ref, NULL, &st), LA_OK);
    assert_string_equal(st.backend, "cpu");
    assert_true(ref.n > 0);
    fake f;
    la_backend fb = fake_backend(&f);
    la_exec x;
    la_exec_init(&x, &fb, &la_backend_cpu, 2);
    p.exec = &x;
    assert_int_equal(la_semantic_find(g.f.t, g.f.test, emb, dim, &p, &got, NULL, &st), LA_OK);
    assert_int_equal(f.calls[OP_SIMTILE], 1);
    assert_string_equal(st.backend, "gpu"); /* a device backend ran the tiles */
    same_pairs(&ref, &got);
    f.broken = 1;
    la_exec_init(&x, &fb, &la_backend_cpu, 2);
    assert_int_equal(la_semantic_find(g.f.t, g.f.test, emb, dim, &p, &fell, NULL, &st), LA_OK);
    assert_string_equal(st.backend, "cpu");
    assert_non_null(strstr(st.fallback, "semantic_tiles on fake"));
    same_pairs(&ref, &fell);
    la_pairs_free(&ref);
    la_pairs_free(&got);
    la_pairs_free(&fell);
    free(emb);
    gsm8k_free(&g);
}

static void test_selection_over_a_table(void **state)
{
    unsetenv("LEAKAUDIT_BACKEND");
    fake f;
    la_backend fb = fake_backend(&f);
    const la_backend *table[] = {&la_backend_cpu, &fb};
    la_backend_choice c;
    assert_int_equal(la_backend_select(LA_BACKEND_AUTO, table, 2, &c), LA_OK);
    assert_ptr_equal(c.be, &fb);
    assert_ptr_equal(c.fallback, &la_backend_cpu);
    assert_string_equal(c.device, "fake device");
    assert_int_equal(la_backend_select(LA_BACKEND_GPU, table, 2, &c), LA_OK);
    assert_ptr_equal(c.be, &fb);
    assert_null(c.fallback);
    assert_true(c.explicit_gpu);
    assert_int_equal(la_backend_select(LA_BACKEND_CPU, table, 2, &c), LA_OK);
    assert_ptr_equal(c.be, &la_backend_cpu);

    f.no_device = 1;
    assert_int_equal(la_backend_select(LA_BACKEND_AUTO, table, 2, &c), LA_OK);
    assert_ptr_equal(c.be, &la_backend_cpu);
    assert_null(c.fallback);
    assert_string_equal(c.note, "auto chose the CPU: fake: no device present");
    assert_int_equal(la_backend_select(LA_BACKEND_GPU, table, 2, &c), LA_ENODEV);
    assert_string_equal(la_last_error(), "--backend gpu: fake: no device present");
    assert_int_equal(la_backend_select(LA_BACKEND_GPU, table, 1, &c), LA_ENODEV);
    assert_string_equal(la_last_error(), "--backend gpu: no device backend in this build");
    setenv("LEAKAUDIT_BACKEND", "gpu", 1);
    assert_int_equal(la_backend_select(LA_BACKEND_AUTO, table, 2, &c), LA_ENODEV);
    unsetenv("LEAKAUDIT_BACKEND");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sort_in_parts),
        cmocka_unit_test(test_near_through_the_table),
        cmocka_unit_test(test_near_falls_back_with_the_reason),
        cmocka_unit_test(test_no_fallback_fails),
        cmocka_unit_test(test_tiles_through_the_table),
        cmocka_unit_test(test_selection_over_a_table),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
