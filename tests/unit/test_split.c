/*
 * test_split.c - the chronological split rule on the row table: whole families go to dev (entirely
 * before the cutoff), test (entirely on or after it) or quarantine (spanning it), whatever the order
 * of the rows. Not for: the files `leakaudit split` writes (see tests/cli/split_worked_example.sh).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "audit.h"
#include "la_alloc.h"
#include "groups.h"
#include "leakaudit.h"
#include "split.h"

typedef struct spec {
    const char *id, *family, *date;
} spec;

/* The worked example of the split rule. */
static const spec k_example[] = {
    {"access-q1", "access", "2026-05-10"}, {"access-q2", "access", "2026-05-10"},
    {"export-q1", "export", "2026-07-01"}, {"export-q2", "export", "2026-07-01"},
    {"export-q3", "export", "2026-07-01"}, {"refund-v1", "refund", "2026-05-12"},
    {"refund-v2", "refund", "2026-07-04"},
};
#define NEXAMPLE (sizeof k_example / sizeof *k_example)

static int32_t day(const char *s)
{
    int32_t d;
    assert_int_equal(la_date_parse(s, strlen(s), 0, &d), LA_OK);
    return d;
}

/* A table holding dev and test partitions (indices 0, 1) and the rows in the given order, all in a
 * third partition "input" as `leakaudit split` loads them. */
static la_table *table_of(const spec *rows, const size_t *order, size_t n)
{
    la_table *t;
    uint32_t dev, test, input;
    assert_int_equal(la_table_new(&t), LA_OK);
    assert_int_equal(la_table_part(t, "dev", &dev), LA_OK);
    assert_int_equal(la_table_part(t, "test", &test), LA_OK);
    assert_int_equal(la_table_part(t, "input", &input), LA_OK);
    for (size_t k = 0; k < n; k++) {
        const spec *s = &rows[order ? order[k] : k];
        la_row r;
        memset(&r, 0, sizeof r);
        r.part = input;
        r.date = s->date ? day(s->date) : LA_NO_DATE;
        r.line = (uint32_t)k + 1;
        assert_int_equal(la_table_strdup(t, s->id, strlen(s->id), &r.id), LA_OK);
        if (s->family) assert_int_equal(la_table_strdup(t, s->family, strlen(s->family), &r.family), LA_OK);
        assert_int_equal(la_table_append(t, &r, NULL), LA_OK);
    }
    return t;
}

/* The outcome name of row `id` after a split. */
static const char *outcome(const la_table *t, const uint32_t *out, const char *id)
{
    size_t i = la_table_find_id(t, id);
    assert_true(i != (size_t)-1);
    return out[i] == LA_OUT_QUARANTINE ? "quarantine" : la_table_part_name(t, out[i]);
}

/* Split with groups made of families and the given links (may be NULL). */
static void run_split_linked(la_table *t, const la_pairs *links, const char *cutoff, uint32_t **out, la_split *sp)
{
    size_t n = la_table_nrows(t);
    *out = la_malloc_n(n, sizeof **out);
    uint32_t *rep = la_malloc_n(n, sizeof *rep);
    assert_non_null(*out);
    assert_non_null(rep);
    assert_int_equal(la_groups_build(t, links, rep), LA_OK);
    assert_int_equal(la_split_chrono(t, rep, day(cutoff), 0, 1, *out, sp), LA_OK);
    free(rep);
}

static void run_split(la_table *t, const char *cutoff, uint32_t **out, la_split *sp)
{
    run_split_linked(t, NULL, cutoff, out, sp);
}

