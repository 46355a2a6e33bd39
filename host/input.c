/*
 * input.c - whole-file reading with transparent gzip/zstd decompression and a BLAKE2b-256
 * fingerprint of the stored bytes; and block reading of a regular file, plain or decompressed as
 * it is read, with the same fingerprint, byte limits and messages, for the JSONL reader that
 * parses a block at a time (records.h), so that a large input is never held whole.
 */
#include "input.h"
#include "la_alloc.h"

#include <errno.h>
#include "la_blake2b.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>
#include <zstd.h>

/* Compressed bytes read from a file per refill of the block reader's decoder. */
#define COMPRESSED_BLOCK ((size_t)1 << 20)

void la_limits_default(la_limits *l)
{
    l->max_input_bytes = LA_DEFAULT_MAX_INPUT_BYTES;
    l->max_ratio = LA_DEFAULT_MAX_RATIO;
    l->max_row_bytes = LA_DEFAULT_MAX_ROW_BYTES;
    l->max_rows = LA_DEFAULT_MAX_ROWS;
}

/* The most bytes an input may decompress to: --max-input-bytes, and for compressed data also
 * --max-ratio times what is stored (at least 1 MiB, so tiny files are never refused). */
static uint64_t byte_limit(const la_limits *lim, size_t stored, int compressed)
{
    uint64_t m = lim && lim->max_input_bytes ? lim->max_input_bytes : UINT64_MAX;
    if (compressed && lim && lim->max_ratio > 0) {
        double r = lim->max_ratio * (double)stored;
        uint64_t byratio = r < 1048576.0 ? 1048576 : r >= 1.8e19 ? UINT64_MAX : (uint64_t)r;
        if (byratio < m) m = byratio;
    }
    return m;
}

static la_status over_limit(const char *path, const la_limits *lim, size_t stored, int compressed)
{
    uint64_t m = byte_limit(lim, stored, compressed);
    if (compressed && lim && lim->max_ratio > 0 && m < (lim->max_input_bytes ? lim->max_input_bytes : UINT64_MAX))
        return la_error(LA_EINPUT,
                        "%s: decompresses to more than %llu bytes, over %g times the %zu bytes stored (a compression "
                        "bomb?); raise --max-ratio (or give 0) if the data is genuine",
                        path, (unsigned long long)m, lim->max_ratio, stored);
    return la_error(LA_EINPUT, "%s: more than %llu bytes%s; raise --max-input-bytes (or give 0) to read it", path,
                    (unsigned long long)m, compressed ? " after decompression" : "");
}

/* Grow *p (capacity *cap, n used) so that at least 65536 bytes are free, but never past limit + 1
 * (one byte more than allowed shows that the limit was passed). 0 on success, -1 out of memory. */
static int grow(char **p, size_t *cap, size_t n, uint64_t limit)
{
    if (*cap - n >= 65536) return 0;
    size_t want = *cap * 2;
    if (limit < UINT64_MAX && want > limit + 65537) want = (size_t)limit + 65537;
    if (want <= *cap) return 0;
    char *q = realloc(*p, want);
    if (!q) return -1;
    *p = q;
    *cap = want;
    return 0;
}

static la_status slurp(FILE *f, const char *path, const la_limits *lim, char **data, size_t *len)
{
    size_t cap = 1 << 16, n = 0;
    uint64_t limit = byte_limit(lim, 0, 0);
    char *p = malloc(cap);
    if (!p) return la_error(LA_ENOMEM, "%s: out of memory", path);
    for (;;) {
        if (n > limit) {
            free(p);
            return over_limit(path, lim, n, 0);
        }
        if (grow(&p, &cap, n, limit) != 0) {
            free(p);
            return la_error(LA_ENOMEM, "%s: out of memory reading the file", path);
        }
        size_t r = fread(p + n, 1, cap - n - 1, f);
        n += r;
        if (r == 0) break;
    }
    if (ferror(f)) {
        free(p);
        return la_error(LA_EIO, "%s: read error: %s", path, strerror(errno));
    }
    p[n] = '\0';
    *data = p;
    *len = n;
    return LA_OK;
}

