/* test_encoder.c - the built-in encoder on a tiny random BERT written as a model folder in the
 * test (tiny_model.h): the C forward pass agrees with a naive double-precision reference for F32,
 * F16 and BF16 weights; batching and thread counts do not change a vector; long texts are cut at
 * the window or split into sentence-aligned windows whose vectors are those of their text; broken
 * model folders fail with the file and field named. No real model is needed. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "batch_invariance.h"
#include "model.h"
#include "safetensors.h"
#include "tiny_model.h"

static char g_root[64];

static const char *texts[] = {
    "the cat sat on the mat.",
    "a dog ran, then it was here!",
    "unbelievable cats",
    "big red ball is there?",
    "zebra",
    "The Cat SAT",
    "the cat sat on the mat and the dog ran and then it was there and a big red ball is here",
};
#define NT (sizeof texts / sizeof *texts)

static void dir_of(char *out, size_t cap, const char *name) { snprintf(out, cap, "%s/%s", g_root, name); }

/* The framed, truncated ids the model encodes for text i. */
static int frame_ids(const la_model *m, const char *text, int32_t *out)
{
    int32_t *ids = NULL;
    size_t n = 0, cap = 0;
    assert_int_equal(la_model_tokenize(m, text, strlen(text), &ids, &n, &cap), LA_OK);
    if (n > TM_MAXSEQ - 2) n = TM_MAXSEQ - 2;
    out[0] = 2;
    for (size_t i = 0; i < n; i++) out[i + 1] = ids[i];
    out[n + 1] = 3;
    free(ids);
    return (int)n + 2;
}

static void check_against_reference(const char *dtype)
{
    tm_model tm;
    tm_build(&tm);
    char dir[128];
    dir_of(dir, sizeof dir, dtype);
    assert_int_equal(tm_write(&tm, dir, dtype), 0);
    la_model *m;
    assert_int_equal(la_model_open(dir, &m), LA_OK);
    assert_int_equal(la_model_dim(m), TM_H);
    size_t lens[NT];
    for (size_t i = 0; i < NT; i++) lens[i] = strlen(texts[i]);
    float out[NT * TM_H];
    assert_int_equal(la_model_embed(m, texts, lens, NT, 0, out), LA_OK);
    for (size_t i = 0; i < NT; i++) {
        int32_t ids[TM_MAXSEQ];
        int L = frame_ids(m, texts[i], ids);
        double ref[TM_H], dot = 0, worst = 0;
        tm_reference(&tm, ids, L, ref);
        for (int d = 0; d < TM_H; d++) {
            dot += ref[d] * out[i * TM_H + d];
            worst = fmax(worst, fabs(ref[d] - out[i * TM_H + d]));
        }
        if (!(dot > 0.999999 && worst < 2e-5))
            fail_msg("%s weights, text %zu: cosine %.8f, max difference %.2e to the naive reference", dtype, i, dot, worst);
    }
    la_model_free(m);
    tm_free(&tm);
}

static void test_f32_matches_reference(void **state) { check_against_reference("F32"); }
static void test_f16_matches_reference(void **state) { check_against_reference("F16"); }
static void test_bf16_matches_reference(void **state) { check_against_reference("BF16"); }

static void test_batch_and_threads_do_not_change_vectors(void **state)
{
    tm_model tm;
    tm_build(&tm);
    char dir[128];
    dir_of(dir, sizeof dir, "batch");
    assert_int_equal(tm_write(&tm, dir, "F32"), 0);
    la_model *m;
    assert_int_equal(la_model_open(dir, &m), LA_OK);
    size_t lens[NT];
    for (size_t i = 0; i < NT; i++) lens[i] = strlen(texts[i]);
    float all1[NT * TM_H], all2[NT * TM_H], one[TM_H];
    assert_int_equal(la_model_embed(m, texts, lens, NT, 1, all1), LA_OK);
    assert_int_equal(la_model_embed(m, texts, lens, NT, 2, all2), LA_OK);
    assert_memory_equal(all1, all2, sizeof all1); /* same batch, any thread count: same bits */
    for (size_t i = 0; i < NT; i++) { /* alone: the same bits as in the batch */
        assert_int_equal(la_model_embed(m, &texts[i], &lens[i], 1, 0, one), LA_OK);
        assert_memory_equal(one, all1 + i * TM_H, sizeof one);
    }
    check_batch_invariance(m, texts, NT); /* and in other batches, at other places */
    /* identical texts give identical vectors; case folds away in an uncased model */
    assert_memory_not_equal(all1, all1 + TM_H, TM_H * sizeof *all1);
    la_model_free(m);
    tm_free(&tm);
}

