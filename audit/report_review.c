/*
 * report_review.c - the data behind report.html's link list (audit/review.js reads it): every link
 * in review order (la_report_review_order), the rows they join, each once with its text cut at
 * LA_REVIEW_TEXT_MAX bytes, the shared template frame of related links, and the clusters. One JSON
 * object, safe inside a <script> element: no '<', '>' or '&' byte appears in it (they are written
 * as \u escapes), so no text can close the element or open a comment.
 * Not for: machines (pairs.jsonl and clusters.jsonl are the interface); the page's markup
 * (report_html.c) and its script (review.js).
 */
#include "report_model.h"
#include "la_alloc.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* A score in thousandths (an integer is shorter to store and faster to parse), or null when not
 * measured. */
static void score3(la_buf *b, float v)
{
    if (isnan(v)) la_buf_puts(b, "null");
    else la_buf_puti(b, lround(1000.0 * (double)v));
}

/* The first max bytes of s, ending on a whole UTF-8 character. */
static size_t utf8_cut(const char *s, size_t len, size_t max)
{
    if (len <= max) return len;
    size_t n = max;
    while (n > 0 && ((unsigned char)s[n] & 0xC0) == 0x80) n--;
    return n;
}

/* The columns of the links table, by name; link_value writes one cell. */
static const char *const k_link_columns[] = {"a", "b", "kinds", "grade", "gates", "cluster", "j", "c", "cos", "wc"};

static void link_value(la_buf *b, const la_report *r, const la_pair *p, const uint32_t *page_row, size_t col)
{
    switch (col) {
    case 0: la_buf_putu(b, page_row[p->a]); break;
    case 1: la_buf_putu(b, page_row[p->b]); break;
    case 2: la_buf_putu(b, p->kinds); break;
    case 3: la_buf_putu(b, p->grade); break;
    case 4: la_buf_putc(b, la_gate_fails(&r->gate, p) ? '1' : '0'); break;
    case 5: la_buf_putu(b, la_audit_pair_moves(r->audit, p) ? r->audit->cluster[p->a] : 0u); break;
    case 6: score3(b, p->jaccard); break;
    case 7: score3(b, p->containment); break;
    case 8: score3(b, p->cosine); break;
    default: score3(b, p->wcontainment); break;
    }
}

/* Distinct strings, numbered in the order they were first added: text holds them one after the
 * other, start[k] where string k begins (start[n] is the end), and an open-addressing table of
 * string numbers + 1 finds one by its FNV-1a hash. */
typedef struct frame_set {
    la_buf text;
    size_t *start, *slot;
    size_t n, cap, nslot;
    int failed;
} frame_set;

static uint64_t fnv1a(const char *s, size_t n)
{
    uint64_t h = 1469598103934665603u;
    for (size_t i = 0; i < n; i++) h = (h ^ (unsigned char)s[i]) * 1099511628211u;
    return h;
}

static void frame_set_free(frame_set *fs)
{
    la_buf_free(&fs->text);
    free(fs->start);
    free(fs->slot);
}

