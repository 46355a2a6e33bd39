/*
 * semantic.c - the semantic evidence tier (see semantic.h): gathers the held-out and seen vectors,
 * runs one of the search paths, and turns its hits into la_pairs and nearest-neighbour lists.
 */
#include "semantic.h"
#include "la_cpus.h"
#include "la_alloc.h"
#include "la_time.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "embed_lexical.h"
#include "simtile.h"
#include "simtile_core.h"

#ifdef LA_HAVE_OPENMP
#include <omp.h>
#endif

#ifdef LA_HAVE_FAISS
#include <faiss/c_api/AutoTune_c.h>
#include <faiss/c_api/IndexFlat_c.h>
#include <faiss/c_api/Index_c.h>
#include <faiss/c_api/error_c.h>
#include <faiss/c_api/impl/AuxIndexStructures_c.h>
#include <faiss/c_api/index_factory_c.h>
#endif

void la_semantic_params_default(la_semantic_params *p) {
    p->threshold = LA_SEMANTIC_THRESHOLD_MODEL;
    p->topk = 1;
    p->method = LA_SEMANTIC_AUTO;
    p->threads = 0;
    p->ivf_nlist = 0;
    p->ivf_nprobe = 0;
    p->approx_above = LA_SEMANTIC_APPROX_ABOVE;
    p->approx_max_bytes = 0;
    p->margin = 0;
    p->margin_k = LA_SEMANTIC_MARGIN_K;
    p->exec = NULL;
}

void la_semantic_nearest_free(la_semantic_nearest *nn) {
    if (!nn) return;
    free(nn->row);
    free(nn->seen);
    free(nn->cosine);
    memset(nn, 0, sizeof *nn);
}

int la_semantic_have_faiss(void) {
#ifdef LA_HAVE_FAISS
    return 1;
#else
    return 0;
#endif
}

static const char *const method_names[] = {"auto", "tiles", "faiss", "faiss-ivf"};

const char *la_semantic_method_name(int method) {
    if (method < 0 || method > LA_SEMANTIC_FAISS_IVF) return "?";
    return method_names[method];
}

la_status la_semantic_method_parse(const char *name, int *method) {
    for (int i = 0; i <= LA_SEMANTIC_FAISS_IVF; i++)
        if (name && strcmp(name, method_names[i]) == 0) {
            *method = i;
            return LA_OK;
        }
    return la_error(LA_EINVAL, "semantic method '%s': expected auto, tiles, faiss or faiss-ivf",
                    name ? name : "");
}

la_status la_vec_check_normalize(float *v, size_t dim, const char *where) {
    double ss = 0.0;
    for (size_t i = 0; i < dim; i++) {
        if (!isfinite(v[i]))
            return la_error(LA_EINPUT, "%s: component %zu is %s", where, i,
                            isnan(v[i]) ? "NaN" : "infinite");
        ss += (double)v[i] * v[i];
    }
    if (!(ss > 0.0))
        return la_error(LA_EINPUT, "%s: vector is all zeros and has no direction", where);
    double inv = 1.0 / sqrt(ss);
    for (size_t i = 0; i < dim; i++) v[i] = (float)(v[i] * inv);
    return LA_OK;
}

la_status la_semantic_embed_lexical(const la_table *t, uint32_t dim, int threads, float **out) {
    return la_semantic_embed_lexical_some(t, dim, threads, NULL, out);
}

la_status la_semantic_embed_lexical_some(const la_table *t, uint32_t dim, int threads,
                                         const uint8_t *skip, float **out) {
    *out = NULL;
    la_embed_lexical_params ep;
    la_embed_lexical_params_default(&ep);
    if (dim) ep.dim = dim;
    ep.threads = threads;
    ep.skip = skip;
    size_t n = la_table_nrows(t);
    const la_row *rows = la_table_rows_const(t);
    const char **texts = la_malloc_n(n, sizeof *texts);
    size_t *lens = la_malloc_n(n, sizeof *lens);
    float *m = la_malloc_nm(n, (size_t)ep.dim, sizeof *m);
    la_status st = LA_OK;
    if (!texts || !lens || !m) {
        st = la_error(LA_ENOMEM, "lexical embedding: out of memory for %zu x %u floats", n, ep.dim);
    } else {
        for (size_t i = 0; i < n; i++) {
            if (rows[i].norm) {
                texts[i] = rows[i].norm;
                lens[i] = rows[i].norm_len;
            } else {
                texts[i] = rows[i].text;
                lens[i] = rows[i].text ? strlen(rows[i].text) : 0;
            }
        }
        st = la_cpu_embed_lexical(texts, lens, n, &ep, m);
    }
    free(texts);
    free(lens);
    if (st != LA_OK) {
        free(m);
        return st;
    }
    *out = m;
    return LA_OK;
}


/* Held-out and seen sides gathered into contiguous matrices. */
typedef struct sides {
    float *Q, *S;
    uint32_t *qrow, *srow; /* table index of each Q / S row */
    size_t nq, ns, d;
    int borrowed; /* Q and S point into the caller's matrix (la_semantic_find_inplace) */
} sides;

static void sides_free(sides *s) {
    if (!s->borrowed) {
        free(s->Q);
        free(s->S);
    }
    free(s->qrow);
    free(s->srow);
}

