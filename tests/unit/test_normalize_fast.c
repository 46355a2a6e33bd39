/*
 * test_normalize_fast.c - la_normalize (ASCII fast path, utf8proc only for the rest) against
 * la_normalize_ref (utf8proc over the whole text): the same status, the same error message and the
 * same bytes, in all three modes, on every pair of ASCII bytes, every code point between ASCII
 * neighbours, random ASCII, random mixed UTF-8 (malformed bytes, combining marks after ASCII letters,
 * Hangul jamo, compatibility forms, Unicode whitespace) and real translated text in 32 languages as
 * written, decomposed and upper-cased. Not for: what the normalized form is (see test_normalize.c).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <utf8proc.h>

#include "leakaudit.h"
#include "la_scan.h"
#include "normalize.h"
#include "buf_fixture.h"

static const la_norm_mode k_modes[] = {LA_NORM_NFKC, LA_NORM_SPACE, LA_NORM_NONE};

static void print_hex(const char *what, const char *s, size_t n)
{
    fprintf(stderr, "%s (%zu bytes):", what, n);
    for (size_t i = 0; i < n && i < 400; i++) fprintf(stderr, " %02x", (unsigned char)s[i]);
    fprintf(stderr, "\n");
}

/* Both paths on the same bytes: equal status; on success equal bytes, on failure equal messages. */
static void expect_same_mode(const char *s, size_t n, la_norm_mode mode)
{
    char *a = NULL, *b = NULL, ea[256], eb[256];
    size_t na = 0, nb = 0;
    la_status sa = la_normalize_ref(s, n, mode, &a, &na);
    snprintf(ea, sizeof ea, "%s", sa == LA_OK ? "" : la_last_error());
    /* the fast path with the CPU's loops (AVX-512 where it has them) and with the portable ones */
    for (int portable = 0; portable < 2; portable++) {
        la_scan_portable(portable);
        la_status sb = la_normalize(s, n, mode, &b, &nb);
        snprintf(eb, sizeof eb, "%s", sb == LA_OK ? "" : la_last_error());
        int same = sa == sb && !strcmp(ea, eb) && (sa != LA_OK || (na == nb && !memcmp(a, b, na) && b[nb] == '\0'));
        if (!same) {
            fprintf(stderr, "mode %s%s: reference status %d '%s', fast %d '%s'\n", la_norm_mode_name(mode),
                    portable ? " (portable loops)" : "", sa, ea, sb, eb);
            print_hex("input", s, n);
            if (sa == LA_OK) print_hex("reference", a, na);
            if (sb == LA_OK) print_hex("fast", b, nb);
        }
        free(b);
        b = NULL;
        la_scan_portable(0);
        assert_true(same);
    }
    free(a);
}

static void expect_same(const char *s, size_t n)
{
    for (size_t m = 0; m < sizeof k_modes / sizeof *k_modes; m++) expect_same_mode(s, n, k_modes[m]);
}

/* ---- a small seeded generator (xorshift64*) ---- */

static uint64_t g_rng = 0x5eed13u;

static uint64_t rnd(void)
{
    g_rng ^= g_rng >> 12, g_rng ^= g_rng << 25, g_rng ^= g_rng >> 27;
    return g_rng * 0x2545f4914f6cdd1du;
}

static uint32_t below(uint32_t n)
{
    return (uint32_t)(rnd() % n);
}

static void put_cp(buf *b, int32_t cp)
{
    utf8proc_uint8_t u[4];
    put(b, u, (size_t)utf8proc_encode_char(cp, u));
}

/* ---- exhaustive small cases ---- */

static void test_ascii_pairs(void **state)
{
    for (int a = 0; a < 128; a++)
        for (int b = 0; b < 128; b++) {
            char s[2] = {(char)a, (char)b};
            expect_same(s, 1);
            expect_same(s, 2);
        }
}

/* Every scalar value between ASCII neighbours, in two contexts: a letter that many marks compose
 * with and upper case after it, and a space before with '<' (which U+0338 composes with) after. */
static void test_every_code_point_between_ascii(void **state)
{
    for (int32_t cp = 0x80; cp <= 0x10ffff; cp++) {
        if (cp >= 0xd800 && cp <= 0xdfff) continue;
        buf b = {0};
        put(&b, "e", 1);
        put_cp(&b, cp);
        put(&b, "E <", 3);
        put_cp(&b, cp);
        put(&b, "<", 1);
        expect_same_mode(b.p, b.n, LA_NORM_NFKC);
        if ((cp & 0xff) == 0) expect_same(b.p, b.n);
        free(b.p);
    }
}

/* ---- random text ---- */