static void test_windows_are_sentence_aligned(void **state)
{
    tm_model tm;
    tm_build(&tm);
    char dir[128];
    dir_of(dir, sizeof dir, "windows");
    assert_int_equal(tm_write(&tm, dir, "F32"), 0);
    la_model *m;
    assert_int_equal(la_model_open(dir, &m), LA_OK);
    assert_int_equal(la_model_window(m), TM_MAXSEQ - 2);
    const char *in[2] = {"the cat sat on the mat. a dog ran, then it was here! big red ball is there? "
                         "unbelievable cats sat on a mat. the dog was here.",
                         "the cat sat."};
    size_t lens[2] = {strlen(in[0]), strlen(in[1])};
    float *vec;
    uint32_t *item, *b, *e;
    size_t nw;
    assert_int_equal(la_model_embed_windows(m, in, lens, 2, 0, 0, &vec, &item, &b, &e, &nw), LA_OK);
    assert_true(nw >= 4); /* the long text needs several 14-piece windows, the short one one */
    size_t nlong = 0;
    for (size_t w = 0; w < nw; w++) {
        if (item[w] == 1) {
            assert_int_equal(b[w], 0);
            assert_int_equal(e[w], lens[1]);
            continue;
        }
        nlong++;
        /* a window starts the text or a sentence, and its vector is the vector of its text alone */
        assert_true(b[w] == 0 || in[0][b[w] - 2] == '.' || in[0][b[w] - 2] == '!' || in[0][b[w] - 2] == '?');
        if (w) assert_true(b[w] > b[w - 1] && b[w] <= e[w - 1]); /* windows advance, leaving no gap */
        const char *sub = in[0] + b[w];
        size_t sl = e[w] - b[w];
        float one[TM_H];
        assert_int_equal(la_model_embed(m, &sub, &sl, 1, 0, one), LA_OK);
        assert_memory_equal(one, vec + w * TM_H, sizeof one); /* the same bits: batches do not change a vector */
    }
    assert_true(nlong >= 3);
    assert_int_equal(b[0], 0);
    assert_int_equal(e[nlong - 1], lens[0]); /* the windows cover the text */
    free(vec);
    free(item);
    free(b);
    free(e);
    la_model_free(m);
    tm_free(&tm);
}

/* ---- broken model folders ---- */

static void expect_open_error(const char *dir, la_status want, const char *needle1, const char *needle2)
{
    la_model *m = NULL;
    la_status s = la_model_open(dir, &m);
    if (s != want || !strstr(la_last_error(), needle1) || (needle2 && !strstr(la_last_error(), needle2)))
        fail_msg("expected status %d with '%s' and '%s', got %d: %s", want, needle1, needle2 ? needle2 : "", s,
                 la_last_error());
    assert_null(m);
}

static void write_bytes(const char *path, const void *p, size_t n)
{
    FILE *f = fopen(path, "wb");
    fwrite(p, 1, n, f);
    fclose(f);
}

