/* link_delta.c - links new, known and resolved against a baseline, and waivers applied (see link_delta.h). */
#include "link_delta.h"
#include "la_alloc.h"
#include "la_sort.h"

#include <stdlib.h>
#include <string.h>

#define LA_ALL_KINDS ((1u << LA_KIND_COUNT) - 1)

/* Replace each of the n strings *f[i] (NULL stays NULL) by a copy of its own. Returns 1, or 0 when
 * out of memory, with none of the copies left. */
static int copy_strings(char **const f[], size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (!*f[i] || (*f[i] = strdup(*f[i]))) continue;
        while (i-- > 0) free(*f[i]);
        return 0;
    }
    return 1;
}

static void prior_link_free(la_prior_link *l)
{
    free(l->heldout_id);
    free(l->seen_id);
    free(l->heldout_split);
    free(l->seen_split);
}

la_status la_baseline_add_link(la_baseline *b, const la_prior_link *l)
{
    if (!la_grow((void **)&b->links, &b->caplinks, b->nlinks + 1, sizeof *b->links, 256))
        return la_error(LA_ENOMEM, "out of memory reading the baseline");
    la_prior_link c = *l;
    char **const f[] = {&c.heldout_id, &c.seen_id, &c.heldout_split, &c.seen_split};
    if (!copy_strings(f, sizeof f / sizeof *f)) return la_error(LA_ENOMEM, "out of memory reading the baseline");
    b->links[b->nlinks++] = c;
    return LA_OK;
}

la_status la_baseline_add_time(la_baseline *b, const char *id)
{
    if (!la_grow((void **)&b->time_ids, &b->captime, b->ntime + 1, sizeof *b->time_ids, 16))
        return la_error(LA_ENOMEM, "out of memory reading the baseline");
    if (!(b->time_ids[b->ntime] = strdup(id))) return la_error(LA_ENOMEM, "out of memory reading the baseline");
    b->ntime++;
    return LA_OK;
}

void la_baseline_free(la_baseline *b)
{
    if (!b) return;
    for (size_t k = 0; k < b->nlinks; k++) prior_link_free(&b->links[k]);
    for (size_t k = 0; k < b->ntime; k++) free(b->time_ids[k]);
    free(b->links);
    free(b->time_ids);
    memset(b, 0, sizeof *b);
}

/* Two (held-out id, seen id) keys in the order la_audit_sort_pairs gives links. */
static int cmp_key(const char *held1, const char *seen1, const char *held2, const char *seen2)
{
    int c = strcmp(held1, held2);
    return c ? c : strcmp(seen1, seen2);
}

/* Baseline link indices by key, then line; ctx is the links. */
static int cmp_prior(const void *x, const void *y, void *ctx)
{
    const la_prior_link *v = ctx, *p = &v[*(const size_t *)x], *q = &v[*(const size_t *)y];
    int c = cmp_key(p->heldout_id, p->seen_id, q->heldout_id, q->seen_id);
    return c ? c : (p->line > q->line) - (p->line < q->line);
}

/* Indices 0..n-1 of the baseline's links, sorted by key; NULL when out of memory. */
static size_t *prior_order(const la_baseline *b)
{
    size_t *ord = la_malloc_n(b->nlinks, sizeof *ord);
    if (!ord) return NULL;
    for (size_t k = 0; k < b->nlinks; k++) ord[k] = k;
    la_sort(ord, b->nlinks, sizeof *ord, cmp_prior, b->links);
    return ord;
}

int la_baseline_find_duplicate(const la_baseline *b, uint32_t *line1, uint32_t *line2)
{
    size_t *ord = prior_order(b);
    int found = 0;
    for (size_t k = 1; ord && k < b->nlinks && !found; k++) {
        const la_prior_link *p = &b->links[ord[k - 1]], *q = &b->links[ord[k]];
        if (cmp_key(p->heldout_id, p->seen_id, q->heldout_id, q->seen_id)) continue;
        *line1 = p->line;
        *line2 = q->line;
        found = 1;
    }
    free(ord);
    return found;
}

static void waiver_free(la_waiver *w)
{
    free(w->heldout_id);
    free(w->seen_id);
    free(w->reason);
    free(w->accepted_by);
}

la_status la_waivers_add(la_waivers *ws, const la_waiver *w)
{
    if (!la_grow((void **)&ws->v, &ws->cap, ws->n + 1, sizeof *ws->v, 16))
        return la_error(LA_ENOMEM, "out of memory reading the waivers");
    la_waiver c = *w;
    char **const f[] = {&c.heldout_id, &c.seen_id, &c.reason, &c.accepted_by};
    if (!copy_strings(f, sizeof f / sizeof *f)) return la_error(LA_ENOMEM, "out of memory reading the waivers");
    ws->v[ws->n++] = c;
    return LA_OK;
}

