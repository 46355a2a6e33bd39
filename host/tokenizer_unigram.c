/*
 * tokenizer_unigram.c - SentencePiece unigram from tokenizer.json (see tokenizer_unigram.h). The
 * pieces sit in an open-addressing hash table; Viterbi tries every piece length up to the
 * longest piece at every character boundary.
 */
#include "tokenizer_unigram.h"

#include <json-c/json.h>
#include "la_alloc.h"
#include "token_ids.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <utf8proc.h>
#include <xxhash.h>

#define UNI_MAX_STEPS 8
#define UNI_UNK_PENALTY 10.0

typedef enum { N_NFC, N_NFD, N_NFKC, N_NFKD, N_LOWER, N_STRIP, N_REPLACE, N_SPACES, N_CPMAP } norm_kind;
typedef struct norm_step {
    norm_kind kind;
    char *from, *to; /* N_REPLACE */
    /* N_CPMAP: code point cp[i] (ascending) becomes rep[off[i] .. off[i+1]) */
    uint32_t *cp, *off, *rep;
    size_t ncp;
} norm_step;

struct la_unigram {
    char **piece;
    double *score;
    size_t n;
    int32_t *slot;
    size_t nslot;
    size_t max_len;   /* bytes of the longest piece */
    int32_t unk;
    double unk_score;
    norm_step norm[UNI_MAX_STEPS];
    size_t nnorm;
    int whitespace_split, metaspace, prepend; /* prepend: 0 never, 1 always, 2 first */
    char replacement[8];
};

static int32_t lookup(const la_unigram *u, const char *s, size_t n)
{
    size_t m = u->nslot - 1;
    for (size_t h = (size_t)XXH3_64bits(s, n) & m;; h = (h + 1) & m) {
        int32_t id = u->slot[h];
        if (id < 0) return -1;
        if (strlen(u->piece[id]) == n && !memcmp(u->piece[id], s, n)) return id;
    }
}

size_t la_unigram_size(const la_unigram *u) { return u->n; }
const char *la_unigram_piece(const la_unigram *u, int32_t id) { return id >= 0 && (size_t)id < u->n ? u->piece[id] : NULL; }

void la_unigram_free(la_unigram *u)
{
    if (!u) return;
    for (size_t i = 0; u->piece && i < u->n; i++) free(u->piece[i]);
    for (size_t i = 0; i < u->nnorm; i++) {
        free(u->norm[i].from);
        free(u->norm[i].to);
        free(u->norm[i].cp);
        free(u->norm[i].off);
        free(u->norm[i].rep);
    }
    free(u->piece);
    free(u->score);
    free(u->slot);
    free(u);
}

/* Put piece i in the hash table (the first of equal pieces wins) and the length bound. */
static void index_piece(la_unigram *u, size_t i)
{
    size_t len = strlen(u->piece[i]);
    if (len > u->max_len) u->max_len = len;
    size_t m = u->nslot - 1, h = (size_t)XXH3_64bits(u->piece[i], len) & m;
    while (u->slot[h] >= 0 && strcmp(u->piece[u->slot[h]], u->piece[i])) h = (h + 1) & m;
    if (u->slot[h] < 0) u->slot[h] = (int32_t)i;
}

/* Room for n pieces and their hash table. */
static la_status alloc_pieces(la_unigram *u, size_t n)
{
    u->n = n;
    u->piece = calloc(n, sizeof *u->piece);
    u->score = calloc(n, sizeof *u->score);
    u->nslot = 16;
    while (u->nslot < 2 * n + 2) u->nslot <<= 1;
    u->slot = malloc(u->nslot * sizeof *u->slot);
    if (!u->piece || !u->score || !u->slot) return la_error(LA_ENOMEM, "out of memory");
    memset(u->slot, 0xff, u->nslot * sizeof *u->slot);
    return LA_OK;
}

