/* test_semantic.c - the semantic tier through its one entry point: the FAISS path (IndexFlatIP
 * range + k-NN search through the FAISS C API) and the OpenBLAS tile path report the same pair set,
 * the same cosines and the same nearest neighbours, on a random corpus with pairs placed within a
 * few ulps of the threshold; the vector checks give clear errors. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "leakaudit.h"
#include "semantic.h"
#include "simtile_core.h"

#define RAND_FIXTURE_SEED 0x9E3779B97F4A7C15ull
#include "rand_fixture.h"

/* A table of n rows, every third row in "test" (held out), the rest in "dev" or "train", with
 * random unit vectors and planted pairs whose cosines sit around thr. */
static la_table *make(size_t n, size_t d, float thr, float **emb_out, uint32_t *heldout) {
    la_table *t;
    assert_int_equal(la_table_new(&t), LA_OK);
    uint32_t dev, test, train;
    assert_int_equal(la_table_part(t, "dev", &dev), LA_OK);
    assert_int_equal(la_table_part(t, "test", &test), LA_OK);
    assert_int_equal(la_table_part(t, "train", &train), LA_OK);
    float *emb = malloc(n * d * sizeof *emb);
    for (size_t i = 0; i < n; i++) {
        char id[32];
        snprintf(id, sizeof id, "r%zu", i);
        la_row r = {0};
        assert_int_equal(la_table_strdup(t, id, strlen(id), &r.id), LA_OK);
        r.part = i % 3 == 0 ? test : i % 3 == 1 ? dev : train;
        r.date = LA_NO_DATE;
        r.score = NAN;
        assert_int_equal(la_table_append(t, &r, NULL), LA_OK);
        for (size_t j = 0; j < d; j++) emb[i * d + j] = (float)nrand();
        unit(emb + i * d, d);
    }
    /* plant: seen row s = c * q + sqrt(1-c^2) * (its own direction, made orthogonal) */
    const double offs[] = {0.15, 0.01, 2e-6, 5e-7, 1e-7, 0, -1e-7, -5e-7, -2e-6, -0.01};
    for (size_t i = 0, m = 0; i + 2 < n; i += 3, m++) { /* its seen row is i + 1 or i + 2 */
        float *q = emb + i * d, *s = emb + (i + 1 + (m % 2)) * d;
        double c = thr + offs[m % 10], dot = 0;
        if (c > 1) c = 1;
        for (size_t j = 0; j < d; j++) dot += (double)s[j] * q[j];
        for (size_t j = 0; j < d; j++) s[j] = (float)(s[j] - dot * q[j]);
        unit(s, d);
        for (size_t j = 0; j < d; j++) s[j] = (float)(c * q[j] + sqrt(1 - c * c) * s[j]);
    }
    *emb_out = emb;
    *heldout = test;
    return t;
}

static void run(const la_table *t, uint32_t h, const float *emb, size_t d, int method, float thr,
                uint32_t k, la_pairs *pairs, la_semantic_nearest *nn, la_semantic_stats *st) {
    la_semantic_params p;
    la_semantic_params_default(&p);
    p.threshold = thr;
    p.topk = k;
    p.method = method;
    p.threads = 2;
    p.ivf_nlist = 8;
    p.ivf_nprobe = 8; /* every cell: exact */
    la_status s = la_semantic_find(t, h, emb, d, &p, pairs, nn, st);
    if (s != LA_OK) fail_msg("la_semantic_find: %s", la_last_error());
}

static void assert_same_result(const la_pairs *a, const la_semantic_nearest *na, const la_pairs *b,
                               const la_semantic_nearest *nb) {
    assert_int_equal(a->n, b->n);
    for (size_t i = 0; i < a->n; i++) {
        assert_int_equal(a->v[i].a, b->v[i].a);
        assert_int_equal(a->v[i].b, b->v[i].b);
        assert_true(a->v[i].cosine == b->v[i].cosine);
    }
    assert_int_equal(na->n, nb->n);
    assert_int_equal(na->k, nb->k);
    assert_memory_equal(na->row, nb->row, na->n * sizeof *na->row);
    assert_memory_equal(na->seen, nb->seen, na->n * na->k * sizeof *na->seen);
    for (size_t i = 0; i < na->n * na->k; i++)
        assert_true(na->cosine[i] == nb->cosine[i] || (isnan(na->cosine[i]) && isnan(nb->cosine[i])));
}