static void check_worked_example(const size_t *order)
{
    la_table *t = table_of(k_example, order, NEXAMPLE);
    uint32_t *out;
    la_split sp;
    run_split(t, "2026-07-01", &out, &sp);
    assert_string_equal(outcome(t, out, "access-q1"), "dev");
    assert_string_equal(outcome(t, out, "access-q2"), "dev");
    assert_string_equal(outcome(t, out, "export-q1"), "test");
    assert_string_equal(outcome(t, out, "export-q2"), "test");
    assert_string_equal(outcome(t, out, "export-q3"), "test");
    assert_string_equal(outcome(t, out, "refund-v1"), "quarantine");
    assert_string_equal(outcome(t, out, "refund-v2"), "quarantine");

    /* one group per family, by name, each knowing its date range and its smallest id */
    assert_int_equal(sp.ngroups, 3);
    const la_row *rows = la_table_rows_const(t);
    assert_string_equal(sp.groups[0].family, "access");
    assert_int_equal(sp.groups[0].nrows, 2);
    assert_int_equal(sp.groups[0].out, 0);
    assert_string_equal(rows[sp.groups[0].first_row].id, "access-q1");
    assert_string_equal(sp.groups[1].family, "export");
    assert_int_equal(sp.groups[1].nrows, 3);
    assert_int_equal(sp.groups[1].out, 1);
    assert_string_equal(rows[sp.groups[1].first_row].id, "export-q1");
    assert_string_equal(sp.groups[2].family, "refund");
    assert_int_equal(sp.groups[2].out, LA_OUT_QUARANTINE);
    assert_int_equal(sp.groups[2].min_date, day("2026-05-12"));
    assert_int_equal(sp.groups[2].max_date, day("2026-07-04"));
    for (size_t i = 0; i < NEXAMPLE; i++)
        assert_string_equal(sp.groups[sp.group_of[i]].family, rows[i].family);
    free(out);
    la_split_free(&sp);
    la_table_free(t);
}

static void test_worked_example(void **state) { check_worked_example(NULL); }

static void test_worked_example_any_order(void **state)
{
    static const size_t orders[][NEXAMPLE] = {
        {6, 5, 4, 3, 2, 1, 0},
        {6, 0, 4, 1, 3, 5, 2},
        {2, 6, 1, 3, 0, 5, 4},
        {5, 2, 0, 6, 3, 1, 4},
    };
    for (size_t k = 0; k < sizeof orders / sizeof *orders; k++) check_worked_example(orders[k]);
}

static void test_cutoff_inclusive_on_test_side(void **state)
{
    static const spec rows[] = {
        {"a", "day-before", "2026-06-30"},
        {"b", "on-cutoff", "2026-07-01"},
        {"c", "day-before-and-on", "2026-06-30"},
        {"d", "day-before-and-on", "2026-07-01"},
        {"e", "leap", "2024-02-29"},
    };
    la_table *t = table_of(rows, NULL, 5);
    uint32_t *out;
    la_split sp;
    run_split(t, "2026-07-01", &out, &sp);
    assert_string_equal(outcome(t, out, "a"), "dev");
    assert_string_equal(outcome(t, out, "b"), "test");
    assert_string_equal(outcome(t, out, "c"), "quarantine");
    assert_string_equal(outcome(t, out, "d"), "quarantine");
    assert_string_equal(outcome(t, out, "e"), "dev");
    free(out);
    la_split_free(&sp);
    la_table_free(t);
}

static void test_row_without_family_is_its_own_family(void **state)
{
    static const spec rows[] = {
        {"solo-late", NULL, "2026-08-01"},
        {"solo-early", NULL, "2026-01-01"},
        {"fam-1", "f", "2026-01-01"},
        {"solo-mid", NULL, "2026-07-01"},
    };
    la_table *t = table_of(rows, NULL, 4);
    uint32_t *out;
    la_split sp;
    run_split(t, "2026-07-01", &out, &sp);
    /* without families the two early/late rows would not form a spanning group */
    assert_string_equal(outcome(t, out, "solo-early"), "dev");
    assert_string_equal(outcome(t, out, "solo-late"), "test");
    assert_string_equal(outcome(t, out, "solo-mid"), "test");
    assert_string_equal(outcome(t, out, "fam-1"), "dev");
    assert_int_equal(sp.ngroups, 4);
    /* groups in the order of their smallest id */
    const la_row *r = la_table_rows_const(t);
    assert_string_equal(sp.groups[0].family, "f");
    assert_string_equal(r[sp.groups[0].first_row].id, "fam-1");
    assert_null(sp.groups[1].family);
    assert_string_equal(r[sp.groups[1].first_row].id, "solo-early");
    assert_string_equal(r[sp.groups[2].first_row].id, "solo-late");
    assert_string_equal(r[sp.groups[3].first_row].id, "solo-mid");
    for (size_t g = 1; g < 4; g++) assert_int_equal(sp.groups[g].nrows, 1);
    free(out);
    la_split_free(&sp);
    la_table_free(t);
}

