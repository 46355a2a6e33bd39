/*
 * test_api.c - the embedding API of include/leakaudit.h: options by their command-line names
 * (unknown names and bad values refused with a reason), an audit run on small files (the links,
 * clusters, outcomes and statistics a user would check), the reports written, and two audits on
 * two threads at once giving the same answers as one alone (the library keeps no global state).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <pthread.h>

#include "api_fixture.h"
#include "leakaudit.h"

static char g_dev[96], g_test[96];

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static int setup(void **state)
{
    (void)state;
    if (scratch_make("api")) return -1;
    snprintf(g_dev, sizeof g_dev, "%s/dev.jsonl", g_dir);
    snprintf(g_test, sizeof g_test, "%s/test.jsonl", g_dir);
    write_file(g_dev, "{\"id\":\"d1\",\"text\":\"How many legs does a spider have?\"}\n"
                      "{\"id\":\"d2\",\"text\":\"What is the boiling point of water at sea level?\"}\n"
                      "{\"id\":\"d3\",\"text\":\"Name the capital city of France.\"}\n");
    write_file(g_test, "{\"id\":\"t1\",\"text\":\"what is the BOILING point of water at sea level?\",\"score\":1}\n"
                       "{\"id\":\"t2\",\"text\":\"Who wrote the play Hamlet?\",\"score\":0}\n"
                       "{\"id\":\"t3\",\"text\":\"Which planet is the largest in the solar system?\",\"score\":1}\n");
    return 0;
}

static la_options *options(void)
{
    la_options *o = quick_options();
    assert_int_equal(la_options_add_input(o, "dev", g_dev), LA_OK);
    assert_int_equal(la_options_add_input(o, "test", g_test), LA_OK);
    return o;
}

static void test_options_refused(void **state)
{
    (void)state;
    la_options *o = NULL;
    assert_int_equal(la_options_new(&o), LA_OK);
    assert_int_equal(la_options_set(o, "no-such-option", "1"), LA_EINVAL);
    assert_non_null(strstr(la_last_error(), "no-such-option"));
    assert_int_equal(la_options_set(o, "shard", "0/2"), LA_EINVAL); /* the program's: merge needs its arguments */
    assert_non_null(strstr(la_last_error(), "leakaudit merge"));
    assert_int_equal(la_options_set(o, "fail-on", "exactly"), LA_EINVAL);
    assert_non_null(strstr(la_last_error(), "--fail-on 'exactly': unknown kind"));
    assert_int_equal(la_options_set(o, "cutoff", NULL), LA_EINVAL);
    assert_int_equal(la_options_set(o, "within", NULL), LA_OK);
    assert_int_equal(la_option_takes_value("text-field"), 1);
    assert_int_equal(la_option_takes_value("within"), 0);
    assert_int_equal(la_option_takes_value("quiet"), 0);
    assert_int_equal(la_option_takes_value("no-such-option"), -1);
    la_result *r = (la_result *)&o; /* must be reset to NULL on failure */
    assert_int_equal(la_audit_run(o, &r), LA_EINVAL); /* no inputs */
    assert_null(r);
    la_options_free(o);
    la_options_free(NULL);
    la_result_free(NULL);
    assert_true(LEAKAUDIT_VERSION == LEAKAUDIT_VERSION_MAJOR * 10000 + LEAKAUDIT_VERSION_MINOR * 100 + LEAKAUDIT_VERSION_PATCH);
    char want[32];
    snprintf(want, sizeof want, "%d.%d.%d", LEAKAUDIT_VERSION_MAJOR, LEAKAUDIT_VERSION_MINOR, LEAKAUDIT_VERSION_PATCH);
    assert_string_equal(la_version(), want);
}