static void test_faiss_and_tiles_agree(void **state) {
    if (!la_semantic_have_faiss()) {
        skip();
        return;
    }
    const size_t n = 3000, d = 96;
    const float thr = 0.75f;
    float *emb;
    uint32_t h;
    la_table *t = make(n, d, thr, &emb, &h);
    const la_row *rows = la_table_rows_const(t);
    for (uint32_t k = 1; k <= 4; k += 3) {
        la_pairs pt = {0}, pf = {0}, pi = {0};
        la_semantic_nearest nt, nf, ni;
        la_semantic_stats st = {0};
        run(t, h, emb, d, LA_SEMANTIC_TILES, thr, k, &pt, &nt, &st);
        assert_string_equal(st.method, "tiles");
        assert_int_equal(st.n_heldout, n / 3);
        run(t, h, emb, d, LA_SEMANTIC_FAISS, thr, k, &pf, &nf, &st);
        assert_string_equal(st.method, "faiss");
        run(t, h, emb, d, LA_SEMANTIC_FAISS_IVF, thr, k, &pi, &ni, &st);
        assert_string_equal(st.method, "faiss-ivf");
        /* planted pairs at and just above the threshold are found, those below are not */
        assert_true(pt.n >= 400);
        size_t near = 0;
        for (size_t i = 0; i < pt.n; i++) {
            assert_true(pt.v[i].cosine >= thr);
            if (pt.v[i].cosine < thr + 3e-6f) near++;
            assert_int_equal(rows[pt.v[i].b].part, h);
            assert_int_not_equal(rows[pt.v[i].a].part, h);
            assert_int_equal(pt.v[i].kinds, LA_KIND_SEMANTIC);
            if (i) assert_true(pt.v[i - 1].b < pt.v[i].b ||
                               (pt.v[i - 1].b == pt.v[i].b && pt.v[i - 1].a < pt.v[i].a));
        }
        assert_true(near >= 100);
        assert_same_result(&pt, &nt, &pf, &nf);
        assert_same_result(&pt, &nt, &pi, &ni);
        /* the nearest seen row of each held-out row is its best-scoring row */
        for (size_t q = 0; q < nt.n; q++) {
            const float *qv = emb + (size_t)nt.row[q] * d;
            float best = -2;
            for (size_t s = 0; s < n; s++)
                if (rows[s].part != h) {
                    float c = la_simtile_dot(qv, emb + s * d, d);
                    if (c > best) best = c;
                }
            assert_true(nt.cosine[q * k] == best);
        }
        la_pairs_free(&pt), la_pairs_free(&pf), la_pairs_free(&pi);
        la_semantic_nearest_free(&nt), la_semantic_nearest_free(&nf), la_semantic_nearest_free(&ni);
    }
    free(emb);
    la_table_free(t);
}

/* The in-place search (the tier's, which saves a copy of every vector) gives the copying one's
 * pairs and lists on interleaved partitions, for one and four nearest rows. */
static void test_inplace_matches_copy(void **state) {
    (void)state;
    const size_t n = 1500, d = 40;
    const float thr = 0.8f;
    float *emb;
    uint32_t h;
    la_table *t = make(n, d, thr, &emb, &h);
    for (uint32_t k = 1; k <= 4; k += 3) {
        la_pairs pc = {0}, pi = {0};
        la_semantic_nearest nc, ni;
        la_semantic_params p;
        la_semantic_params_default(&p);
        p.threshold = thr;
        p.topk = k;
        p.method = LA_SEMANTIC_TILES;
        p.threads = 2;
        float *copy = malloc(n * d * sizeof *copy);
        assert_non_null(copy);
        memcpy(copy, emb, n * d * sizeof *copy);
        assert_int_equal(la_semantic_find(t, h, emb, d, &p, &pc, &nc, NULL), LA_OK);
        assert_int_equal(la_semantic_find_inplace(t, h, copy, d, &p, &pi, &ni, NULL), LA_OK);
        assert_true(pc.n >= 100);
        assert_same_result(&pc, &nc, &pi, &ni);
        /* the held-out rows first, each side in table order */
        const la_row *rows = la_table_rows_const(t);
        size_t at = 0;
        for (int side = 0; side < 2; side++)
            for (size_t i = 0; i < n; i++)
                if ((rows[i].part == h) == (side == 0)) {
                    assert_memory_equal(copy + at * d, emb + i * d, d * sizeof *copy);
                    at++;
                }
        free(copy);
        la_pairs_free(&pc), la_pairs_free(&pi);
        la_semantic_nearest_free(&nc), la_semantic_nearest_free(&ni);
    }
    free(emb);
    la_table_free(t);
}

