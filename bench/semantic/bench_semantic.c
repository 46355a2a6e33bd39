/*
 * bench_semantic.c - calibration and speed of the semantic tier.
 *
 *   bench_semantic quality DATA_DIR [EMB_DIR]
 *       GSM8K: test questions held out; seen = the rephrases (rephrase_test.jsonl line i rewords
 *       test.jsonl line i) of the even-numbered test questions plus every train.jsonl question.
 *       STS-B: sentence pairs scored >= 4.5 against pairs scored <= 1.
 *       Scores with all-MiniLM-L6-v2 (the .npy files in EMB_DIR, from embed_minilm.py) and with the built-in
 *       lexical embedding: precision, recall and ROC AUC, per pair and per held-out row; then runs
 *       la_semantic_find at the default thresholds with the tile and the FAISS paths and checks
 *       that both give the same pair set.
 *   bench_semantic speed [SEEN HELDOUT DIM]
 *       Random unit vectors (default 100000 x 10000, d=384) with planted pairs: plain cblas_sgemm
 *       of the same shape, then the exact tile path, the exact FAISS path, and FAISS IVF with its
 *       recall against exact search.
 *
 * Reads the shared data by path at run time; writes nothing.
 */
#include <json-c/json.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "embed_lexical.h"
#include "leakaudit.h"
#include "npy.h"
#include "semantic.h"
#include "simtile_i8.h"
#include "simtile_core.h"

#ifdef LA_HAVE_CBLAS
#include <cblas.h>
#endif

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void die(const char *what) {
    fprintf(stderr, "bench_semantic: %s: %s\n", what, la_last_error());
    exit(2);
}

/* ---- inputs ------------------------------------------------------------------------------- */

typedef struct strs {
    char **v;
    size_t n, cap;
} strs;

static void strs_push(strs *s, const char *x) {
    if (s->n == s->cap) {
        s->cap = s->cap ? s->cap * 2 : 1024;
        s->v = realloc(s->v, s->cap * sizeof *s->v);
    }
    s->v[s->n++] = strdup(x);
}

static strs jsonl_field(const char *path, const char *field) {
    strs out = {0};
    FILE *f = fopen(path, "r");
    if (!f) {
        fprintf(stderr, "bench_semantic: cannot open %s\n", path);
        exit(2);
    }
    char *line = NULL;
    size_t cap = 0;
    while (getline(&line, &cap, f) > 0) {
        if (line[0] == '\n') continue;
        json_object *o = json_tokener_parse(line), *v;
        const char *s = "";
        if (o && json_object_object_get_ex(o, field, &v) && json_object_is_type(v, json_type_string))
            s = json_object_get_string(v);
        strs_push(&out, s);
        json_object_put(o);
    }
    free(line);
    fclose(f);
    return out;
}

/* STS-B tsv: genre, file, year, id, score, sentence1, sentence2 (same split as embed_minilm.py) */
static void stsb_read(const char *path, strs *s1, strs *s2, double **score, size_t *n) {
    FILE *f = fopen(path, "r");
    if (!f) {
        fprintf(stderr, "bench_semantic: cannot open %s\n", path);
        exit(2);
    }
    char *line = NULL;
    size_t cap = 0, m = 0, scap = 0;
    ssize_t len;
    *score = NULL;
    while ((len = getline(&line, &cap, f)) > 0) {
        if (line[len - 1] == '\n') line[--len] = '\0';
        char *cols[7];
        int nc = 0;
        char *p = line;
        while (nc < 7) {
            cols[nc++] = p;
            char *tab = strchr(p, '\t');
            if (!tab) break;
            *tab = '\0';
            p = tab + 1;
        }
        if (nc < 7) continue;
        char *tab = strchr(cols[6], '\t');
        if (tab) *tab = '\0';
        strs_push(s1, cols[5]);
        strs_push(s2, cols[6]);
        if (m == scap) {
            scap = scap ? scap * 2 : 1024;
            *score = realloc(*score, scap * sizeof **score);
        }
        (*score)[m++] = atof(cols[4]);
    }
    free(line);
    fclose(f);
    *n = m;
}

