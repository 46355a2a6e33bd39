/* test_embed_lexical_ref.c - the lexical embedding kernel against a straightforward reference kept
 * here: the same features (xxHash library calls), the same weights and the same summation order,
 * computed one text at a time with no tables to reuse, no per-thread counts and no prefetching.
 * The vectors must be the same bits, at 1 and 2 threads, on real multilingual text
 * (tests/data/multilingual), English word problems (tests/data/gsm8k_templates), long texts with
 * repeated features and edge cases, for a power-of-two dimension and another one. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include "embed_lexical.h"
#include "embed_lexical_core.h"

/* ---- the reference ---- */

#define REF_CHAR (1ull << 63)

typedef struct ref_feat {
    uint64_t h;
    size_t first; /* position of its first occurrence in the text */
    uint32_t cnt;
} ref_feat;

typedef struct ref_list {
    ref_feat *v;
    size_t n;
} ref_list;

static void ref_add(ref_list *l, uint64_t h) {
    l->v = realloc(l->v, (l->n + 1) * sizeof *l->v);
    assert_non_null(l->v);
    l->v[l->n] = (ref_feat){h, l->n, 1};
    l->n++;
}

/* Every feature of s in text order: words, word bigrams, then character 3-5-grams of " s ". */
static ref_list ref_features(const char *s, size_t len, uint64_t seed) {
    ref_list l = {NULL, 0};
    if (!s) len = 0;
    size_t i = 0, pb = 0, pe = 0;
    int have_prev = 0;
    for (;;) {
        while (i < len && !la_lex_word_byte((unsigned char)s[i])) i++;
        size_t b = i;
        while (i < len && la_lex_word_byte((unsigned char)s[i])) i++;
        if (i == b) break;
        ref_add(&l, XXH3_64bits_withSeed(s + b, i - b, seed ^ 0x1ull) & ~REF_CHAR);
        if (have_prev) {
            uint64_t h1 = XXH3_64bits_withSeed(s + pb, pe - pb, seed ^ 0x2ull);
            ref_add(&l, XXH3_64bits_withSeed(s + b, i - b, h1) & ~REF_CHAR);
        }
        pb = b, pe = i, have_prev = 1;
    }
    if (len == 0) return l;
    char *pad = malloc(len + 2);
    assert_non_null(pad);
    pad[0] = ' ';
    memcpy(pad + 1, s, len);
    pad[len + 1] = ' ';
    size_t plen = len + 2;
    for (size_t j = 0; j < plen; j++) {
        if (!la_lex_cp_start((unsigned char)pad[j])) continue;
        for (size_t n = 3; n <= 5; n++) {
            /* the end of the n-th code point from j */
            size_t e = j, seen = 0;
            while (e < plen && seen < n) {
                e++;
                while (e < plen && !la_lex_cp_start((unsigned char)pad[e])) e++;
                seen++;
            }
            if (seen < n) break;
            ref_add(&l, XXH3_64bits_withSeed(pad + j, e - j, seed ^ (0x10ull + n)) | REF_CHAR);
        }
    }
    free(pad);
    return l;
}

static int by_hash_then_first(const void *a, const void *b) {
    const ref_feat *x = a, *y = b;
    if (x->h != y->h) return x->h < y->h ? -1 : 1;
    return x->first < y->first ? -1 : x->first > y->first;
}

static int by_first(const void *a, const void *b) {
    const ref_feat *x = a, *y = b;
    return x->first < y->first ? -1 : x->first > y->first;
}

/* The distinct features of s with their counts, in order of first occurrence. */
static ref_list ref_distinct(const char *s, size_t len, uint64_t seed) {
    ref_list l = ref_features(s, len, seed);
    if (l.n == 0) return l;
    qsort(l.v, l.n, sizeof *l.v, by_hash_then_first);
    size_t k = 0;
    for (size_t i = 0; i < l.n; i++) {
        if (k > 0 && l.v[k - 1].h == l.v[i].h)
            l.v[k - 1].cnt++;
        else
            l.v[k++] = l.v[i];
    }
    l.n = k;
    qsort(l.v, l.n, sizeof *l.v, by_first);
    return l;
}