static void test_family_names_are_exact(void **state)
{
    /* "Refund" and "refund" are different families; a family name that is a prefix of another too */
    static const spec rows[] = {
        {"x1", "refund", "2026-01-01"},
        {"x2", "Refund", "2026-09-01"},
        {"x3", "refund-2", "2026-09-01"},
    };
    la_table *t = table_of(rows, NULL, 3);
    uint32_t *out;
    la_split sp;
    run_split(t, "2026-07-01", &out, &sp);
    assert_string_equal(outcome(t, out, "x1"), "dev");
    assert_string_equal(outcome(t, out, "x2"), "test");
    assert_string_equal(outcome(t, out, "x3"), "test");
    assert_int_equal(sp.ngroups, 3);
    free(out);
    la_split_free(&sp);
    la_table_free(t);
}

static void test_linked_rows_stay_together(void **state)
{
    /* an exact copy of a pre-cutoff row, dated after the cutoff and without a family, joins that
     * row's family: the group spans the cutoff, so neither copy lands in test */
    static const spec rows[] = {
        {"orig", "f", "2026-03-01"},
        {"sibling", "f", "2026-03-02"},
        {"copy", NULL, "2026-09-01"},
        {"other", NULL, "2026-09-01"},
    };
    la_table *t = table_of(rows, NULL, 4);
    la_pairs links = {0};
    la_pair p = la_pair_make(0, 2, LA_KIND_EXACT);
    assert_int_equal(la_pairs_push(&links, &p), LA_OK);
    uint32_t *out;
    la_split sp;
    run_split_linked(t, &links, "2026-07-01", &out, &sp);
    assert_string_equal(outcome(t, out, "orig"), "quarantine");
    assert_string_equal(outcome(t, out, "sibling"), "quarantine");
    assert_string_equal(outcome(t, out, "copy"), "quarantine");
    assert_string_equal(outcome(t, out, "other"), "test");
    assert_int_equal(sp.ngroups, 2);
    free(out);
    la_split_free(&sp);
    la_pairs_free(&links);
    la_table_free(t);
}

static void test_row_without_date_is_refused(void **state)
{
    static const spec rows[] = {{"a", "f", "2026-01-01"}, {"b", "f", NULL}};
    la_table *t = table_of(rows, NULL, 2);
    uint32_t out[2], rep[2];
    la_split sp;
    assert_int_equal(la_groups_build(t, NULL, rep), LA_OK);
    assert_int_equal(la_split_chrono(t, rep, day("2026-07-01"), 0, 1, out, &sp), LA_EINTERNAL);
    assert_non_null(strstr(la_last_error(), "'b'"));
    la_split_free(&sp);
    la_table_free(t);
}

static void test_empty_table(void **state)
{
    la_table *t = table_of(NULL, NULL, 0);
    uint32_t out[1], rep[1];
    la_split sp;
    assert_int_equal(la_groups_build(t, NULL, rep), LA_OK);
    assert_int_equal(la_split_chrono(t, rep, day("2026-07-01"), 0, 1, out, &sp), LA_OK);
    assert_int_equal(sp.ngroups, 0);
    la_split_free(&sp);
    la_split_free(NULL);
    la_table_free(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_worked_example),
        cmocka_unit_test(test_worked_example_any_order),
        cmocka_unit_test(test_cutoff_inclusive_on_test_side),
        cmocka_unit_test(test_row_without_family_is_its_own_family),
        cmocka_unit_test(test_family_names_are_exact),
        cmocka_unit_test(test_linked_rows_stay_together),
        cmocka_unit_test(test_row_without_date_is_refused),
        cmocka_unit_test(test_empty_table),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
