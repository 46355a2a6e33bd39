/*
 * embed_lexical.c - the CPU loop of the built-in `lexical` embedding (see embed_lexical.h).
 *
 * Two passes over the texts: the first counts document frequencies per feature slot, the second
 * writes the vectors. Each text is handled by one thread from start to end; its features are counted
 * in a small open-addressing table and visited in the order they first occur in the text, so the
 * result does not depend on the thread count.
 */
#include "embed_lexical.h"
#include "la_cpus.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include "embed_lexical_core.h"

#ifdef LA_HAVE_OPENMP
#include <omp.h>
#endif

void la_embed_lexical_params_default(la_embed_lexical_params *p) {
    p->dim = LA_EMBED_LEXICAL_DIM;
    p->word_weight = 0.5f;
    p->seed = 0x6c65616b61756469ull; /* "leakaudi" */
    p->threads = 0;
}

/* Per-thread scratch: the features of one text, high bit 0 for words, 1 for characters. */
typedef struct feats {
    uint64_t *h;
    size_t n, cap;
    char *pad;      /* " " + text + " " */
    size_t padcap;
    uint32_t *cp;   /* code point start offsets in pad */
    size_t cpcap;
    uint64_t *key;  /* feature counts: an open-addressing table of tcap slots (a power of two) */
    uint32_t *cnt;  /* 0 = empty slot */
    size_t tcap;
    uint32_t *used; /* occupied slots in order of first occurrence */
    size_t nused, usedcap;
    float *w;       /* weight of each distinct feature, by position in used */
    size_t wcap;
} feats;

static int grow(void **p, size_t *cap, size_t need, size_t elem) {
    if (need <= *cap) return 0;
    size_t c = *cap ? *cap : 64;
    while (c < need) c *= 2;
    void *q = realloc(*p, c * elem);
    if (!q) return -1;
    *p = q;
    *cap = c;
    return 0;
}

#define GROUP_CHAR (1ull << 63)

static int push(feats *f, uint64_t h) {
    if (f->n == f->cap && grow((void **)&f->h, &f->cap, f->n + 1, sizeof *f->h)) return -1;
    f->h[f->n++] = h;
    return 0;
}

/* Count the distinct features of f->h into the table (cleared by clear_counts). */
static int count_feats(feats *f) {
    size_t need = 64;
    while (need < 2 * f->n) need *= 2;
    if (need > f->tcap) {
        free(f->key);
        free(f->cnt);
        f->key = malloc(need * sizeof *f->key);
        f->cnt = calloc(need, sizeof *f->cnt);
        f->tcap = f->key && f->cnt ? need : 0;
        if (!f->tcap) return -1;
    }
    if (grow((void **)&f->used, &f->usedcap, f->n + 1, sizeof *f->used)) return -1;
    size_t mask = f->tcap - 1;
    f->nused = 0;
    for (size_t i = 0; i < f->n; i++) {
        uint64_t h = f->h[i];
        size_t slot = (size_t)(h ^ (h >> 31)) & mask;
        while (f->cnt[slot] && f->key[slot] != h) slot = (slot + 1) & mask;
        if (!f->cnt[slot]) {
            f->key[slot] = h;
            f->used[f->nused++] = (uint32_t)slot;
        }
        f->cnt[slot]++;
    }
    return 0;
}

static void clear_counts(feats *f) {
    for (size_t i = 0; i < f->nused; i++) f->cnt[f->used[i]] = 0;
    f->nused = 0;
}

/* Collect the features of one text into f->h, in text order, and count them. The group bit
 * replaces the top bit of the hash, so the df slot (top bits) differs per group as well. */
static int extract(const char *s, size_t len, uint64_t seed, feats *f) {
    f->n = 0;
    if (!s) len = 0;
    /* words: unigrams and bigrams */
    size_t i = 0, prev_b = 0, prev_e = 0;
    int have_prev = 0;
    while (i < len) {
        while (i < len && !la_lex_word_byte((unsigned char)s[i])) i++;
        size_t b = i;
        while (i < len && la_lex_word_byte((unsigned char)s[i])) i++;
        if (i == b) break;
        uint64_t h = XXH3_64bits_withSeed(s + b, i - b, seed ^ 0x1ull);
        if (push(f, h & ~GROUP_CHAR)) return -1;
        if (have_prev) {
            uint64_t h1 = XXH3_64bits_withSeed(s + prev_b, prev_e - prev_b, seed ^ 0x2ull);
            uint64_t h2 = XXH3_64bits_withSeed(s + b, i - b, h1);
            if (push(f, h2 & ~GROUP_CHAR)) return -1;
        }
        prev_b = b, prev_e = i, have_prev = 1;
    }
    /* characters: 3-5 code points of " " + text + " " */
    if (len > 0) {
        if (grow((void **)&f->pad, &f->padcap, len + 2, 1)) return -1;
        f->pad[0] = ' ';
        memcpy(f->pad + 1, s, len);
        f->pad[len + 1] = ' ';
        size_t plen = len + 2, ncp = 0;
        if (grow((void **)&f->cp, &f->cpcap, plen + 1, sizeof *f->cp)) return -1;
        for (size_t j = 0; j < plen; j++)
            if (la_lex_cp_start((unsigned char)f->pad[j])) f->cp[ncp++] = (uint32_t)j;
        f->cp[ncp] = (uint32_t)plen;
        for (size_t j = 0; j < ncp; j++)
            for (size_t n = 3; n <= 5 && j + n <= ncp; n++) {
                uint64_t h = XXH3_64bits_withSeed(f->pad + f->cp[j], f->cp[j + n] - f->cp[j],
                                                  seed ^ (0x10ull + n));
                if (push(f, h | GROUP_CHAR)) return -1;
            }
    }
    return count_feats(f);
}

