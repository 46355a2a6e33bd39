/*
 * api_fixture.h - what the tests of the embedding API share: a scratch folder made for the test
 * program and removed with all it holds, and options for quick runs: an audit's with the lexical
 * embedding on one thread, a split's quiet on one thread. Header-only, for cmocka tests; include
 * after <cmocka.h>.
 */
#ifndef LA_TEST_API_FIXTURE_H
#define LA_TEST_API_FIXTURE_H

#include <stdio.h>
#include <stdlib.h>

#include "leakaudit.h"

static char g_dir[64];

/* Make g_dir, /tmp/la-test-NAME-XXXXXX; 0 on success, as cmocka's setup wants. */
static int scratch_make(const char *name)
{
    snprintf(g_dir, sizeof g_dir, "/tmp/la-test-%s-XXXXXX", name);
    return mkdtemp(g_dir) ? 0 : -1;
}

static int scratch_teardown(void **state)
{
    (void)state;
    char cmd[160];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", g_dir);
    return system(cmd) == 0 ? 0 : -1;
}

/* New options with the lexical embedding on one thread. */
static inline la_options *quick_options(void)
{
    la_options *o = NULL;
    assert_int_equal(la_options_new(&o), LA_OK);
    assert_int_equal(la_options_set(o, "embed", "lexical"), LA_OK);
    assert_int_equal(la_options_set(o, "threads", "1"), LA_OK);
    return o;
}

/* New split options, quiet, on one thread. */
static inline la_options *quick_split_options(void)
{
    la_options *o = NULL;
    assert_int_equal(la_options_new_split(&o), LA_OK);
    assert_int_equal(la_options_set(o, "threads", "1"), LA_OK);
    assert_int_equal(la_options_set(o, "quiet", NULL), LA_OK);
    return o;
}

#endif /* LA_TEST_API_FIXTURE_H */
