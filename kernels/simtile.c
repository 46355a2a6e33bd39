/*
 * simtile.c - the CPU loop of the semantic similarity tiles (see simtile.h).
 *
 * Work is split by blocks of held-out rows: each OpenMP thread owns whole blocks, so the top-k lists
 * of a row are touched by one thread only and need no lock. Inside a block the seen batch is walked
 * in tiles; each tile is one single-threaded cblas_sgemm (OpenBLAS runs single-threaded inside an
 * OpenMP parallel region) followed by a scan while the tile is still in cache. The scan tests
 * sixteen values at a time against the row's floor (threshold - margin, or the k-th best so far),
 * which the compiler vectorizes; only the rare candidates take the scalar path.
 */
#include "simtile.h"
#include "la_cpus.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "simtile_core.h"
#include "simtile_i8.h"

#ifdef LA_HAVE_CBLAS
#include <cblas.h>
#endif
#ifdef LA_HAVE_OPENMP
#include <omp.h>
#endif

#define LA_SIMTILE_BLOCK_Q 256
#define LA_SIMTILE_SCAN 16

void la_simtile_params_default(la_simtile_params *p) {
    p->threshold = 0.8f;
    p->topk = 1;
    p->threads = 0;
    p->block_q = 0;
    p->block_s = 0;
}

void la_simtile_hits_free(la_simtile_hits *h) {
    if (!h) return;
    free(h->v);
    h->v = NULL;
    h->n = h->cap = 0;
}

void la_simtile_top_init(uint32_t *top_idx, float *top_cos, size_t nq, uint32_t k) {
    for (size_t i = 0; i < nq * k; i++) {
        top_idx[i] = LA_SIMTILE_NONE;
        top_cos[i] = -INFINITY;
    }
}

int la_simtile_hits_push(la_simtile_hits *h, uint32_t q, uint32_t s, float c) {
    if (h->n == h->cap) {
        size_t cap = h->cap ? h->cap * 2 : 256;
        la_simtile_hit *v = realloc(h->v, cap * sizeof *v);
        if (!v) return -1;
        h->v = v;
        h->cap = cap;
    }
    h->v[h->n].q = q;
    h->v[h->n].s = s;
    h->v[h->n].cosine = c;
    h->n++;
    return 0;
}

static int hit_cmp(const void *x, const void *y) {
    const la_simtile_hit *a = x, *b = y;
    if (a->q != b->q) return a->q < b->q ? -1 : 1;
    if (a->s != b->s) return a->s < b->s ? -1 : 1;
    return 0;
}

/* C (mq x ms) = Qb (mq x d) * Sb (ms x d)^T */
static void tile_gemm(const float *Qb, size_t mq, const float *Sb, size_t ms, size_t d, float *C) {
#ifdef LA_HAVE_CBLAS
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)mq, (int)ms, (int)d, 1.0f, Qb,
                (int)d, Sb, (int)d, 0.0f, C, (int)ms);
#else
    for (size_t i = 0; i < mq; i++)
        for (size_t j = 0; j < ms; j++) {
            float acc = 0.0f;
            for (size_t t = 0; t < d; t++) acc += Qb[i * d + t] * Sb[j * d + t];
            C[i * ms + j] = acc;
        }
#endif
}

typedef struct job {
    const float *Q, *S;
    size_t nq, ns, d;
    uint32_t s_offset, k;
    float thr;
    size_t bq, bs;
    uint32_t *top_idx;
    float *top_cos;
    const la_i8_side *qi, *si; /* the int8 path (simtile_i8.h), or NULL: sgemm */
    const uint8_t *qzero;      /* per held-out row: 1 for a zero vector; NULL: none taken aside */
} job;

/* A candidate (q, s0 + j) of a tile whose fast value is c: re-score it in the fixed order; pairs and
 * top-k lists keep only re-scored values, so they match every other backend exactly. Returns -1
 * when out of memory. */
static int take_candidate(const job *jb, size_t q, size_t s0, size_t j, float c, float *floor, la_simtile_hits *out,
                          size_t *rescored)
{
    const size_t d = jb->d, k = jb->k;
    const float cand = jb->thr - LA_SIMTILE_MARGIN, sure = jb->thr + LA_SIMTILE_MARGIN;
    uint32_t s = jb->s_offset + (uint32_t)(s0 + j);
    float e = la_simtile_dot(jb->Q + q * d, jb->S + (s0 + j) * d, d);
    if (c >= cand && c < sure) (*rescored)++;
    if (e >= jb->thr && la_simtile_hits_push(out, (uint32_t)q, s, e)) return -1;
    if (k) {
        uint32_t *ti = jb->top_idx + q * k;
        float *tc = jb->top_cos + q * k;
        la_simtile_topk_insert(ti, tc, (uint32_t)k, s, e);
        *floor = la_simtile_floor(jb->thr, tc, (uint32_t)k);
    }
    return 0;
}