static la_status gunzip(const char *path, const la_limits *lim, const char *src, size_t n, char **out, size_t *outlen)
{
    z_stream z;
    memset(&z, 0, sizeof z);
    if (inflateInit2(&z, 15 + 32) != Z_OK) return la_error(LA_ENOMEM, "%s: cannot start gzip decoder", path);
    uint64_t limit = byte_limit(lim, n, 1);
    size_t cap = n * 4 + 65536, len = 0;
    if (limit < UINT64_MAX && cap > limit + 65537) cap = (size_t)limit + 65537;
    char *p = malloc(cap);
    if (!p) {
        inflateEnd(&z);
        return la_error(LA_ENOMEM, "%s: out of memory", path);
    }
    /* inputs over 4 GiB compressed are fed in pieces below */
    z.next_in = (Bytef *)src;
    size_t fed = n > 0xFFFFFFFFu ? 0xFFFFFFFFu : n;
    z.avail_in = (uInt)fed;
    int rc = Z_OK;
    for (;;) {
        if (len > limit) {
            free(p);
            inflateEnd(&z);
            return over_limit(path, lim, n, 1);
        }
        if (grow(&p, &cap, len, limit) != 0) {
            free(p);
            inflateEnd(&z);
            return la_error(LA_ENOMEM, "%s: out of memory decompressing", path);
        }
        size_t room = cap - len - 1;
        z.next_out = (Bytef *)(p + len);
        z.avail_out = (uInt)(room > 0xFFFFFFFFu ? 0xFFFFFFFFu : room);
        uInt before = z.avail_out;
        rc = inflate(&z, Z_NO_FLUSH);
        len += before - z.avail_out;
        if (z.avail_in == 0 && fed < n) {
            size_t more = n - fed > 0xFFFFFFFFu ? 0xFFFFFFFFu : n - fed;
            z.next_in = (Bytef *)(src + fed);
            z.avail_in = (uInt)more;
            fed += more;
        }
        if (rc == Z_STREAM_END) {
            /* concatenated gzip members */
            if (z.avail_in == 0 && fed == n) break;
            inflateReset(&z);
            continue;
        }
        if (rc != Z_OK) break;
    }
    inflateEnd(&z);
    if (rc != Z_STREAM_END) {
        free(p);
        return la_error(LA_EINPUT, "%s: corrupt or truncated gzip data", path);
    }
    if (len > limit) {
        free(p);
        return over_limit(path, lim, n, 1);
    }
    p[len] = '\0';
    *out = p;
    *outlen = len;
    return LA_OK;
}

/* One call of the zstd decoder: it took used bytes from in and gave made bytes, and said last is
 * left of its frame. At a frame's end the bytes it gave are checked against the size its header
 * declares: libzstd's streaming decoder ends a frame whose last block is empty without that check
 * (its one-call path makes it), so without this a frame cut to an empty block would read as whole
 * in one reader and corrupt in the other. */
static la_status zstd_step(la_zstd_frame *f, const char *path, const void *in, size_t used, size_t made, size_t last)
{
    if (f->head_len < sizeof f->head) {
        size_t k = sizeof f->head - f->head_len < used ? sizeof f->head - f->head_len : used;
        memcpy(f->head + f->head_len, in, k);
        f->head_len += k;
    }
    f->got += made;
    if (last != 0) return LA_OK;
    unsigned long long want = ZSTD_getFrameContentSize(f->head, f->head_len);
    uint64_t got = f->got;
    f->head_len = 0;
    f->got = 0;
    if (want == ZSTD_CONTENTSIZE_UNKNOWN || want == ZSTD_CONTENTSIZE_ERROR || want == got) return LA_OK;
    return la_error(LA_EINPUT, "%s: corrupt zstd data: a frame gave %llu bytes where its header declares %llu", path,
                    (unsigned long long)got, want);
}

