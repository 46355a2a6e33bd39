/* test_near.c - the near tier end to end on small tables: an edited copy and a quoted copy found
 * with their scores, unrelated rows left alone, the boundary and `within` rules (also for a quote
 * found by containment inside one partition), and the same output for any thread count. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdatomic.h>
#include <string.h>
#include <pthread.h>
#include <sys/wait.h>
#include <unistd.h>

#include "near.h"
#include "parallel.h"
#include "table_fixture.h"

static const la_pair *find(const la_pairs *p, size_t a, size_t b)
{
    for (size_t i = 0; i < p->n; i++)
        if (p->v[i].a == a && p->v[i].b == b) return &p->v[i];
    return NULL;
}

/* A deterministic pseudo-random text of n words over a 5000-word vocabulary. */
static char *text(uint64_t seed, int n)
{
    char *s = malloc((size_t)n * 8 + 1), *p = s;
    uint64_t x = seed * 0x9e3779b97f4a7c15ull + 1;
    for (int i = 0; i < n; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        p += sprintf(p, "%sw%u", i ? " " : "", (unsigned)(x % 5000));
    }
    return s;
}

static void test_edited_and_quoted_copies(void **state)
{
    fixture f;
    setup(&f);
    const char *q = "which river flows through the ancient city of baghdad and joins the euphrates "
                    "before it reaches the persian gulf near basra";
    char *passage = malloc(4096), *filler1 = text(1, 60), *filler2 = text(2, 60);
    snprintf(passage, 4096, "%s %s %s", filler1, "in which year did the first crewed spacecraft land on the "
                                                 "moon and who was the commander of that mission",
             filler2);
    size_t d_q = add(&f, f.dev, "d-q", q);
    size_t d_p = add(&f, f.dev, "d-passage", passage);
    char *other = text(3, 40);
    size_t d_x = add(&f, f.dev, "d-unrelated", other);
    add(&f, f.dev, "d-empty", NULL);
    /* One word replaced: 2 of the 21 word bigrams change on each side. */
    size_t t_q = add(&f, f.test, "t-edited",
                     "which river flows through the ancient city of baghdad and joins the tigris "
                     "before it reaches the persian gulf near basra");
    size_t t_p = add(&f, f.test, "t-quoted",
                     "in which year did the first crewed spacecraft land on the moon and who was the "
                     "commander of that mission");
    char *other2 = text(4, 40);
    size_t t_x = add(&f, f.test, "t-unrelated", other2);

    la_near_params p;
    la_near_params_default(&p);
    p.threads = 2;
    la_pairs out = {0};
    la_near_stats st;
    assert_int_equal(la_near_find(f.t, f.test, &p, &out, &st), LA_OK);
    assert_int_equal(out.n, 2);

    const la_pair *e = find(&out, d_q, t_q);
    assert_non_null(e);
    assert_int_equal(e->kinds, LA_KIND_NEAR);
    /* 20 bigrams each, 18 shared: Jaccard 18/22, containment 18/20. */
    assert_true(fabsf(e->jaccard - 18.0f / 22.0f) < 1e-6f);
    assert_true(fabsf(e->containment - 18.0f / 20.0f) < 1e-6f);
    assert_true(e->minhash > 0.5f && e->minhash <= 1.0f);
    assert_true(e->simhash_dist >= 0 && e->simhash_dist <= 64);
    assert_true(isnan(e->cosine));

    const la_pair *c = find(&out, d_p, t_p);
    assert_non_null(c);
    assert_true(c->containment == 1.0f); /* every bigram of the question is in the passage */
    assert_true(c->jaccard < 0.3f);      /* so MinHash-LSH alone would miss it */
    assert_null(find(&out, d_x, t_x));

    assert_int_equal(st.rows_signed, 6);
    assert_true(st.bands * st.rows <= p.num_perm);
    assert_true(st.expected_recall > 0.5 && st.expected_recall <= 1.0);
    assert_int_equal(st.verified, 2);
    assert_true(st.candidates >= 2);

    /* Stricter thresholds drop both; disabling containment drops the quote only. */
    la_pairs none = {0};
    p.threshold = 0.9;
    p.containment_threshold = 1.01;
    assert_int_equal(la_near_find(f.t, f.test, &p, &none, NULL), LA_OK);
    assert_int_equal(none.n, 0);
    p.threshold = 0.5;
    assert_int_equal(la_near_find(f.t, f.test, &p, &none, NULL), LA_OK);
    assert_int_equal(none.n, 1);
    assert_int_equal(none.v[0].a, d_q);
    la_pairs_free(&none);
    la_pairs_free(&out);
    free(passage);
    free(filler1);
    free(filler2);
    free(other);
    free(other2);
    la_table_free(f.t);
}