la_status la_unigram_new_pieces(const la_unigram_pieces *p, la_unigram **out)
{
    *out = NULL;
    la_unigram *u = calloc(1, sizeof *u);
    la_status s = u ? alloc_pieces(u, p->n) : la_error(LA_ENOMEM, "out of memory");
    double min_score = 0;
    for (size_t i = 0; s == LA_OK && i < p->n; i++) {
        size_t len;
        float sc;
        const char *b = p->piece(p->ctx, i, &len, &sc);
        if (!(u->piece[i] = la_strndup(b, len))) s = la_error(LA_ENOMEM, "out of memory");
        u->score[i] = sc;
        if (i == 0 || sc < min_score) min_score = sc;
        int special = 0;
        for (size_t k = 0; k < p->nskip; k++) special |= p->skip[k] == (int32_t)i;
        if (s == LA_OK && !special) index_piece(u, i);
    }
    u->unk = p->unk;
    u->unk_score = min_score - UNI_UNK_PENALTY;
    if (s == LA_OK && (p->unk < 0 || (size_t)p->unk >= p->n)) s = la_error(LA_EINVAL, "unigram: unk id out of range");
    /* composed first (a base letter and its combining marks are one character of the map) */
    if (s == LA_OK && p->compose) u->norm[u->nnorm++].kind = N_NFKC;
    if (s == LA_OK && p->nmap) {
        norm_step *st = &u->norm[u->nnorm++];
        st->kind = N_CPMAP;
        st->ncp = p->nmap;
        st->cp = la_malloc_n(p->nmap, sizeof *st->cp);
        st->off = la_malloc_n(p->nmap + 1, sizeof *st->off);
        st->rep = la_malloc_n(p->nrep, sizeof *st->rep);
        if (!st->cp || !st->off || !st->rep) s = la_error(LA_ENOMEM, "out of memory");
        else {
            memcpy(st->cp, p->map_cp, p->nmap * sizeof *st->cp);
            memcpy(st->off, p->map_off, (p->nmap + 1) * sizeof *st->off);
            if (p->nrep) memcpy(st->rep, p->map_rep, p->nrep * sizeof *st->rep);
        }
    }
    if (s == LA_OK) u->norm[u->nnorm++].kind = N_SPACES;
    u->metaspace = 1;
    u->prepend = 1;
    snprintf(u->replacement, sizeof u->replacement, "\xe2\x96\x81");
    if (s != LA_OK) {
        la_unigram_free(u);
        return s;
    }
    *out = u;
    return LA_OK;
}

static const char *type_of(json_object *o)
{
    json_object *t;
    return json_object_object_get_ex(o, "type", &t) ? json_object_get_string(t) : "";
}

static la_status add_norm(la_unigram *u, const char *path, json_object *o)
{
    const char *t = type_of(o);
    if (!strcmp(t, "Sequence")) {
        json_object *list;
        if (!json_object_object_get_ex(o, "normalizers", &list) || !json_object_is_type(list, json_type_array))
            return la_error(LA_EINPUT, "%s: normalizer: Sequence without 'normalizers'", path);
        for (size_t i = 0; i < json_object_array_length(list); i++)
            LA_TRY(add_norm(u, path, json_object_array_get_idx(list, i)));
        return LA_OK;
    }
    if (u->nnorm == UNI_MAX_STEPS) return la_error(LA_EINPUT, "%s: normalizer: more than %d steps", path, UNI_MAX_STEPS);
    norm_step *s = &u->norm[u->nnorm];
    memset(s, 0, sizeof *s);
    if (!strcmp(t, "NFC")) s->kind = N_NFC;
    else if (!strcmp(t, "NFD")) s->kind = N_NFD;
    else if (!strcmp(t, "NFKC")) s->kind = N_NFKC;
    else if (!strcmp(t, "NFKD")) s->kind = N_NFKD;
    else if (!strcmp(t, "Lowercase")) s->kind = N_LOWER;
    else if (!strcmp(t, "Strip")) s->kind = N_STRIP;
    else if (!strcmp(t, "Replace")) {
        json_object *pat, *str, *content;
        /* the one regular expression XLM-R tokenizers use: runs of spaces become one */
        if (json_object_object_get_ex(o, "pattern", &pat) && json_object_object_get_ex(pat, "Regex", &str) &&
            !strcmp(json_object_get_string(str), " {2,}") && json_object_object_get_ex(o, "content", &content) &&
            !strcmp(json_object_get_string(content), " ")) {
            s->kind = N_SPACES;
            u->nnorm++;
            return LA_OK;
        }
        if (!json_object_object_get_ex(o, "pattern", &pat) || !json_object_object_get_ex(pat, "String", &str) ||
            !json_object_object_get_ex(o, "content", &content))
            return la_error(LA_EINPUT, "%s: normalizer: field 'pattern': only literal String patterns (and the Regex "
                            "\" {2,}\" to \" \") are supported", path);
        s->kind = N_REPLACE;
        s->from = strdup(json_object_get_string(str));
        s->to = strdup(json_object_get_string(content));
        if (!s->from || !s->to) return la_error(LA_ENOMEM, "out of memory");
        if (!*s->from) return la_error(LA_EINPUT, "%s: normalizer: field 'pattern': empty", path);
    } else
        return la_error(LA_EUNSUPPORTED, "%s: field 'normalizer': type '%s' is not supported", path, t);
    u->nnorm++;
    return LA_OK;
}

