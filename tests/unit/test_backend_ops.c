/* test_backend_ops.c - every op of every available backend against the CPU reference, like ggml's
 * test-backend-ops: on real text (the questions of examples/gsm8k) plus edge cases (an empty
 * document, one shorter than a shingle, a very long one, non-ASCII and malformed UTF-8, whitespace
 * and punctuation only). Integers must be bit-identical; the tiles must give the same pairs, cosines
 * and top-k lists. The reference is the direct call of the CPU loops (the portable MinHash loop, a
 * qsort for the stable key sort), so the CPU backend's table is checked too. A backend whose probe
 * fails (no device, or no CUDA in the build) is named with the ops not compared and the reason. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend_ops.h"
#include "embed_lexical.h"
#include "gsm8k_fixture.h"
#include "near_kernels.h"
#include "semantic.h"
#include "sort_fixture.h"

static const char *op_names = "shingle_minhash minhash simhash lsh_keys sort_keys simtile";

/* The example's questions followed by the edge cases, as one CSR batch. */
typedef struct batch {
    gsm8k g;
    char *text;
    uint64_t *off;
    size_t n;
} batch;

static void batch_load(batch *b)
{
    gsm8k_load(&b->g);
    static const char *edge[] = {"", "one", "  \t\n ", "?!... ,;", "zürich naïve 数学 résumé — ∑ x² ≥ 0 🙂",
                                 "bad \xc3 utf8 \xff\xfe tail \xe2\x82"};
    size_t ne = sizeof edge / sizeof *edge, longlen = 200000;
    size_t base = (size_t)b->g.off[b->g.n], total = base + longlen;
    for (size_t i = 0; i < ne; i++) total += strlen(edge[i]);
    b->n = b->g.n + ne + 1;
    b->text = malloc(total);
    b->off = malloc((b->n + 1) * sizeof *b->off);
    memcpy(b->text, b->g.text, base);
    memcpy(b->off, b->g.off, (b->g.n + 1) * sizeof *b->off);
    size_t at = base, d = b->g.n;
    for (size_t i = 0; i < ne; i++) {
        memcpy(b->text + at, edge[i], strlen(edge[i]));
        at += strlen(edge[i]);
        b->off[++d] = at;
    }
    for (size_t i = 0; i < longlen; i++) b->text[at + i] = "the long document repeats "[i % 26];
    at += longlen;
    b->off[++d] = at;
}

static void batch_free(batch *b)
{
    free(b->text);
    free(b->off);
    gsm8k_free(&b->g);
}

/* Shingle hashes of every document: the sorted multiset (uniq 0) or the distinct set (uniq 1). */
static uint64_t *shingles(const batch *b, int kind, int n, int uniq, uint64_t **off_out)
{
    uint64_t *off = malloc((b->n + 1) * sizeof *off), *h = malloc((b->off[b->n] + b->n + 1) * sizeof *h);
    off[0] = 0;
    for (size_t i = 0; i < b->n; i++) {
        size_t len = (size_t)(b->off[i + 1] - b->off[i]);
        size_t m = la_cpu_shingle(b->text + b->off[i], len, kind, n, h + off[i], la_shingle_bound(len));
        la_cpu_shingle_sort(h + off[i], m);
        if (uniq) m = la_cpu_shingle_unique(h + off[i], m);
        off[i + 1] = off[i] + m;
    }
    *off_out = off;
    return h;
}

typedef struct ctx {
    batch b;
    const la_backend *be[8];
    size_t nbe;
} ctx;

static int setup_all(void **state)
{
    ctx *c = calloc(1, sizeof *c);
    batch_load(&c->b);
    size_t n;
    const la_backend *const *t = la_backends_builtin(&n);
    for (size_t i = 0; i < n; i++) {
        char desc[256] = "";
        la_status s = t[i]->probe(t[i], desc, sizeof desc);
        if (s == LA_OK) {
            printf("backend %s (%s): every op compared with the reference\n", t[i]->name, desc);
            c->be[c->nbe++] = t[i];
        } else {
            printf("backend %s: not compared: %s (%s)\n", t[i]->name, op_names, la_last_error());
            la_error_clear();
        }
    }
    assert_true(c->nbe >= 1 && c->be[0] == &la_backend_cpu);
    *state = c;
    return 0;
}

static int teardown_all(void **state)
{
    ctx *c = *state;
    batch_free(&c->b);
    free(c);
    return 0;
}