static la_status unzstd(const char *path, const la_limits *lim, const char *src, size_t n, char **out, size_t *outlen)
{
    ZSTD_DStream *d = ZSTD_createDStream();
    if (!d) return la_error(LA_ENOMEM, "%s: cannot start zstd decoder", path);
    uint64_t limit = byte_limit(lim, n, 1);
    size_t cap = n * 4 + 65536, len = 0;
    if (limit < UINT64_MAX && cap > limit + 65537) cap = (size_t)limit + 65537;
    char *p = malloc(cap);
    if (!p) {
        ZSTD_freeDStream(d);
        return la_error(LA_ENOMEM, "%s: out of memory", path);
    }
    ZSTD_inBuffer in = {src, n, 0};
    la_zstd_frame frame = {0};
    size_t last = 1;
    while (in.pos < in.size || last != 0) {
        if (len > limit) {
            free(p);
            ZSTD_freeDStream(d);
            return over_limit(path, lim, n, 1);
        }
        if (grow(&p, &cap, len, limit) != 0) {
            free(p);
            ZSTD_freeDStream(d);
            return la_error(LA_ENOMEM, "%s: out of memory decompressing", path);
        }
        ZSTD_outBuffer o = {p + len, cap - len - 1, 0};
        size_t from = in.pos;
        last = ZSTD_decompressStream(d, &o, &in);
        len += o.pos;
        la_status st = ZSTD_isError(last)
                           ? la_error(LA_EINPUT, "%s: corrupt zstd data: %s", path, ZSTD_getErrorName(last))
                           : zstd_step(&frame, path, src + from, in.pos - from, o.pos, last);
        if (st != LA_OK) {
            free(p);
            ZSTD_freeDStream(d);
            return st;
        }
        if (in.pos == in.size && o.pos == 0 && last != 0) {
            free(p);
            ZSTD_freeDStream(d);
            return la_error(LA_EINPUT, "%s: truncated zstd data", path);
        }
    }
    ZSTD_freeDStream(d);
    if (len > limit) {
        free(p);
        return over_limit(path, lim, n, 1);
    }
    p[len] = '\0';
    *out = p;
    *outlen = len;
    return LA_OK;
}

const char *la_input_compression_of(const char *data, size_t n)
{
    const unsigned char *u = (const unsigned char *)data;
    if (n >= 2 && u[0] == 0x1f && u[1] == 0x8b) return "gzip";
    if (n >= 4 && u[0] == 0x28 && u[1] == 0xB5 && u[2] == 0x2F && u[3] == 0xFD) return "zstd";
    /* a skippable frame (magic 0x184D2A50 to 0x184D2A5F, little-endian) before the first: pzstd
     * starts every frame with one; no text file starts with these bytes */
    if (n >= 4 && (u[0] & 0xF0) == 0x50 && u[1] == 0x2A && u[2] == 0x4D && u[3] == 0x18) return "zstd";
    return NULL;
}

/* A packing the readers do not undo, known by its first bytes: what to call it, or NULL. Without
 * this the bytes were read as text, and a compressed file became a page of rejects about JSON. */
static const char *foreign_packing(const unsigned char *u, size_t n, const char **undo)
{
    *undo = "decompress";
    if (n >= 6 && !memcmp(u, "\xFD" "7zXZ\0", 6)) return "xz-compressed data";
    if (n >= 10 && u[0] == 'B' && u[1] == 'Z' && u[2] == 'h' && u[3] >= '1' && u[3] <= '9' &&
        (!memcmp(u + 4, "\x31\x41\x59\x26\x53\x59", 6) || !memcmp(u + 4, "\x17\x72\x45\x38\x50\x90", 6)))
        return "bzip2-compressed data";
    if (n >= 4 && !memcmp(u, "\x04\x22\x4D\x18", 4)) return "lz4-compressed data";
    *undo = "extract";
    if (n >= 4 && !memcmp(u, "PK\x03\x04", 4)) return "a zip archive";
    if (n >= 6 && !memcmp(u, "7z\xBC\xAF\x27\x1C", 6)) return "a 7-Zip archive";
    return NULL;
}

/* What foreign_table found: a file the Python package reads (pyarrow), vectors, or another kind. */
enum { TABLE_OTHER, TABLE_COLUMNAR, TABLE_VECTORS };

/* A zip archive whose first entry's name (local header: its length at 26, the name at 30) starts
 * with one of an Office document's parts. */
static int office_zip(const unsigned char *u, size_t n)
{
    if (n < 30 || memcmp(u, "PK\x03\x04", 4)) return 0;
    size_t len = (size_t)u[26] | (size_t)u[27] << 8;
    static const char *const parts[] = {"[Content_Types].xml", "docProps/", "xl/", "word/", "ppt/"};
    for (size_t i = 0; i < sizeof parts / sizeof *parts; i++) {
        size_t k = strlen(parts[i]);
        if (len >= k && n >= 30 + k && !memcmp(u + 30, parts[i], k)) return 1;
    }
    return 0;
}

/* A file of another kind than text, known by its first bytes: what it is, or NULL, and *kind. None
 * of these starts with bytes a UTF-8 text file starts with: a text whose first line is `PAR1...`
 * loads as text unless the next byte is binary too. */
/* u starts with the 4 bytes of magic and then a control byte no text has there (not a tab or a
 * line end): a header line `PAR1,...` is text. */
static int magic_then_binary(const unsigned char *u, size_t n, const char magic[4])
{
    return n >= 5 && !memcmp(u, magic, 4) && u[4] < 0x20 && u[4] != '\t' && u[4] != '\n' && u[4] != '\r';
}

