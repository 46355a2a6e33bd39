/*
 * test_threeset.c - properties of the three-set split maker over many random labeled inputs and
 * seeds: every row placed exactly once, groups never split, the per-class rules hold, and the same
 * rows and seed give the same split whatever the input order.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exact.h"
#include "groups.h"
#include "leakaudit.h"
#include "normalize.h"
#include "threeset.h"

typedef struct gen_row {
    char id[16], text[64], label[8], family[16];
    int has_family;
} gen_row;

/* A random labeled input: skewed classes, some families, some exact copies. */
static size_t generate(uint64_t seed, gen_row *rows, size_t max)
{
    uint64_t st = seed;
    size_t n = 20 + la_splitmix64(&st) % (max - 20);
    int ncls = 1 + (int)(la_splitmix64(&st) % 5);
    for (size_t i = 0; i < n; i++) {
        gen_row *r = &rows[i];
        snprintf(r->id, sizeof r->id, "r%04zu", i);
        uint64_t x = la_splitmix64(&st);
        int cls = (int)(x % 100 < 50 ? 0 : x % (uint64_t)ncls); /* class 0 is the majority */
        snprintf(r->label, sizeof r->label, "c%d", cls);
        snprintf(r->text, sizeof r->text, "row text %zu", i);
        if (i > 3 && la_splitmix64(&st) % 10 == 0) /* an exact copy of an earlier row, maybe relabeled */
            snprintf(r->text, sizeof r->text, "row text %zu", (size_t)(la_splitmix64(&st) % i));
        r->has_family = la_splitmix64(&st) % 4 == 0;
        snprintf(r->family, sizeof r->family, "f%d", (int)(la_splitmix64(&st) % 8));
    }
    return n;
}

static la_table *build(const gen_row *rows, size_t n, const size_t *perm)
{
    la_table *t;
    assert_int_equal(la_table_new(&t), LA_OK);
    uint32_t part;
    assert_int_equal(la_table_part(t, "input", &part), LA_OK);
    for (size_t k = 0; k < n; k++) {
        const gen_row *g = &rows[perm[k]];
        la_row r;
        memset(&r, 0, sizeof r);
        r.part = part;
        r.date = LA_NO_DATE;
        assert_int_equal(la_table_strdup(t, g->id, strlen(g->id), &r.id), LA_OK);
        assert_int_equal(la_table_strdup(t, g->text, strlen(g->text), &r.text), LA_OK);
        assert_int_equal(la_table_strdup(t, g->label, strlen(g->label), &r.label), LA_OK);
        if (g->has_family) assert_int_equal(la_table_strdup(t, g->family, strlen(g->family), &r.family), LA_OK);
        assert_int_equal(la_table_append(t, &r, NULL), LA_OK);
    }
    assert_int_equal(la_normalize_table(t, LA_NORM_NFKC, 1), LA_OK);
    return t;
}

typedef struct made {
    la_table *t;
    la_exact_result ex;
    uint32_t *rep;
    la_threeset ts;
    la_pairs links;
} made;

static void make(made *m, const gen_row *rows, size_t n, const size_t *perm, const la_threeset_params *p)
{
    memset(m, 0, sizeof *m);
    m->t = build(rows, n, perm);
    assert_int_equal(la_exact_find(m->t, UINT32_MAX, &m->links, &m->ex), LA_OK);
    for (size_t i = 0; i < n; i++)
        if (m->ex.dup_of[i] != LA_NOT_DUP) {
            la_pair q = la_pair_make(m->ex.dup_of[i], (uint32_t)i, LA_KIND_EXACT);
            assert_int_equal(la_pairs_push(&m->links, &q), LA_OK);
        }
    m->rep = malloc(n * sizeof *m->rep);
    assert_non_null(m->rep);
    assert_int_equal(la_groups_build(m->t, &m->links, m->rep), LA_OK);
    assert_int_equal(la_threeset_make(m->t, m->rep, m->ex.dup_of, p, &m->ts), LA_OK);
}

static void unmake(made *m)
{
    la_threeset_free(&m->ts);
    free(m->rep);
    la_pairs_free(&m->links);
    la_exact_result_free(&m->ex);
    la_table_free(m->t);
}

