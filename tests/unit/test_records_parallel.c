/*
 * test_records_parallel.c - la_jsonl_each_parallel against la_records_each: on JSONL that is cut
 * into many chunks, the records committed in order are the serial iteration's, one for one (line,
 * raw text, parse error or parsed object), at every thread count, under every limit; a failure
 * (--max-rows, or one returned by commit) is the same, with the same message.
 * Not for: what the loader makes of the records (test_load.c, tests/cli/parallel_read.sh).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "leakaudit.h"
#include "records.h"
#include "buf_fixture.h"

static void putf(buf *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void putf(buf *t, const char *fmt, ...)
{
    char s[512];
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(s, sizeof s, fmt, ap);
    va_end(ap);
    put(t, s, (size_t)k < sizeof s ? (size_t)k : sizeof s - 1);
}

/* One record as the test writes it down: everything a callback is given, line apart. */
static void describe(buf *t, json_object *rec, const char *raw, size_t rawlen, const char *parse_error)
{
    putf(t, " raw %zu:", rawlen);
    put(t, raw, rawlen);
    if (rec) putf(t, " rec %s", json_object_to_json_string_ext(rec, JSON_C_TO_STRING_PLAIN));
    else putf(t, " error %s", parse_error);
    put(t, "\n", 1);
}

/* ---- the serial transcript ---- */

typedef struct serial {
    buf out;
    size_t fail_at; /* fail on this record (1-based), 0 never */
    size_t n;
} serial;

static la_status serial_record(void *ctx, json_object *rec, const char *raw, size_t rawlen, uint32_t line,
                               const char *parse_error)
{
    serial *s = ctx;
    if (++s->n == s->fail_at) return la_error(LA_EINPUT, "record %zu refused at line %u", s->n, line);
    putf(&s->out, "line %u", line);
    describe(&s->out, rec, raw, rawlen, parse_error);
    return LA_OK;
}

/* ---- the parallel one: each chunk writes its records down, commit copies them in order ---- */

typedef struct chunk {
    buf *recs;
    size_t n;
} chunk;

typedef struct parallel {
    buf out;
    size_t fail_at;
    size_t n;
    /* read in blocks: where each record's raw text lies in the whole input, checked against it */
    const la_block_origin *origin;
    const char *whole;
    size_t wholelen;
    _Atomic size_t placed;
} parallel;

static la_status prepare(void *ctx, void *state, json_object *rec, const char *raw, size_t rawlen, uint32_t line,
                         const char *parse_error)
{
    parallel *p = ctx;
    if (p->origin) {
        assert_true(raw >= p->origin->buf);
        uint64_t off = p->origin->off + (uint64_t)(raw - p->origin->buf);
        assert_true(off + rawlen <= p->wholelen);
        assert_memory_equal(p->whole + off, raw, rawlen);
        p->placed++;
    }
    chunk *c = state;
    c->recs = realloc(c->recs, (c->n + 1) * sizeof *c->recs);
    assert_non_null(c->recs);
    buf *t = &c->recs[c->n++];
    memset(t, 0, sizeof *t);
    describe(t, rec, raw, rawlen, parse_error);
    return LA_OK;
}

static la_status commit(void *ctx, void *state, size_t k, uint32_t line)
{
    parallel *p = ctx;
    chunk *c = state;
    assert_true(k < c->n);
    if (++p->n == p->fail_at) return la_error(LA_EINPUT, "record %zu refused at line %u", p->n, line);
    putf(&p->out, "line %u", line);
    put(&p->out, c->recs[k].p, c->recs[k].n);
    return LA_OK;
}

static void release(void *ctx, void *state)
{
    chunk *c = state;
    for (size_t i = 0; i < c->n; i++) free(c->recs[i].p);
    free(c->recs);
}

static int windows_begun;

static void window_begin(void *ctx)
{
    (void)ctx;
    windows_begun++;
}

static const la_record_pipe pipe_ = {prepare, commit, release, sizeof(chunk), NULL, NULL, NULL, 0, window_begin};

/* The input handed over `step` bytes at a time, as la_input_blocks_read does a file. */
typedef struct mem_reader {
    const la_input *in;
    size_t at, step;
    size_t fail_from; /* a read that starts here or later fails; 0: none does */
} mem_reader;

