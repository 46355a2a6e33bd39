/* test_shingle.c - shingling: token rules, code points not bytes, the documented hash (values below
 * come from an independent implementation of the formulas in kernels/shingle_core.h), set helpers. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "near_kernels.h"
#include "shingle_core.h"

static size_t sh(const char *s, int kind, int n, uint64_t *out, size_t cap)
{
    return la_cpu_shingle(s, strlen(s), kind, n, out, cap);
}

static void test_known_hashes(void **state)
{
    assert_true(la_mix64(1) == 0x5692161d100b05e5ull);
    assert_true(la_hash_bytes((const unsigned char *)"hello", 5) == 0xf18e149fa705d581ull);
    assert_true(la_hash_bytes((const unsigned char *)"abcdefghij", 10) == 0x7f178b3c300a72dfull);
    uint64_t h[4];
    assert_int_equal(sh("hello", LA_SHINGLE_WORD, 1, h, 4), 1);
    assert_true(h[0] == 0x2a6f61e97d314935ull);
    assert_int_equal(sh("the quick brown", LA_SHINGLE_WORD, 2, h, 4), 2);
    assert_true(h[0] == 0x985c4005707c9fc4ull);
    assert_true(h[1] == 0xf706cbcd5bdcc622ull);
    /* Words of any length hash as la_hash_bytes says (the CPU loop has a fast path up to 8 bytes). */
    const char *words[] = {"a", "abcdefgh", "abcdefghi", "internationalization", "\xc3\xa9t\xc3\xa9"};
    for (size_t i = 0; i < sizeof words / sizeof *words; i++) {
        uint64_t tok = la_hash_bytes((const unsigned char *)words[i], strlen(words[i]));
        uint64_t ring[1] = {tok};
        assert_int_equal(sh(words[i], LA_SHINGLE_WORD, 1, h, 4), 1);
        assert_true(h[0] == la_shingle_fold(ring, 1, 0, 1));
    }
}

static void test_words_ignore_punctuation_and_spacing(void **state)
{
    uint64_t a[8], b[8];
    size_t na = sh("what is the capital of france?", LA_SHINGLE_WORD, 3, a, 8);
    size_t nb = sh("  what is the  capital, of \"france\"\n", LA_SHINGLE_WORD, 3, b, 8);
    assert_int_equal(na, 4);
    assert_int_equal(nb, 4);
    assert_memory_equal(a, b, sizeof(uint64_t) * 4);
    /* Order matters: "b a" is not "a b". */
    sh("alpha beta", LA_SHINGLE_WORD, 2, a, 8);
    sh("beta alpha", LA_SHINGLE_WORD, 2, b, 8);
    assert_true(a[0] != b[0]);
}

static void test_chars_count_code_points(void **state)
{
    uint64_t h[16];
    /* "héllo": 5 code points in 6 bytes -> 3 trigrams, not 4. */
    assert_int_equal(sh("h\xc3\xa9llo", LA_SHINGLE_CHAR, 3, h, 16), 3);
    assert_true(h[0] == 0x9cee4077637bceccull);
    assert_true(h[2] == 0xa2ef0f8efe88bcd7ull);
    /* Seven CJK code points (21 bytes) -> 6 bigrams. */
    assert_int_equal(sh("\xe6\x97\xa5\xe6\x9c\xac\xe8\xaa\x9e\xe3\x83\x86\xe3\x82\xad\xe3\x82\xb9\xe3\x83\x88",
                        LA_SHINGLE_CHAR, 2, h, 16),
                     6);
    /* Whitespace runs are one space; leading and trailing spaces are ignored. */
    uint64_t a[16], b[16];
    size_t na = sh("ab cd", LA_SHINGLE_CHAR, 2, a, 16), nb = sh("  ab \t\n cd ", LA_SHINGLE_CHAR, 2, b, 16);
    assert_int_equal(na, 4);
    assert_int_equal(nb, 4);
    assert_memory_equal(a, b, sizeof(uint64_t) * 4);
    /* A truncated multi-byte sequence is read byte by byte, never past the end. */
    assert_int_equal(la_cpu_shingle("a\xe6\x97", 3, LA_SHINGLE_CHAR, 1, h, 16), 3);
}

