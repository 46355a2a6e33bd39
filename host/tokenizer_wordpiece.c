/*
 * tokenizer_wordpiece.c - BERT basic tokenizer and WordPiece (see tokenizer_wordpiece.h). The
 * vocabulary is an open-addressing hash table of byte strings; Unicode properties come from
 * utf8proc.
 */
#include "tokenizer_wordpiece.h"

#include "input.h"

#include "token_ids.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <utf8proc.h>
#include <xxhash.h>

#define WP_MAX_WORD_CHARS 100

struct la_wordpiece {
    char **tok;        /* id -> token */
    size_t ntok;
    int32_t *slot;     /* hash slots: id or -1 */
    size_t nslot;      /* power of two */
    char *storage;
    int lowercase, strip_accents;
    int32_t unk;
};

static uint64_t hash_bytes(const char *s, size_t n) { return XXH3_64bits(s, n); }

static int32_t lookup(const la_wordpiece *w, const char *s, size_t n)
{
    size_t m = w->nslot - 1;
    for (size_t h = (size_t)hash_bytes(s, n) & m;; h = (h + 1) & m) {
        int32_t id = w->slot[h];
        if (id < 0) return -1;
        if (strlen(w->tok[id]) == n && !memcmp(w->tok[id], s, n)) return id;
    }
}

int32_t la_wordpiece_id(const la_wordpiece *w, const char *token) { return lookup(w, token, strlen(token)); }
const char *la_wordpiece_token(const la_wordpiece *w, int32_t id)
{
    return id >= 0 && (size_t)id < w->ntok ? w->tok[id] : NULL;
}
size_t la_wordpiece_size(const la_wordpiece *w) { return w->ntok; }

void la_wordpiece_free(la_wordpiece *w)
{
    if (!w) return;
    free(w->tok);
    free(w->slot);
    free(w->storage);
    free(w);
}

la_status la_wordpiece_new(const char *vocab_path, int lowercase, int strip_accents, la_wordpiece **out)
{
    *out = NULL;
    la_input in;
    LA_TRY(la_input_read(vocab_path, NULL, &in));
    la_wordpiece *w = calloc(1, sizeof *w);
    if (!w) {
        la_input_free(&in);
        return la_error(LA_ENOMEM, "out of memory");
    }
    w->storage = in.data; /* keep the bytes; lines become NUL-terminated tokens in place */
    size_t len = in.len;
    in.data = NULL;
    la_input_free(&in);
    w->lowercase = lowercase;
    w->strip_accents = strip_accents < 0 ? lowercase : strip_accents;
    size_t lines = 0;
    for (size_t i = 0; i < len; i++) lines += w->storage[i] == '\n';
    lines += len && w->storage[len - 1] != '\n';
    w->tok = calloc(lines + 1, sizeof *w->tok);
    w->nslot = 16;
    while (w->nslot < 2 * lines + 2) w->nslot <<= 1;
    w->slot = malloc(w->nslot * sizeof *w->slot);
    if (!w->tok || !w->slot) {
        la_wordpiece_free(w);
        return la_error(LA_ENOMEM, "out of memory");
    }
    memset(w->slot, 0xff, w->nslot * sizeof *w->slot);
    char *p = w->storage, *end = w->storage + len;
    while (p < end) {
        char *nl = memchr(p, '\n', (size_t)(end - p));
        char *e = nl ? nl : end;
        if (e > p && e[-1] == '\r') e[-1] = 0;
        *e = 0; /* the NUL the reader appended covers the last line */
        size_t n = strlen(p);
        if (n == 0) {
            la_status s = la_error(LA_EINPUT, "%s:%zu: empty token (a vocabulary has one token per line)", vocab_path,
                                   w->ntok + 1);
            la_wordpiece_free(w);
            return s;
        }
        size_t m = w->nslot - 1, h = (size_t)hash_bytes(p, n) & m;
        while (w->slot[h] >= 0 && strcmp(w->tok[w->slot[h]], p)) h = (h + 1) & m;
        w->tok[w->ntok] = p;
        if (w->slot[h] < 0) w->slot[h] = (int32_t)w->ntok; /* a duplicate keeps its first id */
        w->ntok++;
        p = e + 1;
    }
    static const char *need[] = {"[UNK]", "[CLS]", "[SEP]"};
    for (int k = 0; k < 3; k++)
        if (la_wordpiece_id(w, need[k]) < 0) {
            la_status s = la_error(LA_EINPUT, "%s: no '%s' token in the vocabulary (%zu tokens)", vocab_path, need[k],
                                   w->ntok);
            la_wordpiece_free(w);
            return s;
        }
    w->unk = la_wordpiece_id(w, "[UNK]");
    *out = w;
    return LA_OK;
}

/* ---- the basic tokenizer ---- */

static int is_ws(int32_t c)
{
    switch (c) {
    case '\t': case '\n': case '\r': case ' ': case 0x0b: case 0x0c: case 0x85: case 0xa0: case 0x1680:
    case 0x2028: case 0x2029: case 0x202f: case 0x205f: case 0x3000:
        return 1;
    default:
        return c >= 0x2000 && c <= 0x200a;
    }
}