/* The number of s[0..n) in fs, added when new; 0 with fs->failed set when out of memory. */
static size_t frame_add(frame_set *fs, const char *s, size_t n)
{
    if (fs->failed) return 0;
    if (2 * (fs->n + 1) > fs->nslot) {
        size_t nslot = fs->nslot ? 2 * fs->nslot : 1024;
        size_t *slot = la_calloc_n(nslot, sizeof *slot);
        if (!slot) return fs->failed = 1, 0;
        for (size_t k = 0; k < fs->nslot; k++)
            if (fs->slot[k]) {
                size_t f = fs->slot[k] - 1, j = fnv1a(fs->text.p + fs->start[f], fs->start[f + 1] - fs->start[f]) & (nslot - 1);
                while (slot[j]) j = (j + 1) & (nslot - 1);
                slot[j] = fs->slot[k];
            }
        free(fs->slot);
        fs->slot = slot;
        fs->nslot = nslot;
    }
    size_t j = fnv1a(s, n) & (fs->nslot - 1);
    for (; fs->slot[j]; j = (j + 1) & (fs->nslot - 1)) {
        size_t f = fs->slot[j] - 1;
        if (fs->start[f + 1] - fs->start[f] == n && !memcmp(fs->text.p + fs->start[f], s, n)) return f;
    }
    if (fs->n + 2 > fs->cap) {
        size_t cap = fs->cap ? 2 * fs->cap : 256;
        size_t *start = la_realloc_n(fs->start, cap, sizeof *start);
        if (!start) return fs->failed = 1, 0;
        fs->start = start;
        fs->cap = cap;
    }
    if (fs->n == 0) fs->start[0] = 0;
    la_buf_putn(&fs->text, s, n);
    if (fs->text.failed) return fs->failed = 1, 0;
    fs->start[fs->n + 1] = fs->text.n;
    fs->slot[j] = ++fs->n;
    return fs->n - 1;
}

/* Copy src into b with '<', '>' and '&' as JSON escapes: src is JSON written by la_buf_json_str and
 * la_buf_printf, where those bytes occur only inside strings, so the result is the same JSON value. */
static void put_script_safe(la_buf *b, const la_buf *src)
{
    size_t from = 0;
    for (size_t i = 0; i < src->n; i++) {
        char c = src->p[i];
        if (c != '<' && c != '>' && c != '&') continue;
        la_buf_putn(b, src->p + from, i - from);
        la_buf_printf(b, "\\u%04x", (unsigned)c);
        from = i + 1;
    }
    la_buf_putn(b, src->p + from, src->n - from);
}

