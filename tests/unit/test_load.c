/*
 * test_load.c - every validation rule of the loader, through la_load_file on real files in a
 * temporary directory: each bad record becomes a reject with its line and the exact
 * "FIELD: what was expected" reason, and every good record a row. Also the input formats (JSONL,
 * CSV, TSV, gzip, zstd), generated ids, dotted paths and joined text fields.
 * Not for: what the commands do with rejects (see tests/cli/).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>
#include <zstd.h>

#include "leakaudit.h"
#include "input.h"
#include "load.h"
#include "records.h"

typedef struct fixture {
    char dir[64];
    char path[8][256]; /* files written by this test, removed in teardown */
    int npath;
    la_table *t;
    la_loader L;
    la_load_opts o;
    int loader_ready;
} fixture;

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    if (!f) return -1;
    snprintf(f->dir, sizeof f->dir, "/tmp/la-test-load-XXXXXX");
    if (!mkdtemp(f->dir)) return -1;
    if (la_table_new(&f->t) != LA_OK) return -1;
    la_load_opts_default(&f->o);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    for (int i = 0; i < f->npath; i++) unlink(f->path[i]);
    rmdir(f->dir);
    if (f->loader_ready) la_loader_free(&f->L);
    la_table_free(f->t);
    free(f);
    return 0;
}

/* p = DIR/name (256 bytes), through a copy of DIR: p and DIR are parts of one fixture, and GCC
 * cannot tell they do not overlap (-Wrestrict). */
static void la_fixture_path(const fixture *f, char *p, const char *name)
{
    char dir[sizeof f->dir];
    memcpy(dir, f->dir, sizeof dir);
    snprintf(p, 256, "%s/%s", dir, name);
}

/* Write bytes to DIR/name and return the path (owned by the fixture). */
static const char *put(fixture *f, const char *name, const void *data, size_t n)
{
    assert_true(f->npath < 8);
    char *p = f->path[f->npath++];
    la_fixture_path(f, p, name);
    FILE *fp = fopen(p, "wb");
    assert_non_null(fp);
    assert_int_equal(fwrite(data, 1, n, fp), n);
    assert_int_equal(fclose(fp), 0);
    return p;
}

static const char *put_str(fixture *f, const char *name, const char *s) { return put(f, name, s, strlen(s)); }

static la_loader *loader(fixture *f)
{
    if (!f->loader_ready) {
        la_loader_init(&f->L, f->t, &f->o);
        f->loader_ready = 1;
    }
    return &f->L;
}

static void load(fixture *f, const char *path, const char *part)
{
    la_status s = la_load_file(loader(f), path, part);
    if (s != LA_OK) fail_msg("la_load_file(%s): %s", path, la_last_error());
}

/* Reject k has one reason, on this line, equal to `reason`; its full message is PATH:LINE: reason. */
static void expect_reject(fixture *f, size_t k, const char *path, uint32_t line, const char *reason)
{
    assert_true(k < f->L.nrejects);
    const la_reject *r = &f->L.rejects[k];
    assert_int_equal(r->line, line);
    assert_int_equal(r->nreasons, 1);
    assert_string_equal(r->reasons[0], reason);
    char want[1024];
    snprintf(want, sizeof want, "%s:%u: %s", path, line, reason);
    char *m = la_reject_message(&f->L, r, 0);
    assert_non_null(m);
    assert_string_equal(m, want);
    free(m);
}

static const la_row *row(fixture *f, const char *id)
{
    size_t i = la_table_find_id(f->t, id);
    if (i == (size_t)-1) fail_msg("no row with id '%s'", id);
    return &la_table_rows_const(f->t)[i];
}

/* Counts add up for every file: rows read = rows placed (from that file) + rows rejected. */
static void expect_counts(fixture *f, size_t file, size_t read, size_t rejected)
{
    assert_true(file < f->L.nfiles);
    assert_int_equal(f->L.files[file].rows_read, read);
    assert_int_equal(f->L.files[file].rows_rejected, rejected);
    size_t placed = 0;
    const la_row *rows = la_table_rows_const(f->t);
    for (size_t i = 0; i < la_table_nrows(f->t); i++) placed += rows[i].file == file;
    assert_int_equal(placed + rejected, read);
}

/* ---- id ---- */

static void test_duplicate_id(void **state)
{
    fixture *f = *state;
    const char *a = put_str(f, "a.jsonl",
                            "{\"id\":\"q1\",\"text\":\"one\"}\n"
                            "{\"id\":\"q2\",\"text\":\"two\"}\n"
                            "{\"id\":\"q1\",\"text\":\"three\"}\n");
    const char *b = put_str(f, "b.jsonl", "{\"id\":\"q2\",\"text\":\"again\"}\n{\"id\":\"q3\",\"text\":\"x\"}\n");
    load(f, a, "dev");
    load(f, b, "test");
    assert_int_equal(la_table_nrows(f->t), 3);
    assert_int_equal(f->L.nrejects, 2);
    char want[512];
    snprintf(want, sizeof want, "id: duplicate id 'q1' (first seen at %s:1)", a);
    expect_reject(f, 0, a, 3, want);
    /* unique across all inputs, not only within a file */
    snprintf(want, sizeof want, "id: duplicate id 'q2' (first seen at %s:2)", a);
    expect_reject(f, 1, b, 1, want);
    assert_string_equal(row(f, "q1")->text, "one"); /* the first keeps its place */
    expect_counts(f, 0, 3, 1);
    expect_counts(f, 1, 2, 1);
}