static void test_properties_over_random_inputs(void **state)
{
    static gen_row rows[400];
    size_t perm[400];
    for (uint64_t seed = 1; seed <= 200; seed++) {
        size_t n = generate(seed * 7919, rows, 400);
        for (size_t i = 0; i < n; i++) perm[i] = i;
        la_threeset_params p = {seed, (size_t)(seed % 4), 0.1 + 0.8 * (double)(seed % 9) / 8.0};
        made m;
        make(&m, rows, n, perm, &p);
        const la_row *r = la_table_rows_const(m.t);

        /* every row exactly once; counts add up */
        size_t total = 0;
        for (int s = 0; s < LA_SET_COUNT; s++) total += m.ts.rows[s];
        assert_int_equal(total, n);
        for (size_t i = 0; i < n; i++) assert_true(m.ts.set[i] < LA_SET_COUNT);

        /* only later exact copies are set aside */
        for (size_t i = 0; i < n; i++)
            assert_int_equal(m.ts.set[i] == LA_SET_QUARANTINE, m.ex.dup_of[i] != LA_NOT_DUP);

        /* groups never split: every placed member of a group shares one set */
        for (size_t i = 0; i < n; i++)
            for (size_t j = i + 1; j < n; j++)
                if (m.rep[i] == m.rep[j] && m.ts.set[i] != LA_SET_QUARANTINE && m.ts.set[j] != LA_SET_QUARANTINE)
                    assert_int_equal(m.ts.set[i], m.ts.set[j]);

        /* per class: demos at most N and never the last two rows; two or more groups left means dev
         * and test both get one; a single group left goes to dev */
        for (size_t c = 0; c < m.ts.nclasses; c++) {
            const la_threeset_class *cls = &m.ts.classes[c];
            size_t placed = cls->rows[LA_SET_DEMOS] + cls->rows[LA_SET_DEV] + cls->rows[LA_SET_TEST];
            assert_true(cls->rows[LA_SET_DEMOS] <= p.demos_per_class);
            if (cls->rows[LA_SET_DEMOS]) assert_true(placed - cls->rows[LA_SET_DEMOS] >= 2);
            /* count the groups of this class left after demos */
            size_t left_groups = 0;
            for (size_t i = 0; i < n; i++) {
                if (m.ts.set[i] != LA_SET_DEV && m.ts.set[i] != LA_SET_TEST) continue;
                int first = 1;
                for (size_t j = 0; j < i; j++)
                    if (m.rep[j] == m.rep[i] && (m.ts.set[j] == LA_SET_DEV || m.ts.set[j] == LA_SET_TEST)) first = 0;
                /* the group's class is its smallest placed id's label */
                size_t owner = i;
                for (size_t j = 0; j < n; j++)
                    if (m.rep[j] == m.rep[i] && m.ts.set[j] != LA_SET_QUARANTINE && strcmp(r[j].id, r[owner].id) < 0) owner = j;
                if (first && strcmp(r[owner].label, cls->label) == 0) left_groups++;
            }
            if (left_groups >= 2) {
                assert_true(cls->rows[LA_SET_DEV] >= 1);
                assert_true(cls->rows[LA_SET_TEST] >= 1);
            }
            if (left_groups == 1) assert_int_equal(cls->rows[LA_SET_TEST], 0);
            assert_int_equal(cls->thin, cls->rows[LA_SET_TEST] < 5);
        }
        unmake(&m);
    }
}

static void test_same_seed_same_split_in_any_order(void **state)
{
    static gen_row rows[400];
    size_t perm[400];
    for (uint64_t seed = 1; seed <= 30; seed++) {
        size_t n = generate(seed * 104729, rows, 400);
        la_threeset_params p = {seed * 31, 2, 0.5};
        char fp0[LA_SET_COUNT][65], fp1[LA_SET_COUNT][65];
        for (int order = 0; order < 2; order++) {
            for (size_t i = 0; i < n; i++) perm[i] = order ? n - 1 - i : i;
            if (order) { /* a seeded shuffle on top of the reversal */
                uint64_t st = seed;
                for (size_t i = n; i > 1; i--) {
                    size_t j = (size_t)(la_splitmix64(&st) % i), tmp = perm[i - 1];
                    perm[i - 1] = perm[j];
                    perm[j] = tmp;
                }
            }
            made m;
            make(&m, rows, n, perm, &p);
            for (int s = 0; s < LA_SET_COUNT; s++) la_threeset_fingerprint(m.t, &m.ts, s, NULL, order ? fp1[s] : fp0[s]);
            unmake(&m);
        }
        for (int s = 0; s < LA_SET_COUNT; s++) assert_string_equal(fp0[s], fp1[s]);
    }
}

static void test_fingerprint_tracks_content_not_spacing(void **state)
{
    gen_row rows[30];
    size_t perm[30];
    for (size_t i = 0; i < 30; i++) {
        memset(&rows[i], 0, sizeof rows[i]);
        snprintf(rows[i].id, sizeof rows[i].id, "q%02zu", i);
        snprintf(rows[i].text, sizeof rows[i].text, "Question number %zu", i);
        snprintf(rows[i].label, sizeof rows[i].label, "%s", i % 2 ? "yes" : "no");
        perm[i] = i;
    }
    la_threeset_params p = {5, 0, 0.5};
    char base[65], spaced[65], relabeled[65], keyed[65];
    made m;
    make(&m, rows, 30, perm, &p);
    la_threeset_fingerprint(m.t, &m.ts, LA_SET_TEST, NULL, base);
    unsigned char key[32] = {1, 2, 3};
    la_threeset_fingerprint(m.t, &m.ts, LA_SET_TEST, key, keyed);
    /* pick a test row to change */
    size_t victim = 0;
    while (m.ts.set[victim] != LA_SET_TEST) victim++;
    const char *vid = la_table_rows_const(m.t)[victim].id;
    size_t vi = (size_t)atoi(vid + 1);
    unmake(&m);
    assert_string_not_equal(base, keyed);

    snprintf(rows[vi].text, sizeof rows[vi].text, "  QUESTION   number %zu ", vi);
    make(&m, rows, 30, perm, &p);
    la_threeset_fingerprint(m.t, &m.ts, LA_SET_TEST, NULL, spaced);
    unmake(&m);
    assert_string_equal(base, spaced);

    snprintf(rows[vi].label, sizeof rows[vi].label, "%s", strcmp(rows[vi].label, "yes") ? "yes" : "no");
    make(&m, rows, 30, perm, &p);
    /* relabeling may move the row; the fingerprint of the set that holds it must differ from before */
    la_threeset_fingerprint(m.t, &m.ts, LA_SET_TEST, NULL, relabeled);
    unmake(&m);
    assert_string_not_equal(base, relabeled);
}

static void test_splitmix64_reference(void **state)
{
    /* SplitMix64 from state 0: the published first outputs */
    uint64_t st = 0;
    assert_true(la_splitmix64(&st) == 0xE220A8397B1DCDAFull);
    assert_true(la_splitmix64(&st) == 0x6E789E6AA1B965F4ull);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_splitmix64_reference),
        cmocka_unit_test(test_properties_over_random_inputs),
        cmocka_unit_test(test_same_seed_same_split_in_any_order),
        cmocka_unit_test(test_fingerprint_tracks_content_not_spacing),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
