/* normalize.c - text normalization and exact-copy hashing (see normalize.h). */
#include "normalize.h"
#include "la_alloc.h"
#include "la_arena.h"
#include "la_scan.h"
#include "parallel.h"

#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <utf8proc.h>
#define XXH_INLINE_ALL
#include <xxhash.h>

la_status la_norm_mode_parse(const char *s, la_norm_mode *out)
{
    if (!strcmp(s, "nfkc")) *out = LA_NORM_NFKC;
    else if (!strcmp(s, "space")) *out = LA_NORM_SPACE;
    else if (!strcmp(s, "none")) *out = LA_NORM_NONE;
    else return la_error(LA_EINVAL, "--normalize: unknown mode '%s' (expected nfkc, space or none)", s);
    return LA_OK;
}

const char *la_norm_mode_name(la_norm_mode m)
{
    return m == LA_NORM_NFKC ? "nfkc" : m == LA_NORM_SPACE ? "space" : "none";
}

static int is_space_cp(utf8proc_int32_t c)
{
    if (c == ' ' || (c >= 9 && c <= 13) || c == 0x85) return 1;
    if (c < 0x80) return 0;
    utf8proc_category_t cat = utf8proc_category(c);
    return cat == UTF8PROC_CATEGORY_ZS || cat == UTF8PROC_CATEGORY_ZL || cat == UTF8PROC_CATEGORY_ZP;
}

#define NFKC_OPTIONS (UTF8PROC_STABLE | UTF8PROC_COMPOSE | UTF8PROC_COMPAT | UTF8PROC_CASEFOLD)

/* ---- the reference: utf8proc over the whole text, then whitespace collapsing ---- */

/* Collapse whitespace runs in place; returns the new length. */
static size_t collapse_space(char *s, size_t n)
{
    size_t w = 0, i = 0;
    int pending = 0;
    while (i < n) {
        utf8proc_int32_t c;
        utf8proc_ssize_t adv = utf8proc_iterate((const utf8proc_uint8_t *)s + i, (utf8proc_ssize_t)(n - i), &c);
        if (adv <= 0) adv = 1, c = -1;
        if (c >= 0 && is_space_cp(c)) {
            pending = w > 0;
        } else {
            if (pending) s[w++] = ' ';
            pending = 0;
            memmove(s + w, s + i, (size_t)adv);
            w += (size_t)adv;
        }
        i += (size_t)adv;
    }
    s[w] = '\0';
    return w;
}

la_status la_normalize_ref(const char *s, size_t n, la_norm_mode mode, char **out, size_t *outlen)
{
    char *r;
    size_t len;
    if (mode == LA_NORM_NFKC) {
        utf8proc_uint8_t *dst = NULL;
        utf8proc_ssize_t m = utf8proc_map((const utf8proc_uint8_t *)s, (utf8proc_ssize_t)n, &dst, NFKC_OPTIONS);
        if (m < 0) return la_error(LA_EINPUT, "text: cannot normalize: %s", utf8proc_errmsg(m));
        r = (char *)dst;
        len = (size_t)m;
    } else {
        r = malloc(n + 1);
        if (!r) return la_error(LA_ENOMEM, "out of memory normalizing text");
        memcpy(r, s, n);
        r[n] = '\0';
        len = n;
    }
    if (mode != LA_NORM_NONE) len = collapse_space(r, len);
    *out = r;
    *outlen = len;
    return LA_OK;
}

/* ---- the fast path ----
 * NFKC + case folding is a function of the text that splits at every ASCII byte but one kind: an
 * ASCII character is a starter (combining class 0) that is never the second element of a canonical
 * composition, so nothing before it can reorder or compose across it, and its own image is itself
 * (A-Z folded to a-z). What can change it is what follows: a combining mark after "e" or "<" composes
 * with it. So a run of ASCII bytes is folded here byte by byte, except its last byte when non-ASCII
 * bytes follow, which goes with them to utf8proc. Whitespace collapsing is a state machine over the
 * normalized text that both paths feed, so it carries across the pieces. */

typedef struct norm_out {
    char *p;
    size_t w, cap;
    int pending; /* a whitespace run seen after some output, not yet written */
} norm_out;

/* Room for `extra` more bytes plus a pending space and the NUL. */
static la_status out_reserve(norm_out *o, size_t extra)
{
    if (extra > SIZE_MAX - o->w - 2) return la_error(LA_ENOMEM, "text too long to normalize");
    size_t need = o->w + extra + 2;
    if (need <= o->cap) return LA_OK;
    size_t cap = o->cap > SIZE_MAX / 2 ? SIZE_MAX : o->cap * 2;
    if (cap < need) cap = need;
    char *p = realloc(o->p, cap);
    if (!p) return la_error(LA_ENOMEM, "out of memory normalizing text");
    o->p = p;
    o->cap = cap;
    return LA_OK;
}

