/* load.c - records -> validated rows or rejects (see load.h). */
#include "load.h"
#include "la_alloc.h"
#include "la_scan.h"

#include "arrow.h"
#include "input.h"
#include "json_strict.h"
#include "json_view.h"
#include "normalize.h"
#include "la_arena.h"
#include "semantic.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The longest number literal kept as a family or label (as text). */
#define LA_LITERAL_MAX 200

void la_load_opts_default(la_load_opts *o)
{
    memset(o, 0, sizeof *o);
    o->id_field = "id";
    o->text_fields[0] = "text";
    o->ntext = 1;
    o->split_field = "split";
    o->family_field = "family";
    o->date_field = "available_on";
    o->label_field = "label";
    o->score_field = "score";
    o->require_text = 1;
    la_limits_default(&o->limits);
}

void la_loader_init(la_loader *L, la_table *t, const la_load_opts *o)
{
    memset(L, 0, sizeof *L);
    L->table = t;
    L->opts = *o;
}

void la_loader_free(la_loader *L)
{
    for (size_t i = 0; i < L->nrejects; i++) {
        la_reject *r = &L->rejects[i];
        free(r->id);
        free(r->raw);
        for (size_t k = 0; k < r->nreasons; k++) free(r->reasons[k]);
        free(r->reasons);
    }
    free(L->rejects);
    for (size_t i = 0; i < L->nfiles; i++) free(L->files[i].path);
    free(L->files);
    free(L->emb);
    memset(L, 0, sizeof *L);
}

/* Offset of the first invalid UTF-8 byte, or -1 when s is valid. */
static long utf8_invalid_at(const char *s, size_t n)
{
    const unsigned char *u = (const unsigned char *)s;
    size_t i = 0;
    while (i < n) {
        unsigned c = u[i];
        if (c < 0x80) { /* a run of ASCII: most of most lines (not called at each code point of CJK text) */
            i += la_scan_ascii(u + i, n - i);
            continue;
        }
        size_t len;
        unsigned min, cp;
        if ((c & 0xE0) == 0xC0) len = 2, min = 0x80, cp = c & 0x1F;
        else if ((c & 0xF0) == 0xE0) len = 3, min = 0x800, cp = c & 0x0F;
        else if ((c & 0xF8) == 0xF0) len = 4, min = 0x10000, cp = c & 0x07;
        else return (long)i;
        if (i + len > n) return (long)i;
        for (size_t k = 1; k < len; k++) {
            if ((u[i + k] & 0xC0) != 0x80) return (long)i;
            cp = (cp << 6) | (u[i + k] & 0x3F);
        }
        if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return (long)i;
        i += len;
    }
    return -1;
}

/* "; the record has keys a, b, c" (of the deepest object the dotted path reaches) into out, or ""
 * when it has none: what a person picks the right --*-field from. */
static const char *keys_hint(const la_jrec *rec, const char *path, char out[300])
{
    la_jval cur = la_jrec_value(rec);
    const char *where = "the record";
    /* follow the path as far as it goes through objects */
    if (strchr(path, '.') && !la_jrec_member(rec, path).p)
        for (const char *seg = path; *seg;) {
            const char *dot = strchr(seg, '.');
            size_t sl = dot ? (size_t)(dot - seg) : strlen(seg);
            if (sl) {
                la_jval next = la_jval_member(cur, seg, sl);
                if (!next.p || la_jval_type(next) != LA_JOBJECT) break;
                cur = next;
                where = "the object on the way";
            }
            if (!dot) break;
            seg = dot + 1;
        }
    out[0] = '\0';
    const char *at = NULL, *k;
    size_t kn, w = 0, count = 0;
    char sep = 0; /* the separator a lone key holds: a file of another delimiter read as CSV */
    la_jval v;
    while (la_jval_next(cur, &at, &v, &k, &kn)) {
        if (!count) w = (size_t)snprintf(out, 300, "; %s has keys ", where);
        char small[512];
        char *key = kn < sizeof small ? small : malloc(kn + 1);
        if (!key) break;
        key[la_jkey_decode(k, kn, key)] = '\0';
        sep = count ? 0 : strchr(key, ';') ? ';' : strchr(key, '|') ? '|' : 0;
        int full = w + strlen(key) + 8 >= 300 || count == 12;
        if (full) snprintf(out + w, 300 - w, ", ...");
        else w += (size_t)snprintf(out + w, 300 - w, "%s%s", count++ ? ", " : "", key);
        if (key != small) free(key);
        if (full) break;
    }
    if (sep && count == 1 && w < 300)
        snprintf(out + w, 300 - w, " (one column: are its fields separated by '%c'? CSV is read with commas, TSV with tabs)",
                 sep);
    return out;
}

/* One input while its records are validated. Worker threads only read it. */
typedef struct pending {
    la_loader *L;
    uint32_t file;
    const char *path;
    const char *base;
    const char *part;     /* fixed partition or NULL */
    int ids_generated;
    int have_id;          /* the first pass found a record with the id field */
    la_arena arena;       /* strings of the records checked on the calling thread (not JSONL) */
    /* a plain JSONL file read in blocks: an accepted row keeps its line's place in the file
     * (la_table_raw_place), not the line; origin says where the block being parsed lies */
    int by_place;
    la_block_origin origin;
    la_spill *window_spill; /* JSONL: the table's spill store as the window being parsed began */
} pending;

/* One record checked off the table, on any thread: what a row keeps of it (its strings copied into
 * an arena) and what is wrong with it, in the order the problems are reported. What depends on
 * the records before it (a duplicate id, the first embedding's length, a generated id, the
 * partition's index and the record's ordinal) is settled when it is committed, in input order. */
typedef struct checked {
    la_row row;           /* id from the id field (NULL when absent, bad or generated), strings, date, score */
    size_t rawlen;
    la_raw_place place;   /* by_place: where the line lies in the file (len 0 when it cannot) */
    int parsed;           /* there was a record to read fields from */
    int known_part;       /* the split field's partition: an index into opts.known_parts, or -1 */
    long bad_utf8;        /* offset of the first invalid UTF-8 byte of the raw line, or -1 */
    float *vec;           /* the embedding, checked and normalized (malloc'ed), or NULL */
    size_t dim;           /* numbers in the embedding field's array; 0 when it is missing or empty */
    int vec_reason;       /* the last reason is about the embedding's numbers */
    char **reasons;
    size_t nreasons, capreasons;
    char *decoded[LA_MAX_TEXT_FIELDS + 8]; /* string values with escapes, decoded (str_of) */
    size_t ndecoded;
    la_status st;         /* allocation failures */
    int no_parts;         /* la_record_text: no partitions to name in a hint */
} checked;

