/*
 * test_normalize.c - the normalized form behind exact copies: NFKC + case folding + whitespace
 * collapsing, the three --normalize modes, Vietnamese composed/decomposed forms and Chinese text,
 * and the XXH3-128 hash pinned to published values. Not for: the exact join itself (see the CLI tests).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "leakaudit.h"
#include "normalize.h"

/* "Thủ đô của Việt Nam là gì?" precomposed (NFC). */
#define VI_COMPOSED "Th\u1ee7 \u0111\u00f4 c\u1ee7a Vi\u1ec7t Nam l\u00e0 g\u00ec?"
/* The same sentence decomposed: base letters followed by combining marks (U+0309 hook above,
 * U+0302 circumflex, U+0323 dot below, U+0300 grave). U+0111 (đ) has no decomposition. */
#define VI_DECOMPOSED "Thu\u0309 \u0111o\u0302 cu\u0309a Vie\u0323\u0302t Nam la\u0300 gi\u0300?"
/* Decomposed with the two marks of ệ in non-canonical order (circumflex before dot below). */
#define VI_MISORDERED "Thu\u0309 \u0111o\u0302 cu\u0309a Vie\u0302\u0323t Nam la\u0300 gi\u0300?"
#define VI_FOLDED "th\u1ee7 \u0111\u00f4 c\u1ee7a vi\u1ec7t nam l\u00e0 g\u00ec?"

/* Normalize a NUL-terminated string, compare with `want`, free. */
static void expect_norm(const char *in, la_norm_mode mode, const char *want)
{
    char *out = NULL;
    size_t n = 0;
    assert_int_equal(la_normalize(in, strlen(in), mode, &out, &n), LA_OK);
    assert_non_null(out);
    assert_string_equal(out, want);
    assert_int_equal(n, strlen(want));
    free(out);
}

static void hash_of_norm(const char *in, uint64_t h[2])
{
    char *out = NULL;
    size_t n = 0;
    assert_int_equal(la_normalize(in, strlen(in), LA_NORM_NFKC, &out, &n), LA_OK);
    la_text_hash128(out, n, h);
    free(out);
}

static void test_case_and_space(void **state)
{
    expect_norm("What is  the\tCAPITAL\nof France?", LA_NORM_NFKC, "what is the capital of france?");
    /* leading/trailing whitespace trimmed; NBSP, em space, ideographic space, line/paragraph
     * separators and NEL (written as bytes: C does not allow \u0085) all count as whitespace */
    expect_norm("  a \u00a0\u2003b\u3000c\u2028d\u2029e\xc2\x85" "f \r\n", LA_NORM_NFKC, "a b c d e f");
    expect_norm(" \t\n ", LA_NORM_NFKC, "");
    expect_norm("", LA_NORM_NFKC, "");
    /* case folding is more than lower-casing: ß folds to ss */
    expect_norm("STRASSE", LA_NORM_NFKC, "strasse");
    expect_norm("Stra\u00dfe", LA_NORM_NFKC, "strasse");
    /* compatibility forms: ligature and superscript */
    expect_norm("\ufb01le x\u00b2", LA_NORM_NFKC, "file x2");
}

static void test_vietnamese_forms_hash_equal(void **state)
{
    expect_norm(VI_COMPOSED, LA_NORM_NFKC, VI_FOLDED);
    expect_norm(VI_DECOMPOSED, LA_NORM_NFKC, VI_FOLDED);
    expect_norm(VI_MISORDERED, LA_NORM_NFKC, VI_FOLDED);
    assert_string_not_equal(VI_COMPOSED, VI_DECOMPOSED); /* the inputs really differ */
    uint64_t a[2], b[2], c[2];
    hash_of_norm(VI_COMPOSED, a);
    hash_of_norm(VI_DECOMPOSED, b);
    hash_of_norm("  THỦ ĐÔ CỦA VIỆT NAM LÀ GÌ? ", c);
    assert_memory_equal(a, b, sizeof a);
    assert_memory_equal(a, c, sizeof a);
    /* a different tone mark is a different sentence */
    uint64_t d[2];
    hash_of_norm("Th\u1ee7 \u0111\u00f4 c\u1ee7a Vi\u1ec7t Nam l\u00e0 g\u00ec!", d);
    assert_memory_not_equal(a, d, sizeof a);
    hash_of_norm("Thu \u0111o\u0302 cu\u0309a Vie\u0323\u0302t Nam la\u0300 gi\u0300?", d); /* hook missing */
    assert_memory_not_equal(a, d, sizeof a);
}

static void test_full_width_and_chinese(void **state)
{
    /* full-width Latin letters and digits become ASCII, then fold */
    expect_norm("\uff37\uff28\uff21\uff34 \uff49\uff53 \uff11\uff12\uff13\uff1f", LA_NORM_NFKC, "what is 123?");
    /* Chinese characters are kept as they are (no simplified/traditional merging); only the
     * full-width punctuation and the ideographic space are width forms */
    expect_norm("\u4e2d\u6587\u6e2c\u8a66\uff0c\u4f60\u597d\uff01\u3000\u6211\u5f88\u597d\u3002", LA_NORM_NFKC,
                "\u4e2d\u6587\u6e2c\u8a66,\u4f60\u597d! \u6211\u5f88\u597d\u3002");
    expect_norm("\u6d4b\u8bd5", LA_NORM_NFKC, "\u6d4b\u8bd5"); /* simplified stays simplified */
    /* half-width katakana widen to the standard form */
    expect_norm("\uff76\uff80\uff76\uff85", LA_NORM_NFKC, "\u30ab\u30bf\u30ab\u30ca");
}

