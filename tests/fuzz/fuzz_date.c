/*
 * fuzz_date.c - fuzz target for the date parser: anything accepted must print back as the same
 * calendar date (the canonical form of its first ten bytes), and anything else is refused cleanly.
 */
#include "leakaudit.h"

#include "fuzz_check.h"
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0) return 0;
    int32_t days;
    const char *s = (const char *)data + 1;
    if (la_date_parse(s, size - 1, data[0] & 1, &days) == LA_OK) {
        char buf[11], again[11];
        la_date_format(days, buf);
        LA_FUZZ_CHECK(memcmp(buf, s, 10) == 0);
        int32_t d2;
        LA_FUZZ_CHECK(la_date_parse(buf, 10, 0, &d2) == LA_OK && d2 == days);
        la_date_format(d2, again);
        LA_FUZZ_CHECK(strcmp(buf, again) == 0);
    }
    return 0;
}