static void reason(checked *c, const char *field, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void reason(checked *c, const char *field, const char *fmt, ...)
{
    char msg[600];
    int k = snprintf(msg, sizeof msg, "%s: ", field);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg + k, sizeof msg - (size_t)k, fmt, ap);
    va_end(ap);
    if (c->nreasons == c->capreasons) {
        size_t cap = c->capreasons ? c->capreasons * 2 : 4;
        char **v = realloc(c->reasons, cap * sizeof *v);
        if (!v) {
            c->st = LA_ENOMEM;
            return;
        }
        c->reasons = v;
        c->capreasons = cap;
    }
    char *copy = strdup(msg);
    if (!copy) {
        c->st = LA_ENOMEM;
        return;
    }
    c->reasons[c->nreasons++] = copy;
}

/* The reason a record already has, moved to the front: what read_id would have said first. */
static void reason_first(checked *c)
{
    if (c->nreasons < 2) return;
    char *r = c->reasons[c->nreasons - 1];
    memmove(c->reasons + 1, c->reasons, (c->nreasons - 1) * sizeof *c->reasons);
    c->reasons[0] = r;
}

/* Quote at most 40 bytes of a value for a message; invalid bytes and controls as \xNN. */
static const char *shown(const char *s, size_t n, char out[200])
{
    size_t w = 0;
    for (size_t i = 0; i < n && w < 180; i++) {
        unsigned char c = (unsigned char)s[i];
        if (i >= 40) {
            w += (size_t)snprintf(out + w, 200 - w, "...");
            break;
        }
        if (c < 0x20 || c >= 0x80) w += (size_t)snprintf(out + w, 200 - w, "\\x%02x", c);
        else out[w++] = (char)c;
    }
    out[w] = '\0';
    return out;
}

static const char *type_name(la_jval v)
{
    switch (la_jval_type(v)) {
    case LA_JNULL: return "null";
    case LA_JBOOL: return "a boolean";
    case LA_JNUMBER: return "a number";
    case LA_JOBJECT: return "an object";
    case LA_JARRAY: return "an array";
    case LA_JSTRING: return "a string";
    }
    return "an unknown value";
}

/* A string value's bytes: in the line itself when it has no escapes (followed there by its closing
 * quote, not a NUL), else decoded into a NUL-terminated buffer the record owns. Returns 0 when out
 * of memory (c->st says so). */
static int str_of(checked *c, la_jval v, const char **out, size_t *n)
{
    const char *plain = la_jval_plain(v, n);
    if (plain) {
        *out = plain;
        return 1;
    }
    char *d = c->ndecoded < sizeof c->decoded / sizeof *c->decoded ? malloc(v.n + 1) : NULL;
    if (!d) {
        c->st = LA_ENOMEM;
        return 0;
    }
    *n = la_jval_string(v, d);
    d[*n] = '\0';
    c->decoded[c->ndecoded++] = d;
    *out = d;
    return 1;
}

/* For invalid UTF-8 at s[at] (of n bytes): a hint when the byte stands alone, not followed by a
 * continuation byte, as a single-byte encoding's letters and quotes are; else "". */
static const char *single_byte_hint(const char *s, size_t n, long at)
{
    int lone = (size_t)at + 1 >= n || ((unsigned char)s[at + 1] & 0xC0) != 0x80;
    return lone ? "; Latin-1 or Windows-1252 text? convert the file first: iconv -f WINDOWS-1252 -t UTF-8" : "";
}

/* A string value the table keeps: valid UTF-8 and no NUL (C strings would end there, so "a\u0000b"
 * and "a" would be one id). In a line of valid UTF-8 (c->bad_utf8 < 0) every string is: its bytes
 * are the line's between ASCII quotes and escapes, and escapes decode to valid UTF-8. */
static int check_utf8(checked *c, const char *field, const char *s, size_t n)
{
    const char *nul = memchr(s, '\0', n);
    if (nul) {
        reason(c, field, "contains U+0000 (NUL) at offset %ld of the value; expected text without it", (long)(nul - s));
        return 0;
    }
    if (c->bad_utf8 < 0) return 1;
    long at = utf8_invalid_at(s, n);
    if (at < 0) return 1;
    reason(c, field, "invalid UTF-8 (byte 0x%02x at offset %ld of the value%s)", (unsigned char)s[at], at,
           single_byte_hint(s, n, at));
    return 0;
}

/* An optional scalar as text: string, integer (family) or also number/bool (label). Empty = absent.
 * A number is its literal text in the line (json-c would make every integer beyond 64 bits one
 * value), copied into lit. */
static const char *opt_text(checked *c, const la_jrec *rec, const char *field, int allow_number, int allow_bool,
                            const char *expect, char lit[LA_LITERAL_MAX + 1], size_t *len /* OUT */)
{
    la_jval v = la_jrec_get(rec, field);
    la_jtype ty = la_jval_type(v);
    if (!v.p || ty == LA_JNULL) return NULL;
    if (allow_number && ty == LA_JNUMBER) {
        if (v.n > LA_LITERAL_MAX) {
            reason(c, field, "a number of %zu characters; expected at most %d (give long ids as strings)", v.n,
                   LA_LITERAL_MAX);
            return NULL;
        }
        memcpy(lit, v.p, v.n);
        lit[v.n] = '\0';
        *len = v.n;
        return lit;
    }
    if (allow_bool && ty == LA_JBOOL) {
        *len = v.n; /* "true" or "false" */
        return v.p;
    }
    if (ty == LA_JSTRING) {
        const char *s;
        size_t n;
        if (!str_of(c, v, &s, &n) || n == 0 || !check_utf8(c, field, s, n)) return NULL;
        *len = n;
        return s;
    }
    reason(c, field, "expected %s, got %s", expect, type_name(v));
    return NULL;
}

static la_status push_reject(pending *p, checked *c, uint32_t part)
{
    la_loader *L = p->L;
    if (L->nrejects == L->caprejects) {
        size_t cap = L->caprejects ? L->caprejects * 2 : 64;
        la_reject *v = realloc(L->rejects, cap * sizeof *v);
        if (!v) return la_error(LA_ENOMEM, "out of memory recording rejects");
        L->rejects = v;
        L->caprejects = cap;
    }
    const char *id = c->row.id;
    char *idcopy = id ? strdup(id) : NULL, *rawcopy = la_strndup(c->row.raw, c->rawlen);
    if ((id && !idcopy) || !rawcopy) {
        free(idcopy);
        free(rawcopy);
        return la_error(LA_ENOMEM, "out of memory recording rejects");
    }
    la_reject *r = &L->rejects[L->nrejects++];
    r->file = p->file;
    r->line = c->row.line;
    r->part = part;
    r->id = idcopy;
    r->raw = rawcopy;
    r->reasons = c->reasons;
    r->nreasons = c->nreasons;
    c->reasons = NULL;
    c->nreasons = c->capreasons = 0;
    L->files[p->file].rows_rejected++;
    return LA_OK;
}

/* The id field: NULL with a reason when it is missing or not a non-empty string of valid UTF-8,
 * and NULL without one when the file's ids are generated (BASENAME:LINE, made on commit). */