static const char *foreign_table(const unsigned char *u, size_t n, int *kind)
{
    *kind = TABLE_COLUMNAR;
    /* Parquet: PAR1, then a column chunk's page header (thrift, a binary field header) */
    if (magic_then_binary(u, n, "PAR1")) return "a Parquet file";
    if (n >= 8 && !memcmp(u, "ARROW1\0\0", 8)) return "an Arrow (Feather) file";
    /* Arrow IPC stream: a continuation marker, then the metadata's length; Feather version 1 */
    if (n >= 8 && !memcmp(u, "\xFF\xFF\xFF\xFF", 4) && u[7] == 0) return "an Arrow IPC stream";
    if (magic_then_binary(u, n, "FEA1")) return "a Feather (version 1) file";
    *kind = TABLE_VECTORS;
    if (n >= 6 && !memcmp(u, "\x93NUMPY", 6)) return "a NumPy array (.npy)";
    *kind = TABLE_OTHER;
    if (office_zip(u, n)) return "an Office document (Excel .xlsx or similar: a zip archive)";
    if (n >= 16 && !memcmp(u, "SQLite format 3\0", 16)) return "an SQLite database";
    if (n >= 8 && !memcmp(u, "\x89HDF\r\n\x1A\n", 8)) return "an HDF5 file";
    if (n >= 8 && !memcmp(u, "\xD0\xCF\x11\xE0\xA1\xB1\x1A\xE1", 8)) return "an Office document (Excel 97-2003 or similar)";
    if (n >= 4 && !memcmp(u, "Obj\x01", 4)) return "an Avro file";
    if (n >= 2 && u[0] == 0x80 && u[1] >= 2 && u[1] <= 5) return "a Python pickle";
    return NULL;
}

/* UTF-16 or UTF-32 text, known by its byte-order mark: which ("UTF-16", "UTF-32") and *order its
 * byte order, or NULL. FF and FE are no bytes of UTF-8, so no UTF-8 text starts with one. */
static const char *foreign_encoding(const unsigned char *u, size_t n, const char **order)
{
    *order = "little-endian";
    if (n >= 4 && !memcmp(u, "\xFF\xFE\0\0", 4)) return "UTF-32";
    if (n >= 2 && !memcmp(u, "\xFF\xFE", 2)) return "UTF-16";
    *order = "big-endian";
    if (n >= 4 && !memcmp(u, "\0\0\xFE\xFF", 4)) return "UTF-32";
    if (n >= 2 && !memcmp(u, "\xFE\xFF", 2)) return "UTF-16";
    return NULL;
}

/* LA_EINPUT naming the encoding, the kind of file or the packing when the first bytes u[0 .. n) are
 * one foreign_encoding, foreign_table or foreign_packing knows. */
static la_status refuse_foreign(const char *path, const void *u, size_t n)
{
    const char *order, *enc = foreign_encoding(u, n, &order);
    if (enc)
        return la_error(LA_EINPUT,
                        "%s: %s text (%s, by its byte-order mark); leakaudit reads UTF-8: convert it first (for "
                        "example iconv -f %s -t UTF-8)",
                        path, enc, order, enc);
    int kind;
    const char *table = foreign_table(u, n, &kind);
    if (table && kind == TABLE_COLUMNAR)
        return la_error(LA_EINPUT,
                        "%s: %s; leakaudit reads JSON Lines, CSV and TSV: convert it first, or give it to the Python "
                        "package, which reads Parquet, Arrow and Feather files (leakaudit.audit(dev=..., test=...), "
                        "README: From Python)",
                        path, table);
    if (table && kind == TABLE_VECTORS)
        return la_error(LA_EINPUT,
                        "%s: %s, not rows; vectors for the rows of a partition go to --embeddings PART=FILE.npy",
                        path, table);
    if (table)
        return la_error(LA_EINPUT, "%s: %s; leakaudit reads JSON Lines, CSV and TSV: export the rows to one first",
                        path, table);
    const char *undo, *what = foreign_packing(u, n, &undo);
    if (!what) return LA_OK;
    return la_error(LA_EINPUT,
                    "%s: %s; leakaudit reads plain text, gzip and zstd: %s it first (to a file, or through a pipe "
                    "to standard input, --part NAME=-)",
                    path, what, undo);
}

/* The input whose bytes as stored are raw[0 .. n) (taken over), decompressed when they are gzip or
 * zstd; the fingerprint is set by the caller. */