/* What the pipeline's normalization does, roughly: casefold (ASCII here) and collapse spaces. */
static char *norm_text(const char *s) {
    size_t n = strlen(s), j = 0;
    char *o = malloc(n + 1);
    int sp = 1;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
            if (!sp) o[j++] = ' ';
            sp = 1;
        } else {
            o[j++] = (char)(c >= 'A' && c <= 'Z' ? c + 32 : c);
            sp = 0;
        }
    }
    if (j && o[j - 1] == ' ') j--;
    o[j] = '\0';
    return o;
}

/* The question of a rephrase stored as "Question: Q\nAnswer: ...": Q (as embed_minilm.py). */
static char *question_part(const char *t) {
    if (strncmp(t, "Question:", 9) == 0) t += 9;
    const char *cut = strstr(t, "\nAnswer:");
    size_t n = cut ? (size_t)(cut - t) : strlen(t);
    while (n && strchr(" \t\n\r", t[n - 1])) n--;
    while (n && strchr(" \t\n\r", *t)) t++, n--;
    char *o = malloc(n + 1);
    memcpy(o, t, n);
    o[n] = '\0';
    return o;
}

static float *lexical(char **texts, size_t n, uint32_t dim) {
    char **nt = malloc(n * sizeof *nt);
    size_t *lens = malloc(n * sizeof *lens);
    for (size_t i = 0; i < n; i++) {
        nt[i] = norm_text(texts[i]);
        lens[i] = strlen(nt[i]);
    }
    la_embed_lexical_params p;
    la_embed_lexical_params_default(&p);
    p.dim = dim;
    float *out = malloc(n * dim * sizeof *out);
    double t0 = now_s();
    if (la_cpu_embed_lexical((const char *const *)nt, lens, n, &p, out) != LA_OK) die("lexical");
    printf("  lexical embedding: %zu texts, D=%u, %.2f s\n", n, dim, now_s() - t0);
    for (size_t i = 0; i < n; i++) free(nt[i]);
    free(nt);
    free(lens);
    return out;
}

static float *npy(const char *dir, const char *name, size_t rows, size_t *dim) {
    char path[4096];
    snprintf(path, sizeof path, "%s/%s.npy", dir, name);
    float *m;
    size_t r, c;
    if (la_npy_read(path, rows, 0, &m, &r, &c) != LA_OK) die("npy");
    for (size_t i = 0; i < r; i++) {
        char where[4200];
        snprintf(where, sizeof where, "%s: row %zu", path, i);
        if (la_vec_check_normalize(m + i * c, c, where) != LA_OK) die("npy");
    }
    *dim = c;
    return m;
}

/* ---- scoring ------------------------------------------------------------------------------ */

#define NBIN 4000 /* bins of 0.0005 over [-1, 1] */
static int bin_of(float c) {
    int b = (int)floor(((double)c + 1.0) * (NBIN / 2));
    return b < 0 ? 0 : b >= NBIN ? NBIN - 1 : b;
}
static int bin_edge(double t) { return (int)lround((t + 1.0) * (NBIN / 2)); }

/* ROC AUC from two histograms: P(pos > neg) + P(pos == neg) / 2, ties at bin resolution. */
static double auc_hist(const double *pos, const double *neg) {
    double np = 0, nn = 0, below = 0, a = 0;
    for (int b = 0; b < NBIN; b++) np += pos[b], nn += neg[b];
    for (int b = 0; b < NBIN; b++) {
        a += pos[b] * (below + 0.5 * neg[b]);
        below += neg[b];
    }
    return np && nn ? a / (np * nn) : NAN;
}

static double above(const double *h, double t) {
    double s = 0;
    for (int b = bin_edge(t); b < NBIN; b++) s += h[b];
    return s;
}

typedef struct curve {
    double pos[NBIN], neg[NBIN];          /* pairs */
    double rpos[NBIN], rneg[NBIN];        /* held-out rows by nearest cosine */
    double npos_rows;
} curve;