static const char *read_id(const pending *p, checked *c, const la_jrec *rec, size_t *len /* OUT */)
{
    const char *field = p->L->opts.id_field;
    if (p->ids_generated) return NULL;
    la_jval v = la_jrec_get(rec, field);
    const char *s;
    if (!v.p) reason(c, field, "missing; expected a non-empty string");
    else if (la_jval_type(v) != LA_JSTRING) reason(c, field, "expected a non-empty string, got %s", type_name(v));
    else if (v.n == 2) reason(c, field, "empty; expected a non-empty string");
    else if (str_of(c, v, &s, len) && check_utf8(c, field, s, *len)) return s;
    return NULL;
}

/* The partition from the split field, when the file has none of its own: c->known_part, or a
 * reason when the field is missing or names an undeclared partition. */
static void read_part(const pending *p, checked *c, const la_jrec *rec)
{
    const la_load_opts *o = &p->L->opts;
    la_jval sv = la_jrec_get(rec, o->split_field);
    if (!sv.p) {
        char keys[300];
        reason(c, o->split_field, "missing; expected a partition name%s (choose with --split-field F, or give the "
               "file with --part NAME=FILE)", keys_hint(rec, o->split_field, keys));
        return;
    }
    const char *name;
    size_t n;
    if (la_jval_type(sv) != LA_JSTRING || sv.n == 2) {
        reason(c, o->split_field, "expected a partition name, got %s", type_name(sv));
        return;
    }
    if (!str_of(c, sv, &name, &n)) return;
    /* the name as a C string, as partitions are named: up to a NUL */
    const char *nul = memchr(name, '\0', n);
    size_t cn = nul ? (size_t)(nul - name) : n;
    for (size_t k = 0; k < o->nknown; k++)
        if (strlen(o->known_parts[k]) == cn && !memcmp(o->known_parts[k], name, cn)) {
            c->known_part = (int)k;
            return;
        }
    char list[300] = "", sh[200];
    for (size_t k = 0; k < o->nknown; k++) {
        strncat(list, k ? ", " : "", sizeof list - strlen(list) - 1);
        strncat(list, o->known_parts[k], sizeof list - strlen(list) - 1);
    }
    reason(c, o->split_field, "unknown partition '%s' (known: %s; declare more with --parts)", shown(name, n, sh), list);
}

/* The first segment of path[0..n) that is "*" alone, or NULL. */
static const char *star_in(const char *path, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (path[i] == '*' && (i == 0 || path[i - 1] == '.') && (i + 1 == n || path[i + 1] == '.')) return path + i;
    return NULL;
}

/* The value at the dotted path[0..n) below v (array indices and names, empty segments skipped; a
 * "*" segment is handled by wild_each before this). Absent or null: p NULL. */
static la_jval below(la_jval v, const char *path, size_t n)
{
    la_jval none = {NULL, 0};
    for (size_t i = 0; i < n && v.p;) {
        const char *dot = memchr(path + i, '.', n - i);
        size_t sl = dot ? (size_t)(dot - (path + i)) : n - i;
        if (sl) v = la_jval_member(v, path + i, sl);
        i += sl + 1;
    }
    return v.p && la_jval_type(v) != LA_JNULL ? v : none;
}

/* Strings a wildcard path reaches below v, in order: path[0..n) may hold further "*" segments. Each
 * string's literal length (an upper bound of its bytes) into *bytes and the count into *count; with
 * out set, the decoded strings are written there joined by newlines (*w bytes so far). A value that
 * is neither a string, null nor absent is a reason naming the field and returns 0. */
static int wild_each(checked *c, const char *field, la_jval v, const char *path, size_t n, size_t *count,
                     size_t *bytes, char *out, size_t *w)
{
    const char *star = star_in(path, n);
    la_jval at = star ? below(v, path, (size_t)(star - path)) : below(v, path, n);
    if (!at.p) return 1;
    if (!star) {
        if (la_jval_type(at) != LA_JSTRING) {
            reason(c, field, "expected strings where the '*' reaches, got %s", type_name(at));
            return 0;
        }
        if (out) {
            if (*count) out[(*w)++] = '\n';
            size_t pn;
            const char *plain = la_jval_plain(at, &pn);
            if (plain) memcpy(out + *w, plain, pn);
            else pn = la_jval_string(at, out + *w);
            *w += pn;
        }
        *bytes += at.n;
        (*count)++;
        return 1;
    }
    /* arrays only: an object's members would include the duplicate keys json-c drops */
    if (la_jval_type(at) != LA_JARRAY) {
        reason(c, field, "expected an array where the '*' stands, got %s", type_name(at));
        return 0;
    }
    size_t rest = (size_t)(star - path) + 1 < n ? n - (size_t)(star - path) - 2 : 0;
    const char *after = star + 2;
    const char *it = NULL, *k;
    size_t kn;
    la_jval e;
    while (la_jval_next(at, &it, &e, &k, &kn))
        if (!wild_each(c, field, e, rest ? after : "", rest, count, bytes, out, w)) return 0;
    return 1;
}

/* A text field with a "*" segment: every string it reaches, joined by newlines, into *text (a buffer
 * the record owns); 0 with no reason when it reaches none (missing), 0 with a reason when a value is
 * of another kind or memory ran out. */
static int read_wild(checked *c, const la_jrec *rec, const char *field, const char **text, size_t *len)
{
    size_t count = 0, bytes = 0, w = 0;
    la_jval all = la_jrec_value(rec);
    if (!wild_each(c, field, all, field, strlen(field), &count, &bytes, NULL, &w) || !count) return 0;
    char *d = c->ndecoded < sizeof c->decoded / sizeof *c->decoded ? malloc(bytes + count) : NULL;
    if (!d) {
        c->st = LA_ENOMEM;
        return 0;
    }
    c->decoded[c->ndecoded++] = d;
    count = 0;
    wild_each(c, field, all, field, strlen(field), &count, &bytes, d, &w);
    d[w] = '\0';
    *text = d;
    *len = w;
    return 1;
}

/* For a text field that holds an array: the --text-field that would take its strings, or "". */
static const char *array_hint(la_jval v, const char *field, char out[300])
{
    out[0] = '\0';
    const char *it = NULL, *k;
    size_t kn;
    la_jval e;
    if (!la_jval_next(v, &it, &e, &k, &kn)) return out;
    if (la_jval_type(e) == LA_JSTRING) {
        snprintf(out, 300, " (--text-field '%s.*' joins its strings)", field);
    } else if (la_jval_type(e) == LA_JOBJECT) {
        static const char *const names[] = {"content", "text", "value"}; /* chat and conversation rows */
        for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
            la_jval m = la_jval_member(e, names[i], strlen(names[i]));
            if (m.p && la_jval_type(m) == LA_JSTRING) {
                snprintf(out, 300, " of objects (--text-field '%s.*.%s' joins each one's %s)", field, names[i], names[i]);
                return out;
            }
        }
        snprintf(out, 300, " of objects (--text-field '%s.*.KEY' joins each one's KEY)", field);
    }
    return out;
}

