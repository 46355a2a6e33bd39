/* test_wordpiece.c - the WordPiece tokenizer on a small vocabulary written by the test: greedy
 * longest match with ## pieces, unknown words and over-long words as [UNK], the BERT basic
 * tokenizer's punctuation, CJK, accent, case and control-character rules, and clear errors for a
 * broken vocabulary. (Golden tokenizations against the reference implementation with the real
 * vocabulary are in test_minilm.c.) */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tokenizer_wordpiece.h"

static const char *vocab[] = {"[PAD]", "[UNK]", "[CLS]", "[SEP]", "un", "##aff", "##able", "a", "##ff", "cafe",
                              "naive", ",", ".", "!", "'", "s", "don", "t", "中", "文", "the", "##s", "cat", "viet",
                              "hello", "$", "3", "50", "x", "##x"};
#define NV (sizeof vocab / sizeof *vocab)
static char g_path[64];

static la_wordpiece *open_vocab(int lower)
{
    la_wordpiece *w;
    assert_int_equal(la_wordpiece_new(g_path, lower, -1, &w), LA_OK);
    return w;
}

/* Tokens of text joined by spaces. */
static void expect(la_wordpiece *w, const char *text, const char *want)
{
    int32_t *ids = NULL;
    size_t n = 0, cap = 0;
    assert_int_equal(la_wordpiece_encode(w, text, strlen(text), &ids, &n, &cap), LA_OK);
    char got[1024] = "";
    for (size_t i = 0; i < n; i++) {
        strcat(got, i ? " " : "");
        strcat(got, la_wordpiece_token(w, ids[i]));
    }
    free(ids);
    if (strcmp(got, want)) fail_msg("'%s': got '%s', want '%s'", text, got, want);
}

static void test_greedy_longest_match(void **state)
{
    la_wordpiece *w = open_vocab(1);
    assert_int_equal(la_wordpiece_size(w), NV);
    expect(w, "unaffable", "un ##aff ##able");
    expect(w, "cats", "cat ##s");
    expect(w, "xxxx", "x ##x ##x ##x");
    expect(w, "unaffablez", "[UNK]"); /* no cut for the whole word: one [UNK], not a partial word */
    expect(w, "zebra cat", "[UNK] cat");
    char longw[202];
    memset(longw, 'x', 101);
    longw[101] = 0;
    expect(w, longw, "[UNK]"); /* more than 100 characters */
    longw[100] = 0;
    expect(w, "x", "x");
    la_wordpiece_free(w);
}

static void test_basic_tokenizer_rules(void **state)
{
    la_wordpiece *w = open_vocab(1);
    expect(w, "Hello, THE cat!", "hello , the cat !");
    expect(w, "don't", "don ' t");
    expect(w, "$3.50", "$ 3 . 50");
    expect(w, "Caf\xc3\xa9 na\xc3\xafve", "cafe naive");          /* accents stripped when uncased */
    expect(w, "Cafe\xcc\x81", "cafe");                              /* a combining accent too */
    expect(w, "Vi\xe1\xbb\x87t", "viet");                           /* Vietnamese stacked marks */
    expect(w, "\xe4\xb8\xad\xe6\x96\x87" "cat", "中 文 cat");           /* CJK characters split */
    expect(w, "the\tcat\ncat\xc2\xa0the", "the cat cat the");      /* tabs, newlines, no-break space */
    expect(w, "ca\x01t \x7f" " the", "cat the");                      /* control characters dropped */
    expect(w, "the \xff\xfe cat", "the cat");                       /* invalid UTF-8 dropped */
    expect(w, "", "");
    expect(w, "   ", "");
    la_wordpiece_free(w);
    w = open_vocab(0); /* cased: no folding, no accent stripping */
    expect(w, "Hello hello Caf\xc3\xa9", "[UNK] hello [UNK]");
    la_wordpiece_free(w);
}

static void test_broken_vocabulary(void **state)
{
    char p[80];
    snprintf(p, sizeof p, "%s.bad", g_path);
    FILE *f = fopen(p, "w");
    fputs("[PAD]\n[CLS]\n[SEP]\nthe\n", f);
    fclose(f);
    la_wordpiece *w = NULL;
    assert_int_equal(la_wordpiece_new(p, 1, -1, &w), LA_EINPUT);
    assert_non_null(strstr(la_last_error(), p));
    assert_non_null(strstr(la_last_error(), "[UNK]"));
    f = fopen(p, "w");
    fputs("[UNK]\n[CLS]\n\n[SEP]\n", f);
    fclose(f);
    assert_int_equal(la_wordpiece_new(p, 1, -1, &w), LA_EINPUT);
    assert_non_null(strstr(la_last_error(), ":3: empty token"));
    unlink(p);
    assert_int_equal(la_wordpiece_new("/nonexistent/vocab.txt", 1, -1, &w), LA_EIO);
    assert_non_null(strstr(la_last_error(), "/nonexistent/vocab.txt"));
    assert_null(w);
}

static int setup(void **state)
{
    snprintf(g_path, sizeof g_path, "/tmp/la_vocab_XXXXXX");
    int fd = mkstemp(g_path);
    if (fd < 0) return -1;
    FILE *f = fdopen(fd, "w");
    for (size_t i = 0; i < NV; i++) fprintf(f, "%s\n", vocab[i]);
    return fclose(f);
}

static int teardown(void **state) { return unlink(g_path); }

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_greedy_longest_match),
        cmocka_unit_test(test_basic_tokenizer_rules),
        cmocka_unit_test(test_broken_vocabulary),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