static void test_short_and_empty_texts(void **state)
{
    uint64_t h[4], one[4];
    assert_int_equal(sh("", LA_SHINGLE_WORD, 3, h, 4), 0);
    assert_int_equal(sh(" ,;! ", LA_SHINGLE_WORD, 3, h, 4), 0);
    assert_int_equal(sh("   ", LA_SHINGLE_CHAR, 3, h, 4), 0);
    /* Fewer tokens than n: one shingle of all of them, equal to the n=2 shingle of the same words. */
    assert_int_equal(sh("two words", LA_SHINGLE_WORD, 5, h, 4), 1);
    assert_int_equal(sh("two words", LA_SHINGLE_WORD, 2, one, 4), 1);
    assert_true(h[0] == one[0]);
    assert_int_equal(sh("hi", LA_SHINGLE_CHAR, 5, h, 4), 1);
    /* Bad arguments give nothing. */
    assert_int_equal(sh("a b c", LA_SHINGLE_WORD, 0, h, 4), 0);
    assert_int_equal(sh("a b c", 7, 2, h, 4), 0);
}

static void test_capacity_is_reported(void **state)
{
    uint64_t h[2], all[8];
    const char *s = "one two three four five six";
    assert_int_equal(sh(s, LA_SHINGLE_WORD, 1, h, 2), 6);
    assert_int_equal(sh(s, LA_SHINGLE_WORD, 1, all, 8), 6);
    assert_memory_equal(h, all, sizeof h);
    assert_true(la_shingle_bound(strlen(s)) >= 6);
}

static void test_set_helpers(void **state)
{
    uint64_t a[] = {9, 3, 7, 3, 1, 9, 9};
    la_cpu_shingle_sort(a, 7);
    uint64_t sorted[] = {1, 3, 3, 7, 9, 9, 9};
    assert_memory_equal(a, sorted, sizeof a);
    assert_int_equal(la_cpu_shingle_unique(a, 7), 4);
    uint64_t b[] = {3, 4, 9, 10, 11};
    assert_int_equal(la_cpu_shingle_overlap(a, 4, b, 5), 2); /* {3, 9} */
    assert_int_equal(la_cpu_shingle_overlap(a, 4, b, 0), 0);
    /* A large, adversarial input: many equal values and a descending run. */
    enum { N = 5000 };
    static uint64_t big[N];
    for (size_t i = 0; i < N; i++) big[i] = i % 3 ? N - i : 42;
    la_cpu_shingle_sort(big, N);
    for (size_t i = 1; i < N; i++) assert_true(big[i - 1] <= big[i]);
}

/* The overlap of two sorted sets against a count by lookup, on sets that share every element, none,
 * and some, of equal and of different sizes, and where one ends before the other starts. */
static void test_overlap_counts_shared_elements(void **state)
{
    (void)state;
    enum { MOST = 300 };
    uint64_t a[MOST], b[MOST], r = 0x243f6a8885a308d3ull;
    for (int t = 0; t < 400; t++) {
        size_t na = (size_t)(t * 7 % MOST), nb = (size_t)(t * 13 % MOST);
        int share = t % 5; /* in fifths: how often b takes a's element at the same place */
        uint64_t va = (uint64_t)(t % 3) << 40, vb = t % 7 == 0 ? (uint64_t)1 << 50 : 0;
        for (size_t i = 0; i < MOST; i++) {
            r ^= r << 13, r ^= r >> 7, r ^= r << 17;
            va += 1 + r % 5;
            a[i] = va;
            vb += 1 + (r >> 8) % 5;
            b[i] = (int)((r >> 20) % 5) < share && i < na ? a[i] : vb;
        }
        la_cpu_shingle_sort(b, nb);
        nb = la_cpu_shingle_unique(b, nb);
        size_t want = 0;
        for (size_t i = 0; i < na; i++)
            for (size_t j = 0; j < nb; j++) want += a[i] == b[j];
        assert_int_equal(la_cpu_shingle_overlap(a, na, b, nb), want);
        assert_int_equal(la_cpu_shingle_overlap(b, nb, a, na), want);
    }
}

/* The distinct values of a multiset from la_cpu_shingle_distinct: the set sorting and
 * la_cpu_shingle_unique give, each value once, in the order of its first occurrence (from 16
 * values, unless they crowd a few home slots: then sorted), the same out for the same input, the
 * input unchanged and the table left empty. Multisets of 0 to 3,000 values: hashes with few and
 * many repeats, zeros, and values crowded into a few home slots (small numbers, one top bit
 * pattern), which take the sort instead. */
