/* test_margin.c - the ratio margin of the semantic tier (index/semantic.h): below the threshold a
 * held-out row is linked to its nearest seen row when their cosine stands out from both rows'
 * neighbourhoods. A translation-like pair (cosine 0.88 among unrelated rows) is linked; instances of
 * one template on both sides of the boundary (all about 0.88 to each other) are not. The links are
 * the ones a brute-force computation of the definition gives, and the same on every path: tiles,
 * tiles in place, the seen side streamed in batches, FAISS when built in. */
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

#define N 6000        /* rows; every fourth is held out */
#define D 64
#define PLANTED 120   /* held-out rows 0..PLANTED-1 (in held-out order) have a translation */
#define CLUSTERS 5    /* template clusters of 20 held-out and 20 seen rows (more than K) */
#define CSIZE 20
#define THR 0.92f
#define MARGIN 1.065

#define RAND_FIXTURE_SEED 0x2545F4914F6CDD1Dull
#include "rand_fixture.h"
/* v = c * u + sqrt(1 - c^2) * (a random direction orthogonal to u) */
static void at_cosine(float *v, const float *u, double c) {
    random_unit(v, D);
    double dot = 0;
    for (size_t j = 0; j < D; j++) dot += (double)v[j] * u[j];
    for (size_t j = 0; j < D; j++) v[j] = (float)(v[j] - dot * u[j]);
    unit(v, D);
    for (size_t j = 0; j < D; j++) v[j] = (float)(c * u[j] + sqrt(1 - c * c) * v[j]);
}

typedef struct fixture {
    la_table *t;
    uint32_t heldout;
    float *emb;
    uint32_t held[N / 4], seen[N], nh, ns; /* table rows of each side, in table order */
    uint32_t partner[N / 4];               /* the planted translation's table row, or UINT32_MAX */
    int cluster_row[N];                    /* 1 for rows of a template cluster */
} fixture;

static fixture *fx;

static int setup(void **state) {
    (void)state;
    fx = calloc(1, sizeof *fx);
    assert_int_equal(la_table_new(&fx->t), LA_OK);
    uint32_t dev, test;
    assert_int_equal(la_table_part(fx->t, "dev", &dev), LA_OK);
    assert_int_equal(la_table_part(fx->t, "test", &test), LA_OK);
    fx->heldout = test;
    fx->emb = malloc((size_t)N * D * sizeof *fx->emb);
    for (uint32_t i = 0; i < N; i++) {
        char id[32];
        snprintf(id, sizeof id, "r%u", i);
        la_row r = {0};
        assert_int_equal(la_table_strdup(fx->t, id, strlen(id), &r.id), LA_OK);
        r.part = i % 4 == 0 ? test : dev;
        r.date = LA_NO_DATE;
        r.score = NAN;
        assert_int_equal(la_table_append(fx->t, &r, NULL), LA_OK);
        random_unit(fx->emb + (size_t)i * D, D);
        if (i % 4 == 0) fx->held[fx->nh++] = i;
        else fx->seen[fx->ns++] = i;
    }
    /* translations: each planted held-out row's partner is a seen row far down the table (in a
     * later batch of the stream), at cosine 0.87..0.90 */
    for (uint32_t q = 0; q < fx->nh; q++) fx->partner[q] = UINT32_MAX;
    for (uint32_t q = 0; q < PLANTED; q++) {
        uint32_t s = fx->seen[2000 + q * 19];
        at_cosine(fx->emb + (size_t)s * D, fx->emb + (size_t)fx->held[q] * D, 0.87 + 0.03 * urand());
        fx->partner[q] = s;
    }
    /* template clusters (seen rows 5..1452, apart from the partners): held-out and seen rows around one centre, about 0.88 to each other */
    float centre[D];
    for (uint32_t c = 0; c < CLUSTERS; c++) {
        random_unit(centre, D);
        for (uint32_t m = 0; m < CSIZE; m++) {
            uint32_t q = fx->held[PLANTED + c * CSIZE + m], s = fx->seen[c * 300 + m * 13 + 5];
            at_cosine(fx->emb + (size_t)q * D, centre, 0.938);
            at_cosine(fx->emb + (size_t)s * D, centre, 0.938);
            fx->cluster_row[q] = fx->cluster_row[s] = 1;
        }
    }
    return 0;
}

