/*
 * test_audit.c - the audit's decisions on a hand-made row table: family pairs across the boundary,
 * time leaks on both sides of the cutoff, families spanning the cutoff, exact copies and duplicates
 * within a partition (and the exact join against one by hand over every pair of rows), leak
 * clusters numbered by smallest id whatever the row order, the outcome of every row, and the two
 * statistics the report prints.
 * Not for: reading files or writing reports (see test_load.c and tests/cli/).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "audit.h"
#include "exact.h"
#include "leakaudit.h"
#include "normalize.h"

enum { DEV = 0, TEST = 1, TRAIN = 2 }; /* partition indices; TEST is held out */

typedef struct spec {
    const char *id;
    int part;
    const char *family, *date, *text, *label;
} spec;

static int32_t day(const char *s)
{
    int32_t d;
    assert_int_equal(la_date_parse(s, strlen(s), 0, &d), LA_OK);
    return d;
}

static const char *dup_str(la_table *t, const char *s)
{
    const char *p = NULL;
    if (s) assert_int_equal(la_table_strdup(t, s, strlen(s), &p), LA_OK);
    return p;
}

/* Rows in the given order (order may be NULL), normalized and hashed. */
static la_table *table_of(const spec *rows, const size_t *order, size_t n)
{
    la_table *t;
    uint32_t k;
    assert_int_equal(la_table_new(&t), LA_OK);
    assert_int_equal(la_table_part(t, "dev", &k), LA_OK);
    assert_int_equal(la_table_part(t, "test", &k), LA_OK);
    assert_int_equal(la_table_part(t, "train", &k), LA_OK);
    for (size_t i = 0; i < n; i++) {
        const spec *s = &rows[order ? order[i] : i];
        la_row r;
        memset(&r, 0, sizeof r);
        r.id = dup_str(t, s->id);
        r.part = (uint32_t)s->part;
        r.family = dup_str(t, s->family);
        r.text = dup_str(t, s->text);
        r.label = dup_str(t, s->label);
        r.date = s->date ? day(s->date) : LA_NO_DATE;
        r.score = NAN;
        assert_int_equal(la_table_append(t, &r, NULL), LA_OK);
    }
    assert_int_equal(la_normalize_table(t, LA_NORM_NFKC, 1), LA_OK);
    return t;
}

static uint32_t idx(const la_table *t, const char *id)
{
    size_t i = la_table_find_id(t, id);
    if (i == (size_t)-1) fail_msg("no row '%s'", id);
    return (uint32_t)i;
}

static const char *id_of(const la_table *t, uint32_t i) { return la_table_rows_const(t)[i].id; }

/* The pair with these ids (seen a, held-out b) is present with exactly these kinds. */
static void expect_pair(const la_table *t, const la_pairs *p, const char *a, const char *b, uint32_t kinds)
{
    uint32_t ia = idx(t, a), ib = idx(t, b);
    for (size_t k = 0; k < p->n; k++)
        if (p->v[k].a == ia && p->v[k].b == ib) {
            assert_int_equal(p->v[k].kinds, kinds);
            return;
        }
    fail_msg("no pair %s -> %s", a, b);
}

typedef struct run {
    la_table *t;
    la_pairs pairs;
    la_audit a;
    la_exact_result ex;
} run;

/* The audit pipeline as `leakaudit audit` runs it: exact, family/time evidence, decide. */
static void audit_run(run *r, const spec *rows, const size_t *order, size_t n, const char *cutoff, la_resolve resolve)
{
    memset(r, 0, sizeof *r);
    r->t = table_of(rows, order, n);
    la_audit_opts o = {TEST, cutoff ? day(cutoff) : LA_NO_DATE, resolve, 0, 0};
    assert_int_equal(la_exact_find(r->t, TEST, &r->pairs, &r->ex), LA_OK);
    assert_int_equal(la_audit_evidence(r->t, &o, &r->pairs, &r->a), LA_OK);
    la_pairs_normalize(&r->pairs);
    assert_int_equal(la_audit_decide(r->t, &o, &r->pairs, r->ex.dup_of, &r->a), LA_OK);
}

static void run_free(run *r)
{
    la_audit_free(&r->a);
    la_exact_result_free(&r->ex);
    la_pairs_free(&r->pairs);
    la_table_free(r->t);
}