static la_status sides_gather(const la_table *t, uint32_t heldout, const float *emb, size_t d,
                              sides *sd) {
    memset(sd, 0, sizeof *sd);
    sd->d = d;
    size_t n = la_table_nrows(t);
    const la_row *rows = la_table_rows_const(t);
    for (size_t i = 0; i < n; i++) {
        if (rows[i].part == heldout)
            sd->nq++;
        else
            sd->ns++;
    }
    sd->Q = la_malloc_nm(sd->nq, d, sizeof(float));
    sd->S = la_malloc_nm(sd->ns, d, sizeof(float));
    sd->qrow = la_malloc_n(sd->nq, sizeof(uint32_t));
    sd->srow = la_malloc_n(sd->ns, sizeof(uint32_t));
    if (!sd->Q || !sd->S || !sd->qrow || !sd->srow) {
        sides_free(sd);
        return la_error(LA_ENOMEM, "semantic: out of memory gathering %zu x %zu vectors", n, d);
    }
    size_t iq = 0, is = 0;
    for (size_t i = 0; i < n; i++) {
        if (rows[i].part == heldout) {
            memcpy(sd->Q + iq * d, emb + i * d, d * sizeof(float));
            sd->qrow[iq++] = (uint32_t)i;
        } else {
            memcpy(sd->S + is * d, emb + i * d, d * sizeof(float));
            sd->srow[is++] = (uint32_t)i;
        }
    }
    return LA_OK;
}

/* The sides without a copy: emb's rows moved in place to the held-out rows, then the seen ones,
 * each side in table order (a permutation along its cycles, one row of scratch). */
static la_status sides_inplace(const la_table *t, uint32_t heldout, float *emb, size_t d, sides *sd) {
    memset(sd, 0, sizeof *sd);
    sd->d = d;
    size_t n = la_table_nrows(t);
    const la_row *rows = la_table_rows_const(t);
    for (size_t i = 0; i < n; i++) sd->nq += rows[i].part == heldout;
    sd->ns = n - sd->nq;
    sd->qrow = la_malloc_n(sd->nq, sizeof(uint32_t));
    sd->srow = la_malloc_n(sd->ns, sizeof(uint32_t));
    uint32_t *dest = la_malloc_n(n, sizeof *dest);
    float *tmp = la_malloc_n(d, sizeof *tmp), *tmp2 = la_malloc_n(d, sizeof *tmp2);
    if (!sd->qrow || !sd->srow || !dest || !tmp || !tmp2) {
        free(dest);
        free(tmp);
        free(tmp2);
        sides_free(sd);
        return la_error(LA_ENOMEM, "semantic: out of memory ordering %zu vectors", n);
    }
    size_t iq = 0, is = 0;
    for (size_t i = 0; i < n; i++) {
        if (rows[i].part == heldout) {
            sd->qrow[iq] = (uint32_t)i;
            dest[i] = (uint32_t)iq++;
        } else {
            sd->srow[is] = (uint32_t)i;
            dest[i] = (uint32_t)(sd->nq + is++);
        }
    }
    /* follow each cycle of i -> dest[i]; a placed row is marked with dest == its own index */
    for (size_t i = 0; i < n; i++) {
        if (dest[i] == i) continue;
        memcpy(tmp, emb + i * d, d * sizeof *tmp);
        size_t at = i;
        while (dest[at] != i) {
            size_t to = dest[at];
            memcpy(tmp2, emb + to * d, d * sizeof *tmp2);
            memcpy(emb + to * d, tmp, d * sizeof *tmp);
            memcpy(tmp, tmp2, d * sizeof *tmp);
            dest[at] = (uint32_t)at;
            at = to;
        }
        memcpy(emb + i * d, tmp, d * sizeof *tmp);
        dest[at] = (uint32_t)at;
    }
    free(dest);
    free(tmp);
    free(tmp2);
    sd->Q = emb;
    sd->S = emb + sd->nq * d;
    sd->borrowed = 1;
    return LA_OK;
}

/* The links the ratio margin adds: for each held-out row, the seen index it links below the
 * threshold (LA_SIMTILE_NONE when none) and the margin. */
typedef struct margins {
    uint32_t *s; /* nq */
    float *v;    /* nq */
    size_t candidates, links;
    double seconds;
} margins;

static void margins_free(margins *m) {
    free(m->s);
    free(m->v);
    memset(m, 0, sizeof *m);
}

/* The length of the lists the search keeps: the report's k, or the margin's K when longer. */
static uint32_t search_k(const la_semantic_params *p) {
    return p->margin > 0 && p->margin_k > p->topk ? p->margin_k : p->topk;
}

static la_status check_margin(const la_semantic_params *p) {
    if (!(p->margin == 0 || (p->margin >= 1.0 && p->margin <= 2.0)))
        return la_error(LA_EINVAL, "semantic margin %g: expected 0 (off) or a ratio from 1 to 2", p->margin);
    if (p->margin > 0 && (p->margin_k < 1 || p->margin_k > 1024))
        return la_error(LA_EINVAL, "semantic margin: K %u: expected 1..1024", p->margin_k);
    return LA_OK;
}

/* Put the hits and top-k lists (indices into Q and S; stride entries a row, the first k
 * reported) into the caller's shapes; mg (may be NULL) gives the margin links their margin. */