static la_status mem_read(void *ctx, char *dst, size_t cap, size_t *got)
{
    mem_reader *m = ctx;
    if (m->fail_from && m->at >= m->fail_from) return la_error(LA_EIO, "x.jsonl: read error");
    size_t n = m->in->len - m->at;
    if (n > cap) n = cap;
    if (n > m->step) n = m->step;
    memcpy(dst, m->in->data + m->at, n);
    m->at += n;
    *got = n;
    return LA_OK;
}

/* ---- the input ---- */

static uint32_t rnd(uint64_t *s)
{
    *s = *s * 6364136223846793005u + 1442695040888963407u;
    return (uint32_t)(*s >> 33);
}

/* About 3 MB of JSONL with a BOM, blank and white lines, CRLF endings, lines that do not parse,
 * values that are no objects, text after an object, a line longer than a chunk, no final
 * newline; lines of every length, so chunk cuts fall everywhere. */
static void make_input(la_input *in)
{
    buf t = {0};
    uint64_t s = 42;
    put(&t, "\xEF\xBB\xBF", 3);
    for (int i = 0; t.n < 3u << 20; i++) {
        uint32_t r = rnd(&s) % 100;
        if (r < 3) put(&t, "\n", 1);
        else if (r < 5) put(&t, "  \t \n", 5);
        else if (r < 7) putf(&t, "{\"id\": \"x%d\", \"text\": \"cut short\n", i);
        else if (r < 8) put(&t, "[1, 2]\n", 7);
        else if (r < 9) putf(&t, "{\"id\": %d} extra\n", i);
        else if (r < 10) putf(&t, "{\"id\": \"q%d\", 'text': 'single'}\n", i);
        else {
            putf(&t, "{\"id\": \"r%d\", \"text\": \"", i);
            for (uint32_t w = rnd(&s) % 200; w > 0; w--) putf(&t, "w%u ", rnd(&s) % 1000);
            put(&t, "\"}", 2);
            put(&t, r < 20 ? "\r\n" : "\n", r < 20 ? 2 : 1);
        }
        if (i == 5000) { /* one line of 300 KB, longer than a chunk */
            put(&t, "{\"id\": \"long\", \"text\": \"", 24);
            for (int k = 0; k < 30000; k++) put(&t, "long long ", 10);
            put(&t, "\"}\n", 3);
        }
    }
    put(&t, "{\"id\": \"last\", \"text\": \"no newline\"}", 36);
    memset(in, 0, sizeof *in);
    in->data = t.p;
    in->len = t.n;
    in->compression = "none";
}

static void expect_same_records_windowed(const la_input *in, const la_limits *lim, size_t fail_at)
{
    serial s = {{0}, fail_at, 0};
    la_status want = la_records_each(in, "x.jsonl", LA_FMT_JSONL, lim, serial_record, &s);
    char want_msg[512];
    snprintf(want_msg, sizeof want_msg, "%s", want == LA_OK ? "" : la_last_error());
    assert_true(s.n > 1000);
    int threads[] = {1, 2, 3, 8};
    for (size_t k = 0; k < sizeof threads / sizeof *threads; k++) {
        parallel p = {{0}, fail_at, 0, NULL, NULL, 0, 0};
        la_status got = la_jsonl_each_parallel(in, "x.jsonl", lim, threads[k], &pipe_, &p);
        assert_int_equal(got, want);
        if (want != LA_OK) assert_string_equal(la_last_error(), want_msg);
        assert_int_equal(p.out.n, s.out.n);
        assert_memory_equal(p.out.p, s.out.p, s.out.n);
        free(p.out.p);
    }
    /* read in blocks (a first block of 70 bytes or 1 MB, then up to 64 KB or 4 MB at a time): the
     * same records, and each record's offset from the block origin is where it lies in the input */
    const size_t firsts[] = {70, 1 << 20}, steps[] = {1 << 16, 4 << 20};
    for (size_t k = 0; k < 2; k++) {
        la_block_origin origin = {0};
        la_record_pipe pipe = pipe_;
        pipe.origin = &origin;
        parallel p = {{0}, fail_at, 0, &origin, in->data, in->len, 0};
        mem_reader m = {in, 0, firsts[k], 0};
        size_t cap = firsts[k] + 1;
        char *buf = malloc(cap + 1);
        size_t got;
        assert_int_equal(mem_read(&m, buf, firsts[k], &got), LA_OK);
        buf[got] = '\0';
        m.step = steps[k];
        la_status st = la_jsonl_each_read(buf, got, cap, mem_read, &m, "x.jsonl", lim, 2, &pipe, &p);
        assert_int_equal(st, want);
        if (want != LA_OK) assert_string_equal(la_last_error(), want_msg);
        assert_int_equal(p.out.n, s.out.n);
        assert_memory_equal(p.out.p, s.out.p, s.out.n);
        assert_true(p.placed >= s.n);
        free(p.out.p);
    }
    free(s.out.p);
}

