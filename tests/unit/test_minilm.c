/* test_minilm.c - the installed all-MiniLM-L6-v2 against the reference implementation's outputs
 * committed in tests/data/encoder (made by bench/encoder/make_fixtures.py with `tokenizers` and
 * sentence-transformers): every golden tokenization is reproduced id for id, and every reference
 * vector (53 texts: GSM8K and STS-B sentences, hard Unicode cases, one text past the 256-token
 * window) is matched with cosine >= 0.999. Needs the model (scripts/install-deps.sh installs it):
 * without it the test says so and exits 77 (skipped). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <json-c/json.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model.h"
#include "npy.h"

static la_model *g_model;
static char g_data[PATH_MAX];

static void test_golden_tokenizations(void **state)
{
    char p[PATH_MAX + 64];
    snprintf(p, sizeof p, "%s/wordpiece_golden.jsonl", g_data);
    FILE *f = fopen(p, "r");
    assert_non_null(f);
    char line[1 << 16];
    size_t n = 0, bad = 0;
    while (fgets(line, sizeof line, f)) {
        json_object *o = json_tokener_parse(line), *jt, *ji;
        assert_non_null(o);
        assert_true(json_object_object_get_ex(o, "text", &jt) && json_object_object_get_ex(o, "ids", &ji));
        const char *text = json_object_get_string(jt);
        int32_t *ids = NULL;
        size_t nid = 0, cap = 0;
        assert_int_equal(la_model_tokenize(g_model, text, (size_t)json_object_get_string_len(jt), &ids, &nid, &cap),
                         LA_OK);
        size_t want = json_object_array_length(ji);
        int same = nid == want;
        for (size_t k = 0; same && k < want; k++) same = ids[k] == json_object_get_int(json_object_array_get_idx(ji, k));
        if (!same) {
            bad++;
            fprintf(stderr, "tokenization differs for '%s': %zu ids, reference %zu\n", text, nid, want);
        }
        free(ids);
        json_object_put(o);
        n++;
    }
    fclose(f);
    assert_true(n >= 100);
    assert_int_equal(bad, 0);
}

static void test_reference_vectors(void **state)
{
    char p[PATH_MAX + 64];
    snprintf(p, sizeof p, "%s/minilm_ref.npy", g_data);
    float *ref;
    size_t rows, cols;
    assert_int_equal(la_npy_read(p, 0, 384, &ref, &rows, &cols), LA_OK);
    snprintf(p, sizeof p, "%s/minilm_ref.txt", g_data);
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
    assert_int_equal(la_model_embed(g_model, (const char *const *)texts, lens, rows, 0, v), LA_OK);
    double worst = 2;
    size_t at = 0;
    for (size_t i = 0; i < rows; i++) {
        double c = 0;
        for (size_t d = 0; d < cols; d++) c += (double)v[i * cols + d] * ref[i * cols + d];
        if (c < worst) worst = c, at = i;
    }
    fprintf(stderr, "%zu reference vectors: lowest cosine %.7f (text %zu)\n", rows, worst, at);
    assert_true(worst >= 0.999);
    for (size_t i = 0; i < rows; i++) free(texts[i]);
    free(texts);
    free(lens);
    free(v);
    free(ref);
}

int main(void)
{
    char dir[PATH_MAX];
    if (!la_model_default_installed(dir, sizeof dir)) {
        printf("skipped: model %s is not installed in %s (scripts/install-deps.sh installs it)\n", LA_MODEL_DEFAULT,
               la_model_root());
        return 77;
    }
    if (la_model_open(dir, &g_model) != LA_OK) {
        fprintf(stderr, "the installed model does not load: %s\n", la_last_error());
        return 1;
    }
    snprintf(g_data, sizeof g_data, "%s", __FILE__);
    char *slash = strrchr(g_data, '/');
    snprintf(slash ? slash + 1 : g_data, sizeof g_data - (size_t)(slash ? slash + 1 - g_data : 0), "../data/encoder");
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_golden_tokenizations),
        cmocka_unit_test(test_reference_vectors),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    la_model_free(g_model);
    return rc;
}
