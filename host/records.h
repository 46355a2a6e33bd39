/*
 * records.h - turning the bytes of one input file into records (JSON objects): JSONL, CSV with a
 * header row (RFC 4180 quoting, via libcsv), TSV with a header row (tab-separated, no quoting).
 * CSV/TSV cells become string members named by the header. Not for: validation (see load.h).
 */
#ifndef LA_RECORDS_H
#define LA_RECORDS_H

#include "input.h"
#include "leakaudit.h"

#include <json-c/json.h>

typedef enum la_format { LA_FMT_AUTO = 0, LA_FMT_JSONL, LA_FMT_CSV, LA_FMT_TSV } la_format;

/* Parse "auto", "jsonl", "csv", "tsv". */
la_status la_format_parse(const char *s, la_format *out /* OUT */);
/* The format of a path by extension (after .gz/.zst); for "-" or unknown extensions, sniffed from
 * the data: '{' first means JSONL, a tab in the first line TSV, else CSV. */
la_format la_format_detect(const char *path, const la_input *in);
/* Whether the text starts as a JSON array of objects ('[' then '{' or ']', past a byte-order mark and
 * white space): what a JSON export holds, and no file of JSON Lines, whose records are objects. */
int la_json_array_start(const la_input *in);
const char *la_format_name(la_format f);

/* Called once per record. rec is borrowed (valid during the call), or NULL when the record could
 * not be parsed, with parse_error saying why (or, through a la_record_pipe with raw_records, NULL
 * with parse_error NULL: a valid object to be read from raw). raw/rawlen: the record as one line of JSON (the
 * original line for JSONL). line: 1-based physical line where the record starts. Returning
 * anything but LA_OK stops the iteration with that status. */
typedef la_status (*la_record_fn)(void *ctx, json_object *rec, const char *raw, size_t rawlen, uint32_t line,
                                  const char *parse_error);

/* Every record of `in` to fn. Within `lim` (NULL: no limits): a record longer than max_row_bytes is
 * a parse error (rec NULL; raw holds its first 256 bytes) before any parsing; more than max_rows
 * records end the iteration with LA_EINPUT "PATH:LINE: ...". */
la_status la_records_each(const la_input *in, const char *path, la_format fmt, const la_limits *lim, la_record_fn fn,
                          void *ctx);

/* The same, ending early (with LA_OK) after the first call of fn that leaves *stop nonzero. */
la_status la_records_each_until(const la_input *in, const char *path, la_format fmt, const la_limits *lim,
                                la_record_fn fn, void *ctx, const int *stop);

/* A producer of records that are parsed already (rows in memory, host/arrow.h): calls fn once per
 * record, in order, with its line (its 1-based row), and returns at the first status that is not
 * LA_OK. */
typedef la_status (*la_record_source)(void *src, la_record_fn fn, void *ctx);

/* Every record of a source to fn under the limits of la_records_each_until: a record whose raw
 * line is longer than max_row_bytes reaches fn as a parse error (rec NULL, its first 256 bytes in
 * raw), more than max_rows records end the iteration with LA_EINPUT "PATH:LINE: ...", and the
 * first call of fn that leaves *stop nonzero (stop may be NULL) ends it early with LA_OK. */
la_status la_records_each_source(la_record_source src, void *src_ctx, const char *path, const la_limits *lim,
                                 la_record_fn fn, void *ctx, const int *stop);

/* Records parsed on worker threads and committed on the calling thread in input order. The input
 * is cut into chunks of about LA_JSONL_CHUNK_BYTES, after a newline (a longer line is a chunk of its
 * own); each chunk has a state of chunk_bytes bytes, zeroed, for its records alone. */
#define LA_JSONL_CHUNK_BYTES (256u << 10)

/* Where the bytes being parsed lie in the input as stored: la_jsonl_each_read sets these before
 * each run of complete lines, for a caller that keeps a record's place in the file instead of its
 * text (offset of raw = off + (raw - buf)). */