static void test_distinct_matches_sort(void **state)
{
    (void)state;
    enum { MOST = 3000 };
    static uint64_t m[MOST], keep[MOST], got[MOST], again[MOST], want[MOST], first[MOST];
    size_t len = la_shingle_distinct_table(MOST);
    uint64_t *table = calloc(len, sizeof *table), r = 0x13198a2e03707344ull;
    assert_non_null(table);
    int in_order = 0;
    for (int t = 0; t < 400; t++) {
        size_t n = (size_t)(t * 37 % (MOST + 1)), pool = 1 + (size_t)(t % 4 == 0 ? 7 : t * 11 % 4000);
        for (size_t i = 0; i < n; i++) {
            r ^= r << 13, r ^= r >> 7, r ^= r << 17;
            uint64_t v = t % 6 == 5 ? r % pool : t % 6 == 4 ? 0xfff0000000000000ull | (r % pool) : la_mix64(r % pool);
            m[i] = r % 11 == 0 && t % 3 == 0 ? 0 : v;
        }
        memcpy(keep, m, n * sizeof *m);
        memcpy(want, m, n * sizeof *m);
        la_cpu_shingle_sort(want, n);
        size_t nw = la_cpu_shingle_unique(want, n);
        /* the first occurrences, in order (quadratic, on the distinct values seen so far) */
        size_t nf = 0;
        for (size_t i = 0; i < n; i++) {
            size_t j = 0;
            while (j < nf && first[j] != m[i]) j++;
            if (j == nf) first[nf++] = m[i];
        }
        assert_int_equal(nf, nw);
        size_t ng = la_cpu_shingle_distinct(m, n, got, table);
        assert_int_equal(ng, nw);
        for (size_t k = 0; k < len; k++) assert_true(table[k] == 0);
        assert_int_equal(la_cpu_shingle_distinct(m, n, again, table), ng);
        if (ng) assert_memory_equal(again, got, ng * sizeof *got);
        if (n) assert_memory_equal(m, keep, n * sizeof *m);
        if (ng && !memcmp(got, first, ng * sizeof *got)) {
            in_order += n >= 16;
        } else if (ng) {
            /* sorted instead: the same values ascending */
            assert_memory_equal(got, want, ng * sizeof *got);
        }
    }
    /* the hashes (two in three of the multisets) keep their first occurrences' order */
    assert_true(in_order >= 200);
    free(table);
}

/* The overlap counted through la_cpu_shingle_index against la_cpu_shingle_overlap on the same sets
 * sorted: sets of 0 to 400 hashes in any order, sharing all, none or some of their values, with and
 * without the value 0, and the table all zero after la_cpu_shingle_index_clear. */
static void test_index_overlap_matches_merge(void **state)
{
    (void)state;
    enum { MOST = 400 };
    static uint64_t a[MOST], b[MOST], bd[MOST], sa[MOST], sb[MOST];
    size_t len = la_shingle_index_table(MOST);
    uint64_t *table = calloc(len, sizeof *table), r = 0xa4093822299f31d0ull;
    assert_non_null(table);
    for (int t = 0; t < 600; t++) {
        size_t na = (size_t)(t * 7 % (MOST + 1)), nb = (size_t)(t * 13 % (MOST + 1));
        int share = t % 5; /* in fifths: how often b takes one of a's values */
        for (size_t i = 0; i < MOST; i++) a[i] = la_mix64((uint64_t)t << 32 | i);
        for (size_t i = 0; i < nb; i++) {
            r ^= r << 13, r ^= r >> 7, r ^= r << 17;
            b[i] = na && (int)(r % 5) < share ? a[(r >> 8) % na] : la_mix64(r | 1ull << 63);
        }
        if (t % 4 == 1 && na) a[na / 2] = 0;
        if (t % 8 == 1 && nb) b[0] = 0;
        /* b's distinct values in the order la_cpu_shingle_distinct gives them (bd), and sorted */
        uint64_t *dtab = calloc(la_shingle_distinct_table(nb), sizeof *dtab);
        assert_non_null(dtab);
        size_t nbd = la_cpu_shingle_distinct(b, nb, bd, dtab);
        free(dtab);
        memcpy(sb, bd, nbd * sizeof *bd);
        la_cpu_shingle_sort(sb, nbd);
        memcpy(sa, a, na * sizeof *a);
        la_cpu_shingle_sort(sa, na);
        size_t want = la_cpu_shingle_overlap(sa, la_cpu_shingle_unique(sa, na), sb, nbd);
        la_shingle_index x;
        la_cpu_shingle_index(&x, bd, nbd, table);
        assert_int_equal(la_cpu_shingle_index_overlap(&x, a, na), want);
        la_cpu_shingle_index_clear(&x);
        for (size_t k = 0; k < len; k++) assert_true(table[k] == 0);
    }
    free(table);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_known_hashes),
        cmocka_unit_test(test_words_ignore_punctuation_and_spacing),
        cmocka_unit_test(test_chars_count_code_points),
        cmocka_unit_test(test_short_and_empty_texts),
        cmocka_unit_test(test_capacity_is_reported),
        cmocka_unit_test(test_set_helpers),
        cmocka_unit_test(test_overlap_counts_shared_elements),
        cmocka_unit_test(test_distinct_matches_sort),
        cmocka_unit_test(test_index_overlap_matches_merge),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
