/*
 * test_waivers.c - reading a waivers file (JSONL and CSV) and a baseline folder: every field taken
 * as written, kind optional, and every rule broken (a malformed or impossible date, an empty or
 * missing field, an unknown field or kind, a number for an id, a broken line, overlapping entries)
 * an LA_EINPUT whose message names FILE:LINE: FIELD; a baseline that is not an audit's folder, a
 * bad text hash or two lines for one link the same.
 * Not for: what the waivers and the baseline decide (test_link_delta.c).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "api_fixture.h"
#include "baseline.h"
#include "waivers.h"

/* The files of each test go in a scratch folder (api_fixture.h's g_dir). */
static int make_dir(void **state)
{
    (void)state;
    return scratch_make("waivers");
}

/* Write text to g_dir/name; the path in a static buffer. */
static const char *write_file(const char *name, const char *text)
{
    static char path[160];
    snprintf(path, sizeof path, "%s/%s", g_dir, name);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
    return path;
}

#define GOOD "{\"heldout_id\":\"t1\",\"seen_id\":\"d1\",\"reason\":\"known\",\"accepted_by\":\"r.lee\",\"expires\":\"2030-01-31\"}\n"

static void test_reads_jsonl(void **state)
{
    (void)state;
    const char *p = write_file("w.jsonl", GOOD "\n"
                                          "{\"heldout_id\":\"t2\",\"seen_id\":\"d2\",\"kind\":\"near\",\"reason\":\"template\","
                                          "\"accepted_by\":\"a.b\",\"expires\":\"2029-02-28\"}\n"
                                          "{\"heldout_id\":\"t3\",\"seen_id\":\"d3\",\"kind\":null,\"reason\":\"x\","
                                          "\"accepted_by\":\"a.b\",\"expires\":\"2029-03-01\"}\n");
    la_waivers ws;
    assert_int_equal(la_waivers_read(p, &ws), LA_OK);
    assert_int_equal(ws.n, 3);
    assert_string_equal(ws.v[0].heldout_id, "t1");
    assert_string_equal(ws.v[0].seen_id, "d1");
    assert_string_equal(ws.v[0].reason, "known");
    assert_string_equal(ws.v[0].accepted_by, "r.lee");
    char d[11];
    la_date_format(ws.v[0].expires, d);
    assert_string_equal(d, "2030-01-31");
    assert_int_equal(ws.v[0].kind, 0);
    assert_int_equal(ws.v[0].line, 1);
    assert_int_equal(ws.v[1].kind, LA_KIND_NEAR);
    assert_int_equal(ws.v[1].line, 3); /* the blank line counted */
    assert_int_equal(ws.v[2].kind, 0);
    la_waivers_free(&ws);

    p = write_file("empty.jsonl", "");
    assert_int_equal(la_waivers_read(p, &ws), LA_OK);
    assert_int_equal(ws.n, 0);
    la_waivers_free(&ws);
}

static void test_reads_csv(void **state)
{
    (void)state;
    const char *p = write_file("w.csv", "heldout_id,seen_id,kind,reason,accepted_by,expires\n"
                                        "t1,d1,,\"known, reviewed\",r.lee,2030-01-31\n"
                                        "t2,d2,exact,copy in the tutorial,a.b,2030-02-01\n");
    la_waivers ws;
    assert_int_equal(la_waivers_read(p, &ws), LA_OK);
    assert_int_equal(ws.n, 2);
    assert_int_equal(ws.v[0].kind, 0);
    assert_string_equal(ws.v[0].reason, "known, reviewed");
    assert_int_equal(ws.v[1].kind, LA_KIND_EXACT);
    assert_int_equal(ws.v[1].line, 3);
    la_waivers_free(&ws);
}

/* A file of GOOD then `second` must fail with a message holding `want`. */
static void expect_rejected(const char *second, const char *want)
{
    char text[1024];
    snprintf(text, sizeof text, "%s%s\n", GOOD, second);
    const char *p = write_file("bad.jsonl", text);
    la_waivers ws;
    assert_int_equal(la_waivers_read(p, &ws), LA_EINPUT);
    if (!strstr(la_last_error(), want) || !strstr(la_last_error(), "bad.jsonl:2: ")) {
        print_error("message: %s\nexpected: bad.jsonl:2: ... %s\n", la_last_error(), want);
        fail();
    }
    la_waivers_free(&ws);
}

