/*
 * buf.h - a growable byte buffer with JSON and Markdown escaping, used by the report writers.
 * Writers build whole files in memory; host/ decides where they go. Allocation failure is sticky:
 * after one, every append is a no-op and la_buf_status() returns LA_ENOMEM.
 */
#ifndef LA_BUF_H
#define LA_BUF_H

#include "leakaudit.h"

#include <stdarg.h>
#include <stdint.h>

typedef struct la_buf {
    char *p;
    size_t n, cap;
    int failed;
} la_buf;

void la_buf_free(la_buf *b);
void la_buf_putn(la_buf *b, const char *s, size_t n);
void la_buf_puts(la_buf *b, const char *s);
void la_buf_putc(la_buf *b, char c);
void la_buf_printf(la_buf *b, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
/* An integer in decimal, as printf's %llu and %lld write it (without printf's format parsing). */
void la_buf_putu(la_buf *b, uint64_t v);
void la_buf_puti(la_buf *b, int64_t v);
/* A JSON string literal with quotes; NULL writes null. Invalid UTF-8 bytes become U+FFFD. */
void la_buf_json_str(la_buf *b, const char *s);
void la_buf_json_strn(la_buf *b, const char *s, size_t n);
/* A JSON number; NaN and infinities write null. */
void la_buf_json_num(la_buf *b, double v);
/* Text for a Markdown table cell: at most max_chars code points, newlines as spaces, pipes escaped. */
void la_buf_md_cell(la_buf *b, const char *s, size_t max_chars);
la_status la_buf_status(const la_buf *b);

#endif /* LA_BUF_H */