static la_status emit(const sides *sd, const la_simtile_hits *hits, uint32_t k, uint32_t stride,
                      const uint32_t *top_idx, const float *top_cos, const margins *mg, la_pairs *out,
                      la_semantic_nearest *nearest) {
    for (size_t i = 0; i < hits->n; i++) {
        const la_simtile_hit *h = &hits->v[i];
        la_pair pr = la_pair_make(sd->srow[h->s], sd->qrow[h->q], LA_KIND_SEMANTIC);
        pr.cosine = h->cosine;
        /* a margin link is below the threshold, so no threshold hit has the same rows */
        if (mg && mg->s && mg->s[h->q] == h->s) pr.margin = mg->v[h->q];
        LA_TRY(la_pairs_push(out, &pr));
    }
    if (!nearest) return LA_OK;
    memset(nearest, 0, sizeof *nearest);
    size_t nq = sd->nq;
    nearest->row = la_malloc_n(nq, sizeof(uint32_t));
    nearest->seen = la_malloc_nm(nq, k, sizeof(uint32_t));
    nearest->cosine = la_malloc_nm(nq, k, sizeof(float));
    if (!nearest->row || !nearest->seen || !nearest->cosine) {
        la_semantic_nearest_free(nearest);
        return la_error(LA_ENOMEM, "semantic: out of memory");
    }
    nearest->n = nq;
    nearest->k = k;
    for (size_t q = 0; q < nq; q++) {
        nearest->row[q] = sd->qrow[q];
        for (uint32_t j = 0; j < k; j++) {
            uint32_t s = top_idx[q * stride + j];
            nearest->seen[q * k + j] = s == LA_SIMTILE_NONE ? LA_SEMANTIC_NONE : sd->srow[s];
            nearest->cosine[q * k + j] = s == LA_SIMTILE_NONE ? NAN : top_cos[q * stride + j];
        }
    }
    return LA_OK;
}

/* The tiles through the exec (the CPU reference when there is none): a device failure falls back
 * as the exec says, and the stage records what ran. */
static la_status run_tiles(const sides *sd, const la_semantic_params *p, la_simtile_hits *hits,
                           uint32_t *top_idx, float *top_cos, size_t *rescored, int *on_gpu,
                           char *fallback, size_t fallback_size) {
    la_simtile_params tp;
    la_simtile_params_default(&tp);
    tp.threshold = (float)p->threshold;
    tp.topk = p->topk;
    tp.threads = p->threads;
    la_simtile_top_init(top_idx, top_cos, sd->nq, p->topk);
    la_exec local, *x = p->exec;
    if (!x) {
        la_exec_init(&local, &la_backend_cpu, NULL, p->threads);
        x = &local;
    }
    LA_TRY(la_exec_simtile(x, "semantic_tiles", sd->Q, sd->nq, sd->S, sd->ns, sd->d, 0, &tp, hits, top_idx,
                           top_cos, rescored));
    const la_stage *st = la_exec_stage(x, "semantic_tiles");
    *on_gpu = st && st->device;
    if (st) snprintf(fallback, fallback_size, "%s", st->fallback);
    return LA_OK;
}

/* ---- the tiles with the seen side in batches ---- */

struct la_semantic_stream {
    la_semantic_params p;
    la_simtile_params tp;
    sides sd;           /* Q and qrow borrowed/copied at begin; srow grows with every row added */
    size_t cap_srow;
    float *buf;         /* rows waiting for a whole batch of tiles, grown as rows come */
    size_t nbuf, cap;   /* rows in buf, and the batch (a multiple of LA_SIMTILE_BLOCK_S) */
    size_t cap_buf;     /* rows buf has room for, at most cap */
    la_simtile_hits hits;
    uint32_t *top_idx;  /* nq lists of k entries (the margin's K when longer than p.topk) */
    float *top_cos;
    uint32_t k;
    float *kept;        /* with the margin: nq x d, a copy of each held-out row's best seen row */
    size_t rescored;
    double seconds;
    int on_gpu;
    char fallback[sizeof ((la_semantic_stats *)0)->fallback];
};

static int stream_hit_cmp(const void *x, const void *y) {
    const la_simtile_hit *a = x, *b = y;
    if (a->q != b->q) return a->q < b->q ? -1 : 1;
    return a->s < b->s ? -1 : a->s > b->s;
}

/* Mean of a best-first list's first n entries that are set (NaN when none is). Summed in order
 * in double, so every path that keeps the same list gives the same mean. */
/* The mean of the first K cosines of a best-first list of n entries (it ends early at
 * LA_SIMTILE_NONE), leaving out index `except` (LA_SIMTILE_NONE: none); NaN when there are none. */
static double list_mean(const uint32_t *idx, const float *cos, uint32_t n, uint32_t K, uint32_t except) {
    double sum = 0;
    uint32_t m = 0;
    for (uint32_t j = 0; j < n && idx[j] != LA_SIMTILE_NONE && m < K; j++) {
        if (idx[j] == except) continue;
        sum += cos[j];
        m++;
    }
    return m ? sum / m : NAN;
}

/* Whether a best cosine is in the margin's band: below the threshold, at least
 * LA_SEMANTIC_MARGIN_BELOW under it. */
static int in_margin_band(float cv, double threshold) {
    return cv < (float)threshold && (double)cv >= threshold - LA_SEMANTIC_MARGIN_BELOW;
}

typedef struct cand { uint32_t s, q; } cand;

static int cand_cmp(const void *x, const void *y) {
    const cand *a = x, *b = y;
    if (a->s != b->s) return a->s < b->s ? -1 : 1;
    return a->q < b->q ? -1 : a->q > b->q;
}

