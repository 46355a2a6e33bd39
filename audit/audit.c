/* audit.c - family and time evidence, leak clusters and outcomes (see audit.h). */
#include "audit.h"
#include "la_alloc.h"
#include "la_sort.h"
#include "unionfind.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Row indices by family, then partition, then id; ctx is the rows. */
static int cmp_family(const void *x, const void *y, void *ctx)
{
    const la_row *rows = ctx;
    const la_row *a = &rows[*(const uint32_t *)x], *b = &rows[*(const uint32_t *)y];
    int c = strcmp(a->family, b->family);
    if (c) return c;
    if (a->part != b->part) return a->part < b->part ? -1 : 1;
    return strcmp(a->id, b->id);
}

static int is_time_leak(const la_row *r, const la_audit_opts *o)
{
    if (o->cutoff == LA_NO_DATE || r->date == LA_NO_DATE) return 0;
    return r->part == o->heldout ? r->date < o->cutoff : r->date >= o->cutoff;
}

la_status la_resolve_parse(const char *s, la_resolve *out)
{
    if (!strcmp(s, "quarantine")) *out = LA_RESOLVE_QUARANTINE;
    else if (!strcmp(s, "keep-test")) *out = LA_RESOLVE_KEEP_TEST;
    else if (!strcmp(s, "keep-seen")) *out = LA_RESOLVE_KEEP_SEEN;
    else return la_error(LA_EINVAL, "--resolve %s: expected quarantine, keep-test or keep-seen", s);
    return LA_OK;
}

la_status la_resolve_parse_grade(const char *s, la_resolve *policy, uint8_t *grade)
{
    const char *colon = strchr(s, ':');
    char head[32];
    size_t n = colon ? (size_t)(colon - s) : strlen(s);
    if (n >= sizeof head) return la_error(LA_EINVAL, "--resolve %s: expected quarantine, keep-test or keep-seen", s);
    memcpy(head, s, n);
    head[n] = '\0';
    LA_TRY(la_resolve_parse(head, policy));
    *grade = LA_GRADE_NEAR;
    if (colon) {
        const char *g = colon + 1;
        if (!strcmp(g, "copy")) *grade = LA_GRADE_COPY;
        else if (!strcmp(g, "near")) *grade = LA_GRADE_NEAR;
        else if (!strcmp(g, "related")) *grade = LA_GRADE_RELATED;
        else return la_error(LA_EINVAL, "--resolve %s: unknown grade '%s' (expected copy, near or related)", s, g);
    }
    return LA_OK;
}

int la_audit_pair_moves(const la_audit *a, const la_pair *p)
{
    if (p->kinds & (LA_KIND_FAMILY | LA_KIND_TIME)) return 1;
    if (!(p->kinds & (LA_KIND_EXACT | LA_KIND_NEAR | LA_KIND_SEMANTIC))) return 1;
    uint8_t g = a->link_grade ? a->link_grade : LA_GRADE_NEAR;
    /* an ungraded content link (grading not run) counts as it did before grades existed */
    return p->grade == LA_GRADE_NONE || p->grade >= g;
}

const char *la_resolve_name(la_resolve r)
{
    return r == LA_RESOLVE_KEEP_TEST ? "keep-test" : r == LA_RESOLVE_KEEP_SEEN ? "keep-seen" : "quarantine";
}

double la_pair_strength(const la_pair *p)
{
    if (p->kinds & (LA_KIND_EXACT | LA_KIND_FAMILY)) return 1.0;
    double s = 0;
    if (!isnan(p->jaccard) && p->jaccard > s) s = p->jaccard;
    if (!isnan(p->containment) && p->containment > s) s = p->containment;
    if (!isnan(p->cosine) && p->cosine > s) s = p->cosine;
    return s;
}

void la_audit_free(la_audit *a)
{
    if (!a) return;
    free(a->suspects);
    for (size_t i = 0; i < a->nfamilies; i++) free(a->families[i].rows);
    free(a->families);
    free(a->time_rows);
    free(a->out);
    free(a->why);
    free(a->link_kinds);
    free(a->cluster);
    memset(a, 0, sizeof *a);
}