static int teardown(void **state) {
    (void)state;
    la_table_free(fx->t);
    free(fx->emb);
    free(fx);
    return 0;
}

/* The definition, by brute force in double: (table row of q, seen table row, margin) per link;
 * margins within `band` of the ratio are left out of the comparison (rounding decides them). */
typedef struct ref_link {
    uint32_t q, s;
    double margin;
    int borderline;
} ref_link;

static double dotd(const float *a, const float *b) {
    double s = 0;
    for (size_t j = 0; j < D; j++) s += (double)a[j] * b[j];
    return s;
}

static int cmp_desc(const void *x, const void *y) {
    double a = *(const double *)x, b = *(const double *)y;
    return a < b ? 1 : a > b ? -1 : 0;
}

static double mean_best(double *v, size_t n) {
    qsort(v, n, sizeof *v, cmp_desc);
    double s = 0;
    for (size_t j = 0; j < LA_SEMANTIC_MARGIN_K; j++) s += v[j];
    return s / LA_SEMANTIC_MARGIN_K;
}

static size_t reference(ref_link *out) {
    const float *E = fx->emb;
    double *row = malloc(N * sizeof *row);
    size_t n = 0;
    for (uint32_t q = 0; q < fx->nh; q++) {
        const float *vq = E + (size_t)fx->held[q] * D;
        uint32_t best = 0;
        for (uint32_t k = 0; k < fx->ns; k++) {
            row[k] = dotd(vq, E + (size_t)fx->seen[k] * D);
            if (row[k] > row[best]) best = k;
        }
        double c = row[best];
        if (c >= THR || c < THR - LA_SEMANTIC_MARGIN_BELOW) continue;
        double mt = mean_best(row, fx->ns);
        const float *vs = E + (size_t)fx->seen[best] * D;
        for (uint32_t k = 0; k < fx->nh; k++) row[k] = dotd(vs, E + (size_t)fx->held[k] * D);
        double md = mean_best(row, fx->nh);
        double m = c / ((mt + md) / 2);
        if (m >= MARGIN - 1e-4) out[n++] = (ref_link){fx->held[q], fx->seen[best], m, m < MARGIN + 1e-4};
    }
    free(row);
    return n;
}

static void params(la_semantic_params *p, int method, double margin) {
    la_semantic_params_default(p);
    p->threshold = THR;
    p->margin = margin;
    p->method = method;
    p->threads = 2;
    p->ivf_nlist = 4;
    p->ivf_nprobe = 4;
}

/* The seen side through la_semantic_stream in batches of batch rows, added in ragged pieces. */
static void streamed(const la_semantic_params *p, size_t batch, la_pairs *out, la_semantic_nearest *nn,
                     la_semantic_stats *st) {
    float *Q = malloc((size_t)fx->nh * D * sizeof *Q), *S = malloc((size_t)fx->ns * D * sizeof *S);
    for (uint32_t q = 0; q < fx->nh; q++) memcpy(Q + (size_t)q * D, fx->emb + (size_t)fx->held[q] * D, D * sizeof *Q);
    for (uint32_t k = 0; k < fx->ns; k++) memcpy(S + (size_t)k * D, fx->emb + (size_t)fx->seen[k] * D, D * sizeof *S);
    la_semantic_stream *s;
    assert_int_equal(la_semantic_stream_begin(Q, fx->held, fx->nh, D, batch, p, &s), LA_OK);
    for (size_t at = 0, piece = 1; at < fx->ns; at += piece, piece = piece * 7 % 901 + 1) {
        size_t m = fx->ns - at < piece ? fx->ns - at : piece;
        assert_int_equal(la_semantic_stream_add(s, S + at * D, fx->seen + at, m), LA_OK);
    }
    assert_int_equal(la_semantic_stream_end(s, out, nn, st), LA_OK);
    la_semantic_stream_free(s);
    free(Q);
    free(S);
}

