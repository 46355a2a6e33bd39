/*
 * model_fixture.h - checks of an installed model against the reference implementation's outputs
 * committed in tests/data/encoder: golden tokenizations reproduced id for id, reference vectors
 * matched to a cosine. Header-only, for cmocka tests; include after <cmocka.h>.
 */
#ifndef LA_TEST_MODEL_FIXTURE_H
#define LA_TEST_MODEL_FIXTURE_H

#include <json-c/json.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model.h"
#include "npy.h"

/* The folder of the fixtures, from this source file's place. */
static void fixture_dir(char *out, size_t cap)
{
    snprintf(out, cap, "%s", __FILE__);
    char *slash = strrchr(out, '/');
    snprintf(slash ? slash + 1 : out, cap - (size_t)(slash ? slash + 1 - out : 0), "../data/encoder");
}

/* Every line {"text", "ids"} of data/file tokenizes to its ids; at least at_least lines. A line
 * flagged {"differs": "why"} is a known difference from the reference: it must still differ (or
 * the flag is stale), and the number of them is returned. */
static size_t check_golden_tokenizations(la_model *model, const char *data, const char *file, size_t at_least)
{
    char p[PATH_MAX + 64];
    snprintf(p, sizeof p, "%s/%s", data, file);
    FILE *f = fopen(p, "r");
    assert_non_null(f);
    char line[1 << 16];
    size_t n = 0, bad = 0, known = 0;
    while (fgets(line, sizeof line, f)) {
        json_object *o = json_tokener_parse(line), *jt, *ji;
        assert_non_null(o);
        assert_true(json_object_object_get_ex(o, "text", &jt) && json_object_object_get_ex(o, "ids", &ji));
        const char *text = json_object_get_string(jt);
        int32_t *ids = NULL;
        size_t nid = 0, cap = 0;
        assert_int_equal(la_model_tokenize(model, text, (size_t)json_object_get_string_len(jt), &ids, &nid, &cap),
                         LA_OK);
        size_t want = json_object_array_length(ji);
        int same = nid == want;
        for (size_t k = 0; same && k < want; k++) same = ids[k] == json_object_get_int(json_object_array_get_idx(ji, k));
        json_object *why;
        if (json_object_object_get_ex(o, "differs", &why)) {
            known++;
            if (same) {
                bad++;
                fprintf(stderr, "flagged as a known difference but now the same: '%s'\n", text);
            }
        } else if (!same) {
            bad++;
            fprintf(stderr, "tokenization differs for '%s': %zu ids, reference %zu\n", text, nid, want);
        }
        free(ids);
        json_object_put(o);
        n++;
    }
    fclose(f);
    assert_true(n >= at_least);
    assert_int_equal(bad, 0);
    return known;
}

/* The texts of data/name.txt embed to the vectors of data/name.npy, each with cosine >= at_least. */
static void check_reference_vectors(la_model *model, const char *data, const char *name, double at_least)
{
    char p[PATH_MAX + 64];
    snprintf(p, sizeof p, "%s/%s.npy", data, name);
    float *ref;
    size_t rows, cols;
    assert_int_equal(la_npy_read(p, 0, la_model_dim(model), &ref, &rows, &cols), LA_OK);
    snprintf(p, sizeof p, "%s/%s.txt", data, name);
    FILE *f = fopen(p, "r");
    assert_non_null(f);
    char **texts = calloc(rows, sizeof *texts);
    size_t *lens = calloc(rows, sizeof *lens), n = 0;
    char line[1 << 16];
    while (n < rows && fgets(line, sizeof line, f)) {
        lens[n] = strcspn(line, "\n");
        line[lens[n]] = 0;
        texts[n++] = strdup(line);
    }
    fclose(f);
    assert_int_equal(n, rows);
    float *v = malloc(rows * cols * sizeof *v);
    assert_int_equal(la_model_embed(model, (const char *const *)texts, lens, rows, 0, v), LA_OK);
    double worst = 2;
    size_t at = 0;
    for (size_t i = 0; i < rows; i++) {
        double c = 0;
        for (size_t d = 0; d < cols; d++) c += (double)v[i * cols + d] * ref[i * cols + d];
        if (c < worst) worst = c, at = i;
    }
    fprintf(stderr, "%zu reference vectors: lowest cosine %.7f (text %zu)\n", rows, worst, at);
    assert_true(worst >= at_least);
    for (size_t i = 0; i < rows; i++) free(texts[i]);
    free(texts);
    free(lens);
    free(v);
    free(ref);
}

#endif /* LA_TEST_MODEL_FIXTURE_H */