/* The text fields that are strings of valid UTF-8, into texts/lens; returns how many. */
static size_t read_texts(const la_load_opts *o, checked *c, const la_jrec *rec, const char **texts, size_t *lens)
{
    size_t ntextok = 0;
    const char *per_part = c->no_parts ? "" : ", or for one partition --text-field PART=F";
    for (size_t k = 0; k < o->ntext; k++) {
        if (star_in(o->text_fields[k], strlen(o->text_fields[k]))) {
            size_t before = c->nreasons;
            if (read_wild(c, rec, o->text_fields[k], &texts[ntextok], &lens[ntextok])) {
                if (check_utf8(c, o->text_fields[k], texts[ntextok], lens[ntextok])) ntextok++;
            } else if (c->nreasons == before && c->st == LA_OK && o->require_text) {
                reason(c, o->text_fields[k], "missing; expected strings where the '*' reaches (choose with --text-field F%s)",
                       per_part);
            }
            continue;
        }
        la_jval tv = la_jrec_get(rec, o->text_fields[k]);
        if (!tv.p) {
            char keys[300];
            if (o->require_text)
                reason(c, o->text_fields[k], "missing; expected a string%s (choose with --text-field F%s)",
                       keys_hint(rec, o->text_fields[k], keys), per_part);
        } else if (la_jval_type(tv) != LA_JSTRING) {
            char hint[300];
            reason(c, o->text_fields[k], "expected a string, got %s%s", type_name(tv),
                   la_jval_type(tv) == LA_JARRAY ? array_hint(tv, o->text_fields[k], hint) : "");
        } else if (str_of(c, tv, &texts[ntextok], &lens[ntextok]) &&
                   check_utf8(c, o->text_fields[k], texts[ntextok], lens[ntextok])) {
            ntextok++;
        }
    }

    return ntextok;
}

/* The date, into c->row.date; a reason when it is not a calendar date, or missing where required. */
static void read_date(const pending *p, checked *c, const la_jrec *rec)
{
    const la_load_opts *o = &p->L->opts;
    la_jval dv = la_jrec_get(rec, o->date_field);
    int given = dv.p && la_jval_type(dv) == LA_JSTRING && dv.n > 2;
    if (dv.p && la_jval_type(dv) != LA_JNULL) {
        const char *ds;
        size_t dn;
        if (la_jval_type(dv) != LA_JSTRING) {
            reason(c, o->date_field, "expected a date string YYYY-MM-DD, got %s", type_name(dv));
        } else if (given && str_of(c, dv, &ds, &dn)) {
            char sh[200];
            int32_t day;
            if (la_date_parse(ds, dn, o->allow_timestamp, &c->row.date) != LA_OK)
                reason(c, o->date_field, "expected a date YYYY-MM-DD that exists on the calendar%s, got '%s'%s",
                       o->allow_timestamp ? " (or an ISO 8601 timestamp)" : "", shown(ds, dn, sh),
                       !o->allow_timestamp && la_date_parse(ds, dn, 1, &day) == LA_OK
                           ? ": a timestamp; --date-format iso8601 accepts it and uses its date part"
                           : "");
        }
    }

    if (o->require_date && c->row.date == LA_NO_DATE && !given) {
        char keys[300];
        reason(c, o->date_field, "missing; expected a date YYYY-MM-DD (the split rule needs a date on every row)%s; "
               "choose with --date-field F", keys_hint(rec, o->date_field, keys));
    }

}

/* The score, into c->row.score: one rule for numbers and strings (CSV cells): a JSON number in
 * [0, 1]; true/false are 1/0; an empty string (an empty CSV cell) is no score. */
static void read_score(const pending *p, checked *c, const la_jrec *rec)
{
    const la_load_opts *o = &p->L->opts;
    la_jval sv = la_jrec_get(rec, o->score_field);
    la_jtype ty = la_jval_type(sv);
    if (!sv.p || ty == LA_JNULL || (ty == LA_JSTRING && sv.n == 2)) return;
    double x = NAN;
    const char *ss = NULL;
    size_t sn = 0;
    if (ty == LA_JNUMBER || ty == LA_JBOOL) x = la_jval_number(sv);
    else if (ty == LA_JSTRING) {
        if (!str_of(c, sv, &ss, &sn)) return;
        /* followed by its closing quote or a NUL: strtod stops there */
        if (la_json_number_len(ss, sn) == sn) x = strtod(ss, NULL);
    }
    if (x >= 0.0 && x <= 1.0) {
        c->row.score = x;
    } else if (ty == LA_JSTRING) {
        char sh[200];
        reason(c, o->score_field, "expected a number in [0, 1], got '%s'", shown(ss, sn, sh));
    } else {
        reason(c, o->score_field, "expected a number in [0, 1], got %s", type_name(sv));
    }
}

/* The embedding vector (--embedding-field), checked and normalized, into c->vec (malloc'ed), or a
 * reason. Its length against the first row's is settled on commit (settle_embedding). */
static void read_embedding(const pending *p, checked *c, const la_jrec *rec)
{
    const char *field = p->L->opts.embedding_field;
    la_jval ev = la_jrec_get(rec, field), x;
    size_t dim = 0;
    const char *at = NULL;
    if (la_jval_type(ev) == LA_JARRAY)
        while (la_jval_next(ev, &at, &x, NULL, NULL)) dim++;
    if (!ev.p) {
        reason(c, field, "missing; expected an array of numbers (--embedding-field)");
        return;
    }
    if (dim == 0) {
        reason(c, field, "expected a non-empty array of numbers, got %s", type_name(ev));
        return;
    }
    c->dim = dim;
    float *vec = la_malloc_n(dim, sizeof *vec);
    if (!vec) {
        c->st = LA_ENOMEM;
        return;
    }
    at = NULL;
    for (size_t k = 0; k < dim && la_jval_next(ev, &at, &x, NULL, NULL); k++) {
        if (la_jval_type(x) != LA_JNUMBER) {
            reason(c, field, "element %zu: expected a number, got %s", k, type_name(x));
            c->vec_reason = 1;
            free(vec);
            return;
        }
        vec[k] = (float)la_jval_number(x);
    }
    char where[300];
    snprintf(where, sizeof where, "%s", field);
    if (la_vec_check_normalize(vec, dim, where) != LA_OK) {
        /* the message reads "FIELD: component C is NaN" or similar */
        const char *m = la_last_error();
        size_t fl = strlen(field);
        reason(c, field, "%s", !strncmp(m, field, fl) && m[fl] == ':' ? m + fl + 2 : m);
        c->vec_reason = 1;
        free(vec);
        return;
    }
    c->vec = vec;
}

/* The embedding's length against the first valid one's, which the records before fixed: a
 * different length is the reason, in place of any about its numbers (they are not looked at). */