static la_status add_pre(la_unigram *u, const char *path, json_object *o)
{
    const char *t = type_of(o);
    if (!strcmp(t, "Sequence")) {
        json_object *list;
        if (!json_object_object_get_ex(o, "pretokenizers", &list) || !json_object_is_type(list, json_type_array))
            return la_error(LA_EINPUT, "%s: pre_tokenizer: Sequence without 'pretokenizers'", path);
        for (size_t i = 0; i < json_object_array_length(list); i++)
            LA_TRY(add_pre(u, path, json_object_array_get_idx(list, i)));
        return LA_OK;
    }
    if (!strcmp(t, "WhitespaceSplit")) {
        u->whitespace_split = 1;
        return LA_OK;
    }
    if (!strcmp(t, "Metaspace")) {
        json_object *x;
        u->metaspace = 1;
        u->prepend = 1;
        snprintf(u->replacement, sizeof u->replacement, "\xe2\x96\x81");
        if (json_object_object_get_ex(o, "replacement", &x) && json_object_get_string_len(x) > 0 &&
            json_object_get_string_len(x) < (int)sizeof u->replacement)
            snprintf(u->replacement, sizeof u->replacement, "%s", json_object_get_string(x));
        if (json_object_object_get_ex(o, "prepend_scheme", &x)) {
            const char *p = json_object_get_string(x);
            u->prepend = !strcmp(p, "never") ? 0 : !strcmp(p, "first") ? 2 : 1;
        } else if (json_object_object_get_ex(o, "add_prefix_space", &x)) {
            u->prepend = json_object_get_boolean(x);
        }
        if (json_object_object_get_ex(o, "split", &x) && !json_object_get_boolean(x))
            return la_error(LA_EUNSUPPORTED, "%s: pre_tokenizer: Metaspace with split false is not supported", path);
        return LA_OK;
    }
    return la_error(LA_EUNSUPPORTED, "%s: field 'pre_tokenizer': type '%s' is not supported", path, t);
}

