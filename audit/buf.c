/* buf.c - growable buffer and escaping for the report writers (see buf.h). */
#include "buf.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void la_buf_free(la_buf *b)
{
    free(b->p);
    memset(b, 0, sizeof *b);
}

static int reserve(la_buf *b, size_t extra)
{
    if (b->failed) return 0;
    if (b->n + extra + 1 <= b->cap) return 1;
    size_t cap = b->cap ? b->cap : 4096;
    while (cap < b->n + extra + 1) cap *= 2;
    char *p = realloc(b->p, cap);
    if (!p) {
        b->failed = 1;
        return 0;
    }
    b->p = p;
    b->cap = cap;
    return 1;
}

void la_buf_putn(la_buf *b, const char *s, size_t n)
{
    if (!reserve(b, n)) return;
    memcpy(b->p + b->n, s, n);
    b->n += n;
    b->p[b->n] = '\0';
}

void la_buf_puts(la_buf *b, const char *s) { la_buf_putn(b, s, strlen(s)); }
void la_buf_putc(la_buf *b, char c) { la_buf_putn(b, &c, 1); }

void la_buf_putu(la_buf *b, uint64_t v)
{
    char d[20];
    int k = 20;
    do {
        d[--k] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    la_buf_putn(b, d + k, (size_t)(20 - k));
}

void la_buf_puti(la_buf *b, int64_t v)
{
    if (v < 0) {
        la_buf_putc(b, '-');
        la_buf_putu(b, 0 - (uint64_t)v);
    } else {
        la_buf_putu(b, (uint64_t)v);
    }
}

void la_buf_printf(la_buf *b, const char *fmt, ...)
{
    va_list ap, ap2;
    va_start(ap, fmt);
    va_copy(ap2, ap);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n > 0 && reserve(b, (size_t)n)) {
        vsnprintf(b->p + b->n, (size_t)n + 1, fmt, ap2);
        b->n += (size_t)n;
    }
    va_end(ap2);
}

/* Length of the valid UTF-8 sequence at s (1-4), or 0 when invalid. */
static size_t utf8_len(const unsigned char *s, size_t n)
{
    unsigned c = s[0];
    if (c < 0x80) return 1;
    size_t len;
    unsigned min;
    if ((c & 0xE0) == 0xC0) { len = 2; min = 0x80; c &= 0x1F; }
    else if ((c & 0xF0) == 0xE0) { len = 3; min = 0x800; c &= 0x0F; }
    else if ((c & 0xF8) == 0xF0) { len = 4; min = 0x10000; c &= 0x07; }
    else return 0;
    if (len > n) return 0;
    for (size_t i = 1; i < len; i++) {
        if ((s[i] & 0xC0) != 0x80) return 0;
        c = (c << 6) | (s[i] & 0x3F);
    }
    if (c < min || c > 0x10FFFF || (c >= 0xD800 && c <= 0xDFFF)) return 0;
    return len;
}

/* Where the loop below must look at bytes one by one, from i: the start of the first eight bytes
 * that hold '"', '\\', a control character, DEL or a byte from 0x80 (a UTF-8 sequence), or of the
 * last fewer than eight; the bytes before it are copied as they are. A byte below 0x20 or equal to
 * one of the three sets the high bit of its lane in the tests below, a byte from 0x80 has it. */
static size_t plain_run(const unsigned char *u, size_t i, size_t n)
{
    const uint64_t ones = 0x0101010101010101ull, highs = 0x8080808080808080ull;
    for (; i + 8 <= n; i += 8) {
        uint64_t x;
        memcpy(&x, u + i, sizeof x);
        uint64_t q = x ^ (ones * '"'), bs = x ^ (ones * '\\'), del = x ^ (ones * 0x7F);
        uint64_t special = (x | ((x - ones * 0x20) & ~x) | ((q - ones) & ~q) | ((bs - ones) & ~bs) | ((del - ones) & ~del)) & highs;
        if (special) break;
    }
    return i;
}

void la_buf_json_strn(la_buf *b, const char *s, size_t n)
{
    la_buf_putc(b, '"');
    const unsigned char *u = (const unsigned char *)s;
    size_t start = 0, i = 0;
    while (i < n) {
        if ((i = plain_run(u, i, n)) >= n) break;
        unsigned char c = u[i];
        const char *esc = NULL;
        char tmp[8];
        size_t adv = 1;
        if (c == '"') esc = "\\\"";
        else if (c == '\\') esc = "\\\\";
        else if (c == '\n') esc = "\\n";
        else if (c == '\r') esc = "\\r";
        else if (c == '\t') esc = "\\t";
        else if (c < 0x20 || c == 0x7F) {
            snprintf(tmp, sizeof tmp, "\\u%04x", c);
            esc = tmp;
        } else if (c >= 0x80) {
            adv = utf8_len(u + i, n - i);
            if (adv == 0) {
                esc = "\xEF\xBF\xBD";
                adv = 1;
            }
        }
        if (esc) {
            la_buf_putn(b, s + start, i - start);
            la_buf_puts(b, esc);
            start = i + adv;
        }
        i += adv;
    }
    la_buf_putn(b, s + start, n - start);
    la_buf_putc(b, '"');
}

void la_buf_json_str(la_buf *b, const char *s)
{
    if (!s) la_buf_puts(b, "null");
    else la_buf_json_strn(b, s, strlen(s));
}

void la_buf_json_num(la_buf *b, double v)
{
    if (isnan(v) || isinf(v)) la_buf_puts(b, "null");
    else if (v == floor(v) && fabs(v) < 1e15) la_buf_printf(b, "%.0f", v);
    else la_buf_printf(b, "%.6g", v);
}

void la_buf_md_cell(la_buf *b, const char *s, size_t max_chars)
{
    if (!s) return;
    size_t chars = 0;
    const unsigned char *u = (const unsigned char *)s;
    size_t n = strlen(s);
    for (size_t i = 0; i < n;) {
        if (chars == max_chars) {
            la_buf_puts(b, "…");
            return;
        }
        size_t adv = utf8_len(u + i, n - i);
        if (adv == 0) adv = 1;
        char c = s[i];
        if (c == '\n' || c == '\r' || c == '\t') la_buf_putc(b, ' ');
        else if (c == '|') la_buf_puts(b, "\\|");
        else if (c == '<') la_buf_puts(b, "&lt;");
        else if (c == '`' || c == '*' || c == '_' || c == '[' || c == ']') {
            la_buf_putc(b, '\\');
            la_buf_putc(b, c);
        } else la_buf_putn(b, s + i, adv);
        i += adv;
        chars++;
    }
}

la_status la_buf_status(const la_buf *b)
{
    return b->failed ? la_error(LA_ENOMEM, "out of memory writing a report") : LA_OK;
}