static void test_random_ascii(void **state)
{
    static const char alphabet[] = "aAbBzZ09 \t\n\r\v\f  .,;<=>?!~\x01\x1f\x7f";
    for (int iter = 0; iter < 20000; iter++) {
        buf b = {0};
        uint32_t len = below(iter % 10 ? (iter % 3 == 1 ? 300 : 64) : 2000);
        for (uint32_t i = 0; i < len; i++) {
            char c = iter % 3 ? alphabet[below(sizeof alphabet - 1)] : (char)below(128);
            if (iter % 3 == 1) /* running text: words, single spaces, the odd run of whitespace */
                c = below(6) == 0 ? (below(20) ? ' ' : "\t\n  "[below(4)]) : "etaoinSHRDLU"[below(12)];
            put(&b, &c, 1);
        }
        expect_same(b.p ? b.p : "", b.n);
        free(b.p);
    }
}

static const int32_t k_spaces[] = {0x85, 0xa0, 0x1680, 0x2000, 0x2003, 0x200a, 0x200b, 0x2028, 0x2029, 0x202f, 0x205f, 0x3000, 0xfeff};
static const int32_t k_compat[] = {0xb2, 0xb4, 0xb5, 0xdf, 0x130, 0x131, 0x149, 0x17f, 0x1c4, 0x1e9e, 0x2126, 0x212a, 0x212b, 0x2160,
                                   0x2460, 0x3392, 0xfb00, 0xfb01, 0xfb06, 0xfdfa, 0xff21, 0xff41, 0xff5e, 0x1d400, 0x1f100, 0x3a3,
                                   0x3c2, 0x390, 0x1f80, 0x1fb3, 0x344, 0x340, 0x374, 0x37e, 0x387, 0xf73, 0xf75, 0xf81};
static const char *k_malformed[] = {"\x80", "\xbf", "\xc3", "\xe2\x82", "\xf0\x9f\x98", "\xc0\x80", "\xc1\xbf", "\xe0\x80\x80",
                                    "\xed\xa0\x80", "\xed\xbf\xbf", "\xf4\x90\x80\x80", "\xf5\x80\x80\x80", "\xfe", "\xff"};

/* One random token: mostly ASCII, the rest code points that interact with what is around them. */
static void put_token(buf *b, int malformed)
{
    uint32_t k = below(100);
    if (k < 30) {
        char c = "aeiouAEIOUnNcCsSzZ<=>09"[below(23)];
        put(b, &c, 1);
    } else if (k < 40) {
        char c = " \t\n\r\v\f"[below(6)];
        put(b, &c, 1);
    } else if (k < 43) {
        char c = (char)below(128);
        put(b, &c, 1);
    } else if (k < 58) { /* combining marks, often stacked, in any order */
        static const int32_t marks[] = {0x300, 0x301, 0x302, 0x303, 0x308, 0x30a, 0x30c, 0x323, 0x327, 0x328, 0x331, 0x338,
                                        0x345, 0x34f, 0x1ab0, 0x1dc0, 0x20d0, 0x20e3, 0x302a, 0x3099, 0x309a, 0x93c, 0x94d, 0x5b0};
        int nm = 1 + (int)below(3);
        for (int i = 0; i < nm; i++) put_cp(b, k < 54 ? marks[below(sizeof marks / sizeof *marks)] : (int32_t)(0x300 + below(0x70)));
    } else if (k < 63) {
        put_cp(b, k_spaces[below(sizeof k_spaces / sizeof *k_spaces)]);
    } else if (k < 70) {
        put_cp(b, k_compat[below(sizeof k_compat / sizeof *k_compat)]);
    } else if (k < 76) {
        put_cp(b, (int32_t)(0xc0 + below(0x250 - 0xc0))); /* precomposed Latin */
    } else if (k < 82) { /* Hangul: jamo that compose into syllables, and syllables that take a T */
        uint32_t h = below(4);
        put_cp(b, h == 0 ? (int32_t)(0x1100 + below(19)) : h == 1 ? (int32_t)(0x1161 + below(21))
                  : h == 2 ? (int32_t)(0x11a8 + below(27)) : (int32_t)(0xac00 + below(11172)));
    } else if (k < 87) {
        put_cp(b, (int32_t)(below(2) ? 0x3040 + below(0xc0) : 0x4e00 + below(0x5200))); /* kana, CJK */
    } else if (k < 95 || !malformed) {
        int32_t cp;
        do cp = (int32_t)(0x80 + below(0x110000 - 0x80));
        while (cp >= 0xd800 && cp <= 0xdfff);
        put_cp(b, cp);
    } else {
        const char *m = k_malformed[below(sizeof k_malformed / sizeof *k_malformed)];
        put(b, m, strlen(m));
    }
}

