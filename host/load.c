/* load.c - records -> validated rows or rejects (see load.h). */
#include "load.h"
#include "la_alloc.h"

#include "arrow.h"
#include "input.h"
#include "json_strict.h"
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
        size_t len;
        unsigned min, cp;
        if (c < 0x80) {
            i++;
            continue;
        }
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

/* Resolve a dotted path: a literal key first, then "a.b.0.c" through objects and arrays. */
static json_object *get_path(json_object *o, const char *path)
{
    json_object *v;
    if (json_object_object_get_ex(o, path, &v)) return v;
    if (!strchr(path, '.')) return NULL;
    char buf[512];
    snprintf(buf, sizeof buf, "%s", path);
    json_object *cur = o;
    for (char *seg = strtok(buf, "."); seg && cur; seg = strtok(NULL, ".")) {
        if (json_object_is_type(cur, json_type_object)) {
            if (!json_object_object_get_ex(cur, seg, &cur)) return NULL;
        } else if (json_object_is_type(cur, json_type_array)) {
            char *end;
            long k = strtol(seg, &end, 10);
            if (*end || k < 0 || (size_t)k >= json_object_array_length(cur)) return NULL;
            cur = json_object_array_get_idx(cur, (size_t)k);
        } else {
            return NULL;
        }
    }
    return cur;
}

/* "; the record has keys a, b, c" (of the deepest object the dotted path reaches) into out, or ""
 * when it has none: what a person picks the right --*-field from. */
static const char *keys_hint(json_object *rec, const char *path, char out[300])
{
    json_object *cur = rec;
    char buf[512];
    snprintf(buf, sizeof buf, "%s", path);
    const char *where = "the record";
    char *save = NULL;
    /* follow the path as far as it goes through objects */
    if (strchr(path, '.') && !json_object_object_get_ex(rec, path, NULL))
        for (char *seg = strtok_r(buf, ".", &save); seg; seg = strtok_r(NULL, ".", &save)) {
            json_object *next;
            if (!json_object_is_type(cur, json_type_object) || !json_object_object_get_ex(cur, seg, &next) ||
                !json_object_is_type(next, json_type_object))
                break;
            cur = next;
            where = "the object on the way";
        }
    out[0] = '\0';
    if (!json_object_is_type(cur, json_type_object) || json_object_object_length(cur) == 0) return out;
    size_t w = (size_t)snprintf(out, 300, "; %s has keys ", where), k = 0;
    json_object_object_foreach(cur, key, val) {
        (void)val;
        if (w + strlen(key) + 8 >= 300 || k == 12) {
            snprintf(out + w, 300 - w, ", ...");
            break;
        }
        w += (size_t)snprintf(out + w, 300 - w, "%s%s", k++ ? ", " : "", key);
    }
    return out;
}

/* A record under validation. */
typedef struct pending {
    la_loader *L;
    uint32_t file;
    const char *path;
    const char *base;
    const char *part;     /* fixed partition or NULL */
    int ids_generated;
    int have_id;      /* the first pass found a record with the id field */
    char **reasons;
    size_t nreasons, capreasons;
    la_status st;         /* allocation failures */
} pending;