static void test_empty_missing_and_typed_id(void **state)
{
    fixture *f = *state;
    const char *p = put_str(f, "ids.jsonl",
                            "{\"id\":\"ok\",\"text\":\"fine\"}\n"
                            "{\"id\":\"\",\"text\":\"empty id\"}\n"
                            "{\"text\":\"no id here, but other rows have one\"}\n"
                            "{\"id\":17,\"text\":\"number id\"}\n");
    load(f, p, "dev");
    assert_int_equal(la_table_nrows(f->t), 1);
    assert_int_equal(f->L.nrejects, 3);
    expect_reject(f, 0, p, 2, "id: empty; expected a non-empty string");
    expect_reject(f, 1, p, 3, "id: missing; expected a non-empty string");
    expect_reject(f, 2, p, 4, "id: expected a non-empty string, got a number");
    assert_int_equal(f->L.files[0].ids_generated, 0);
    expect_counts(f, 0, 4, 3);
}

static void test_generated_ids(void **state)
{
    fixture *f = *state;
    /* GSM8K-like: no id field anywhere, a blank line in between */
    const char *p = put_str(f, "gsm.jsonl",
                            "{\"question\":\"How many apples?\",\"answer\":\"3\"}\n"
                            "\n"
                            "{\"question\":\"How many pears?\",\"answer\":\"4\"}\n");
    f->o.text_fields[0] = "question";
    load(f, p, "test");
    assert_int_equal(f->L.nrejects, 0);
    assert_int_equal(la_table_nrows(f->t), 2);
    assert_string_equal(row(f, "gsm.jsonl:1")->text, "How many apples?");
    assert_string_equal(row(f, "gsm.jsonl:3")->text, "How many pears?");
    assert_int_equal(row(f, "gsm.jsonl:3")->line, 3);
    assert_int_equal(f->L.files[0].ids_generated, 1);
}

/* ---- dates ---- */

static void test_dates(void **state)
{
    fixture *f = *state;
    const char *p = put_str(f, "dates.jsonl",
                            "{\"id\":\"d1\",\"text\":\"t\",\"available_on\":\"2026-07-01\"}\n"
                            "{\"id\":\"d2\",\"text\":\"t\",\"available_on\":\"2026-7-1\"}\n"
                            "{\"id\":\"d3\",\"text\":\"t\",\"available_on\":\"2026-02-30\"}\n"
                            "{\"id\":\"d4\",\"text\":\"t\",\"available_on\":\"\xef\xbc\x92\xef\xbc\x90\xef\xbc\x92\xef\xbc\x96-07-01\"}\n"
                            "{\"id\":\"d5\",\"text\":\"t\",\"available_on\":\"2026-07-01T10:00:00Z\"}\n"
                            "{\"id\":\"d6\",\"text\":\"t\",\"available_on\":20260701}\n"
                            "{\"id\":\"d7\",\"text\":\"t\"}\n");
    load(f, p, "dev");
    assert_int_equal(la_table_nrows(f->t), 2);
    assert_int_equal(f->L.nrejects, 5);
    expect_reject(f, 0, p, 2, "available_on: expected a date YYYY-MM-DD that exists on the calendar, got '2026-7-1'");
    expect_reject(f, 1, p, 3, "available_on: expected a date YYYY-MM-DD that exists on the calendar, got '2026-02-30'");
    expect_reject(f, 2, p, 4,
                  "available_on: expected a date YYYY-MM-DD that exists on the calendar, got "
                  "'\\xef\\xbc\\x92\\xef\\xbc\\x90\\xef\\xbc\\x92\\xef\\xbc\\x96-07-01'");
    expect_reject(f, 3, p, 5,
                  "available_on: expected a date YYYY-MM-DD that exists on the calendar, got '2026-07-01T10:00:00Z': a timestamp; --date-format iso8601 accepts it and uses its date part");
    expect_reject(f, 4, p, 6, "available_on: expected a date string YYYY-MM-DD, got a number");
    int32_t want;
    assert_int_equal(la_date_parse("2026-07-01", 10, 0, &want), LA_OK);
    assert_int_equal(row(f, "d1")->date, want);
    assert_int_equal(row(f, "d7")->date, LA_NO_DATE); /* a date is optional for audit */
}