/* The exact copy t1 ~ d2 is the one link: one cluster, both rows quarantined, the exit code 1. */
static void check_result(const la_result *r)
{
    const la_table *t = la_result_table(r);
    const la_row *rows = la_table_rows_const(t);
    assert_string_equal(la_table_part_name(t, la_result_heldout(r)), "test");
    size_t n = 0;
    const la_pair *links = la_result_links(r, &n);
    assert_int_equal(n, 1);
    assert_string_equal(rows[links[0].b].id, "t1");
    assert_string_equal(rows[links[0].a].id, "d2");
    assert_true(links[0].kinds & LA_KIND_EXACT);
    assert_int_equal(links[0].grade, LA_GRADE_COPY);
    assert_int_equal(la_result_nclusters(r), 1);
    for (size_t i = 0; i < la_table_nrows(t); i++) {
        int linked = !strcmp(rows[i].id, "t1") || !strcmp(rows[i].id, "d2");
        assert_int_equal(la_result_cluster(r, i), linked ? 1 : 0);
        if (linked) assert_int_equal(la_result_outcome(r, i), LA_OUTCOME_QUARANTINE);
        else assert_int_equal(la_result_outcome(r, i), rows[i].part);
    }
    size_t nrej = 7;
    la_result_rejects(r, &nrej);
    assert_int_equal(nrej, 0);
    la_result_stats st;
    la_result_stats_get(r, &st);
    assert_int_equal(st.rows_read, 6);
    assert_int_equal(st.links, 1);
    assert_int_equal(st.gating_links, 1);
    assert_int_equal(st.clusters, 1);
    assert_int_equal(st.quarantined, 2);
    assert_int_equal(st.heldout_rows, 3);
    assert_int_equal(st.heldout_clean, 2);
    assert_int_equal(st.accuracy_observed, 1);
    assert_true(st.accuracy == 0.5); /* t2 (0) and t3 (1) */
    assert_int_equal(st.leaks, 1);
    assert_int_equal(st.exit_code, 1);
}

static void test_run_and_write(void **state)
{
    (void)state;
    la_options *o = options();
    la_result *r = NULL;
    assert_int_equal(la_audit_run(o, &r), LA_OK);
    la_options_free(o); /* the result does not need the options any more */
    check_result(r);
    char out[128], path[160];
    snprintf(out, sizeof out, "%s/report", g_dir);
    assert_int_equal(la_result_write(r, out), LA_OK);
    snprintf(path, sizeof path, "%s/pairs.jsonl", out);
    assert_int_equal(access(path, R_OK), 0);
    snprintf(path, sizeof path, "%s/assignments.jsonl", out);
    assert_int_equal(access(path, R_OK), 0);
    /* the command's summary, cut to the room given and whole with enough */
    char small[8], text[2048];
    size_t need = la_result_summary(r, out, small, sizeof small);
    assert_true(need >= sizeof small && need < sizeof text);
    assert_int_equal(strlen(small), sizeof small - 1);
    assert_int_equal(la_result_summary(r, out, text, sizeof text), need);
    assert_non_null(strstr(text, "links: 1 pairs (family 0, time 0, exact 1,"));
    assert_non_null(strstr(text, ") in 1 clusters;"));
    assert_non_null(strstr(text, "exit 1: leaks found"));
    assert_memory_equal(small, text, sizeof small - 1);
    /* a folder that holds an input is never replaced */
    assert_int_equal(la_result_write(r, g_dir), LA_EINVAL);
    la_result_free(r);
}

/* --backend gpu on a machine without a usable device: the library says which (no device, or no
 * CUDA in the build), not that the options were bad; the command maps both to exit 2. */
static void test_gpu_without_device(void **state)
{
    (void)state;
    la_options *o = options();
    assert_int_equal(la_options_set(o, "backend", "gpu"), LA_OK);
    la_result *r = NULL;
    la_status s = la_audit_run(o, &r);
    la_options_free(o);
    if (s == LA_OK) { /* a device is there: nothing to check */
        la_result_free(r);
        return;
    }
    assert_true(s == LA_ENODEV || s == LA_EUNSUPPORTED);
    assert_non_null(strstr(la_last_error(), "--backend gpu"));
}

static void *run_one(void *arg)
{
    la_result **out = arg;
    la_options *o = options();
    la_status s = la_audit_run(o, out);
    la_options_free(o);
    return s == LA_OK ? out : NULL;
}

static void test_two_threads(void **state)
{
    (void)state;
    enum { T = 4 };
    pthread_t th[T];
    la_result *r[T] = {0};
    for (int k = 0; k < T; k++) assert_int_equal(pthread_create(&th[k], NULL, run_one, &r[k]), 0);
    for (int k = 0; k < T; k++) {
        void *ret = NULL;
        assert_int_equal(pthread_join(th[k], &ret), 0);
        assert_non_null(ret);
        check_result(r[k]);
        la_result_free(r[k]);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_options_refused),
        cmocka_unit_test(test_run_and_write),
        cmocka_unit_test(test_gpu_without_device),
        cmocka_unit_test(test_two_threads),
    };
    return cmocka_run_group_tests(tests, setup, scratch_teardown);
}