static int is_control(int32_t c)
{
    if (c == '\t' || c == '\n' || c == '\r') return 0;
    utf8proc_category_t k = utf8proc_category(c);
    return k == UTF8PROC_CATEGORY_CC || k == UTF8PROC_CATEGORY_CF || k == UTF8PROC_CATEGORY_CN ||
           k == UTF8PROC_CATEGORY_CO || k == UTF8PROC_CATEGORY_CS;
}

static int is_punct(int32_t c)
{
    if ((c >= 33 && c <= 47) || (c >= 58 && c <= 64) || (c >= 91 && c <= 96) || (c >= 123 && c <= 126)) return 1;
    utf8proc_category_t k = utf8proc_category(c);
    return k >= UTF8PROC_CATEGORY_PC && k <= UTF8PROC_CATEGORY_PO;
}

static int is_cjk(int32_t c)
{
    return (c >= 0x4E00 && c <= 0x9FFF) || (c >= 0x3400 && c <= 0x4DBF) || (c >= 0x20000 && c <= 0x2A6DF) ||
           (c >= 0x2A700 && c <= 0x2B73F) || (c >= 0x2B740 && c <= 0x2B81F) || (c >= 0x2B820 && c <= 0x2CEAF) ||
           (c >= 0xF900 && c <= 0xFAFF) || (c >= 0x2F800 && c <= 0x2FA1F);
}

typedef struct cps {
    int32_t *v;
    size_t n, cap;
} cps;

static int cps_push(cps *a, int32_t c)
{
    if (a->n == a->cap) {
        size_t nc = a->cap ? 2 * a->cap : 256;
        int32_t *p = realloc(a->v, nc * sizeof *p);
        if (!p) return -1;
        a->v = p;
        a->cap = nc;
    }
    a->v[a->n++] = c;
    return 0;
}

/* Normalized code points of the text, words separated by a single space (0x20) marker. */
static la_status normalize(const la_wordpiece *w, const char *text, size_t n, cps *out)
{
    const utf8proc_uint8_t *p = (const utf8proc_uint8_t *)text;
    size_t i = 0;
    while (i < n) {
        utf8proc_int32_t c;
        utf8proc_ssize_t k = utf8proc_iterate(p + i, (utf8proc_ssize_t)(n - i), &c);
        if (k <= 0) {
            i++;
            continue;
        }
        i += (size_t)k;
        if (c == 0 || c == 0xfffd || is_control(c)) continue;
        if (is_ws(c)) c = ' ';
        int32_t dec[32];
        utf8proc_ssize_t nd = 1;
        dec[0] = c;
        if (w->strip_accents) {
            int last = 0;
            nd = utf8proc_decompose_char(c, dec, 32, UTF8PROC_DECOMPOSE, &last);
            if (nd < 0 || nd > 32) nd = 1, dec[0] = c;
        }
        for (utf8proc_ssize_t d = 0; d < nd; d++) {
            int32_t x = dec[d];
            if (w->strip_accents && utf8proc_category(x) == UTF8PROC_CATEGORY_MN) continue;
            if (w->lowercase) x = utf8proc_tolower(x);
            int bad;
            if (is_cjk(x) || is_punct(x))
                bad = cps_push(out, ' ') || cps_push(out, x) || cps_push(out, ' ');
            else
                bad = cps_push(out, is_ws(x) ? ' ' : x);
            if (bad) return la_error(LA_ENOMEM, "out of memory");
        }
    }
    return LA_OK;
}


/* UTF-8 of cp[a..b) after an optional "##" into buf (large enough: 2 + 4 * (b - a)). */
static size_t utf8_of(const int32_t *cp, size_t a, size_t b, int cont, char *buf)
{
    size_t k = 0;
    if (cont) buf[k++] = '#', buf[k++] = '#';
    for (size_t i = a; i < b; i++) k += (size_t)utf8proc_encode_char(cp[i], (utf8proc_uint8_t *)buf + k);
    return k;
}

static la_status wordpiece_word(const la_wordpiece *w, const int32_t *cp, size_t n, int32_t **ids, size_t *nids,
                                size_t *cap)
{
    if (n > WP_MAX_WORD_CHARS) return la_token_ids_push(w->unk, ids, nids, cap);
    char buf[2 + 4 * WP_MAX_WORD_CHARS + 1];
    size_t start = 0, first = *nids;
    while (start < n) {
        int32_t found = -1;
        size_t end = n;
        for (; end > start; end--) {
            size_t len = utf8_of(cp, start, end, start > 0, buf);
            if ((found = lookup(w, buf, len)) >= 0) break;
        }
        if (found < 0) {
            *nids = first; /* the whole word is unknown */
            return la_token_ids_push(w->unk, ids, nids, cap);
        }
        LA_TRY(la_token_ids_push(found, ids, nids, cap));
        start = end;
    }
    return LA_OK;
}

la_status la_wordpiece_encode(const la_wordpiece *w, const char *text, size_t n, int32_t **ids, size_t *nids,
                              size_t *cap)
{
    cps a = {0};
    la_status s = normalize(w, text, n, &a);
    for (size_t i = 0; s == LA_OK && i < a.n;) {
        while (i < a.n && a.v[i] == ' ') i++;
        size_t j = i;
        while (j < a.n && a.v[j] != ' ') j++;
        if (j > i) s = wordpiece_word(w, a.v + i, j - i, ids, nids, cap);
        i = j;
    }
    free(a.v);
    return s;
}