/*
 * The ratio margin over the search's lists (top_idx / top_cos: nq rows of stride k >= the
 * margin's K, over seen indices). A candidate is a held-out row's best seen row when its cosine is
 * below the threshold and at least the threshold minus LA_SEMANTIC_MARGIN_BELOW; the candidates'
 * own K best cosines over the held-out rows come from one more pass of the tiles, the candidates
 * against Q (stage "semantic_margin"). Candidate s's vector is S + s * d, or kept + q * d (the copy
 * of held-out row q's best seen row that the stream keeps) when S is NULL. Links are appended to
 * hits, which is then sorted by (q, s) again, and recorded in m (margins_free).
 */
static la_status margin_links(const la_semantic_params *p, const float *Q, size_t nq, size_t d,
                              const uint32_t *top_idx, const float *top_cos, uint32_t k, const float *S,
                              const float *kept, la_simtile_hits *hits, margins *m) {
    memset(m, 0, sizeof *m);
    if (!(p->margin > 0) || nq == 0) return LA_OK;
    double t0 = la_now();
    uint32_t K = p->margin_k < k ? p->margin_k : k;
    m->s = la_malloc_n(nq, sizeof *m->s);
    m->v = la_malloc_n(nq, sizeof *m->v);
    cand *c = la_malloc_n(nq, sizeof *c);
    if (!m->s || !m->v || !c) {
        free(c);
        margins_free(m);
        return la_error(LA_ENOMEM, "semantic: out of memory for the margin of %zu held-out rows", nq);
    }
    size_t nc = 0;
    for (size_t q = 0; q < nq; q++) {
        m->s[q] = LA_SIMTILE_NONE;
        m->v[q] = NAN;
        uint32_t s = top_idx[q * k];
        if (s != LA_SIMTILE_NONE && in_margin_band(top_cos[q * k], p->threshold)) c[nc++] = (cand){s, (uint32_t)q};
    }
    m->candidates = nc;
    if (!nc) {
        free(c);
        m->seconds = la_now() - t0;
        return LA_OK;
    }
    qsort(c, nc, sizeof *c, cand_cmp);
    size_t nd = 0;
    for (size_t i = 0; i < nc; i++) nd += !i || c[i].s != c[i - 1].s;
    float *C = la_malloc_nm(nd, d, sizeof *C);
    uint32_t *ci = la_malloc_nm(nd, K, sizeof *ci);
    float *cc = la_malloc_nm(nd, K, sizeof *cc);
    la_status st = C && ci && cc ? LA_OK : la_error(LA_ENOMEM, "semantic: out of memory for the margin");
    for (size_t i = 0, j = 0; st == LA_OK && i < nc; i++)
        if (!i || c[i].s != c[i - 1].s)
            memcpy(C + (j++) * d, S ? S + (size_t)c[i].s * d : kept + (size_t)c[i].q * d, d * sizeof *C);
    /* the candidates' K best cosines over the held-out rows (pairs at 1: none kept) */
    la_simtile_hits none = {0};
    if (st == LA_OK) {
        la_simtile_params tp;
        la_simtile_params_default(&tp);
        tp.threshold = 1.0f;
        tp.topk = K;
        tp.threads = p->threads;
        la_simtile_top_init(ci, cc, nd, K);
        la_exec local, *x = p->exec;
        if (!x) {
            la_exec_init(&local, &la_backend_cpu, NULL, p->threads);
            x = &local;
        }
        size_t rescored = 0;
        st = la_exec_simtile(x, "semantic_margin", C, nd, Q, nq, d, 0, &tp, &none, ci, cc, &rescored);
    }
    la_simtile_hits_free(&none);
    size_t before = hits->n;
    for (size_t i = 0, j = 0; st == LA_OK && i < nc; i++) {
        if (i && c[i].s != c[i - 1].s) j++;
        const uint32_t q = c[i].q;
        double mean = (list_mean(top_idx + (size_t)q * k, top_cos + (size_t)q * k, K, K, LA_SIMTILE_NONE) +
                       list_mean(ci + j * K, cc + j * K, K, K, LA_SIMTILE_NONE)) / 2;
        double cv = top_cos[(size_t)q * k];
        if (!(mean > 0) || cv / mean < p->margin) continue;
        m->s[q] = c[i].s;
        m->v[q] = (float)(cv / mean);
        m->links++;
        if (la_simtile_hits_push(hits, q, c[i].s, (float)cv)) st = la_error(LA_ENOMEM, "semantic: out of memory");
    }
    if (st == LA_OK && hits->n > before) qsort(hits->v, hits->n, sizeof *hits->v, stream_hit_cmp);
    free(c);
    free(C);
    free(ci);
    free(cc);
    if (st != LA_OK) {
        hits->n = before;
        margins_free(m);
    }
    m->seconds = la_now() - t0;
    return st;
}