static void test_three_modes(void **state)
{
    const char *in = "  \uff28\uff45\uff4c\uff4c\uff4f\u00a0 World\t ";
    expect_norm(in, LA_NORM_NFKC, "hello world");
    expect_norm(in, LA_NORM_SPACE, "\uff28\uff45\uff4c\uff4c\uff4f World");
    expect_norm(in, LA_NORM_NONE, in);
    /* space mode leaves case and Unicode form alone */
    expect_norm(VI_DECOMPOSED, LA_NORM_SPACE, VI_DECOMPOSED);
    expect_norm("A  B", LA_NORM_SPACE, "A B");

    la_norm_mode m;
    assert_int_equal(la_norm_mode_parse("nfkc", &m), LA_OK);
    assert_int_equal(m, LA_NORM_NFKC);
    assert_int_equal(la_norm_mode_parse("space", &m), LA_OK);
    assert_int_equal(m, LA_NORM_SPACE);
    assert_int_equal(la_norm_mode_parse("none", &m), LA_OK);
    assert_int_equal(m, LA_NORM_NONE);
    assert_int_equal(la_norm_mode_parse("NFKC", &m), LA_EINVAL);
    assert_int_equal(la_norm_mode_parse("nfc", &m), LA_EINVAL);
    assert_non_null(strstr(la_last_error(), "nfc"));
    assert_string_equal(la_norm_mode_name(LA_NORM_NFKC), "nfkc");
    assert_string_equal(la_norm_mode_name(LA_NORM_SPACE), "space");
    assert_string_equal(la_norm_mode_name(LA_NORM_NONE), "none");
}

static void test_hash_pinned(void **state)
{
    uint64_t h[2];
    /* XXH3-128 (seed 0) of the empty input: 99aa06d3014798d8 6001c324468d497f (xxHash test vector) */
    la_text_hash128("", 0, h);
    assert_true(h[1] == 0x99aa06d3014798d8ull);
    assert_true(h[0] == 0x6001c324468d497full);
    /* "hello world": df8d09e93f874900 a99b8775cc15b6c7 (xxh128sum) */
    la_text_hash128("hello world", 11, h);
    assert_true(h[1] == 0xdf8d09e93f874900ull);
    assert_true(h[0] == 0xa99b8775cc15b6c7ull);
    /* the hash of a normalized question: a change of normal form or hash would change reports */
    hash_of_norm("  What is the CAPITAL of\u00a0\uff36\uff49\uff45\uff54\uff4e\uff41\uff4d? ", h);
    assert_true(h[1] == 0xd49c50091b076635ull);
    assert_true(h[0] == 0x9e8485220777a253ull);
}

/* la_normalize_table fills norm and hash, leaves rows without text alone, and does not depend on
 * the thread count. */
static la_table *make_table(size_t n)
{
    la_table *t;
    assert_int_equal(la_table_new(&t), LA_OK);
    uint32_t part;
    assert_int_equal(la_table_part(t, "dev", &part), LA_OK);
    for (size_t i = 0; i < n; i++) {
        char id[32], text[64];
        snprintf(id, sizeof id, "r%05zu", i);
        snprintf(text, sizeof text, "  Question\u00a0NUMBER %zu  ", i % 97);
        la_row row;
        memset(&row, 0, sizeof row);
        row.date = LA_NO_DATE;
        row.part = part;
        assert_int_equal(la_table_strdup(t, id, strlen(id), &row.id), LA_OK);
        if (i % 10 != 3) assert_int_equal(la_table_strdup(t, text, strlen(text), &row.text), LA_OK);
        assert_int_equal(la_table_append(t, &row, NULL), LA_OK);
    }
    return t;
}

static void test_normalize_table(void **state)
{
    const size_t n = 1000;
    la_table *t1 = make_table(n), *t4 = make_table(n);
    assert_int_equal(la_normalize_table(t1, LA_NORM_NFKC, 1), LA_OK);
    assert_int_equal(la_normalize_table(t4, LA_NORM_NFKC, 4), LA_OK);
    const la_row *a = la_table_rows_const(t1), *b = la_table_rows_const(t4);
    for (size_t i = 0; i < n; i++) {
        if (i % 10 == 3) {
            assert_null(a[i].norm);
            assert_null(b[i].norm);
            continue;
        }
        char want[64];
        snprintf(want, sizeof want, "question number %zu", i % 97);
        assert_string_equal(a[i].norm, want);
        assert_int_equal(a[i].norm_len, strlen(want));
        assert_string_equal(b[i].norm, want);
        uint64_t h[2];
        la_text_hash128(want, strlen(want), h);
        assert_memory_equal(a[i].hash, h, sizeof h);
        assert_memory_equal(b[i].hash, h, sizeof h);
    }
    la_table_free(t1);
    la_table_free(t4);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_case_and_space),
        cmocka_unit_test(test_vietnamese_forms_hash_equal),
        cmocka_unit_test(test_full_width_and_chinese),
        cmocka_unit_test(test_three_modes),
        cmocka_unit_test(test_hash_pinned),
        cmocka_unit_test(test_normalize_table),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
