/* test_embed_lexical.c - the built-in lexical embedding: unit rows, zero rows for empty text,
 * bit-identical across thread counts, and cosines that order texts by shared wording. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "embed_lexical.h"

static const char *texts[] = {
    "janet's ducks lay 16 eggs per day. she eats three for breakfast every morning",
    "every morning janet eats three of the 16 eggs her ducks lay each day for breakfast",
    "a robe takes 2 bolts of blue fiber and half that much white fiber",
    "",
    "naïve café owners sell crème brûlée for 5 euros",
    "naïve café owners sell crème brûlée for 6 euros",
    "janet's ducks lay 16 eggs per day. she eats three for breakfast every morning",
};
#define N (sizeof texts / sizeof *texts)

static float cosine(const float *a, const float *b, size_t d) {
    double s = 0;
    for (size_t i = 0; i < d; i++) s += (double)a[i] * b[i];
    return (float)s;
}

static float *embed(uint32_t dim, int threads) {
    size_t lens[N];
    for (size_t i = 0; i < N; i++) lens[i] = strlen(texts[i]);
    la_embed_lexical_params p;
    la_embed_lexical_params_default(&p);
    p.dim = dim;
    p.threads = threads;
    float *out = malloc(N * dim * sizeof *out);
    assert_int_equal(la_cpu_embed_lexical(texts, lens, N, &p, out), LA_OK);
    return out;
}

static void test_rows_are_unit_or_zero(void **state) {
    const uint32_t d = 512;
    float *e = embed(d, 1);
    for (size_t i = 0; i < N; i++) {
        float n = cosine(e + i * d, e + i * d, d);
        if (texts[i][0])
            assert_true(fabsf(n - 1.0f) < 1e-5f);
        else
            assert_true(n == 0.0f);
    }
    free(e);
}

/* Many texts: the loop hands out chunks of 64 rows, so 7 texts would all land on one thread and
 * the comparison could never fail. 1000 texts are 16 chunks, shared by every thread of the run;
 * the document frequencies they count in parallel are what must not depend on the thread count.
 * (At most 4 threads: libomp keeps, and LeakSanitizer reports, the state of larger teams.) */
#define NMANY 1000

static float *embed_many(const char *const *many, const size_t *lens, int threads) {
    la_embed_lexical_params p;
    la_embed_lexical_params_default(&p);
    p.threads = threads;
    float *out = malloc((size_t)NMANY * p.dim * sizeof *out);
    assert_non_null(out);
    assert_int_equal(la_cpu_embed_lexical(many, lens, NMANY, &p, out), LA_OK);
    return out;
}

static void test_deterministic_across_threads(void **state) {
    static char buf[NMANY][160];
    const char *many[NMANY];
    size_t lens[NMANY];
    for (size_t i = 0; i < NMANY; i++) {
        /* the base texts with numbers and a word that vary, so document frequencies differ */
        snprintf(buf[i], sizeof buf[i], "%s %zu item%zu", texts[i % N], i % 37, (i * 7) % 101);
        many[i] = buf[i];
        lens[i] = strlen(buf[i]);
    }
    float *a = embed_many(many, lens, 1);
    const int counts[] = {2, 3, 4};
    for (size_t k = 0; k < sizeof counts / sizeof *counts; k++) {
        float *b = embed_many(many, lens, counts[k]);
        assert_memory_equal(a, b, (size_t)NMANY * LA_EMBED_LEXICAL_DIM * sizeof *a);
        free(b);
    }
    free(a);
}

/* The two halves (frequencies of every text, then vectors a batch at a time, how the semantic tier
 * streams the seen rows) give the bits of one call, with a text flagged to skip left zero. */
static void test_batches_match_one_call(void **state) {
    static char buf[NMANY][160];
    const char *many[NMANY];
    size_t lens[NMANY];
    for (size_t i = 0; i < NMANY; i++) {
        snprintf(buf[i], sizeof buf[i], "%s %zu word%zu", texts[i % N], i % 41, (i * 11) % 97);
        many[i] = buf[i];
        lens[i] = strlen(buf[i]);
    }
    float *whole = embed_many(many, lens, 2);
    la_embed_lexical_params p;
    la_embed_lexical_params_default(&p);
    p.threads = 2;
    la_lexical_idf *idf;
    assert_int_equal(la_cpu_lexical_idf(many, lens, NMANY, &p, &idf), LA_OK);
    const size_t d = p.dim;
    float *part = malloc(300 * d * sizeof *part);
    for (size_t at = 0; at < NMANY; at += 300) {
        size_t m = NMANY - at < 300 ? NMANY - at : 300;
        assert_int_equal(la_cpu_embed_lexical_with(idf, many + at, lens + at, m, &p, part), LA_OK);
        assert_memory_equal(part, whole + at * d, m * d * sizeof *part);
    }
    uint8_t skip[3] = {0, 1, 0};
    p.skip = skip;
    assert_int_equal(la_cpu_embed_lexical_with(idf, many + 5, lens + 5, 3, &p, part), LA_OK);
    assert_memory_equal(part, whole + 5 * d, d * sizeof *part);
    for (size_t k = 0; k < d; k++) assert_true(part[d + k] == 0.0f);
    assert_memory_equal(part + 2 * d, whole + 7 * d, d * sizeof *part);
    p.skip = NULL;
    p.seed ^= 1; /* frequencies counted under another seed are refused */
    assert_int_equal(la_cpu_embed_lexical_with(idf, many, lens, 1, &p, part), LA_EINVAL);
    la_lexical_idf_free(idf);
    free(part);
    free(whole);
}

static void test_similarity_orders_wording(void **state) {
    const uint32_t d = 2048;
    float *e = embed(d, 2);
    float same = cosine(e, e + 6 * d, d);
    float reworded = cosine(e, e + 1 * d, d);
    float other = cosine(e, e + 2 * d, d);
    float accents = cosine(e + 4 * d, e + 5 * d, d);
    assert_true(fabsf(same - 1.0f) < 1e-5f);
    assert_true(reworded > 0.4f && reworded < 0.95f);
    assert_true(other < 0.2f);
    assert_true(accents > 0.8f && accents < 1.0f); /* multi-byte text: one digit differs */
    free(e);
}

static void test_bad_parameters(void **state) {
    la_embed_lexical_params p;
    la_embed_lexical_params_default(&p);
    p.dim = 0;
    size_t len = 1;
    const char *t = "a";
    float out[4];
    assert_int_equal(la_cpu_embed_lexical(&t, &len, 1, &p, out), LA_EINVAL);
    la_embed_lexical_params_default(&p);
    p.word_weight = 1.5f;
    assert_int_equal(la_cpu_embed_lexical(&t, &len, 1, &p, out), LA_EINVAL);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rows_are_unit_or_zero),
        cmocka_unit_test(test_deterministic_across_threads),
        cmocka_unit_test(test_batches_match_one_call),
        cmocka_unit_test(test_similarity_orders_wording),
        cmocka_unit_test(test_bad_parameters),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