/* A zero held-out row (jb->qzero): every re-scored cosine is 0, so of a tile only its first k
 * entries (the lowest indices, which win ties) can enter the row's list, and none is a pair (the
 * threshold is above the margin, or no row is taken aside). Re-scoring just those gives the lists
 * a full scan gives, without re-scoring the whole seen side for a row that matches nothing. */
static int take_zero_row(const job *jb, size_t q, size_t s0, size_t ms, la_simtile_hits *out, size_t *rescored)
{
    float floor = -INFINITY;
    for (size_t j = 0; j < ms && j < jb->k; j++)
        if (take_candidate(jb, q, s0, j, 0.0f, &floor, out, rescored)) return -1;
    return 0;
}

/* The int8 path of run_block: C holds the exact integer products of the tile; an entry is looked at
 * when its approximation plus the error bound of simtile_i8.h (the smaller of its two forms) reaches
 * the floor. With a top-1 list the floor also rises to the best lower bound (approximation minus
 * bound) in the row's tile before any entry is re-scored: the row's best cosine is at least that, so
 * an entry whose upper bound stays below it can be neither the best nor (the floor being at most
 * the threshold) a pair, and only the entries near the tile's best are re-scored, not every one that
 * was the best so far as the scan went. */
static int scan_i8(const job *jb, size_t q0, size_t mq, size_t s0, size_t ms, const int32_t *C, size_t ldc,
                   la_simtile_hits *out, size_t *rescored, float *ub)
{
    const la_i8_side *qs = jb->qi, *ss = jb->si;
    const float *rb = ss->inv_scale + s0, *hb = ss->half_l1 + s0, *nb = ss->norm + s0, *eb = ss->err + s0;
    for (size_t i = 0; i < mq; i++) {
        const int32_t *row = C + i * ldc;
        const size_t q = q0 + i;
        if (jb->qzero && jb->qzero[q]) {
            if (take_zero_row(jb, q, s0, ms, out, rescored)) return -1;
            continue;
        }
        const float ra = qs->inv_scale[q], ha = qs->half_l1[q], na = qs->norm[q], ea = qs->err[q];
        float floor = la_simtile_floor(jb->thr, jb->k ? jb->top_cos + q * jb->k : NULL, jb->k);
        /* each entry's upper bound, and the best lower bound of the row's tile (per lane of
         * LA_SIMTILE_SCAN, then across them: loops the compiler vectorizes) */
        const float nea = na + ea;
        float lanes[LA_SIMTILE_SCAN];
        for (size_t l = 0; l < LA_SIMTILE_SCAN; l++) lanes[l] = -INFINITY;
        for (size_t j0 = 0; j0 < ms; j0 += LA_SIMTILE_SCAN) {
            const size_t w = ms - j0 < LA_SIMTILE_SCAN ? ms - j0 : LA_SIMTILE_SCAN;
            for (size_t l = 0; l < w; l++) {
                const size_t j = j0 + l;
                const float t = ra * rb[j], approx = (float)row[j] * t;
                const float l1 = (hb[j] + ha) * t, l2 = ea * nb[j] + eb[j] * nea, bound = l1 < l2 ? l1 : l2;
                const float lo = approx - bound;
                ub[j] = approx + bound;
                lanes[l] = lo > lanes[l] ? lo : lanes[l];
            }
        }
        float best_lo = -INFINITY;
        for (size_t l = 0; l < LA_SIMTILE_SCAN; l++) best_lo = lanes[l] > best_lo ? lanes[l] : best_lo;
        const float risen = jb->k == 1 ? la_simtile_floor(jb->thr, &best_lo, 1) : -INFINITY;
        if (risen > floor) floor = risen;
        for (size_t j0 = 0; j0 < ms; j0 += LA_SIMTILE_SCAN) {
            size_t je = j0 + LA_SIMTILE_SCAN < ms ? j0 + LA_SIMTILE_SCAN : ms;
            int any = 0;
            for (size_t j = j0; j < je; j++) any |= ub[j] >= floor;
            if (!any) continue;
            for (size_t j = j0; j < je; j++) {
                if (!(ub[j] >= floor)) continue;
                if (take_candidate(jb, q, s0, j, (float)row[j] * ra * rb[j], &floor, out, rescored)) return -1;
                if (risen > floor) floor = risen;
            }
        }
    }
    return 0;
}