static void test_timestamp_allowed(void **state)
{
    fixture *f = *state;
    f->o.allow_timestamp = 1;
    const char *p = put_str(f, "ts.jsonl",
                            "{\"id\":\"d1\",\"text\":\"t\",\"available_on\":\"2026-07-01T10:00:00Z\"}\n"
                            "{\"id\":\"d2\",\"text\":\"t\",\"available_on\":\"2026-02-30T10:00:00Z\"}\n");
    load(f, p, "dev");
    assert_int_equal(la_table_nrows(f->t), 1);
    int32_t want;
    assert_int_equal(la_date_parse("2026-07-01", 10, 0, &want), LA_OK);
    assert_int_equal(row(f, "d1")->date, want);
    expect_reject(f, 0, p, 2,
                  "available_on: expected a date YYYY-MM-DD that exists on the calendar (or an ISO 8601 timestamp), "
                  "got '2026-02-30T10:00:00Z'");
}

static void test_split_requires_date(void **state)
{
    fixture *f = *state;
    f->o.require_date = 1;
    f->o.require_text = 0;
    const char *p = put_str(f, "s.jsonl", "{\"id\":\"a\",\"available_on\":\"2026-01-01\"}\n{\"id\":\"b\"}\n");
    load(f, p, "input");
    assert_int_equal(la_table_nrows(f->t), 1);
    assert_null(row(f, "a")->text); /* text is optional for split */
    expect_reject(f, 0, p, 2,
                  "available_on: missing; expected a date YYYY-MM-DD (the split rule needs a date on every row); the record has keys id; choose with --date-field F");
}

/* ---- text and UTF-8 ---- */

static void test_text_rules(void **state)
{
    fixture *f = *state;
    const char *p = put_str(f, "t.jsonl",
                            "{\"id\":\"a\",\"text\":\"fine\"}\n"
                            "{\"id\":\"b\"}\n"
                            "{\"id\":\"c\",\"text\":42}\n"
                            "{\"id\":\"d\",\"text\":[\"x\"]}\n"
                            "{\"id\":\"e\",\"text\":{\"x\":1}}\n");
    load(f, p, "dev");
    assert_int_equal(la_table_nrows(f->t), 1);
    expect_reject(f, 0, p, 2, "text: missing; expected a string; the record has keys id (choose with --text-field F, or for one partition --text-field PART=F)");
    expect_reject(f, 1, p, 3, "text: expected a string, got a number");
    expect_reject(f, 2, p, 4, "text: expected a string, got an array (--text-field 'text.*' joins its strings)");
    expect_reject(f, 3, p, 5, "text: expected a string, got an object");
    assert_string_equal(f->L.rejects[0].id, "b"); /* the reject keeps its id for the report */
    expect_counts(f, 0, 5, 4);
}

static void test_invalid_utf8(void **state)
{
    fixture *f = *state;
    const char *p = put_str(f, "u.jsonl",
                            "{\"id\":\"a\",\"text\":\"bad \xff byte\"}\n"
                            "{\"id\":\"b\xfe\",\"text\":\"ok\"}\n"
                            "{\"id\":\"c\",\"text\":\"overlong \xc0\xaf slash\"}\n"
                            "{\"id\":\"d\",\"text\":\"surrogate \xed\xa0\x80\"}\n"
                            "{\"id\":\"e\",\"text\":\"cut \xe1\xbb\"}\n"
                            "{\"id\":\"f\",\"text\":\"ok\",\"note\":\"\x80\"}\n"
                            "{\"id\":\"g\",\"text\":\"Vi\xe1\xbb\x87t \xe4\xb8\xad\xe6\x96\x87 ok\"}\n");
    load(f, p, "dev");
    assert_int_equal(la_table_nrows(f->t), 1);
    assert_int_equal(f->L.nrejects, 6);
    expect_reject(f, 0, p, 1, "text: invalid UTF-8 (byte 0xff at offset 4 of the value; Latin-1 or Windows-1252 text? convert the file first: iconv -f WINDOWS-1252 -t UTF-8)");
    expect_reject(f, 1, p, 2, "id: invalid UTF-8 (byte 0xfe at offset 1 of the value; Latin-1 or Windows-1252 text? convert the file first: iconv -f WINDOWS-1252 -t UTF-8)");
    expect_reject(f, 2, p, 3, "text: invalid UTF-8 (byte 0xc0 at offset 9 of the value)");
    expect_reject(f, 3, p, 4, "text: invalid UTF-8 (byte 0xed at offset 10 of the value)");
    expect_reject(f, 4, p, 5, "text: invalid UTF-8 (byte 0xe1 at offset 4 of the value)"); /* cut UTF-8: no hint */
    /* a field that is not read still has to be valid: the raw record is passed through */
    expect_reject(f, 5, p, 6, "record: invalid UTF-8 (byte 0x80 at offset 30 of the line; Latin-1 or Windows-1252 text? convert the file first: iconv -f WINDOWS-1252 -t UTF-8)");
    assert_string_equal(row(f, "g")->text, "Vi\xe1\xbb\x87t \xe4\xb8\xad\xe6\x96\x87 ok");
}

/* ---- partitions ---- */