static void feats_free(feats *f) {
    free(f->key);
    free(f->cnt);
    free(f->used);
    free(f->w);
    free(f->h);
    free(f->pad);
    free(f->cp);
}

/* The vector of one counted text: sublinear tf times idf per distinct feature, each group (words,
 * characters) scaled to carry `share` of the squared norm, hashed into out (dim floats, zeroed). */
static int write_vector(feats *f, const uint32_t *df, uint64_t ndocs, uint32_t dim, float word_share, float *out) {
    if (grow((void **)&f->w, &f->wcap, f->nused + 1, sizeof *f->w)) return -1;
    double ss[2] = {0.0, 0.0};
    for (size_t i = 0; i < f->nused; i++) {
        uint32_t slot = f->used[i];
        uint64_t h = f->key[slot];
        float w = la_lex_tf(f->cnt[slot]) * la_lex_idf(ndocs, df[la_lex_df_slot(h)]);
        f->w[i] = w;
        ss[(h & GROUP_CHAR) != 0] += (double)w * w;
    }
    double scale[2];
    scale[0] = ss[0] > 0.0 ? sqrt((double)word_share / ss[0]) : 0.0;
    scale[1] = ss[1] > 0.0 ? sqrt((double)(1.0f - word_share) / ss[1]) : 0.0;
    for (size_t i = 0; i < f->nused; i++) {
        uint64_t h = f->key[f->used[i]];
        out[la_lex_dim(h, dim)] += (float)(f->w[i] * scale[(h & GROUP_CHAR) != 0]) * la_lex_sign(h);
    }
    return 0;
}

la_status la_cpu_embed_lexical(const char *const *texts, const size_t *lens, size_t n,
                               const la_embed_lexical_params *p, float *out) {
    if (!p || p->dim == 0 || !(p->word_weight >= 0.0f && p->word_weight <= 1.0f) ||
        (n && (!texts || !lens || !out)))
        return la_error(LA_EINVAL, "lexical embedding: bad parameters");
    if (n == 0) return LA_OK;
    const uint32_t dim = p->dim;
    uint32_t *df = calloc((size_t)1 << LA_LEX_DF_BITS, sizeof *df);
    if (!df) return la_error(LA_ENOMEM, "lexical embedding: out of memory");
    int nt = 1;
#ifdef LA_HAVE_OPENMP
    nt = la_omp_threads(p->threads);
#endif
    int failed = 0;

    for (int pass = 0; pass < 2 && !failed; pass++) {
#ifdef LA_HAVE_OPENMP
#pragma omp parallel num_threads(nt)
#endif
        {
            feats f = {0};
#ifdef LA_HAVE_OPENMP
#pragma omp for schedule(dynamic, 64)
#endif
            for (size_t r = 0; r < n; r++) {
                if (extract(texts[r], lens[r], p->seed, &f)) {
#ifdef LA_HAVE_OPENMP
#pragma omp atomic write
#endif
                    failed = 1;
                    clear_counts(&f);
                    continue;
                }
                if (pass == 0) {
                    for (size_t i = 0; i < f.nused; i++) {
                        uint32_t *slot = &df[la_lex_df_slot(f.key[f.used[i]])];
#ifdef LA_HAVE_OPENMP
#pragma omp atomic update
#endif
                        (*slot)++;
                    }
                } else {
                    float *v = out + r * dim;
                    memset(v, 0, dim * sizeof *v);
                    if (write_vector(&f, df, n, dim, p->word_weight, v)) {
#ifdef LA_HAVE_OPENMP
#pragma omp atomic write
#endif
                        failed = 1;
                    }
                    double ss = 0.0;
                    for (uint32_t k = 0; k < dim; k++) ss += (double)v[k] * v[k];
                    if (ss > 0.0) {
                        float inv = (float)(1.0 / sqrt(ss));
                        for (uint32_t k = 0; k < dim; k++) v[k] *= inv;
                    }
                }
                clear_counts(&f);
            }
            feats_free(&f);
        }
    }
    free(df);
    if (failed) return la_error(LA_ENOMEM, "lexical embedding: out of memory");
    return LA_OK;
}