la_status la_report_review_data(const la_report *r, la_buf *out)
{
    const la_table *t = r->table;
    const la_row *rows = la_table_rows_const(t);
    size_t nrows = la_table_nrows(t), npairs = r->pairs->n;
    size_t *order = la_report_review_order(r);
    uint32_t *page_row = la_malloc_n(nrows, sizeof *page_row);
    uint32_t *page_rows = la_malloc_n(nrows, sizeof *page_rows);
    if ((!order && npairs) || (!page_row && nrows) || (!page_rows && nrows)) {
        free(order);
        free(page_row);
        free(page_rows);
        return la_error(LA_ENOMEM, "out of memory writing report.html");
    }
    /* the rows the page shows: every linked row and every cluster member, in the order links name them */
    size_t m = 0;
    for (size_t i = 0; i < nrows; i++) page_row[i] = UINT32_MAX;
    for (size_t k = 0; k < npairs; k++) {
        const la_pair *p = &r->pairs->v[order[k]];
        if (page_row[p->a] == UINT32_MAX) page_row[p->a] = (uint32_t)m, page_rows[m++] = p->a;
        if (page_row[p->b] == UINT32_MAX) page_row[p->b] = (uint32_t)m, page_rows[m++] = p->b;
    }
    for (size_t i = 0; i < nrows; i++)
        if (r->audit->cluster[i] && page_row[i] == UINT32_MAX) page_row[i] = (uint32_t)m, page_rows[m++] = (uint32_t)i;

    la_buf b = {0};
    la_buf_printf(&b, "{\"version\":1,\"text_max\":%d,\"heldout\":%u,\"kinds\":[", LA_REVIEW_TEXT_MAX, r->heldout);
    for (int k = 0; k < LA_KIND_COUNT; k++) {
        if (k) la_buf_putc(&b, ',');
        la_buf_json_str(&b, la_kind_name(1u << k));
    }
    la_buf_puts(&b, "],\"parts\":[");
    for (uint32_t p = 0; p < la_table_npart(t); p++) {
        if (p) la_buf_putc(&b, ',');
        la_buf_json_str(&b, la_table_part_name(t, p));
    }
    la_buf_puts(&b, "],\"rows\":{\"id\":[");
    for (size_t k = 0; k < m; k++) {
        if (k) la_buf_putc(&b, ',');
        la_buf_json_str(&b, rows[page_rows[k]].id);
    }
    la_buf_puts(&b, "],\"part\":[");
    for (size_t k = 0; k < m; k++) {
        if (k) la_buf_putc(&b, ',');
        la_buf_putu(&b, rows[page_rows[k]].part);
    }
    la_buf_puts(&b, "],\"cluster\":[");
    for (size_t k = 0; k < m; k++) {
        if (k) la_buf_putc(&b, ',');
        la_buf_putu(&b, r->audit->cluster[page_rows[k]]);
    }
    la_buf_puts(&b, "],\"out\":[");
    for (size_t k = 0; k < m; k++) {
        uint32_t o = r->audit->out[page_rows[k]];
        if (k) la_buf_putc(&b, ',');
        la_buf_puti(&b, o == LA_OUT_QUARANTINE ? -1 : (int)o);
    }
    la_buf_puts(&b, "],\"text\":[");
    for (size_t k = 0; k < m; k++) {
        const char *s = rows[page_rows[k]].text ? rows[page_rows[k]].text : "";
        if (k) la_buf_putc(&b, ',');
        la_buf_json_strn(&b, s, utf8_cut(s, strlen(s), LA_REVIEW_TEXT_MAX));
    }
    la_buf_puts(&b, "],\"cut\":[");
    for (size_t k = 0, any = 0; k < m; k++) {
        const char *s = rows[page_rows[k]].text;
        if (s && strlen(s) > LA_REVIEW_TEXT_MAX) la_buf_printf(&b, "%s%zu", any++ ? "," : "", k);
    }
    la_buf_puts(&b, "]},\"links\":{");
    for (size_t c = 0; c < sizeof k_link_columns / sizeof *k_link_columns; c++) {
        la_buf_printf(&b, "%s\"%s\":[", c ? "," : "", k_link_columns[c]);
        for (size_t k = 0; k < npairs; k++) {
            if (k) la_buf_putc(&b, ',');
            link_value(&b, r, &r->pairs->v[order[k]], page_row, c);
        }
        la_buf_putc(&b, ']');
    }
    /* the shared frame of related links (pairs.jsonl's shared_frame), each distinct frame once:
     * template siblings share most of them */
    la_buf_puts(&b, ",\"frame\":[");
    frame_set fs = {0};
    la_buf frame = {0};
    for (size_t k = 0; k < npairs; k++) {
        const la_pair *p = &r->pairs->v[order[k]];
        if (k) la_buf_putc(&b, ',');
        frame.n = 0;
        if (p->grade == LA_GRADE_RELATED) la_report_shared_frame(r, p, &frame);
        if (frame.n && !frame.failed) la_buf_putu(&b, frame_add(&fs, frame.p, frame.n));
        else la_buf_puts(&b, "-1");
    }
    la_buf_puts(&b, "]},\"frames\":[");
    for (size_t k = 0; k < fs.n; k++) {
        if (k) la_buf_putc(&b, ',');
        la_buf_json_strn(&b, fs.text.p + fs.start[k], fs.start[k + 1] - fs.start[k]);
    }
    if (frame.failed || fs.failed || fs.text.failed) b.failed = 1;
    la_buf_free(&frame);
    frame_set_free(&fs);
    la_buf_printf(&b, "],\"clusters\":%zu,\"suspect\":[", r->audit->nclusters);
    for (size_t k = 0; k < r->audit->nsuspects; k++) la_buf_printf(&b, "%s%u", k ? "," : "", r->audit->suspects[k].cluster);
    la_buf_puts(&b, "]}");
    if (b.failed) out->failed = 1;
    else put_script_safe(out, &b);
    la_buf_free(&b);
    free(order);
    free(page_row);
    free(page_rows);
    return la_buf_status(out);
}