static void test_jaccard_and_containment_on_hand_made_sets(void **state)
{
    fixture f;
    setup(&f);
    /* Word 1-grams: A = {a b c d e}, B = {a b c d f}: Jaccard 4/6, containment 4/5. */
    size_t a = add(&f, f.dev, "a", "alpha bravo charlie delta echo");
    size_t b = add(&f, f.test, "b", "alpha bravo charlie delta foxtrot");
    la_near_params p;
    la_near_params_default(&p);
    p.shingle_size = 1;
    p.threshold = 0.6;
    p.containment_min_shingles = 3;
    la_pairs out = {0};
    assert_int_equal(la_near_find(f.t, f.test, &p, &out, NULL), LA_OK);
    assert_int_equal(out.n, 1);
    assert_int_equal(out.v[0].a, a);
    assert_int_equal(out.v[0].b, b);
    assert_true(fabsf(out.v[0].jaccard - 4.0f / 6.0f) < 1e-6f);
    assert_true(fabsf(out.v[0].containment - 0.8f) < 1e-6f);
    /* Just above both scores: not a near copy. */
    la_pairs none = {0};
    p.threshold = 0.67;
    p.containment_threshold = 0.81;
    assert_int_equal(la_near_find(f.t, f.test, &p, &none, NULL), LA_OK);
    assert_int_equal(none.n, 0);
    /* Containment at 0.8 counts only when the smaller set is large enough. */
    p.containment_threshold = 0.8;
    assert_int_equal(la_near_find(f.t, f.test, &p, &none, NULL), LA_OK);
    assert_int_equal(none.n, 1);
    none.n = 0;
    p.containment_min_shingles = 6;
    assert_int_equal(la_near_find(f.t, f.test, &p, &none, NULL), LA_OK);
    assert_int_equal(none.n, 0);
    la_pairs_free(&none);
    la_pairs_free(&out);
    la_table_free(f.t);
}

static void test_boundary_and_within(void **state)
{
    fixture f;
    setup(&f);
    uint32_t train;
    assert_int_equal(la_table_part(f.t, "train", &train), LA_OK);
    const char *s = "the same sentence appears in several partitions of this evaluation set today";
    size_t d1 = add(&f, f.dev, "d1", s);
    size_t d2 = add(&f, f.dev, "d2", s);
    size_t tr = add(&f, train, "tr", s);
    size_t t1 = add(&f, f.test, "t1", s);
    la_pairs out = {0};
    la_near_params p;
    la_near_params_default(&p);
    assert_int_equal(la_near_find(f.t, f.test, &p, &out, NULL), LA_OK);
    /* Only pairs with the held-out side, held-out row as b: (d1,t1) (d2,t1) (tr,t1). */
    assert_int_equal(out.n, 3);
    assert_non_null(find(&out, d1, t1));
    assert_non_null(find(&out, d2, t1));
    assert_non_null(find(&out, tr, t1));
    for (size_t i = 0; i < out.n; i++) assert_true(out.v[i].jaccard == 1.0f);
    la_pairs w = {0};
    p.within = 1;
    assert_int_equal(la_near_find(f.t, f.test, &p, &w, NULL), LA_OK);
    /* Plus the dev copy inside dev (never dev-train: neither side is held out). */
    assert_int_equal(w.n, 4);
    assert_non_null(find(&w, d1, d2));
    assert_null(find(&w, d1, tr));
    assert_null(find(&w, d2, tr));
    /* The pairs are appended after what was there, sorted by (b, a). */
    assert_int_equal(la_near_find(f.t, f.test, &p, &w, NULL), LA_OK);
    assert_int_equal(w.n, 8);
    for (size_t i = 5; i < 8; i++)
        assert_true(w.v[i - 1].b < w.v[i].b || (w.v[i - 1].b == w.v[i].b && w.v[i - 1].a < w.v[i].a));
    la_pairs_free(&w);
    la_pairs_free(&out);
    la_table_free(f.t);
}

