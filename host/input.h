/*
 * input.h - reading one input file whole: plain, gzip (.gz) or zstd (.zst, by magic number), or
 * standard input for "-". Also the BLAKE2b-256 fingerprint of the bytes as stored (compressed).
 * Not for: parsing records (see records.h).
 */
#ifndef LA_INPUT_H
#define LA_INPUT_H

#include "leakaudit.h"

#include "la_blake2b.h"
#include <stdint.h>
#include <stdio.h>

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

/* A zstd frame as it is decoded: the first bytes of its header and the bytes it gave so far. */
typedef struct la_zstd_frame {
    unsigned char head[18]; /* ZSTD_FRAMEHEADERSIZE_MAX */
    size_t head_len;
    uint64_t got;
} la_zstd_frame;

/* A regular file read a block at a time (la_input_blocks_read is a la_read_fn, records.h), plain
 * or decompressed as it is read (gzip, zstd), with la_input_read's fingerprint (of the bytes as
 * stored), byte limits and messages. */
typedef struct la_input_blocks {
    FILE *f;
    const char *path;        /* borrowed */
    const la_limits *lim;    /* borrowed */
    uint64_t n, limit;       /* bytes given out so far (decompressed); the most allowed */
    uint64_t size;           /* the file's size when it was opened */
    uint64_t stored;         /* bytes read from the file */
    uint64_t hashed;         /* of them, in the fingerprint so far */
    int defer;               /* plain input: the reads leave the fingerprint to la_input_blocks_absorb */
    la_blake2b_state h;
    const char *compression; /* "none", "gzip" or "zstd" (static) */
    void *z;                 /* the decoder: z_stream or ZSTD_DStream, NULL for plain */
    unsigned char *in;       /* compressed bytes read and not yet decoded: in[at .. len) */
    size_t at, len;
    int in_eof;              /* the file has no more bytes */
    int done;                /* the compressed stream has ended */
    size_t zlast;            /* zstd: what the last call said is left of its frame (0: frame end) */
    la_zstd_frame zf;        /* zstd: the current frame's header and bytes given (input.c) */
    int is_stdin;            /* standard input: read as plain, its size unknown */
} la_input_blocks;

/* Open path for block reads: *ok = 1 when it is a regular, non-empty file or standard input ("-",
 * read as plain whatever it holds: see la_input_blocks_rest) (close it with
 * la_input_blocks_close), else *ok = 0 and nothing is open (read it whole: la_input_read says why a
 * path cannot be opened). A plain file over --max-input-bytes is LA_EINPUT with la_input_read's
 * message, before anything is read; compressed data, once it decompresses past the limits. */
la_status la_input_blocks_open(const char *path, const la_limits *lim, la_input_blocks *b /* OUT */, int *ok /* OUT */);
/* Up to cap more bytes into dst; *got = 0 at the end of the file. */
la_status la_input_blocks_read(void *b, char *dst, size_t cap, size_t *got /* OUT */);
/* Standard input that cannot be read a block at a time after all (compressed, or not JSONL): the
 * input whole, as la_input_read gives it, from the n bytes read so far (head, taken over whatever
 * happens) and the rest. Closes b. */
la_status la_input_blocks_rest(la_input_blocks *b, char *head, size_t n, la_input *out /* OUT */);
/* Leave the fingerprint of what plain input reads from now on to la_input_blocks_absorb (which
 * any one thread may call between reads); compressed input keeps fingerprinting its reads. */
void la_input_blocks_defer_hash(la_input_blocks *b);
/* Bytes [off, off + n) of the input, which the fingerprint takes where they pass what it holds: a
 * gap between them (off past what it holds) is LA_EINTERNAL. A la_record_pipe absorb function (b). */
la_status la_input_blocks_absorb(void *b, uint64_t off, const char *p, size_t n);
/* A plain file opened and not yet read, mapped whole (la_input_map with zero_after), its bytes
 * counted as read: *data (NULL when it cannot be mapped: read it instead) and *len. Close b and
 * la_input_unmap(*data) when done. */
la_status la_input_blocks_map(la_input_blocks *b, const char **data /* OUT */, size_t *len /* OUT */);

/* The first len bytes of the open file fd (named path in messages) mapped read-only, or NULL when
 * they cannot be, or LEAKAUDIT_READ_MAP=0 is set (read them instead: the tests of the reads).
 * zero_after: data[len] reads as 0. While a file is mapped, a SIGBUS on its pages (the file was cut
 * short meanwhile) says so on standard error, naming it, and the process ends by that signal; the
 * process's own SIGBUS handler, if any, takes every other SIGBUS then, and is back in place once no
 * file is mapped. */
const char *la_input_map(int fd, size_t len, const char *path, int zero_after);
void la_input_unmap(const char *data);
/* The mapped bytes [p, p + n) are read over: the pages wholly inside them are let go (read from the
 * file again should they be touched). */
void la_input_release(const char *p, size_t n);
/* Async-signal-safe: when addr lies in a mapped file, say on standard error that the file was cut
 * short, and return 1; else 0. The SIGBUS handler's message. */
int la_input_fault_note(const void *addr);
/* What the SIGBUS handler runs after its message (then(SIGBUS), async-signal-safe; NULL: nothing)
 * before the process ends by the signal: the output folder's removal (outdir.c). */
void la_input_on_fault(void (*then)(int sig));
/* Close the file; info gets the fingerprint, the bytes stored and the compression (data NULL). */
void la_input_blocks_close(la_input_blocks *b, la_input *info /* OUT */);

/* "gzip" or "zstd" when data[0 .. n) starts with that format's magic number, else NULL. */
const char *la_input_compression_of(const char *data, size_t n);

/* The name of a path without compression suffix's effect: its format extension ("jsonl", "csv",
 * "tsv", ...) after dropping .gz/.zst; "" when none. Written into ext (at least 16 bytes). */
void la_input_format_ext(const char *path, char ext[16]);

#endif /* LA_INPUT_H */