/* All nq x ns cosines by blocks; positives: pos_s[q] (seen index or -1). */
static void score_all(const float *Q, size_t nq, const float *S, size_t ns, size_t d,
                      const long *pos_s, curve *cv) {
    memset(cv, 0, sizeof *cv);
    const size_t bs = 4096;
    float *C = malloc(nq * bs * sizeof *C), *best = malloc(nq * sizeof *best);
    for (size_t q = 0; q < nq; q++) best[q] = -2;
    for (size_t s0 = 0; s0 < ns; s0 += bs) {
        size_t m = ns - s0 < bs ? ns - s0 : bs;
#ifdef LA_HAVE_CBLAS
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)nq, (int)m, (int)d, 1.0f, Q,
                    (int)d, S + s0 * d, (int)d, 0.0f, C, (int)m);
#else
        for (size_t q = 0; q < nq; q++)
            for (size_t j = 0; j < m; j++) C[q * m + j] = la_simtile_dot(Q + q * d, S + (s0 + j) * d, d);
#endif
        for (size_t q = 0; q < nq; q++)
            for (size_t j = 0; j < m; j++) {
                float c = C[q * m + j];
                if ((long)(s0 + j) == pos_s[q])
                    cv->pos[bin_of(c)]++;
                else
                    cv->neg[bin_of(c)]++;
                if (c > best[q]) best[q] = c;
            }
    }
    for (size_t q = 0; q < nq; q++) {
        if (pos_s[q] >= 0)
            cv->rpos[bin_of(best[q])]++, cv->npos_rows++;
        else
            cv->rneg[bin_of(best[q])]++;
    }
    free(C);
    free(best);
}

static void pr_at(const curve *cv, double t, double *pp, double *pr, double *rp, double *rr) {
    double tp = above(cv->pos, t), fp = above(cv->neg, t), npos = 0;
    for (int b = 0; b < NBIN; b++) npos += cv->pos[b];
    *pp = tp + fp > 0 ? tp / (tp + fp) : 1.0;
    *pr = npos > 0 ? tp / npos : NAN;
    double rtp = above(cv->rpos, t), rfp = above(cv->rneg, t);
    *rp = rtp + rfp > 0 ? rtp / (rtp + rfp) : 1.0;
    *rr = cv->npos_rows > 0 ? rtp / cv->npos_rows : NAN;
}

/* Print the curve; return the threshold (0.01 grid) with the best pair-level F1. */
static double report_curve(const char *name, const curve *cv, double lo, double hi) {
    printf("  %s: pair ROC AUC %.4f, held-out row ROC AUC %.4f\n", name, auc_hist(cv->pos, cv->neg),
           auc_hist(cv->rpos, cv->rneg));
    printf("    thr   pairP   pairR   pairF1  rowP    rowR\n");
    double best_f1 = -1, best_t = lo, ok_lo = NAN, ok_hi = NAN;
    for (int i = (int)lround(lo * 100); i <= (int)lround(hi * 100); i++) {
        double t = i / 100.0, pp, pr, rp, rr;
        pr_at(cv, t, &pp, &pr, &rp, &rr);
        double f1 = pp + pr > 0 ? 2 * pp * pr / (pp + pr) : 0;
        if (f1 > best_f1) best_f1 = f1, best_t = t;
        if (pp >= 0.95 && pr >= 0.95) {
            if (isnan(ok_lo)) ok_lo = t;
            ok_hi = t;
        }
        if (i % 5 == 0 || (t >= 0.76 && t <= 0.90) || (pp >= 0.95 && pr >= 0.95))
            printf("    %.2f  %.4f  %.4f  %.4f  %.4f  %.4f\n", t, pp, pr, f1, rp, rr);
    }
    printf("    best pair F1 %.4f at %.2f; pair P>=0.95 and R>=0.95 for thresholds ", best_f1, best_t);
    if (isnan(ok_lo))
        printf("(none)\n");
    else
        printf("%.2f..%.2f\n", ok_lo, ok_hi);
    return best_t;
}

/* ---- GSM8K -------------------------------------------------------------------------------- */