la_status la_semantic_margin_self(const uint32_t *top_idx, const float *top_cos, size_t n, uint32_t k, double threshold,
                                  double margin, uint32_t margin_k, la_pairs *out) {
    if (!(margin > 0) || n == 0) return LA_OK;
    uint32_t *best = la_malloc_n(n, sizeof *best);
    double *mean = la_malloc_n(n, sizeof *mean);
    if (!best || !mean) {
        free(best);
        free(mean);
        return la_error(LA_ENOMEM, "semantic: out of memory for the margin of %zu rows", n);
    }
    for (size_t i = 0; i < n; i++) {
        const uint32_t *idx = top_idx + i * k;
        best[i] = LA_SIMTILE_NONE; /* the list position of row i's nearest other row */
        for (uint32_t j = 0; j < k && idx[j] != LA_SIMTILE_NONE && best[i] == LA_SIMTILE_NONE; j++)
            if (idx[j] != i) best[i] = j;
        mean[i] = list_mean(idx, top_cos + i * k, k, margin_k, (uint32_t)i);
    }
    la_status s = LA_OK;
    for (size_t i = 0; s == LA_OK && i < n; i++) {
        if (best[i] == LA_SIMTILE_NONE) continue;
        uint32_t b = top_idx[i * k + best[i]];
        float cv = top_cos[i * k + best[i]];
        if (!in_margin_band(cv, threshold)) continue;
        /* the pair seen from b's side first has the same cosine and means */
        if (b < i && best[b] != LA_SIMTILE_NONE && top_idx[(size_t)b * k + best[b]] == i) continue;
        double mm = (mean[i] + mean[b]) / 2;
        if (!(mm > 0) || cv / mm < margin) continue;
        la_pair q = la_pair_make(b < i ? b : (uint32_t)i, b < i ? (uint32_t)i : b, LA_KIND_SEMANTIC);
        q.cosine = cv;
        q.margin = (float)(cv / mm);
        s = la_pairs_push(out, &q);
    }
    free(best);
    free(mean);
    return s;
}

void la_semantic_stream_free(la_semantic_stream *s) {
    if (!s) return;
    free(s->sd.qrow);
    free(s->sd.srow);
    free(s->buf);
    free(s->top_idx);
    free(s->top_cos);
    free(s->kept);
    la_simtile_hits_free(&s->hits);
    free(s);
}

la_status la_semantic_stream_begin(const float *Q, const uint32_t *qid, size_t nq, size_t dim, size_t batch_rows,
                                   const la_semantic_params *p, la_semantic_stream **out) {
    *out = NULL;
    if (!p || (nq && (!Q || !qid)) || dim == 0 || dim > INT32_MAX)
        return la_error(LA_EINVAL, "semantic: bad arguments");
    if (!(p->threshold > 0.0 && p->threshold <= 1.0))
        return la_error(LA_EINVAL, "semantic threshold %g: expected a cosine in (0, 1]", p->threshold);
    if (p->topk < 1 || p->topk > 1024)
        return la_error(LA_EINVAL, "semantic: topk %u: expected 1..1024", p->topk);
    LA_TRY(check_margin(p));
    la_semantic_stream *s = calloc(1, sizeof *s);
    if (!s) return la_error(LA_ENOMEM, "semantic: out of memory");
    s->p = *p;
    s->k = search_k(p);
    la_simtile_params_default(&s->tp);
    s->tp.threshold = (float)p->threshold;
    s->tp.topk = s->k;
    s->tp.threads = p->threads;
    s->sd.Q = (float *)Q;
    s->sd.nq = nq;
    s->sd.d = dim;
    s->sd.borrowed = 1;
    s->cap = (batch_rows + LA_SIMTILE_BLOCK_S - 1) / LA_SIMTILE_BLOCK_S * LA_SIMTILE_BLOCK_S;
    if (s->cap < LA_SIMTILE_BLOCK_S) s->cap = LA_SIMTILE_BLOCK_S;
    s->sd.qrow = la_malloc_n(nq + 1, sizeof *s->sd.qrow);
    s->top_idx = la_malloc_nm(nq + 1, s->k, sizeof *s->top_idx);
    s->top_cos = la_malloc_nm(nq + 1, s->k, sizeof *s->top_cos);
    if (p->margin > 0) s->kept = la_malloc_nm(nq + 1, dim, sizeof *s->kept);
    if (!s->sd.qrow || !s->top_idx || !s->top_cos || (p->margin > 0 && !s->kept)) {
        la_semantic_stream_free(s);
        return la_error(LA_ENOMEM, "semantic: out of memory for %zu held-out rows", nq);
    }
    if (nq) memcpy(s->sd.qrow, qid, nq * sizeof *qid);
    la_simtile_top_init(s->top_idx, s->top_cos, nq, s->k);
    *out = s;
    return LA_OK;
}

/* The waiting rows through the tiles, as seen rows sd.ns - nbuf .. sd.ns - 1. */
static la_status stream_flush(la_semantic_stream *s) {
    if (!s->nbuf) return LA_OK;
    la_status st = LA_OK;
    if (s->sd.nq) {
        la_exec local, *x = s->p.exec;
        if (!x) {
            la_exec_init(&local, &la_backend_cpu, NULL, s->p.threads);
            x = &local;
        }
        double t0 = la_now();
        size_t rescored = 0;
        st = la_exec_simtile(x, "semantic_tiles", s->sd.Q, s->sd.nq, s->buf, s->nbuf, s->sd.d,
                             (uint32_t)(s->sd.ns - s->nbuf), &s->tp, &s->hits, s->top_idx, s->top_cos, &rescored);
        /* the margin scores each held-out row's best seen row after the last batch: keep a copy
         * of those that come from this one */
        const uint32_t first = (uint32_t)(s->sd.ns - s->nbuf);
        for (size_t q = 0; st == LA_OK && s->kept && q < s->sd.nq; q++) {
            uint32_t b = s->top_idx[q * s->k];
            if (b != LA_SIMTILE_NONE && b >= first)
                memcpy(s->kept + q * s->sd.d, s->buf + (size_t)(b - first) * s->sd.d, s->sd.d * sizeof *s->kept);
        }
        s->seconds += la_now() - t0;
        s->rescored += rescored;
        const la_stage *stg = la_exec_stage(x, "semantic_tiles");
        if (stg) {
            s->on_gpu = stg->device;
            snprintf(s->fallback, sizeof s->fallback, "%s", stg->fallback);
        }
    }
    s->nbuf = 0;
    return st;
}