static void test_quote_within_one_partition(void **state)
{
    fixture f;
    setup(&f);
    uint32_t train;
    assert_int_equal(la_table_part(f.t, "train", &train), LA_OK);
    const char *quote = "in which year did the first crewed spacecraft land on the moon and who was the "
                        "commander of that mission";
    char *before = text(5, 60), *after = text(6, 60), *passage = malloc(4096), *held = text(7, 40);
    snprintf(passage, 4096, "%s %s %s", before, quote, after);
    size_t d_p = add(&f, f.dev, "d-passage", passage);
    size_t d_q = add(&f, f.dev, "d-quote", quote);
    size_t tr_q = add(&f, train, "tr-quote", quote);
    add(&f, f.test, "t-unrelated", held);
    la_near_params p;
    la_near_params_default(&p);
    la_pairs out = {0};
    assert_int_equal(la_near_find(f.t, f.test, &p, &out, NULL), LA_OK);
    assert_int_equal(out.n, 0);
    /* With `within`: the quote inside its own partition's passage, found by containment (its Jaccard
     * is far below the threshold); dev-train pairs are not pairs, whatever their overlap. */
    p.within = 1;
    assert_int_equal(la_near_find(f.t, f.test, &p, &out, NULL), LA_OK);
    assert_int_equal(out.n, 1);
    const la_pair *e = find(&out, d_p, d_q);
    assert_non_null(e);
    assert_true(e->containment == 1.0f);
    assert_true(e->jaccard < 0.33f);
    assert_null(find(&out, d_p, tr_q));
    la_pairs_free(&out);
    free(before);
    free(after);
    free(passage);
    free(held);
    la_table_free(f.t);
}

/* The pairs of the path with `within` (every row keeps its keys and sample for tables of both
 * sides), those across the boundary, equal ref entry for entry: the same pairs as the path across
 * only, which signs the held-out rows first and probes their tables as the other side is signed. */
static void assert_same_as_within(const fixture *f, la_near_params p, const la_pairs *ref)
{
    la_pairs all = {0};
    p.within = 1;
    assert_int_equal(la_near_find(f->t, f->test, &p, &all, NULL), LA_OK);
    const la_row *r = la_table_rows_const(f->t);
    size_t w = 0;
    for (size_t i = 0; i < all.n; i++)
        if (r[all.v[i].a].part != r[all.v[i].b].part) all.v[w++] = all.v[i];
    assert_int_equal(w, ref->n);
    assert_memory_equal(all.v, ref->v, ref->n * sizeof *ref->v);
    la_pairs_free(&all);
}

/* The pairs and stats of f at p's defaults on one thread, into ref and ref_st; p keeps the
 * defaults. */
static void one_thread_reference(fixture *f, la_near_params *p, la_pairs *ref, la_near_stats *ref_st)
{
    la_near_params_default(p);
    p->threads = 1;
    assert_int_equal(la_near_find(f->t, f->test, p, ref, ref_st), LA_OK);
}

/* la_near_find at p gives ref's pairs from as many candidates as ref_st counts. */
static void assert_same_pairs(fixture *f, const la_near_params *p, const la_pairs *ref, const la_near_stats *ref_st)
{
    la_pairs got = {0};
    la_near_stats st;
    assert_int_equal(la_near_find(f->t, f->test, p, &got, &st), LA_OK);
    assert_int_equal(got.n, ref->n);
    assert_memory_equal(got.v, ref->v, ref->n * sizeof *ref->v);
    assert_int_equal(st.candidates_containment, ref_st->candidates_containment);
    assert_int_equal(st.candidates, ref_st->candidates);
    la_pairs_free(&got);
}

