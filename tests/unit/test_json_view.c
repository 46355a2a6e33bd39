/* test_json_view.c - values read from a record's text are the ones json-c gives: fields by name and
 * by dotted path, null as no value, strings decoded (lone surrogates as U+FFFD), integers saturated
 * as json-c saturates them, keys cut at an escaped NUL with the last of two equal keys holding,
 * records with more members than the index holds, and which lines count as one object. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json_view.h"

static la_jval get(const char *line, const char *path)
{
    static la_jrec r;
    la_jrec_open(&r, line, strlen(line));
    return la_jrec_get(&r, path);
}

/* The value's literal text equals lit (NULL: absent). */
static void expect_lit(const char *line, const char *path, const char *lit)
{
    la_jval v = get(line, path);
    if (!lit) {
        if (v.p) fail_msg("%s in %s: found '%.*s', expected none", path, line, (int)v.n, v.p);
        return;
    }
    if (!v.p) fail_msg("%s in %s: not found, expected %s", path, line, lit);
    if (v.n != strlen(lit) || memcmp(v.p, lit, v.n)) fail_msg("%s in %s: '%.*s', expected %s", path, line, (int)v.n, v.p, lit);
}

static void expect_str(const char *line, const char *path, const char *bytes, size_t n)
{
    la_jval v = get(line, path);
    assert_non_null(v.p);
    assert_int_equal(la_jval_type(v), LA_JSTRING);
    char out[256];
    assert_true(v.n <= sizeof out);
    size_t got = la_jval_string(v, out);
    if (got != n || memcmp(out, bytes, n)) fail_msg("%s in %s: %zu bytes decoded, expected %zu", path, line, got, n);
}

static void test_paths(void **state)
{
    const char *s = "{\"id\":\"x\",\"family\":18446744073709551617,\"m\":[{\"f\":-0},{\"f\":1.50}],\"a.b\":7,"
                    "\"a\":{\"b\":8,\"c\":{\"d\":[true]}},\"k\\u0065y\":12,\"n\":null,\"o\":{\"p\":null}}";
    expect_lit(s, "id", "\"x\"");
    expect_lit(s, "family", "18446744073709551617");
    expect_lit(s, "m.0.f", "-0");
    expect_lit(s, "m.1.f", "1.50");
    expect_lit(s, "m.2.f", NULL);
    expect_lit(s, "m.-1.f", NULL);
    expect_lit(s, "m.x", NULL);
    expect_lit(s, "a.b", "7");              /* the literal key first */
    expect_lit(s, "a..c.d.0", "true");       /* empty segments are skipped */
    expect_lit(s, "a.c.d.0.x", NULL);        /* no path through a scalar */
    expect_lit(s, "key", "12");              /* keys compare decoded */
    expect_lit(s, "n", NULL);                /* null is no value */
    expect_lit(s, "o.p", NULL);
    expect_lit(s, "n.x", NULL);
    expect_lit(s, "nope", NULL);
    la_jrec r;
    la_jrec_open(&r, s, strlen(s));
    la_jval n = la_jrec_member(&r, "n"); /* the member itself is there */
    assert_non_null(n.p);
    assert_int_equal(la_jval_type(n), LA_JNULL);
    la_jval whole = la_jrec_get(&r, "..");
    assert_int_equal(la_jval_type(whole), LA_JOBJECT);
    assert_int_equal(whole.n, strlen(s));
}

static void test_strings(void **state)
{
    const char *s = "{\"plain\":\"caf\xc3\xa9\",\"esc\":\"a\\\"b\\\\c\\/d\\b\\f\\n\\r\\t\",\"pair\":\"\\ud83d\\ude00\","
                    "\"lone\":\"\\ud800x\",\"low\":\"\\udc00\",\"hh\":\"\\ud800\\ud800\",\"hl\":\"\\ud800\\u0041\","
                    "\"nul\":\"x\\u0000y\",\"e\":\"\\u00e9\\u4e2d\"}";
    expect_str(s, "plain", "caf\xc3\xa9", 5);
    expect_str(s, "esc", "a\"b\\c/d\b\f\n\r\t", 12);
    expect_str(s, "pair", "\xf0\x9f\x98\x80", 4);
    expect_str(s, "lone", "\xef\xbf\xbdx", 4);
    expect_str(s, "low", "\xef\xbf\xbd", 3);
    expect_str(s, "hh", "\xef\xbf\xbd\xef\xbf\xbd", 6);
    expect_str(s, "hl", "\xef\xbf\xbd" "A", 4);
    expect_str(s, "nul", "x\0y", 3);
    expect_str(s, "e", "\xc3\xa9\xe4\xb8\xad", 5);
    size_t n;
    const char *p = la_jval_plain(get(s, "plain"), &n);
    assert_non_null(p);
    assert_int_equal(n, 5);
    assert_null(la_jval_plain(get(s, "esc"), &n));
}