static void assert_same(const la_pairs *a, const la_pairs *b) {
    assert_int_equal(a->n, b->n);
    for (size_t i = 0; i < a->n; i++) {
        assert_int_equal(a->v[i].a, b->v[i].a);
        assert_int_equal(a->v[i].b, b->v[i].b);
        assert_true(a->v[i].cosine == b->v[i].cosine);
        assert_true(a->v[i].margin == b->v[i].margin || (isnan(a->v[i].margin) && isnan(b->v[i].margin)));
    }
}

/* What a user checks: translations linked, template instances not, and exactly the definition. */
static void test_margin_links_translations_not_templates(void **state) {
    (void)state;
    la_semantic_params p;
    params(&p, LA_SEMANTIC_TILES, MARGIN);
    la_pairs got = {0};
    la_semantic_nearest nn;
    la_semantic_stats st = {0};
    assert_int_equal(la_semantic_find(fx->t, fx->heldout, fx->emb, D, &p, &got, &nn, &st), LA_OK);
    size_t margin_links = 0;
    for (size_t i = 0; i < got.n; i++) {
        const la_pair *x = &got.v[i];
        if (isnan(x->margin)) {
            assert_true(x->cosine >= THR);
            continue;
        }
        margin_links++;
        assert_true(x->cosine < THR && x->cosine >= THR - LA_SEMANTIC_MARGIN_BELOW - 1e-6);
        assert_true(x->margin >= MARGIN);
        if (fx->cluster_row[x->b] || fx->cluster_row[x->a]) fail_msg("template instance %u linked by margin", x->b);
    }
    assert_int_equal(st.margin_links, margin_links);
    assert_true(st.margin_candidates >= margin_links);
    /* every planted translation below the threshold is found */
    for (uint32_t q = 0; q < PLANTED; q++) {
        int found = 0;
        for (size_t i = 0; i < got.n; i++) found |= got.v[i].b == fx->held[q] && got.v[i].a == fx->partner[q];
        if (!found) fail_msg("planted translation of held-out row %u not linked", fx->held[q]);
    }
    assert_true(margin_links >= PLANTED);
    /* the template clusters do have their cosines in the band: what keeps them out is the margin */
    size_t cluster_in_band = 0;
    for (size_t q = 0; q < nn.n; q++)
        cluster_in_band += fx->cluster_row[nn.row[q]] && nn.cosine[q] >= THR - LA_SEMANTIC_MARGIN_BELOW;
    assert_true(cluster_in_band >= CLUSTERS * CSIZE / 2);
    /* the nearest lists keep the k asked for, though the search kept the margin's 16 */
    assert_int_equal(nn.k, 1);

    /* the definition, by brute force */
    ref_link *ref = malloc(fx->nh * sizeof *ref);
    size_t nref = reference(ref), matched = 0, firm = 0;
    for (size_t r = 0; r < nref; r++) {
        int found = 0;
        for (size_t i = 0; i < got.n; i++)
            if (got.v[i].b == ref[r].q && got.v[i].a == ref[r].s && !isnan(got.v[i].margin)) {
                found = 1;
                assert_true(fabs(got.v[i].margin - ref[r].margin) < 1e-5);
            }
        matched += found;
        firm += !ref[r].borderline;
        if (!ref[r].borderline && !found) fail_msg("reference margin link %u-%u missing", ref[r].s, ref[r].q);
    }
    assert_true(margin_links <= nref && matched == margin_links && firm >= PLANTED);
    free(ref);

    /* off: the same threshold links, none below */
    la_pairs off = {0};
    la_semantic_nearest nno;
    params(&p, LA_SEMANTIC_TILES, 0);
    assert_int_equal(la_semantic_find(fx->t, fx->heldout, fx->emb, D, &p, &off, &nno, NULL), LA_OK);
    assert_int_equal(off.n + margin_links, got.n);
    for (size_t i = 0; i < off.n; i++) assert_true(off.v[i].cosine >= THR && isnan(off.v[i].margin));
    assert_memory_equal(nn.seen, nno.seen, nn.n * sizeof *nn.seen);
    la_pairs_free(&got), la_pairs_free(&off);
    la_semantic_nearest_free(&nn), la_semantic_nearest_free(&nno);
}