static void test_same_output_for_any_thread_count(void **state)
{
    fixture f;
    setup(&f);
    /* 600 dev and 200 test rows; every 4th test row is a copy of a dev row with a word changed or a
     * quote of it, every 4th (from the second) a passage that quotes a short dev row whole, the
     * rest unrelated. */
    char buf[4096];
    for (int i = 0; i < 600; i++) {
        char *s = text(1000 + (uint64_t)i, i % 3 ? 25 : 150), id[16];
        snprintf(id, sizeof id, "d%d", i);
        add(&f, f.dev, id, s);
        free(s);
    }
    for (int i = 0; i < 200; i++) {
        char *s = text(i % 4 ? 5000 + (uint64_t)i : 1000 + (uint64_t)(i * 3), i % 4 ? 30 : (i % 8 ? 25 : 150)), id[16];
        snprintf(buf, sizeof buf, "%s", s);
        if (i % 4 == 0) memcpy(buf, "zz", 2); /* edit the first word */
        if (i % 4 == 1) { /* a 25-word dev row inside a passage of 120 words */
            char *q = text(1000 + (uint64_t)(3 * i + 1) % 600, 25), *pre = text(7000 + (uint64_t)i, 60),
                 *post = text(8000 + (uint64_t)i, 35);
            snprintf(buf, sizeof buf, "%s %s %s", pre, q, post);
            free(q), free(pre), free(post);
        }
        snprintf(id, sizeof id, "t%d", i);
        add(&f, f.test, id, buf);
        free(s);
    }
    la_near_params p;
    la_pairs ref = {0};
    la_near_stats ref_st;
    one_thread_reference(&f, &p, &ref, &ref_st);
    assert_true(ref.n >= 40);
    assert_true(ref_st.candidates_containment > 0);
    /* and with the shingle sets kept between the phases (all of them; or too many to keep, so the
     * cache is given up during signing): the same pairs from the same candidates (a row's samples,
     * which pick among shingles of equal frequency by their order, do not change with the cache) */
    int counts[] = {2, 3, 8};
    size_t caches[] = {0, 64, (size_t)1 << 30};
    for (size_t k = 0; k < 3; k++)
        for (size_t m = 0; m < 3; m++) {
            p.threads = counts[k];
            p.set_cache_bytes = caches[m];
            assert_same_pairs(&f, &p, &ref, &ref_st);
        }
    /* two paths, the same pairs across (set cache off, and all sets kept) */
    for (size_t m = 0; m < 2; m++) {
        p.threads = 2;
        p.set_cache_bytes = caches[2 * m];
        assert_same_as_within(&f, p, &ref);
    }
    la_pairs_free(&ref);
    la_table_free(f.t);
}

static char *words_of(const char *s, int from, int n);

/* A held-out side of 800 rows of 120 words (about 95k distinct shingles: a frequency table of more
 * slots than one item of its filter's loop, so at two threads and more the filter is set in one
 * copy a thread and the copies ORed): the same pairs and candidates at 1, 2 and 8 threads. A bit
 * lost in the ORing loses the containment candidates of the rows behind it. */
static void test_large_held_out_side_any_thread_count(void **state)
{
    fixture f;
    setup(&f);
    char buf[2048];
    for (int i = 0; i < 400; i++) {
        char *s = text(20000 + (uint64_t)i, 100), id[16];
        snprintf(id, sizeof id, "d%d", i);
        add(&f, f.dev, id, s);
        free(s);
    }
    for (int i = 0; i < 800; i++) {
        char *s = text(40000 + (uint64_t)i, 120), id[16];
        if (i % 2 == 0) { /* a passage that quotes a dev row whole: a containment pair */
            char *q = text(20000 + (uint64_t)(i / 2), 100), *pre = words_of(s, 0, 20);
            snprintf(buf, sizeof buf, "%s %s", pre, q);
            free(q), free(pre);
        } else {
            snprintf(buf, sizeof buf, "%s", s);
        }
        snprintf(id, sizeof id, "t%d", i);
        add(&f, f.test, id, buf);
        free(s);
    }
    la_near_params p;
    la_pairs ref = {0};
    la_near_stats ref_st;
    one_thread_reference(&f, &p, &ref, &ref_st);
    assert_true(ref.n >= 390);
    assert_true(ref_st.candidates_containment >= 390);
    int counts[] = {2, 8};
    for (size_t k = 0; k < 2; k++) {
        p.threads = counts[k];
        assert_same_pairs(&f, &p, &ref, &ref_st);
        /* with the sets kept, each held-out row's shingles are split among the table's groups once
         * before they fill it */
        p.set_cache_bytes = (size_t)1 << 30;
        assert_same_pairs(&f, &p, &ref, &ref_st);
        p.set_cache_bytes = 0;
    }
    /* held-out rows flagged in skip are counted but not signed: with the sets kept, their shingles
     * are not split, and each group takes its own from their text; the same table either way */
    size_t n = la_table_nrows(f.t);
    uint8_t *skip = calloc(n, 1);
    const la_row *rows = la_table_rows_const(f.t);
    for (size_t i = 0; i < n; i++) skip[i] = rows[i].part == f.test && i % 7 == 3;
    la_pairs sref = {0};
    la_near_stats sref_st;
    la_near_params_default(&p);
    p.threads = 1;
    p.skip = skip;
    assert_int_equal(la_near_find(f.t, f.test, &p, &sref, &sref_st), LA_OK);
    assert_true(sref.n > 0 && sref.n < ref.n);
    for (size_t k = 0; k < 2; k++) {
        p.threads = counts[k];
        p.set_cache_bytes = (size_t)1 << 30;
        assert_same_pairs(&f, &p, &sref, &sref_st);
    }
    free(skip);
    la_pairs_free(&sref);
    la_pairs_free(&ref);
    la_table_free(f.t);
}

