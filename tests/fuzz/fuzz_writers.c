/*
 * fuzz_writers.c - fuzz target for the report writers: the bytes are one JSONL input whose rows
 * (any ids, texts, families, dates, labels, partitions dev or test) go through the exact, family and
 * time evidence and the decisions, then through every writer. Whatever the rows, report.json and
 * every line of the .jsonl outputs are valid JSON (RFC 8259, no key twice), report.junit.xml
 * holds only characters XML 1.0 allows, and report.html's data is valid JSON in which no byte can
 * end its script element or open a comment ('<', '>' and '&' never appear).
 */
#include "audit.h"
#include "exact.h"
#include "fuzz_file.h"
#include "json_strict.h"
#include "load.h"
#include "manifest.h"
#include "normalize.h"
#include "pipeline.h"

#include "fuzz_check.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void assert_json(const char *s, size_t n)
{
    size_t at;
    const char *why;
    int ok = la_json_strict_check(s, n, &at, &why);
    if (ok != 1) {
        fprintf(stderr, "not JSON at byte %zu: %s\n%.*s\n", at, why ? why : "", (int)(n > 400 ? 400 : n), s);
        abort();
    }
}

static void assert_jsonl(const la_buf *b)
{
    const char *p = b->p, *end = b->p + b->n;
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        LA_FUZZ_CHECK(nl); /* every line ends */
        assert_json(p, (size_t)(nl - p));
        p = nl + 1;
    }
}

/* XML 1.0 Char: tab, newline, CR, U+0020..U+D7FF, U+E000..U+FFFD, U+10000..U+10FFFF, as UTF-8. */
static void assert_xml_chars(const la_buf *b)
{
    const unsigned char *u = (const unsigned char *)b->p;
    for (size_t i = 0; i < b->n;) {
        unsigned c = u[i];
        if (c < 0x80) {
            LA_FUZZ_CHECK(c >= 0x20 || c == '\t' || c == '\n' || c == '\r');
            i++;
            continue;
        }
        size_t len = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : 2;
        LA_FUZZ_CHECK(c >= 0xC2 && c <= 0xF4 && i + len <= b->n);
        unsigned cp = len == 4 ? c & 7 : len == 3 ? c & 15 : c & 31;
        for (size_t k = 1; k < len; k++) {
            LA_FUZZ_CHECK((u[i + k] & 0xC0) == 0x80);
            cp = cp << 6 | (u[i + k] & 0x3F);
        }
        LA_FUZZ_CHECK(!(cp >= 0xD800 && cp <= 0xDFFF) && cp != 0xFFFE && cp != 0xFFFF && cp <= 0x10FFFF);
        i += len;
    }
}

/* The first s[0..n) in p[0..len), or NULL. */
static const char *find(const char *p, size_t len, const char *s, size_t n)
{
    for (size_t i = 0; i + n <= len; i++)
        if (!memcmp(p + i, s, n)) return p + i;
    return NULL;
}

/* report.html: when there are links, one data element holds valid JSON with no '<', '>' or '&'. */
static void assert_page_data(const la_buf *b, size_t npairs)
{
    static const char tag[] = "<script type=\"application/json\" id=\"la-data\">";
    const char *at = find(b->p, b->n, tag, sizeof tag - 1);
    LA_FUZZ_CHECK((at != NULL) == (npairs > 0));
    if (!at) return;
    const char *json = at + sizeof tag - 1;
    const char *end = find(json, (size_t)(b->p + b->n - json), "</script>", 9);
    LA_FUZZ_CHECK(end);
    for (const char *q = json; q < end; q++) LA_FUZZ_CHECK(*q != '<' && *q != '>' && *q != '&');
    assert_json(json, (size_t)(end - json));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char path[96];
    if (!la_fuzz_file("writers", "jsonl", data, size, path)) return 0;

    la_table *t;
    if (la_table_new(&t) != LA_OK) abort();
    la_load_opts o;
    la_load_opts_default(&o);
    static const char *const known[] = {"dev", "test"};
    o.known_parts = known;
    o.nknown = 2;
    la_loader L;
    la_loader_init(&L, t, &o);
    uint32_t dev = 0, test = 0;
    la_pairs pairs = {0};
    la_exact_result ex;
    memset(&ex, 0, sizeof ex);
    la_audit a;
    memset(&a, 0, sizeof a);
    la_status s = la_table_part(t, "dev", &dev);
    if (s == LA_OK) s = la_table_part(t, "test", &test);
    if (s == LA_OK) s = la_load_file(&L, path, NULL);
    if (s == LA_OK) s = la_normalize_table(t, LA_NORM_NFKC, 1);
    la_audit_opts ao = {test, 0, LA_RESOLVE_QUARANTINE, 3, 0};
    if (s == LA_OK) s = la_exact_find(t, test, &pairs, &ex);
    if (s == LA_OK) s = la_audit_evidence(t, &ao, &pairs, &a);
    if (s == LA_OK) {
        la_pairs_normalize(&pairs);
        s = la_audit_decide(t, &ao, &pairs, ex.dup_of, &a);
        la_audit_sort_pairs(t, &pairs);
    }
    if (s == LA_OK) {
        la_report r;
        la_report_init(&r, "audit", t, &L, &ex, NULL);
        r.pairs = &pairs;
        r.audit = &a;
        r.heldout = test;
        r.cutoff = 20000;
        r.max_cluster = 3;
        la_report_summarize(&r);
        la_buf b = {0};
        b.n = 0;
        la_status ws = la_report_json(&r, &b);
        LA_FUZZ_CHECK(ws == LA_OK);
        assert_json(b.p, b.n);
        la_status (*const jsonl[])(const la_report *, la_buf *) = {la_report_pairs_jsonl, la_report_assignments_jsonl,
                                                                  la_report_clusters_jsonl, la_report_rejects_jsonl};
        for (size_t k = 0; k < sizeof jsonl / sizeof *jsonl; k++) {
            b.n = 0;
            ws = jsonl[k](&r, &b);
            LA_FUZZ_CHECK(ws == LA_OK);
            assert_jsonl(&b);
        }
        const uint32_t outs[3] = {dev, test, LA_OUT_QUARANTINE};
        uint32_t *rows = malloc((la_table_nrows(t) + 1) * sizeof *rows);
        if (!rows) abort();
        for (int k = 0; k < 3; k++) {
            b.n = 0;
            ws = la_manifest_buf(t, rows, la_report_manifest_rows(&r, outs[k], rows), &b);
            LA_FUZZ_CHECK(ws == LA_OK);
            assert_jsonl(&b);
        }
        free(rows);
        b.n = 0;
        ws = la_report_junit(&r, &b);
        LA_FUZZ_CHECK(ws == LA_OK);
        assert_xml_chars(&b);
        b.n = 0;
        ws = la_report_md(&r, &b);
        LA_FUZZ_CHECK(ws == LA_OK);
        b.n = 0;
        ws = la_report_html(&r, &b);
        LA_FUZZ_CHECK(ws == LA_OK);
        assert_page_data(&b, pairs.n);
        la_buf_free(&b);
    } else {
        LA_FUZZ_CHECK(la_last_error()[0] != '\0');
    }
    la_audit_free(&a);
    la_exact_result_free(&ex);
    la_pairs_free(&pairs);
    la_loader_free(&L);
    la_table_free(t);
    unlink(path);
    return 0;
}
