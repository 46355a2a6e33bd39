/*
 * test_link_delta.c - links against a baseline and waivers on a hand-made table: new, known and
 * resolved by row ids and text hashes, a known link that newly fails the gate counts as new, time
 * rows new or known, --fail-on-new's verdict per link, waivers active through their expiry day,
 * expired the day after, stale when they name no link or a kind the link lacks, and overlapping
 * waivers and duplicate baseline links found.
 * Not for: reading the files (test_waivers.c) or the reports (tests/cli/nightly_baseline.sh).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "link_delta.h"
#include "table_fixture.h"

static int32_t day(const char *s)
{
    int32_t d;
    assert_int_equal(la_date_parse(s, strlen(s), 0, &d), LA_OK);
    return d;
}

/* Rows t1 t2 t3 (test) and d1 d2 d3 d5 (dev); links t1~d1 and t3~d5, exact copies, sorted. */
typedef struct world {
    fixture f;
    size_t t1, t2, t3, d1, d2, d3, d5;
    la_pairs pairs;
    la_audit audit;
    la_gate gate;
} world;

static la_pair link_of(size_t seen, size_t held, uint32_t kinds, uint8_t grade)
{
    la_pair p = la_pair_make((uint32_t)seen, (uint32_t)held, kinds);
    p.grade = grade;
    return p;
}

static void world_setup(world *w)
{
    memset(w, 0, sizeof *w);
    setup(&w->f);
    w->t1 = add(&w->f, w->f.test, "t1", "a train leaves at nine");
    w->t2 = add(&w->f, w->f.test, "t2", "four boxes of pencils");
    w->t3 = add(&w->f, w->f.test, "t3", "the area of a rectangle");
    w->d1 = add(&w->f, w->f.dev, "d1", "a train leaves at nine");
    w->d2 = add(&w->f, w->f.dev, "d2", "something else");
    w->d3 = add(&w->f, w->f.dev, "d3", "something more");
    w->d5 = add(&w->f, w->f.dev, "d5", "the area of a rectangle");
    la_row *rows = la_table_rows(w->f.t);
    for (size_t i = 0; i < la_table_nrows(w->f.t); i++) rows[i].hash[0] = 100 + i, rows[i].hash[1] = 7;
    la_pair p1 = link_of(w->d1, w->t1, LA_KIND_EXACT | LA_KIND_NEAR, LA_GRADE_COPY);
    la_pair p3 = link_of(w->d5, w->t3, LA_KIND_EXACT | LA_KIND_NEAR, LA_GRADE_COPY);
    assert_int_equal(la_pairs_push(&w->pairs, &p3), LA_OK);
    assert_int_equal(la_pairs_push(&w->pairs, &p1), LA_OK);
    la_audit_sort_pairs(w->f.t, &w->pairs); /* t1~d1 first */
    la_gate_default(&w->gate);
}

static void world_free(world *w)
{
    free(w->audit.time_rows);
    la_pairs_free(&w->pairs);
    la_table_free(w->f.t);
}

static la_prior_link prior(const char *held, const char *seen, int gated, uint32_t line)
{
    la_prior_link l;
    memset(&l, 0, sizeof l);
    l.heldout_id = (char *)held;
    l.seen_id = (char *)seen;
    l.heldout_split = "test";
    l.seen_split = "dev";
    l.kinds = LA_KIND_EXACT;
    l.grade = LA_GRADE_COPY;
    l.gated = gated;
    l.line = line;
    return l;
}

static void add_prior(la_baseline *b, la_prior_link l) { assert_int_equal(la_baseline_add_link(b, &l), LA_OK); }

static void test_new_known_resolved(void **state)
{
    (void)state;
    world w;
    world_setup(&w);
    la_baseline b = {0};
    add_prior(&b, prior("t2", "d2", 1, 1));
    add_prior(&b, prior("t1", "d1", 1, 2));
    la_delta d;
    assert_int_equal(la_delta_compute(w.f.t, &w.pairs, &w.audit, &w.gate, &b, NULL, 0, &d), LA_OK);
    assert_int_equal(d.status[0], LA_LINK_KNOWN); /* t1~d1 */
    assert_int_equal(d.status[1], LA_LINK_NEW);   /* t3~d5 */
    assert_int_equal(d.nnew, 1);
    assert_int_equal(d.nknown, 1);
    assert_int_equal(d.nresolved, 1);
    assert_string_equal(b.links[d.resolved[0]].seen_id, "d2");

    d.fail_on_new = 1;
    assert_false(la_delta_link_fails(&d, &w.gate, &w.pairs.v[0], 0, -1));
    assert_true(la_delta_link_fails(&d, &w.gate, &w.pairs.v[1], 1, -1));
    d.fail_on_new = 0;
    assert_true(la_delta_link_fails(&d, &w.gate, &w.pairs.v[0], 0, -1));
    la_delta_free(&d);
    la_baseline_free(&b);
    world_free(&w);
}