la_status la_audit_evidence(const la_table *t, const la_audit_opts *o, la_pairs *pairs, la_audit *a)
{
    memset(a, 0, sizeof *a);
    size_t n = la_table_nrows(t);
    const la_row *rows = la_table_rows_const(t);
    uint32_t *order = la_malloc_n(n, sizeof *order);
    a->time_rows = la_malloc_n(n, sizeof *a->time_rows);
    if (!order || !a->time_rows) {
        free(order);
        la_audit_free(a);
        return la_error(LA_ENOMEM, "out of memory grouping families");
    }
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        if (rows[i].family) order[m++] = (uint32_t)i;
        if (is_time_leak(&rows[i], o)) a->time_rows[a->ntime++] = (uint32_t)i;
    }
    la_sort(order, m, sizeof *order, cmp_family, (void *)rows);
    la_sort_rows_by_id(a->time_rows, a->ntime, rows);

    la_status st = LA_OK;
    size_t capf = 0;
    for (size_t g = 0; g < m && st == LA_OK;) {
        size_t e = g + 1;
        while (e < m && strcmp(rows[order[g]].family, rows[order[e]].family) == 0) e++;
        int held = 0, seen = 0, before = 0, after = 0;
        for (size_t i = g; i < e; i++) {
            const la_row *r = &rows[order[i]];
            if (r->part == o->heldout) held = 1;
            else seen = 1;
            if (o->cutoff != LA_NO_DATE && r->date != LA_NO_DATE) {
                if (r->date < o->cutoff) before = 1;
                else after = 1;
            }
        }
        int crosses = held && seen, spans = before && after;
        if (crosses || spans) {
            if (a->nfamilies == capf) {
                capf = capf ? capf * 2 : 16;
                la_family_finding *v = realloc(a->families, capf * sizeof *v);
                if (!v) {
                    st = la_error(LA_ENOMEM, "out of memory recording families");
                    break;
                }
                a->families = v;
            }
            la_family_finding *f = &a->families[a->nfamilies++];
            f->family = rows[order[g]].family;
            f->nrows = e - g;
            f->crosses = crosses;
            f->spans_cutoff = spans;
            f->rows = malloc(f->nrows * sizeof *f->rows);
            if (!f->rows) {
                st = la_error(LA_ENOMEM, "out of memory recording families");
                break;
            }
            memcpy(f->rows, order + g, f->nrows * sizeof *f->rows);
        }
        if (crosses)
            for (size_t i = g; i < e && st == LA_OK; i++) {
                if (rows[order[i]].part != o->heldout) continue;
                for (size_t j = g; j < e && st == LA_OK; j++) {
                    if (rows[order[j]].part == o->heldout) continue;
                    la_pair p = la_pair_make(order[j], order[i], LA_KIND_FAMILY);
                    st = la_pairs_push(pairs, &p);
                }
            }
        g = e;
    }
    free(order);
    return st;
}

