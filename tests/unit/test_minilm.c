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
#include "model_fixture.h"
#include "batch_invariance.h"

static la_model *g_model;
static char g_data[PATH_MAX];

/* A text's vector is the same bits alone and in any batch, at any place, at 1 and 2 threads. */
static void test_batch_invariance(void **state)
{
    (void)state;
    check_batch_invariance_gsm8k(g_model);
}

static void test_golden_tokenizations(void **state)
{
    (void)state;
    assert_int_equal(check_golden_tokenizations(g_model, g_data, "wordpiece_golden.jsonl", 100), 0);
}

static void test_reference_vectors(void **state)
{
    (void)state;
    check_reference_vectors(g_model, g_data, "minilm_ref", 0.999);
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
    fixture_dir(g_data, sizeof g_data);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_golden_tokenizations),
        cmocka_unit_test(test_batch_invariance),
        cmocka_unit_test(test_reference_vectors),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    la_model_free(g_model);
    return rc;
}
