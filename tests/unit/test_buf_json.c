/*
 * test_buf_json.c - la_buf_json_strn, which copies runs of plain bytes eight at a time, against the
 * rule it implements written byte by byte: '"' and '\\' and \n \r \t escaped, other control
 * characters and DEL as \u00XX, valid UTF-8 copied, each byte of an invalid sequence as U+FFFD; on
 * random strings of every length up to 80 and at every offset, over alphabets that put the bytes
 * that need care next to the plain ones.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"

/* The reference: a JSON string of s[0 .. n), byte by byte. */
static size_t ref_utf8_len(const unsigned char *s, size_t n)
{
    unsigned c = s[0];
    size_t len;
    unsigned min;
    if (c < 0x80) return 1;
    if ((c & 0xE0) == 0xC0) len = 2, min = 0x80, c &= 0x1F;
    else if ((c & 0xF0) == 0xE0) len = 3, min = 0x800, c &= 0x0F;
    else if ((c & 0xF8) == 0xF0) len = 4, min = 0x10000, c &= 0x07;
    else return 0;
    if (len > n) return 0;
    for (size_t i = 1; i < len; i++) {
        if ((s[i] & 0xC0) != 0x80) return 0;
        c = (c << 6) | (s[i] & 0x3F);
    }
    return c < min || c > 0x10FFFF || (c >= 0xD800 && c <= 0xDFFF) ? 0 : len;
}

static void reference(la_buf *b, const unsigned char *s, size_t n)
{
    la_buf_putc(b, '"');
    for (size_t i = 0; i < n;) {
        unsigned char c = s[i];
        char tmp[8];
        if (c == '"') la_buf_puts(b, "\\\"");
        else if (c == '\\') la_buf_puts(b, "\\\\");
        else if (c == '\n') la_buf_puts(b, "\\n");
        else if (c == '\r') la_buf_puts(b, "\\r");
        else if (c == '\t') la_buf_puts(b, "\\t");
        else if (c < 0x20 || c == 0x7F) {
            snprintf(tmp, sizeof tmp, "\\u%04x", c);
            la_buf_puts(b, tmp);
        } else if (c >= 0x80) {
            size_t len = ref_utf8_len(s + i, n - i);
            if (len == 0) la_buf_puts(b, "\xEF\xBF\xBD");
            else la_buf_putn(b, (const char *)s + i, len);
            i += len ? len : 1;
            continue;
        } else {
            la_buf_putc(b, (char)c);
        }
        i++;
    }
    la_buf_putc(b, '"');
}

static uint64_t next(uint64_t *s)
{
    *s = *s * 6364136223846793005ull + 1442695040888963407ull;
    return *s >> 33;
}

static void expect_same(const unsigned char *s, size_t n)
{
    la_buf want = {0}, got = {0};
    reference(&want, s, n);
    la_buf_json_strn(&got, (const char *)s, n);
    assert_int_equal(got.n, want.n);
    assert_memory_equal(got.p, want.p, want.n);
    la_buf_free(&want);
    la_buf_free(&got);
}

static void test_random_strings(void **state)
{
    (void)state;
    /* mostly plain letters, with the bytes that need care mixed in at the given rate */
    static const unsigned char care[] = {'"', '\\', '\n', '\r', '\t', 0x00, 0x01, 0x1F, 0x20, 0x7E, 0x7F, 0x80,
                                         0xC3, 0xA9, 0xE6, 0xBC, 0xA2, 0xF0, 0x9F, 0x98, 0x80, 0xED, 0xA0, 0xFF};
    unsigned char buf[96];
    uint64_t seed = 7;
    for (int rate = 1; rate <= 64; rate *= 4)
        for (int round = 0; round < 400; round++)
            for (size_t n = 0; n <= 80; n++) {
                size_t off = (size_t)(next(&seed) % 8);
                for (size_t i = 0; i < n; i++)
                    buf[off + i] = next(&seed) % 64 < (uint64_t)rate ? care[next(&seed) % sizeof care]
                                                                       : (unsigned char)('a' + next(&seed) % 26);
                expect_same(buf + off, n);
            }
}

static void test_fixed_strings(void **state)
{
    (void)state;
    const char *cases[] = {"", "plain text of more than eight bytes", "a\"b", "tab\there", "0123456\\",
                           "01234567\x7f", "caf\xC3\xA9 au lait, caf\xC3\xA9 noir", "\xE6\xBC\xA2\xE5\xAD\x97",
                           "cut \xE6\xBC", "surrogate \xED\xA0\x80 here", "\xF0\x9F\x98\x80 emoji at the start"};
    for (size_t k = 0; k < sizeof cases / sizeof *cases; k++)
        expect_same((const unsigned char *)cases[k], strlen(cases[k]));
    la_buf b = {0};
    la_buf_json_strn(&b, "say \"hi\"\n\x01", 10);
    assert_int_equal(b.n, strlen("\"say \\\"hi\\\"\\n\\u0001\""));
    assert_memory_equal(b.p, "\"say \\\"hi\\\"\\n\\u0001\"", b.n);
    la_buf_free(&b);
}

/* Integers written without printf read as printf writes them: the ends of the ranges, powers of
 * ten and their neighbours, and random values. */
static void test_integers_as_printf(void **state)
{
    (void)state;
    uint64_t u[200];
    int64_t v[200];
    size_t n = 0;
    u[n] = 0, v[n++] = 0;
    u[n] = UINT64_MAX, v[n++] = INT64_MIN;
    u[n] = (uint64_t)INT64_MAX, v[n++] = INT64_MAX;
    for (uint64_t p = 1; p <= UINT64_MAX / 10 && n + 3 < 200; p *= 10) {
        u[n] = p - 1, v[n++] = -(int64_t)p;
        u[n] = p, v[n++] = (int64_t)p - 1;
        u[n] = p + 1, v[n++] = -(int64_t)p + 1;
    }
    for (uint64_t x = 0x2545f4914f6cdd1dull; n < 200;) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        u[n] = x >> (x % 64), v[n++] = (int64_t)x >> (x % 63);
    }
    for (size_t k = 0; k < n; k++) {
        char want[64];
        la_buf b = {0};
        la_buf_putu(&b, u[k]);
        la_buf_putc(&b, ' ');
        la_buf_puti(&b, v[k]);
        snprintf(want, sizeof want, "%llu %lld", (unsigned long long)u[k], (long long)v[k]);
        assert_string_equal(b.p, want);
        la_buf_free(&b);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_random_strings),
        cmocka_unit_test(test_fixed_strings),
        cmocka_unit_test(test_integers_as_printf),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