static la_status from_stored(const char *path, const la_limits *lim, char *raw, size_t n, la_input *out)
{
    la_status s = refuse_foreign(path, raw, n);
    if (s != LA_OK) {
        free(raw);
        return s;
    }
    out->stored_len = n;
    const char *kind = la_input_compression_of(raw, n);
    if (kind && strcmp(kind, "gzip") == 0) {
        out->compression = kind;
        s = gunzip(path, lim, raw, n, &out->data, &out->len);
        free(raw);
        return s;
    }
    if (kind) {
        out->compression = kind;
        s = unzstd(path, lim, raw, n, &out->data, &out->len);
        free(raw);
        return s;
    }
    out->compression = "none";
    out->data = raw;
    out->len = n;
    return LA_OK;
}

la_status la_input_read(const char *path, const la_limits *lim, la_input *out)
{
    memset(out, 0, sizeof *out);
    FILE *f = strcmp(path, "-") == 0 ? stdin : fopen(path, "rb");
    if (!f) return la_error(LA_EIO, "%s: cannot open: %s", path, strerror(errno));
    char *raw = NULL;
    size_t n = 0;
    la_status s = slurp(f, strcmp(path, "-") == 0 ? "<stdin>" : path, lim, &raw, &n);
    if (f != stdin) fclose(f);
    if (s != LA_OK) return s;
    la_blake2b(out->blake2b, sizeof out->blake2b, (const unsigned char *)raw, n, NULL, 0);
    return from_stored(path, lim, raw, n, out);
}

void la_input_free(la_input *in)
{
    if (!in) return;
    free(in->data);
    in->data = NULL;
}

void la_input_format_ext(const char *path, char ext[16])
{
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    char tmp[256];
    snprintf(tmp, sizeof tmp, "%s", base);
    for (;;) {
        char *dot = strrchr(tmp, '.');
        if (!dot) {
            ext[0] = '\0';
            return;
        }
        if (strcasecmp(dot, ".gz") == 0 || strcasecmp(dot, ".zst") == 0 || strcasecmp(dot, ".zstd") == 0) {
            *dot = '\0';
            continue;
        }
        snprintf(ext, 16, "%s", dot + 1);
        for (char *c = ext; *c; c++)
            if (*c >= 'A' && *c <= 'Z') *c = (char)(*c - 'A' + 'a');
        return;
    }
}

/* Free the block reader's decoder and its input buffer (none for plain data). */
static void free_decoder(la_input_blocks *b)
{
    if (b->z && !strcmp(b->compression, "gzip")) {
        inflateEnd(b->z);
        free(b->z);
    } else if (b->z) {
        ZSTD_freeDStream(b->z);
    }
    b->z = NULL;
    free(b->in);
    b->in = NULL;
}

la_status la_input_blocks_open(const char *path, const la_limits *lim, la_input_blocks *b, int *ok)
{
    memset(b, 0, sizeof *b);
    *ok = 0;
    if (strcmp(path, "-") == 0) {
        /* nothing can be peeked at: read as plain; la_input_blocks_rest takes over otherwise */
        b->f = stdin;
        b->is_stdin = 1;
        b->path = "<stdin>";
        b->lim = lim;
        b->compression = "none";
        b->limit = byte_limit(lim, 0, 0);
        la_blake2b_init(&b->h, NULL, 0, 32);
        *ok = 1;
        return LA_OK;
    }
    FILE *f = fopen(path, "rb");
    if (!f) return LA_OK; /* the whole-file reader says why */
    struct stat st;
    unsigned char magic[64] = {0}; /* enough for an Office document's first zip entry */
    size_t nm = fstat(fileno(f), &st) == 0 && S_ISREG(st.st_mode) ? fread(magic, 1, sizeof magic, f) : 0;
    if (nm == 0 || fseek(f, 0, SEEK_SET) != 0) {
        fclose(f);
        return LA_OK;
    }
    la_status refused = refuse_foreign(path, magic, nm);
    if (refused != LA_OK) {
        fclose(f);
        return refused;
    }
    const char *kind = la_input_compression_of((const char *)magic, nm);
    b->compression = kind ? kind : "none";
    b->limit = byte_limit(lim, kind ? (size_t)st.st_size : 0, kind != NULL);
    if (!kind && (uint64_t)st.st_size > b->limit) {
        fclose(f);
        return over_limit(path, lim, 0, 0);
    }
    if (kind) {
        b->in = malloc(COMPRESSED_BLOCK);
        if (b->in && !strcmp(kind, "gzip")) {
            z_stream *z = calloc(1, sizeof *z);
            if (z && inflateInit2(z, 15 + 32) != Z_OK) {
                free(z);
                z = NULL;
            }
            b->z = z;
        } else if (b->in) {
            b->z = ZSTD_createDStream();
            b->zlast = 1;
        }
        if (!b->in || !b->z) {
            free_decoder(b);
            fclose(f);
            return la_error(LA_ENOMEM, "%s: cannot start the %s decoder", path, kind);
        }
    }
    b->f = f;
    b->path = path;
    b->lim = lim;
    b->size = (uint64_t)st.st_size;
    la_blake2b_init(&b->h, NULL, 0, 32);
    *ok = 1;
    return LA_OK;
}