/* The seen side streamed in batches (la_semantic_stream, how the tier holds one batch of seen
 * vectors at a time) gives the one-call search's pairs, cosines, lists and re-scored count: over
 * several tiles, added in ragged pieces, with exact copies of seen rows in different batches (equal
 * cosines, where the lower row must win), for one and three nearest rows. */
static void test_stream_matches_find(void **state) {
    (void)state;
    const size_t n = 3 * 2048 * 3 / 2 + 77, d = 24;
    const float thr = 0.8f;
    float *emb;
    uint32_t h;
    la_table *t = make(n, d, thr, &emb, &h);
    const la_row *rows = la_table_rows_const(t);
    /* seen rows far apart that are copies of each other: ties across batches */
    for (size_t i = 4; i + 3001 < n; i += 97)
        if (rows[i].part != h && rows[i + 3001].part != h) memcpy(emb + (i + 3001) * d, emb + i * d, d * sizeof *emb);
    size_t nq = 0, ns = 0;
    float *Q = malloc(n * d * sizeof *Q), *S = malloc(n * d * sizeof *S);
    uint32_t *qid = malloc(n * sizeof *qid), *sid = malloc(n * sizeof *sid);
    for (size_t i = 0; i < n; i++) {
        if (rows[i].part == h) {
            memcpy(Q + nq * d, emb + i * d, d * sizeof *Q);
            qid[nq++] = (uint32_t)i;
        } else {
            memcpy(S + ns * d, emb + i * d, d * sizeof *S);
            sid[ns++] = (uint32_t)i;
        }
    }
    const size_t batches[] = {1, 2048, 5000};
    for (uint32_t k = 1; k <= 3; k += 2)
        for (size_t b = 0; b < sizeof batches / sizeof *batches; b++) {
            la_semantic_params p;
            la_semantic_params_default(&p);
            p.threshold = thr;
            p.topk = k;
            p.method = LA_SEMANTIC_TILES;
            p.threads = 2;
            la_pairs pf = {0}, ps = {0};
            la_semantic_nearest nf, nsm;
            la_semantic_stats sf = {0}, ss = {0};
            assert_int_equal(la_semantic_find(t, h, emb, d, &p, &pf, &nf, &sf), LA_OK);
            la_semantic_stream *st;
            assert_int_equal(la_semantic_stream_begin(Q, qid, nq, d, batches[b], &p, &st), LA_OK);
            for (size_t at = 0, piece = 1; at < ns; at += piece, piece = piece * 3 % 1001 + 1) {
                size_t m = ns - at < piece ? ns - at : piece;
                assert_int_equal(la_semantic_stream_add(st, S + at * d, sid + at, m), LA_OK);
            }
            assert_int_equal(la_semantic_stream_end(st, &ps, &nsm, &ss), LA_OK);
            la_semantic_stream_free(st);
            assert_true(pf.n >= 300);
            assert_same_result(&pf, &nf, &ps, &nsm);
            assert_int_equal(ss.rescored, sf.rescored);
            assert_int_equal(ss.n_seen, ns);
            assert_int_equal(ss.n_pairs, pf.n);
            la_pairs_free(&pf), la_pairs_free(&ps);
            la_semantic_nearest_free(&nf), la_semantic_nearest_free(&nsm);
        }
    /* seen rows out of order are refused */
    la_semantic_params p;
    la_semantic_params_default(&p);
    la_semantic_stream *st;
    assert_int_equal(la_semantic_stream_begin(Q, qid, nq, d, 0, &p, &st), LA_OK);
    assert_int_equal(la_semantic_stream_add(st, S + d, sid + 1, 1), LA_OK);
    assert_int_equal(la_semantic_stream_add(st, S, sid, 1), LA_EINVAL);
    la_semantic_stream_free(st);
    free(Q), free(S), free(qid), free(sid);
    free(emb);
    la_table_free(t);
}

static void test_tiles_without_faiss_and_edges(void **state) {
    const size_t d = 8;
    float *emb;
    uint32_t h;
    la_table *t = make(30, d, 0.9f, &emb, &h);
    la_pairs p = {0};
    la_semantic_nearest nn;
    run(t, h, emb, d, LA_SEMANTIC_AUTO, 0.9f, 2, &p, &nn, NULL);
    assert_int_equal(nn.n, 10);
    assert_int_equal(nn.k, 2);
    la_semantic_nearest_free(&nn);
    la_pairs_free(&p);
    /* no held-out rows: no pairs, empty nearest */
    uint32_t none;
    assert_int_equal(la_table_part(t, "empty", &none), LA_OK);
    la_semantic_params prm;
    la_semantic_params_default(&prm);
    assert_int_equal(la_semantic_find(t, none, emb, d, &prm, &p, &nn, NULL), LA_OK);
    assert_int_equal(p.n, 0);
    assert_int_equal(nn.n, 0);
    la_semantic_nearest_free(&nn);
    prm.threshold = 0;
    assert_int_equal(la_semantic_find(t, h, emb, d, &prm, &p, &nn, NULL), LA_EINVAL);
    assert_non_null(strstr(la_last_error(), "threshold"));
    prm.threshold = 0.9;
    prm.topk = 0;
    assert_int_equal(la_semantic_find(t, h, emb, d, &prm, &p, &nn, NULL), LA_EINVAL);
    la_pairs_free(&p);
    free(emb);
    la_table_free(t);
}