void la_waivers_free(la_waivers *ws)
{
    if (!ws) return;
    for (size_t k = 0; k < ws->n; k++) waiver_free(&ws->v[k]);
    free(ws->v);
    memset(ws, 0, sizeof *ws);
}

/* Waiver indices by key, then kind, then line; ctx is the waivers. */
static int cmp_waiver(const void *x, const void *y, void *ctx)
{
    const la_waiver *v = ctx, *p = &v[*(const size_t *)x], *q = &v[*(const size_t *)y];
    int c = cmp_key(p->heldout_id, p->seen_id, q->heldout_id, q->seen_id);
    if (c) return c;
    if (p->kind != q->kind) return p->kind < q->kind ? -1 : 1;
    return (p->line > q->line) - (p->line < q->line);
}

int la_waivers_find_overlap(const la_waivers *ws, size_t *first, size_t *second)
{
    size_t *ord = la_malloc_n(ws->n, sizeof *ord);
    if (!ord) return 0;
    for (size_t k = 0; k < ws->n; k++) ord[k] = k;
    la_sort(ord, ws->n, sizeof *ord, cmp_waiver, ws->v);
    int found = 0;
    /* a waiver of every kind (kind 0) sorts first among its link's: comparing neighbours finds it */
    for (size_t k = 1; k < ws->n && !found; k++) {
        const la_waiver *p = &ws->v[ord[k - 1]], *q = &ws->v[ord[k]];
        if (cmp_key(p->heldout_id, p->seen_id, q->heldout_id, q->seen_id)) continue;
        if (p->kind && q->kind && p->kind != q->kind) continue;
        *first = ord[k - 1] < ord[k] ? ord[k - 1] : ord[k];
        *second = ord[k - 1] < ord[k] ? ord[k] : ord[k - 1];
        found = 1;
    }
    free(ord);
    return found;
}

/* ---- the comparison ---- */

static int same_text(const la_prior_link *l, const la_row *held, const la_row *seen)
{
    if (!l->hashed) return 1; /* a baseline written without hashes: its ids alone name the link */
    return l->heldout_hash[0] == held->hash[0] && l->heldout_hash[1] == held->hash[1] &&
           l->seen_hash[0] == seen->hash[0] && l->seen_hash[1] == seen->hash[1];
}

/* Walk the links and the sorted baseline side by side: status per link, and the baseline links
 * nothing matched (resolved). */
static la_status compare_links(const la_table *t, const la_pairs *pairs, const la_gate *g, const la_baseline *b,
                               la_delta *d)
{
    const la_row *rows = la_table_rows_const(t);
    size_t *ord = prior_order(b);
    d->status = la_malloc_n(pairs->n, sizeof *d->status);
    d->resolved = la_malloc_n(b->nlinks, sizeof *d->resolved);
    if (!ord || !d->status || !d->resolved) {
        free(ord);
        return la_error(LA_ENOMEM, "out of memory comparing with the baseline");
    }
    size_t j = 0;
    for (size_t k = 0; k < pairs->n; k++) {
        const la_pair *p = &pairs->v[k];
        const char *held = rows[p->b].id, *seen = rows[p->a].id;
        while (j < b->nlinks && cmp_key(b->links[ord[j]].heldout_id, b->links[ord[j]].seen_id, held, seen) < 0)
            d->resolved[d->nresolved++] = ord[j++];
        d->status[k] = LA_LINK_NEW;
        if (j == b->nlinks || cmp_key(b->links[ord[j]].heldout_id, b->links[ord[j]].seen_id, held, seen) != 0) continue;
        const la_prior_link *l = &b->links[ord[j++]];
        if (!same_text(l, &rows[p->b], &rows[p->a])) {
            d->resolved[d->nresolved++] = (size_t)(l - b->links); /* an edited row: the old link is gone */
            continue;
        }
        if (l->gated || !la_gate_fails(g, p)) d->status[k] = LA_LINK_KNOWN;
    }
    while (j < b->nlinks) d->resolved[d->nresolved++] = ord[j++];
    for (size_t k = 0; k < pairs->n; k++) d->nknown += d->status[k] == LA_LINK_KNOWN;
    d->nnew = pairs->n - d->nknown;
    free(ord);
    return LA_OK;
}

static int cmp_str(const void *x, const void *y) { return strcmp(*(char *const *)x, *(char *const *)y); }

/* Time rows the baseline does not list are new. */
static la_status compare_time(const la_table *t, const la_audit *a, const la_baseline *b, la_delta *d)
{
    const la_row *rows = la_table_rows_const(t);
    char **ids = la_malloc_n(b->ntime, sizeof *ids);
    d->time_new = la_malloc_n(a->ntime, sizeof *d->time_new);
    if (!ids || !d->time_new) {
        free(ids);
        return la_error(LA_ENOMEM, "out of memory comparing with the baseline");
    }
    if (b->ntime) memcpy(ids, b->time_ids, b->ntime * sizeof *ids); /* time_ids is NULL when there are none */
    qsort(ids, b->ntime, sizeof *ids, cmp_str);
    for (size_t i = 0; i < a->ntime; i++) {
        const char *id = rows[a->time_rows[i]].id;
        d->time_new[i] = !bsearch(&id, ids, b->ntime, sizeof *ids, cmp_str);
        d->ntime_new += d->time_new[i];
    }
    free(ids);
    return LA_OK;
}