static uint32_t out_of(const run *r, const char *id) { return r->a.out[idx(r->t, id)]; }
static uint32_t why_of(const run *r, const char *id) { return r->a.why[idx(r->t, id)]; }
static uint32_t cluster_of(const run *r, const char *id) { return r->a.cluster[idx(r->t, id)]; }

#define Q LA_OUT_QUARANTINE

/* ---- family ---- */

static const spec k_families[] = {
    {"d1", DEV, "F", NULL, "alpha one", NULL},   {"d2", DEV, "F", NULL, "alpha two", NULL},
    {"t1", TEST, "F", NULL, "alpha three", NULL}, {"d3", DEV, "G", NULL, "beta one", NULL},
    {"d4", DEV, "G", NULL, "beta two", NULL},     {"t2", TEST, "H", NULL, "gamma one", NULL},
    {"tr1", TRAIN, "H", NULL, "gamma two", NULL}, {"t3", TEST, NULL, NULL, "delta", NULL},
};

static void test_family_pairs(void **state)
{
    run r;
    audit_run(&r, k_families, NULL, 8, NULL, LA_RESOLVE_QUARANTINE);
    /* one finding per family that crosses the boundary, by name; G stays inside dev */
    assert_int_equal(r.a.nfamilies, 2);
    const la_family_finding *f = &r.a.families[0];
    assert_string_equal(f->family, "F");
    assert_int_equal(f->nrows, 3);
    assert_true(f->crosses);
    assert_false(f->spans_cutoff);
    assert_string_equal(id_of(r.t, f->rows[0]), "d1"); /* by partition, then id */
    assert_string_equal(id_of(r.t, f->rows[1]), "d2");
    assert_string_equal(id_of(r.t, f->rows[2]), "t1");
    assert_string_equal(r.a.families[1].family, "H");

    /* one pair per cross member pair, the held-out row as b; any seen partition counts */
    assert_int_equal(r.pairs.n, 3);
    expect_pair(r.t, &r.pairs, "d1", "t1", LA_KIND_FAMILY);
    expect_pair(r.t, &r.pairs, "d2", "t1", LA_KIND_FAMILY);
    expect_pair(r.t, &r.pairs, "tr1", "t2", LA_KIND_FAMILY);

    for (size_t i = 0; i < 7; i++) {
        const char *id = k_families[i].id;
        int linked = strcmp(id, "d3") && strcmp(id, "d4");
        assert_int_equal(out_of(&r, id), linked ? Q : (uint32_t)k_families[i].part);
        assert_int_equal(why_of(&r, id), linked ? LA_WHY_LINKED : 0);
    }
    assert_int_equal(out_of(&r, "t3"), TEST);
    assert_int_equal(r.a.ntime, 0);
    run_free(&r);
}

static void test_resolve_keep_test(void **state)
{
    run r;
    audit_run(&r, k_families, NULL, 8, NULL, LA_RESOLVE_KEEP_TEST);
    assert_int_equal(out_of(&r, "t1"), TEST);
    assert_int_equal(out_of(&r, "t2"), TEST);
    assert_int_equal(out_of(&r, "d1"), Q);
    assert_int_equal(out_of(&r, "tr1"), Q);
    run_free(&r);
    audit_run(&r, k_families, NULL, 8, NULL, LA_RESOLVE_KEEP_SEEN);
    assert_int_equal(out_of(&r, "t1"), Q);
    assert_int_equal(out_of(&r, "d1"), DEV);
    assert_int_equal(out_of(&r, "tr1"), TRAIN);
    run_free(&r);
}

/* ---- time ---- */