static void test_random_mixed_utf8(void **state)
{
    for (int iter = 0; iter < 30000; iter++) {
        buf b = {0};
        uint32_t ntok = below(iter % 10 ? 40 : 600);
        int malformed = iter % 4 == 0;
        for (uint32_t i = 0; i < ntok; i++) put_token(&b, malformed);
        expect_same(b.p ? b.p : "", b.n);
        free(b.p);
    }
}

/* ---- real text ---- */

typedef struct lines {
    char **v;
    size_t n;
} lines;

static lines read_fixture(void)
{
    const char *path = LA_SOURCE_DIR "/tests/data/multilingual/iso_3166-1.tsv";
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    lines L = {NULL, 0};
    char line[4096];
    while (fgets(line, sizeof line, f)) {
        char *tab = strchr(line, '\t');
        assert_non_null(tab);
        line[strcspn(line, "\n")] = '\0';
        L.v = realloc(L.v, (L.n + 1) * sizeof *L.v);
        assert_non_null(L.v);
        L.v[L.n] = strdup(tab + 1);
        assert_non_null(L.v[L.n]);
        L.n++;
    }
    fclose(f);
    assert_true(L.n >= 900);
    return L;
}

/* s upper-cased code point by code point (s is valid UTF-8); malloc'ed. */
static char *upper(const char *s)
{
    buf b = {0};
    const utf8proc_uint8_t *u = (const utf8proc_uint8_t *)s;
    utf8proc_ssize_t n = (utf8proc_ssize_t)strlen(s);
    for (utf8proc_ssize_t i = 0; i < n;) {
        utf8proc_int32_t c;
        utf8proc_ssize_t adv = utf8proc_iterate(u + i, n - i, &c);
        assert_true(adv > 0);
        put_cp(&b, utf8proc_toupper(c));
        i += adv;
    }
    put(&b, "", 1);
    return b.p;
}

static void test_real_multilingual_text(void **state)
{
    lines L = read_fixture();
    buf all = {0};
    for (size_t i = 0; i < L.n; i++) {
        char *nfd = (char *)utf8proc_NFD((const utf8proc_uint8_t *)L.v[i]);
        char *up = upper(L.v[i]);
        char *upnfd = (char *)utf8proc_NFD((const utf8proc_uint8_t *)up);
        assert_non_null(nfd);
        assert_non_null(upnfd);
        const char *forms[4] = {L.v[i], nfd, up, upnfd};
        for (int f = 0; f < 4; f++) {
            expect_same(forms[f], strlen(forms[f]));
            put(&all, forms[f], strlen(forms[f]));
            put(&all, i % 7 ? " \t" : "\xe3\x80\x80\n", i % 7 ? 2 : 4); /* ideographic space + newline */
        }
        free(nfd);
        free(up);
        free(upnfd);
    }
    expect_same(all.p, all.n); /* one long mixed document */
    for (int iter = 0; iter < 2000; iter++) { /* random cuts: pieces that start or end mid-word */
        size_t a = below((uint32_t)all.n), len = below(300);
        if (a + len > all.n) len = all.n - a;
        expect_same(all.p + a, len);
    }
    free(all.p);
    for (size_t i = 0; i < L.n; i++) free(L.v[i]);
    free(L.v);
}

static void test_combining_after_ascii_composes(void **state)
{
    /* the cases the split must not break: the ASCII letter before a mark goes with it */
    static const char *cases[] = {"cafe\xcc\x81", "CAFE\xcc\x81 au lait", "a<\xcc\xb8" "b", "Ang\xcc\x8astro\xcc\x88m",
                                  "e\xcc\x81\xcc\x81", "x \xcc\x81", "A\xe2\x80\x83\xcc\x81", "\xcc\x81" "abc"};
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) expect_same(cases[i], strlen(cases[i]));
    char *out = NULL;
    size_t n = 0;
    assert_int_equal(la_normalize("CAFE\xcc\x81", 6, LA_NORM_NFKC, &out, &n), LA_OK);
    assert_string_equal(out, "caf\xc3\xa9");
    free(out);
    assert_int_equal(la_normalize("a<\xcc\xb8" "b", 5, LA_NORM_NFKC, &out, &n), LA_OK);
    assert_string_equal(out, "a\xe2\x89\xae" "b"); /* U+226E NOT LESS-THAN */
    free(out);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_combining_after_ascii_composes),
        cmocka_unit_test(test_ascii_pairs),
        cmocka_unit_test(test_every_code_point_between_ascii),
        cmocka_unit_test(test_random_ascii),
        cmocka_unit_test(test_random_mixed_utf8),
        cmocka_unit_test(test_real_multilingual_text),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