/* The same at the default window (one for the whole input at two threads) and at windows of one and
 * three chunks, where with two threads or more a window is committed beside the next one's parse:
 * the records, lines and failures do not change. */
static void expect_same_records(const la_input *in, const la_limits *lim, size_t fail_at)
{
    const char *windows[] = {NULL, "3", "1"};
    for (size_t w = 0; w < sizeof windows / sizeof *windows; w++) {
        if (windows[w]) setenv("LEAKAUDIT_READ_WINDOW", windows[w], 1);
        else unsetenv("LEAKAUDIT_READ_WINDOW");
        windows_begun = 0;
        expect_same_records_windowed(in, lim, fail_at);
        /* 12 chunks or more, read 6 times: with windows of 3 chunks, at least 4 windows a read */
        if (windows[w] && fail_at == 0 && !lim) assert_true(windows_begun >= 6 * 4);
    }
    unsetenv("LEAKAUDIT_READ_WINDOW");
}

static void test_same_records_as_serial(void **state)
{
    la_input in;
    make_input(&in);
    assert_true(in.len > 10 * LA_JSONL_CHUNK_BYTES);
    expect_same_records(&in, NULL, 0);
    la_limits lim;
    la_limits_default(&lim);
    lim.max_row_bytes = 1000; /* the long lines become rejects, their first 256 bytes kept */
    expect_same_records(&in, &lim, 0);
    free(in.data);
}

static void test_failures_as_serial(void **state)
{
    la_input in;
    make_input(&in);
    la_limits lim;
    la_limits_default(&lim);
    lim.max_rows = 7777;
    expect_same_records(&in, &lim, 0);   /* --max-rows: "x.jsonl:LINE: record: more than 7777 rows" */
    expect_same_records(&in, NULL, 9000); /* the caller's own failure, deep in the file */
    free(in.data);
}

/* A read that fails deep in the file, read in blocks at one thread (each block read after the lines
 * before it are parsed) and at two (the next block read in pieces beside the parse, so its reads
 * are not those of one thread): the same failure and message, and what was committed before it is
 * the input's first records in order, those of the blocks read before the failing read. */
static void test_read_failure(void **state)
{
    la_input in;
    make_input(&in);
    serial s = {{0}, 0, 0};
    assert_int_equal(la_records_each(&in, "x.jsonl", LA_FMT_JSONL, NULL, serial_record, &s), LA_OK);
    const char *windows[] = {NULL, "3"};
    for (size_t w = 0; w < 2; w++) {
        if (windows[w]) setenv("LEAKAUDIT_READ_WINDOW", windows[w], 1);
        else unsetenv("LEAKAUDIT_READ_WINDOW");
        for (int threads = 1; threads <= 2; threads++) {
            la_block_origin origin = {0};
            la_record_pipe pipe = pipe_;
            pipe.origin = &origin;
            parallel p = {{0}, 0, 0, &origin, in.data, in.len, 0};
            mem_reader m = {&in, 0, 1 << 20, 2u << 20};
            size_t cap = (1 << 20) + 1, got;
            char *b = malloc(cap + 1);
            assert_int_equal(mem_read(&m, b, 1 << 20, &got), LA_OK);
            b[got] = '\0';
            la_status st = la_jsonl_each_read(b, got, cap, mem_read, &m, "x.jsonl", NULL, threads, &pipe, &p);
            assert_int_equal(st, LA_EIO);
            assert_string_equal(la_last_error(), "x.jsonl: read error");
            /* the first block's records at least, and not all of them */
            assert_true(p.out.n > 1000 && p.out.n < s.out.n);
            assert_memory_equal(p.out.p, s.out.p, p.out.n);
            assert_memory_equal(s.out.p + p.out.n, "line ", 5);
            free(p.out.p);
        }
    }
    unsetenv("LEAKAUDIT_READ_WINDOW");
    free(s.out.p);
    free(in.data);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_same_records_as_serial),
        cmocka_unit_test(test_failures_as_serial),
        cmocka_unit_test(test_read_failure),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