static void test_time_leaks(void **state)
{
    static const spec rows[] = {
        {"e1", DEV, NULL, "2026-06-30", "e one", NULL},    /* seen, before: fine */
        {"e2", DEV, NULL, "2026-07-01", "e two", NULL},    /* seen, on the cutoff: leak */
        {"e3", DEV, NULL, NULL, "e three", NULL},          /* no date: no time rule */
        {"h1", TEST, NULL, "2026-06-30", "h one", NULL},   /* held out, before: leak */
        {"h2", TEST, NULL, "2026-07-01", "h two", NULL},   /* held out, on the cutoff: fine */
        {"r1", TRAIN, NULL, "2027-01-01", "r one", NULL},  /* another seen side, after: leak */
        {"s1", DEV, "S", "2026-01-01", "s one", NULL},     /* family spanning the cutoff ... */
        {"s2", DEV, "S", "2026-07-02", "s two", NULL},     /* ... inside one partition */
        {"p1", DEV, "P", "2026-08-01", "p one", NULL},     /* family pair touching a time leak */
        {"p2", TEST, "P", "2026-08-01", "p two", NULL},
    };
    run r;
    audit_run(&r, rows, NULL, 10, "2026-07-01", LA_RESOLVE_QUARANTINE);
    /* time rows by id */
    assert_int_equal(r.a.ntime, 5);
    static const char *const want[] = {"e2", "h1", "p1", "r1", "s2"};
    for (size_t i = 0; i < 5; i++) assert_string_equal(id_of(r.t, r.a.time_rows[i]), want[i]);

    assert_int_equal(out_of(&r, "e1"), DEV);
    assert_int_equal(out_of(&r, "e3"), DEV);
    assert_int_equal(out_of(&r, "h2"), TEST);
    assert_int_equal(out_of(&r, "e2"), Q);
    assert_int_equal(why_of(&r, "e2"), LA_WHY_TIME);
    assert_int_equal(out_of(&r, "h1"), Q);
    assert_int_equal(why_of(&r, "h1"), LA_WHY_TIME);
    assert_int_equal(why_of(&r, "r1"), LA_WHY_TIME);

    /* the spanning family: a finding that does not cross, every member quarantined */
    assert_int_equal(r.a.nfamilies, 2);
    assert_string_equal(r.a.families[0].family, "P");
    assert_true(r.a.families[0].crosses);
    assert_string_equal(r.a.families[1].family, "S");
    assert_false(r.a.families[1].crosses);
    assert_true(r.a.families[1].spans_cutoff);
    assert_int_equal(why_of(&r, "s1"), LA_WHY_SPANS_CUTOFF);
    assert_int_equal(out_of(&r, "s1"), Q);
    assert_int_equal(why_of(&r, "s2"), LA_WHY_SPANS_CUTOFF | LA_WHY_TIME);

    /* a family pair with a time-leak row carries both kinds */
    assert_int_equal(r.pairs.n, 1);
    expect_pair(r.t, &r.pairs, "p1", "p2", LA_KIND_FAMILY | LA_KIND_TIME);
    assert_int_equal(why_of(&r, "p2"), LA_WHY_LINKED);
    run_free(&r);
}

static void test_no_cutoff_no_time_rule(void **state)
{
    static const spec rows[] = {
        {"a", DEV, "S", "2020-01-01", "x", NULL},
        {"b", DEV, "S", "2030-01-01", "y", NULL},
        {"c", TEST, NULL, "2020-01-01", "z", NULL},
    };
    run r;
    audit_run(&r, rows, NULL, 3, NULL, LA_RESOLVE_QUARANTINE);
    assert_int_equal(r.a.ntime, 0);
    assert_int_equal(r.a.nfamilies, 0);
    for (size_t i = 0; i < 3; i++) assert_int_equal(out_of(&r, rows[i].id), (uint32_t)rows[i].part);
    run_free(&r);
}

/* ---- clusters ---- */

static const spec k_clusters[] = {
    /* family "zeta" holds the smallest id, so its cluster is number 1 although "alpha" sorts first */
    {"m-seen", DEV, "alpha", NULL, "m seen", NULL},
    {"m-test", TEST, "alpha", NULL, "m test", NULL},
    {"a-seen", DEV, "zeta", NULL, "a seen", NULL},
    {"a-test", TEST, "zeta", NULL, "a test", NULL},
    /* an exact copy joins "k-test" to family "kappa": one cluster of three */
    {"k-seen", DEV, "kappa", NULL, "k seen", NULL},
    {"k-test", TEST, "kappa", NULL, "k test", NULL},
    {"k-copy", TRAIN, NULL, NULL, "K   TEST", NULL},
    {"lonely", DEV, NULL, NULL, "nothing shared", NULL},
};