static void test_split_field_partitions(void **state)
{
    fixture *f = *state;
    static const char *const known[] = {"dev", "test"};
    f->o.known_parts = known;
    f->o.nknown = 2;
    uint32_t dev, test;
    assert_int_equal(la_table_part(f->t, "dev", &dev), LA_OK);
    assert_int_equal(la_table_part(f->t, "test", &test), LA_OK);
    const char *p = put_str(f, "mixed.jsonl",
                            "{\"id\":\"a\",\"split\":\"dev\",\"text\":\"x\"}\n"
                            "{\"id\":\"b\",\"split\":\"test\",\"text\":\"y\"}\n"
                            "{\"id\":\"c\",\"split\":\"tset\",\"text\":\"z\"}\n"
                            "{\"id\":\"d\",\"text\":\"w\"}\n"
                            "{\"id\":\"e\",\"split\":3,\"text\":\"v\"}\n");
    load(f, p, NULL);
    assert_int_equal(la_table_nrows(f->t), 2);
    assert_int_equal(row(f, "a")->part, dev);
    assert_int_equal(row(f, "b")->part, test);
    expect_reject(f, 0, p, 3, "split: unknown partition 'tset' (known: dev, test; declare more with --parts)");
    expect_reject(f, 1, p, 4, "split: missing; expected a partition name; the record has keys id, text (choose with --split-field F, or give the file with --part NAME=FILE)");
    expect_reject(f, 2, p, 5, "split: expected a partition name, got a number");
    assert_int_equal(f->L.rejects[0].part, LA_NO_PART);
    assert_int_equal(la_table_npart(f->t), 2); /* the unknown name did not become a partition */
}

/* ---- record syntax ---- */

static void test_malformed_json(void **state)
{
    fixture *f = *state;
    const char *p = put_str(f, "m.jsonl",
                            "{\"id\":\"a\",\"text\":\"x\"}\n"
                            "{\"id\":\"b\",\"text\":\n"
                            "[1,2]\n"
                            "{\"id\":\"c\",\"text\":\"y\"} trailing\n"
                            "{\"id\":\"d\",\"text\":\"z\"}\r\n");
    load(f, p, "dev");
    assert_int_equal(la_table_nrows(f->t), 2);
    assert_int_equal(f->L.nrejects, 3);
    const la_reject *r = &f->L.rejects[0];
    assert_int_equal(r->line, 2);
    assert_int_equal(r->nreasons, 1);
    assert_true(strncmp(r->reasons[0], "record: expected one JSON object per line (", 43) == 0);
    assert_null(r->id);
    assert_string_equal(r->raw, "{\"id\":\"b\",\"text\":"); /* the line as read */
    expect_reject(f, 1, p, 3, "record: expected a JSON object, got another JSON value");
    expect_reject(f, 2, p, 4, "record: expected one JSON object per line (extra text after the object)");
    assert_int_equal(row(f, "d")->line, 5);
    assert_string_equal(row(f, "d")->text, "z");
    expect_counts(f, 0, 5, 3);
}

/* ---- CSV and TSV ---- */

static void test_csv(void **state)
{
    fixture *f = *state;
    const char *p = put_str(f, "q.csv",
                            "id,text,family\n"                    /* 1 */
                            "c1,\"hello, world\",fam\n"           /* 2 */
                            "c2,\"line one\nline two\",fam\n"     /* 3-4 */
                            "c3,\"say \"\"hi\"\"\",\n"            /* 5 */
                            "c1,dup,\n"                           /* 6 */
                            "c4,too,many,cells\n");               /* 7 */
    load(f, p, "dev");
    assert_string_equal(f->L.files[0].format, "csv");
    assert_int_equal(la_table_nrows(f->t), 3);
    assert_string_equal(row(f, "c1")->text, "hello, world");
    assert_string_equal(row(f, "c1")->family, "fam");
    assert_int_equal(row(f, "c1")->line, 2);
    assert_string_equal(row(f, "c2")->text, "line one\nline two");
    assert_int_equal(row(f, "c2")->line, 3);
    assert_string_equal(row(f, "c3")->text, "say \"hi\"");
    assert_int_equal(row(f, "c3")->line, 5); /* after a record spanning two lines */
    assert_null(row(f, "c3")->family);       /* an empty cell is an absent value */
    char want[512];
    snprintf(want, sizeof want, "id: duplicate id 'c1' (first seen at %s:2)", p);
    expect_reject(f, 0, p, 6, want);
    expect_reject(f, 1, p, 7, "record: expected 3 fields as in the header row, got 4");
    expect_counts(f, 0, 5, 2);
}

static void test_csv_blank_lines_and_crlf(void **state)
{
    fixture *f = *state;
    const char *p = put_str(f, "b.csv",
                            "id,text\r\n"          /* 1 */
                            "a,\"x\r\ny\"\r\n"     /* 2-3 */
                            "\r\n"                 /* 4: blank */
                            "b,fine\r\n"           /* 5 */
                            "c,too,many\r\n"       /* 6 */
                            "d,\"p\r\n\r\nq\"\r\n"    /* 7-9: a blank line inside quotes */
                            "e,last\r\n");         /* 10 */
    load(f, p, "dev");
    assert_int_equal(la_table_nrows(f->t), 4);
    assert_int_equal(row(f, "d")->line, 7);
    assert_string_equal(row(f, "d")->text, "p\r\n\r\nq");
    assert_int_equal(row(f, "e")->line, 10);
    assert_int_equal(row(f, "a")->line, 2);
    assert_int_equal(row(f, "b")->line, 5);
    assert_string_equal(row(f, "b")->text, "fine");
    expect_reject(f, 0, p, 6, "record: expected 2 fields as in the header row, got 3");
}