/* One block of held-out rows [q0, q1) against the whole seen batch. */
static int run_block(const job *jb, size_t q0, size_t q1, float *C, float *ub, la_simtile_hits *out,
                     size_t *rescored) {
    const size_t d = jb->d, k = jb->k;
    for (size_t s0 = 0; s0 < jb->ns; s0 += jb->bs) {
        size_t ms = jb->ns - s0 < jb->bs ? jb->ns - s0 : jb->bs;
        if (jb->qi) {
            size_t ldc = (jb->bs + LA_I8_NR - 1) / LA_I8_NR * LA_I8_NR;
            la_i8_tile(jb->qi, q0, q1 - q0, jb->si, s0, ms, (int32_t *)C, ldc);
            if (scan_i8(jb, q0, q1 - q0, s0, ms, (const int32_t *)C, ldc, out, rescored, ub)) return -1;
            continue;
        }
        tile_gemm(jb->Q + q0 * d, q1 - q0, jb->S + s0 * d, ms, d, C);
        for (size_t i = 0; i < q1 - q0; i++) {
            const float *row = C + i * ms;
            const size_t q = q0 + i;
            if (jb->qzero && jb->qzero[q]) {
                if (take_zero_row(jb, q, s0, ms, out, rescored)) return -1;
                continue;
            }
            const float *tc = k ? jb->top_cos + q * k : NULL;
            float floor = la_simtile_floor(jb->thr, tc, (uint32_t)k);
            for (size_t j0 = 0; j0 < ms; j0 += LA_SIMTILE_SCAN) {
                size_t je = j0 + LA_SIMTILE_SCAN < ms ? j0 + LA_SIMTILE_SCAN : ms;
                int any = 0;
                for (size_t j = j0; j < je; j++) any |= row[j] >= floor;
                if (!any) continue;
                for (size_t j = j0; j < je; j++)
                    if (row[j] >= floor && take_candidate(jb, q, s0, j, row[j], &floor, out, rescored)) return -1;
            }
        }
    }
    return 0;
}