la_status la_semantic_stream_add(la_semantic_stream *s, const float *S, const uint32_t *sid, size_t ns) {
    if (ns && (!S || !sid)) return la_error(LA_EINVAL, "semantic: bad arguments");
    if ((uint64_t)s->sd.ns + ns > UINT32_MAX) return la_error(LA_EINVAL, "semantic: more than 2^32 seen rows");
    if (s->sd.ns + ns > s->cap_srow) {
        size_t cap = s->cap_srow ? s->cap_srow : 1024;
        while (cap < s->sd.ns + ns) cap *= 2;
        uint32_t *v = la_realloc_n(s->sd.srow, cap, sizeof *v);
        if (!v) return la_error(LA_ENOMEM, "semantic: out of memory");
        s->sd.srow = v;
        s->cap_srow = cap;
    }
    if (s->nbuf + ns > s->cap_buf && s->cap_buf < s->cap) {
        /* the buffer grows to the batch as rows come: a small seen side never takes a whole one */
        size_t want = s->cap_buf ? s->cap_buf : LA_SIMTILE_BLOCK_S;
        while (want < s->nbuf + ns && want < s->cap) want *= 2;
        if (want > s->cap) want = s->cap;
        float *b = la_realloc_n(s->buf, want * s->sd.d, sizeof *b);
        if (!b) return la_error(LA_ENOMEM, "semantic: out of memory for a batch of %zu x %zu vectors", want, s->sd.d);
        s->buf = b;
        s->cap_buf = want;
    }
    for (size_t i = 0; i < ns; i++) {
        if (s->sd.ns && sid[i] <= s->sd.srow[s->sd.ns - 1])
            return la_error(LA_EINVAL, "semantic: seen rows must be added in ascending order");
        memcpy(s->buf + s->nbuf * s->sd.d, S + i * s->sd.d, s->sd.d * sizeof *S);
        s->sd.srow[s->sd.ns++] = sid[i];
        if (++s->nbuf == s->cap) LA_TRY(stream_flush(s));
    }
    return LA_OK;
}

la_status la_semantic_stream_end(la_semantic_stream *s, la_pairs *out, la_semantic_nearest *nearest,
                                 la_semantic_stats *stats) {
    if (nearest) memset(nearest, 0, sizeof *nearest);
    LA_TRY(stream_flush(s));
    /* each batch's hits are in (q, s) order: all of them in that order, as one call gives them */
    if (s->hits.n > 1) qsort(s->hits.v, s->hits.n, sizeof *s->hits.v, stream_hit_cmp);
    size_t before = out->n;
    margins mg;
    la_status st = margin_links(&s->p, s->sd.Q, s->sd.nq, s->sd.d, s->top_idx, s->top_cos, s->k, NULL, s->kept,
                                &s->hits, &mg);
    s->seconds += mg.seconds;
    if (st == LA_OK) st = emit(&s->sd, &s->hits, s->p.topk, s->k, s->top_idx, s->top_cos, &mg, out, nearest);
    if (st != LA_OK) {
        margins_free(&mg);
        out->n = before;
        return st;
    }
    if (stats) {
        stats->method = "tiles";
        stats->n_heldout = s->sd.nq;
        stats->n_seen = s->sd.ns;
        stats->dim = s->sd.d;
        stats->n_pairs = out->n - before;
        stats->rescored = s->rescored;
        stats->seconds = s->seconds;
        stats->gflops = s->seconds > 0 ? 2.0 * (double)s->sd.nq * (double)s->sd.ns * (double)s->sd.d / s->seconds / 1e9 : 0;
        stats->backend = s->on_gpu ? "gpu" : "cpu";
        memcpy(stats->fallback, s->fallback, sizeof stats->fallback);
        stats->margin_candidates = mg.candidates;
        stats->margin_links = mg.links;
        stats->margin_seconds = mg.seconds;
    }
    margins_free(&mg);
    return LA_OK;
}

#ifdef LA_HAVE_FAISS
#define FAISS_CALL(call)                                                                     \
    do {                                                                                     \
        if ((call) != 0) {                                                                   \
            st = la_error(LA_EINTERNAL, "semantic: FAISS: %s", faiss_get_last_error());     \
            goto done;                                                                       \
        }                                                                                    \
    } while (0)

static int hit_cmp(const void *x, const void *y) {
    const la_simtile_hit *a = x, *b = y;
    if (a->q != b->q) return a->q < b->q ? -1 : 1;
    return a->s < b->s ? -1 : a->s > b->s;
}