static void settle_embedding(la_loader *L, checked *c)
{
    if (!c->dim) return;
    if (L->emb_dim && c->dim != L->emb_dim) {
        if (c->vec_reason) free(c->reasons[--c->nreasons]);
        free(c->vec);
        c->vec = NULL;
        reason(c, L->opts.embedding_field, "expected %zu numbers as in the first row, got %zu", L->emb_dim, c->dim);
        return;
    }
    if (c->vec && !L->emb_dim) L->emb_dim = c->dim;
}

/* An accepted row's vector joins the matrix in table order. Frees vec. */
static la_status store_embedding(la_loader *L, float *vec)
{
    size_t nrow = la_table_nrows(L->table);
    if ((nrow + 1) * L->emb_dim > L->emb_cap) {
        size_t cap = L->emb_cap ? L->emb_cap * 2 : 1024 * L->emb_dim;
        while (cap < (nrow + 1) * L->emb_dim) cap *= 2;
        float *m = la_realloc_n(L->emb, cap, sizeof *m);
        if (!m) {
            free(vec);
            return la_error(LA_ENOMEM, "out of memory storing embeddings");
        }
        L->emb = m;
        L->emb_cap = cap;
    }
    memcpy(L->emb + nrow * L->emb_dim, vec, L->emb_dim * sizeof *vec);
    free(vec);
    return LA_OK;
}

static void keep(checked *c, la_arena *a, const char *s, size_t n, const char **out)
{
    if (c->st == LA_OK && la_arena_strdup(a, s, n, out) != LA_OK) c->st = LA_ENOMEM;
}

/* The raw line as the record keeps it until it is committed: copied into raw_arena, or with
 * raw_arena NULL borrowed from the block being read, which stays until its records are committed
 * (a reject is copied then, and a row keeps its line's place in the file instead). */
static void keep_raw(checked *c, la_arena *raw_arena, const char *raw, size_t rawlen)
{
    if (raw_arena) keep(c, raw_arena, raw, rawlen, &c->row.raw);
    else c->row.raw = raw;
}

/* The bytes of ntext (>= 1) texts joined by newlines. */
static size_t joined_len(const size_t *lens, size_t ntext)
{
    size_t total = ntext - 1;
    for (size_t k = 0; k < ntext; k++) total += lens[k];
    return total;
}

/* The texts joined by newlines into dst (joined_len bytes). */
static void join_texts(char *dst, const char *const *texts, const size_t *lens, size_t ntext)
{
    size_t w = 0;
    for (size_t k = 0; k < ntext; k++) {
        if (k) dst[w++] = '\n';
        memcpy(dst + w, texts[k], lens[k]);
        w += lens[k];
    }
}

/* The text fields joined by newlines, into the arena. */
static void keep_texts(checked *c, la_arena *a, const char *const *texts, const size_t *lens, size_t ntext)
{
    if (ntext == 1) {
        keep(c, a, texts[0], lens[0], &c->row.text);
        return;
    }
    char *joined;
    if (c->st != LA_OK || la_arena_alloc(a, joined_len(lens, ntext), &joined) != LA_OK) {
        c->st = LA_ENOMEM;
        return;
    }
    join_texts(joined, texts, lens, ntext);
    c->row.text = joined;
}

/* Check a record's fields (read from its line raw; parse_error: it did not parse, and why) into c,
 * copying what the table will keep into arena: everything of a record with no problem so far, only
 * its id and raw line otherwise (the line into raw_arena, or borrowed when it is NULL: keep_raw).
 * The short fields (id, family, label) go into `small`, apart from the texts: the reports and sorts
 * that pass over every row's id then read a few KB of ids a chunk, not a line of memory a row.
 * Reads nothing but the loader's options, so any thread may run it. */
static void check_record(const pending *p, la_arena *arena, la_arena *small, la_arena *raw_arena, checked *c,
                         const char *raw, size_t rawlen, uint32_t line, const char *parse_error)
{
    const la_load_opts *o = &p->L->opts;
    memset(c, 0, sizeof *c);
    c->row.date = LA_NO_DATE;
    c->row.score = NAN;
    c->row.file = p->file;
    c->row.line = line;
    c->rawlen = rawlen;
    c->known_part = -1;
    c->bad_utf8 = -1;
    if (parse_error) {
        reason(c, "record", "%s", parse_error);
        keep_raw(c, raw_arena, raw, rawlen);
        return;
    }
    c->parsed = 1;
    c->bad_utf8 = utf8_invalid_at(raw, rawlen);
    la_jrec rec_;
    const la_jrec *rec = &rec_;
    la_jrec_open(&rec_, raw, rawlen);
    size_t idlen = 0, familylen = 0, labellen = 0;
    const char *id = read_id(p, c, rec, &idlen);
    if (!p->part) read_part(p, c, rec);
    const char *texts[LA_MAX_TEXT_FIELDS];
    size_t lens[LA_MAX_TEXT_FIELDS];
    size_t ntextok = read_texts(o, c, rec, texts, lens);
    char family_lit[LA_LITERAL_MAX + 1], label_lit[LA_LITERAL_MAX + 1];
    const char *family = opt_text(c, rec, o->family_field, 1, 0, "a string or an integer", family_lit, &familylen);
    size_t label_reasons = c->nreasons;
    const char *label =
        opt_text(c, rec, o->label_field, 1, 1, "a string, number or boolean", label_lit, &labellen);
    if (o->require_label && !label && c->nreasons == label_reasons)
        reason(c, o->label_field, "missing or empty; expected a class label (the three-set split needs one on every row)");
    read_date(p, c, rec);
    read_score(p, c, rec);
    if (o->embedding_field) read_embedding(p, c, rec);

    if (id) keep(c, small, id, idlen, &c->row.id);
    keep_raw(c, raw_arena, raw, rawlen);
    if (c->nreasons || c->bad_utf8 >= 0) return; /* a reject whatever comes before it */
    if (p->by_place && rawlen <= UINT32_MAX) {
        uint64_t h[2];
        la_text_hash128(raw, rawlen, h);
        c->place = (la_raw_place){p->origin.off + (uint64_t)(raw - p->origin.buf), (uint32_t)rawlen, (uint32_t)h[0]};
    } else if (!raw_arena) {
        keep(c, arena, raw, rawlen, &c->row.raw); /* no place to keep: the row keeps its line */
    }
    if (ntextok) keep_texts(c, arena, texts, lens, ntextok);
    if (family) keep(c, small, family, familylen, &c->row.family);
    if (label) keep(c, small, label, labellen, &c->row.label);
}

static void release_checked(checked *c)
{
    for (size_t k = 0; k < c->nreasons; k++) free(c->reasons[k]);
    free(c->reasons);
    free(c->vec);
    for (size_t k = 0; k < c->ndecoded; k++) free(c->decoded[k]);
}

