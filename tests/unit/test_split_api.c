/*
 * test_split_api.c - the split entry points of include/leakaudit.h (la_options_new_split,
 * la_split_run, la_split_result): split's own option names (audit's refused, and the other way
 * round), the worked example's sets row by row, and, for the chronological rule on examples/gsm8k
 * and the three-set rule on labeled rows, every row's set from la_split_result_set equal to what
 * `leakaudit split` writes into assignments.jsonl for the same input and options, and the files
 * la_split_result_write writes equal to the command's byte for byte (report.json's timings aside).
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
#include <json-c/json.h>

#include "api_fixture.h"
#include "commands.h"
#include "leakaudit.h"

static char g_labeled[128];

static const char *source_file(const char *rel)
{
    static char path[4][1024];
    static int k;
    k = (k + 1) % 4;
    snprintf(path[k], sizeof path[k], "%s/%s", LA_SOURCE_DIR, rel);
    return path[k];
}

/* Labeled rows for the three-set rule: two classes, a family of three and one exact copy. */
static void write_labeled(const char *path)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    for (int i = 0; i < 40; i++)
        fprintf(f, "{\"id\":\"r%02d\",\"text\":\"question %d about %s number %d\",\"label\":\"%s\"%s}\n", i, i,
                i % 3 ? "apples" : "rivers", i * 7, i % 3 ? "fruit" : "water", i < 3 ? ",\"family\":\"fam\"" : "");
    fputs("{\"id\":\"r99\",\"text\":\"Question 5 about apples number 35\",\"label\":\"fruit\"}\n", f);
    fclose(f);
}

static int setup(void **state)
{
    (void)state;
    if (scratch_make("split-api")) return -1;
    snprintf(g_labeled, sizeof g_labeled, "%s/labeled.jsonl", g_dir);
    write_labeled(g_labeled);
    return 0;
}

/* The name of row i's set. */
static const char *set_name(const la_split_result *r, size_t i)
{
    uint32_t set = la_split_result_set(r, i);
    return set == LA_OUTCOME_QUARANTINE ? "quarantine" : la_table_part_name(la_split_result_table(r), set);
}

static void test_options(void **state)
{
    (void)state;
    la_options *o = quick_split_options();
    assert_int_equal(la_options_set(o, "resolve", "keep-test"), LA_EINVAL);
    assert_non_null(strstr(la_last_error(), "'resolve' is not an option of leakaudit split"));
    assert_int_equal(la_options_set(o, "min-share", "0.9"), LA_EINVAL);
    assert_non_null(strstr(la_last_error(), "--min-share 0.9: expected a number from 0 to 0.5"));
    assert_int_equal(la_options_set(o, "fail-on", "exact"), LA_EINVAL);
    assert_non_null(strstr(la_last_error(), "--fail-on does not apply to split"));
    assert_int_equal(la_options_set(o, "three-set", NULL), LA_OK);
    assert_int_equal(la_options_set(o, "seed", "7"), LA_OK);
    assert_int_equal(la_options_add_input(o, "dev", g_labeled), LA_EINVAL);
    assert_non_null(strstr(la_last_error(), "a split places the rows by its rule"));
    assert_int_equal(la_split_option_takes_value("seed"), 1);
    assert_int_equal(la_split_option_takes_value("three-set"), 0);
    assert_int_equal(la_split_option_takes_value("resolve"), -1);
    assert_int_equal(la_option_takes_value("three-set"), -1);
    la_split_result *r = (la_split_result *)&o; /* must be reset to NULL on failure */
    assert_int_equal(la_split_run(o, &r), LA_EINVAL); /* no inputs */
    assert_null(r);
    la_result *ar = NULL;
    assert_int_equal(la_audit_run(o, &ar), LA_EINVAL);
    assert_non_null(strstr(la_last_error(), "options of a split"));
    la_options_free(o);

    la_options *a = NULL;
    assert_int_equal(la_options_new(&a), LA_OK);
    assert_int_equal(la_options_set(a, "three-set", NULL), LA_EINVAL);
    assert_int_equal(la_split_run(a, &r), LA_EINVAL);
    assert_non_null(strstr(la_last_error(), "options of an audit"));
    assert_null(r);
    la_options_free(a);
    la_split_result_free(NULL);
}

