/*
 * table_fixture.h - a row table with a dev and a test partition for the unit tests of the tiers
 * that read normalized text (near, grade). Rows are added with their normalized text as given.
 * Header-only, for cmocka tests; include after <cmocka.h>.
 */
#ifndef LA_TEST_TABLE_FIXTURE_H
#define LA_TEST_TABLE_FIXTURE_H

#include <string.h>

#include "leakaudit.h"

typedef struct fixture {
    la_table *t;
    uint32_t dev, test;
} fixture;

/* Append a row with id and normalized text `norm` (NULL: no text) to partition `part`. */
static size_t add(fixture *f, uint32_t part, const char *id, const char *norm)
{
    la_row r;
    memset(&r, 0, sizeof r);
    assert_int_equal(la_table_strdup(f->t, id, strlen(id), &r.id), LA_OK);
    if (norm) {
        assert_int_equal(la_table_strdup(f->t, norm, strlen(norm), &r.norm), LA_OK);
        r.norm_len = strlen(norm);
    }
    r.text = r.norm;
    r.part = part;
    r.date = LA_NO_DATE;
    size_t i;
    assert_int_equal(la_table_append(f->t, &r, &i), LA_OK);
    return i;
}

static void setup(fixture *f)
{
    assert_int_equal(la_table_new(&f->t), LA_OK);
    assert_int_equal(la_table_part(f->t, "dev", &f->dev), LA_OK);
    assert_int_equal(la_table_part(f->t, "test", &f->test), LA_OK);
}

#endif /* LA_TEST_TABLE_FIXTURE_H */
