/* records.c - JSONL, CSV and TSV records as JSON objects (see records.h). */
#include "records.h"

#include "json_strict.h"
#include "json_view.h"
#include "la_alloc.h"
#include "parallel.h"

#include <csv.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

la_status la_format_parse(const char *s, la_format *out)
{
    if (strcmp(s, "auto") == 0) *out = LA_FMT_AUTO;
    else if (strcmp(s, "jsonl") == 0 || strcmp(s, "ndjson") == 0) *out = LA_FMT_JSONL;
    else if (strcmp(s, "csv") == 0) *out = LA_FMT_CSV;
    else if (strcmp(s, "tsv") == 0) *out = LA_FMT_TSV;
    else return la_error(LA_EINVAL, "--format: unknown format '%s' (expected auto, jsonl, csv or tsv)", s);
    return LA_OK;
}

/* Bytes of a UTF-8 byte order mark at the start of p[0 .. n): 3 or 0. */
static size_t bom_len(const char *p, size_t n)
{
    const unsigned char *u = (const unsigned char *)p;
    return n >= 3 && u[0] == 0xEF && u[1] == 0xBB && u[2] == 0xBF ? 3 : 0;
}

static const char *skip_bom(const la_input *in) { return in->data + bom_len(in->data, in->len); }

const char *la_format_name(la_format f)
{
    switch (f) {
    case LA_FMT_JSONL: return "jsonl";
    case LA_FMT_CSV: return "csv";
    case LA_FMT_TSV: return "tsv";
    default: return "auto";
    }
}