static void ref_embed(const char *const *texts, const size_t *lens, size_t n, const la_embed_lexical_params *p,
                      float *out) {
    uint32_t *df = calloc((size_t)1 << LA_LEX_DF_BITS, sizeof *df);
    assert_non_null(df);
    for (size_t r = 0; r < n; r++) {
        ref_list l = ref_distinct(texts[r], lens[r], p->seed);
        for (size_t i = 0; i < l.n; i++) df[la_lex_df_slot(l.v[i].h)]++;
        free(l.v);
    }
    for (size_t r = 0; r < n; r++) {
        ref_list l = ref_distinct(texts[r], lens[r], p->seed);
        float *v = out + r * p->dim;
        memset(v, 0, p->dim * sizeof *v);
        float *w = malloc((l.n + 1) * sizeof *w);
        assert_non_null(w);
        double ss[2] = {0.0, 0.0};
        for (size_t i = 0; i < l.n; i++) {
            w[i] = la_lex_tf(l.v[i].cnt) * la_lex_idf(n, df[la_lex_df_slot(l.v[i].h)]);
            ss[(l.v[i].h & REF_CHAR) != 0] += (double)w[i] * w[i];
        }
        double scale[2];
        scale[0] = ss[0] > 0.0 ? sqrt((double)p->word_weight / ss[0]) : 0.0;
        scale[1] = ss[1] > 0.0 ? sqrt((double)(1.0f - p->word_weight) / ss[1]) : 0.0;
        for (size_t i = 0; i < l.n; i++) {
            uint64_t h = l.v[i].h;
            v[la_lex_dim(h, p->dim)] += (float)(w[i] * scale[(h & REF_CHAR) != 0]) * la_lex_sign(h);
        }
        double norm = 0.0;
        for (uint32_t k = 0; k < p->dim; k++) norm += (double)v[k] * v[k];
        if (norm > 0.0) {
            float inv = (float)(1.0 / sqrt(norm));
            for (uint32_t k = 0; k < p->dim; k++) v[k] *= inv;
        }
        free(w);
        free(l.v);
    }
    free(df);
}

/* ---- the corpus ---- */

typedef struct corpus {
    char **text; /* NULL for the one absent text */
    size_t *len;
    size_t n;
} corpus;

static void corpus_add(corpus *c, const char *s, size_t len) {
    c->text = realloc(c->text, (c->n + 1) * sizeof *c->text);
    c->len = realloc(c->len, (c->n + 1) * sizeof *c->len);
    assert_non_null(c->text);
    assert_non_null(c->len);
    c->text[c->n] = NULL;
    if (s) {
        c->text[c->n] = malloc(len + 1);
        assert_non_null(c->text[c->n]);
        memcpy(c->text[c->n], s, len);
        c->text[c->n][len] = '\0';
    }
    c->len[c->n++] = len;
}

static void corpus_add_str(corpus *c, const char *s) {
    corpus_add(c, s, strlen(s));
}

/* Every line of a fixture, after its first tab when skip_to_tab is set. */
static void corpus_add_lines(corpus *c, const char *path, int skip_to_tab) {
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    char line[8192];
    size_t before = c->n;
    while (fgets(line, sizeof line, f)) {
        line[strcspn(line, "\n")] = '\0';
        const char *s = line;
        if (skip_to_tab) {
            s = strchr(line, '\t');
            assert_non_null(s);
            s++;
        }
        corpus_add_str(c, s);
    }
    fclose(f);
    assert_true(c->n > before);
}

/* Long texts: each a run of `per` consecutive texts from `from` on, joined by spaces, so names
 * repeat (term frequencies above one) and scripts meet inside one text. */
static void corpus_add_joined(corpus *c, size_t from, size_t to, size_t per) {
    for (size_t i = from; i + per <= to; i += per / 2) {
        size_t len = 0;
        for (size_t k = 0; k < per; k++) len += c->len[i + k] + 1;
        char *s = malloc(len + 1);
        assert_non_null(s);
        size_t at = 0;
        for (size_t k = 0; k < per; k++) {
            memcpy(s + at, c->text[i + k], c->len[i + k]);
            at += c->len[i + k];
            s[at++] = k % 3 == 1 ? ',' : ' ';
        }
        corpus_add(c, s, at);
        free(s);
    }
}