la_status la_record_text(const char *json, size_t n, const char *const *fields, size_t nfields, char **out,
                         size_t *len)
{
    *out = NULL;
    *len = 0;
    if (nfields == 0 || nfields > LA_MAX_TEXT_FIELDS)
        return la_error(LA_EINVAL, "between 1 and %d text fields", LA_MAX_TEXT_FIELDS);
    la_load_opts o;
    la_load_opts_default(&o);
    for (size_t k = 0; k < nfields; k++) o.text_fields[k] = fields[k];
    o.ntext = nfields;
    checked c;
    memset(&c, 0, sizeof c);
    c.no_parts = 1;
    c.bad_utf8 = utf8_invalid_at(json, n);
    la_jrec rec;
    la_jrec_open(&rec, json, n);
    const char *texts[LA_MAX_TEXT_FIELDS];
    size_t lens[LA_MAX_TEXT_FIELDS];
    size_t ntext = read_texts(&o, &c, &rec, texts, lens);
    la_status st = LA_OK;
    if (c.st != LA_OK) {
        st = la_error(LA_ENOMEM, "out of memory");
    } else if (c.nreasons) {
        st = la_error(LA_EINPUT, "%s", c.reasons[0]);
    } else {
        /* joined as keep_texts joins them for a row */
        size_t total = joined_len(lens, ntext);
        char *joined = malloc(total + 1);
        if (!joined) {
            st = la_error(LA_ENOMEM, "out of memory");
        } else {
            join_texts(joined, texts, lens, ntext);
            joined[total] = '\0';
            *out = joined;
            *len = total;
        }
    }
    release_checked(&c);
    return st;
}

/* Once the rows' strings (the table's and this input's not yet adopted) pass opts.spill_from, the
 * table keeps what comes after in spill files (la_table_spill_to): inputs whose size was not known
 * before they were read (compressed, standard input) are held in memory no further. */
static la_status maybe_spill(pending *p)
{
    la_table *t = p->L->table;
    size_t from = p->L->opts.spill_from;
    if (!from || la_table_spill(t) || la_table_text_bytes(t) + p->arena.bytes <= from) return LA_OK;
    LA_TRY(la_table_spill_to(t, NULL, p->L->opts.spill_mapped));
    p->arena.spill = la_table_spill(t);
    return LA_OK;
}

/* The record at `line` into the table or the rejects, in input order: here what depends on the
 * records before it is settled. */
static la_status commit_record(pending *p, checked *c, uint32_t line)
{
    la_loader *L = p->L;
    la_table *t = L->table;
    const la_load_opts *o = &L->opts;
    LA_TRY(maybe_spill(p));
    L->files[p->file].rows_read++;
    c->row.line = line;
    uint32_t part = LA_NO_PART;
    if (p->part) la_table_part(t, p->part, &part);

    if (!c->parsed) {
        /* an unparseable record still takes its place among its partition's records */
        if (part != LA_NO_PART && part < LA_MAX_PART_COUNT) L->part_records[part]++;
        if (c->st != LA_OK) return la_error(c->st, "out of memory");
        return push_reject(p, c, part);
    }
    if (p->ids_generated && c->st == LA_OK) {
        char idbuf[600];
        snprintf(idbuf, sizeof idbuf, "%s:%u", p->base, line);
        LA_TRY(la_table_strdup(t, idbuf, strlen(idbuf), &c->row.id));
    }
    size_t prev = c->row.id ? la_table_find_id(t, c->row.id) : (size_t)-1;
    if (prev != (size_t)-1) {
        const la_row *pr = &la_table_rows_const(t)[prev];
        char sh[200];
        reason(c, o->id_field, "duplicate id '%s' (first seen at %s:%u)", shown(c->row.id, strlen(c->row.id), sh),
               la_table_file_name(t, pr->file), pr->line);
        reason_first(c); /* a record with an id has no reason before this one */
    }
    if (c->known_part >= 0) la_table_part(t, o->known_parts[c->known_part], &part);
    if (o->embedding_field) settle_embedding(L, c);
    /* the record as a whole */
    if (c->nreasons == 0 && c->bad_utf8 >= 0)
        reason(c, "record", "invalid UTF-8 (byte 0x%02x at offset %ld of the line%s)",
               (unsigned char)c->row.raw[c->bad_utf8], c->bad_utf8, single_byte_hint(c->row.raw, c->rawlen, c->bad_utf8));
    if (part != LA_NO_PART && part < LA_MAX_PART_COUNT) c->row.ordinal = (uint32_t)L->part_records[part]++;
    if (c->st != LA_OK) return la_error(c->st, "out of memory");
    if (c->nreasons) return push_reject(p, c, part);
    if (o->embedding_field) {
        la_status s = store_embedding(L, c->vec);
        c->vec = NULL;
        LA_TRY(s);
    }
    c->row.part = part;
    if (!c->place.len) return la_table_append(t, &c->row, NULL);
    /* the line stays in the file: the manifests copy it from there */
    c->row.raw = NULL;
    size_t at;
    LA_TRY(la_table_append(t, &c->row, &at));
    return la_table_set_raw_place(t, at, &c->place);
}

/* A record of CSV, TSV or arrow input, checked and committed on the calling thread. */
static la_status on_record(void *ctx, json_object *rec, const char *raw, size_t rawlen, uint32_t line,
                           const char *parse_error)
{
    pending *p = ctx;
    checked c;
    (void)rec; /* its line holds it: check_record reads that */
    check_record(p, &p->arena, &p->arena, &p->arena, &c, raw, rawlen, line, parse_error);
    la_status st = commit_record(p, &c, line);
    release_checked(&c);
    return st;
}

/* Bytes of a block of a chunk's short fields (a chunk of lines holds some hundreds of ids). */
enum { SMALL_BLOCK = 4096 };

/* JSONL records are checked on worker threads, a chunk of lines at a time, into the chunk's own
 * arenas, which the table adopts when the chunk is committed. */
typedef struct checked_chunk {
    la_arena arena;
    la_arena small; /* the records' ids, families and labels */
    checked *recs;
    size_t n, cap;
} checked_chunk;

static la_status prepare_chunk_record(void *ctx, void *chunk, json_object *rec, const char *raw, size_t rawlen,
                                      uint32_t line, const char *parse_error)
{
    const pending *p = ctx;
    checked_chunk *k = chunk;
    if (!la_grow((void **)&k->recs, &k->cap, k->n + 1, sizeof *k->recs, 64))
        return la_error(LA_ENOMEM, "out of memory reading records");
    /* a row keeps about its line twice over (raw and text), or once when its raw line stays in
     * the block read until the chunk is committed (by_place): a chunk's strings fit one block */
    if (!k->arena.block) {
        k->arena = (la_arena){.block = (p->by_place ? 1 : 2) * (size_t)LA_JSONL_CHUNK_BYTES + 4096, .spill = p->window_spill};
        k->small = (la_arena){.block = SMALL_BLOCK, .spill = p->window_spill};
    }
    (void)rec; /* NULL: the pipe reads records from their lines (raw_records) */
    check_record(p, &k->arena, &k->small, p->by_place ? NULL : &k->arena, &k->recs[k->n++], raw, rawlen, line,
                 parse_error);
    return LA_OK;
}

