/*
 * batch_invariance.h - the check that a text's vector does not depend on its batch: every text
 * embedded alone gives the same bits (memcmp) as in the whole list, in the list reversed with other
 * texts around it, in batches of a few sequences (many batches, one thread each) and in one batch
 * longer than a GEMM block, at 1 and 2 threads. Header-only, for cmocka tests; include after
 * <cmocka.h>.
 */
#ifndef LA_TEST_BATCH_INVARIANCE_H
#define LA_TEST_BATCH_INVARIANCE_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model.h"

/* Embed the n texts of `in` as one call into out (n x dim), threads threads, batches of at most
 * `batch` sequences (0: the default). */
static inline void bi_embed(la_model *m, const char *const *in, size_t n, int threads, size_t batch, float *out)
{
    size_t *lens = malloc(n * sizeof *lens);
    assert_non_null(lens);
    for (size_t k = 0; k < n; k++) lens[k] = strlen(in[k]);
    la_model_set_batch(m, batch);
    assert_int_equal(la_model_embed(m, in, lens, n, threads, out), LA_OK);
    la_model_set_batch(m, 0);
    free(lens);
}

/* Each of the n texts alone equals it in four different batches at 1 and 2 threads: the list as
 * given, reversed, and a long list (more rows than a GEMM block) of the texts over and over, as
 * one batch and as many batches of three sequences. */
static inline void check_batch_invariance(la_model *m, const char *const *texts, size_t n)
{
    size_t dim = la_model_dim(m), nbig = 3 * n + 5;
    const char **mix = malloc((nbig + 1) * sizeof *mix);
    float *alone = malloc(n * dim * sizeof *alone), *in = malloc(nbig * dim * sizeof *in);
    assert_non_null(mix);
    assert_non_null(alone);
    assert_non_null(in);
    for (size_t i = 0; i < n; i++) bi_embed(m, &texts[i], 1, 1, 0, alone + i * dim);
    for (int threads = 1; threads <= 2; threads++)
        for (int layout = 0; layout < 4; layout++) {
            size_t k = 0;
            if (layout == 0)
                for (; k < n; k++) mix[k] = texts[k];
            else if (layout == 1)
                for (; k < n; k++) mix[k] = texts[n - 1 - k];
            else
                for (; k < nbig; k++) mix[k] = texts[(k + (size_t)layout) % n];
            bi_embed(m, mix, k, threads, layout == 3 ? 3 : 0, in);
            for (size_t j = 0; j < k; j++) {
                size_t i = 0;
                while (strcmp(texts[i], mix[j])) i++;
                const float *a = alone + i * dim, *b = in + j * dim;
                if (memcmp(a, b, dim * sizeof *b)) {
                    size_t d = 0;
                    while (a[d] == b[d]) d++;
                    fail_msg("text %zu alone and at place %zu of batch layout %d (%d threads) differ at %zu: "
                             "%.9g vs %.9g", i, j, layout, threads, d, a[d], b[d]);
                }
            }
        }
    free(mix);
    free(alone);
    free(in);
}

/* Texts of several lengths (GSM8K-like, one past a GEMM block of tokens), for the batch check. */
static const char *const bi_texts[] __attribute__((unused)) = {
    "Natalia sold clips to 48 of her friends in April, and then she sold half as many clips in May.",
    "How many clips did Natalia sell altogether in April and May?",
    "Weng earns $12 an hour for babysitting.",
    "Yesterday, she just did 50 minutes of babysitting. How much did she earn?",
    "Betty is saving money for a new wallet which costs $100. Betty has only half of the money she needs. "
    "Her parents decided to give her $15 for that purpose, and her grandparents twice as much as her parents. "
    "How much more money does Betty need to buy the wallet? Julie is reading a 120-page book. Yesterday, she "
    "was able to read 12 pages and today, she read twice as many pages as yesterday. If she wants to read half "
    "of the remaining pages tomorrow, how many pages should she read?",
    "ok",
    "James writes a 3-page letter to 2 different friends twice a week.",
};

/* check_batch_invariance on bi_texts, for the installed real models. */
static inline void check_batch_invariance_gsm8k(la_model *m)
{
    check_batch_invariance(m, bi_texts, sizeof bi_texts / sizeof *bi_texts);
}

#endif /* LA_TEST_BATCH_INVARIANCE_H */