la_status la_unigram_new(const char *path, la_unigram **out)
{
    *out = NULL;
    json_object *root = json_object_from_file(path);
    if (!root) return la_error(LA_EINPUT, "%s: cannot read as JSON (%s)", path, json_util_get_last_err());
    la_unigram *u = calloc(1, sizeof *u);
    la_status s = u ? LA_OK : la_error(LA_ENOMEM, "out of memory");
    json_object *model = NULL, *vocab = NULL, *x;
    if (s == LA_OK && (!json_object_object_get_ex(root, "model", &model) || strcmp(type_of(model), "Unigram")))
        s = la_error(LA_EINPUT, "%s: field 'model': not a Unigram model (type '%s')", path, model ? type_of(model) : "");
    if (s == LA_OK && (!json_object_object_get_ex(model, "vocab", &vocab) || !json_object_is_type(vocab, json_type_array) ||
                       json_object_array_length(vocab) == 0))
        s = la_error(LA_EINPUT, "%s: field 'model.vocab': missing or empty", path);
    if (s == LA_OK && json_object_object_get_ex(model, "byte_fallback", &x) && json_object_get_boolean(x))
        s = la_error(LA_EUNSUPPORTED, "%s: field 'model.byte_fallback': byte fallback is not supported", path);
    if (s == LA_OK) s = alloc_pieces(u, json_object_array_length(vocab));
    double min_score = 0;
    for (size_t i = 0; s == LA_OK && i < u->n; i++) {
        json_object *e = json_object_array_get_idx(vocab, i);
        if (!json_object_is_type(e, json_type_array) || json_object_array_length(e) != 2 ||
            !json_object_is_type(json_object_array_get_idx(e, 0), json_type_string)) {
            s = la_error(LA_EINPUT, "%s: field 'model.vocab': entry %zu is not [piece, score]", path, i);
            break;
        }
        json_object *p = json_object_array_get_idx(e, 0);
        u->piece[i] = la_strndup(json_object_get_string(p), (size_t)json_object_get_string_len(p));
        u->score[i] = json_object_get_double(json_object_array_get_idx(e, 1));
        if (!u->piece[i]) {
            s = la_error(LA_ENOMEM, "out of memory");
            break;
        }
        if (i == 0 || u->score[i] < min_score) min_score = u->score[i];
        index_piece(u, i);
    }
    u->unk = -1;
    if (s == LA_OK && json_object_object_get_ex(model, "unk_id", &x) && json_object_is_type(x, json_type_int))
        u->unk = json_object_get_int(x);
    if (s == LA_OK && (u->unk < 0 || (size_t)u->unk >= u->n))
        s = la_error(LA_EINPUT, "%s: field 'model.unk_id': missing or out of the vocabulary", path);
    u->unk_score = min_score - UNI_UNK_PENALTY;
    json_object *nz = NULL, *pt = NULL;
    if (s == LA_OK && json_object_object_get_ex(root, "normalizer", &nz) && nz) s = add_norm(u, path, nz);
    if (s == LA_OK && json_object_object_get_ex(root, "pre_tokenizer", &pt) && pt) s = add_pre(u, path, pt);
    json_object_put(root);
    if (s != LA_OK) {
        la_unigram_free(u);
        return s;
    }
    *out = u;
    return LA_OK;
}

/* ---- normalization ---- */

static int is_ws(int32_t c)
{
    return c == ' ' || (c >= 9 && c <= 13) || c == 0x85 || c == 0xa0 || c == 0x1680 || (c >= 0x2000 && c <= 0x200a) ||
           c == 0x2028 || c == 0x2029 || c == 0x202f || c == 0x205f || c == 0x3000;
}