la_status la_cpu_simtile(const float *Q, size_t nq, const float *S, size_t ns, size_t d,
                         uint32_t s_offset, const la_simtile_params *p, la_simtile_hits *hits,
                         uint32_t *top_idx, float *top_cos, la_simtile_stats *stats) {
    if (!p || !hits || d == 0 || d > INT32_MAX || (p->topk && (!top_idx || !top_cos)))
        return la_error(LA_EINVAL, "simtile: bad arguments");
    if ((uint64_t)s_offset + ns > UINT32_MAX)
        return la_error(LA_EINVAL, "simtile: seen row index past 2^32");
    if (nq == 0 || ns == 0) return LA_OK;
    if (!isfinite(p->threshold)) return la_error(LA_EINVAL, "simtile: threshold must be finite");

    int nt = 1;
#ifdef LA_HAVE_OPENMP
    nt = la_omp_threads(p->threads);
#endif
    if (nt < 1) nt = 1;
    size_t bq = p->block_q ? p->block_q : LA_SIMTILE_BLOCK_Q;
    size_t bs = p->block_s ? p->block_s : LA_SIMTILE_BLOCK_S;
    /* Keep every thread busy when the held-out side is small. */
    size_t fair = (nq + (size_t)nt - 1) / (size_t)nt;
    if (fair < bq) bq = fair < 16 ? 16 : fair;
    if (bs > ns) bs = ns;
    if (bq > INT32_MAX / 2 || bs > INT32_MAX / 2) return la_error(LA_EINVAL, "simtile: block too large");

    job jb = {Q, S, nq, ns, d, s_offset, p->topk, p->threshold, bq, bs, top_idx, top_cos, NULL, NULL, NULL};
    /* zero held-out rows (empty texts) are taken aside where no cosine of 0 can be a pair */
    uint8_t *qzero = NULL;
    if (p->threshold > LA_SIMTILE_MARGIN) {
        size_t nzero = 0;
        qzero = malloc(nq);
        if (!qzero) return la_error(LA_ENOMEM, "simtile: out of memory");
        for (size_t q = 0; q < nq; q++) {
            size_t t = 0;
            while (t < d && Q[q * d + t] == 0.0f) t++;
            qzero[q] = t == d;
            nzero += qzero[q];
        }
        if (nzero) jb.qzero = qzero;
    }
    /* the int8 path where the CPU has VNNI or AVX2 (simtile_i8.h): the same pairs and lists, re-scored */
    la_i8_side qi = {0}, si = {0};
    if (la_simtile_i8_available(d)) {
        if (la_i8_quantize_q(Q, nq, d, nt, &qi) || la_i8_quantize_s(S, ns, d, nt, &si)) {
            free(qzero);
            la_i8_side_free(&qi);
            la_i8_side_free(&si);
            return la_error(LA_ENOMEM, "simtile: out of memory quantizing %zu x %zu vectors", nq + ns, d);
        }
        jb.qi = &qi;
        jb.si = &si;
        /* a tile starts at a panel of the packed seen side; where tiles are cut changes no result */
        jb.bs = bs = (bs + LA_I8_NR - 1) / LA_I8_NR * LA_I8_NR;
    }
    size_t tile_bytes = bq * bs * sizeof(float), ldc = (bs + LA_I8_NR - 1) / LA_I8_NR * LA_I8_NR;
    if (jb.qi && bq * ldc * sizeof(int32_t) > tile_bytes) tile_bytes = bq * ldc * sizeof(int32_t);
    size_t nblocks = (nq + bq - 1) / bq;
    la_simtile_hits *local = calloc((size_t)nt, sizeof *local);
    size_t *resc = calloc((size_t)nt, sizeof *resc);
    if (!local || !resc) {
        free(local);
        free(resc);
        free(qzero);
        la_i8_side_free(&qi);
        la_i8_side_free(&si);
        return la_error(LA_ENOMEM, "simtile: out of memory");
    }
    int failed = 0;

#ifdef LA_HAVE_OPENMP
#pragma omp parallel num_threads(nt)
#endif
    {
        int tid = 0;
#ifdef LA_HAVE_OPENMP
        tid = omp_get_thread_num();
#endif
        float *C = malloc(tile_bytes), *ub = jb.qi ? malloc(bs * sizeof *ub) : NULL;
        if (!C || (jb.qi && !ub)) {
#ifdef LA_HAVE_OPENMP
#pragma omp atomic write
#endif
            failed = 1;
        }
#ifdef LA_HAVE_OPENMP
#pragma omp for schedule(dynamic, 1)
#endif
        for (size_t b = 0; b < nblocks; b++) {
            int f;
#ifdef LA_HAVE_OPENMP
#pragma omp atomic read
#endif
            f = failed;
            if (f) continue;
            size_t q0 = b * bq, q1 = q0 + bq < nq ? q0 + bq : nq;
            if (run_block(&jb, q0, q1, C, ub, &local[tid], &resc[tid])) {
#ifdef LA_HAVE_OPENMP
#pragma omp atomic write
#endif
                failed = 1;
            }
        }
        free(C);
        free(ub);
    }

    la_status st = LA_OK;
    size_t total = 0, rescored = 0;
    for (int t = 0; t < nt; t++) total += local[t].n, rescored += resc[t];
    if (failed) {
        st = la_error(LA_ENOMEM, "simtile: out of memory");
    } else if (total) {
        size_t base = hits->n;
        if (hits->cap < base + total) {
            la_simtile_hit *v = realloc(hits->v, (base + total) * sizeof *v);
            if (!v) {
                st = la_error(LA_ENOMEM, "simtile: out of memory");
            } else {
                hits->v = v;
                hits->cap = base + total;
            }
        }
        if (st == LA_OK) {
            for (int t = 0; t < nt; t++) {
                if (local[t].n) memcpy(hits->v + hits->n, local[t].v, local[t].n * sizeof *hits->v);
                hits->n += local[t].n;
            }
            qsort(hits->v + base, total, sizeof *hits->v, hit_cmp);
        }
    }
    for (int t = 0; t < nt; t++) la_simtile_hits_free(&local[t]);
    free(local);
    free(resc);
    free(qzero);
    la_i8_side_free(&qi);
    la_i8_side_free(&si);
    if (st == LA_OK && stats) {
        stats->gemm_flops += 2.0 * (double)nq * (double)ns * (double)d;
        stats->rescored += rescored;
    }
    return st;
}
