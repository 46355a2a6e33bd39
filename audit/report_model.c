/*
 * report_model.c - what every report writer derives from the audit: counts per partition, the
 * held-out statistics, counts per kind, and the leaks ranked for display.
 */
#include "report_model.h"
#include "la_alloc.h"
#include "la_sort.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

la_part_counts *la_report_count_parts(const la_report *r, size_t *norphan_rejects)
{
    uint32_t np = la_table_npart(r->table);
    la_part_counts *c = la_calloc_n(np, sizeof *c);
    if (!c) return NULL;
    const la_row *rows = la_table_rows_const(r->table);
    size_t n = la_table_nrows(r->table);
    for (size_t i = 0; i < n; i++) {
        c[rows[i].part].read++;
        if (r->audit->out[i] == LA_OUT_QUARANTINE) c[rows[i].part].quarantined++;
        else c[rows[i].part].kept++;
    }
    *norphan_rejects = 0;
    for (size_t k = 0; k < r->nrejects; k++) {
        if (r->rejects[k].part == LA_NO_PART) {
            (*norphan_rejects)++;
            continue;
        }
        c[r->rejects[k].part].read++;
        c[r->rejects[k].part].rejected++;
    }
    return c;
}

size_t la_report_kind_count(const la_report *r, uint32_t kind)
{
    size_t n = 0;
    for (size_t k = 0; k < r->pairs->n; k++)
        if (r->pairs->v[k].kinds & kind) n++;
    return n;
}

size_t la_report_gating_count(const la_report *r, uint32_t kind)
{
    int k = 0;
    while (k < LA_KIND_COUNT && (1u << k) != kind) k++;
    size_t n = 0;
    for (size_t q = 0; q < r->pairs->n; q++) n += (size_t)la_report_link_fails(r, q, k);
    return n;
}

int la_report_link_fails(const la_report *r, size_t k, int kind)
{
    return la_delta_link_fails(r->delta, &r->gate, &r->pairs->v[k], k, kind);
}

size_t la_report_time_failing(const la_report *r)
{
    size_t n = 0;
    for (size_t i = 0; i < r->audit->ntime; i++) n += (size_t)la_delta_time_fails(r->delta, i);
    return n;
}

size_t la_report_grade_count(const la_report *r, uint32_t kind, int grade)
{
    size_t n = 0;
    for (size_t q = 0; q < r->pairs->n; q++) {
        const la_pair *p = &r->pairs->v[q];
        if ((!kind || (p->kinds & kind)) && p->grade == grade) n++;
    }
    return n;
}

size_t la_report_gating_pairs(const la_report *r)
{
    size_t n = 0;
    for (size_t q = 0; q < r->pairs->n; q++) n += (size_t)la_report_link_fails(r, q, -1);
    return n;
}

