/*
 * report_junit.c - report.junit.xml: the audit as a JUnit test suite, so a CI system shows it beside
 * the other tests. One test case per kind of evidence: it fails when the kind has findings and
 * --fail-on names it, and is marked skipped when the kind is not gated. Not for: the details
 * (report.json and pairs.jsonl hold them).
 */
#include "report.h"
#include "report_model.h"

#include <stdlib.h>
#include <string.h>

/* XML text: escapes &, <, >, " and replaces what XML 1.0 does not allow as a character: the
 * control characters but tab and newline (by a space), U+FFFE, U+FFFF and any byte that is not
 * part of valid UTF-8 (by U+FFFD). Surrogates cannot occur: valid UTF-8 has none. */
static void xml_text(la_buf *b, const char *s)
{
    const unsigned char *u = (const unsigned char *)s;
    size_t n = s ? strlen(s) : 0;
    for (size_t i = 0; i < n;) {
        unsigned c = u[i];
        if (c < 0x80) {
            if (c == '&') la_buf_puts(b, "&amp;");
            else if (c == '<') la_buf_puts(b, "&lt;");
            else if (c == '>') la_buf_puts(b, "&gt;");
            else if (c == '"') la_buf_puts(b, "&quot;");
            else if (c < 0x20 && c != '\n' && c != '\t') la_buf_putc(b, ' ');
            else la_buf_putc(b, (char)c);
            i++;
            continue;
        }
        size_t len = c >= 0xF0 && c <= 0xF4 ? 4 : c >= 0xE0 ? 3 : c >= 0xC2 && c < 0xE0 ? 2 : 0;
        unsigned cp = len == 4 ? c & 0x07 : len == 3 ? c & 0x0F : c & 0x1F;
        int formed = len && i + len <= n;
        for (size_t k = 1; formed && k < len; k++) {
            formed = (u[i + k] & 0xC0) == 0x80;
            cp = (cp << 6) | (u[i + k] & 0x3F);
        }
        formed = formed && !(len == 3 && cp < 0x800) && !(len == 4 && (cp < 0x10000 || cp > 0x10FFFF)) &&
                 !(cp >= 0xD800 && cp <= 0xDFFF);
        if (formed && cp != 0xFFFE && cp != 0xFFFF) la_buf_putn(b, s + i, len);
        else la_buf_puts(b, "\xEF\xBF\xBD"); /* one U+FFFD per character, or per stray byte */
        i += formed ? len : 1;
    }
}

la_status la_report_junit(const la_report *r, la_buf *b)
{
    const la_row *rows = la_table_rows_const(r->table);
    size_t counts[LA_KIND_COUNT], failures = 0, skipped = 0;
    for (int k = 0; k < LA_KIND_COUNT; k++) {
        uint32_t bit = 1u << k;
        counts[k] = bit == LA_KIND_TIME ? la_report_time_failing(r) : la_report_gating_count(r, bit);
        if (!r->gate.min_grade[k]) skipped++;
        else if (counts[k]) failures++;
    }
    la_buf_puts(b, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    la_buf_printf(b, "<testsuite name=\"leakaudit\" tests=\"%d\" failures=\"%zu\" errors=\"0\" skipped=\"%zu\">\n",
                  LA_KIND_COUNT, failures, skipped);
    for (int k = 0; k < LA_KIND_COUNT; k++) {
        uint32_t bit = 1u << k;
        const char *name = la_kind_name(bit);
        la_buf_printf(b, "  <testcase classname=\"leakaudit.%s\" name=\"no %s leaks across the '", name, name);
        xml_text(b, la_table_part_name(r->table, r->heldout));
        la_buf_puts(b, "' boundary\">\n");
        if (!r->gate.min_grade[k]) {
            la_buf_printf(b, "    <skipped message=\"%s is not in --fail-on; %zu found\"/>\n", name,
                          bit == LA_KIND_TIME ? r->audit->ntime : la_report_kind_count(r, bit));
        } else if (counts[k]) {
            if (bit == LA_KIND_TIME)
                la_buf_printf(b, "    <failure message=\"%zu rows on the wrong side of the cutoff\" type=\"leak\">",
                              counts[k]);
            else
                la_buf_printf(b, "    <failure message=\"%zu %s pairs%s%s%s\" type=\"leak\">", counts[k], name,
                              bit == LA_KIND_FAMILY ? "" : " at grade ",
                              bit == LA_KIND_FAMILY ? "" : la_grade_name(r->gate.min_grade[k]),
                              bit == LA_KIND_FAMILY ? "" : " or above");
            size_t shown = 0;
            if (bit == LA_KIND_TIME) {
                for (size_t i = 0; i < r->audit->ntime && shown < 20; i++) {
                    if (!la_delta_time_fails(r->delta, i)) continue;
                    shown++;
                    xml_text(b, rows[r->audit->time_rows[i]].id);
                    la_buf_putc(b, '\n');
                }
            } else {
                for (size_t q = 0; q < r->pairs->n && shown < 20; q++) {
                    const la_pair *p = &r->pairs->v[q];
                    if (!la_report_link_fails(r, q, k)) continue;
                    xml_text(b, rows[p->a].id);
                    la_buf_puts(b, " ~ ");
                    xml_text(b, rows[p->b].id);
                    la_buf_putc(b, '\n');
                    shown++;
                }
            }
            if (counts[k] > shown) la_buf_printf(b, "... and %zu more (pairs.jsonl, report.json)\n", counts[k] - shown);
            la_buf_puts(b, "</failure>\n");
        }
        la_buf_puts(b, "  </testcase>\n");
    }
    la_buf_puts(b, "</testsuite>\n");
    return la_buf_status(b);
}