#define ENTRY(held, kind, reason, who, expires)                                                                       \
    "{\"heldout_id\":" held ",\"seen_id\":\"d9\"" kind ",\"reason\":" reason ",\"accepted_by\":" who                 \
    ",\"expires\":" expires "}"

static void test_rejects(void **state)
{
    (void)state;
    expect_rejected(ENTRY("\"t9\"", "", "\"r\"", "\"a\"", "\"2030-02-30\""), "expires: expected a date YYYY-MM-DD");
    expect_rejected(ENTRY("\"t9\"", "", "\"r\"", "\"a\"", "\"2030-1-05\""), "expires: expected a date YYYY-MM-DD");
    expect_rejected(ENTRY("\"t9\"", "", "\"r\"", "\"a\"", "\"2030-01-05T00:00Z\""), "expires: expected a date");
    expect_rejected(ENTRY("\"t9\"", "", "\"r\"", "\"a\"", "20300105"), "expires: expected a string");
    expect_rejected(ENTRY("\"t9\"", "", "\"r\"", "\"a\"", "\"\""), "expires: expected a non-empty string");
    expect_rejected(ENTRY("\"\"", "", "\"r\"", "\"a\"", "\"2030-01-05\""), "heldout_id: expected a non-empty string");
    expect_rejected(ENTRY("7", "", "\"r\"", "\"a\"", "\"2030-01-05\""), "heldout_id: expected a string");
    expect_rejected(ENTRY("\"t9\"", "", "\"\\t\"", "\"a\"", "\"2030-01-05\""), "reason: expected a non-empty string");
    expect_rejected(ENTRY("\"t9\"", "", "\"r\"", "null", "\"2030-01-05\""), "accepted_by: missing");
    expect_rejected(ENTRY("\"t9\"", ",\"kind\":\"copy\"", "\"r\"", "\"a\"", "\"2030-01-05\""),
                    "kind: expected family, time, exact, near or semantic");
    expect_rejected(ENTRY("\"t9\"", ",\"note\":\"x\"", "\"r\"", "\"a\"", "\"2030-01-05\""), "note: not a field of a waiver");
    expect_rejected("{}", "heldout_id: missing");
    expect_rejected("[1]", "expected a JSON object");
    expect_rejected("{\"heldout_id\":\"t9\",", "expected one JSON object per line");
    /* the same link again: exactly, or with a kind beside the waiver of every kind */
    expect_rejected(GOOD, "waives the link t1 ~ d1 (every kind) that line 1 waives already");
    expect_rejected("{\"heldout_id\":\"t1\",\"seen_id\":\"d1\",\"kind\":\"near\",\"reason\":\"r\",\"accepted_by\":\"a\","
                    "\"expires\":\"2031-01-01\"}",
                    "waives the link t1 ~ d1 (near) that line 1 waives already (every kind)");

    la_waivers ws;
    assert_int_equal(la_waivers_read("/nonexistent/waivers.jsonl", &ws), LA_EIO);
    assert_non_null(strstr(la_last_error(), "/nonexistent/waivers.jsonl"));
    la_waivers_free(&ws);
}

static const char *make_baseline(const char *name, const char *report, const char *pairs)
{
    static char dir[160];
    char sub[96];
    snprintf(sub, sizeof sub, "%s/%s", g_dir, name);
    mkdir(sub, 0755);
    snprintf(sub, sizeof sub, "%s/report.json", name);
    write_file(sub, report);
    snprintf(sub, sizeof sub, "%s/pairs.jsonl", name);
    write_file(sub, pairs);
    snprintf(dir, sizeof dir, "%s/%s", g_dir, name);
    return dir;
}

#define REPORT "{\"command\": \"audit\", \"findings\": {\"time\": [{\"id\": \"d7\"}]}}"
#define PAIR1 "{\"id_a\":\"d1\",\"split_a\":\"dev\",\"id_b\":\"t1\",\"split_b\":\"test\",\"kinds\":[\"exact\",\"near\"],\"grade\":\"copy\",\"gates\":true"
#define PAIR2 "{\"id_a\":\"d2\",\"split_a\":\"dev\",\"id_b\":\"t1\",\"split_b\":\"test\",\"kinds\":[\"family\"],\"grade\":null,\"gates\":false"
#define HASHES ",\"text_hash_a\":\"000000000000000a00000000000000ff\",\"text_hash_b\":\"0123456789abcdef0000000000000001\""