static void reason(pending *p, const char *field, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void reason(pending *p, const char *field, const char *fmt, ...)
{
    char msg[600];
    int k = snprintf(msg, sizeof msg, "%s: ", field);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg + k, sizeof msg - (size_t)k, fmt, ap);
    va_end(ap);
    if (p->nreasons == p->capreasons) {
        size_t cap = p->capreasons ? p->capreasons * 2 : 4;
        char **v = realloc(p->reasons, cap * sizeof *v);
        if (!v) {
            p->st = LA_ENOMEM;
            return;
        }
        p->reasons = v;
        p->capreasons = cap;
    }
    char *copy = strdup(msg);
    if (!copy) {
        p->st = LA_ENOMEM;
        return;
    }
    p->reasons[p->nreasons++] = copy;
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

static const char *type_name(json_object *v)
{
    switch (json_object_get_type(v)) {
    case json_type_null: return "null";
    case json_type_boolean: return "a boolean";
    case json_type_double:
    case json_type_int: return "a number";
    case json_type_object: return "an object";
    case json_type_array: return "an array";
    case json_type_string: return "a string";
    }
    return "an unknown value";
}

/* A string value the table keeps: valid UTF-8 and no NUL (C strings would end there, so "a\u0000b"
 * and "a" would be one id). */
static int check_utf8(pending *p, const char *field, const char *s, size_t n)
{
    const char *nul = memchr(s, '\0', n);
    if (nul) {
        reason(p, field, "contains U+0000 (NUL) at offset %ld of the value; expected text without it", (long)(nul - s));
        return 0;
    }
    long at = utf8_invalid_at(s, n);
    if (at < 0) return 1;
    reason(p, field, "invalid UTF-8 (byte 0x%02x at offset %ld of the value)", (unsigned char)s[at], at);
    return 0;
}

/* An optional scalar as text: string, integer (family) or also number/bool (label). Empty = absent.
 * A number is its literal text in the line (json-c would make every integer beyond 64 bits one
 * value), copied into lit. */
static const char *opt_text(pending *p, json_object *rec, const char *raw, size_t rawlen, const char *field,
                            int allow_number, int allow_bool, const char *expect, char lit[LA_LITERAL_MAX + 1])
{
    json_object *v = get_path(rec, field);
    if (!v || json_object_is_type(v, json_type_null)) return NULL;
    json_type ty = json_object_get_type(v);
    if (allow_number && (ty == json_type_int || ty == json_type_double)) {
        const char *l;
        size_t ln;
        if (!la_json_literal(raw, rawlen, field, &l, &ln) || la_json_number_len(l, ln) != ln) {
            reason(p, field, "expected %s, got a number whose text cannot be found", expect);
            return NULL;
        }
        if (ln > LA_LITERAL_MAX) {
            reason(p, field, "a number of %zu characters; expected at most %d (give long ids as strings)", ln,
                   LA_LITERAL_MAX);
            return NULL;
        }
        memcpy(lit, l, ln);
        lit[ln] = '\0';
        return lit;
    }
    if (ty == json_type_string || (allow_bool && ty == json_type_boolean)) {
        const char *s = json_object_get_string(v);
        size_t n = ty == json_type_string ? (size_t)json_object_get_string_len(v) : strlen(s);
        if (n == 0) return NULL;
        if (!check_utf8(p, field, s, n)) return NULL;
        return s;
    }
    reason(p, field, "expected %s, got %s", expect, type_name(v));
    return NULL;
}

static la_status push_reject(pending *p, uint32_t line, uint32_t part, const char *id, const char *raw, size_t rawlen)
{
    la_loader *L = p->L;
    if (L->nrejects == L->caprejects) {
        size_t cap = L->caprejects ? L->caprejects * 2 : 64;
        la_reject *v = realloc(L->rejects, cap * sizeof *v);
        if (!v) return la_error(LA_ENOMEM, "out of memory recording rejects");
        L->rejects = v;
        L->caprejects = cap;
    }
    char *idcopy = id ? strdup(id) : NULL, *rawcopy = strndup(raw, rawlen);
    if ((id && !idcopy) || !rawcopy) {
        free(idcopy);
        free(rawcopy);
        return la_error(LA_ENOMEM, "out of memory recording rejects");
    }
    la_reject *r = &L->rejects[L->nrejects++];
    r->file = p->file;
    r->line = line;
    r->part = part;
    r->id = idcopy;
    r->raw = rawcopy;
    r->reasons = p->reasons;
    r->nreasons = p->nreasons;
    p->reasons = NULL;
    p->nreasons = p->capreasons = 0;
    L->files[p->file].rows_rejected++;
    return LA_OK;
}

/* The id: from the id field, or BASENAME:LINE when the file has none; NULL with a reason when it
 * is missing, not a non-empty string, or a duplicate. idbuf (600 bytes) holds a generated id. */
static const char *read_id(pending *p, json_object *rec, uint32_t line, char *idbuf)
{
    const la_load_opts *o = &p->L->opts;
    la_table *t = p->L->table;
    const char *id = NULL;
    json_object *v = get_path(rec, o->id_field);
    if (p->ids_generated) {
        snprintf(idbuf, 600, "%s:%u", p->base, line);
        id = idbuf;
    } else if (!v) {
        reason(p, o->id_field, "missing; expected a non-empty string");
    } else if (!json_object_is_type(v, json_type_string)) {
        reason(p, o->id_field, "expected a non-empty string, got %s", type_name(v));
    } else if (json_object_get_string_len(v) == 0) {
        reason(p, o->id_field, "empty; expected a non-empty string");
    } else if (check_utf8(p, o->id_field, json_object_get_string(v), (size_t)json_object_get_string_len(v))) {
        id = json_object_get_string(v);
    }
    if (id) {
        size_t prev = la_table_find_id(t, id);
        if (prev != (size_t)-1) {
            const la_row *pr = &la_table_rows_const(t)[prev];
            char sh[200];
            reason(p, o->id_field, "duplicate id '%s' (first seen at %s:%u)", shown(id, strlen(id), sh),
                   la_table_file_name(t, pr->file), pr->line);
        }
    }

    return id;
}

/* The partition from the split field, when the file has none of its own; *part stays as it is
 * with a reason when the field is missing or names an undeclared partition. */
static void read_part(pending *p, json_object *rec, uint32_t *part)
{
    const la_load_opts *o = &p->L->opts;
    la_table *t = p->L->table;
    if (!p->part) {
        json_object *sv = get_path(rec, o->split_field);
        if (!sv) {
            char keys[300];
            reason(p, o->split_field, "missing; expected a partition name%s (choose with --split-field F, or give the "
                   "file with --part NAME=FILE)", keys_hint(rec, o->split_field, keys));
        } else if (!json_object_is_type(sv, json_type_string) || json_object_get_string_len(sv) == 0) {
            reason(p, o->split_field, "expected a partition name, got %s", type_name(sv));
        } else {
            const char *name = json_object_get_string(sv);
            int known = 0;
            for (size_t k = 0; k < o->nknown; k++)
                if (!strcmp(o->known_parts[k], name)) known = 1;
            if (!known) {
                char list[300] = "", sh[200];
                for (size_t k = 0; k < o->nknown; k++) {
                    strncat(list, k ? ", " : "", sizeof list - strlen(list) - 1);
                    strncat(list, o->known_parts[k], sizeof list - strlen(list) - 1);
                }
                reason(p, o->split_field, "unknown partition '%s' (known: %s; declare more with --parts)",
                       shown(name, (size_t)json_object_get_string_len(sv), sh), list);
            } else {
                la_table_part(t, name, part);
            }
        }
    }

}

/* The text fields that are strings of valid UTF-8, into texts/lens; returns how many. */
static size_t read_texts(pending *p, json_object *rec, const char **texts, size_t *lens)
{
    const la_load_opts *o = &p->L->opts;
    size_t ntextok = 0;
    for (size_t k = 0; k < o->ntext; k++) {
        json_object *tv = get_path(rec, o->text_fields[k]);
        if (!tv) {
            char keys[300];
            if (o->require_text)
                reason(p, o->text_fields[k], "missing; expected a string%s (choose with --text-field F, or for one "
                       "partition --text-field PART=F)", keys_hint(rec, o->text_fields[k], keys));
        } else if (!json_object_is_type(tv, json_type_string)) {
            reason(p, o->text_fields[k], "expected a string, got %s", type_name(tv));
        } else if (check_utf8(p, o->text_fields[k], json_object_get_string(tv),
                              (size_t)json_object_get_string_len(tv))) {
            texts[ntextok] = json_object_get_string(tv);
            lens[ntextok++] = (size_t)json_object_get_string_len(tv);
        }
    }

    return ntextok;
}

/* The date, into row->date; a reason when it is not a calendar date, or missing where required. */
static void read_date(pending *p, json_object *rec, la_row *row)
{
    const la_load_opts *o = &p->L->opts;
    json_object *dv = get_path(rec, o->date_field);
    if (dv && !json_object_is_type(dv, json_type_null)) {
        if (!json_object_is_type(dv, json_type_string)) {
            reason(p, o->date_field, "expected a date string YYYY-MM-DD, got %s", type_name(dv));
        } else if (json_object_get_string_len(dv) > 0) {
            const char *ds = json_object_get_string(dv);
            size_t dn = (size_t)json_object_get_string_len(dv);
            char sh[200];
            int32_t day;
            if (la_date_parse(ds, dn, o->allow_timestamp, &row->date) != LA_OK)
                reason(p, o->date_field, "expected a date YYYY-MM-DD that exists on the calendar%s, got '%s'%s",
                       o->allow_timestamp ? " (or an ISO 8601 timestamp)" : "", shown(ds, dn, sh),
                       !o->allow_timestamp && la_date_parse(ds, dn, 1, &day) == LA_OK
                           ? ": a timestamp; --date-format iso8601 accepts it and uses its date part"
                           : "");
        }
    }

    if (o->require_date && row->date == LA_NO_DATE && !(dv && json_object_is_type(dv, json_type_string) &&
                                                       json_object_get_string_len(dv) > 0))
    {
        char keys[300];
        reason(p, o->date_field, "missing; expected a date YYYY-MM-DD (the split rule needs a date on every row)%s; "
               "choose with --date-field F", keys_hint(rec, o->date_field, keys));
    }

}

/* The score, into row->score: one rule for numbers and strings (CSV cells): a JSON number in
 * [0, 1]; true/false are 1/0; an empty string (an empty CSV cell) is no score. */
static void read_score(pending *p, json_object *rec, la_row *row)
{
    const la_load_opts *o = &p->L->opts;
    json_object *sv = get_path(rec, o->score_field);
    if (sv && !json_object_is_type(sv, json_type_null) &&
        !(json_object_is_type(sv, json_type_string) && json_object_get_string_len(sv) == 0)) {
        double x = NAN;
        json_type ty = json_object_get_type(sv);
        if (ty == json_type_int || ty == json_type_double) x = json_object_get_double(sv);
        else if (ty == json_type_boolean) x = json_object_get_boolean(sv) ? 1.0 : 0.0;
        else if (ty == json_type_string) {
            const char *ss = json_object_get_string(sv);
            size_t sn = (size_t)json_object_get_string_len(sv);
            if (la_json_number_len(ss, sn) == sn) x = strtod(ss, NULL);
        }
        if (x >= 0.0 && x <= 1.0) {
            row->score = x;
        } else if (ty == json_type_string) {
            char sh[200];
            reason(p, o->score_field, "expected a number in [0, 1], got '%s'",
                   shown(json_object_get_string(sv), (size_t)json_object_get_string_len(sv), sh));
        } else {
            reason(p, o->score_field, "expected a number in [0, 1], got %s", type_name(sv));
        }
    }

}

/* The embedding vector (--embedding-field), checked and normalized, into *out (malloc'ed; NULL
 * with a reason when it is not a vector like the first row's). */
static la_status read_embedding(pending *p, json_object *rec, float **out)
{
    la_loader *L = p->L;
    const la_load_opts *o = &L->opts;
    float *vec = NULL;
    *out = NULL;
    json_object *ev = get_path(rec, o->embedding_field);
    size_t dim = ev && json_object_is_type(ev, json_type_array) ? json_object_array_length(ev) : 0;
    if (!ev) reason(p, o->embedding_field, "missing; expected an array of numbers (--embedding-field)");
    else if (dim == 0) reason(p, o->embedding_field, "expected a non-empty array of numbers, got %s", type_name(ev));
    else if (L->emb_dim && dim != L->emb_dim)
        reason(p, o->embedding_field, "expected %zu numbers as in the first row, got %zu", L->emb_dim, dim);
    else {
        vec = la_malloc_n(dim, sizeof *vec);
        if (!vec) return la_error(LA_ENOMEM, "out of memory");
        for (size_t k = 0; k < dim && vec; k++) {
            json_object *x = json_object_array_get_idx(ev, k);
            if (!x || !(json_object_is_type(x, json_type_double) || json_object_is_type(x, json_type_int))) {
                reason(p, o->embedding_field, "element %zu: expected a number, got %s", k, x ? type_name(x) : "null");
                free(vec);
                vec = NULL;
            } else {
                vec[k] = (float)json_object_get_double(x);
            }
        }
        if (vec) {
            char where[300];
            snprintf(where, sizeof where, "%s", o->embedding_field);
            if (la_vec_check_normalize(vec, dim, where) != LA_OK) {
                /* the message reads "FIELD: component C is NaN" or similar */
                const char *m = la_last_error();
                size_t fl = strlen(o->embedding_field);
                reason(p, o->embedding_field, "%s", !strncmp(m, o->embedding_field, fl) && m[fl] == ':' ? m + fl + 2 : m);
                free(vec);
                vec = NULL;
            } else if (!L->emb_dim) {
                L->emb_dim = dim;
            }
        }
    }
    *out = vec;
    return LA_OK;
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

/* An accepted row: its strings copied into the table's arena, then the row appended. */
static la_status store_row(la_table *t, la_row *row, const char *id, const char *const *texts, const size_t *lens,
                           size_t ntextok, const char *family, const char *label, const char *raw, size_t rawlen)
{
    LA_TRY(la_table_strdup(t, id, strlen(id), &row->id));
    if (ntextok) {
        size_t total = 0;
        for (size_t k = 0; k < ntextok; k++) total += lens[k] + 1;
        char *joined = malloc(total);
        if (!joined) return la_error(LA_ENOMEM, "out of memory");
        size_t w = 0;
        for (size_t k = 0; k < ntextok; k++) {
            if (k) joined[w++] = '\n';
            memcpy(joined + w, texts[k], lens[k]);
            w += lens[k];
        }
        la_status s = la_table_strdup(t, joined, w, &row->text);
        free(joined);
        LA_TRY(s);
    }
    if (family) LA_TRY(la_table_strdup(t, family, strlen(family), &row->family));
    if (label) LA_TRY(la_table_strdup(t, label, strlen(label), &row->label));
    LA_TRY(la_table_strdup(t, raw, rawlen, &row->raw));
    return la_table_append(t, row, NULL);
}

static la_status on_record(void *ctx, json_object *rec, const char *raw, size_t rawlen, uint32_t line,
                           const char *parse_error)
{
    pending *p = ctx;
    la_loader *L = p->L;
    la_table *t = L->table;
    const la_load_opts *o = &L->opts;
    L->files[p->file].rows_read++;
    uint32_t part = LA_NO_PART;
    if (p->part) la_table_part(t, p->part, &part);

    if (!rec) {
        /* an unparseable record still takes its place among its partition's records */
        if (part != LA_NO_PART && part < LA_MAX_PART_COUNT) L->part_records[part]++;
        reason(p, "record", "%s", parse_error);
        if (p->st != LA_OK) return la_error(p->st, "out of memory");
        return push_reject(p, line, part, NULL, raw, rawlen);
    }

    la_row row;
    memset(&row, 0, sizeof row);
    row.date = LA_NO_DATE;
    row.score = NAN;
    row.file = p->file;
    row.line = line;
    char idbuf[600];
    const char *id = read_id(p, rec, line, idbuf);
    if (!p->part) read_part(p, rec, &part);
    const char *texts[LA_MAX_TEXT_FIELDS];
    size_t lens[LA_MAX_TEXT_FIELDS];
    size_t ntextok = read_texts(p, rec, texts, lens);
    char family_lit[LA_LITERAL_MAX + 1], label_lit[LA_LITERAL_MAX + 1];
    const char *family = opt_text(p, rec, raw, rawlen, o->family_field, 1, 0, "a string or an integer", family_lit);
    size_t label_reasons = p->nreasons;
    const char *label = opt_text(p, rec, raw, rawlen, o->label_field, 1, 1, "a string, number or boolean", label_lit);
    if (o->require_label && !label && p->nreasons == label_reasons)
        reason(p, o->label_field, "missing or empty; expected a class label (the three-set split needs one on every row)");
    read_date(p, rec, &row);
    read_score(p, rec, &row);
    float *vec = NULL;
    if (o->embedding_field) LA_TRY(read_embedding(p, rec, &vec));

    /* the record as a whole */
    if (p->nreasons == 0) {
        long at = utf8_invalid_at(raw, rawlen);
        if (at >= 0) reason(p, "record", "invalid UTF-8 (byte 0x%02x at offset %ld of the line)", (unsigned char)raw[at], at);
    }
    if (part != LA_NO_PART && part < LA_MAX_PART_COUNT) row.ordinal = (uint32_t)L->part_records[part]++;
    if (p->st != LA_OK) {
        free(vec);
        return la_error(p->st, "out of memory");
    }
    if (p->nreasons) {
        free(vec);
        return push_reject(p, line, part, id, raw, rawlen);
    }
    if (o->embedding_field) LA_TRY(store_embedding(L, vec));
    row.part = part;
    return store_row(t, &row, id, texts, lens, ntextok, family, label, raw, rawlen);
}

/* First pass: does any record carry the id field? It stops at the first one that does (have_id
 * ends la_records_each_until), so only a file without ids is read twice to the end. */
static la_status probe_id(void *ctx, json_object *rec, const char *raw, size_t rawlen, uint32_t line,
                          const char *parse_error)
{
    pending *p = ctx;
    if (rec && get_path(rec, p->L->opts.id_field)) p->ids_generated = 0, p->have_id = 1;
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
    uint32_t ignored;
    return part ? la_table_part(L->table, part, &ignored) : LA_OK;
}

static void end(pending *p)
{
    for (size_t k = 0; k < p->nreasons; k++) free(p->reasons[k]);
    free(p->reasons);
}

/* An input in memory (arrow.h): its rows probed for ids, then validated, as a file's records. */
static la_status load_arrow(la_loader *L, const la_arrow_input *in, const char *part)
{
    uint32_t fidx;
    la_file_info *fi;
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

la_status la_load_file_as(la_loader *L, const char *path, const char *part, const char *id_name)
{
    for (size_t k = 0; k < L->opts.narrow; k++)
        if (L->opts.arrow[k].path == path) return load_arrow(L, &L->opts.arrow[k], part);
    la_input in;
    LA_TRY(la_input_read(path, &L->opts.limits, &in));
    uint32_t fidx;
    la_file_info *fi;
    la_status st = add_file(L, path, &fidx, &fi);
    if (st != LA_OK) {
        la_input_free(&in);
        return st;
    }
    la_format fmt = L->opts.format == LA_FMT_AUTO ? la_format_detect(path, &in) : L->opts.format;
    fi->format = la_format_name(fmt);
    fi->compression = in.compression;
    fi->bytes = in.stored_len;
    for (int i = 0; i < 32; i++) snprintf(fi->blake2b_hex + 2 * i, 3, "%02x", in.blake2b[i]);

    pending p;
    st = begin(L, path, part, id_name, fidx, &p);
    if (st == LA_OK) st = la_records_each_until(&in, path, fmt, &L->opts.limits, probe_id, &p, &p.have_id);
    if (st == LA_OK) {
        fi->ids_generated = p.ids_generated;
        st = la_records_each(&in, path, fmt, &L->opts.limits, on_record, &p);
    }
    end(&p);
    la_input_free(&in);
    return st;
}

char *la_reject_message(const la_loader *L, const la_reject *r, size_t k)
{
    const char *file = la_table_file_name(L->table, r->file);
    size_t n = strlen(file) + strlen(r->reasons[k]) + 32;
    char *m = malloc(n);
    if (m) snprintf(m, n, "%s:%u: %s", file, r->line, r->reasons[k]);
    return m;
}