static void test_shingle_minhash(void **state)
{
    ctx *c = *state;
    const batch *b = &c->b;
    const int shapes[][3] = {{LA_SHINGLE_WORD, 2, 128}, {LA_SHINGLE_CHAR, 5, 200}, {LA_SHINGLE_WORD, 1, 64}};
    uint64_t *buf = malloc(la_shingle_bound(b->off[b->n]) * sizeof *buf);
    for (size_t sh = 0; sh < 3; sh++) {
        int kind = shapes[sh][0], n = shapes[sh][1], k = shapes[sh][2];
        uint32_t *ref = malloc(b->n * k * sizeof *ref), *rc = malloc(b->n * sizeof *rc);
        for (size_t i = 0; i < b->n; i++) {
            size_t len = (size_t)(b->off[i + 1] - b->off[i]);
            size_t m = la_cpu_shingle(b->text + b->off[i], len, kind, n, buf, la_shingle_bound(len));
            la_cpu_minhash_portable(buf, m, k, ref + i * k);
            rc[i] = (uint32_t)m;
        }
        assert_int_equal(rc[b->g.n], 0);     /* the empty document */
        assert_int_equal(rc[b->g.n + 1], 1); /* shorter than a shingle: one of all its tokens */
        for (size_t e = 0; e < c->nbe; e++) {
            uint32_t *sig = malloc(b->n * k * sizeof *sig), *cnt = malloc(b->n * sizeof *cnt);
            assert_int_equal(c->be[e]->shingle_minhash(c->be[e], b->text, b->off, b->n, kind, n, k, sig, cnt), LA_OK);
            assert_memory_equal(sig, ref, b->n * k * sizeof *sig);
            assert_memory_equal(cnt, rc, b->n * sizeof *cnt);
            free(sig);
            free(cnt);
        }
        free(ref);
        free(rc);
    }
    free(buf);
}

static void test_minhash_simhash_keys(void **state)
{
    ctx *c = *state;
    const batch *b = &c->b;
    const int k = 128, bands = 16, rows = 8;
    uint64_t *uoff, *moff;
    uint64_t *uh = shingles(b, LA_SHINGLE_WORD, 2, 1, &uoff), *mh = shingles(b, LA_SHINGLE_WORD, 2, 0, &moff);
    uint32_t *sig = malloc(b->n * k * sizeof *sig);
    uint64_t *keys = malloc(b->n * bands * sizeof *keys), *simh = malloc(b->n * sizeof *simh);
    for (size_t i = 0; i < b->n; i++) {
        la_cpu_minhash_portable(uh + uoff[i], (size_t)(uoff[i + 1] - uoff[i]), k, sig + i * k);
        la_cpu_lsh_keys(sig + i * k, bands, rows, keys + i * bands);
        simh[i] = la_cpu_simhash(mh + moff[i], (size_t)(moff[i + 1] - moff[i]));
    }
    for (size_t e = 0; e < c->nbe; e++) {
        const la_backend *be = c->be[e];
        uint32_t *s2 = malloc(b->n * k * sizeof *s2);
        uint64_t *k2 = malloc(b->n * bands * sizeof *k2), *h2 = malloc(b->n * sizeof *h2);
        assert_int_equal(be->minhash(be, uh, uoff, b->n, k, s2), LA_OK);
        assert_memory_equal(s2, sig, b->n * k * sizeof *s2);
        assert_int_equal(be->lsh_keys(be, sig, b->n, k, bands, rows, k2), LA_OK);
        assert_memory_equal(k2, keys, b->n * bands * sizeof *k2);
        assert_int_equal(be->simhash(be, mh, moff, b->n, h2), LA_OK);
        assert_memory_equal(h2, simh, b->n * sizeof *h2);
        /* a batch that starts inside the arrays (off[0] != 0) */
        assert_int_equal(be->minhash(be, uh, uoff + 100, 50, k, s2), LA_OK);
        assert_memory_equal(s2, sig + 100 * k, 50 * k * sizeof *s2);
        free(s2);
        free(k2);
        free(h2);
    }
    free(uh);
    free(mh);
    free(uoff);
    free(moff);
    free(sig);
    free(keys);
    free(simh);
}

/* The CPU sort against the one stable order over sizes around its insertion cut-off and well past
 * it, and keys whose differing bits lie anywhere: hashes with and without repeats, a common prefix
 * over low bits (as candidate pairs are), one differing bit at the top or the bottom, one key, and
 * runs already in order or in reverse. */
static void test_cpu_sort_shapes(void **state)
{
    (void)state;
    const size_t sizes[] = {0, 1, 2, 15, 16, 17, 33, 257, 1000, 70000};
    uint64_t r = 0x2545f4914f6cdd1dull;
    for (size_t z = 0; z < sizeof sizes / sizeof *sizes; z++) {
        size_t n = sizes[z];
        la_key_row *v = malloc((n ? n : 1) * sizeof *v);
        indexed *ref = malloc((n ? n : 1) * sizeof *ref);
        assert_true(v && ref);
        for (int kind = 0; kind < 8; kind++) {
            for (size_t i = 0; i < n; i++) {
                r ^= r << 13, r ^= r >> 7, r ^= r << 17;
                uint64_t key = kind == 0   ? r
                               : kind == 1 ? (r % (n / 8 + 1)) * 0xd6e8feb86659fd93ull
                               : kind == 2 ? 1ull << 62 | (r % 600) << 17 | (r >> 60)
                               : kind == 3 ? (r >> 63) << 63 | 0x1234
                               : kind == 4 ? 0xfff0 | (r & 1)
                               : kind == 5 ? 7
                               : kind == 6 ? (uint64_t)i << 20
                                           : ~((uint64_t)i << 3);
                v[i] = (la_key_row){.key = key, .row = (uint32_t)i};
                ref[i] = (indexed){v[i], i};
            }
            if (n) qsort(ref, n, sizeof *ref, cmp_indexed);
            assert_int_equal(la_sort_key_rows(v, n), LA_OK);
            for (size_t i = 0; i < n; i++) {
                assert_true(v[i].key == ref[i].e.key);
                assert_int_equal(v[i].row, ref[i].e.row);
            }
        }
        free(v);
        free(ref);
    }
}