static void test_clusters_numbered_by_smallest_id(void **state)
{
    static const size_t orders[][8] = {
        {0, 1, 2, 3, 4, 5, 6, 7},
        {7, 6, 5, 4, 3, 2, 1, 0},
        {3, 7, 0, 5, 2, 6, 1, 4},
        {6, 1, 4, 0, 7, 3, 5, 2},
    };
    for (size_t k = 0; k < sizeof orders / sizeof *orders; k++) {
        run r;
        audit_run(&r, k_clusters, orders[k], 8, NULL, LA_RESOLVE_QUARANTINE);
        assert_int_equal(r.a.nclusters, 3);
        assert_int_equal(cluster_of(&r, "a-seen"), 1);
        assert_int_equal(cluster_of(&r, "a-test"), 1);
        assert_int_equal(cluster_of(&r, "k-copy"), 2);
        assert_int_equal(cluster_of(&r, "k-seen"), 2);
        assert_int_equal(cluster_of(&r, "k-test"), 2);
        assert_int_equal(cluster_of(&r, "m-seen"), 3);
        assert_int_equal(cluster_of(&r, "m-test"), 3);
        assert_int_equal(cluster_of(&r, "lonely"), 0);
        expect_pair(r.t, &r.pairs, "k-copy", "k-test", LA_KIND_EXACT);
        expect_pair(r.t, &r.pairs, "k-seen", "k-test", LA_KIND_FAMILY);
        assert_int_equal(r.a.link_kinds[idx(r.t, "k-test")], LA_KIND_EXACT | LA_KIND_FAMILY);
        assert_int_equal(out_of(&r, "lonely"), DEV);
        run_free(&r);
    }
}

/* ---- exact copies and duplicates ---- */

static void test_exact_and_duplicates(void **state)
{
    static const spec rows[] = {
        {"x1", DEV, NULL, NULL, "Hello World", NULL},
        {"x0", DEV, NULL, NULL, "hello   world", "A"},
        {"y1", TEST, NULL, NULL, "HELLO\u00a0WORLD", "B"},
        {"x2", DEV, NULL, NULL, "Something else", NULL},
        {"y3", TEST, NULL, NULL, "unique  Q", NULL},
        {"y2", TEST, NULL, NULL, "Unique q", NULL},
        {"w1", DEV, NULL, NULL, "  ", NULL}, /* empty after normalization: never a copy */
        {"w2", TEST, NULL, NULL, "\t", NULL},
        {"z1", DEV, NULL, NULL, "Same label", "yes"},
        {"z2", DEV, NULL, NULL, "same LABEL", "yes"},
    };
    run r;
    audit_run(&r, rows, NULL, 10, NULL, LA_RESOLVE_QUARANTINE);
    /* within a partition the copy with the smallest id keeps its place */
    assert_int_equal(r.ex.ndup, 3);
    assert_int_equal(r.ex.dup_of[idx(r.t, "x1")], idx(r.t, "x0"));
    assert_int_equal(r.ex.dup_of[idx(r.t, "y3")], idx(r.t, "y2"));
    assert_int_equal(r.ex.dup_of[idx(r.t, "z2")], idx(r.t, "z1"));
    assert_int_equal(r.ex.dup_of[idx(r.t, "x0")], LA_NOT_DUP);
    assert_int_equal(r.ex.dup_of[idx(r.t, "w2")], LA_NOT_DUP);
    /* one text crosses the boundary */
    assert_int_equal(r.ex.ncross_groups, 1);
    expect_pair(r.t, &r.pairs, "x0", "y1", LA_KIND_EXACT);
    for (size_t k = 0; k < r.pairs.n; k++) {
        assert_int_equal(r.pairs.v[k].kinds, LA_KIND_EXACT);
        assert_int_equal(r.pairs.v[k].b, idx(r.t, "y1"));
    }
    /* label conflict: same text, labels A and B; same labels are no conflict */
    assert_int_equal(r.ex.nconflicts, 1);
    assert_int_equal(r.ex.conflict_start[0], 0);
    assert_int_equal(r.ex.conflict_start[1], 2);
    assert_string_equal(id_of(r.t, r.ex.conflict_rows[0]), "x0");
    assert_string_equal(id_of(r.t, r.ex.conflict_rows[1]), "y1");
    /* outcomes: the later copy inside test is quarantined as a duplicate, the first stays */
    assert_int_equal(out_of(&r, "y2"), TEST);
    assert_int_equal(out_of(&r, "y3"), Q);
    assert_int_equal(why_of(&r, "y3"), LA_WHY_DUPLICATE);
    assert_int_equal(out_of(&r, "z1"), DEV);
    assert_int_equal(why_of(&r, "z2"), LA_WHY_DUPLICATE);
    assert_int_equal(out_of(&r, "x2"), DEV);
    assert_int_equal(out_of(&r, "w1"), DEV);
    assert_int_equal(out_of(&r, "w2"), TEST);
    assert_int_equal(out_of(&r, "y1"), Q);
    assert_true(why_of(&r, "y1") & LA_WHY_LINKED);
    run_free(&r);
}

/* ---- statistics ---- */