static void test_broken_folders_name_file_and_field(void **state)
{
    tm_model tm;
    tm_build(&tm);
    char dir[128], p[256];
    dir_of(dir, sizeof dir, "broken");
    assert_int_equal(tm_write(&tm, dir, "F32"), 0);
    la_model *m;
    assert_int_equal(la_model_open(dir, &m), LA_OK);
    la_model_free(m);

    /* a missing vocabulary */
    snprintf(p, sizeof p, "%s/vocab.txt", dir);
    unlink(p);
    expect_open_error(dir, LA_EINPUT, "vocab.txt", "missing");
    /* a vocabulary without [UNK] */
    write_bytes(p, "[PAD]\n[CLS]\n[SEP]\nthe\n", 22);
    expect_open_error(dir, LA_EINPUT, "vocab.txt", "[UNK]");
    assert_int_equal(tm_write(&tm, dir, "F32"), 0);

    /* an unsupported architecture, a missing field */
    snprintf(p, sizeof p, "%s/config.json", dir);
    write_bytes(p, "{\"model_type\": \"xlm-roberta\"}", 29);
    expect_open_error(dir, LA_EINPUT, "config.json", "model_type");
    write_bytes(p, "{\"model_type\": \"bert\", \"hidden_size\": 32}", 42);
    expect_open_error(dir, LA_EINPUT, "config.json", "num_attention_heads");
    write_bytes(p, "{not json", 9);
    expect_open_error(dir, LA_EINPUT, "config.json", "JSON");
    assert_int_equal(tm_write(&tm, dir, "F32"), 0);

    /* the weights: truncated, a bad header, a shape that disagrees with config.json */
    snprintf(p, sizeof p, "%s/model.safetensors", dir);
    FILE *f = fopen(p, "rb");
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = malloc((size_t)n);
    assert_int_equal(fread(buf, 1, (size_t)n, f), (size_t)n);
    fclose(f);
    write_bytes(p, buf, (size_t)n - 100);
    expect_open_error(dir, LA_EINPUT, "model.safetensors", "truncated");
    write_bytes(p, buf, 4);
    expect_open_error(dir, LA_EINPUT, "model.safetensors", "too short");
    char *bad = malloc((size_t)n);
    memcpy(bad, buf, (size_t)n);
    bad[8] = '['; /* the header is no longer an object */
    write_bytes(p, bad, (size_t)n);
    expect_open_error(dir, LA_EINPUT, "model.safetensors", "header");
    memcpy(bad, buf, (size_t)n);
    char *dt = strstr(bad + 8, "\"F32\"");
    memcpy(dt, "\"I32\"", 5); /* the first tensor's dtype */
    write_bytes(p, bad, (size_t)n);
    expect_open_error(dir, LA_EINPUT, "model.safetensors", "dtype");
    memcpy(bad, buf, (size_t)n);
    char *off = strstr(bad + 8, "data_offsets");
    memcpy(off, "data_offsetX", 12);
    write_bytes(p, bad, (size_t)n);
    expect_open_error(dir, LA_EINPUT, "model.safetensors", "data_offsets");
    free(bad);
    write_bytes(p, buf, (size_t)n);
    assert_int_equal(la_model_open(dir, &m), LA_OK);
    la_model_free(m);
    free(buf);

    snprintf(p, sizeof p, "%s/config.json", dir);
    char cfg[512];
    snprintf(cfg, sizeof cfg, "{\"model_type\": \"bert\", \"hidden_size\": 32, \"num_attention_heads\": 4, "
             "\"num_hidden_layers\": 2, \"intermediate_size\": 48, \"vocab_size\": %zu, \"max_position_embeddings\": %d, \"hidden_act\": \"gelu\"}", TM_VOCAB, TM_POS);
    write_bytes(p, cfg, strlen(cfg));
    expect_open_error(dir, LA_EINPUT, "intermediate.dense.weight", "shape");
    tm_free(&tm);
}

static void test_safetensors_reads_all_float_types(void **state)
{
    tm_model tm;
    tm_build(&tm);
    char dir[128], p[256];
    const char *types[3] = {"F32", "F16", "BF16"};
    for (int k = 0; k < 3; k++) {
        dir_of(dir, sizeof dir, types[k]);
        assert_int_equal(tm_write(&tm, dir, types[k]), 0);
        snprintf(p, sizeof p, "%s/model.safetensors", dir);
        la_safetensors *st;
        assert_int_equal(la_safetensors_open(p, &st), LA_OK);
        assert_int_equal(la_safetensors_count(st), tm.n);
        const la_st_tensor *t = la_safetensors_find(st, "encoder.layer.1.output.dense.weight");
        assert_non_null(t);
        assert_int_equal(t->ndim, 2);
        assert_int_equal(t->shape[0], TM_H);
        assert_int_equal(t->shape[1], TM_I);
        float *v;
        int64_t shape[2] = {TM_H, TM_I};
        assert_int_equal(la_safetensors_read_f32(st, t->name, 2, shape, &v), LA_OK);
        assert_memory_equal(v, tm_get(&tm, t->name), TM_H * TM_I * sizeof *v); /* exact conversion */
        free(v);
        assert_null(la_safetensors_find(st, "no.such.tensor"));
        la_safetensors_free(st);
    }
    tm_free(&tm);
}

static int setup(void **state)
{
    snprintf(g_root, sizeof g_root, "/tmp/la_encoder_XXXXXX");
    return mkdtemp(g_root) ? 0 : -1;
}

static int teardown(void **state)
{
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", g_root);
    return system(cmd) == 0 ? 0 : -1;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_f32_matches_reference),
        cmocka_unit_test(test_f16_matches_reference),
        cmocka_unit_test(test_bf16_matches_reference),
        cmocka_unit_test(test_batch_and_threads_do_not_change_vectors),
        cmocka_unit_test(test_windows_are_sentence_aligned),
        cmocka_unit_test(test_broken_folders_name_file_and_field),
        cmocka_unit_test(test_safetensors_reads_all_float_types),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