static void test_worked_example(void **state)
{
    (void)state;
    la_options *o = quick_split_options();
    assert_int_equal(la_options_set(o, "cutoff", "2026-07-01"), LA_OK);
    assert_int_equal(la_options_add_input(o, NULL, source_file("tests/data/worked_example.jsonl")), LA_OK);
    la_split_result *r = NULL;
    assert_int_equal(la_split_run(o, &r), LA_OK);
    la_options_free(o); /* the result does not need the options */
    static const char *const want[][2] = {{"access-q1", "dev"},   {"access-q2", "dev"},   {"export-q1", "test"},
                                          {"export-q2", "test"},  {"export-q3", "test"},  {"refund-v1", "quarantine"},
                                          {"refund-v2", "quarantine"}};
    const la_table *t = la_split_result_table(r);
    assert_int_equal(la_table_nrows(t), 7);
    for (size_t k = 0; k < sizeof want / sizeof *want; k++) {
        size_t i = la_table_find_id(t, want[k][0]);
        assert_true(i != (size_t)-1);
        assert_string_equal(set_name(r, i), want[k][1]);
    }
    size_t nrej = 7;
    la_split_result_rejects(r, &nrej);
    assert_int_equal(nrej, 0);
    la_split_stats st;
    la_split_result_stats_get(r, &st);
    assert_int_equal(st.rows_read, 7);
    assert_int_equal(st.dev, 2);
    assert_int_equal(st.test, 3);
    assert_int_equal(st.quarantined, 2);
    assert_int_equal(st.demos, 0);
    assert_int_equal(st.three_set, 0);
    assert_int_equal(st.exit_code, 0);
    char line[512];
    la_split_result_summary(r, "out", line, sizeof line);
    char head[128];
    snprintf(head, sizeof head, "leakaudit %s split at 2026-07-01: dev 2, test 3, quarantine 2 rows", la_version());
    assert_memory_equal(line, head, strlen(head));
    assert_non_null(strstr(line, "outputs: out/"));
    la_split_result_free(r);
}

static void test_min_share(void **state)
{
    (void)state;
    la_options *o = quick_split_options();
    assert_int_equal(la_options_set(o, "cutoff", "2020-07-01"), LA_OK);
    assert_int_equal(la_options_set(o, "min-share", "0.2"), LA_OK);
    assert_int_equal(la_options_add_input(o, NULL, source_file("examples/policies/policies.jsonl")), LA_OK);
    la_split_result *r = NULL;
    assert_int_equal(la_split_run(o, &r), LA_OK);
    la_split_stats st;
    la_split_result_stats_get(r, &st);
    assert_int_equal(st.dev, 0);
    assert_int_equal(st.test, 7);
    assert_int_equal(st.exit_code, 1);
    la_split_result_free(r);
    la_options_free(o);
}

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *s = malloc((size_t)n + 1);
    assert_non_null(s);
    assert_int_equal(fread(s, 1, (size_t)n, f), (size_t)n);
    s[n] = '\0';
    fclose(f);
    return s;
}

/* The file's text without its "timings" line (the only one that differs between two runs). */
static char *without_timings(const char *path)
{
    char *s = slurp(path);
    assert_non_null(s);
    char *t = strstr(s, "\n  \"timings\":");
    if (t) {
        char *end = strchr(t + 1, '\n');
        memmove(t, end ? end : t + strlen(t), strlen(end ? end : t + strlen(t)) + 1);
    }
    return s;
}

/* `leakaudit split ARGS... --out cli_dir` in this process, its exit code. */
static int cli_split(const char *const *args, size_t nargs, const char *cli_dir)
{
    char *argv[32];
    size_t argc = 0;
    argv[argc++] = "split";
    for (size_t k = 0; k < nargs; k++) argv[argc++] = (char *)args[k];
    argv[argc++] = "--out";
    argv[argc++] = (char *)cli_dir;
    argv[argc] = NULL;
    return la_cmd_split((int)argc, argv);
}

/* The API with these options (name, value pairs; value "" for a flag) and inputs against the
 * command with the same, row by row and file by file. */