static void test_text_hashes(void **state)
{
    (void)state;
    world w;
    world_setup(&w);
    const la_row *rows = la_table_rows_const(w.f.t);
    la_baseline b = {0};
    la_prior_link same = prior("t1", "d1", 1, 1), edited = prior("t3", "d5", 1, 2);
    same.hashed = edited.hashed = 1;
    memcpy(same.heldout_hash, rows[w.t1].hash, sizeof same.heldout_hash);
    memcpy(same.seen_hash, rows[w.d1].hash, sizeof same.seen_hash);
    memcpy(edited.heldout_hash, rows[w.t3].hash, sizeof edited.heldout_hash);
    memcpy(edited.seen_hash, rows[w.d5].hash, sizeof edited.seen_hash);
    edited.seen_hash[0] ^= 1; /* d5 was edited since */
    add_prior(&b, same);
    add_prior(&b, edited);
    la_delta d;
    assert_int_equal(la_delta_compute(w.f.t, &w.pairs, &w.audit, &w.gate, &b, NULL, 0, &d), LA_OK);
    assert_int_equal(d.status[0], LA_LINK_KNOWN);
    assert_int_equal(d.status[1], LA_LINK_NEW);
    assert_int_equal(d.nresolved, 1); /* the old t3~d5 is gone */
    assert_int_equal(b.links[d.resolved[0]].line, 2);
    la_delta_free(&d);
    la_baseline_free(&b);
    world_free(&w);
}

static void test_newly_gating_is_new(void **state)
{
    (void)state;
    world w;
    world_setup(&w);
    w.pairs.v[1].kinds = LA_KIND_NEAR;
    w.pairs.v[1].grade = LA_GRADE_RELATED; /* t3~d5 does not fail the default gate */
    la_baseline b = {0};
    add_prior(&b, prior("t1", "d1", 0, 1)); /* related in the baseline, a copy now */
    add_prior(&b, prior("t3", "d5", 0, 2)); /* related then and now */
    la_delta d;
    assert_int_equal(la_delta_compute(w.f.t, &w.pairs, &w.audit, &w.gate, &b, NULL, 0, &d), LA_OK);
    assert_int_equal(d.status[0], LA_LINK_NEW);
    assert_int_equal(d.status[1], LA_LINK_KNOWN);
    assert_int_equal(d.nresolved, 0);
    la_delta_free(&d);
    la_baseline_free(&b);
    world_free(&w);
}

static void test_time_rows(void **state)
{
    (void)state;
    world w;
    world_setup(&w);
    w.audit.time_rows = malloc(2 * sizeof *w.audit.time_rows);
    w.audit.time_rows[0] = (uint32_t)w.d3;
    w.audit.time_rows[1] = (uint32_t)w.t2;
    w.audit.ntime = 2;
    la_baseline b = {0};
    assert_int_equal(la_baseline_add_time(&b, "t2"), LA_OK);
    la_delta d;
    assert_int_equal(la_delta_compute(w.f.t, &w.pairs, &w.audit, &w.gate, &b, NULL, 0, &d), LA_OK);
    assert_int_equal(d.ntime_new, 1);
    assert_true(la_delta_time_fails(&d, 0));  /* without --fail-on-new every time row fails */
    assert_true(la_delta_time_fails(&d, 1));
    d.fail_on_new = 1;
    assert_true(la_delta_time_fails(&d, 0));  /* d3: new */
    assert_false(la_delta_time_fails(&d, 1)); /* t2: the baseline lists it */
    assert_true(la_delta_time_fails(NULL, 1));
    la_delta_free(&d);
    la_baseline_free(&b);
    world_free(&w);
}

static la_waiver waiver(const char *held, const char *seen, uint32_t kind, const char *expires, uint32_t line)
{
    la_waiver x;
    memset(&x, 0, sizeof x);
    x.heldout_id = (char *)held;
    x.seen_id = (char *)seen;
    x.reason = "reviewed";
    x.accepted_by = "r.lee";
    x.kind = kind;
    x.expires = day(expires);
    x.line = line;
    return x;
}

static void add_waiver(la_waivers *ws, la_waiver x) { assert_int_equal(la_waivers_add(ws, &x), LA_OK); }