/* Apply one step to the NUL-terminated *s (replaced, freed). */
static la_status norm_apply(const norm_step *st, char **s)
{
    char *in = *s, *outp = NULL;
    if (st->kind <= N_NFKD) {
        utf8proc_option_t o = UTF8PROC_STABLE | (st->kind == N_NFC || st->kind == N_NFKC ? UTF8PROC_COMPOSE
                                                                                          : UTF8PROC_DECOMPOSE);
        if (st->kind == N_NFKC || st->kind == N_NFKD) o |= UTF8PROC_COMPAT;
        utf8proc_uint8_t *r = NULL;
        if (utf8proc_map((const utf8proc_uint8_t *)in, 0, &r, o | UTF8PROC_NULLTERM) < 0) return LA_OK; /* keep */
        outp = (char *)r;
    } else if (st->kind == N_LOWER) {
        size_t n = strlen(in), k = 0;
        outp = malloc(4 * n + 1);
        if (!outp) return la_error(LA_ENOMEM, "out of memory");
        for (size_t i = 0; i < n;) {
            utf8proc_int32_t c;
            utf8proc_ssize_t l = utf8proc_iterate((const utf8proc_uint8_t *)in + i, (utf8proc_ssize_t)(n - i), &c);
            if (l <= 0) { i++; continue; }
            i += (size_t)l;
            k += (size_t)utf8proc_encode_char(utf8proc_tolower(c), (utf8proc_uint8_t *)outp + k);
        }
        outp[k] = 0;
    } else if (st->kind == N_STRIP) {
        size_t a = 0, b = strlen(in);
        while (a < b && is_ws((unsigned char)in[a])) a++;
        while (b > a && is_ws((unsigned char)in[b - 1])) b--;
        outp = la_strndup(in + a, b - a);
        if (!outp) return la_error(LA_ENOMEM, "out of memory");
    } else if (st->kind == N_SPACES) {
        size_t k = 0;
        outp = strdup(in);
        if (!outp) return la_error(LA_ENOMEM, "out of memory");
        for (size_t i = 0; in[i]; i++)
            if (!(in[i] == ' ' && k && outp[k - 1] == ' ')) outp[k++] = in[i];
        outp[k] = 0;
    } else if (st->kind == N_CPMAP) {
        size_t n = strlen(in), k = 0, room = 4 * n + 1;
        outp = malloc(room);
        if (!outp) return la_error(LA_ENOMEM, "out of memory");
        for (size_t i = 0; i < n;) {
            utf8proc_int32_t c;
            utf8proc_ssize_t l = utf8proc_iterate((const utf8proc_uint8_t *)in + i, (utf8proc_ssize_t)(n - i), &c);
            if (l <= 0) { /* a malformed byte passes through as it is */
                outp[k++] = in[i++];
                continue;
            }
            i += (size_t)l;
            size_t lo = 0, hi = st->ncp;
            while (lo < hi) {
                size_t mid = (lo + hi) / 2;
                if (st->cp[mid] < (uint32_t)c) lo = mid + 1;
                else hi = mid;
            }
            const uint32_t *r = (const uint32_t *)&c;
            size_t nr = 1;
            if (lo < st->ncp && st->cp[lo] == (uint32_t)c) {
                r = st->rep + st->off[lo];
                nr = st->off[lo + 1] - st->off[lo];
            }
            if (k + 4 * nr + 1 > room) {
                char *g = realloc(outp, room = 2 * room + 4 * nr);
                if (!g) {
                    free(outp);
                    return la_error(LA_ENOMEM, "out of memory");
                }
                outp = g;
            }
            for (size_t j = 0; j < nr; j++)
                k += (size_t)utf8proc_encode_char((utf8proc_int32_t)r[j], (utf8proc_uint8_t *)outp + k);
        }
        outp[k] = 0;
    } else { /* N_REPLACE, literal, left to right */
        size_t nf = strlen(st->from), nt = strlen(st->to), cnt = 0;
        for (const char *p = in; (p = strstr(p, st->from)); p += nf) cnt++;
        outp = malloc(strlen(in) + cnt * (nt > nf ? nt - nf : 0) + 1);
        if (!outp) return la_error(LA_ENOMEM, "out of memory");
        char *w = outp;
        const char *p = in, *q;
        while ((q = strstr(p, st->from))) {
            memcpy(w, p, (size_t)(q - p));
            w += q - p;
            memcpy(w, st->to, nt);
            w += nt;
            p = q + nf;
        }
        strcpy(w, p);
    }
    free(in);
    *s = outp;
    return LA_OK;
}

/* ---- Viterbi over one word ---- */

typedef struct node {
    double score;
    int32_t id;
    int32_t from; /* byte where the best piece ending here starts; -1: unreached */
} node;