/* Up to cap bytes from the file as stored into dst, fingerprinted; *got 0 at its end. */
static la_status read_stored(la_input_blocks *b, char *dst, size_t cap, size_t *got)
{
    size_t r = 0;
    while (r < cap) {
        size_t k = fread(dst + r, 1, cap - r, b->f);
        if (k == 0) break;
        r += k;
    }
    if (ferror(b->f)) return la_error(LA_EIO, "%s: read error: %s", b->path, strerror(errno));
    if (!b->defer) {
        la_blake2b_update(&b->h, (const unsigned char *)dst, r);
        b->hashed += r;
    }
    b->stored += r;
    *got = r;
    return LA_OK;
}

/* More compressed bytes into b->in once it is used up; sets in_eof at the end of the file. */
static la_status refill(la_input_blocks *b)
{
    if (b->at < b->len || b->in_eof) return LA_OK;
    size_t got = 0;
    LA_TRY(read_stored(b, (char *)b->in, COMPRESSED_BLOCK, &got));
    b->at = 0;
    b->len = got;
    b->in_eof = got == 0;
    return LA_OK;
}

/* Decode into dst[*r .. cap) from what b->in holds; at the end of the data sets b->done. The
 * messages are those of gunzip and unzstd. */
static la_status decode_some(la_input_blocks *b, char *dst, size_t cap, size_t *r)
{
    size_t room = cap - *r;
    if (!strcmp(b->compression, "gzip")) {
        z_stream *z = b->z;
        size_t avail = b->len - b->at;
        z->next_in = b->in + b->at;
        z->avail_in = (uInt)avail; /* a block is far below 4 GiB */
        z->next_out = (Bytef *)dst + *r;
        z->avail_out = (uInt)(room > 0xFFFFFFFFu ? 0xFFFFFFFFu : room);
        uInt before = z->avail_out;
        int rc = inflate(z, Z_NO_FLUSH);
        *r += before - z->avail_out;
        b->at += avail - z->avail_in;
        if (rc == Z_STREAM_END) {
            /* concatenated gzip members: another one starts where this one ends, if anything is left */
            LA_TRY(refill(b));
            if (b->at == b->len && b->in_eof) b->done = 1;
            else inflateReset(z);
            return LA_OK;
        }
        /* no progress with the file at its end is a member cut short */
        int stuck = rc == Z_BUF_ERROR && b->at == b->len && b->in_eof;
        if ((rc != Z_OK && rc != Z_BUF_ERROR) || stuck)
            return la_error(LA_EINPUT, "%s: corrupt or truncated gzip data", b->path);
        return LA_OK;
    }
    if (b->at == b->len && b->in_eof && b->zlast == 0) {
        b->done = 1; /* the file ended where a frame did */
        return LA_OK;
    }
    ZSTD_inBuffer in = {b->in, b->len, b->at};
    ZSTD_outBuffer o = {dst + *r, room, 0};
    size_t last = ZSTD_decompressStream(b->z, &o, &in);
    *r += o.pos;
    if (ZSTD_isError(last)) return la_error(LA_EINPUT, "%s: corrupt zstd data: %s", b->path, ZSTD_getErrorName(last));
    LA_TRY(zstd_step(&b->zf, b->path, b->in + b->at, in.pos - b->at, o.pos, last));
    b->at = in.pos;
    b->zlast = last;
    if (b->at == b->len && b->in_eof) {
        if (last != 0 && o.pos == 0) return la_error(LA_EINPUT, "%s: truncated zstd data", b->path);
        if (last == 0) b->done = 1;
    }
    return LA_OK;
}

void la_input_blocks_defer_hash(la_input_blocks *b)
{
    if (!b->z && !b->is_stdin) b->defer = 1;
}