static void test_statistics(void **state)
{
    /* 1.96 * sqrt(0.9 * 0.1 / 30) = 0.10735 */
    assert_true(fabs(la_stat_ci95(0.9, 30) - 0.107354) < 1e-5);
    assert_true(fabs(la_stat_ci95(0.5, 100) - 0.098) < 1e-9);
    assert_true(isnan(la_stat_ci95(0.9, 0)));
    /* 300 groups of 5 at p = 0.2: 300 * (1 - 0.8^5 - 0.2^5) = 300 * 0.672 = 201.6 */
    size_t sizes[300];
    for (size_t i = 0; i < 300; i++) sizes[i] = 5;
    assert_true(fabs(la_stat_expected_mixed(sizes, 300, 0.2) - 201.6) < 1e-9);
    /* a group of one row can never be mixed */
    size_t ones[3] = {1, 1, 1};
    assert_true(fabs(la_stat_expected_mixed(ones, 3, 0.2)) < 1e-12);
    assert_true(la_stat_expected_mixed(NULL, 0, 0.2) == 0.0);
}

/* The exact join against a join by hand over every pair of rows, on 3,000 rows whose hashes are set
 * to share their high half in runs (as 64-bit hashes almost never do) and whose texts repeat: rows
 * sharing a high half but not their text are no copies; copies across the boundary are pairs, and
 * later copies within a partition duplicates of the smallest id's. The same answers whatever the
 * rows' order (the join's table is filled in row order). */
static void test_exact_join_by_hand(void **state)
{
    (void)state;
    enum { N = 3000 };
    static char texts[N][16];
    static spec rows[N];
    static size_t order[N];
    static char ids[N][8];
    uint64_t x = 12345;
    for (size_t i = 0; i < N; i++) {
        x = x * 6364136223846793005ull + 1442695040888963407ull;
        snprintf(ids[i], sizeof ids[i], "r%04zu", i);
        snprintf(texts[i], sizeof texts[i], "text %u", (unsigned)(x >> 33) % 700); /* repeats */
        rows[i] = (spec){ids[i], (int)((x >> 20) % 3), NULL, NULL, texts[i], NULL};
        order[i] = N - 1 - i;
    }
    for (int pass = 0; pass < 2; pass++) {
        run r;
        memset(&r, 0, sizeof r);
        r.t = table_of(rows, pass ? order : NULL, N);
        la_row *rw = la_table_rows(r.t);
        /* the high half from the text's number / 7: runs of about 7 texts share it, each text keeps
         * its own low half */
        for (size_t i = 0; i < N; i++) {
            unsigned v = (unsigned)atoi(rw[i].norm + 5);
            rw[i].hash[1] = 0x9e3779b97f4a7c15ull * (v / 7 + 1);
            rw[i].hash[0] = v;
        }
        assert_int_equal(la_exact_find(r.t, TEST, &r.pairs, &r.ex), LA_OK);
        size_t want_pairs = 0, want_dup = 0;
        for (size_t i = 0; i < N; i++) {
            uint32_t first = LA_NOT_DUP;
            for (size_t j = 0; j < N; j++) {
                if (strcmp(rw[i].norm, rw[j].norm)) continue;
                if (rw[i].part != TEST && rw[j].part == TEST) {
                    want_pairs++;
                    expect_pair(r.t, &r.pairs, rw[i].id, rw[j].id, LA_KIND_EXACT);
                }
                if (j != i && rw[j].part == rw[i].part && strcmp(rw[j].id, rw[i].id) < 0 &&
                    (first == LA_NOT_DUP || strcmp(rw[j].id, rw[first].id) < 0))
                    first = (uint32_t)j;
            }
            assert_int_equal(r.ex.dup_of[i], first);
            want_dup += first != LA_NOT_DUP;
        }
        assert_int_equal(r.pairs.n, want_pairs);
        assert_true(want_pairs > 100);
        assert_int_equal(r.ex.ndup, want_dup);
        la_exact_result_free(&r.ex);
        la_pairs_free(&r.pairs);
        la_table_free(r.t);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_family_pairs),
        cmocka_unit_test(test_resolve_keep_test),
        cmocka_unit_test(test_time_leaks),
        cmocka_unit_test(test_no_cutoff_no_time_rule),
        cmocka_unit_test(test_clusters_numbered_by_smallest_id),
        cmocka_unit_test(test_exact_and_duplicates),
        cmocka_unit_test(test_exact_join_by_hand),
        cmocka_unit_test(test_statistics),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