static inline int ascii_space(unsigned char c)
{
    return c == ' ' || (unsigned char)(c - 9) < 5;
}

/* Append ASCII bytes s[i..end), A-Z folded to a-z when fold is set, collapsing whitespace: into
 * p from *w, *pending the whitespace state (norm_out's fields, held by the caller in locals). */
static inline void emit_ascii_bytes(char *p, size_t *w, int *pending, const unsigned char *s, size_t i, size_t end,
                                    int fold)
{
    for (; i < end; i++) {
        unsigned char c = s[i];
        if (ascii_space(c)) {
            *pending = *w > 0;
            continue;
        }
        if (*pending) p[(*w)++] = ' ';
        *pending = 0;
        p[(*w)++] = (char)(fold && (unsigned char)(c - 'A') < 26 ? c + 32 : c);
    }
}

#define ONES 0x0101010101010101u
#define HIGH 0x8080808080808080u

/* Append ASCII bytes s[i..end) (no byte >= 0x80), A-Z folded to a-z when fold is set, collapsing
 * whitespace, into p from *wp (*pendingp the whitespace state); room reserved. Eight bytes at a time where they hold no control byte and no two spaces in a row,
 * which is most of running text: then the output is the input (folded) except for a space at either
 * end, which the pending state settles. Each test is exact per byte because no byte has its high bit
 * set and no sum below carries out of its byte. The output's length and state stay in locals: kept
 * in *o, each store of text (through a char pointer, which may alias anything) made the compiler
 * store and load them again at every step. */
static inline void emit_ascii_chunks(char *p, size_t *wp, int *pendingp, const unsigned char *s, size_t i, size_t end,
                                     int fold)
{
    size_t w = *wp;
    int pending = *pendingp;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    for (; end - i >= 8; i += 8) {
        uint64_t x;
        memcpy(&x, s + i, 8);
        uint64_t y = x ^ (0x20 * ONES);
        uint64_t space = ~(((y & ~HIGH) + ~HIGH) | y | ~HIGH); /* HIGH where the byte is ' ' */
        uint64_t control = ~(x + 0x60 * ONES) & HIGH;          /* where it is below 0x20 */
        if (control || (space & (space << 8)) || ((space & 0x80) && (pending || w == 0))) {
            emit_ascii_bytes(p, &w, &pending, s, i, i + 8, fold);
            continue;
        }
        if (fold) x |= ((x + 0x3f * ONES) & ~(x + 0x25 * ONES) & HIGH) >> 2; /* 'A'..'Z' += 32 */
        p[w] = ' ';
        w += (size_t)pending; /* the pending space, written whatever and kept when it was pending */
        memcpy(p + w, &x, 8);
        w += 8;
        pending = 0;
        if (space >> 63) w--, pending = 1; /* a trailing space waits for what follows */
    }
#endif
    emit_ascii_bytes(p, &w, &pending, s, i, end, fold);
    *wp = w;
    *pendingp = pending;
}

static void emit_ascii_swar(norm_out *o, const unsigned char *s, size_t n, int fold)
{
    emit_ascii_chunks(o->p, &o->w, &o->pending, s, 0, n, fold);
}

/* The end of the run of ASCII bytes (below 0x80) of s[0 .. n) from i (no scan called when the run
 * is empty, as between the code points of CJK text). */
static size_t ascii_end(const unsigned char *s, size_t i, size_t n)
{
    return i < n && s[i] < 0x80 ? i + la_scan_ascii(s + i, n - i) : i;
}

#if defined(__GNUC__) && defined(__x86_64__)
#include <immintrin.h>
#define NORM_AVX512 1
#define NORM_AVX512_TARGET __attribute__((target("avx512f,avx512bw")))

/* emit_ascii_swar's rule 64 bytes at a time: a block with no control byte, no two spaces in a row
 * and no leading space to collapse with a pending one is the input, A-Z folded, stored whole (and a
 * trailing space left pending); any other block, and the rest of the text, 8 bytes at a time. */