typedef struct gsm {
    strs test, train, reph;
    size_t nq, ns;
    size_t *seen_src;  /* for each seen row: rephrase line (< nreph_used) or train line */
    long *pos_s;       /* for each test row: the seen index of its planted rephrase, or -1 */
    size_t nplanted;
} gsm;

static gsm gsm_load(const char *data) {
    gsm g = {0};
    char p[4096];
    snprintf(p, sizeof p, "%s/gsm8k/test.jsonl", data);
    g.test = jsonl_field(p, "question");
    snprintf(p, sizeof p, "%s/gsm8k/train.jsonl", data);
    g.train = jsonl_field(p, "question");
    snprintf(p, sizeof p, "%s/gsm8k/rephrase_test.jsonl", data);
    g.reph = jsonl_field(p, "text");
    g.nq = g.test.n;
    g.pos_s = malloc(g.nq * sizeof *g.pos_s);
    g.seen_src = malloc((g.reph.n + g.train.n) * sizeof *g.seen_src);
    size_t empty = 0;
    for (size_t i = 0; i < g.nq; i++) {
        g.pos_s[i] = -1;
        if (i % 2 != 0 || i >= g.reph.n) continue;           /* the known half: even lines */
        if (g.reph.v[i][0] == '\0') { empty++; continue; }   /* an empty rephrase copies nothing */
        g.pos_s[i] = (long)g.ns;
        g.seen_src[g.ns++] = i;
        g.nplanted++;
    }
    for (size_t i = 0; i < g.train.n; i++) g.seen_src[g.ns++] = g.reph.n + i;
    printf("GSM8K: %zu held-out test questions; seen: %zu planted rephrases (even lines; %zu empty "
           "rephrases skipped) + %zu train questions\n",
           g.nq, g.nplanted, empty, g.train.n);
    return g;
}

/* Seen matrix from the rephrase and train matrices. */
static float *gsm_seen(const gsm *g, const float *reph, const float *train, size_t d) {
    float *S = malloc(g->ns * d * sizeof *S);
    for (size_t i = 0; i < g->ns; i++) {
        size_t src = g->seen_src[i];
        const float *v = src < g->reph.n ? reph + src * d : train + (src - g->reph.n) * d;
        memcpy(S + i * d, v, d * sizeof *S);
    }
    return S;
}

/* The tool itself at threshold thr: tiles and FAISS, same pair set?, precision and recall. */
static void gsm_run_tool(const gsm *g, const float *Q, const float *S, size_t d, double thr) {
    la_table *t;
    la_table_new(&t);
    uint32_t test, dev;
    la_table_part(t, "test", &test);
    la_table_part(t, "dev", &dev);
    size_t n = g->nq + g->ns;
    float *emb = malloc(n * d * sizeof *emb);
    for (size_t i = 0; i < n; i++) {
        char id[32];
        snprintf(id, sizeof id, "%zu", i);
        la_row r = {0};
        la_table_strdup(t, id, strlen(id), &r.id);
        r.part = i < g->nq ? test : dev;
        r.date = LA_NO_DATE;
        la_table_append(t, &r, NULL);
        memcpy(emb + i * d, i < g->nq ? Q + i * d : S + (i - g->nq) * d, d * sizeof *emb);
    }
    la_pairs pt = {0}, pf = {0};
    la_semantic_params p;
    la_semantic_params_default(&p);
    p.threshold = thr;
    la_semantic_stats st = {0};
    p.method = LA_SEMANTIC_TILES;
    if (la_semantic_find(t, test, emb, d, &p, &pt, NULL, &st) != LA_OK) die("semantic");
    double tt = st.seconds;
    size_t tp = 0;
    for (size_t i = 0; i < pt.n; i++)
        if (g->pos_s[pt.v[i].b] == (long)(pt.v[i].a - g->nq)) tp++;
    printf("    leakaudit at %.2f (tiles, %.3f s): %zu pairs, %zu planted found: precision %.4f, "
           "recall %.4f\n",
           thr, tt, pt.n, tp, pt.n ? (double)tp / pt.n : 1.0, (double)tp / g->nplanted);
    if (la_semantic_have_faiss()) {
        p.method = LA_SEMANTIC_FAISS;
        if (la_semantic_find(t, test, emb, d, &p, &pf, NULL, &st) != LA_OK) die("semantic");
        int same = pf.n == pt.n;
        for (size_t i = 0; same && i < pt.n; i++)
            same = pf.v[i].a == pt.v[i].a && pf.v[i].b == pt.v[i].b &&
                   pf.v[i].cosine == pt.v[i].cosine;
        printf("    FAISS IndexFlatIP path (%.3f s): %zu pairs; same pair set and cosines as tiles: "
               "%s\n", st.seconds, pf.n, same ? "yes" : "NO");
        if (!same) exit(1);
    }
    la_pairs_free(&pt);
    la_pairs_free(&pf);
    free(emb);
    la_table_free(t);
}

