/*
 * date.c - strict calendar dates: canonical ASCII YYYY-MM-DD, and optionally the date part of an
 * ISO 8601 timestamp. Days are counted from 1970-01-01 on the proleptic Gregorian calendar.
 * Not for: time zones (a timestamp's date is taken as written, not converted).
 */
#include "leakaudit.h"

#include <stdio.h>
#include <string.h>

static int is_digit(char c) { return c >= '0' && c <= '9'; }

static int digits(const char *s, int n, int *out)
{
    int v = 0;
    for (int i = 0; i < n; i++) {
        if (!is_digit(s[i])) return 0;
        v = v * 10 + (s[i] - '0');
    }
    *out = v;
    return 1;
}

static int is_leap(int y) { return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0; }

static int days_in_month(int y, int m)
{
    static const int d[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    return m == 2 && is_leap(y) ? 29 : d[m - 1];
}

/* Howard Hinnant's days_from_civil. */
static int32_t days_from_civil(int y, int m, int d)
{
    y -= m <= 2;
    const int era = (y >= 0 ? y : y - 399) / 400;
    const unsigned yoe = (unsigned)(y - era * 400);
    const unsigned doy = (153u * (unsigned)(m + (m > 2 ? -3 : 9)) + 2u) / 5u + (unsigned)d - 1u;
    const unsigned doe = yoe * 365u + yoe / 4u - yoe / 100u + doy;
    return (int32_t)(era * 146097 + (int)doe - 719468);
}

static int valid_time_suffix(const char *s, size_t n)
{
    /* after the date: T or space, HH:MM, optional :SS, optional .fraction, optional Z or ±HH:MM */
    size_t i = 0;
    int h, mi, sec;
    if (n < 6 || (s[0] != 'T' && s[0] != ' ')) return 0;
    if (!digits(s + 1, 2, &h) || s[3] != ':' || !digits(s + 4, 2, &mi) || h > 23 || mi > 59) return 0;
    i = 6;
    if (i < n && s[i] == ':') {
        if (i + 3 > n || !digits(s + i + 1, 2, &sec) || sec > 60) return 0;
        i += 3;
        if (i < n && (s[i] == '.' || s[i] == ',')) {
            size_t j = i + 1;
            while (j < n && is_digit(s[j])) j++;
            if (j == i + 1) return 0;
            i = j;
        }
    }
    if (i == n) return 1;
    if (s[i] == 'Z' && i + 1 == n) return 1;
    if ((s[i] == '+' || s[i] == '-') && n - i == 6) {
        int oh, om;
        return digits(s + i + 1, 2, &oh) && s[i + 3] == ':' && digits(s + i + 4, 2, &om) && oh <= 23 && om <= 59;
    }
    if ((s[i] == '+' || s[i] == '-') && n - i == 5) {
        int oh, om;
        return digits(s + i + 1, 2, &oh) && digits(s + i + 3, 2, &om) && oh <= 23 && om <= 59;
    }
    return 0;
}

la_status la_date_parse(const char *s, size_t n, int allow_timestamp, int32_t *days)
{
    int y, m, d;
    if (n < 10 || !digits(s, 4, &y) || s[4] != '-' || !digits(s + 5, 2, &m) || s[7] != '-' ||
        !digits(s + 8, 2, &d))
        return LA_EINPUT;
    if (m < 1 || m > 12 || d < 1 || d > days_in_month(y, m)) return LA_EINPUT;
    if (n > 10 && !(allow_timestamp && valid_time_suffix(s + 10, n - 10))) return LA_EINPUT;
    *days = days_from_civil(y, m, d);
    return LA_OK;
}

void la_date_format(int32_t z, char buf[11])
{
    /* Howard Hinnant's civil_from_days. */
    z += 719468;
    const int era = (z >= 0 ? z : z - 146096) / 146097;
    const unsigned doe = (unsigned)(z - era * 146097);
    const unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    const int y0 = (int)yoe + era * 400;
    const unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    const unsigned mp = (5 * doy + 2) / 153;
    const unsigned d = doy - (153 * mp + 2) / 5 + 1;
    const unsigned m = mp < 10 ? mp + 3 : mp - 9;
    const int y = y0 + (m <= 2);
    char tmp[32];
    snprintf(tmp, sizeof tmp, "%04d-%02u-%02u", y, m, d);
    memcpy(buf, tmp, 10);
    buf[10] = '\0';
}