NORM_AVX512_TARGET static void emit_ascii_avx512(norm_out *o, const unsigned char *s, size_t n, int fold)
{
    size_t i = 0, w = o->w;
    int pending = o->pending;
    char *p = o->p;
    /* 0x20: below it a control byte, and what A-Z add to become a-z */
    const __m512i sp = _mm512_set1_epi8(' '), ctl = _mm512_set1_epi8(0x20), big_a = _mm512_set1_epi8('A');
    const __m512i letters = _mm512_set1_epi8(26);
    for (; n - i >= 64; i += 64) {
        __m512i x = _mm512_loadu_si512((const void *)(s + i));
        uint64_t space = (uint64_t)_mm512_cmpeq_epi8_mask(x, sp);
        uint64_t control = (uint64_t)_mm512_cmplt_epu8_mask(x, ctl);
        if (control || (space & (space << 1)) || ((space & 1) && (pending || w == 0))) {
            emit_ascii_chunks(p, &w, &pending, s, i, i + 64, fold); /* 8 bytes at a time, as without */
            continue;
        }
        if (fold) {
            __mmask64 upper = _mm512_cmplt_epu8_mask(_mm512_sub_epi8(x, big_a), letters);
            x = _mm512_mask_add_epi8(x, upper, x, ctl);
        }
        p[w] = ' ';
        w += (size_t)pending;
        _mm512_storeu_si512((void *)(p + w), x);
        w += 64;
        pending = 0;
        if (space >> 63) w--, pending = 1;
    }
    emit_ascii_chunks(p, &w, &pending, s, i, n, fold);
    o->w = w;
    o->pending = pending;
}

#endif

static void emit_ascii(norm_out *o, const unsigned char *s, size_t n, int fold)
{
#ifdef NORM_AVX512
    /* the 64-byte loops where the readers' scans take theirs (the CPU has AVX-512 F + BW) */
    if (n >= 64 && la_scan_wide()) {
        emit_ascii_avx512(o, s, n, fold);
        return;
    }
#endif
    emit_ascii_swar(o, s, n, fold);
}

/* Append UTF-8 (bytes that do not decode are kept and count as non-space), collapsing Unicode
 * whitespace: collapse_space's rules with a shortcut for ASCII bytes. Room reserved. */
static void emit_utf8(norm_out *o, const unsigned char *s, size_t n)
{
    size_t i = 0;
    while (i < n) {
        size_t j = ascii_end(s, i, n);
        emit_ascii(o, s + i, j - i, 0);
        if (j == n) break;
        utf8proc_int32_t c;
        utf8proc_ssize_t adv = utf8proc_iterate(s + j, (utf8proc_ssize_t)(n - j), &c);
        if (adv <= 0) adv = 1, c = -1;
        if (c >= 0 && is_space_cp(c)) {
            o->pending = o->w > 0;
        } else {
            if (o->pending) o->p[o->w++] = ' ';
            o->pending = 0;
            memcpy(o->p + o->w, s + j, (size_t)adv);
            o->w += (size_t)adv;
        }
        i = j + (size_t)adv;
    }
}

/* NFKC + case fold n bytes with utf8proc into scratch (grown as needed) and append the result. */
static la_status emit_nfkc(norm_out *o, const unsigned char *s, size_t n, utf8proc_int32_t **scratch,
                           size_t *scap, utf8proc_int32_t *stack)
{
    utf8proc_ssize_t m = utf8proc_decompose(s, (utf8proc_ssize_t)n, *scratch, (utf8proc_ssize_t)*scap, NFKC_OPTIONS);
    if (m >= 0 && (size_t)m >= *scap) { /* reencode needs one more byte than the code points take */
        size_t cap = (size_t)m + 1;
        if (cap > SIZE_MAX / sizeof **scratch) return la_error(LA_ENOMEM, "text too long to normalize");
        utf8proc_int32_t *p = malloc(cap * sizeof *p);
        if (!p) return la_error(LA_ENOMEM, "out of memory normalizing text");
        if (*scratch != stack) free(*scratch);
        *scratch = p;
        *scap = cap;
        m = utf8proc_decompose(s, (utf8proc_ssize_t)n, *scratch, (utf8proc_ssize_t)*scap, NFKC_OPTIONS);
    }
    if (m >= 0) m = utf8proc_reencode(*scratch, m, NFKC_OPTIONS);
    if (m < 0) return la_error(LA_EINPUT, "text: cannot normalize: %s", utf8proc_errmsg(m));
    LA_TRY(out_reserve(o, (size_t)m));
    emit_utf8(o, (const unsigned char *)*scratch, (size_t)m);
    return LA_OK;
}