static void gsm_eval(const gsm *g, const char *name, const float *Q, const float *S, size_t d,
                     double thr_default) {
    curve *cv = malloc(sizeof *cv);
    score_all(Q, g->nq, S, g->ns, d, g->pos_s, cv);
    printf(" GSM8K, %s (d=%zu): %zu planted pairs among %zu cross pairs\n", name, d, g->nplanted,
           g->nq * g->ns);
    report_curve(name, cv, 0.30, 0.99);
    double pp, pr, rp, rr;
    pr_at(cv, thr_default, &pp, &pr, &rp, &rr);
    printf("    at the default %.2f: pair precision %.4f recall %.4f; row precision %.4f recall "
           "%.4f\n", thr_default, pp, pr, rp, rr);
    gsm_run_tool(g, Q, S, d, thr_default);
    free(cv);
}

/* ---- STS-B -------------------------------------------------------------------------------- */

static void stsb_eval(const char *name, const float *A, const float *B, const double *score,
                      size_t n, size_t d, double thr_default) {
    curve *cv = calloc(1, sizeof *cv);
    size_t np = 0, nn = 0;
    for (size_t i = 0; i < n; i++) {
        if (score[i] > 1.0 && score[i] < 4.5) continue;
        float c = la_simtile_dot(A + i * d, B + i * d, d);
        if (score[i] >= 4.5)
            cv->pos[bin_of(c)]++, np++;
        else
            cv->neg[bin_of(c)]++, nn++;
    }
    memcpy(cv->rpos, cv->pos, sizeof cv->pos);
    memcpy(cv->rneg, cv->neg, sizeof cv->neg);
    cv->npos_rows = (double)np;
    printf(" STS-B, %s (d=%zu): %zu pairs scored >= 4.5, %zu pairs scored <= 1\n", name, d, np, nn);
    printf("  %s: ROC AUC %.4f\n", name, auc_hist(cv->pos, cv->neg));
    printf("    thr   P       R\n");
    for (int i = 30; i <= 95; i += 5) {
        double pp, pr, rp, rr;
        pr_at(cv, i / 100.0, &pp, &pr, &rp, &rr);
        printf("    %.2f  %.4f  %.4f\n", i / 100.0, pp, pr);
    }
    double pp, pr, rp, rr;
    pr_at(cv, thr_default, &pp, &pr, &rp, &rr);
    printf("    at the default %.2f: precision %.4f recall %.4f\n", thr_default, pp, pr);
    free(cv);
}

