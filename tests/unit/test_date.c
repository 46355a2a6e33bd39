/* test_date.c - the canonical date rule: YYYY-MM-DD that exists on the calendar, timestamps only on request. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

#include "leakaudit.h"

static int parse(const char *s, int ts, int32_t *d) { return la_date_parse(s, strlen(s), ts, d); }

static void test_valid_dates(void **state)
{
    int32_t d;
    char buf[11];
    assert_int_equal(parse("1970-01-01", 0, &d), LA_OK);
    assert_int_equal(d, 0);
    assert_int_equal(parse("2026-07-01", 0, &d), LA_OK);
    la_date_format(d, buf);
    assert_string_equal(buf, "2026-07-01");
    assert_int_equal(parse("2024-02-29", 0, &d), LA_OK);
    assert_int_equal(parse("2000-02-29", 0, &d), LA_OK);
    int32_t a, b;
    parse("2026-06-30", 0, &a);
    parse("2026-07-01", 0, &b);
    assert_int_equal(b - a, 1);
}

static void test_rejected_dates(void **state)
{
    int32_t d;
    const char *bad[] = {"2026-7-1", "2026-02-30", "2025-02-29", "1900-02-29", "2026-13-01", "2026-00-10",
                         "2026-01-00", "26-01-01", "2026/01/01", "", "2026-01-01x", "2026-01-01T10:00:00Z",
                         "\xef\xbc\x92\xef\xbc\x90\xef\xbc\x92\xef\xbc\x96-01-01" /* full-width 2026 */};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) assert_int_equal(parse(bad[i], 0, &d), LA_EINPUT);
}

static void test_timestamps_when_allowed(void **state)
{
    int32_t d, base;
    parse("2026-07-01", 0, &base);
    const char *ok[] = {"2026-07-01T10:00:00Z", "2026-07-01T23:59", "2026-07-01T10:00:00.123+02:00",
                        "2026-07-01 08:00:00", "2026-07-01"};
    for (size_t i = 0; i < sizeof ok / sizeof *ok; i++) {
        assert_int_equal(parse(ok[i], 1, &d), LA_OK);
        assert_int_equal(d, base);
    }
    assert_int_equal(parse("2026-07-01T25:00:00Z", 1, &d), LA_EINPUT);
    assert_int_equal(parse("2026-02-30T10:00:00Z", 1, &d), LA_EINPUT);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_valid_dates),
        cmocka_unit_test(test_rejected_dates),
        cmocka_unit_test(test_timestamps_when_allowed),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
