/*
 * pairs.c - the link list shared by every evidence tier: append, then sort and merge so that each
 * (a, b) pair appears once with the union of its kinds and every score that was measured.
 */
#include "leakaudit.h"

#include <math.h>
#include <stdlib.h>

la_pair la_pair_make(uint32_t a, uint32_t b, uint32_t kinds)
{
    la_pair p;
    p.a = a;
    p.b = b;
    p.kinds = kinds;
    p.jaccard = p.containment = p.minhash = p.cosine = p.margin = NAN;
    p.simhash_dist = -1;
    p.wcontainment = p.wwords = p.slot_evidence = NAN;
    p.grade = LA_GRADE_NONE;
    p.nums_held = p.nums_shared = p.nums_changed = 0;
    return p;
}

la_status la_pairs_push(la_pairs *p, const la_pair *x)
{
    if (p->n == p->cap) {
        size_t cap = p->cap ? p->cap * 2 : 256;
        la_pair *v = realloc(p->v, cap * sizeof *v);
        if (!v) return la_error(LA_ENOMEM, "out of memory growing the pair list to %zu pairs", cap);
        p->v = v;
        p->cap = cap;
    }
    p->v[p->n++] = *x;
    return LA_OK;
}

static int cmp_pair(const void *x, const void *y)
{
    const la_pair *p = x, *q = y;
    if (p->b != q->b) return p->b < q->b ? -1 : 1;
    if (p->a != q->a) return p->a < q->a ? -1 : 1;
    return 0;
}

static float keep(float old, float add) { return isnan(old) ? add : (isnan(add) ? old : fmaxf(old, add)); }

void la_pairs_normalize(la_pairs *p)
{
    if (p->n == 0) return;
    qsort(p->v, p->n, sizeof *p->v, cmp_pair);
    size_t w = 0;
    for (size_t i = 1; i < p->n; i++) {
        la_pair *o = &p->v[w];
        const la_pair *x = &p->v[i];
        if (x->a == o->a && x->b == o->b) {
            o->kinds |= x->kinds;
            o->jaccard = keep(o->jaccard, x->jaccard);
            o->containment = keep(o->containment, x->containment);
            o->minhash = keep(o->minhash, x->minhash);
            o->cosine = keep(o->cosine, x->cosine);
            o->margin = keep(o->margin, x->margin);
            if (o->simhash_dist < 0 || (x->simhash_dist >= 0 && x->simhash_dist < o->simhash_dist))
                o->simhash_dist = x->simhash_dist;
            o->wcontainment = keep(o->wcontainment, x->wcontainment);
            o->wwords = keep(o->wwords, x->wwords);
            o->slot_evidence = keep(o->slot_evidence, x->slot_evidence);
            if (x->grade > o->grade) {
                o->grade = x->grade;
                o->nums_held = x->nums_held;
                o->nums_shared = x->nums_shared;
                o->nums_changed = x->nums_changed;
            }
        } else {
            p->v[++w] = *x;
        }
    }
    p->n = w + 1;
}

void la_pairs_free(la_pairs *p)
{
    if (!p) return;
    free(p->v);
    p->v = NULL;
    p->n = p->cap = 0;
}