static int quality(const char *data, const char *embdir) {
    gsm g = gsm_load(data);
    char **stored = g.reph.v;
    char **questions = malloc(g.reph.n * sizeof *questions);
    for (size_t i = 0; i < g.reph.n; i++) questions[i] = question_part(stored[i]);
    for (int variant = 0; variant < 2; variant++) {
        g.reph.v = variant == 0 ? stored : questions;
        printf("\n== GSM8K rephrases %s ==\n", variant == 0
               ? "as stored (\"Question: ...\\nAnswer: \\n#### N\")"
               : "question part only (\"Question: \" prefix and \"\\nAnswer: ...\" cut)");
        if (embdir) {
            size_t d, d2, d3;
            float *Q = npy(embdir, "gsm8k_test", g.test.n, &d);
            float *R = npy(embdir, variant == 0 ? "gsm8k_rephrase" : "gsm8k_rephrase_q", g.reph.n, &d2);
            float *T = npy(embdir, "gsm8k_train", g.train.n, &d3);
            float *S = gsm_seen(&g, R, T, d);
            gsm_eval(&g, "all-MiniLM-L6-v2", Q, S, d, LA_SEMANTIC_THRESHOLD_MODEL);
            free(Q), free(R), free(T), free(S);
        }
        /* lexical, embedded over the rows of the audit together (idf from all partitions) */
        const uint32_t D = LA_EMBED_LEXICAL_DIM;
        size_t m = 0;
        char **used = malloc((g.nq + g.ns) * sizeof *used);
        for (size_t i = 0; i < g.test.n; i++) used[m++] = g.test.v[i];
        for (size_t i = 0; i < g.ns; i++) {
            size_t src = g.seen_src[i];
            used[m++] = src < g.reph.n ? g.reph.v[src] : g.train.v[src - g.reph.n];
        }
        float *E = lexical(used, m, D);
        char name[64];
        snprintf(name, sizeof name, "lexical D=%u", D);
        gsm_eval(&g, name, E, E + g.nq * D, D, LA_SEMANTIC_THRESHOLD_LEXICAL);
        free(E);
        free(used);
    }
    g.reph.v = stored;
    printf("\n== STS-B ==\n");
    /* STS-B over train + dev + test */
    strs s1 = {0}, s2 = {0};
    double *score = NULL;
    size_t n = 0;
    float *A = NULL, *B = NULL;
    size_t d = 0;
    const char *splits[] = {"train", "dev", "test"};
    for (int k = 0; k < 3; k++) {
        char p[4096];
        snprintf(p, sizeof p, "%s/stsb/original/sts-%s.tsv", data, splits[k]);
        strs a = {0}, b = {0};
        double *sc;
        size_t m;
        stsb_read(p, &a, &b, &sc, &m);
        score = realloc(score, (n + m) * sizeof *score);
        memcpy(score + n, sc, m * sizeof *sc);
        for (size_t i = 0; i < m; i++) strs_push(&s1, a.v[i]), strs_push(&s2, b.v[i]);
        if (embdir) {
            char nm[64];
            size_t da, db;
            snprintf(nm, sizeof nm, "stsb_%s_s1", splits[k]);
            float *ea = npy(embdir, nm, m, &da);
            snprintf(nm, sizeof nm, "stsb_%s_s2", splits[k]);
            float *eb = npy(embdir, nm, m, &db);
            d = da;
            A = realloc(A, (n + m) * d * sizeof *A);
            B = realloc(B, (n + m) * d * sizeof *B);
            memcpy(A + n * d, ea, m * d * sizeof *A);
            memcpy(B + n * d, eb, m * d * sizeof *B);
            free(ea), free(eb);
        }
        n += m;
        free(sc);
    }
    printf("STS-B: %zu pairs (train + dev + test)\n", n);
    if (embdir) stsb_eval("all-MiniLM-L6-v2", A, B, score, n, d, LA_SEMANTIC_THRESHOLD_MODEL);
    char **both = malloc(2 * n * sizeof *both);
    memcpy(both, s1.v, n * sizeof *both);
    memcpy(both + n, s2.v, n * sizeof *both);
    float *E = lexical(both, 2 * n, LA_EMBED_LEXICAL_DIM);
    stsb_eval("lexical D=1024", E, E + n * LA_EMBED_LEXICAL_DIM, score, n, LA_EMBED_LEXICAL_DIM,
              LA_SEMANTIC_THRESHOLD_LEXICAL);
    free(E), free(both), free(A), free(B), free(score);
    return 0;
}

/* ---- speed -------------------------------------------------------------------------------- */