static int word_byte(unsigned char c)
{
    if (c >= 0x80) return 1;
    if (c <= ' ' || c == 0x7f) return 0;
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

/* Does `text` contain the word w[0..n) as a whole word? */
static int has_word(const char *text, size_t len, const char *w, size_t n)
{
    for (size_t i = 0; i + n <= len;) {
        while (i < len && !word_byte((unsigned char)text[i])) i++;
        size_t b = i;
        while (i < len && word_byte((unsigned char)text[i])) i++;
        if (i - b == n && memcmp(text + b, w, n) == 0) return 1;
    }
    return 0;
}

void la_report_shared_frame(const la_report *r, const la_pair *p, la_buf *out)
{
    const la_row *rows = la_table_rows_const(r->table);
    const la_row *a = &rows[p->a], *b = &rows[p->b];
    /* one pass over a per word of b: bounded for the item sizes a reviewer reads side by side */
    if (!a->norm || !b->norm || b->norm_len > 4096 || a->norm_len > 65536) return;
    int gap = 0, any = 0;
    size_t i = 0, len = b->norm_len;
    while (i < len) {
        while (i < len && !word_byte((unsigned char)b->norm[i])) i++;
        size_t s = i;
        while (i < len && word_byte((unsigned char)b->norm[i])) i++;
        if (i == s) break;
        if (has_word(a->norm, a->norm_len, b->norm + s, i - s)) {
            if (gap) la_buf_puts(out, any ? " …" : "…");
            la_buf_printf(out, "%s%.*s", any || gap ? " " : "", (int)(i - s), b->norm + s);
            any = 1;
            gap = 0;
        } else {
            gap = 1;
        }
    }
    if (gap && any) la_buf_puts(out, " …");
}

static int cmp_str(const void *x, const void *y) { return strcmp(*(const char *const *)x, *(const char *const *)y); }

la_status la_report_heldout_stats(const la_report *r, la_heldout_stats *s)
{
    memset(s, 0, sizeof *s);
    const la_row *rows = la_table_rows_const(r->table);
    size_t n = la_table_nrows(r->table);
    double sb = 0, sa = 0, sl = 0;
    for (size_t i = 0; i < n; i++) {
        if (rows[i].part != r->heldout) continue;
        s->before++;
        int kept = r->audit->out[i] != LA_OUT_QUARANTINE;
        if (kept) s->after++;
        if (!isnan(rows[i].score)) {
            s->scored_before++;
            sb += rows[i].score;
            if (kept) {
                s->scored_after++;
                sa += rows[i].score;
            } else {
                s->scored_leaked++;
                sl += rows[i].score;
            }
        }
    }
    s->acc_before = s->scored_before ? sb / (double)s->scored_before : NAN;
    s->acc_after = s->scored_after ? sa / (double)s->scored_after : NAN;
    s->acc_leaked = s->scored_leaked ? sl / (double)s->scored_leaked : NAN;

    /* families: sort family names with their rows' sides */
    size_t nf = 0;
    for (size_t i = 0; i < n; i++)
        if (rows[i].family) nf++;
    s->share = n ? (double)s->before / (double)n : 0;
    if (nf == 0) return LA_OK;
    const char **keys = malloc(nf * sizeof *keys);
    size_t *sizes = malloc(nf * sizeof *sizes);
    if (!keys || !sizes) {
        free(keys);
        free(sizes);
        return la_error(LA_ENOMEM, "out of memory");
    }
    /* key = family name; a second array records per family whether it has held-out and seen rows */
    size_t m = 0;
    for (size_t i = 0; i < n; i++)
        if (rows[i].family) keys[m++] = rows[i].family;
    qsort(keys, m, sizeof *keys, cmp_str);
    size_t ng = 0;
    for (size_t g = 0; g < m;) {
        size_t e = g + 1;
        while (e < m && strcmp(keys[g], keys[e]) == 0) e++;
        sizes[ng++] = e - g;
        if (e - g > 1) s->multi_groups++;
        g = e;
    }
    s->groups = ng;
    s->expected_mixed = la_stat_expected_mixed(sizes, ng, s->share);
    /* observed: families that cross the boundary (from the audit's findings) */
    for (size_t f = 0; f < r->audit->nfamilies; f++)
        if (r->audit->families[f].crosses) s->observed_mixed++;
    free(keys);
    free(sizes);
    return LA_OK;
}

/* Copies first, then near copies, then ungraded family/time links, then related links last. */
static int pair_rank(uint32_t kinds, int grade)
{
    if (grade == LA_GRADE_RELATED) return 10;
    if (grade == LA_GRADE_NEAR) return 5;
    if (kinds & LA_KIND_EXACT) return 0;
    if (kinds & LA_KIND_NEAR) return 1;
    if (kinds & LA_KIND_SEMANTIC) return 2;
    if (kinds & LA_KIND_FAMILY) return 3;
    return 4;
}

/* Pair indices by rank, then position; ctx is the pair list. */
static int cmp_rank(const void *x, const void *y, void *ctx)
{
    const la_pairs *pairs = ctx;
    const la_pair *a = &pairs->v[*(const size_t *)x], *b = &pairs->v[*(const size_t *)y];
    int ra = pair_rank(a->kinds, a->grade), rb = pair_rank(b->kinds, b->grade);
    if (ra != rb) return ra - rb;
    return *(const size_t *)x < *(const size_t *)y ? -1 : 1;
}

size_t *la_report_ranked_pairs(const la_report *r)
{
    size_t *idx = la_malloc_n(r->pairs->n, sizeof *idx);
    if (!idx) return NULL;
    for (size_t k = 0; k < r->pairs->n; k++) idx[k] = k;
    la_sort(idx, r->pairs->n, sizeof *idx, cmp_rank, (void *)r->pairs);
    return idx;
}

/* What a reviewer does with a link: 0 judge it, 1 confirm a certain copy, 2 check family or time
 * evidence, 3 look at a related link that gates nothing by default. */
static int review_tier(const la_pair *p)
{
    if (p->grade == LA_GRADE_RELATED) return 3;
    if (p->grade == LA_GRADE_NONE) return 2;
    return p->kinds & LA_KIND_EXACT ? 1 : 0;
}

static int cmp_review(const void *x, const void *y, void *ctx)
{
    const la_pairs *pairs = ctx;
    size_t i = *(const size_t *)x, j = *(const size_t *)y;
    const la_pair *a = &pairs->v[i], *b = &pairs->v[j];
    int ta = review_tier(a), tb = review_tier(b);
    if (ta != tb) return ta - tb;
    if (a->grade != b->grade) return b->grade - a->grade;
    double sa = la_pair_strength(a), sb = la_pair_strength(b);
    if (sa != sb) return sa > sb ? -1 : 1;
    return i < j ? -1 : i > j ? 1 : 0;
}

/* Positions by their group's first position, then their own; ctx holds the group of each. */
static int cmp_group(const void *x, const void *y, void *ctx)
{
    const size_t *group = ctx;
    size_t i = *(const size_t *)x, j = *(const size_t *)y;
    if (group[i] != group[j]) return group[i] < group[j] ? -1 : 1;
    return i < j ? -1 : i > j ? 1 : 0;
}

size_t *la_report_review_order(const la_report *r)
{
    size_t n = r->pairs->n, nc = r->audit->nclusters;
    size_t *idx = la_malloc_n(n, sizeof *idx), *pos = la_malloc_n(n, sizeof *pos), *group = la_malloc_n(n, sizeof *group);
    size_t *first = la_malloc_n(nc + 1, sizeof *first);
    if (!idx || !pos || !group || !first) {
        free(idx);
        free(pos);
        free(group);
        free(first);
        return NULL;
    }
    for (size_t k = 0; k < n; k++) idx[k] = k;
    la_sort(idx, n, sizeof *idx, cmp_review, (void *)r->pairs);
    /* each position's group: its cluster's first position, or itself for a link that moves nothing */
    for (size_t c = 0; c <= nc; c++) first[c] = SIZE_MAX;
    for (size_t k = 0; k < n; k++) {
        const la_pair *p = &r->pairs->v[idx[k]];
        uint32_t c = la_audit_pair_moves(r->audit, p) ? r->audit->cluster[p->a] : 0;
        if (c && c <= nc && first[c] == SIZE_MAX) first[c] = k;
        group[k] = c && c <= nc ? first[c] : k;
        pos[k] = k;
    }
    la_sort(pos, n, sizeof *pos, cmp_group, group);
    for (size_t k = 0; k < n; k++) group[k] = idx[pos[k]];
    free(idx);
    free(pos);
    free(first);
    return group;
}

int la_report_small_set_warning(la_buf *b, const char *what, double p, size_t n)
{
    double hw = la_stat_ci95(p, n);
    if (n > 0 && hw <= 0.05) return 0;
    la_buf_printf(b, "%s is too small to gate a release: its 95%% interval is ±%.1f points, wider than ±5. "
                     "Differences smaller than that are noise.",
                  what, n ? 100 * hw : 100.0);
    return 1;
}

void la_report_random_split_sentence(la_buf *b, const la_heldout_stats *s)
{
    la_buf_printf(b, "A row-level random split with this held-out share (%.2f) would put %.1f of the %zu families on "
                     "both sides; here %zu do.",
                  s->share, s->expected_mixed, s->groups, s->observed_mixed);
}