static la_status viterbi(const la_unigram *u, const char *w, size_t n, int32_t **ids, size_t *nids, size_t *cap)
{
    node *best = malloc((n + 1) * sizeof *best);
    if (!best) return la_error(LA_ENOMEM, "out of memory");
    for (size_t i = 0; i <= n; i++) best[i] = (node){0, -1, -1};
    best[0].from = 0;
    for (size_t at = 0; at < n;) {
        utf8proc_int32_t c;
        utf8proc_ssize_t cl = utf8proc_iterate((const utf8proc_uint8_t *)w + at, (utf8proc_ssize_t)(n - at), &c);
        size_t mb = cl > 0 ? (size_t)cl : 1;
        int single = 0;
        for (size_t end = at + 1; end <= n && end - at <= u->max_len; end++) {
            if (end < n && ((unsigned char)w[end] & 0xc0) == 0x80) continue; /* not a character boundary */
            int32_t id = lookup(u, w + at, end - at);
            if (id < 0) continue;
            double cand = best[at].score + u->score[id];
            if (best[end].from < 0 || cand > best[end].score) best[end] = (node){cand, id, (int32_t)at};
            if (end - at == mb) single = 1;
        }
        if (!single) {
            double cand = best[at].score + u->unk_score;
            if (best[at + mb].from < 0 || cand > best[at + mb].score) best[at + mb] = (node){cand, u->unk, (int32_t)at};
        }
        at += mb;
    }
    /* back from the end; runs of unknowns fuse into one */
    size_t k = 0, capp = 16;
    int32_t *rev = malloc(capp * sizeof *rev);
    la_status s = rev ? LA_OK : la_error(LA_ENOMEM, "out of memory");
    for (size_t at = n; s == LA_OK && at > 0; at = (size_t)best[at].from) {
        if (k == capp) {
            int32_t *r = realloc(rev, (capp *= 2) * sizeof *r);
            if (!r) {
                s = la_error(LA_ENOMEM, "out of memory");
                break;
            }
            rev = r;
        }
        if (!(best[at].id == u->unk && k && rev[k - 1] == u->unk)) rev[k++] = best[at].id;
    }
    for (size_t i = k; s == LA_OK && i > 0; i--) s = la_token_ids_push(rev[i - 1], ids, nids, cap);
    free(rev);
    free(best);
    return s;
}

la_status la_unigram_encode(const la_unigram *u, const char *text, size_t n, int32_t **ids, size_t *nids,
                            size_t *cap)
{
    char *s = la_strndup(text, n);
    if (!s) return la_error(LA_ENOMEM, "out of memory");
    la_status st = LA_OK;
    for (size_t k = 0; k < u->nnorm && st == LA_OK; k++) st = norm_apply(&u->norm[k], &s);
    if (st != LA_OK) {
        free(s);
        return st;
    }
    size_t len = strlen(s), rl = strlen(u->replacement);
    /* words: whitespace-separated when WhitespaceSplit, else the whole text with spaces as the
     * replacement; Metaspace puts the replacement in front and splits before every replacement */
    char *word = malloc(3 * len + rl + 8);
    if (!word) st = la_error(LA_ENOMEM, "out of memory");
    int first = 1;
    for (size_t i = 0; st == LA_OK && i < len;) {
        size_t j = i, wl = 0;
        if (u->whitespace_split) {
            while (i < len) {
                utf8proc_int32_t c;
                utf8proc_ssize_t l = utf8proc_iterate((const utf8proc_uint8_t *)s + i, (utf8proc_ssize_t)(len - i), &c);
                if (l <= 0 || !is_ws(c)) break;
                i += (size_t)l;
            }
            if (i >= len) break;
            j = i;
            while (j < len) {
                utf8proc_int32_t c;
                utf8proc_ssize_t l = utf8proc_iterate((const utf8proc_uint8_t *)s + j, (utf8proc_ssize_t)(len - j), &c);
                if (l > 0 && is_ws(c)) break;
                j += l > 0 ? (size_t)l : 1;
            }
        } else {
            j = len;
        }
        /* no replacement in front of a word that begins with one (or with a space, which becomes one) */
        if (u->metaspace && (u->prepend == 1 || (u->prepend == 2 && first)) && !(j > i && s[i] == ' ') &&
            !(j - i >= rl && !memcmp(s + i, u->replacement, rl))) {
            memcpy(word, u->replacement, rl);
            wl = rl;
        }
        for (size_t k = i; k < j; k++) {
            if (u->metaspace && s[k] == ' ') {
                memcpy(word + wl, u->replacement, rl);
                wl += rl;
            } else {
                word[wl++] = s[k];
            }
        }
        first = 0;
        /* split before every replacement (it begins the next piece) */
        size_t a = 0;
        while (st == LA_OK && a < wl) {
            size_t b = a + (u->metaspace && wl - a >= rl && !memcmp(word + a, u->replacement, rl) ? rl : 0);
            while (b < wl && !(u->metaspace && wl - b >= rl && !memcmp(word + b, u->replacement, rl))) b++;
            if (b == a) b = wl;
            st = viterbi(u, word + a, b - a, ids, nids, cap);
            a = b;
        }
        i = j;
    }
    free(word);
    free(s);
    return st;
}