/* The words [from, from + n) of the text s (words separated by one space), in a new string. */
static char *words_of(const char *s, int from, int n)
{
    const char *b = s;
    for (int k = 0; k < from; k++) b = strchr(b, ' ') + 1;
    const char *e = b;
    for (int k = 0; k < n && *e; k++) {
        const char *sp = strchr(e, ' ');
        e = sp && k + 1 < n ? sp + 1 : (sp ? sp : e + strlen(e));
    }
    char *w = malloc((size_t)(e - b) + 1);
    memcpy(w, b, (size_t)(e - b));
    w[e - b] = 0;
    return w;
}

static void test_held_out_rows_that_repeat(void **state)
{
    fixture f;
    setup(&f);
    /* 8 passages of 150 words, each 30 times in the test partition (a table of the held-out
     * shingles sized for all 240 rows' shingles holds 8 passages' worth: it is built again
     * smaller), and 24 dev rows that quote 25 words of one passage, with 40 unrelated dev rows. */
    char *passage[8];
    for (int j = 0; j < 8; j++) passage[j] = text(9000 + (uint64_t)j, 150);
    char id[16];
    for (int i = 0; i < 240; i++) {
        snprintf(id, sizeof id, "t%d", i);
        add(&f, f.test, id, passage[i % 8]);
    }
    size_t quote[24];
    for (int i = 0; i < 64; i++) {
        char *s = i < 24 ? words_of(passage[i % 8], 10 + 4 * i, 25) : text(20000 + (uint64_t)i, 25);
        snprintf(id, sizeof id, "d%d", i);
        size_t at = add(&f, f.dev, id, s);
        if (i < 24) quote[i] = at;
        free(s);
    }
    la_near_params p;
    la_near_params_default(&p);
    la_pairs ref = {0};
    p.threads = 2;
    assert_int_equal(la_near_find(f.t, f.test, &p, &ref, NULL), LA_OK);
    /* every quote with each of its passage's 30 copies, found by containment */
    for (int i = 0; i < 24; i++) {
        size_t hits = 0;
        for (size_t q = 0; q < ref.n; q++)
            if (ref.v[q].a == quote[i] && ref.v[q].containment == 1.0f) hits++;
        assert_int_equal(hits, 30);
    }
    /* the same pairs as the path that tables the dev rows' samples instead */
    assert_same_as_within(&f, p, &ref);
    la_pairs_free(&ref);
    for (int j = 0; j < 8; j++) free(passage[j]);
    la_table_free(f.t);
}