/* p past white space (blank lines too), at most to e. */
static const char *past_space(const char *p, const char *e)
{
    while (p < e && (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n')) p++;
    return p;
}

int la_json_array_start(const la_input *in)
{
    const char *e = in->data + in->len, *p = past_space(skip_bom(in), e);
    if (p == e || *p != '[') return 0;
    p = past_space(p + 1, e);
    return p < e && (*p == '{' || *p == ']');
}

la_format la_format_detect(const char *path, const la_input *in)
{
    char ext[16];
    la_input_format_ext(path, ext);
    if (!strcmp(ext, "jsonl") || !strcmp(ext, "ndjson") || !strcmp(ext, "json")) return LA_FMT_JSONL;
    if (!strcmp(ext, "csv")) return LA_FMT_CSV;
    if (!strcmp(ext, "tsv") || !strcmp(ext, "tab")) return LA_FMT_TSV;
    const char *p = past_space(skip_bom(in), in->data + in->len);
    if (*p == '{' || la_json_array_start(in)) return LA_FMT_JSONL; /* an array: refused by the loader, with why */
    const char *nl = strchr(p, '\n');
    const char *tab = strchr(p, '\t');
    if (tab && (!nl || tab < nl)) return LA_FMT_TSV;
    return LA_FMT_CSV;
}

/* Iterate physical lines: [s, e) without the newline and a trailing \r. */
typedef struct line_iter {
    const char *p, *end;
    uint32_t line;
} line_iter;

static int next_line(line_iter *it, const char **s, size_t *n)
{
    if (it->p >= it->end) return 0;
    const char *nl = memchr(it->p, '\n', (size_t)(it->end - it->p));
    const char *e = nl ? nl : it->end;
    *s = it->p;
    *n = (size_t)(e - it->p);
    if (*n && (*s)[*n - 1] == '\r') (*n)--;
    it->p = nl ? nl + 1 : it->end;
    it->line++;
    return 1;
}

static int blank(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (s[i] != ' ' && s[i] != '\t') return 0;
    return 1;
}

/* The part of an over-long record kept for rejects.jsonl: 256 bytes, cut at a character boundary. */
static size_t kept_prefix(const char *s, size_t n)
{
    size_t k = n < 256 ? n : 256;
    while (k > 0 && k < n && ((unsigned char)s[k] & 0xC0) == 0x80) k--;
    return k;
}

/* A record over --max-row-bytes: a reject, never parsed. */
static la_status too_long(const la_limits *lim, la_record_fn fn, void *ctx, const char *s, size_t n, uint32_t line)
{
    char why[200];
    snprintf(why, sizeof why,
             "%zu bytes, over the limit of %zu (--max-row-bytes); not parsed, its first 256 bytes are kept", n,
             lim->max_row_bytes);
    return fn(ctx, NULL, s, kept_prefix(s, n), line, why);
}

static int over_row_limit(const la_limits *lim, size_t n) { return lim && lim->max_row_bytes && n > lim->max_row_bytes; }

/* The JSONL records of the lines in [p, end), lines numbered from 1; *nlines: how many lines
 * there were (blank ones too). */
static la_status jsonl_lines(const char *p, const char *end, const la_limits *lim, int raw_only, la_record_fn fn,
                             void *ctx, uint32_t *nlines)
{
    line_iter it = {p, end, 0};
    const char *s;
    size_t n;
    json_tokener *tok = json_tokener_new();
    if (!tok) return la_error(LA_ENOMEM, "out of memory creating the JSON parser");
    /* not JSON_TOKENER_STRICT: it lets much through all the same (see json_strict.h) and would
     * word the common errors less clearly; la_json_strict_check below holds every line to RFC 8259 */
    la_status st = LA_OK;
    while (st == LA_OK && next_line(&it, &s, &n)) {
        if (blank(s, n)) continue;
        if (over_row_limit(lim, n)) {
            st = too_long(lim, fn, ctx, s, n, it.line);
            continue;
        }
        size_t at;
        const char *bad;
        if (raw_only) {
            /* a line that passes the strict check as one object is one json-c reads the same */
            int strict = la_json_strict_check(s, n, &at, &bad);
            if (strict < 0) {
                st = la_error(LA_ENOMEM, "out of memory checking a JSON line");
                break;
            }
            if (strict && la_jrec_is_line(s, n)) {
                st = fn(ctx, NULL, s, n, it.line, NULL);
                continue;
            }
        }
        json_tokener_reset(tok);
        json_object *o = json_tokener_parse_ex(tok, s, (int)n);
        enum json_tokener_error jerr = json_tokener_get_error(tok);
        char why[256];
        if (!o || jerr != json_tokener_success) {
            snprintf(why, sizeof why, "expected one JSON object per line (%s)",
                     jerr == json_tokener_continue ? "unexpected end of line" : json_tokener_error_desc(jerr));
            if (o) json_object_put(o);
            st = fn(ctx, NULL, s, n, it.line, why);
            continue;
        }
        size_t used = json_tokener_get_parse_end(tok);
        if (!blank(s + used, n - used)) {
            json_object_put(o);
            st = fn(ctx, NULL, s, n, it.line, "expected one JSON object per line (extra text after the object)");
            continue;
        }
        if (!json_object_is_type(o, json_type_object)) {
            json_object_put(o);
            st = fn(ctx, NULL, s, n, it.line, "expected a JSON object, got another JSON value");
            continue;
        }
        /* what json-c lets through: single quotes, NaN, raw tabs, "1.", duplicate keys */
        int strict = la_json_strict_check(s, n, &at, &bad);
        if (strict <= 0) {
            json_object_put(o);
            if (strict < 0) {
                st = la_error(LA_ENOMEM, "out of memory checking a JSON line");
                break;
            }
            snprintf(why, sizeof why, "expected one JSON object per line (RFC 8259: %s, at byte %zu)", bad, at + 1);
            st = fn(ctx, NULL, s, n, it.line, why);
            continue;
        }
        st = fn(ctx, o, s, n, it.line, NULL);
        json_object_put(o);
    }
    json_tokener_free(tok);
    *nlines = it.line;
    return st;
}

static la_status each_jsonl(const la_input *in, const la_limits *lim, la_record_fn fn, void *ctx)
{
    uint32_t nlines;
    return jsonl_lines(skip_bom(in), in->data + in->len, lim, 0, fn, ctx, &nlines);
}

/* ---- CSV and TSV ---- */

typedef struct table_ctx {
    const char *path;
    char **header;
    size_t nheader, capheader;
    int have_header;
    char **cells;
    size_t *lens; /* of each cell, which may hold a NUL byte */
    size_t ncells, capcells;
    int record_done;
    int oom;
} table_ctx;

static void push_cell(table_ctx *c, const char *s, size_t n)
{
    if (c->ncells == c->capcells) {
        size_t cap = c->capcells ? c->capcells * 2 : 16;
        char **v = realloc(c->cells, cap * sizeof *v);
        if (v) c->cells = v;
        size_t *l = v ? realloc(c->lens, cap * sizeof *l) : NULL;
        if (!l) {
            c->oom = 1;
            return;
        }
        c->lens = l;
        c->capcells = cap;
    }
    char *copy = malloc(n + 1);
    if (!copy) {
        c->oom = 1;
        return;
    }
    memcpy(copy, s, n);
    copy[n] = '\0';
    c->lens[c->ncells] = n;
    c->cells[c->ncells++] = copy;
}

static void clear_cells(table_ctx *c)
{
    for (size_t i = 0; i < c->ncells; i++) free(c->cells[i]);
    c->ncells = 0;
}

static void free_table(table_ctx *c)
{
    clear_cells(c);
    free(c->cells);
    free(c->lens);
    for (size_t i = 0; i < c->nheader; i++) free(c->header[i]);
    free(c->header);
}

static void csv_cb_field(void *s, size_t n, void *data) { push_cell(data, s ? s : "", s ? n : 0); }
static void csv_cb_record(int ch, void *data) { ((table_ctx *)data)->record_done = 1; }

/* Emit one complete row of cells, raw[0..rawlen) as it stands in the file: the first becomes the
 * header, which must not name a column twice. */
static la_status emit_row(table_ctx *c, uint32_t line, const char *raw, size_t rawlen, la_record_fn fn, void *ctx)
{
    if (c->oom) return la_error(LA_ENOMEM, "out of memory reading a table");
    if (!c->have_header) {
        for (size_t i = 0; i < c->ncells; i++) {
            if (strlen(c->cells[i]) != c->lens[i])
                return la_error(LA_EINPUT, "%s:%u: header: column %zu holds a NUL byte", c->path, line, i + 1);
            for (size_t k = 0; k < i; k++)
                if (!strcmp(c->cells[i], c->cells[k]))
                    return la_error(LA_EINPUT, "%s:%u: header: column '%.100s' appears twice (columns %zu and %zu)",
                                    c->path, line, c->cells[i], k + 1, i + 1);
        }
        c->header = c->cells;
        c->nheader = c->ncells;
        c->cells = NULL;
        free(c->lens);
        c->lens = NULL;
        c->ncells = c->capcells = 0;
        c->have_header = 1;
        return LA_OK;
    }
    la_status st;
    if (c->ncells == 1 && c->cells[0][0] == '\0' && c->nheader > 1) {
        clear_cells(c); /* an empty line */
        return LA_OK;
    }
    if (c->ncells != c->nheader) {
        char why[128];
        snprintf(why, sizeof why, "expected %zu fields as in the header row, got %zu", c->nheader, c->ncells);
        while (rawlen && (raw[rawlen - 1] == '\n' || raw[rawlen - 1] == '\r')) rawlen--;
        st = fn(ctx, NULL, raw, rawlen, line, why); /* the row's text goes to rejects.jsonl as it was */
        clear_cells(c);
        return st;
    }
    json_object *o = json_object_new_object();
    if (!o) return la_error(LA_ENOMEM, "out of memory");
    for (size_t i = 0; i < c->ncells; i++)
        json_object_object_add(o, c->header[i], json_object_new_string_len(c->cells[i], (int)c->lens[i]));
    size_t jsonlen;
    const char *json = json_object_to_json_string_length(o, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE,
                                                         &jsonlen);
    st = fn(ctx, o, json, jsonlen, line, NULL);
    json_object_put(o);
    clear_cells(c);
    return st;
}

static la_status each_csv(const la_input *in, const char *path, const la_limits *lim, la_record_fn fn, void *ctx)
{
    struct csv_parser p;
    if (csv_init(&p, CSV_STRICT | CSV_STRICT_FINI | CSV_APPEND_NULL) != 0)
        return la_error(LA_ENOMEM, "out of memory creating the CSV parser");
    table_ctx c = {.path = path};
    line_iter it = {skip_bom(in), in->data + in->len, 0};
    uint32_t record_line = 1;
    const char *record_start = it.p;
    int open_record = 0; /* a record began on an earlier line and has not ended yet */
    la_status st = LA_OK;
    while (st == LA_OK && it.p < it.end) {
        const char *s = it.p;
        const char *nl = memchr(s, '\n', (size_t)(it.end - s));
        size_t n = nl ? (size_t)(nl - s) + 1 : (size_t)(it.end - s);
        it.p = s + n;
        it.line++;
        int long_record = over_row_limit(lim, (size_t)(it.p - record_start));
        if (long_record || csv_parse(&p, s, n, csv_cb_field, csv_cb_record, &c) != n) {
            char why[160];
            snprintf(why, sizeof why, "malformed CSV (%s)", csv_strerror(csv_error(&p)));
            if (!c.have_header) {
                st = la_error(LA_EINPUT, "%s:%u: header: %s", path, it.line,
                              long_record ? "longer than --max-row-bytes" : why);
                break;
            }
            /* the record is a reject like any other; reading goes on at the next line */
            size_t rawlen = (size_t)(it.p - record_start);
            while (rawlen && (record_start[rawlen - 1] == '\n' || record_start[rawlen - 1] == '\r')) rawlen--;
            if (long_record) {
                /* the lines read so far are the reject; the parser starts afresh at the next line
                 * (what is left of a long quoted field then reads as rows of its own, checked as any) */
                st = too_long(lim, fn, ctx, record_start, rawlen, record_line);
            } else {
                st = fn(ctx, NULL, record_start, rawlen, record_line, why);
            }
            clear_cells(&c);
            c.record_done = 0;
            csv_free(&p);
            if (st == LA_OK && csv_init(&p, CSV_STRICT | CSV_STRICT_FINI | CSV_APPEND_NULL) != 0) {
                st = la_error(LA_ENOMEM, "out of memory creating the CSV parser");
                csv_init(&p, 0); /* so the csv_free below has a parser to free */
            }
            record_line = it.line + 1;
            record_start = it.p;
            open_record = 0;
            continue;
        }
        if (c.record_done) {
            c.record_done = 0;
            st = emit_row(&c, record_line, record_start, (size_t)(it.p - record_start), fn, ctx);
            record_line = it.line + 1;
            record_start = it.p;
            open_record = 0;
        } else {
            size_t m = n;
            while (m && (s[m - 1] == '\n' || s[m - 1] == '\r')) m--;
            /* libcsv skips a blank line between records: the next record starts after it */
            if (!open_record && blank(s, m)) record_line = it.line + 1, record_start = it.p;
            else open_record = 1;
        }
    }
    if (st == LA_OK) {
        if (csv_fini(&p, csv_cb_field, csv_cb_record, &c) != 0)
            st = la_error(LA_EINPUT, "%s:%u: record: malformed CSV at end of file (%s)", path, record_line,
                          csv_strerror(csv_error(&p)));
        else if (c.record_done || c.ncells) st = emit_row(&c, record_line, record_start, (size_t)(it.end - record_start), fn, ctx);
    }
    csv_free(&p);
    free_table(&c);
    return st;
}

static la_status each_tsv(const la_input *in, const char *path, const la_limits *lim, la_record_fn fn, void *ctx)
{
    table_ctx c = {.path = path};
    line_iter it = {skip_bom(in), in->data + in->len, 0};
    const char *s;
    size_t n;
    la_status st = LA_OK;
    while (st == LA_OK && next_line(&it, &s, &n)) {
        if (n == 0 && c.have_header) continue;
        if (over_row_limit(lim, n)) {
            if (!c.have_header) {
                st = la_error(LA_EINPUT, "%s:%u: header: longer than --max-row-bytes", path, it.line);
                break;
            }
            st = too_long(lim, fn, ctx, s, n, it.line);
            continue;
        }
        size_t start = 0;
        for (size_t i = 0; i <= n; i++)
            if (i == n || s[i] == '\t') {
                push_cell(&c, s + start, i - start);
                start = i + 1;
            }
        st = emit_row(&c, it.line, s, n, fn, ctx);
    }
    free_table(&c);
    return st;
}

/* Counts records on their way to the caller, for --max-rows. */
typedef struct counted {
    la_record_fn fn;
    void *ctx;
    const la_limits *lim;
    const char *path;
    size_t n;
    const int *stop;   /* the caller's "enough" flag, or NULL */
    int stopped;       /* the iteration was cut short on *stop, not by a failure */
} counted;

/* One more record, the one at `line`: past --max-rows an error. */
static la_status count_row(counted *k, uint32_t line)
{
    if (k->lim && k->lim->max_rows && ++k->n > k->lim->max_rows)
        return la_error(LA_EINPUT, "%s:%u: record: more than %zu rows in one input; raise --max-rows (or give 0) to "
                                   "read it", k->path, line, k->lim->max_rows);
    return LA_OK;
}

static la_status count_record(void *ctx, json_object *rec, const char *raw, size_t rawlen, uint32_t line,
                              const char *parse_error)
{
    counted *k = ctx;
    LA_TRY(count_row(k, line));
    la_status s = k->fn(k->ctx, rec, raw, rawlen, line, parse_error);
    if (s == LA_OK && k->stop && *k->stop) {
        /* any failure unwinds the format loops; stopped tells it apart from a real one */
        k->stopped = 1;
        return LA_EINTERNAL;
    }
    return s;
}

la_status la_records_each_until(const la_input *in, const char *path, la_format fmt, const la_limits *lim,
                                la_record_fn fn, void *ctx, const int *stop)
{
    if (fmt == LA_FMT_AUTO) fmt = la_format_detect(path, in);
    counted k = {fn, ctx, lim, path, 0, stop, 0};
    la_status s;
    switch (fmt) {
    case LA_FMT_JSONL: s = each_jsonl(in, lim, count_record, &k); break;
    case LA_FMT_CSV: s = each_csv(in, path, lim, count_record, &k); break;
    case LA_FMT_TSV: s = each_tsv(in, path, lim, count_record, &k); break;
    default: return la_error(LA_EINTERNAL, "unknown format");
    }
    return k.stopped ? LA_OK : s;
}

la_status la_records_each(const la_input *in, const char *path, la_format fmt, const la_limits *lim, la_record_fn fn,
                          void *ctx)
{
    return la_records_each_until(in, path, fmt, lim, fn, ctx, NULL);
}

/* A parsed record from a source on its way to the limits: over --max-row-bytes it is a reject as
 * a line of that length would be. */
typedef struct sourced {
    const la_limits *lim;
    la_record_fn fn;
    void *ctx;
} sourced;

static la_status source_record(void *ctx, json_object *rec, const char *raw, size_t rawlen, uint32_t line,
                               const char *parse_error)
{
    sourced *q = ctx;
    if (rec && over_row_limit(q->lim, rawlen)) return too_long(q->lim, q->fn, q->ctx, raw, rawlen, line);
    return q->fn(q->ctx, rec, raw, rawlen, line, parse_error);
}

la_status la_records_each_source(la_record_source src, void *src_ctx, const char *path, const la_limits *lim,
                                 la_record_fn fn, void *ctx, const int *stop)
{
    counted k = {fn, ctx, lim, path, 0, stop, 0};
    sourced q = {lim, count_record, &k};
    la_status s = src(src_ctx, source_record, &q);
    return k.stopped ? LA_OK : s;
}

/* ---- JSONL on worker threads ----
 * The input is cut after a newline into chunks of about LA_JSONL_CHUNK_BYTES, the same cuts for any
 * thread count. A window of chunks is parsed on the workers, each chunk's records prepared in
 * order into the chunk's own state; then the calling thread counts and commits them, chunk by
 * chunk, in input order, and the next window is cut. */

#define CHUNKS_PER_THREAD 16 /* in a window: the last chunk, which one worker parses while the others
                               wait, is a small part of it (50k x 5k rows, two threads: with 4 a window
                               the second thread was busy 97 of 133 ms, with 16 107 of 113) */

typedef struct jsonl_chunk {
    const char *begin, *end;
    uint32_t nlines;  /* physical lines in [begin, end), blank ones too */
    uint32_t *lines;  /* of each record prepared, counted from the chunk's start (1-based) */
    size_t nrec, caprec;
    int done;         /* parsed, to the end or to a failure */
    la_status st;
    char err[256];    /* the failure's message, taken on the worker's thread */
    void *state;      /* the caller's, pipe->chunk_bytes zeroed bytes */
} jsonl_chunk;

/* A window's bytes for pipe->absorb: item 0 of the window's parallel loop. */
typedef struct absorb_job {
    const char *p;
    size_t n;
    uint64_t off;
    int done;
    la_status st;
    char err[256];
} absorb_job;

/* The next block read beside the lines of this one (two threads or more): into `dst` after the
 * unfinished line copied to its front, a piece an item of each window's loop, each piece in
 * proportion to the lines parsed (the block is read by the time its lines are; what is left is
 * read when they are). No thread of its own: a third thread on two CPUs took a worker's CPU in
 * turns while the window's other items waited for that worker. */
typedef struct read_ahead {
    la_read_fn more;
    void *more_ctx;
    char *dst;
    size_t len, cap;   /* dst holds len bytes (the unfinished line), room for cap */
    size_t most;       /* the most to read: twice the block before (a small first block is parsed
                          while a larger one is read, and so on up to the buffer's size) */
    size_t got;        /* read so far */
    size_t piece;      /* this window's piece: bytes to ask for, 0 for none */
    int end;           /* the input ended */
    int done;          /* this window's piece was read */
    la_status st;
    char err[1024];
} read_ahead;

/* The previous window's commit, an item of the next window's parallel loop (two threads or more):
 * its chunks counted and committed in order and released, the reading state advanced. */
typedef struct commit_job {
    jsonl_chunk *chunks;
    size_t n;
    counted *k;
    uint32_t *line;
    int done;
    la_status st;
    char err[1024];
} commit_job;

typedef struct jsonl_run {
    const la_record_pipe *pipe;
    void *ctx;
    const la_limits *lim;
    jsonl_chunk *chunks; /* the window */
    absorb_job *ab;      /* NULL: no absorb */
    read_ahead *ra;      /* NULL: no piece of the next block to read beside the window */
    commit_job *cj;      /* NULL: no commit beside the window */
} jsonl_run;

typedef struct chunk_call {
    const jsonl_run *run;
    jsonl_chunk *chunk;
} chunk_call;

static la_status prepare_record(void *arg, json_object *rec, const char *raw, size_t rawlen, uint32_t line,
                                const char *parse_error)
{
    chunk_call *k = arg;
    jsonl_chunk *c = k->chunk;
    if (!la_grow((void **)&c->lines, &c->caprec, c->nrec + 1, sizeof *c->lines, 256))
        return la_error(LA_ENOMEM, "out of memory reading records");
    c->lines[c->nrec++] = line;
    return k->run->pipe->prepare(k->run->ctx, c->state, rec, raw, rawlen, line, parse_error);
}

static void parse_chunk(const jsonl_run *run, jsonl_chunk *c)
{
    chunk_call k = {run, c};
    c->st = jsonl_lines(c->begin, c->end, run->lim, run->pipe->raw_records, prepare_record, &k, &c->nlines);
    if (c->st != LA_OK) snprintf(c->err, sizeof c->err, "%s", la_last_error());
    c->done = 1;
}

static void absorb_window(const jsonl_run *run)
{
    absorb_job *ab = run->ab;
    ab->st = run->pipe->absorb(run->pipe->absorb_ctx, ab->off, ab->p, ab->n);
    if (ab->st != LA_OK) snprintf(ab->err, sizeof ab->err, "%s", la_last_error());
    ab->done = 1;
}

/* Up to `want` more bytes of the next block; sets r->end when the input has no more. */
static la_status read_more(read_ahead *r, size_t want)
{
    while (want > 0 && !r->end) {
        size_t room = r->cap - r->len - 1 - r->got, got = 0;
        if (room > want) room = want;
        if (room == 0) break;
        LA_TRY(r->more(r->more_ctx, r->dst + r->len + r->got, room, &got));
        r->got += got;
        want -= got;
        r->end = got == 0;
    }
    return LA_OK;
}

static void read_piece(const jsonl_run *run)
{
    read_ahead *r = run->ra;
    r->st = read_more(r, r->piece);
    if (r->st != LA_OK) snprintf(r->err, sizeof r->err, "%s", la_last_error());
    r->done = 1;
}

static void commit_window(const jsonl_run *run, commit_job *cj);

/* Items of a window: the absorb of its bytes (with absorb), a piece of the next block (with ra),
 * the previous window's commit (with cj), then its chunks in order. */
static la_status parse_chunks(void *arg, int worker, size_t begin, size_t end)
{
    const jsonl_run *run = arg;
    (void)worker;
    for (size_t i = begin; i < end; i++) {
        size_t k = i;
        if (run->ab && k-- == 0) {
            absorb_window(run);
            if (run->ab->st != LA_OK) return run->ab->st;
            continue;
        }
        if (run->ra && k-- == 0) {
            read_piece(run); /* a failure is the block's, reported once its lines are parsed */
            continue;
        }
        if (run->cj && k-- == 0) {
            commit_window(run, run->cj);
            if (run->cj->st != LA_OK) return run->cj->st;
            continue;
        }
        jsonl_chunk *c = &run->chunks[k];
        parse_chunk(run, c);
        if (c->st != LA_OK) return c->st;
    }
    return LA_OK;
}

/* Cut the next chunks after p into the window; returns how many. */
static size_t cut_window(const char **p, const char *end, jsonl_chunk *chunks, size_t window, char *states,
                         size_t state_bytes)
{
    size_t n = 0;
    for (; n < window && *p < end; n++) {
        const char *cut = end;
        if ((size_t)(end - *p) > LA_JSONL_CHUNK_BYTES) {
            const char *nl = memchr(*p + LA_JSONL_CHUNK_BYTES - 1, '\n', (size_t)(end - *p) - (LA_JSONL_CHUNK_BYTES - 1));
            if (nl) cut = nl + 1;
        }
        void *state = states + n * state_bytes;
        memset(state, 0, state_bytes);
        chunks[n] = (jsonl_chunk){.begin = *p, .end = cut, .state = state};
        *p = cut;
    }
    return n;
}

/* Count and commit a parsed chunk's records; *line: the lines before it, then after it. */
static la_status commit_chunk(const jsonl_run *run, jsonl_chunk *c, counted *k, uint32_t *line)
{
    if (c->st != LA_OK) return la_error(c->st, "%s", c->err);
    for (size_t r = 0; r < c->nrec; r++) {
        uint32_t at = *line + c->lines[r];
        LA_TRY(count_row(k, at));
        LA_TRY(run->pipe->commit(run->ctx, c->state, r, at));
    }
    *line += c->nlines;
    return LA_OK;
}

/* Commit a window's chunks in order (a chunk a failure elsewhere left unparsed is parsed first) and
 * release them all; the first failure's message is kept in cj->err, whichever thread ran it. */
static void commit_window(const jsonl_run *run, commit_job *cj)
{
    la_status st = LA_OK;
    for (size_t i = 0; i < cj->n; i++) {
        jsonl_chunk *c = &cj->chunks[i];
        if (st == LA_OK && !c->done) parse_chunk(run, c);
        if (st == LA_OK) {
            st = commit_chunk(run, c, cj->k, cj->line);
            if (st != LA_OK) snprintf(cj->err, sizeof cj->err, "%s", la_last_error());
        }
        run->pipe->release(run->ctx, c->state);
        free(c->lines);
    }
    cj->st = st;
    cj->done = 1;
}

/* The reading state of one input, across the windows of every block read. */
typedef struct jsonl_job {
    jsonl_run run;
    counted k;
    jsonl_chunk *chunks[2]; /* with two threads or more, a window is parsed while the one before it
                               in the other buffer is committed; with one, only chunks[0] */
    char *states[2];
    size_t window, state_bytes;
    int nt;
    uint32_t line;
    absorb_job ab;
    read_ahead *ra;      /* the next block, read beside the lines of this one; NULL: none */
    const char *buf;     /* with absorb: where the block in memory starts, */
    uint64_t base;       /* and where it lies in the input */
} jsonl_job;

/* Chunks in a window: CHUNKS_PER_THREAD per thread, or LEAKAUDIT_READ_WINDOW=N (at least 1), for
 * the tests that make small inputs take many windows. */
static size_t window_chunks(int nt)
{
    const char *e = getenv("LEAKAUDIT_READ_WINDOW");
    if (e && *e) {
        char *end;
        unsigned long long v = strtoull(e, &end, 10);
        if (!*end && v >= 1) return v > 4096 ? 4096 : (size_t)v;
    }
    return (size_t)nt * CHUNKS_PER_THREAD;
}

static la_status job_begin(jsonl_job *j, const char *path, const la_limits *lim, int threads,
                           const la_record_pipe *pipe, void *ctx)
{
    memset(j, 0, sizeof *j);
    j->nt = la_parallel_threads(threads);
    j->window = window_chunks(j->nt);
    j->state_bytes = pipe->chunk_bytes ? pipe->chunk_bytes : 1;
    j->run = (jsonl_run){pipe, ctx, lim, NULL, NULL, NULL, NULL};
    j->k = (counted){NULL, NULL, lim, path, 0, NULL, 0};
    int ok = 1;
    for (int b = 0; b < (j->nt > 1 ? 2 : 1); b++) {
        j->chunks[b] = la_calloc_n(j->window, sizeof(jsonl_chunk));
        j->states[b] = la_malloc_nm(j->window, j->state_bytes, 1);
        ok = ok && j->chunks[b] && j->states[b];
    }
    if (!ok) {
        for (int b = 0; b < 2; b++) {
            free(j->chunks[b]);
            free(j->states[b]);
        }
        return la_error(LA_ENOMEM, "out of memory reading %s", path);
    }
    return LA_OK;
}

static void job_end(jsonl_job *j)
{
    for (int b = 0; b < 2; b++) {
        free(j->chunks[b]);
        free(j->states[b]);
    }
}

/* Chunks in the lines' last window with two threads or more: that window is committed alone, on
 * one thread, before the lines move, so it is kept small; the window before it, which its parse
 * commits beside, holds the rest (one window more for the lines, at most). */
enum { TAIL_CHUNKS = 4 };

/* How many chunks to cut into the next window of the lines [p, end). */
static size_t window_here(const jsonl_job *j, const char *p, const char *end)
{
    if (j->nt < 2) return j->window;
    size_t left = ((size_t)(end - p) + LA_JSONL_CHUNK_BYTES - 1) / LA_JSONL_CHUNK_BYTES;
    if (left <= TAIL_CHUNKS) return j->window;
    return left - TAIL_CHUNKS < j->window ? left - TAIL_CHUNKS : j->window;
}

/* Every record of the lines [p, end), window by window; end is the end of the input or just after a
 * newline. With two threads or more, a window whose chunks all parsed is committed as an item of the
 * next window's loop, beside its parse (the commit, in input order on one thread at a time, was the
 * part of each window the other threads waited for); the last window of the lines is committed
 * before this returns, while the lines it borrows are still where they were read. */
static la_status job_lines(jsonl_job *j, const char *p, const char *end)
{
    la_status st = LA_OK;
    commit_job cj = {.k = &j->k, .line = &j->line};
    int pending = 0, cur = 0;
    const char *start = p;
    size_t asked = 0; /* of the next block, in the windows before this one */
    while (st == LA_OK && p < end) {
        const char *from = p;
        jsonl_chunk *chunks = j->chunks[cur];
        size_t n = cut_window(&p, end, chunks, window_here(j, p, end), j->states[cur], j->state_bytes);
        if (j->run.ab) j->ab = (absorb_job){from, (size_t)(p - from), j->base + (uint64_t)(from - j->buf), 0, LA_OK, ""};
        j->run.ra = NULL;
        if (j->ra && !j->ra->end && j->ra->st == LA_OK) {
            /* the next block's share of the lines parsed by this window's end */
            size_t due = (size_t)((double)j->ra->most * (double)(p - start) / (double)(end - start));
            if (p >= end) due = j->ra->most;
            if (due > asked) {
                j->ra->piece = due - asked;
                j->ra->done = 0;
                asked = due;
                j->run.ra = j->ra;
            }
        }
        if (j->run.pipe->window_begin) j->run.pipe->window_begin(j->run.ctx);
        j->run.chunks = chunks;
        j->run.cj = pending ? &cj : NULL;
        /* each chunk keeps its own status */
        la_parallel_for(j->nt, n + (j->run.ab != NULL) + (j->run.ra != NULL) + (size_t)pending, 1, parse_chunks, &j->run);
        j->run.cj = NULL;
        if (pending) {
            if (!cj.done) commit_window(&j->run, &cj); /* the loop stopped before it */
            pending = 0;
            if (cj.st != LA_OK) st = la_error(cj.st, "%s", cj.err);
        }
        if (j->run.ab) {
            if (!j->ab.done) absorb_window(&j->run); /* the loop stopped before it */
            if (st == LA_OK && j->ab.st != LA_OK) st = la_error(j->ab.st, "%s", j->ab.err);
        }
        if (j->run.ra && !j->ra->done) read_piece(&j->run); /* the loop stopped before it */
        j->run.ra = NULL;
        int parsed = 1;
        for (size_t i = 0; i < n; i++) parsed = parsed && chunks[i].done && chunks[i].st == LA_OK;
        cj = (commit_job){chunks, n, &j->k, &j->line, 0, LA_OK, ""};
        if (st != LA_OK || j->nt < 2 || !parsed || p >= end) {
            /* now: a failure is settled in input order, and the lines' last window before they move */
            if (st == LA_OK) {
                commit_window(&j->run, &cj);
                if (cj.st != LA_OK) st = la_error(cj.st, "%s", cj.err);
            } else {
                for (size_t i = 0; i < n; i++) {
                    j->run.pipe->release(j->run.ctx, chunks[i].state);
                    free(chunks[i].lines);
                }
            }
        } else {
            pending = 1;
            cur ^= 1;
        }
    }
    return st;
}

la_status la_jsonl_each_parallel(const la_input *in, const char *path, const la_limits *lim, int threads,
                                 const la_record_pipe *pipe, void *ctx)
{
    jsonl_job j;
    LA_TRY(job_begin(&j, path, lim, threads, pipe, ctx));
    la_status st = job_lines(&j, skip_bom(in), in->data + in->len);
    job_end(&j);
    return st;
}

/* A read buffer of at least `need` bytes. */
static la_status buffer_room(char **buf, size_t *cap, size_t need, const char *path)
{
    if (*cap >= need) return LA_OK;
    char *b = realloc(*buf, need);
    if (!b) return la_error(LA_ENOMEM, "out of memory reading %s", path);
    *buf = b;
    *cap = need;
    return LA_OK;
}

la_status la_jsonl_each_read(char *buf, size_t len, size_t cap, la_read_fn more, void *more_ctx, const char *path,
                             const la_limits *lim, int threads, const la_record_pipe *pipe, void *ctx)
{
    jsonl_job j;
    la_status st = job_begin(&j, path, lim, threads, pipe, ctx);
    if (st != LA_OK) {
        free(buf); /* taken over, whatever happens */
        return st;
    }
    size_t pos = bom_len(buf, len);
    int eof = 0;
    uint64_t base = 0; /* where buf[0] lies in the input */
    /* with two threads or more, the next block is read into a second buffer beside the parse */
    char *other = NULL;
    size_t other_cap = 0;
    if (pipe->absorb) {
        j.run.ab = &j.ab;
        if (pos) st = pipe->absorb(pipe->absorb_ctx, 0, buf, pos); /* the byte order mark */
    }
    while (st == LA_OK) {
        /* the complete lines read so far; the rest of a line waits for the next block */
        const char *nl = NULL;
        for (size_t i = len; i > pos; i--)
            if (buf[i - 1] == '\n') {
                nl = buf + i - 1;
                break;
            }
        const char *end = eof ? buf + len : nl ? nl + 1 : buf + pos;
        size_t done = (size_t)(end - buf), rest = len - done;
        /* the unfinished line at the front of the next block, room for a block after it (a line
         * longer than half the buffer doubles it) */
        size_t next_cap = cap - rest < cap / 2 ? cap * 2 : cap;
        read_ahead ra;
        int ahead = 0;
        if (!eof && j.nt > 1 && end > buf + pos) {
            if ((st = buffer_room(&other, &other_cap, next_cap, path)) != LA_OK) break;
            memcpy(other, end, rest);
            ra = (read_ahead){.more = more, .more_ctx = more_ctx, .dst = other, .len = rest, .cap = other_cap,
                              .most = 2 * (len - rest) > ((size_t)1 << 20) ? 2 * (len - rest) : (size_t)1 << 20};
            if (ra.most > other_cap - rest - 1) ra.most = other_cap - rest - 1;
            ahead = 1;
        }
        if (pipe->origin) *pipe->origin = (la_block_origin){buf, base};
        j.buf = buf;
        j.base = base;
        j.ra = ahead ? &ra : NULL;
        if (end > buf + pos) st = job_lines(&j, buf + pos, end);
        j.ra = NULL;
        /* what the windows did not read of the next block (none when its lines parsed whole) */
        if (ahead && st == LA_OK && ra.st == LA_OK && ra.got < ra.most) {
            ra.st = read_more(&ra, ra.most - ra.got);
            if (ra.st != LA_OK) snprintf(ra.err, sizeof ra.err, "%s", la_last_error());
        }
        if (st != LA_OK || eof) break;
        base += done;
        pos = 0;
        size_t got = 0;
        if (ahead) {
            /* the read beside the parse: its buffer is the next block */
            if (ra.st != LA_OK) {
                st = la_error(ra.st, "%s", ra.err);
                break;
            }
            char *t = buf;
            buf = other;
            other = t;
            size_t c = cap;
            cap = other_cap;
            other_cap = c;
            len = rest;
            got = ra.got;
        } else {
            memmove(buf, end, rest);
            len = rest;
            if ((st = buffer_room(&buf, &cap, next_cap, path)) != LA_OK) break;
            st = more(more_ctx, buf + len, cap - len - 1, &got);
            if (st != LA_OK) break;
        }
        len += got;
        buf[len] = '\0';
        eof = got == 0;
    }
    free(buf);
    free(other);
    job_end(&j);
    return st;
}

la_status la_jsonl_each_mapped(const char *data, size_t len, size_t block, void (*release)(const char *p, size_t n),
                               const char *path, const la_limits *lim, int threads, const la_record_pipe *pipe,
                               void *ctx)
{
    jsonl_job j;
    LA_TRY(job_begin(&j, path, lim, threads, pipe, ctx));
    la_status st = LA_OK;
    size_t pos = bom_len(data, len);
    if (pipe->absorb) {
        j.run.ab = &j.ab;
        if (pos) st = pipe->absorb(pipe->absorb_ctx, 0, data, pos); /* the byte order mark */
    }
    if (pipe->origin) *pipe->origin = (la_block_origin){data, 0};
    j.buf = data;
    j.base = 0;
    size_t released = 0;
    while (st == LA_OK && pos < len) {
        /* the complete lines of the next block (a line longer than a block whole) */
        size_t end = len - pos > block ? pos + block : len;
        if (end < len) {
            const char *nl = memchr(data + end, '\n', len - end);
            end = nl ? (size_t)(nl - data) + 1 : len;
        }
        st = job_lines(&j, data + pos, data + end);
        pos = end;
        if (release && st == LA_OK) {
            release(data + released, pos - released);
            released = pos;
        }
    }
    job_end(&j);
    return st;
}