static uint64_t rng = 0x2545F4914F6CDD1Dull;
static double urand(void) {
    rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
    return (double)(rng >> 11) / 9007199254740992.0;
}
static void random_unit(float *v, size_t d) {
    double ss = 0;
    for (size_t i = 0; i < d; i += 2) {
        double u = urand() + 1e-12, w = urand(), r = sqrt(-2.0 * log(u));
        v[i] = (float)(r * cos(6.283185307179586 * w));
        if (i + 1 < d) v[i + 1] = (float)(r * sin(6.283185307179586 * w));
    }
    for (size_t i = 0; i < d; i++) ss += (double)v[i] * v[i];
    for (size_t i = 0; i < d; i++) v[i] = (float)(v[i] / sqrt(ss));
}

static int same_pairs(const la_pairs *a, const la_pairs *b) {
    if (a->n != b->n) return 0;
    for (size_t i = 0; i < a->n; i++)
        if (a->v[i].a != b->v[i].a || a->v[i].b != b->v[i].b || a->v[i].cosine != b->v[i].cosine)
            return 0;
    return 1;
}

static size_t found_in(const la_pairs *ref, const la_pairs *x) {
    size_t j = 0, hit = 0;
    for (size_t i = 0; i < ref->n; i++) {
        while (j < x->n && (x->v[j].b < ref->v[i].b || (x->v[j].b == ref->v[i].b && x->v[j].a < ref->v[i].a))) j++;
        if (j < x->n && x->v[j].a == ref->v[i].a && x->v[j].b == ref->v[i].b) hit++;
    }
    return hit;
}

static int speed(size_t ns, size_t nq, size_t d, int skip_faiss) {
    printf("speed: %zu seen x %zu held-out, d=%zu, threshold %.2f, top-1\n", ns, nq, d,
           LA_SEMANTIC_THRESHOLD_MODEL);
    size_t n = ns + nq;
    float *emb = malloc(n * d * sizeof *emb);
    double t0 = now_s();
    for (size_t i = 0; i < n; i++) random_unit(emb + i * d, d);
    /* table: rows [0, nq) held out; plant a near copy of every tenth held-out row in the seen side
     * at cosines spread over [0.75, 0.99] */
    size_t planted = 0;
    for (size_t q = 0; q < nq; q += 10) {
        float *qv = emb + q * d, *sv = emb + (nq + (q * 7919) % ns) * d;
        double c = 0.75 + 0.24 * urand(), dot = 0, ss = 0;
        for (size_t j = 0; j < d; j++) dot += (double)sv[j] * qv[j];
        for (size_t j = 0; j < d; j++) sv[j] = (float)(sv[j] - dot * qv[j]), ss += (double)sv[j] * sv[j];
        for (size_t j = 0; j < d; j++) sv[j] = (float)(c * qv[j] + sqrt(1 - c * c) * sv[j] / sqrt(ss));
        planted++;
    }
    la_table *t;
    la_table_new(&t);
    uint32_t test, train;
    la_table_part(t, "test", &test);
    la_table_part(t, "train", &train);
    for (size_t i = 0; i < n; i++) {
        char id[32];
        snprintf(id, sizeof id, "%zu", i);
        la_row r = {0};
        la_table_strdup(t, id, strlen(id), &r.id);
        r.part = i < nq ? test : train;
        r.date = LA_NO_DATE;
        la_table_append(t, &r, NULL);
    }
    printf("  data: %.1f s (%zu planted pairs)\n", now_s() - t0, planted);
    const double flops = 2.0 * (double)nq * (double)ns * (double)d;

    double sgemm_gf = NAN;
#ifdef LA_HAVE_CBLAS
    {
        /* plain SGEMM, same shape, OpenBLAS's own threads, output in 8192-column slabs */
        const size_t slab = 8192;
        float *C = malloc(nq * slab * sizeof *C);
        const float *Q = emb, *S = emb + nq * d;
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)nq, 256, (int)d, 1.0f, Q, (int)d, S,
                    (int)d, 0.0f, C, 256); /* warm up */
        t0 = now_s();
        for (size_t s0 = 0; s0 < ns; s0 += slab) {
            size_t m = ns - s0 < slab ? ns - s0 : slab;
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)nq, (int)m, (int)d, 1.0f, Q,
                        (int)d, S + s0 * d, (int)d, 0.0f, C, (int)m);
        }
        double s = now_s() - t0;
        sgemm_gf = flops / s / 1e9;
        printf("  plain cblas_sgemm, same shape (no thresholding): %.2f s, %.1f GFLOP/s\n", s, sgemm_gf);
        free(C);
    }