static la_status commit_chunk_record(void *ctx, void *chunk, size_t k, uint32_t line)
{
    pending *p = ctx;
    checked_chunk *ch = chunk;
    if (k == 0) {
        la_table_adopt(p->L->table, &ch->arena);
        la_table_adopt(p->L->table, &ch->small);
    }
    return commit_record(p, &ch->recs[k], line);
}

static void release_chunk(void *ctx, void *chunk)
{
    checked_chunk *ch = chunk;
    for (size_t i = 0; i < ch->n; i++) release_checked(&ch->recs[i]);
    free(ch->recs);
    la_arena_free(&ch->arena);
    la_arena_free(&ch->small);
}

/* Where the next window's chunks keep their strings: the table's spill store once it has one, taken
 * while no commit runs (a commit may start it, beside the window's parse). */
static void window_begin(void *ctx)
{
    pending *p = ctx;
    p->window_spill = la_table_spill(p->L->table);
}

static const la_record_pipe checked_pipe = {prepare_chunk_record, commit_chunk_record, release_chunk,
                                            sizeof(checked_chunk), NULL, NULL, NULL, 1, window_begin};

/* First pass: does any record carry the id field? It stops at the first one that does (have_id
 * ends la_records_each_until), so only a file without ids is read twice to the end. */
static la_status probe_id(void *ctx, json_object *rec, const char *raw, size_t rawlen, uint32_t line,
                          const char *parse_error)
{
    pending *p = ctx;
    (void)rec;
    if (parse_error) return LA_OK;
    la_jrec r;
    la_jrec_open(&r, raw, rawlen);
    if (la_jrec_get(&r, p->L->opts.id_field).p) p->ids_generated = 0, p->have_id = 1;
    return LA_OK;
}

/* Register an input with the table and the loader's file list; *fi is its zeroed info with the
 * path copied. */
static la_status add_file(la_loader *L, const char *path, uint32_t *fidx, la_file_info **fi)
{
    LA_TRY(la_table_add_file(L->table, path, fidx));
    if (!la_grow((void **)&L->files, &L->capfiles, L->nfiles + 1, sizeof *L->files, 8))
        return la_error(LA_ENOMEM, "out of memory");
    *fi = &L->files[L->nfiles];
    memset(*fi, 0, sizeof **fi);
    (*fi)->path = strdup(path);
    if (!(*fi)->path) return la_error(LA_ENOMEM, "out of memory");
    L->nfiles++;
    return LA_OK;
}

/* The validation state for one input, its partition registered; generated ids name it id_name
 * (NULL: its base name). */
static la_status begin(la_loader *L, const char *path, const char *part, const char *id_name, uint32_t fidx, pending *p)
{
    const char *base = strrchr(path, '/');
    *p = (pending){.L = L, .file = fidx, .path = path, .base = id_name ? id_name : base ? base + 1 : path, .part = part,
                   .ids_generated = 1};
    la_table_arena(L->table, &p->arena, 0);
    uint32_t ignored;
    return part ? la_table_part(L->table, part, &ignored) : LA_OK;
}

static void end(pending *p)
{
    la_table_adopt(p->L->table, &p->arena); /* rows point into it */
}

/* An input in memory (arrow.h): its rows probed for ids, then validated, as a file's records. */
static la_status load_arrow(la_loader *L, const la_arrow_input *in, const char *part)
{
    uint32_t fidx;
    la_file_info *fi = NULL;
    LA_TRY(add_file(L, in->path, &fidx, &fi));
    fi->format = "arrow";
    fi->compression = "none";
    pending p;
    LA_TRY(begin(L, in->path, part, NULL, fidx, &p));
    la_arrow_reader probe, rows;
    la_arrow_reader_init(&probe, in);
    la_status st = la_records_each_source(la_arrow_each, &probe, in->path, &L->opts.limits, probe_id, &p, &p.have_id);
    if (st == LA_OK) {
        fi->ids_generated = p.ids_generated;
        la_arrow_reader_init(&rows, in);
        st = la_records_each_source(la_arrow_each, &rows, in->path, &L->opts.limits, on_record, &p, NULL);
        fi->bytes = rows.bytes;
        la_arrow_reader_digest(&rows, fi->blake2b_hex);
    }
    end(&p);
    return st;
}

la_status la_load_file(la_loader *L, const char *path, const char *part) { return la_load_file_as(L, path, part, NULL); }

/* What the file info says of an input as stored: its compression, size and fingerprint. */
static void note_stored(la_file_info *fi, const la_input *in)
{
    fi->compression = in->compression;
    fi->bytes = in->stored_len;
    for (int i = 0; i < 32; i++) snprintf(fi->blake2b_hex + 2 * i, 3, "%02x", in->blake2b[i]);
}

/* Bytes of a JSONL file (plain, or after decompression) read per block: a million-row input is
 * never held whole, only its rows. LEAKAUDIT_READ_BLOCK=N sets another size (at least 64; 0 reads
 * every file whole), for the tests that cut small files into many blocks. */
#define LOAD_BLOCK_BYTES ((size_t)32 << 20)
/* The most the first read of an input takes (LOAD_BLOCK_BYTES the others). */
#define LOAD_FIRST_READ ((size_t)4 << 20)

static size_t load_block_bytes(void)
{
    const char *e = getenv("LEAKAUDIT_READ_BLOCK");
    if (!e || !*e) return LOAD_BLOCK_BYTES;
    char *end;
    unsigned long long v = strtoull(e, &end, 10);
    if (*end || v == 0) return 0;
    return v < 64 ? 64 : v > ((size_t)1 << 30) ? (size_t)1 << 30 : (size_t)v;
}

/* A JSONL file (plain or gzip/zstd, or plain standard input) read and parsed a block at a time, when
 * its first block settles the probe for ids (a record with the id field, or the whole file): then
 * *done = 1 and the file is loaded; else *done = 0 and nothing has changed (la_load_file_as reads it
 * whole), but for standard input, which cannot be read again: it is then read whole here, from what
 * was read. The records, rejects, lines, fingerprint and failures are those of the whole-file path. */
static la_status load_whole(la_loader *L, const char *path, const char *part, const char *id_name, la_input in);

/* A JSON array read as JSON Lines would be a reject a line: refused whole, saying how to convert it. */
static la_status json_array_refused(const char *path)
{
    return la_error(LA_EINPUT,
                    "%s: a JSON array of records, not JSON Lines (one object per line): convert it first, for "
                    "example with jq -c '.[]'",
                    path);
}

