/*
 * simtile_rescore.c - host re-scoring of the device tiles' candidates (see simtile_rescore.h).
 *
 * Why a row can be "unsettled": the device keeps, per held-out row, a list of the L = k + slack best
 * fast scores. After re-scoring, the k best exact scores are known among those; anything the device
 * dropped scored at most the list's last fast score F, so its exact score is at most F + bound. When
 * that is below the k-th exact score the row is final; otherwise (many near-ties, such as duplicate
 * seen rows) the row is recomputed on the CPU, which is slower but the reference by definition.
 */
#include "simtile_rescore.h"
#include "la_cpus.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "simtile_core.h"

static int nthreads(int want) { return la_omp_threads(want); }

static int hit_cmp(const void *x, const void *y) {
    const la_simtile_hit *a = x, *b = y;
    if (a->q != b->q) return a->q < b->q ? -1 : 1;
    if (a->s != b->s) return a->s < b->s ? -1 : 1;
    return 0;
}

void la_simtile_hits_sort(la_simtile_hit *v, size_t n) {
    if (n > 1) qsort(v, n, sizeof *v, hit_cmp);
}

la_status la_simtile_rescore_pairs(const float *Q, const float *S, size_t d, uint32_t s_offset,
                                   float thr, const uint32_t *cand, size_t n, int threads,
                                   la_simtile_hits *hits) {
    if (n == 0) return LA_OK;
    float *e = malloc(n * sizeof *e);
    if (!e) return la_error(LA_ENOMEM, "simtile: out of memory re-scoring %zu candidates", n);
    int nt = nthreads(threads);
    (void)nt;
#ifdef LA_HAVE_OPENMP
#pragma omp parallel for num_threads(nt) schedule(static) if (n > 4096)
#endif
    for (size_t i = 0; i < n; i++)
        e[i] = la_simtile_dot(Q + (size_t)cand[2 * i] * d, S + (size_t)cand[2 * i + 1] * d, d);
    size_t keep = 0;
    for (size_t i = 0; i < n; i++) keep += e[i] >= thr;
    if (hits->cap < hits->n + keep) {
        size_t cap = hits->n + keep;
        if (cap < 2 * hits->cap) cap = 2 * hits->cap;
        la_simtile_hit *v = realloc(hits->v, cap * sizeof *v);
        if (!v) {
            free(e);
            return la_error(LA_ENOMEM, "simtile: out of memory for %zu pairs", hits->n + keep);
        }
        hits->v = v;
        hits->cap = cap;
    }
    for (size_t i = 0; i < n; i++)
        if (e[i] >= thr)
            hits->v[hits->n++] = (la_simtile_hit){cand[2 * i], s_offset + cand[2 * i + 1], e[i]};
    free(e);
    return LA_OK;
}

la_status la_simtile_rescore_topk(const float *Q, size_t nq, const float *S, size_t ns, size_t d,
                                  uint32_t s_offset, const la_simtile_params *p,
                                  const float *const *lists_c, const uint32_t *const *lists_i,
                                  int nlists, uint32_t L, float s_maxnorm, la_simtile_bound b,
                                  uint32_t *top_idx, float *top_cos, size_t *ncand, size_t *ncpu) {
    const uint32_t k = p->topk;
    *ncand = 0;
    *ncpu = 0;
    if (k == 0 || nq == 0) return LA_OK;
    uint32_t *new_idx = malloc(nq * k * sizeof *new_idx);
    float *new_cos = malloc(nq * k * sizeof *new_cos);
    unsigned char *unsettled = calloc(nq, 1);
    if (!new_idx || !new_cos || !unsettled) {
        free(new_idx);
        free(new_cos);
        free(unsettled);
        return la_error(LA_ENOMEM, "simtile: out of memory merging top-k lists");
    }
    memcpy(new_idx, top_idx, nq * k * sizeof *new_idx);
    memcpy(new_cos, top_cos, nq * k * sizeof *new_cos);
    size_t cand = 0;
    int nt = nthreads(p->threads);
    (void)nt;
#ifdef LA_HAVE_OPENMP
#pragma omp parallel for num_threads(nt) schedule(dynamic, 64) reduction(+ : cand)
#endif
    for (size_t q = 0; q < nq; q++) {
        const float *qv = Q + q * d;
        uint32_t *ti = new_idx + q * k;
        float *tc = new_cos + q * k;
        double worst = -INFINITY; /* best fast score any list left off */
        for (int l = 0; l < nlists; l++) {
            const float *lc = lists_c[l] + q * L;
            const uint32_t *li = lists_i[l] + q * L;
            for (uint32_t j = 0; j < L; j++) {
                if (li[j] == LA_SIMTILE_NONE) break;
                float e = la_simtile_dot(qv, S + (size_t)li[j] * d, d);
                la_simtile_topk_insert(ti, tc, k, s_offset + li[j], e);
                cand++;
            }
            /* A full list bounds what it left off by its last score; a score that is not finite
             * (an fp16 tile overflowed: vectors far from unit length) bounds nothing. */
            if (li[L - 1] != LA_SIMTILE_NONE) {
                if (!isfinite(lc[L - 1]))
                    worst = INFINITY;
                else if (lc[L - 1] > worst)
                    worst = lc[L - 1];
            }
        }
        if (worst == -INFINITY) continue;
        double qn = 0.0;
        for (size_t t = 0; t < d; t++) qn += (double)qv[t] * qv[t];
        qn = sqrt(qn) * (1.0 + 1e-6);
        double bound = (double)b.rel * qn * s_maxnorm + (double)b.sub * (qn + s_maxnorm) + b.abs0;
        if (!(worst + bound < (double)tc[k - 1])) unsettled[q] = 1;
    }
    *ncand = cand;

    size_t nr = 0;
    for (size_t q = 0; q < nq; q++) nr += unsettled[q];
    la_status st = LA_OK;
    if (nr) {
        /* The CPU reference on the unsettled rows, from their lists as they were on entry. */
        float *Qr = malloc(nr * d * sizeof *Qr);
        uint32_t *ri = malloc(nr * k * sizeof *ri);
        float *rc = malloc(nr * k * sizeof *rc);
        la_simtile_hits scratch = {0};
        if (!Qr || !ri || !rc) {
            st = la_error(LA_ENOMEM, "simtile: out of memory recomputing %zu rows", nr);
        } else {
            size_t r = 0;
            for (size_t q = 0; q < nq; q++)
                if (unsettled[q]) {
                    memcpy(Qr + r * d, Q + q * d, d * sizeof *Qr);
                    memcpy(ri + r * k, top_idx + q * k, k * sizeof *ri);
                    memcpy(rc + r * k, top_cos + q * k, k * sizeof *rc);
                    r++;
                }
            st = la_cpu_simtile(Qr, nr, S, ns, d, s_offset, p, &scratch, ri, rc, NULL);
            if (st == LA_OK) {
                r = 0;
                for (size_t q = 0; q < nq; q++)
                    if (unsettled[q]) {
                        memcpy(new_idx + q * k, ri + r * k, k * sizeof *ri);
                        memcpy(new_cos + q * k, rc + r * k, k * sizeof *rc);
                        r++;
                    }
            }
        }
        la_simtile_hits_free(&scratch);
        free(Qr);
        free(ri);
        free(rc);
    }
    if (st == LA_OK) {
        memcpy(top_idx, new_idx, nq * k * sizeof *new_idx);
        memcpy(top_cos, new_cos, nq * k * sizeof *new_cos);
        *ncpu = nr;
    }
    free(new_idx);
    free(new_cos);
    free(unsettled);
    return st;
}