static void test_tsv(void **state)
{
    fixture *f = *state;
    const char *p = put_str(f, "q.tsv",
                            "id\ttext\tlabel\n"
                            "t1\tsay \"hi\", friend\tyes\n"
                            "\n"
                            "t2\tsecond\t\n"
                            "t3\tonly two\n");
    load(f, p, "test");
    assert_string_equal(f->L.files[0].format, "tsv");
    assert_int_equal(la_table_nrows(f->t), 2);
    assert_string_equal(row(f, "t1")->text, "say \"hi\", friend"); /* no quoting in TSV */
    assert_string_equal(row(f, "t1")->label, "yes");
    assert_int_equal(row(f, "t2")->line, 4);
    assert_null(row(f, "t2")->label);
    expect_reject(f, 0, p, 5, "record: expected 3 fields as in the header row, got 2");
}

/* ---- compressed input ---- */

static const char k_plain[] = "{\"id\":\"z1\",\"text\":\"compressed one\"}\n"
                              "{\"id\":\"z2\",\"text\":\"compressed two\"}\n"
                              "{\"id\":\"\",\"text\":\"bad\"}\n";

static void test_gzip(void **state)
{
    fixture *f = *state;
    assert_true(f->npath < 8);
    char *p = f->path[f->npath++];
    la_fixture_path(f, p, "in.jsonl.gz");
    gzFile g = gzopen(p, "wb");
    assert_non_null(g);
    assert_int_equal(gzwrite(g, k_plain, (unsigned)strlen(k_plain)), (int)strlen(k_plain));
    assert_int_equal(gzclose(g), Z_OK);
    load(f, p, "dev");
    assert_string_equal(f->L.files[0].compression, "gzip");
    assert_string_equal(f->L.files[0].format, "jsonl");
    assert_int_equal(la_table_nrows(f->t), 2);
    assert_string_equal(row(f, "z2")->text, "compressed two");
    assert_int_equal(row(f, "z2")->line, 2);
    expect_reject(f, 0, p, 3, "id: empty; expected a non-empty string");
}

static void test_zstd(void **state)
{
    fixture *f = *state;
    size_t cap = ZSTD_compressBound(strlen(k_plain));
    void *buf = malloc(cap);
    assert_non_null(buf);
    size_t n = ZSTD_compress(buf, cap, k_plain, strlen(k_plain), 3);
    assert_false(ZSTD_isError(n));
    const char *p = put(f, "in.jsonl.zst", buf, n);
    free(buf);
    load(f, p, "dev");
    assert_string_equal(f->L.files[0].compression, "zstd");
    assert_int_equal(f->L.files[0].bytes, n); /* as stored */
    assert_int_equal(la_table_nrows(f->t), 2);
    assert_string_equal(row(f, "z1")->text, "compressed one");
    expect_reject(f, 0, p, 3, "id: empty; expected a non-empty string");
}

/* A zstd frame by hand: k_plain as one raw block, then an empty last block, the header declaring
 * `declared` bytes in a 4-byte field (single segment). */
static size_t zstd_by_hand(unsigned char *out, uint32_t declared)
{
    size_t n = strlen(k_plain), k = 0;
    const unsigned char head[] = {0x28, 0xB5, 0x2F, 0xFD, 0xA0};
    memcpy(out, head, sizeof head);
    k += sizeof head;
    for (int i = 0; i < 4; i++) out[k++] = (unsigned char)(declared >> (8 * i));
    uint32_t block = (uint32_t)n << 3; /* raw, not last */
    for (int i = 0; i < 3; i++) out[k++] = (unsigned char)(block >> (8 * i));
    memcpy(out + k, k_plain, n);
    k += n;
    out[k++] = 0x01; /* raw, last, empty */
    out[k++] = 0x00;
    out[k++] = 0x00;
    return k;
}

/* A frame whose bytes fall short of (or run past) the size its header declares is corrupt, in the
 * block reader the loader uses and in the whole-file reader alike, even when its last block is
 * empty (libzstd's streaming decoder leaves that case unchecked); the same frame declaring its true
 * size loads. */
static void test_zstd_declared_size(void **state)
{
    fixture *f = *state;
    unsigned char buf[256];
    const uint32_t sizes[] = {(uint32_t)strlen(k_plain) + 1, (uint32_t)strlen(k_plain) - 1, 4000000};
    char name[32];
    for (int i = 0; i < 3; i++) {
        snprintf(name, sizeof name, "bad%d.jsonl.zst", i);
        const char *p = put(f, name, buf, zstd_by_hand(buf, sizes[i]));
        assert_int_not_equal(la_load_file(loader(f), p, "dev"), LA_OK);
        assert_non_null(strstr(la_last_error(), "corrupt zstd data"));
        assert_non_null(strstr(la_last_error(), p));
        la_limits lim;
        la_limits_default(&lim);
        la_input whole;
        assert_int_not_equal(la_input_read(p, &lim, &whole), LA_OK);
        assert_non_null(strstr(la_last_error(), "corrupt zstd data"));
    }
    assert_int_equal(la_table_nrows(f->t), 0);
    const char *p = put(f, "good.jsonl.zst", buf, zstd_by_hand(buf, (uint32_t)strlen(k_plain)));
    load(f, p, "dev");
    assert_int_equal(la_table_nrows(f->t), 2);
    assert_string_equal(row(f, "z2")->text, "compressed two");
}