la_status la_input_blocks_absorb(void *ctx, uint64_t off, const char *p, size_t n)
{
    la_input_blocks *b = ctx;
    if (!b->defer) return LA_OK; /* the reads fingerprint */
    if (off > b->hashed) return la_error(LA_EINTERNAL, "%s: fingerprint: bytes from %llu given after %llu", b->path,
                                         (unsigned long long)off, (unsigned long long)b->hashed);
    uint64_t skip = b->hashed - off;
    if (skip >= n) return LA_OK;
    la_blake2b_update(&b->h, (const unsigned char *)p + skip, n - (size_t)skip);
    b->hashed += n - skip;
    return LA_OK;
}

la_status la_input_blocks_read(void *ctx, char *dst, size_t cap, size_t *got)
{
    la_input_blocks *b = ctx;
    size_t r = 0;
    if (!b->z) {
        /* the bytes the file still holds, as it was opened: their pages faulted in with one call
         * rather than one fault a page as the read reaches them */
        if (!b->is_stdin && b->size > b->stored) la_populate(dst, b->size - b->stored < cap ? (size_t)(b->size - b->stored) : cap);
        LA_TRY(read_stored(b, dst, cap, &r));
    } else {
        while (r < cap && !b->done) {
            LA_TRY(refill(b));
            LA_TRY(decode_some(b, dst, cap, &r));
            if (b->n + r > b->limit) return over_limit(b->path, b->lim, (size_t)b->size, 1);
        }
    }
    b->n += r;
    if (b->n > b->limit) return over_limit(b->path, b->lim, (size_t)(b->z ? b->size : b->n), b->z != NULL);
    *got = r;
    return LA_OK;
}

la_status la_input_blocks_rest(la_input_blocks *b, char *head, size_t n, la_input *out)
{
    memset(out, 0, sizeof *out);
    size_t cap = n + 1, len = n;
    la_status st = LA_OK;
    for (;;) {
        if (len > b->limit) {
            st = over_limit(b->path, b->lim, len, 0);
            break;
        }
        if (grow(&head, &cap, len, b->limit) != 0) {
            st = la_error(LA_ENOMEM, "%s: out of memory reading the file", b->path);
            break;
        }
        size_t got = 0;
        st = read_stored(b, head + len, cap - len - 1, &got);
        if (st != LA_OK || got == 0) break;
        len += got;
    }
    la_input info;
    la_input_blocks_close(b, &info);
    if (st != LA_OK) {
        free(head);
        return st;
    }
    head[len] = '\0';
    memcpy(out->blake2b, info.blake2b, sizeof out->blake2b);
    return from_stored("-", b->lim, head, len, out);
}

void la_input_blocks_close(la_input_blocks *b, la_input *info)
{
    memset(info, 0, sizeof *info);
    if (!b->f) return;
    if (!b->is_stdin) fclose(b->f);
    b->f = NULL;
    free_decoder(b);
    la_blake2b_final(&b->h, info->blake2b, sizeof info->blake2b);
    info->stored_len = b->stored;
    info->compression = b->compression;
}

/* ---- files mapped into memory ----------------------------------------------------------------- */

/* The files mapped now, for the SIGBUS handler: a page of a mapped file that is cut short while it
 * is mapped is gone, and touching it raises SIGBUS at its address. Slots are claimed and freed
 * under map_lock; the handler only reads them. */
enum { MAP_SLOTS = 16, MAP_PATH = 1024 };
typedef struct map_slot {
    _Atomic(const char *) at; /* NULL: free */
    size_t len;
    char path[MAP_PATH];
} map_slot;
static map_slot g_maps[MAP_SLOTS];
static pthread_mutex_t map_lock = PTHREAD_MUTEX_INITIALIZER;
/* What the SIGBUS handler calls after its message (la_input_on_fault), or NULL */
static void (*_Atomic g_fault_then)(int sig);
/* Files mapped now (under map_lock); the SIGBUS action before the first of them, put back when the
 * last one goes: a process that embeds the library (Python) keeps its own handler otherwise. */
static int g_nmaps;
static struct sigaction g_old_bus;

static size_t page_size(void)
{
    long p = sysconf(_SC_PAGESIZE);
    return p > 0 ? (size_t)p : 4096;
}

static void put(const char *s)
{
    ssize_t r = write(2, s, strlen(s));
    (void)r;
}