typedef struct la_block_origin {
    const char *buf;
    uint64_t off;
} la_block_origin;

typedef struct la_record_pipe {
    /* On a worker thread, for each record of a chunk in order: la_record_fn's arguments (line
     * counted from the chunk's first line), and the chunk's state. Failures stop the reading, as
     * la_record_fn's do: the first failure in the file is the one returned. */
    la_status (*prepare)(void *ctx, void *chunk, json_object *rec, const char *raw, size_t rawlen, uint32_t line,
                         const char *parse_error);
    /* Chunks in input order, on one thread at a time: record k (0-based) of the chunk, which starts
     * at `line` of the file. A failure ends the reading with it. With more than one thread a
     * window's commits may run on a worker while the next window's records are prepared: prepare
     * reads nothing that commit changes, but what window_begin hands it. */
    la_status (*commit)(void *ctx, void *chunk, size_t k, uint32_t line);
    /* Frees what prepare kept in a chunk's state, whether its records were committed or not. */
    void (*release)(void *ctx, void *chunk);
    size_t chunk_bytes;
    /* la_jsonl_each_read only, or NULL: kept current while prepare runs */
    la_block_origin *origin;
    /* la_jsonl_each_read only, or NULL: given each window's bytes [off, off + n) of the input once,
     * in input order, on a worker thread while the window's chunks are parsed (the fingerprint of
     * an input being read runs there instead of before the parse). A failure ends the reading. */
    la_status (*absorb)(void *absorb_ctx, uint64_t off, const char *p, size_t n);
    void *absorb_ctx;
    /* Nonzero: a line that passes la_json_strict_check as one object reaches prepare as its text
     * alone (rec NULL and parse_error NULL), for a reader that reads its values from the text
     * (json_view.h) and needs no json-c tree; other lines reach it as without. */
    int raw_records;
    /* Or NULL: on the calling thread before each window's records are prepared, with no commit
     * running, to take what prepare will read of what commits change. */
    void (*window_begin)(void *ctx);
} la_record_pipe;

/* Every record of the JSONL input `in` through pipe, records parsed on up to `threads` threads
 * (0: the CPUs this process may use), with la_records_each's limits and line numbers: commit sees
 * the same records, in the same order, with the same lines and raw text as la_records_each's fn,
 * whatever the thread count. */
la_status la_jsonl_each_parallel(const la_input *in, const char *path, const la_limits *lim, int threads,
                                 const la_record_pipe *pipe, void *ctx);

/* More bytes of an input as stored: up to cap into dst, *got = 0 at its end. */
typedef la_status (*la_read_fn)(void *ctx, char *dst, size_t cap, size_t *got);

/* The same over an input read a block at a time: buf (malloc'ed, cap bytes, the first len of them
 * read and buf[len] = 0; taken over and freed) and then what `more` gives. Only the complete lines
 * of each block are parsed; the rest of a line moves to the front for the next block, and a line
 * longer than the buffer grows it. The records, lines and failures are those of
 * la_jsonl_each_parallel over the whole input. With two threads or more the next block is read
 * while the lines of this one are parsed, a piece an item of each window's loop: `more` runs on the
 * workers, one call at a time and in order, beside the parse and pipe->absorb. */
la_status la_jsonl_each_read(char *buf, size_t len, size_t cap, la_read_fn more, void *more_ctx, const char *path,
                             const la_limits *lim, int threads, const la_record_pipe *pipe, void *ctx);

/* The same over an input whose bytes are all in memory (a plain file mapped: data[len] reads as 0),
 * parsed `block` bytes at a time (whole lines; a longer line is a block of its own): after each
 * block's records are committed, release(p, n) (or NULL) is told its bytes are read over. */
la_status la_jsonl_each_mapped(const char *data, size_t len, size_t block, void (*release)(const char *p, size_t n),
                               const char *path, const la_limits *lim, int threads, const la_record_pipe *pipe,
                               void *ctx);

#endif /* LA_RECORDS_H */