static void test_numbers(void **state)
{
    const char *s = "{\"a\":99999999999999999999,\"b\":-99999999999999999999,\"c\":18446744073709551615,"
                    "\"d\":123456789012345678,\"e\":-0,\"f\":1e400,\"g\":0.5,\"h\":1E2,\"t\":true,\"u\":false}";
    assert_true(la_jval_number(get(s, "a")) == 18446744073709551615.0); /* json-c: saturated at 2^64 - 1 */
    assert_true(la_jval_number(get(s, "b")) == -9223372036854775808.0);
    assert_true(la_jval_number(get(s, "c")) == 18446744073709551615.0);
    assert_true(la_jval_number(get(s, "d")) == 123456789012345678.0);
    double z = la_jval_number(get(s, "e"));
    assert_true(z == 0.0 && !signbit(z)); /* an integer zero, as json-c keeps -0 */
    assert_true(la_jval_number(get(s, "f")) > 1e308);
    assert_true(la_jval_number(get(s, "g")) == 0.5);
    assert_true(la_jval_number(get(s, "h")) == 100.0);
    assert_int_equal(la_jval_type(get(s, "t")), LA_JBOOL);
    assert_true(la_jval_number(get(s, "t")) == 1.0);
    assert_true(la_jval_number(get(s, "u")) == 0.0);
}

/* json-c ends a key at an escaped NUL; two keys that are then equal are one, the last value held. */
static void test_keys_as_json_c(void **state)
{
    expect_lit("{\"a\":2,\"a\\u0000b\":1}", "a", "1");
    expect_lit("{\"a\\u0000b\":1,\"a\":2}", "a", "2");
    expect_lit("{\"a\\u0000b\":1}", "a\\u0000b", NULL);
    expect_lit("{\"\\ud800\":1,\"\\udc00\":2}", "\xef\xbf\xbd", "2");
    char key[8];
    const char *raw = "x\\u0000y";
    assert_int_equal(la_jkey_decode(raw, strlen(raw), key), 1);
    assert_int_equal(key[0], 'x');
}

/* Past LA_JREC_MEMBERS members the record is searched from its text: a field late in a wide record
 * is found, and the last of two equal keys still holds. */
static void test_wide_record(void **state)
{
    char line[4096];
    size_t w = (size_t)snprintf(line, sizeof line, "{");
    for (int k = 0; k < 3 * LA_JREC_MEMBERS; k++) w += (size_t)snprintf(line + w, sizeof line - w, "\"k%d\":%d,", k, k);
    snprintf(line + w, sizeof line - w, "\"a\":1,\"a\\u0000\":\"late\"}");
    char lit[16];
    for (int k = 0; k < 3 * LA_JREC_MEMBERS; k++) {
        char name[16];
        snprintf(name, sizeof name, "k%d", k);
        snprintf(lit, sizeof lit, "%d", k);
        expect_lit(line, name, lit);
    }
    expect_lit(line, "a", "\"late\"");
    expect_lit(line, "k999", NULL);
}

static void test_walk(void **state)
{
    const char *s = "{\"v\":[1, \"a,b]\" ,{\"x\":[2]} ,[3,4],null], \"o\" : {\"p\" : 1 , \"q\\\"\":\"}\"}}";
    la_jval v = get(s, "v"), x;
    const char *at = NULL, *k;
    const char *want[] = {"1", "\"a,b]\"", "{\"x\":[2]}", "[3,4]", "null"};
    size_t i = 0, kn;
    while (la_jval_next(v, &at, &x, NULL, NULL)) {
        assert_true(i < 5);
        if (x.n != strlen(want[i]) || memcmp(x.p, want[i], x.n)) fail_msg("element %zu: '%.*s'", i, (int)x.n, x.p);
        i++;
    }
    assert_int_equal(i, 5);
    la_jval o = get(s, "o");
    at = NULL;
    assert_true(la_jval_next(o, &at, &x, &k, &kn));
    assert_int_equal(kn, 1);
    assert_memory_equal(k, "p", 1);
    assert_true(la_jval_next(o, &at, &x, &k, &kn));
    assert_int_equal(kn, 3);
    assert_memory_equal(k, "q\\\"", 3);
    assert_memory_equal(x.p, "\"}\"", 3);
    assert_false(la_jval_next(o, &at, &x, &k, &kn));
    expect_lit(s, "o.q\"", "\"}\"");
}

/* Which checked lines json-c reads as one object: '{' first after white space, '}' last before
 * spaces and tabs. */
static void test_lines(void **state)
{
    assert_true(la_jrec_is_line("{}", 2));
    assert_true(la_jrec_is_line(" \t\r{\"a\":1} \t", 12));
    assert_false(la_jrec_is_line("[1]", 3));
    assert_false(la_jrec_is_line("\"s\"", 3));
    assert_false(la_jrec_is_line("{\"a\":1}\r", 8)); /* json-c's reading of a trailing CR is left to it */
    assert_false(la_jrec_is_line("", 0));
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_paths),         cmocka_unit_test(test_strings),
                                       cmocka_unit_test(test_numbers),       cmocka_unit_test(test_keys_as_json_c),
                                       cmocka_unit_test(test_wide_record),   cmocka_unit_test(test_walk),
                                       cmocka_unit_test(test_lines)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