static void test_bad_parameters(void **state)
{
    fixture f;
    setup(&f);
    add(&f, f.dev, "d", "some text here");
    la_near_params p;
    la_pairs out = {0};
    la_near_params_default(&p);
    assert_int_equal(la_near_find(f.t, 7, &p, &out, NULL), LA_EINVAL);
    p.threshold = 0.0;
    assert_int_equal(la_near_find(f.t, f.test, &p, &out, NULL), LA_EINVAL);
    la_near_params_default(&p);
    p.num_perm = 0;
    assert_int_equal(la_near_find(f.t, f.test, &p, &out, NULL), LA_EINVAL);
    la_near_params_default(&p);
    p.shingle_size = 0;
    assert_int_equal(la_near_find(f.t, f.test, &p, &out, NULL), LA_EINVAL);
    la_near_params_default(&p);
    p.simhash_k = 9;
    assert_int_equal(la_near_find(f.t, f.test, &p, &out, NULL), LA_EINVAL);
    assert_true(strlen(la_last_error()) > 0);
    assert_int_equal(out.n, 0);
    /* NULL parameters mean the defaults. */
    assert_int_equal(la_near_find(f.t, f.test, NULL, &out, NULL), LA_OK);
    la_table_free(f.t);
}

/* A loop whose failure happens on a thread other than the caller's: the caller's thread (worker 0)
 * only waits a little per chunk, the other workers fail theirs. The caller gets the status and the
 * message, which lived in the failing thread's error slot. */
static la_status fail_off_the_caller(void *ctx, int worker, size_t begin, size_t end)
{
    (void)ctx;
    if (worker == 0) {
        usleep(200);
        return LA_OK;
    }
    return la_error(LA_ENOMEM, "chunk [%zu, %zu) failed on purpose on worker %d", begin, end, worker);
}

static la_status succeed(void *ctx, int worker, size_t begin, size_t end)
{
    (void)ctx, (void)worker, (void)begin, (void)end;
    return LA_OK;
}

static void test_parallel_failure_reaches_the_caller(void **state)
{
    (void)state;
    for (int threads = 2; threads <= 4; threads++) {
        la_error_clear();
        assert_int_equal(la_parallel_for(threads, 100000, 10, fail_off_the_caller, NULL), LA_ENOMEM);
        assert_non_null(strstr(la_last_error(), "failed on purpose on worker"));
        assert_int_equal(la_parallel_for(threads, 100000, 10, succeed, NULL), LA_OK);
    }
}

/* Items of a loop each add their index to a per-worker sum (workers write their own slot). */
typedef struct sum_job {
    size_t sums[8];
    int nested; /* each item also runs a loop of its own (the team is busy: threads of its own) */
} sum_job;

static la_status add_items(void *ctx, int worker, size_t begin, size_t end)
{
    sum_job *j = ctx;
    for (size_t i = begin; i < end; i++) {
        j->sums[worker] += i;
        if (j->nested) {
            sum_job inner = {{0}, 0};
            if (la_parallel_for(2, 100, 7, add_items, &inner) != LA_OK) return LA_EINTERNAL;
            size_t t = 0;
            for (int w = 0; w < 8; w++) t += inner.sums[w];
            if (t != 4950) return LA_EINTERNAL;
        }
    }
    return LA_OK;
}

static size_t sum_loop(int threads, size_t n, int nested)
{
    sum_job j = {{0}, nested};
    if (la_parallel_for(threads, n, 3, add_items, &j) != LA_OK) return 0;
    size_t t = 0;
    for (int w = 0; w < 8; w++) t += j.sums[w];
    return t;
}

static void *loops_beside(void *arg)
{
    int *ok = arg;
    for (int r = 0; r < 300; r++) *ok &= sum_loop(2 + r % 3, 1000, 0) == 499500;
    return NULL;
}

/* A guided loop's chunks: every item once, each chunk at least `least` items (the last may be
 * fewer) and a share of what was left when it was taken, so a long loop takes far fewer chunks than
 * fixed ones of `least` would, and they shrink toward its end. */
typedef struct guided_job {
    atomic_uchar *seen;
    atomic_size_t chunks, small, late_big, big;
    size_t total, least, most;
} guided_job;

static la_status mark_items(void *ctx, int worker, size_t begin, size_t end)
{
    guided_job *j = ctx;
    (void)worker;
    for (size_t i = begin; i < end; i++) atomic_fetch_add(&j->seen[i], 1);
    atomic_fetch_add(&j->chunks, 1);
    if (end - begin < j->least && end != j->total) atomic_fetch_add(&j->small, 1);
    if (end - begin > j->most && end - begin > j->least) atomic_fetch_add(&j->big, 1);
    /* a chunk that starts in the last tenth takes at most a fourth of the items left then */
    if (begin >= j->total - j->total / 10 && end - begin > j->least && end - begin > (j->total - begin) / 4 + 1)
        atomic_fetch_add(&j->late_big, 1);
    return LA_OK;
}