static la_status run_faiss(const sides *sd, const la_semantic_params *p, int ivf,
                           la_simtile_hits *hits, uint32_t *top_idx, float *top_cos) {
    la_status st = LA_OK;
    FaissIndex *index = NULL;
    FaissParameterSpace *ps = NULL;
    FaissRangeSearchResult *rs = NULL;
    idx_t *labels = NULL;
    float *dist = NULL;
    const size_t d = sd->d, k = p->topk;
    const float thr = (float)p->threshold;
#ifdef LA_HAVE_OPENMP
    int saved_threads = omp_get_max_threads();
    omp_set_num_threads(la_omp_threads(p->threads));
#endif
    if (ivf) {
        uint32_t nlist = p->ivf_nlist;
        /* about 4 sqrt(n) cells, but at least 39 training points per cell (FAISS's k-means
         * wants that many) */
        if (!nlist) nlist = (uint32_t)(4.0 * sqrt((double)sd->ns));
        if (!p->ivf_nlist && nlist > sd->ns / 39) nlist = (uint32_t)(sd->ns / 39);
        if (nlist < 1) nlist = 1;
        if (nlist > sd->ns) nlist = (uint32_t)sd->ns;
        char desc[64];
        snprintf(desc, sizeof desc, "IVF%u,Flat", nlist);
        FAISS_CALL(faiss_index_factory(&index, (int)d, desc, METRIC_INNER_PRODUCT));
        FAISS_CALL(faiss_Index_train(index, (idx_t)sd->ns, sd->S));
        uint32_t nprobe = p->ivf_nprobe ? p->ivf_nprobe : 16;
        if (nprobe > nlist) nprobe = nlist;
        FAISS_CALL(faiss_ParameterSpace_new(&ps));
        FAISS_CALL(faiss_ParameterSpace_set_index_parameter(ps, index, "nprobe", (double)nprobe));
    } else {
        FaissIndexFlatIP *flat = NULL;
        FAISS_CALL(faiss_IndexFlatIP_new_with(&flat, (idx_t)d));
        index = flat;
    }
    FAISS_CALL(faiss_Index_add(index, (idx_t)sd->ns, sd->S));

    /* Range search: FAISS keeps inner products > radius; candidates are re-scored in the fixed
     * order and kept at >= threshold, exactly as the tiles do. */
    FAISS_CALL(faiss_RangeSearchResult_new(&rs, (idx_t)sd->nq));
    FAISS_CALL(faiss_Index_range_search(index, (idx_t)sd->nq, sd->Q, thr - LA_SIMTILE_MARGIN, rs));
    size_t *lims;
    idx_t *rl;
    float *rd;
    faiss_RangeSearchResult_lims(rs, &lims);
    faiss_RangeSearchResult_labels(rs, &rl, &rd);
    for (size_t q = 0; q < sd->nq; q++)
        for (size_t j = lims[q]; j < lims[q + 1]; j++) {
            size_t s = (size_t)rl[j];
            float e = la_simtile_dot(sd->Q + q * d, sd->S + s * d, d);
            if (e < thr) continue;
            if (hits->n == hits->cap) {
                size_t cap = hits->cap ? hits->cap * 2 : 256;
                la_simtile_hit *v = realloc(hits->v, cap * sizeof *v);
                if (!v) {
                    st = la_error(LA_ENOMEM, "semantic: out of memory");
                    goto done;
                }
                hits->v = v;
                hits->cap = cap;
            }
            hits->v[hits->n++] = (la_simtile_hit){(uint32_t)q, (uint32_t)s, e};
        }
    qsort(hits->v, hits->n, sizeof *hits->v, hit_cmp);

    /* k nearest seen rows, re-scored and ordered like the tiles order them. A few extra
     * neighbours are fetched so that a near-tie at the k-th place, which FAISS's own rounding may
     * order differently, is still settled by the fixed-order score. */
    size_t k2 = k + 16 < sd->ns ? k + 16 : sd->ns;
    labels = malloc(sd->nq * k2 * sizeof *labels);
    dist = malloc(sd->nq * k2 * sizeof *dist);
    if (!labels || !dist) {
        st = la_error(LA_ENOMEM, "semantic: out of memory");
        goto done;
    }
    FAISS_CALL(faiss_Index_search(index, (idx_t)sd->nq, sd->Q, (idx_t)k2, dist, labels));
    la_simtile_top_init(top_idx, top_cos, sd->nq, (uint32_t)k);
    for (size_t q = 0; q < sd->nq; q++)
        for (size_t j = 0; j < k2; j++) {
            idx_t s = labels[q * k2 + j];
            if (s < 0) continue;
            float e = la_simtile_dot(sd->Q + q * d, sd->S + (size_t)s * d, d);
            la_simtile_topk_insert(top_idx + q * k, top_cos + q * k, (uint32_t)k, (uint32_t)s, e);
        }
done:
#ifdef LA_HAVE_OPENMP
    omp_set_num_threads(saved_threads);
#endif
    free(labels);
    free(dist);
    if (rs) faiss_RangeSearchResult_free(rs);
    if (ps) faiss_ParameterSpace_free(ps);
    if (index) faiss_Index_free(index);
    return st;
}
#endif /* LA_HAVE_FAISS */

int la_semantic_method_for(const la_semantic_params *p, size_t nq, size_t ns, size_t dim) {
    if (p->method != LA_SEMANTIC_AUTO) return p->method;
    double work = (double)nq * (double)ns * (double)dim;
    int device = p->exec && p->exec->be->device;
    int fits = p->approx_max_bytes <= 0 || (double)ns * (double)dim * sizeof(float) <= p->approx_max_bytes;
    return !device && p->approx_above > 0 && work > p->approx_above && fits && la_semantic_have_faiss()
               ? LA_SEMANTIC_FAISS_IVF
               : LA_SEMANTIC_TILES;
}