/* Every path gives the same links and margins: tiles, in place, streamed (the partners sit in later
 * batches than the first), FAISS flat and IVF with every cell probed. */
static void test_margin_same_on_every_path(void **state) {
    (void)state;
    la_semantic_params p;
    params(&p, LA_SEMANTIC_TILES, MARGIN);
    p.topk = 3;
    la_pairs want = {0};
    la_semantic_nearest nw;
    assert_int_equal(la_semantic_find(fx->t, fx->heldout, fx->emb, D, &p, &want, &nw, NULL), LA_OK);
    assert_int_equal(nw.k, 3);

    float *copy = malloc((size_t)N * D * sizeof *copy);
    memcpy(copy, fx->emb, (size_t)N * D * sizeof *copy);
    la_pairs got = {0};
    la_semantic_nearest ng;
    assert_int_equal(la_semantic_find_inplace(fx->t, fx->heldout, copy, D, &p, &got, &ng, NULL), LA_OK);
    assert_same(&want, &got);
    assert_memory_equal(nw.seen, ng.seen, nw.n * nw.k * sizeof *nw.seen);
    la_pairs_free(&got), la_semantic_nearest_free(&ng);
    free(copy);

    const size_t batches[] = {1, 2048, 4096};
    for (size_t b = 0; b < sizeof batches / sizeof *batches; b++) {
        la_semantic_stats st = {0};
        streamed(&p, batches[b], &got, &ng, &st);
        assert_same(&want, &got);
        assert_memory_equal(nw.seen, ng.seen, nw.n * nw.k * sizeof *nw.seen);
        assert_true(st.margin_links >= PLANTED);
        la_pairs_free(&got), la_semantic_nearest_free(&ng);
    }
    if (la_semantic_have_faiss()) {
        for (int method = LA_SEMANTIC_FAISS; method <= LA_SEMANTIC_FAISS_IVF; method++) {
            params(&p, method, MARGIN);
            p.topk = 3;
            assert_int_equal(la_semantic_find(fx->t, fx->heldout, fx->emb, D, &p, &got, &ng, NULL), LA_OK);
            assert_same(&want, &got);
            la_pairs_free(&got), la_semantic_nearest_free(&ng);
        }
    }
    la_pairs_free(&want), la_semantic_nearest_free(&nw);
}

static void test_margin_bad_settings(void **state) {
    (void)state;
    la_semantic_params p;
    la_pairs got = {0};
    const double bad[] = {0.5, 2.5, -1, NAN};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        params(&p, LA_SEMANTIC_TILES, bad[i]);
        assert_int_equal(la_semantic_find(fx->t, fx->heldout, fx->emb, D, &p, &got, NULL, NULL), LA_EINVAL);
        assert_non_null(strstr(la_last_error(), "margin"));
        la_semantic_stream *s = NULL;
        assert_int_equal(la_semantic_stream_begin(fx->emb, fx->held, fx->nh, D, 0, &p, &s), LA_EINVAL);
        assert_null(s);
    }
    assert_int_equal(got.n, 0);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_margin_links_translations_not_templates),
        cmocka_unit_test(test_margin_same_on_every_path),
        cmocka_unit_test(test_margin_bad_settings),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