static void same_as_cli(const char *const *opts, size_t nopts, const char *const *inputs, size_t ninputs,
                        const char *const *files, size_t nfiles, size_t min_quarantined)
{
    la_options *o = quick_split_options();
    const char *args[32];
    size_t nargs = 0;
    for (size_t k = 0; k < nopts; k += 2) {
        assert_int_equal(la_options_set(o, opts[k], opts[k + 1][0] ? opts[k + 1] : NULL), LA_OK);
        static char flags[16][64];
        snprintf(flags[k / 2], sizeof flags[k / 2], "--%s", opts[k]);
        args[nargs++] = flags[k / 2];
        if (opts[k + 1][0]) args[nargs++] = opts[k + 1];
    }
    args[nargs++] = "--quiet";
    for (size_t k = 0; k < ninputs; k++) {
        assert_int_equal(la_options_add_input(o, NULL, inputs[k]), LA_OK);
        args[nargs++] = inputs[k];
    }
    la_split_result *r = NULL;
    assert_int_equal(la_split_run(o, &r), LA_OK);
    char cli_dir[128], api_dir[128], path[256];
    snprintf(cli_dir, sizeof cli_dir, "%s/cli-%s", g_dir, opts[0]);
    snprintf(api_dir, sizeof api_dir, "%s/api-%s", g_dir, opts[0]);
    la_split_stats st;
    la_split_result_stats_get(r, &st);
    assert_int_equal(cli_split(args, nargs, cli_dir), st.exit_code);
    assert_int_equal(la_split_result_write(r, api_dir), LA_OK);

    /* every row's set as the command wrote it */
    snprintf(path, sizeof path, "%s/assignments.jsonl", cli_dir);
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    const la_table *t = la_split_result_table(r);
    char line[1 << 14];
    size_t rows = 0, quarantined = 0;
    while (fgets(line, sizeof line, f)) {
        json_object *j = json_tokener_parse(line), *id = NULL, *out = NULL;
        assert_non_null(j);
        assert_true(json_object_object_get_ex(j, "id", &id) && json_object_object_get_ex(j, "split_out", &out));
        size_t i = la_table_find_id(t, json_object_get_string(id));
        assert_true(i != (size_t)-1);
        assert_string_equal(set_name(r, i), json_object_get_string(out));
        quarantined += !strcmp(json_object_get_string(out), "quarantine");
        rows++;
        json_object_put(j);
    }
    fclose(f);
    assert_int_equal(rows, la_table_nrows(t));
    assert_int_equal(quarantined, st.quarantined);
    assert_true(quarantined >= min_quarantined);
    for (size_t k = 0; k < nfiles; k++) {
        char a[256], c[256];
        snprintf(c, sizeof c, "%s/%s", cli_dir, files[k]);
        snprintf(a, sizeof a, "%s/%s", api_dir, files[k]);
        char *want = without_timings(c), *got = without_timings(a);
        assert_string_equal(got, want);
        free(want);
        free(got);
    }
    la_split_result_free(r);
    la_options_free(o);
}

static void test_chronological_as_cli(void **state)
{
    (void)state;
    const char *opts[] = {"cutoff", "2026-01-01", "text-field", "question", "backend", "cpu"};
    const char *inputs[] = {source_file("examples/gsm8k/dev.jsonl"), source_file("examples/gsm8k/test.jsonl")};
    const char *files[] = {"assignments.jsonl", "dev.jsonl", "test.jsonl", "quarantine.jsonl", "rejects.jsonl",
                           "report.json", "report.md"};
    /* the planted copies of test items in dev, dated on both sides of the cutoff */
    same_as_cli(opts, 6, inputs, 2, files, 7, 10);
}

static void test_three_set_as_cli(void **state)
{
    (void)state;
    const char *opts[] = {"three-set", "", "seed", "7", "dev-share", "0.3", "demos-per-class", "1"};
    const char *inputs[] = {g_labeled};
    const char *files[] = {"assignments.jsonl", "demos.jsonl", "dev.jsonl", "test.jsonl", "quarantine.jsonl",
                           "manifest.json", "manifest.md", "report.json"};
    /* r99 is an exact copy of r05: set aside */
    same_as_cli(opts, 8, inputs, 1, files, 8, 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_options),
        cmocka_unit_test(test_worked_example),
        cmocka_unit_test(test_min_share),
        cmocka_unit_test(test_chronological_as_cli),
        cmocka_unit_test(test_three_set_as_cli),
    };
    return cmocka_run_group_tests(tests, setup, scratch_teardown);
}