static void test_sort_keys(void **state)
{
    ctx *c = *state;
    const batch *b = &c->b;
    /* the example's band keys, each also under a second row: many equal keys whose order counts */
    const int k = 128, bands = 16, rows = 8;
    uint64_t *off, *h = shingles(b, LA_SHINGLE_WORD, 2, 1, &off);
    uint32_t *sig = malloc(b->n * k * sizeof *sig);
    size_t n = b->n * bands * 2;
    la_key_row *in = malloc(n * sizeof *in);
    indexed *ref = malloc(n * sizeof *ref);
    for (size_t i = 0; i < b->n; i++) {
        uint64_t keys[16];
        la_cpu_minhash_portable(h + off[i], (size_t)(off[i + 1] - off[i]), k, sig + i * k);
        la_cpu_lsh_keys(sig + i * k, bands, rows, keys);
        for (int j = 0; j < bands; j++) {
            in[(i * bands + j) * 2] = (la_key_row){.key = keys[j], .row = (uint32_t)i};
            in[(i * bands + j) * 2 + 1] = (la_key_row){.key = keys[j] & 0xffff00000000ffffull, .row = (uint32_t)(b->n - i)};
        }
    }
    for (size_t i = 0; i < n; i++) ref[i] = (indexed){in[i], i};
    qsort(ref, n, sizeof *ref, cmp_indexed);
    for (size_t e = 0; e < c->nbe; e++) {
        la_key_row *v = malloc(n * sizeof *v);
        memcpy(v, in, n * sizeof *v);
        assert_int_equal(c->be[e]->sort_keys(c->be[e], v, n), LA_OK);
        for (size_t i = 0; i < n; i++) {
            assert_true(v[i].key == ref[i].e.key);
            assert_int_equal(v[i].row, ref[i].e.row);
        }
        assert_int_equal(c->be[e]->sort_keys(c->be[e], v, 0), LA_OK);
        free(v);
    }
    free(h);
    free(off);
    free(sig);
    free(in);
    free(ref);
}

static void test_simtile(void **state)
{
    ctx *c = *state;
    const la_table *t = c->b.g.f.t;
    float *emb;
    assert_int_equal(la_semantic_embed_lexical(t, 0, 2, &emb), LA_OK);
    la_embed_lexical_params ep;
    la_embed_lexical_params_default(&ep);
    size_t d = ep.dim, n = la_table_nrows(t), nq = 0, ns = 0;
    const la_row *rows = la_table_rows_const(t);
    float *Q = malloc(n * d * sizeof *Q), *S = malloc(n * d * sizeof *S);
    for (size_t i = 0; i < n; i++) {
        if (rows[i].part == c->b.g.f.test) memcpy(Q + nq++ * d, emb + i * d, d * sizeof *Q);
        else memcpy(S + ns++ * d, emb + i * d, d * sizeof *S);
    }
    la_simtile_params p = {.threshold = 0.5f, .topk = 3, .threads = 2}; /* blocks 0: the defaults */
    la_simtile_hits ref = {0};
    uint32_t *ri = malloc(nq * 3 * sizeof *ri);
    float *rc = malloc(nq * 3 * sizeof *rc);
    la_simtile_top_init(ri, rc, nq, 3);
    assert_int_equal(la_cpu_simtile(Q, nq, S, ns, d, 0, &p, &ref, ri, rc, NULL), LA_OK);
    assert_true(ref.n > 0);
    for (size_t e = 0; e < c->nbe; e++) {
        la_simtile_hits got = {0};
        uint32_t *gi = malloc(nq * 3 * sizeof *gi);
        float *gc = malloc(nq * 3 * sizeof *gc);
        size_t rescored = 0;
        la_simtile_top_init(gi, gc, nq, 3);
        assert_int_equal(c->be[e]->simtile(c->be[e], Q, nq, S, ns, d, 0, &p, &got, gi, gc, &rescored), LA_OK);
        assert_int_equal(got.n, ref.n);
        assert_memory_equal(got.v, ref.v, ref.n * sizeof *ref.v);
        assert_memory_equal(gi, ri, nq * 3 * sizeof *gi);
        assert_memory_equal(gc, rc, nq * 3 * sizeof *gc);
        la_simtile_hits_free(&got);
        free(gi);
        free(gc);
    }
    la_simtile_hits_free(&ref);
    free(ri);
    free(rc);
    free(Q);
    free(S);
    free(emb);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_shingle_minhash),
        cmocka_unit_test(test_minhash_simhash_keys),
        cmocka_unit_test(test_cpu_sort_shapes),
        cmocka_unit_test(test_sort_keys),
        cmocka_unit_test(test_simtile),
    };
    return cmocka_run_group_tests(tests, setup_all, teardown_all);
}