la_status la_audit_decide(const la_table *t, const la_audit_opts *o, la_pairs *pairs, const uint32_t *dup_of,
                          la_audit *a)
{
    size_t n = la_table_nrows(t);
    const la_row *rows = la_table_rows_const(t);
    a->out = la_malloc_n(n, sizeof(uint32_t));
    a->why = la_calloc_n(n, sizeof(uint32_t));
    a->link_kinds = la_calloc_n(n, sizeof(uint32_t));
    a->cluster = la_calloc_n(n, sizeof(uint32_t));
    uint32_t *parent = la_malloc_n(n, sizeof(uint32_t));
    uint32_t *roots = la_malloc_n(n, sizeof(uint32_t));
    if (!a->out || !a->why || !a->link_kinds || !a->cluster || !parent || !roots) {
        free(parent);
        free(roots);
        return la_error(LA_ENOMEM, "out of memory deciding outcomes");
    }
    for (size_t i = 0; i < n; i++) {
        parent[i] = (uint32_t)i;
        a->out[i] = rows[i].part;
    }
    a->link_grade = o->link_grade ? o->link_grade : LA_GRADE_NEAR;
    for (size_t i = 0; i < a->ntime; i++) a->why[a->time_rows[i]] |= LA_WHY_TIME;
    for (size_t k = 0; k < pairs->n; k++) {
        la_pair *p = &pairs->v[k];
        if (!la_audit_pair_moves(a, p)) continue;
        if ((a->why[p->a] | a->why[p->b]) & LA_WHY_TIME) p->kinds |= LA_KIND_TIME;
        a->link_kinds[p->a] |= p->kinds;
        a->link_kinds[p->b] |= p->kinds;
        la_uf_union(parent, rows, p->a, p->b);
    }
    for (size_t f = 0; f < a->nfamilies; f++)
        if (a->families[f].spans_cutoff)
            for (size_t i = 0; i < a->families[f].nrows; i++) a->why[a->families[f].rows[i]] |= LA_WHY_SPANS_CUTOFF;

    /* clusters: components with a link, numbered in the order of their smallest id */
    size_t nroots = 0;
    for (size_t i = 0; i < n; i++)
        if (a->link_kinds[i] && la_uf_find(parent, (uint32_t)i) == i) roots[nroots++] = (uint32_t)i;
    la_sort_rows_by_id(roots, nroots, rows);
    uint32_t *num = parent == NULL ? NULL : la_calloc_n(n, sizeof(uint32_t));
    if (!num) {
        free(parent);
        free(roots);
        return la_error(LA_ENOMEM, "out of memory numbering clusters");
    }
    for (size_t c = 0; c < nroots; c++) num[roots[c]] = (uint32_t)(c + 1);
    a->nclusters = nroots;
    for (size_t i = 0; i < n; i++) {
        if (a->link_kinds[i]) {
            a->cluster[i] = num[la_uf_find(parent, (uint32_t)i)];
            a->why[i] |= LA_WHY_LINKED;
        }
        if (dup_of && dup_of[i] != UINT32_MAX) a->why[i] |= LA_WHY_DUPLICATE;
        uint32_t why = a->why[i];
        /* the policy moves one side of a crossing cluster; time, cutoff and duplicate reasons always move */
        if (why & LA_WHY_LINKED) {
            int held = rows[i].part == o->heldout;
            if ((o->resolve == LA_RESOLVE_KEEP_TEST && held) || (o->resolve == LA_RESOLVE_KEEP_SEEN && !held))
                why &= ~(uint32_t)LA_WHY_LINKED;
        }
        if (why) a->out[i] = LA_OUT_QUARANTINE;
    }
    free(num);

    /* suspect clusters: sizes, then the weakest links of each large one */
    if (o->max_cluster && nroots) {
        size_t *size = calloc(nroots + 1, sizeof *size);
        if (!size) {
            free(parent);
            free(roots);
            return la_error(LA_ENOMEM, "out of memory sizing clusters");
        }
        for (size_t i = 0; i < n; i++) size[a->cluster[i]]++;
        size_t ns = 0;
        for (size_t c = 1; c <= nroots; c++) ns += size[c] > o->max_cluster;
        if (ns) {
            a->suspects = calloc(ns, sizeof *a->suspects);
            uint32_t *slot = calloc(nroots + 1, sizeof *slot);
            if (!a->suspects || !slot) {
                free(slot);
                free(size);
                free(parent);
                free(roots);
                return la_error(LA_ENOMEM, "out of memory flagging clusters");
            }
            for (size_t c = 1; c <= nroots; c++)
                if (size[c] > o->max_cluster) {
                    slot[c] = (uint32_t)a->nsuspects + 1;
                    a->suspects[a->nsuspects].cluster = (uint32_t)c;
                    a->suspects[a->nsuspects++].nrows = size[c];
                }
            for (size_t k = 0; k < pairs->n; k++) {
                const la_pair *p = &pairs->v[k];
                if (!la_audit_pair_moves(a, p)) continue;
                uint32_t sl = slot[a->cluster[p->a]];
                if (!sl) continue;
                la_suspect *sus = &a->suspects[sl - 1];
                /* insertion into the weakest-first list; ties keep the smaller ids first */
                double st = la_pair_strength(p);
                size_t pos = sus->nweakest;
                while (pos > 0) {
                    const la_pair *q = &sus->weakest[pos - 1];
                    double qs = la_pair_strength(q);
                    int before = st < qs || (st == qs && (strcmp(rows[p->b].id, rows[q->b].id) < 0 ||
                                                          (strcmp(rows[p->b].id, rows[q->b].id) == 0 &&
                                                           strcmp(rows[p->a].id, rows[q->a].id) < 0)));
                    if (!before) break;
                    pos--;
                }
                if (pos >= LA_SUSPECT_WEAKEST) continue;
                size_t last = sus->nweakest < LA_SUSPECT_WEAKEST ? sus->nweakest : LA_SUSPECT_WEAKEST - 1;
                memmove(&sus->weakest[pos + 1], &sus->weakest[pos], (last - pos) * sizeof *p);
                sus->weakest[pos] = *p;
                if (sus->nweakest < LA_SUSPECT_WEAKEST) sus->nweakest++;
            }
            free(slot);
        }
        free(size);
    }
    free(parent);
    free(roots);
    return LA_OK;
}

/* Pairs by held-out id, then seen id; ctx is the rows. */
static int cmp_pair_ids(const void *x, const void *y, void *ctx)
{
    const la_row *rows = ctx;
    const la_pair *p = x, *q = y;
    int c = strcmp(rows[p->b].id, rows[q->b].id);
    return c ? c : strcmp(rows[p->a].id, rows[q->a].id);
}

void la_audit_sort_pairs(const la_table *t, la_pairs *pairs)
{
    la_sort(pairs->v, pairs->n, sizeof *pairs->v, cmp_pair_ids, (void *)la_table_rows_const(t));
}

double la_stat_ci95(double p, size_t n)
{
    if (n == 0) return NAN;
    return 1.96 * sqrt(p * (1.0 - p) / (double)n);
}

double la_stat_expected_mixed(const size_t *sizes, size_t ngroups, double p)
{
    double s = 0;
    for (size_t i = 0; i < ngroups; i++) s += 1.0 - pow(1.0 - p, (double)sizes[i]) - pow(p, (double)sizes[i]);
    return s;
}