static void test_baseline_read(void **state)
{
    (void)state;
    la_baseline b;
    const char *dir = make_baseline("ok", REPORT, PAIR1 HASHES "}\n" PAIR2 "}\n");
    assert_int_equal(la_baseline_read(dir, &b), LA_OK);
    assert_int_equal(b.nlinks, 2);
    assert_string_equal(b.links[0].heldout_id, "t1");
    assert_string_equal(b.links[0].seen_id, "d1");
    assert_string_equal(b.links[0].seen_split, "dev");
    assert_int_equal(b.links[0].kinds, LA_KIND_EXACT | LA_KIND_NEAR);
    assert_int_equal(b.links[0].grade, LA_GRADE_COPY);
    assert_true(b.links[0].gated);
    assert_true(b.links[0].hashed);
    assert_true(b.links[0].seen_hash[1] == 0xa && b.links[0].seen_hash[0] == 0xff);
    assert_true(b.links[0].heldout_hash[1] == 0x0123456789abcdefull && b.links[0].heldout_hash[0] == 1);
    assert_false(b.links[1].hashed);
    assert_false(b.links[1].gated);
    assert_int_equal(b.links[1].grade, LA_GRADE_NONE);
    assert_int_equal(b.links[1].line, 2);
    assert_int_equal(b.ntime, 1);
    assert_string_equal(b.time_ids[0], "d7");
    la_baseline_free(&b);
}

static void expect_bad_baseline(const char *name, const char *report, const char *pairs, const char *want)
{
    la_baseline b;
    const char *dir = make_baseline(name, report, pairs);
    assert_int_equal(la_baseline_read(dir, &b), LA_EINPUT);
    if (!strstr(la_last_error(), want)) {
        print_error("message: %s\nexpected: %s\n", la_last_error(), want);
        fail();
    }
    la_baseline_free(&b);
}

static void test_baseline_rejects(void **state)
{
    (void)state;
    la_baseline b;
    const char *file = write_file("plain.jsonl", "{}\n");
    assert_int_equal(la_baseline_read(file, &b), LA_EINPUT);
    assert_non_null(strstr(la_last_error(), "expected the output folder of an earlier leakaudit audit"));
    la_baseline_free(&b);
    expect_bad_baseline("split", "{\"command\": \"split\", \"findings\": {\"time\": []}}", "", "command: expected \"audit\"");
    expect_bad_baseline("notjson", "not json", "", "report.json: expected the report.json of a leakaudit audit");
    expect_bad_baseline("hash", REPORT, PAIR1 ",\"text_hash_a\":\"xyz\",\"text_hash_b\":\"00\"}\n",
                        "pairs.jsonl:1: text_hash_a: expected 32 lowercase hex digits");
    expect_bad_baseline("onehash", REPORT, PAIR1 ",\"text_hash_a\":\"000000000000000a00000000000000ff\"}\n",
                        "pairs.jsonl:1: text_hash_b: expected 32 lowercase hex digits");
    expect_bad_baseline("kinds", REPORT, PAIR1 "}\n{\"id_a\":\"d2\",\"split_a\":\"dev\",\"id_b\":\"t1\",\"split_b\":\"test\","
                                               "\"kinds\":[],\"grade\":null,\"gates\":true}\n",
                        "pairs.jsonl:2: kinds: expected a non-empty array of kind names");
    expect_bad_baseline("gates", REPORT, "{\"id_a\":\"d2\",\"split_a\":\"dev\",\"id_b\":\"t1\",\"split_b\":\"test\","
                                         "\"kinds\":[\"near\"],\"grade\":\"near\",\"gates\":1}\n",
                        "pairs.jsonl:1: gates: expected true or false");
    expect_bad_baseline("ids", REPORT, "{\"id_a\":\"\",\"kinds\":[\"near\"]}\n", "pairs.jsonl:1: id_b: expected a non-empty string");
    expect_bad_baseline("dup", REPORT, PAIR1 "}\n" PAIR2 "}\n" PAIR1 "}\n", "pairs.jsonl:3: names the link of line 1 again");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_reads_jsonl),   cmocka_unit_test(test_reads_csv),
        cmocka_unit_test(test_rejects),       cmocka_unit_test(test_baseline_read),
        cmocka_unit_test(test_baseline_rejects),
    };
    return cmocka_run_group_tests(tests, make_dir, scratch_teardown);
}