static la_status normalize_nfkc(norm_out *o, const unsigned char *s, size_t n)
{
    utf8proc_int32_t stack[256], *scratch = stack;
    size_t scap = sizeof stack / sizeof *stack;
    la_status st = LA_OK;
    size_t i = 0;
    while (i < n && st == LA_OK) {
        size_t j = ascii_end(s, i, n);
        size_t uni = j < n && j > i ? j - 1 : j; /* the byte before non-ASCII goes with it */
        st = out_reserve(o, uni - i);
        if (st != LA_OK) break;
        emit_ascii(o, s + i, uni - i, 1);
        if (j == n) break;
        size_t k = j + 1;
        while (k < n && s[k] >= 0x80) k++;
        st = emit_nfkc(o, s + uni, k - uni, &scratch, &scap, stack);
        i = k;
    }
    if (scratch != stack) free(scratch);
    return st;
}

la_status la_normalize_into(const char *s, size_t n, la_norm_mode mode, char **buf, size_t *cap, size_t *outlen)
{
    norm_out o = {*buf, 0, *buf ? *cap : 0, 0};
    la_status st = out_reserve(&o, n);
    if (st == LA_OK) {
        const unsigned char *u = (const unsigned char *)s;
        if (mode == LA_NORM_NFKC) st = normalize_nfkc(&o, u, n);
        else if (mode == LA_NORM_SPACE) emit_utf8(&o, u, n);
        else memcpy(o.p, s, n), o.w = n;
    }
    *buf = o.p; /* grown or not, the caller's to reuse or free */
    *cap = o.cap;
    if (st != LA_OK) return st;
    o.p[o.w] = '\0';
    *outlen = o.w;
    return LA_OK;
}

la_status la_normalize(const char *s, size_t n, la_norm_mode mode, char **out, size_t *outlen)
{
    char *buf = NULL;
    size_t cap = 0;
    la_status st = la_normalize_into(s, n, mode, &buf, &cap, outlen);
    if (st != LA_OK) {
        free(buf);
        return st;
    }
    *out = buf;
    return LA_OK;
}

void la_text_hash128(const char *s, size_t n, uint64_t out[2])
{
    XXH128_hash_t h = XXH3_128bits(s, n);
    out[0] = h.low64;
    out[1] = h.high64;
}

/* Each worker normalizes into a scratch buffer it reuses and copies the result into an arena of its
 * own, which the table adopts once every worker is done: no malloc per row, and no copying left
 * for the calling thread. */
typedef struct norm_worker {
    la_arena arena;
    char *scratch;
    size_t cap;
    char err[256];
    char pad[64]; /* the next worker's fields start a cache line further: no line is written by two */
} norm_worker;

typedef struct norm_job {
    la_row *rows;
    la_norm_mode mode;
    norm_worker *workers;
} norm_job;

static la_status norm_rows(void *ctx, int worker, size_t begin, size_t end)
{
    norm_job *j = ctx;
    norm_worker *w = &j->workers[worker];
    for (size_t i = begin; i < end; i++) {
        la_row *r = &j->rows[i];
        if (!r->text) continue;
        size_t len, tlen = strlen(r->text);
        la_status s = la_normalize_into(r->text, tlen, j->mode, &w->scratch, &w->cap, &len);
        /* text that normalization leaves as it is (already folded, or --normalize none) is not
         * stored twice: norm is the text itself */
        if (s == LA_OK && len == tlen && !memcmp(w->scratch, r->text, len)) r->norm = r->text;
        else if (s == LA_OK) s = la_arena_strdup(&w->arena, w->scratch, len, &r->norm);
        if (s != LA_OK) {
            /* the message is this thread's; the caller reports it from its own */
            snprintf(w->err, sizeof w->err, "%s", la_last_error());
            return s;
        }
        r->norm_len = len;
        la_text_hash128(r->norm, len, r->hash);
    }
    return LA_OK;
}

la_status la_normalize_table(la_table *t, la_norm_mode mode, int threads)
{
    size_t n = la_table_nrows(t);
    int nt = la_parallel_threads(threads);
    norm_worker *workers = la_calloc_n((size_t)nt, sizeof *workers);
    if (!workers) return la_error(LA_ENOMEM, "out of memory normalizing %zu rows", n);
    for (int k = 0; k < nt; k++) la_table_arena(t, &workers[k].arena, 0);
    norm_job job = {la_table_rows(t), mode, workers};
    la_status st = la_parallel_for(nt, n, 256, norm_rows, &job);
    for (int k = 0; k < nt; k++) {
        if (st != LA_OK && workers[k].err[0] && !workers[0].err[0]) memcpy(workers[0].err, workers[k].err, sizeof workers[k].err);
        la_table_adopt(t, &workers[k].arena); /* rows may point into it even when another worker failed */
        free(workers[k].scratch);
    }
    if (st != LA_OK) st = la_error(st, "%s", workers[0].err[0] ? workers[0].err : "normalization failed");
    free(workers);
    return st;
}