#endif
    la_semantic_params p;
    la_semantic_params_default(&p);
    la_semantic_stats st;
    la_pairs exact = {0};
    la_semantic_nearest nn;
    p.method = LA_SEMANTIC_TILES;
    t0 = now_s();
    if (la_semantic_find(t, test, emb, d, &p, &exact, &nn, &st) != LA_OK) die("tiles");
    double wall = now_s() - t0;
    printf("  exact, tiles (%s%s + fused threshold/top-1): %.2f s search (%.2f s with "
           "gathering), %.1f GFLOP/s (fp32-equivalent) = %.0f%% of plain sgemm; %zu pairs, %zu re-scored near the "
           "threshold\n",
           la_simtile_i8_available(d) ? la_simtile_i8_kernel_name(la_simtile_i8_kernel(d)) : "OpenBLAS sgemm",
           la_simtile_i8_available(d) ? " with error bound" : "", st.seconds, wall, st.gflops,
           100.0 * st.gflops / sgemm_gf, exact.n, st.rescored);
    la_semantic_nearest_free(&nn);
    if (la_semantic_have_faiss() && !skip_faiss) {
        la_pairs f = {0};
        p.method = LA_SEMANTIC_FAISS;
        if (la_semantic_find(t, test, emb, d, &p, &f, &nn, &st) != LA_OK) die("faiss");
        printf("  exact, FAISS IndexFlatIP range + k-NN search: %.2f s, %.1f GFLOP/s; same pair set "
               "as tiles: %s\n", st.seconds, st.gflops, same_pairs(&exact, &f) ? "yes" : "NO");
        la_semantic_nearest_free(&nn);
        la_pairs_free(&f);
        uint32_t nprobes[] = {4, 16, 64};
        for (int k = 0; k < 3; k++) {
            la_pairs a = {0};
            p.method = LA_SEMANTIC_FAISS_IVF;
            p.ivf_nprobe = nprobes[k];
            if (la_semantic_find(t, test, emb, d, &p, &a, &nn, &st) != LA_OK) die("ivf");
            size_t hit = found_in(&exact, &a);
            unsigned nlist = (unsigned)(4.0 * sqrt((double)ns));
            if (nlist > ns / 39) nlist = (unsigned)(ns / 39);
            printf("  approximate, FAISS IVF%u,Flat nprobe=%u (train + add + search): %.2f s; "
                   "recall vs exact %.4f (%zu of %zu pairs)\n",
                   nlist, nprobes[k], st.seconds,
                   exact.n ? (double)hit / exact.n : 1.0, hit, exact.n);
            la_semantic_nearest_free(&nn);
            la_pairs_free(&a);
        }
    }
    la_pairs_free(&exact);
    la_table_free(t);
    free(emb);
    return 0;
}

int main(int argc, char **argv) {
    if (argc >= 3 && strcmp(argv[1], "quality") == 0) return quality(argv[2], argc > 3 ? argv[3] : NULL);
    if (argc >= 2 && strcmp(argv[1], "speed") == 0) {
        size_t ns = argc > 2 ? strtoul(argv[2], NULL, 10) : 100000;
        size_t nq = argc > 3 ? strtoul(argv[3], NULL, 10) : 10000;
        size_t d = argc > 4 ? strtoul(argv[4], NULL, 10) : 384;
        int skip_faiss = argc > 5 && strcmp(argv[5], "--tiles-only") == 0;
        return speed(ns, nq, d, skip_faiss);
    }
    fprintf(stderr, "usage: bench_semantic quality DATA_DIR [EMB_DIR]\n"
                    "       bench_semantic speed [SEEN HELDOUT DIM [--tiles-only]]\n");
    return 2;
}