int la_input_fault_note(const void *addr)
{
    for (int i = 0; i < MAP_SLOTS; i++) {
        const char *at = atomic_load(&g_maps[i].at);
        if (at && (const char *)addr >= at && (const char *)addr < at + g_maps[i].len) {
            put("leakaudit: ");
            put(g_maps[i].path);
            put(": the file was cut short while the audit read it; nothing was written; run the audit again\n");
            return 1;
        }
    }
    return 0;
}

static void on_bus(int sig, siginfo_t *info, void *uctx)
{
    (void)uctx;
    if (!la_input_fault_note(info->si_addr)) {
        /* not a mapped input's page: the handler before this one takes it, as the faulting access
         * runs again (a signal sent by a process, which has no access to run again, is raised) */
        sigaction(SIGBUS, &g_old_bus, NULL);
        if (info->si_code <= 0) raise(sig);
        return;
    }
    void (*then)(int) = atomic_load(&g_fault_then);
    if (then) then(sig);
    signal(sig, SIG_DFL);
    raise(sig);
}

void la_input_on_fault(void (*then)(int sig)) { atomic_store(&g_fault_then, then); }

/* The handler goes in with the first file mapped and out with the last (under map_lock). */
static void bus_install(void)
{
    if (g_nmaps++) return;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_bus;
    sa.sa_flags = SA_SIGINFO;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGBUS, &sa, &g_old_bus);
}

static void bus_uninstall(void)
{
    if (--g_nmaps == 0) sigaction(SIGBUS, &g_old_bus, NULL);
}

const char *la_input_map(int fd, size_t len, const char *path, int zero_after)
{
    const char *e = getenv("LEAKAUDIT_READ_MAP");
    if (len == 0 || len > SIZE_MAX / 2 || (e && !strcmp(e, "0"))) return NULL;
    pthread_mutex_lock(&map_lock);
    int slot = -1;
    for (int i = 0; i < MAP_SLOTS && slot < 0; i++)
        if (!atomic_load(&g_maps[i].at)) slot = i;
    if (slot < 0) {
        pthread_mutex_unlock(&map_lock);
        return NULL; /* read instead */
    }
    size_t page = page_size(), whole = (len + page - 1) / page * page;
    char *p;
    if (zero_after) {
        /* a page more than the file, anonymous, and the file over it: the byte after the file's
         * last one reads as 0 whether or not the file ends where a page does */
        p = mmap(NULL, whole + page, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (p != MAP_FAILED && mmap(p, len, PROT_READ, MAP_PRIVATE | MAP_FIXED, fd, 0) == MAP_FAILED) {
            munmap(p, whole + page);
            p = MAP_FAILED;
        }
    } else {
        p = mmap(NULL, len, PROT_READ, MAP_PRIVATE, fd, 0);
    }
    if (p == MAP_FAILED) {
        pthread_mutex_unlock(&map_lock);
        return NULL;
    }
    g_maps[slot].len = zero_after ? whole + page : len;
    snprintf(g_maps[slot].path, sizeof g_maps[slot].path, "%s", path);
    atomic_store(&g_maps[slot].at, p);
    bus_install();
    pthread_mutex_unlock(&map_lock);
    return p;
}

void la_input_unmap(const char *data)
{
    if (!data) return;
    pthread_mutex_lock(&map_lock);
    for (int i = 0; i < MAP_SLOTS; i++)
        if (atomic_load(&g_maps[i].at) == data) {
            munmap((void *)(uintptr_t)data, g_maps[i].len);
            atomic_store(&g_maps[i].at, NULL);
            bus_uninstall();
        }
    pthread_mutex_unlock(&map_lock);
}

void la_input_release(const char *p, size_t n)
{
    size_t page = page_size();
    uintptr_t a = ((uintptr_t)p + page - 1) & ~(uintptr_t)(page - 1), e = ((uintptr_t)p + n) & ~(uintptr_t)(page - 1);
    if (e > a) (void)madvise((void *)a, e - a, MADV_DONTNEED);
}

la_status la_input_blocks_map(la_input_blocks *b, const char **data, size_t *len)
{
    *data = NULL;
    *len = 0;
    if (!b->f || b->is_stdin || b->z || b->stored || b->size == 0 || b->size > SIZE_MAX / 2) return LA_OK;
    const char *p = la_input_map(fileno(b->f), (size_t)b->size, b->path, 1);
    if (!p) return LA_OK;
    (void)madvise((void *)(uintptr_t)p, (size_t)b->size, MADV_SEQUENTIAL);
    b->stored = b->n = b->size;
    *data = p;
    *len = (size_t)b->size;
    return LA_OK;
}