/* Skippable frames (what pzstd writes before each frame, and other tools after the last) around
 * and between frames: the file is zstd by its first bytes, and both readers give the frames' bytes
 * alone. */
static void test_zstd_skippable_frames(void **state)
{
    fixture *f = *state;
    size_t half = strlen("{\"id\":\"z1\",\"text\":\"compressed one\"}\n");
    assert_memory_equal(k_plain + half - 1, "\n", 1);
    unsigned char buf[1024];
    size_t k = 0;
    const char *pieces[2] = {k_plain, k_plain + half};
    size_t lens[2] = {half, strlen(k_plain) - half};
    for (int frame = 0; frame < 3; frame++) {
        /* a skippable frame: its magic, a 4-byte size, that many bytes of anything */
        const unsigned char skip[] = {0x50 + frame, 0x2A, 0x4D, 0x18, 3, 0, 0, 0, 'a', 'b', 'c'};
        memcpy(buf + k, skip, sizeof skip);
        k += sizeof skip;
        if (frame == 2) break;
        size_t n = ZSTD_compress(buf + k, sizeof buf - k, pieces[frame], lens[frame], 3);
        assert_false(ZSTD_isError(n));
        k += n;
    }
    const char *p = put(f, "skip.jsonl.zst", buf, k);
    load(f, p, "dev");
    assert_string_equal(f->L.files[0].compression, "zstd");
    assert_int_equal(la_table_nrows(f->t), 2);
    assert_string_equal(row(f, "z2")->text, "compressed two");
    la_limits lim;
    la_limits_default(&lim);
    la_input whole;
    assert_int_equal(la_input_read(p, &lim, &whole), LA_OK);
    assert_int_equal(whole.len, strlen(k_plain));
    assert_memory_equal(whole.data, k_plain, strlen(k_plain));
    la_input_free(&whole);
}

/* The loader and the whole-file reader both refuse path p (LA_EINPUT), the message naming it and
 * saying `says` and `also`. */
static void expect_refused(fixture *f, const char *p, const char *says, const char *also)
{
    assert_int_equal(la_load_file(loader(f), p, "dev"), LA_EINPUT);
    assert_non_null(strstr(la_last_error(), p));
    assert_non_null(strstr(la_last_error(), says));
    assert_non_null(strstr(la_last_error(), also));
    la_limits lim;
    la_limits_default(&lim);
    la_input whole;
    assert_int_equal(la_input_read(p, &lim, &whole), LA_EINPUT);
    assert_non_null(strstr(la_last_error(), says));
}

/* Packings the readers do not undo (xz, bzip2, lz4, zip, 7-Zip), known by their first bytes whatever
 * the file's name: a clear failure naming the file and the packing from the loader and the whole-file
 * reader, not a page of rejects about JSON; text that only starts like one loads. */
static void test_foreign_packing(void **state)
{
    fixture *f = *state;
    static const struct {
        const char *bytes;
        size_t n;
        const char *says;
    } packed[] = {
        {"\xFD" "7zXZ\0\0\x04\xE6\xD6\xB4\x46", 12, "xz-compressed data"},
        {"BZh91AY&SY\x01\x02", 12, "bzip2-compressed data"},
        {"\x04\x22\x4D\x18\x64\x40\xA7", 7, "lz4-compressed data"},
        {"PK\x03\x04\x14\x00\x00\x00", 8, "a zip archive"},
        {"7z\xBC\xAF\x27\x1C\x00\x04", 8, "a 7-Zip archive"},
    };
    char name[32];
    for (size_t i = 0; i < sizeof packed / sizeof *packed; i++) {
        snprintf(name, sizeof name, "packed%zu.jsonl", i);
        expect_refused(f, put(f, name, packed[i].bytes, packed[i].n), packed[i].says, "reads plain text, gzip and zstd");
    }
    assert_int_equal(la_table_nrows(f->t), 0);
    const char csv[] = "BZh9,id,text\nzz,x1,starts like bzip2\n";
    const char *p = put(f, "bz.csv", csv, strlen(csv));
    load(f, p, "dev");
    assert_string_equal(row(f, "x1")->text, "starts like bzip2");
}

/* Files of other kinds than text (Parquet, Arrow, Feather, NumPy, pickle, SQLite, HDF5, Office), known
 * by their first bytes as their writers make them: a clear failure naming the file and its kind, and
 * where the Python package reads it (pyarrow) or --embeddings takes it, saying so; text whose first
 * line only starts like one loads. */