/* The link that names (held, seen), or LA_NO_WAIVER; pairs are sorted by key. */
static size_t find_link(const la_row *rows, const la_pairs *pairs, const char *held, const char *seen)
{
    size_t lo = 0, hi = pairs->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        const la_pair *p = &pairs->v[mid];
        int c = cmp_key(rows[p->b].id, rows[p->a].id, held, seen);
        if (c == 0) return mid;
        if (c < 0) lo = mid + 1;
        else hi = mid;
    }
    return LA_NO_WAIVER;
}

/* Each waiver's state, the kinds it waives on its link, and each link's chain of waivers. */
static la_status apply_waivers(const la_table *t, const la_pairs *pairs, const la_waivers *ws, int32_t today, la_delta *d)
{
    const la_row *rows = la_table_rows_const(t);
    d->waived = la_calloc_n(pairs->n, sizeof *d->waived);
    d->link_waiver = la_malloc_n(pairs->n, sizeof *d->link_waiver);
    d->next_waiver = la_malloc_n(ws->n, sizeof *d->next_waiver);
    d->waiver_state = la_malloc_n(ws->n, sizeof *d->waiver_state);
    if (!d->waived || !d->link_waiver || !d->next_waiver || !d->waiver_state)
        return la_error(LA_ENOMEM, "out of memory applying the waivers");
    for (size_t k = 0; k < pairs->n; k++) d->link_waiver[k] = LA_NO_WAIVER;
    /* backwards, each waiver put first in its link's chain: chains run in file order */
    for (size_t i = ws->n; i-- > 0;) {
        const la_waiver *w = &ws->v[i];
        size_t k = find_link(rows, pairs, w->heldout_id, w->seen_id);
        if (k != LA_NO_WAIVER && w->kind && !(pairs->v[k].kinds & w->kind)) k = LA_NO_WAIVER;
        int expired = w->expires < today;
        d->waiver_state[i] = expired ? LA_WAIVER_EXPIRED : k == LA_NO_WAIVER ? LA_WAIVER_STALE : LA_WAIVER_ACTIVE;
        d->next_waiver[i] = LA_NO_WAIVER;
        if (k == LA_NO_WAIVER) continue;
        d->next_waiver[i] = d->link_waiver[k];
        d->link_waiver[k] = i;
        if (!expired) d->waived[k] |= w->kind ? w->kind : LA_ALL_KINDS;
    }
    for (size_t i = 0; i < ws->n; i++) {
        d->nactive += d->waiver_state[i] == LA_WAIVER_ACTIVE;
        d->nexpired += d->waiver_state[i] == LA_WAIVER_EXPIRED;
        d->nstale += d->waiver_state[i] == LA_WAIVER_STALE;
    }
    for (size_t k = 0; k < pairs->n; k++) d->nwaived_links += d->waived[k] != 0;
    return LA_OK;
}

la_status la_delta_compute(const la_table *t, const la_pairs *pairs, const la_audit *a, const la_gate *g,
                           const la_baseline *b, const la_waivers *ws, int32_t today, la_delta *d)
{
    memset(d, 0, sizeof *d);
    d->baseline = b;
    d->waivers = ws;
    d->today = today;
    if (b) {
        LA_TRY(compare_links(t, pairs, g, b, d));
        LA_TRY(compare_time(t, a, b, d));
    }
    if (ws) LA_TRY(apply_waivers(t, pairs, ws, today, d));
    return LA_OK;
}

void la_delta_free(la_delta *d)
{
    if (!d) return;
    free(d->status);
    free(d->resolved);
    free(d->time_new);
    free(d->waived);
    free(d->link_waiver);
    free(d->next_waiver);
    free(d->waiver_state);
    memset(d, 0, sizeof *d);
}

int la_delta_link_fails(const la_delta *d, const la_gate *g, const la_pair *p, size_t k, int kind)
{
    if (kind < 0) {
        for (int i = 0; i < LA_KIND_COUNT; i++)
            if (la_delta_link_fails(d, g, p, k, i)) return 1;
        return 0;
    }
    if (!la_gate_kind_fails(g, p, kind)) return 0;
    if (!d) return 1;
    if (d->waived && (d->waived[k] & (1u << kind))) return 0;
    return !(d->fail_on_new && d->status && d->status[k] == LA_LINK_KNOWN);
}

int la_delta_time_fails(const la_delta *d, size_t i)
{
    return !d || !d->fail_on_new || !d->time_new || d->time_new[i];
}
