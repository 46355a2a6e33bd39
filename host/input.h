/*
 * input.h - reading one input file whole: plain, gzip (.gz) or zstd (.zst, by magic number), or
 * standard input for "-". Also the BLAKE2b-256 fingerprint of the bytes as stored (compressed).
 * Not for: parsing records (see records.h).
 */
#ifndef LA_INPUT_H
#define LA_INPUT_H

#include "leakaudit.h"

typedef struct la_input {
    char *data;          /* decompressed bytes, NUL-terminated; owned */
    size_t len;
    size_t stored_len;   /* bytes as stored on disk (or read from stdin) */
    unsigned char blake2b[32];
    const char *compression; /* "none", "gzip" or "zstd" (static) */
} la_input;

/* Read `path` ("-" for stdin) whole and decompress it. On failure sets la_last_error with the path. */
la_status la_input_read(const char *path, la_input *out /* OUT */);
void la_input_free(la_input *in);

/* The name of a path without compression suffix's effect: its format extension ("jsonl", "csv",
 * "tsv", ...) after dropping .gz/.zst; "" when none. Written into ext (at least 16 bytes). */
void la_input_format_ext(const char *path, char ext[16]);

#endif /* LA_INPUT_H */
