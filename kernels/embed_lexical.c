/*
 * embed_lexical.c - the CPU loop of the built-in `lexical` embedding (see embed_lexical.h).
 *
 * Two passes over the texts: the first counts document frequencies per feature slot, the second
 * writes the vectors. Each text is handled by one thread from start to end, with its features in a
 * sorted array, so the result does not depend on the thread count.
 */
#include "embed_lexical.h"

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
    uint64_t *tmp;  /* radix sort scratch */
    size_t tmpcap;
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

/* Sort f->h ascending: LSD radix sort on bytes, skipping bytes that are equal in every key. The
 * features of one text number in the hundreds to thousands, where this beats qsort several times. */
static int sort_feats(feats *f) {
    size_t n = f->n;
    if (n < 2) return 0;
    if (grow((void **)&f->tmp, &f->tmpcap, n, sizeof *f->tmp)) return -1;
    uint64_t *a = f->h, *b = f->tmp;
    for (int shift = 0; shift < 64; shift += 8) {
        size_t count[256] = {0};
        for (size_t i = 0; i < n; i++) count[(a[i] >> shift) & 0xFF]++;
        if (count[(a[0] >> shift) & 0xFF] == n) continue; /* this byte is the same everywhere */
        size_t sum = 0;
        for (int d = 0; d < 256; d++) {
            size_t c = count[d];
            count[d] = sum;
            sum += c;
        }
        for (size_t i = 0; i < n; i++) b[count[(a[i] >> shift) & 0xFF]++] = a[i];
        uint64_t *t = a;
        a = b;
        b = t;
    }
    if (a != f->h) memcpy(f->h, a, n * sizeof *a);
    return 0;
}

/* Collect the features of one text into f->h, sorted. The group bit replaces the top bit of the
 * hash, so the df slot (top bits) differs per group as well. */
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
    return sort_feats(f);
}

static void feats_free(feats *f) {
    free(f->tmp);
    free(f->h);
    free(f->pad);
    free(f->cp);
}

/* Weight of every run of equal features, written for one group into out (dim floats). */
static void write_group(const uint64_t *h, size_t n, int group_char, const uint32_t *df,
                        uint64_t ndocs, uint32_t dim, float share, float *out) {
    double ss = 0.0;
    for (int pass = 0; pass < 2; pass++) {
        double scale = 0.0;
        if (pass == 1) {
            if (ss <= 0.0) return;
            scale = sqrt((double)share / ss);
        }
        for (size_t i = 0; i < n;) {
            size_t j = i + 1;
            while (j < n && h[j] == h[i]) j++;
            int is_char = (h[i] & GROUP_CHAR) != 0;
            if (is_char == group_char) {
                float w = la_lex_tf((uint32_t)(j - i)) * la_lex_idf(ndocs, df[la_lex_df_slot(h[i])]);
                if (pass == 0)
                    ss += (double)w * w;
                else
                    out[la_lex_dim(h[i], dim)] += (float)(w * scale) * la_lex_sign(h[i]);
            }
            i = j;
        }
    }
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
    nt = p->threads > 0 ? p->threads : omp_get_max_threads();
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
                    continue;
                }
                if (pass == 0) {
                    for (size_t i = 0; i < f.n; i++) {
                        if (i > 0 && f.h[i] == f.h[i - 1]) continue;
                        uint32_t *slot = &df[la_lex_df_slot(f.h[i])];
#ifdef LA_HAVE_OPENMP
#pragma omp atomic update
#endif
                        (*slot)++;
                    }
                } else {
                    float *v = out + r * dim;
                    memset(v, 0, dim * sizeof *v);
                    write_group(f.h, f.n, 0, df, n, dim, p->word_weight, v);
                    write_group(f.h, f.n, 1, df, n, dim, 1.0f - p->word_weight, v);
                    double ss = 0.0;
                    for (uint32_t k = 0; k < dim; k++) ss += (double)v[k] * v[k];
                    if (ss > 0.0) {
                        float inv = (float)(1.0 / sqrt(ss));
                        for (uint32_t k = 0; k < dim; k++) v[k] *= inv;
                    }
                }
            }
            feats_free(&f);
        }
    }
    free(df);
    if (failed) return la_error(LA_ENOMEM, "lexical embedding: out of memory");
    return LA_OK;
}