static void test_parallel_guided_chunks(void **state)
{
    (void)state;
    size_t totals[] = {0, 1, 7, 1000, 100000};
    for (size_t k = 0; k < sizeof totals / sizeof *totals; k++)
        for (int threads = 1; threads <= 8; threads *= 2) {
            size_t total = totals[k], least = 5;
            guided_job j = {calloc(total + 1, 1), 0, 0, 0, 0, total, least, SIZE_MAX};
            assert_int_equal(la_parallel_for_guided(threads, total, least, SIZE_MAX, mark_items, &j), LA_OK);
            for (size_t i = 0; i < total; i++) assert_int_equal(atomic_load(&j.seen[i]), 1);
            assert_int_equal(atomic_load(&j.small), 0);
            assert_int_equal(atomic_load(&j.late_big), 0);
            if (total == 100000) {
                if (threads == 1) assert_int_equal(atomic_load(&j.chunks), total / least);
                else assert_true(atomic_load(&j.chunks) < total / least / 50);
            }
            free(j.seen);
            /* with a ceiling, no chunk above it: the first ones take it, the last ones shrink */
            guided_job c = {calloc(total + 1, 1), 0, 0, 0, 0, total, least, 4 * least};
            assert_int_equal(la_parallel_for_guided(threads, total, least, c.most, mark_items, &c), LA_OK);
            for (size_t i = 0; i < total; i++) assert_int_equal(atomic_load(&c.seen[i]), 1);
            assert_int_equal(atomic_load(&c.big), 0);
            assert_int_equal(atomic_load(&c.small), 0);
            if (total == 100000 && threads > 1) assert_true(atomic_load(&c.chunks) < total / least / 3);
            free(c.seen);
        }
    /* a failure stops it and reaches the caller, as in a loop of fixed chunks */
    la_error_clear();
    assert_int_equal(la_parallel_for_guided(3, 100000, 10, SIZE_MAX, fail_off_the_caller, NULL), LA_ENOMEM);
    assert_non_null(strstr(la_last_error(), "failed on purpose on worker"));
}

/* The kept threads: thousands of loops in a row at changing thread counts (a team grown and then
 * used by fewer), loops inside a loop's items, loops on two threads at once, and a forked child's
 * loops all add up every item once. */
static void test_parallel_loops_in_a_row(void **state)
{
    (void)state;
    for (int r = 0; r < 3000; r++) assert_int_equal(sum_loop(1 + r % 8, 1 + (size_t)r % 500, 0), (size_t)(r % 500) * (1 + (size_t)r % 500) / 2);
    assert_int_equal(sum_loop(4, 50, 1), 1225);
    int ok = 1;
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, loops_beside, &ok), 0);
    for (int r = 0; r < 300; r++) assert_int_equal(sum_loop(2 + r % 2, 2000, 0), 1999000);
    pthread_join(th, NULL);
    assert_true(ok);
#if defined(__SANITIZE_THREAD__)
#define TSAN_BUILD 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define TSAN_BUILD 1
#endif
#endif
#ifdef TSAN_BUILD
    return; /* ThreadSanitizer stops a forked child of a threaded process that starts threads */
#endif
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) _exit(sum_loop(4, 1000, 0) == 499500 && sum_loop(2, 10, 0) == 45 ? 0 : 1);
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parallel_loops_in_a_row),
        cmocka_unit_test(test_edited_and_quoted_copies),
        cmocka_unit_test(test_jaccard_and_containment_on_hand_made_sets),
        cmocka_unit_test(test_boundary_and_within),
        cmocka_unit_test(test_quote_within_one_partition),
        cmocka_unit_test(test_same_output_for_any_thread_count),
        cmocka_unit_test(test_held_out_rows_that_repeat),
        cmocka_unit_test(test_large_held_out_side_any_thread_count),
        cmocka_unit_test(test_bad_parameters),
        cmocka_unit_test(test_parallel_failure_reaches_the_caller),
        cmocka_unit_test(test_parallel_guided_chunks),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
