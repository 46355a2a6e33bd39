/*
 * input.h - reading one input file whole: plain, gzip (.gz) or zstd (.zst, by magic number), or
 * standard input for "-". Also the BLAKE2b-256 fingerprint of the bytes as stored (compressed).
 * Not for: parsing records (see records.h).
 */
#ifndef LA_INPUT_H
#define LA_INPUT_H

#include "leakaudit.h"

#include <stdint.h>

typedef struct la_input {
    char *data;          /* decompressed bytes, NUL-terminated; owned */
    size_t len;
    size_t stored_len;   /* bytes as stored on disk (or read from stdin) */
    unsigned char blake2b[32];
    const char *compression; /* "none", "gzip" or "zstd" (static) */
} la_input;

/* What one input may cost, so hostile input ends in a clear exit 2 and not in the OOM killer. A zero
 * field means no limit. */
typedef struct la_limits {
    uint64_t max_input_bytes; /* bytes per input after decompression (--max-input-bytes) */
    double max_ratio;         /* decompressed / stored bytes for .gz and .zst (--max-ratio) */
    size_t max_row_bytes;     /* bytes of one record (--max-row-bytes); bounds each row's work */
    size_t max_rows;          /* records per input (--max-rows) */
} la_limits;

#define LA_DEFAULT_MAX_INPUT_BYTES (16ull << 30)
#define LA_DEFAULT_MAX_RATIO 200.0
#define LA_DEFAULT_MAX_ROW_BYTES ((size_t)1 << 20)
#define LA_DEFAULT_MAX_ROWS ((size_t)50000000)

void la_limits_default(la_limits *l /* OUT */);

/* Read `path` ("-" for stdin) whole and decompress it, within lim's byte limits (NULL: none). On
 * failure sets la_last_error with the path; past a limit returns LA_EINPUT naming the option. */
la_status la_input_read(const char *path, const la_limits *lim, la_input *out /* OUT */);
void la_input_free(la_input *in);

/* The name of a path without compression suffix's effect: its format extension ("jsonl", "csv",
 * "tsv", ...) after dropping .gz/.zst; "" when none. Written into ext (at least 16 bytes). */
void la_input_format_ext(const char *path, char ext[16]);

#endif /* LA_INPUT_H */