static corpus build_corpus(void) {
    corpus c = {NULL, NULL, 0};
    corpus_add_lines(&c, LA_SOURCE_DIR "/tests/data/multilingual/iso_3166-1.tsv", 1);
    size_t names = c.n;
    corpus_add_lines(&c, LA_SOURCE_DIR "/tests/data/gsm8k_templates/train.jsonl", 0);
    corpus_add_lines(&c, LA_SOURCE_DIR "/tests/data/gsm8k_templates/test.jsonl", 0);
    corpus_add_joined(&c, 0, names, 40);
    /* the same names again, so that every name's features have document frequency two or more */
    for (size_t i = 0; i < names; i += 3) corpus_add(&c, c.text[i], c.len[i]);
    corpus_add(&c, NULL, 0);
    corpus_add_str(&c, "");
    corpus_add_str(&c, " ");
    corpus_add_str(&c, "a");
    corpus_add_str(&c, "ab");
    corpus_add_str(&c, "!!! ??? ...");
    corpus_add_str(&c, "\x80\x80 broken \xff\xfe utf-8 \xe2\x82");
    /* one word over a thousand times: a term frequency beyond any small lookup table */
    char rep[4096];
    size_t at = 0;
    while (at + 3 < sizeof rep) rep[at++] = 'l', rep[at++] = 'a', rep[at++] = ' ';
    corpus_add(&c, rep, at);
    /* runs of 1 to 40 one-byte code points between two-, three- and four-byte ones: every place a
     * run of single bytes can start and end against the eight positions the vector loop takes */
    static const char *const wide[] = {"\xc3\xa9", "\xe4\xb8\xad", "\xf0\x9f\x98\x80", "\x80"};
    char mix[2048];
    for (int w = 0; w < 4; w++) {
        at = 0;
        for (int run = 1; run <= 40; run++) {
            for (int k = 0; k < run; k++) mix[at++] = (char)('a' + (run * 7 + k * 3) % 26);
            size_t wl = strlen(wide[(w + run) % 4]);
            memcpy(mix + at, wide[(w + run) % 4], wl);
            at += wl;
        }
        corpus_add(&c, mix, at);
        for (size_t cut = 1; cut < 30; cut++) corpus_add(&c, mix + cut, 11 + cut); /* short texts too */
    }
    return c;
}

static void corpus_free(corpus *c) {
    for (size_t i = 0; i < c->n; i++) free(c->text[i]);
    free(c->text);
    free(c->len);
}

/* ---- the tests ---- */

static void check_against_reference(uint32_t dim, float word_weight) {
    corpus c = build_corpus();
    assert_true(c.n > 1000); /* the loop hands out 64 rows at a time: enough for both threads */
    la_embed_lexical_params p;
    la_embed_lexical_params_default(&p);
    p.dim = dim;
    p.word_weight = word_weight;
    size_t bytes = c.n * dim * sizeof(float);
    float *want = malloc(bytes);
    assert_non_null(want);
    ref_embed((const char *const *)c.text, c.len, c.n, &p, want);
    size_t nonzero = 0;
    for (size_t i = 0; i < c.n * dim; i++) nonzero += want[i] != 0.0f;
    assert_true(nonzero > 2 * c.n); /* the reference computed vectors, not zeros */
    const int threads[] = {1, 2};
    for (size_t k = 0; k < sizeof threads / sizeof *threads; k++) {
        float *got = malloc(bytes);
        assert_non_null(got);
        memset(got, 0xAB, bytes); /* every float must be written */
        p.threads = threads[k];
        assert_int_equal(la_cpu_embed_lexical((const char *const *)c.text, c.len, c.n, &p, got), LA_OK);
        for (size_t r = 0; r < c.n; r++)
            if (memcmp(got + r * dim, want + r * dim, dim * sizeof *got)) {
                fprintf(stderr, "row %zu (%zu bytes) differs at %d threads, dim %u\n", r, c.len[r],
                        threads[k], dim);
                fail();
            }
        free(got);
    }
    free(want);
    corpus_free(&c);
}

static void test_same_bits_as_reference(void **state) {
    (void)state;
    check_against_reference(LA_EMBED_LEXICAL_DIM, 0.5f);
}

static void test_same_bits_other_dim_and_weight(void **state) {
    (void)state;
    check_against_reference(1000, 0.25f); /* not a power of two: the dimension is a remainder */
}

static void test_same_bits_one_group(void **state) {
    (void)state;
    check_against_reference(256, 1.0f); /* words only */
}

/* Every loop this CPU has below its best, against the reference (the tests above took the best):
 * the portable loop, and AVX2 where the CPU has AVX-512. */
static void test_same_bits_every_loop(void **state) {
    (void)state;
    static const char *const names[] = {"portable loop", "AVX2", "AVX-512"};
    int best = la_cpu_lexical_loop(2);
    assert_string_equal(la_cpu_lexical_kernel(), names[best]);
    for (int most = 0; most < best; most++) {
        la_cpu_lexical_loop(most);
        assert_string_equal(la_cpu_lexical_kernel(), names[most]);
        check_against_reference(LA_EMBED_LEXICAL_DIM, 0.5f);
    }
    la_cpu_lexical_loop(2);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_same_bits_as_reference),
        cmocka_unit_test(test_same_bits_other_dim_and_weight),
        cmocka_unit_test(test_same_bits_one_group),
        cmocka_unit_test(test_same_bits_every_loop),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
