/* test_json_strict.c - RFC 8259 on raw lines: what json-c lets through is refused here, valid JSON
 * passes. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <string.h>

#include "json_strict.h"

static int check(const char *s, const char **why)
{
    size_t at;
    return la_json_strict_check(s, strlen(s), &at, why);
}

static void test_valid(void **state)
{
    const char *ok[] = {"{}", "{\"a\":1}", " {\"a\": [1, 2.5, -0, 1e10, 1E-2, 0.5e+3]} ", "{\"a\":\"\\u00e9\\n\\\"\\/\"}",
                        "{\"a\":{\"b\":{\"c\":null}},\"b\":true,\"c\":false}", "{\"a\":\"\\ud83d\\ude00\"}",
                        "{\"a\":1,\"A\":2}", "[]", "\"s\"", "{\"a\":[],\"b\":{}}", "{\"\\u0061\":1,\"b\":2}"};
    for (size_t i = 0; i < sizeof ok / sizeof *ok; i++) {
        const char *why = NULL;
        if (check(ok[i], &why) != 1) fail_msg("%s refused: %s", ok[i], why);
    }
}

static void test_refused(void **state)
{
    static const struct {
        const char *text, *why;
    } bad[] = {
        {"{\"a\":[1,2,]}", "trailing commas"},
        {"{\"a\":1,}", "trailing commas"},
        {"{'a':1}", "single quotes"},
        {"{\"a\":'x'}", "single quotes"},
        {"/*c*/{\"a\":1}", "comments"},
        {"{\"a\":1}//c", "extra text"},
        {"{\"a\":NaN}", "not NaN or Infinity"},
        {"{\"a\":Infinity}", "not NaN or Infinity"},
        {"{\"a\":-Infinity}", "not a JSON number"},
        {"{\"a\":01}", "no leading zeros"},
        {"{\"a\":1.}", "digits on both sides"},
        {"{\"a\":.5}", "expected a value"},
        {"{\"a\":+1}", "expected a value"},
        {"{\"a\":0x1}", "not a JSON number"},
        {"{\"a\":1e}", "not a JSON number"},
        {"{\"a\":\"x\ty\"}", "raw tab"},
        {"{\"a\":\"x\ny\"}", "control character"},
        {"{\"a\":\"\\x41\"}", "invalid escape"},
        {"{\"a\":\"\\u12\"}", "invalid escape"},
        {"{\"a\":1,\"a\":2}", "the same key twice"},
        {"{\"a\":1,\"\\u0061\":2}", "the same key twice"},
        {"{\"o\":{\"k\":1,\"k\":1}}", "the same key twice"},
        {"{\"a\":tRue}", "expected a value"},
        {"{\"a\" 1}", "expected ':'"},
        {"{\"a\":1 \"b\":2}", "expected ',' or '}'"},
        {"{\"a\":[1 2]}", "expected ',' or ']'"},
        {"{\"a\":\"open}", "unterminated string"},
        {"{\"a\":1", "not closed"},
        {"", "expected a value"},
        {"[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]", "nested too deeply"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        const char *why = NULL;
        if (check(bad[i].text, &why) != 0) fail_msg("%s accepted", bad[i].text);
        if (!why || !strstr(why, bad[i].why)) fail_msg("%s: '%s' lacks '%s'", bad[i].text, why ? why : "", bad[i].why);
    }
}

/* Strings are read eight plain bytes at a time: a control character, a quote or an escape is found
 * at every offset of a long string, and long keys compare by all their bytes. */
static void test_long_strings(void **state)
{
    char line[96];
    for (int at = 0; at < 20; at++)
        for (unsigned ch = 0; ch < 0x20; ch++) {
            /* {"a":"xxx...x"} with the byte at `at` of the 24 (NUL too: built by hand) */
            size_t n = 0;
            memcpy(line, "{\"a\":\"", 6), n = 6;
            memset(line + n, 'x', 24);
            line[n + (size_t)at] = (char)ch;
            n += 24;
            memcpy(line + n, "\"}", 2), n += 2;
            size_t where;
            const char *why = NULL;
            if (la_json_strict_check(line, n, &where, &why) != 0)
                fail_msg("control character 0x%02x at %d accepted", ch, at);
            if (where != (size_t)(6 + at)) fail_msg("0x%02x at %d: reported at byte %zu", ch, at, where);
        }
    for (int at = 0; at < 20; at++) {
        char text[40];
        memset(text, 'y', sizeof text);
        memcpy(text + at, "\\u00e9", 6); /* an escape at every offset */
        text[at + 6] = (char)0xC3;          /* and UTF-8 beside it */
        text[at + 7] = (char)0xA9;
        int n = snprintf(line, sizeof line, "{\"a\":\"%.*s\"}", 28, text);
        const char *why = NULL;
        size_t where;
        if (la_json_strict_check(line, (size_t)n, &where, &why) != 1) fail_msg("escape at %d refused: %s", at, why);
        n = snprintf(line, sizeof line, "{\"a\":\"%.*s\"\"}", at, text); /* a quote ends it early */
        if (la_json_strict_check(line, (size_t)n, &where, &why) != 0) fail_msg("quote after %d bytes accepted", at);
    }
    const char *why = NULL;
    assert_int_equal(check("{\"abcdefghijklmnopq\":1,\"abcdefghijklmnopr\":2}", &why), 1);
    assert_int_equal(check("{\"abcdefghijklmnopq\":1,\"abcdefghijklmnop\\u0071\":2}", &why), 0);
    assert_non_null(strstr(why, "the same key twice"));
}

/* The nesting limit is json-c's (a line that passes here is read without json-c): no value 32
 * levels below the outermost. 32 arrays one inside the next pass when the innermost is empty and
 * not when it holds a number; 33 do not pass either way. */
static void test_depth_as_json_c(void **state)
{
    for (int levels = 30; levels <= 34; levels++)
        for (int empty = 0; empty < 2; empty++) {
            char line[200];
            int n = 0;
            for (int k = 0; k < levels; k++) line[n++] = '[';
            if (!empty) line[n++] = '1';
            for (int k = 0; k < levels; k++) line[n++] = ']';
            size_t at;
            const char *why = NULL;
            int ok = la_json_strict_check(line, (size_t)n, &at, &why);
            int want = empty ? levels <= 32 : levels <= 31;
            if (ok != want) fail_msg("%d levels%s: %s", levels, empty ? ", empty" : "", ok ? "accepted" : why);
            if (!ok && !strstr(why, "nested too deeply")) fail_msg("%d levels: '%s'", levels, why);
        }
}

static void test_numbers(void **state)
{
    assert_int_equal(la_json_number_len("18446744073709551617", 20), 20);
    assert_int_equal(la_json_number_len("-0.5e-7", 7), 7);
    const char *no[] = {"0x1", "1.", ".5", "+1", "01", "NaN", "inf", " 1", "1 ", "", "-", "1e+"};
    for (size_t i = 0; i < sizeof no / sizeof *no; i++)
        if (strlen(no[i]) && la_json_number_len(no[i], strlen(no[i])) == strlen(no[i])) fail_msg("'%s' taken for a number", no[i]);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_valid), cmocka_unit_test(test_refused),
                                       cmocka_unit_test(test_long_strings), cmocka_unit_test(test_numbers),
                                       cmocka_unit_test(test_depth_as_json_c)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