static void test_foreign_table(void **state)
{
    fixture *f = *state;
    static const struct {
        const char *bytes;
        size_t n;
        const char *says, *also;
    } kinds[] = {
        {"PAR1\x15\x04\x15\x10\x15\x14L", 11, "a Parquet file", "the Python package, which reads Parquet"},
        {"ARROW1\0\0\xFF\xFF\xFF\xFF", 12, "an Arrow (Feather) file", "the Python package"},
        {"\xFF\xFF\xFF\xFF\x78\0\0\0\x10\0", 10, "an Arrow IPC stream", "the Python package"},
        {"FEA1\0\0\0\0", 8, "a Feather (version 1) file", "the Python package"},
        {"\x93NUMPY\x01\0v\0", 10, "a NumPy array (.npy), not rows", "--embeddings PART=FILE.npy"},
        {"\x80\x04\x95\x10\0", 5, "a Python pickle", "export the rows"},
        {"SQLite format 3\0\x10\0", 18, "an SQLite database", "export the rows"},
        {"\x89HDF\r\n\x1A\n\0\0", 10, "an HDF5 file", "export the rows"},
        {"\xD0\xCF\x11\xE0\xA1\xB1\x1A\xE1\0", 9, "an Office document (Excel 97-2003", "export the rows"},
        {"PK\x03\x04\x14\0\0\0\x08\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\x13\0\0\0[Content_Types].xml", 49,
         "an Office document (Excel .xlsx", "export the rows"},
        {"PK\x03\x04\x14\0\0\0\x08\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\x09\0\0\0dev.jsonl", 39, "a zip archive",
         "extract it first"},
    };
    const char *p = put(f, "table.jsonl", "", 0);
    for (size_t i = 0; i < sizeof kinds / sizeof *kinds; i++) {
        FILE *fp = fopen(p, "wb");
        assert_non_null(fp);
        assert_int_equal(fwrite(kinds[i].bytes, 1, kinds[i].n, fp), kinds[i].n);
        assert_int_equal(fclose(fp), 0);
        expect_refused(f, p, kinds[i].says, kinds[i].also);
    }
    assert_int_equal(la_table_nrows(f->t), 0);
    load(f, put_str(f, "par.csv", "PAR1,id,text\nzz,p1,starts like Parquet\n"), "dev");
    load(f, put_str(f, "obj.tsv", "Obj\tid\ttext\nzz\tp2\tstarts like Avro but is text\n"), "dev");
    assert_string_equal(row(f, "p1")->text, "starts like Parquet");
    assert_string_equal(row(f, "p2")->text, "starts like Avro but is text");
}

/* UTF-16 and UTF-32 text, known by its byte-order mark: a clear failure asking for UTF-8, from the
 * loader and the whole-file reader, whatever the format. */
static void test_foreign_encoding(void **state)
{
    fixture *f = *state;
    static const struct {
        const char *name, *bytes;
        size_t n;
        const char *says;
    } text[] = {
        {"le.jsonl", "\xFF\xFE{\0\"\0", 6, "UTF-16 text (little-endian"},
        {"be.csv", "\xFE\xFF\0i\0d", 6, "UTF-16 text (big-endian"},
        {"le32.jsonl", "\xFF\xFE\0\0{\0\0\0", 8, "UTF-32 text (little-endian"},
        {"be32.tsv", "\0\0\xFE\xFF\0\0\0i", 8, "UTF-32 text (big-endian"},
    };
    for (size_t i = 0; i < sizeof text / sizeof *text; i++) {
        expect_refused(f, put(f, text[i].name, text[i].bytes, text[i].n), text[i].says, "leakaudit reads UTF-8");
    }
    assert_int_equal(la_table_nrows(f->t), 0);
}

/* A JSON array of records (what JSON exports hold) read as JSON Lines would be a reject a line: it
 * is refused whole, saying to convert it, whether pretty-printed, on one line, empty or gzip
 * compressed, and standard input's format detection calls it JSON; a file whose first line is
 * another array is JSON Lines with a reject. */
static void test_json_array(void **state)
{
    fixture *f = *state;
    static const struct {
        const char *name, *text;
    } arrays[] = {
        {"pretty.json", "\xEF\xBB\xBF[\n  {\"id\": \"a\", \"text\": \"one\"},\n  {\"id\": \"b\", \"text\": \"two\"}\n]\n"},
        {"line.jsonl", "[{\"id\":\"a\",\"text\":\"one\"},{\"id\":\"b\",\"text\":\"two\"}]\n"},
        {"empty.json", " [ ] "},
    };
    for (size_t i = 0; i < sizeof arrays / sizeof *arrays; i++) {
        const char *p = put(f, arrays[i].name, arrays[i].text, strlen(arrays[i].text));
        assert_int_equal(la_load_file(loader(f), p, "dev"), LA_EINPUT);
        assert_non_null(strstr(la_last_error(), p));
        assert_non_null(strstr(la_last_error(), "a JSON array of records, not JSON Lines"));
        assert_non_null(strstr(la_last_error(), "jq -c '.[]'"));
        la_input in = {(char *)arrays[i].text, strlen(arrays[i].text), 0, {0}, "none"};
        assert_int_equal(la_format_detect("-", &in), LA_FMT_JSONL);
    }
    char *gz = f->path[f->npath++];
    la_fixture_path(f, gz, "packed.json.gz");
    gzFile g = gzopen(gz, "wb");
    assert_non_null(g);
    gzwrite(g, arrays[0].text, (unsigned)strlen(arrays[0].text));
    assert_int_equal(gzclose(g), Z_OK);
    assert_int_equal(la_load_file(loader(f), gz, "dev"), LA_EINPUT);
    assert_non_null(strstr(la_last_error(), "a JSON array of records"));
    assert_int_equal(la_table_nrows(f->t), 0);
    const char lines[] = "[1, 2]\n{\"id\":\"c\",\"text\":\"three\"}\n";
    const char *p = put(f, "first_array.jsonl", lines, strlen(lines));
    load(f, p, "dev");
    assert_int_equal(la_table_nrows(f->t), 1);
    expect_reject(f, 0, p, 1, "record: expected a JSON object, got another JSON value");
}