static void test_waivers_states(void **state)
{
    (void)state;
    world w;
    world_setup(&w);
    la_waivers ws = {0};
    add_waiver(&ws, waiver("t1", "d1", 0, "2030-01-01", 1));
    add_waiver(&ws, waiver("t3", "d5", LA_KIND_EXACT, "2030-01-01", 2));
    add_waiver(&ws, waiver("t3", "d5", LA_KIND_SEMANTIC, "2030-01-01", 3)); /* the link has no semantic evidence */
    add_waiver(&ws, waiver("t9", "d9", 0, "2030-01-01", 4));
    add_waiver(&ws, waiver("t3", "d5", LA_KIND_NEAR, "2029-12-31", 5));
    la_delta d;
    assert_int_equal(la_delta_compute(w.f.t, &w.pairs, &w.audit, &w.gate, NULL, &ws, day("2030-01-01"), &d), LA_OK);
    assert_int_equal(d.waiver_state[0], LA_WAIVER_ACTIVE); /* its last day */
    assert_int_equal(d.waiver_state[1], LA_WAIVER_ACTIVE);
    assert_int_equal(d.waiver_state[2], LA_WAIVER_STALE);
    assert_int_equal(d.waiver_state[3], LA_WAIVER_STALE);
    assert_int_equal(d.waiver_state[4], LA_WAIVER_EXPIRED);
    assert_int_equal(d.nactive, 2);
    assert_int_equal(d.nstale, 2);
    assert_int_equal(d.nexpired, 1);
    assert_int_equal(d.nwaived_links, 2);
    assert_null(d.status);
    /* t1~d1: every kind waived; t3~d5: exact waived, near not (its waiver expired) */
    assert_false(la_delta_link_fails(&d, &w.gate, &w.pairs.v[0], 0, -1));
    assert_true(la_delta_link_fails(&d, &w.gate, &w.pairs.v[1], 1, -1));
    assert_false(la_delta_link_fails(&d, &w.gate, &w.pairs.v[1], 1, 2)); /* exact */
    assert_true(la_delta_link_fails(&d, &w.gate, &w.pairs.v[1], 1, 3));  /* near */
    /* t3~d5's waivers in file order: line 2, then the expired one of line 5 */
    assert_int_equal(d.link_waiver[1], 1);
    assert_int_equal(d.next_waiver[1], 4);
    assert_int_equal(d.next_waiver[4], LA_NO_WAIVER);
    la_delta_free(&d);

    /* the day after, the first waiver is expired and t1~d1 fails again */
    assert_int_equal(la_delta_compute(w.f.t, &w.pairs, &w.audit, &w.gate, NULL, &ws, day("2030-01-02"), &d), LA_OK);
    assert_int_equal(d.waiver_state[0], LA_WAIVER_EXPIRED);
    assert_int_equal(d.waiver_state[3], LA_WAIVER_EXPIRED); /* expired comes before stale */
    assert_true(la_delta_link_fails(&d, &w.gate, &w.pairs.v[0], 0, -1));
    assert_int_equal(d.link_waiver[0], 0); /* still listed with the link */
    la_delta_free(&d);
    la_waivers_free(&ws);
    world_free(&w);
}

static void test_waivers_overlap(void **state)
{
    (void)state;
    la_waivers ws = {0};
    size_t i = 99, j = 99;
    add_waiver(&ws, waiver("t1", "d1", LA_KIND_EXACT, "2030-01-01", 1));
    add_waiver(&ws, waiver("t1", "d1", LA_KIND_NEAR, "2030-01-01", 2));
    add_waiver(&ws, waiver("t1", "d2", 0, "2030-01-01", 3));
    assert_false(la_waivers_find_overlap(&ws, &i, &j));
    add_waiver(&ws, waiver("t1", "d1", 0, "2031-01-01", 4)); /* every kind: overlaps both */
    assert_true(la_waivers_find_overlap(&ws, &i, &j));
    assert_true(i < j);
    assert_int_equal(j, 3);
    la_waivers_free(&ws);

    add_waiver(&ws, waiver("t1", "d1", LA_KIND_NEAR, "2030-01-01", 1));
    add_waiver(&ws, waiver("t2", "d1", LA_KIND_NEAR, "2030-01-01", 2));
    add_waiver(&ws, waiver("t1", "d1", LA_KIND_NEAR, "2030-02-01", 3));
    assert_true(la_waivers_find_overlap(&ws, &i, &j));
    assert_int_equal(i, 0);
    assert_int_equal(j, 2);
    la_waivers_free(&ws);
}

static void test_baseline_duplicate(void **state)
{
    (void)state;
    la_baseline b = {0};
    uint32_t l1 = 0, l2 = 0;
    add_prior(&b, prior("t1", "d1", 1, 1));
    add_prior(&b, prior("t1", "d2", 1, 2));
    assert_false(la_baseline_find_duplicate(&b, &l1, &l2));
    add_prior(&b, prior("t1", "d1", 0, 3));
    assert_true(la_baseline_find_duplicate(&b, &l1, &l2));
    assert_int_equal(l1, 1);
    assert_int_equal(l2, 3);
    la_baseline_free(&b);
    la_baseline_free(NULL);
    la_waivers_free(NULL);
    la_delta_free(NULL);
}

static void test_no_delta_is_the_gate(void **state)
{
    (void)state;
    world w;
    world_setup(&w);
    la_gate none;
    assert_int_equal(la_gate_parse("none", &none), LA_OK);
    assert_true(la_delta_link_fails(NULL, &w.gate, &w.pairs.v[0], 0, -1));
    assert_false(la_delta_link_fails(NULL, &none, &w.pairs.v[0], 0, -1));
    assert_false(la_delta_link_fails(NULL, &w.gate, &w.pairs.v[0], 0, 0)); /* no family evidence */
    world_free(&w);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_new_known_resolved), cmocka_unit_test(test_text_hashes),
        cmocka_unit_test(test_newly_gating_is_new), cmocka_unit_test(test_time_rows),
        cmocka_unit_test(test_waivers_states),    cmocka_unit_test(test_waivers_overlap),
        cmocka_unit_test(test_baseline_duplicate), cmocka_unit_test(test_no_delta_is_the_gate),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