static void test_method_names(void **state) {
    int m;
    assert_int_equal(la_semantic_method_parse("faiss-ivf", &m), LA_OK);
    assert_int_equal(m, LA_SEMANTIC_FAISS_IVF);
    assert_string_equal(la_semantic_method_name(LA_SEMANTIC_TILES), "tiles");
    assert_int_equal(la_semantic_method_parse("hnsw", &m), LA_EINVAL);
}

static void test_vec_check_normalize(void **state) {
    float v[4] = {3, 0, 4, 0};
    assert_int_equal(la_vec_check_normalize(v, 4, "x.jsonl:3: field vec"), LA_OK);
    assert_true(fabsf(v[0] - 0.6f) < 1e-7f && fabsf(v[2] - 0.8f) < 1e-7f);
    float w[3] = {1, NAN, 0};
    assert_int_equal(la_vec_check_normalize(w, 3, "emb.npy: row 17"), LA_EINPUT);
    assert_string_equal(la_last_error(), "emb.npy: row 17: component 1 is NaN");
    float z[3] = {0, 0, 0};
    assert_int_equal(la_vec_check_normalize(z, 3, "emb.npy: row 2"), LA_EINPUT);
    assert_string_equal(la_last_error(), "emb.npy: row 2: vector is all zeros and has no direction");
    float inf[2] = {INFINITY, 1};
    assert_int_equal(la_vec_check_normalize(inf, 2, "r"), LA_EINPUT);
    assert_string_equal(la_last_error(), "r: component 0 is infinite");
}

static void test_lexical_on_a_table(void **state) {
    la_table *t;
    assert_int_equal(la_table_new(&t), LA_OK);
    uint32_t dev, test;
    la_table_part(t, "dev", &dev);
    la_table_part(t, "test", &test);
    const char *texts[] = {"natalia sold clips to 48 of her friends in april",
                           "in april natalia sold clips to 48 of her friends",
                           "weng earns 12 an hour for babysitting",
                           "natalia sold clips to 48 of her friends in april"};
    for (int i = 0; i < 4; i++) {
        la_row r = {0};
        char id[8];
        snprintf(id, sizeof id, "%d", i);
        la_table_strdup(t, id, strlen(id), &r.id);
        la_table_strdup(t, texts[i], strlen(texts[i]), &r.text);
        r.part = i == 3 ? test : dev;
        r.date = LA_NO_DATE;
        assert_int_equal(la_table_append(t, &r, NULL), LA_OK);
    }
    float *emb;
    assert_int_equal(la_semantic_embed_lexical(t, 256, 1, &emb), LA_OK);
    la_semantic_params p;
    la_semantic_params_default(&p);
    p.threshold = LA_SEMANTIC_THRESHOLD_LEXICAL;
    p.topk = 3;
    la_pairs pairs = {0};
    la_semantic_nearest nn;
    assert_int_equal(la_semantic_find(t, test, emb, 256, &p, &pairs, &nn, NULL), LA_OK);
    assert_int_equal(nn.seen[0], 0);  /* the identical text */
    assert_true(fabsf(nn.cosine[0] - 1.0f) < 1e-5f);
    assert_int_equal(nn.seen[1], 1);  /* the reordered one */
    assert_int_equal(nn.seen[2], 2);
    assert_true(nn.cosine[1] > nn.cosine[2]);
    assert_true(pairs.n >= 1 && pairs.n <= 2);
    la_semantic_nearest_free(&nn);
    la_pairs_free(&pairs);
    free(emb);
    la_table_free(t);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_faiss_and_tiles_agree),
        cmocka_unit_test(test_tiles_without_faiss_and_edges),
        cmocka_unit_test(test_inplace_matches_copy),
        cmocka_unit_test(test_stream_matches_find),
        cmocka_unit_test(test_method_names),
        cmocka_unit_test(test_vec_check_normalize),
        cmocka_unit_test(test_lexical_on_a_table),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