static void test_gzip_csv_by_inner_extension(void **state)
{
    fixture *f = *state;
    const char csv[] = "id,text\ng1,\"a, b\"\n";
    char *p = f->path[f->npath++];
    la_fixture_path(f, p, "in.csv.gz");
    gzFile g = gzopen(p, "wb");
    assert_non_null(g);
    gzwrite(g, csv, (unsigned)strlen(csv));
    assert_int_equal(gzclose(g), Z_OK);
    load(f, p, "dev");
    assert_string_equal(f->L.files[0].format, "csv");
    assert_string_equal(row(f, "g1")->text, "a, b");
}

/* ---- fields ---- */

static void test_dotted_path(void **state)
{
    fixture *f = *state;
    f->o.text_fields[0] = "messages.0.content";
    const char *p = put_str(f, "chat.jsonl",
                            "{\"id\":\"m1\",\"messages\":[{\"role\":\"user\",\"content\":\"Hi there\"},"
                            "{\"role\":\"assistant\",\"content\":\"Hello\"}]}\n"
                            "{\"id\":\"m2\",\"messages\":[]}\n"
                            "{\"id\":\"m3\",\"messages\":[{\"role\":\"user\",\"content\":7}]}\n");
    load(f, p, "dev");
    assert_int_equal(la_table_nrows(f->t), 1);
    assert_string_equal(row(f, "m1")->text, "Hi there");
    expect_reject(f, 0, p, 2, "messages.0.content: missing; expected a string; the record has keys id, messages (choose with --text-field F, or for one partition --text-field PART=F)");
    expect_reject(f, 1, p, 3, "messages.0.content: expected a string, got a number");
}

static void test_joined_text_fields(void **state)
{
    fixture *f = *state;
    f->o.text_fields[0] = "question";
    f->o.text_fields[1] = "answer";
    f->o.ntext = 2;
    const char *p = put_str(f, "qa.jsonl",
                            "{\"id\":\"a\",\"question\":\"What is 2+2?\",\"answer\":\"4\"}\n"
                            "{\"id\":\"b\",\"question\":\"No answer?\"}\n");
    load(f, p, "dev");
    assert_int_equal(la_table_nrows(f->t), 1);
    assert_string_equal(row(f, "a")->text, "What is 2+2?\n4");
    expect_reject(f, 0, p, 2, "answer: missing; expected a string; the record has keys id, question (choose with --text-field F, or for one partition --text-field PART=F)");
}

static void test_several_reasons_in_one_row(void **state)
{
    fixture *f = *state;
    const char *p = put_str(f, "many.jsonl", "{\"id\":\"\",\"available_on\":\"2026-7-1\"}\n");
    load(f, p, "dev");
    assert_int_equal(f->L.nrejects, 1);
    const la_reject *r = &f->L.rejects[0];
    assert_int_equal(r->nreasons, 3);
    assert_string_equal(r->reasons[0], "id: empty; expected a non-empty string");
    assert_string_equal(r->reasons[1], "text: missing; expected a string; the record has keys id, available_on (choose with --text-field F, or for one partition --text-field PART=F)");
    assert_string_equal(r->reasons[2],
                        "available_on: expected a date YYYY-MM-DD that exists on the calendar, got '2026-7-1'");
}

#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)

int main(void)
{
    const struct CMUnitTest tests[] = {
        T(test_duplicate_id),
        T(test_empty_missing_and_typed_id),
        T(test_generated_ids),
        T(test_dates),
        T(test_timestamp_allowed),
        T(test_split_requires_date),
        T(test_text_rules),
        T(test_invalid_utf8),
        T(test_split_field_partitions),
        T(test_malformed_json),
        T(test_csv),
        T(test_csv_blank_lines_and_crlf),
        T(test_tsv),
        T(test_gzip),
        T(test_zstd),
        T(test_zstd_declared_size),
        T(test_zstd_skippable_frames),
        T(test_foreign_packing),
        T(test_foreign_encoding),
        T(test_foreign_table),
        T(test_json_array),
        T(test_gzip_csv_by_inner_extension),
        T(test_dotted_path),
        T(test_joined_text_fields),
        T(test_several_reasons_in_one_row),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