static la_status load_blocks(la_loader *L, const char *path, const char *part, const char *id_name, int *done)
{
    *done = 0;
    const size_t block = load_block_bytes();
    if (block == 0 || (L->opts.format != LA_FMT_AUTO && L->opts.format != LA_FMT_JSONL)) return LA_OK;
    la_input_blocks b;
    int ok;
    LA_TRY(la_input_blocks_open(path, &L->opts.limits, &b, &ok));
    if (!ok) return LA_OK;
    la_input info;
    /* a small plain file takes a buffer of its size, one byte more to see its end in one read */
    int plain = !strcmp(b.compression, "none");
    /* a plain file's fingerprint is taken as its lines are parsed (la_jsonl_each_read); should the
     * file be read whole after all, that read takes its own */
    la_input_blocks_defer_hash(&b);
    size_t first_len = plain && !b.is_stdin && b.size < block ? (size_t)b.size + 1 : block;
    /* a large input's first read takes part of a block: its lines are parsed while the rest is
     * read (la_jsonl_each_read reads ahead with two threads or more) */
    size_t first_read = first_len > LOAD_FIRST_READ ? LOAD_FIRST_READ : first_len;
    /* a plain file is read where it lies, mapped, when it can be: no copy into buffers of its own */
    const char *map = NULL;
    size_t map_len = 0;
    if (plain && !b.is_stdin) (void)la_input_blocks_map(&b, &map, &map_len);
    int mapped = map != NULL;
    char *buf = mapped ? NULL : malloc(first_len + 1);
    size_t got = 0;
    la_status st = mapped ? LA_OK
                   : buf  ? la_input_blocks_read(&b, buf, first_read, &got)
                          : la_error(LA_ENOMEM, "%s: out of memory", path);
    if (st != LA_OK) {
        free(buf);
        la_input_blocks_close(&b, &info);
        return st;
    }
    int eof;
    la_input first;
    if (mapped) {
        got = map_len < first_read ? map_len : first_read;
        eof = got == map_len;
        first = (la_input){.data = (char *)(uintptr_t)map, .len = got};
    } else {
        buf[got] = '\0';
        eof = got < first_read;
        first = (la_input){.data = buf, .len = got};
    }
    la_format fmt = L->opts.format == LA_FMT_AUTO ? la_format_detect(path, &first) : L->opts.format;
    if (fmt == LA_FMT_JSONL && la_json_array_start(&first)) {
        free(buf);
        if (mapped) la_input_unmap(map);
        la_input_blocks_close(&b, &info);
        return json_array_refused(path);
    }
    /* the probe for ids over the block's complete lines, without touching the table */
    if (!eof)
        while (first.len > 0 && first.data[first.len - 1] != '\n') first.len--;
    pending probe = {.L = L, .ids_generated = 1};
    int packed = b.is_stdin && la_input_compression_of(first.data, got);
    if (fmt == LA_FMT_JSONL && !packed)
        st = la_records_each_until(&first, path, fmt, &L->opts.limits, probe_id, &probe, &probe.have_id);
    if (fmt != LA_FMT_JSONL || packed || st != LA_OK || (!probe.have_id && !eof)) {
        if (b.is_stdin) {
            /* what was read cannot be read again: the rest joins it, and the input is read whole */
            la_error_clear();
            la_input in;
            *done = 1;
            LA_TRY(la_input_blocks_rest(&b, buf, got, &in));
            return load_whole(L, path, part, id_name, in);
        }
        free(buf);
        if (mapped) la_input_unmap(map);
        la_input_blocks_close(&b, &info);
        return LA_OK;
    }
    uint32_t fidx;
    la_file_info *fi = NULL;
    st = add_file(L, path, &fidx, &fi);
    if (st != LA_OK) {
        free(buf);
        if (mapped) la_input_unmap(map);
        la_input_blocks_close(&b, &info);
        return st;
    }
    *done = 1;
    fi->format = la_format_name(fmt);
    pending p;
    st = begin(L, path, part, id_name, fidx, &p);
    if (st == LA_OK) {
        fi->ids_generated = p.ids_generated = probe.ids_generated;
        la_record_pipe pipe = checked_pipe;
        pipe.origin = &p.origin;
        /* the fingerprint runs beside the parse, window by window */
        pipe.absorb = la_input_blocks_absorb;
        pipe.absorb_ctx = &b;
        /* the rows of a compressed file or of standard input keep their records: the manifests
         * cannot seek in them */
        p.by_place = plain && !b.is_stdin;
        if (mapped)
            st = la_jsonl_each_mapped(map, map_len, block, la_input_release, path, &L->opts.limits, L->opts.threads,
                                      &pipe, &p);
        else
            st = la_jsonl_each_read(buf, got, first_len + 1, la_input_blocks_read, &b, path, &L->opts.limits,
                                    L->opts.threads, &pipe, &p);
    } else {
        free(buf);
    }
    if (mapped) la_input_unmap(map);
    end(&p);
    if (st == LA_OK && b.hashed != b.stored)
        st = la_error(LA_EINTERNAL, "%s: the fingerprint holds %llu of %llu bytes", path, (unsigned long long)b.hashed,
                      (unsigned long long)b.stored);
    la_input_blocks_close(&b, &info);
    note_stored(fi, &info);
    return st;
}

/* An input read whole (taken over, freed here): probed for ids, then validated. */
static la_status load_whole(la_loader *L, const char *path, const char *part, const char *id_name, la_input in)
{
    uint32_t fidx;
    la_file_info *fi = NULL;
    la_status st = add_file(L, path, &fidx, &fi);
    if (st != LA_OK) {
        la_input_free(&in);
        return st;
    }
    la_format fmt = L->opts.format == LA_FMT_AUTO ? la_format_detect(path, &in) : L->opts.format;
    fi->format = la_format_name(fmt);
    note_stored(fi, &in);
    if (fmt == LA_FMT_JSONL && la_json_array_start(&in)) {
        la_input_free(&in);
        return json_array_refused(path);
    }

    pending p;
    st = begin(L, path, part, id_name, fidx, &p);
    if (st == LA_OK) st = la_records_each_until(&in, path, fmt, &L->opts.limits, probe_id, &p, &p.have_id);
    if (st == LA_OK) {
        fi->ids_generated = p.ids_generated;
        st = fmt == LA_FMT_JSONL
                 ? la_jsonl_each_parallel(&in, path, &L->opts.limits, L->opts.threads, &checked_pipe, &p)
                 : la_records_each(&in, path, fmt, &L->opts.limits, on_record, &p);
    }
    end(&p);
    la_input_free(&in);
    return st;
}

la_status la_load_file_as(la_loader *L, const char *path, const char *part, const char *id_name)
{
    for (size_t k = 0; k < L->opts.narrow; k++)
        if (L->opts.arrow[k].path == path) return load_arrow(L, &L->opts.arrow[k], part);
    int done;
    LA_TRY(load_blocks(L, path, part, id_name, &done));
    if (done) return LA_OK;
    la_input in;
    LA_TRY(la_input_read(path, &L->opts.limits, &in));
    return load_whole(L, path, part, id_name, in);
}

char *la_reject_message(const la_loader *L, const la_reject *r, size_t k)
{
    const char *file = la_table_file_name(L->table, r->file);
    size_t n = strlen(file) + strlen(r->reasons[k]) + 32;
    char *m = malloc(n);
    if (m) snprintf(m, n, "%s:%u: %s", file, r->line, r->reasons[k]);
    return m;
}
