/*
 * gen.c - the corpus generator of the near-copy benchmark (see gen.h).
 *
 * Words are made of random syllables and drawn from a Zipf law (s = 1.05) over 40000 words, so that
 * unrelated texts share common words as real text does. An edit at rate p applies round(p * words)
 * operations, each a substitution, insertion, deletion or swap of neighbours chosen uniformly.
 */
#include "gen.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const int gen_rates[GEN_NRATES] = {0, 2, 5, 10, 20, 30, 50};

enum { VOCAB = 40000 };

typedef struct rng {
    uint64_t s;
} rng;

static uint64_t next(rng *r)
{
    uint64_t z = (r->s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static size_t below(rng *r, size_t n) { return (size_t)(next(r) % n); }
static double unit(rng *r) { return (next(r) >> 11) * (1.0 / 9007199254740992.0); }

typedef struct gen {
    rng r;
    char *words[VOCAB];
    double cdf[VOCAB];
} gen;

static void gen_init(gen *g, uint64_t seed)
{
    static const char *cons[] = {"b", "c", "d", "f", "g", "h", "j", "k", "l", "m", "n", "p", "r", "s", "t", "v",
                                 "w", "z", "st", "tr", "ch", "sh", "pl", "gr"};
    static const char *vow[] = {"a", "e", "i", "o", "u", "ai", "ou", "ee"};
    g->r.s = seed;
    double sum = 0;
    for (int i = 0; i < VOCAB; i++) {
        char buf[64];
        int len = 0;
        int syl = 1 + (int)below(&g->r, i < 200 ? 2 : 4);
        for (int k = 0; k < syl; k++)
            len += snprintf(buf + len, sizeof buf - (size_t)len, "%s%s", cons[below(&g->r, 24)], vow[below(&g->r, 8)]);
        if (below(&g->r, 3) == 0) len += snprintf(buf + len, sizeof buf - (size_t)len, "%s", cons[below(&g->r, 18)]);
        g->words[i] = strdup(buf);
        sum += 1.0 / pow(i + 1, 1.05);
        g->cdf[i] = sum;
    }
    for (int i = 0; i < VOCAB; i++) g->cdf[i] /= sum;
}

static void gen_fini(gen *g)
{
    for (int i = 0; i < VOCAB; i++) free(g->words[i]);
}

static int word(gen *g)
{
    double u = unit(&g->r);
    size_t lo = 0, hi = VOCAB - 1;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (g->cdf[mid] < u)
            lo = mid + 1;
        else
            hi = mid;
    }
    return (int)lo;
}

typedef struct wlist {
    int *w;
    size_t n;
} wlist;

static wlist random_text(gen *g, size_t n)
{
    wlist l = {malloc((n ? n : 1) * sizeof(int)), n};
    for (size_t i = 0; i < n; i++) l.w[i] = word(g);
    return l;
}

static size_t short_len(gen *g) { return 10 + below(&g->r, 31); }  /* questions: 10-40 words */
static size_t long_len(gen *g) { return 150 + below(&g->r, 451); } /* documents: 150-600 words */

static wlist edit(gen *g, const wlist *src, int rate)
{
    size_t cap = src->n * 2 + 8, n = src->n;
    int *w = malloc(cap * sizeof(int));
    memcpy(w, src->w, n * sizeof(int));
    size_t ops = (size_t)floor(rate / 100.0 * (double)src->n + 0.5);
    for (size_t o = 0; o < ops; o++) {
        int kind = (int)below(&g->r, 4);
        if (n < 3) kind = 1;
        size_t at = below(&g->r, n ? n : 1);
        switch (kind) {
        case 0: w[at] = word(g); break;
        case 1:
            memmove(w + at + 1, w + at, (n - at) * sizeof(int));
            w[at] = word(g);
            n++;
            break;
        case 2:
            memmove(w + at, w + at + 1, (n - at - 1) * sizeof(int));
            n--;
            break;
        default:
            if (at + 1 >= n) at = n - 2;
            int t = w[at];
            w[at] = w[at + 1];
            w[at + 1] = t;
        }
    }
    return (wlist){w, n};
}

static char *render(gen *g, const wlist *l, size_t *bytes)
{
    size_t len = 0;
    for (size_t i = 0; i < l->n; i++) len += strlen(g->words[l->w[i]]) + 1;
    char *s = malloc(len + 1), *p = s;
    for (size_t i = 0; i < l->n; i++) {
        if (i) *p++ = ' ';
        size_t k = strlen(g->words[l->w[i]]);
        memcpy(p, g->words[l->w[i]], k);
        p += k;
    }
    *p = '\0';
    *bytes += (size_t)(p - s);
    return s;
}

int gen_make(uint64_t seed, size_t ndev, size_t ntest, gen_corpus *c)
{
    memset(c, 0, sizeof *c);
    gen *g = malloc(sizeof *g);
    if (!g) return -1;
    gen_init(g, seed);
    c->ndev = ndev;
    c->ntest = ntest;
    c->dev = calloc(ndev, sizeof(char *));
    c->test = calloc(ntest, sizeof(char *));
    c->truth = calloc(ntest, sizeof(gen_truth));
    size_t nedit = ntest / 3, ncontain = ntest / 15;
    if (nedit + ncontain > ndev) nedit = ncontain = 0;
    /* Planted sources: dev rows 0..nedit-1 are copied (then the dev order is shuffled below). */
    wlist *dv = calloc(ndev, sizeof(wlist));
    for (size_t i = 0; i < ndev; i++) dv[i] = random_text(g, below(&g->r, 10) < 6 ? short_len(g) : long_len(g));
    size_t t = 0;
    for (size_t i = 0; i < nedit; i++, t++) {
        /* Half short questions, half long documents, each spread over the edit rates. */
        int long_doc = (int)(i % 2);
        free(dv[i].w);
        dv[i] = random_text(g, long_doc ? long_len(g) : short_len(g));
        int rate = gen_rates[(i / 2) % GEN_NRATES];
        wlist e = edit(g, &dv[i], rate);
        c->test[t] = render(g, &e, &c->bytes);
        free(e.w);
        c->truth[c->ntruth++] = (gen_truth){i, t, GEN_EDIT, rate, long_doc};
    }
    for (size_t i = 0; i < ncontain; i++, t++) {
        size_t d = nedit + i;
        wlist q = random_text(g, 12 + below(&g->r, 49)); /* 12-60 words */
        double ratio = 3.0 + 7.0 * unit(&g->r);
        size_t total = (size_t)(q.n * ratio);
        wlist host = random_text(g, total - q.n);
        size_t at = below(&g->r, host.n + 1);
        free(dv[d].w);
        dv[d].w = malloc(total * sizeof(int));
        dv[d].n = total;
        memcpy(dv[d].w, host.w, at * sizeof(int));
        memcpy(dv[d].w + at, q.w, q.n * sizeof(int));
        memcpy(dv[d].w + at + q.n, host.w + at, (host.n - at) * sizeof(int));
        c->test[t] = render(g, &q, &c->bytes);
        c->truth[c->ntruth++] = (gen_truth){d, t, GEN_CONTAIN, (int)(ratio * 10), 0};
        free(q.w);
        free(host.w);
    }
    for (; t < ntest; t++) {
        wlist d = random_text(g, below(&g->r, 10) < 6 ? short_len(g) : long_len(g));
        c->test[t] = render(g, &d, &c->bytes);
        free(d.w);
    }
    /* Shuffle dev so sources are spread over the table; remap the truth. */
    size_t *perm = malloc(ndev * sizeof *perm), *where = malloc(ndev * sizeof *where);
    for (size_t i = 0; i < ndev; i++) perm[i] = i;
    for (size_t i = ndev; i > 1; i--) {
        size_t j = below(&g->r, i), x = perm[i - 1];
        perm[i - 1] = perm[j];
        perm[j] = x;
    }
    for (size_t i = 0; i < ndev; i++) {
        c->dev[i] = render(g, &dv[perm[i]], &c->bytes);
        where[perm[i]] = i;
        free(dv[perm[i]].w);
    }
    for (size_t i = 0; i < c->ntruth; i++) c->truth[i].dev = where[c->truth[i].dev];
    free(perm);
    free(where);
    free(dv);
    gen_fini(g);
    free(g);
    return 0;
}

void gen_free(gen_corpus *c)
{
    for (size_t i = 0; i < c->ndev; i++) free(c->dev[i]);
    for (size_t i = 0; i < c->ntest; i++) free(c->test[i]);
    free(c->dev);
    free(c->test);
    free(c->truth);
    memset(c, 0, sizeof *c);
}

static int write_part(const char *dir, const char *name, char **rows, size_t n, const char *prefix)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s.jsonl", dir, name);
    FILE *f = fopen(path, "w");
    if (!f) return -1;
    for (size_t i = 0; i < n; i++)
        fprintf(f, "{\"id\":\"%s%zu\",\"split\":\"%s\",\"text\":\"%s\"}\n", prefix, i, name, rows[i]);
    return fclose(f);
}

int gen_write(const gen_corpus *c, const char *dir)
{
    if (write_part(dir, "dev", c->dev, c->ndev, "d") || write_part(dir, "test", c->test, c->ntest, "t")) return -1;
    char path[4096];
    snprintf(path, sizeof path, "%s/truth.jsonl", dir);
    FILE *f = fopen(path, "w");
    if (!f) return -1;
    for (size_t i = 0; i < c->ntruth; i++) {
        const gen_truth *t = &c->truth[i];
        if (t->kind == GEN_EDIT)
            fprintf(f, "{\"dev\":\"d%zu\",\"test\":\"t%zu\",\"case\":\"edit\",\"rate\":%d,\"long\":%s}\n", t->dev, t->test,
                    t->rate, t->long_doc ? "true" : "false");
        else
            fprintf(f, "{\"dev\":\"d%zu\",\"test\":\"t%zu\",\"case\":\"containment\",\"ratio\":%.1f}\n", t->dev, t->test,
                    t->rate / 10.0);
    }
    return fclose(f);
}