static la_status find(const la_table *t, uint32_t heldout_part, const float *emb, float *own, size_t dim,
                      const la_semantic_params *p, la_pairs *out, la_semantic_nearest *nearest,
                      la_semantic_stats *stats);

la_status la_semantic_find(const la_table *t, uint32_t heldout_part, const float *emb, size_t dim,
                           const la_semantic_params *p, la_pairs *out,
                           la_semantic_nearest *nearest, la_semantic_stats *stats) {
    return find(t, heldout_part, emb, NULL, dim, p, out, nearest, stats);
}

la_status la_semantic_find_inplace(const la_table *t, uint32_t heldout_part, float *emb, size_t dim,
                                   const la_semantic_params *p, la_pairs *out,
                                   la_semantic_nearest *nearest, la_semantic_stats *stats) {
    return find(t, heldout_part, emb, emb, dim, p, out, nearest, stats);
}

static la_status find(const la_table *t, uint32_t heldout_part, const float *emb, float *own, size_t dim,
                      const la_semantic_params *p, la_pairs *out, la_semantic_nearest *nearest,
                      la_semantic_stats *stats) {
    if (nearest) memset(nearest, 0, sizeof *nearest);
    if (!t || !p || !out || (la_table_nrows(t) && !emb) || dim == 0 || dim > INT32_MAX)
        return la_error(LA_EINVAL, "semantic: bad arguments");
    if (!(p->threshold > 0.0 && p->threshold <= 1.0))
        return la_error(LA_EINVAL, "semantic threshold %g: expected a cosine in (0, 1]", p->threshold);
    if (p->topk < 1 || p->topk > 1024)
        return la_error(LA_EINVAL, "semantic: topk %u: expected 1..1024", p->topk);
    LA_TRY(check_margin(p));
    if (la_table_nrows(t) > UINT32_MAX)
        return la_error(LA_EINVAL, "semantic: more than 2^32 rows");

    sides sd;
    LA_TRY(own ? sides_inplace(t, heldout_part, own, dim, &sd) : sides_gather(t, heldout_part, emb, dim, &sd));

    int method = la_semantic_method_for(p, sd.nq, sd.ns, dim);
    la_status st = LA_OK;
    la_simtile_hits hits = {0};
    la_semantic_params ps = *p; /* the search keeps the margin's K when it is longer */
    ps.topk = search_k(p);
    uint32_t k = ps.topk;
    uint32_t *top_idx = la_malloc_nm(sd.nq, k, sizeof *top_idx);
    float *top_cos = la_malloc_nm(sd.nq, k, sizeof *top_cos);
    size_t rescored = 0;
    int on_gpu = 0;
    char fallback[sizeof stats->fallback] = "";
    double t0 = la_now();
    if (!top_idx || !top_cos) {
        st = la_error(LA_ENOMEM, "semantic: out of memory");
    } else if (sd.nq == 0 || sd.ns == 0) {
        la_simtile_top_init(top_idx, top_cos, sd.nq, k);
    } else if (method == LA_SEMANTIC_TILES) {
        st = run_tiles(&sd, &ps, &hits, top_idx, top_cos, &rescored, &on_gpu, fallback,
                       sizeof fallback);
    } else if (method == LA_SEMANTIC_FAISS || method == LA_SEMANTIC_FAISS_IVF) {
#ifdef LA_HAVE_FAISS
        st = run_faiss(&sd, &ps, method == LA_SEMANTIC_FAISS_IVF, &hits, top_idx, top_cos);
#else
        st = la_error(LA_EUNSUPPORTED, "semantic method %s: this build has no FAISS "
                      "(install libfaiss-dev and rebuild)", la_semantic_method_name(method));
#endif
    } else {
        st = la_error(LA_EINVAL, "semantic: unknown method %d", p->method);
    }
    margins mg = {0};
    if (st == LA_OK && sd.ns) st = margin_links(p, sd.Q, sd.nq, dim, top_idx, top_cos, k, sd.S, NULL, &hits, &mg);
    double secs = la_now() - t0;
    size_t before = out->n;
    if (st == LA_OK) st = emit(&sd, &hits, p->topk, k, top_idx, top_cos, &mg, out, nearest);
    if (st == LA_OK && stats) {
        stats->method = method == LA_SEMANTIC_TILES ? "tiles"
                        : method == LA_SEMANTIC_FAISS ? "faiss" : "faiss-ivf";
        stats->n_heldout = sd.nq;
        stats->n_seen = sd.ns;
        stats->dim = dim;
        stats->n_pairs = out->n - before;
        stats->rescored = rescored;
        stats->seconds = secs;
        stats->gflops = secs > 0 ? 2.0 * (double)sd.nq * (double)sd.ns * (double)dim / secs / 1e9 : 0;
        stats->backend = on_gpu ? "gpu" : "cpu";
        memcpy(stats->fallback, fallback, sizeof stats->fallback);
        stats->margin_candidates = mg.candidates;
        stats->margin_links = mg.links;
        stats->margin_seconds = mg.seconds;
    }
    margins_free(&mg);
    if (st != LA_OK) out->n = before;
    free(top_idx);
    free(top_cos);
    la_simtile_hits_free(&hits);
    sides_free(&sd);
    return st;
}
