/*
 * arrow.c - Arrow C Data Interface arrays as records (see arrow.h): a struct array's row becomes
 * the JSON object of its columns, the value a JSONL line of the same row would hold. Only the
 * column types named in la_options_add_arrow are read; la_arrow_check refuses the rest before
 * anything is read, so la_arrow_each never meets a type it does not know.
 */
#include "arrow.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef enum col_type {
    T_NULL, T_BOOL, T_I8, T_U8, T_I16, T_U16, T_I32, T_U32, T_I64, T_U64, T_F32, T_F64,
    T_UTF8, T_LUTF8, T_DATE32, T_LIST, T_LLIST, T_FIXED, T_STRUCT, T_UNKNOWN
} col_type;

/* The type of a format string; *width is the fixed-size list's element count. */
static col_type type_of(const char *f, int64_t *width)
{
    static const struct { const char *f; col_type t; } simple[] = {
        {"n", T_NULL}, {"b", T_BOOL},  {"c", T_I8},    {"C", T_U8},       {"s", T_I16},  {"S", T_U16},
        {"i", T_I32},  {"I", T_U32},   {"l", T_I64},   {"L", T_U64},      {"f", T_F32},  {"g", T_F64},
        {"u", T_UTF8}, {"U", T_LUTF8}, {"tdD", T_DATE32}, {"+l", T_LIST}, {"+L", T_LLIST}, {"+s", T_STRUCT}};
    *width = 0;
    if (!f) return T_UNKNOWN;
    for (size_t k = 0; k < sizeof simple / sizeof *simple; k++)
        if (!strcmp(f, simple[k].f)) return simple[k].t;
    if (!strncmp(f, "+w:", 3)) {
        char *end;
        long long n = strtoll(f + 3, &end, 10);
        if (*end || n <= 0) return T_UNKNOWN;
        *width = n;
        return T_FIXED;
    }
    return T_UNKNOWN;
}

/* Buffers each type has (validity first), and the children it needs. */
static int64_t buffers_of(col_type t) { return t == T_NULL ? 0 : t == T_UTF8 || t == T_LUTF8 ? 3 : t >= T_FIXED ? 1 : 2; }
static int64_t children_of(col_type t) { return t == T_LIST || t == T_LLIST || t == T_FIXED ? 1 : 0; }

static la_status check_col(const char *column, const struct ArrowSchema *s, const struct ArrowArray *a)
{
    int64_t width;
    col_type t = type_of(s->format, &width);
    if (t == T_UNKNOWN)
        return la_error(LA_EINVAL, "column '%s': Arrow type '%s' is not read (convert it to a string, number, boolean, "
                                   "date32, list or struct column)", column, s->format ? s->format : "(none)");
    if (s->dictionary || a->dictionary)
        return la_error(LA_EINVAL, "column '%s': dictionary-encoded; decode it first", column);
    if (!a->release || !s->release) return la_error(LA_EINVAL, "column '%s': the array or schema is released", column);
    if (a->length < 0 || a->offset < 0 || a->n_buffers != buffers_of(t))
        return la_error(LA_EINVAL, "column '%s': %lld buffers for Arrow type '%s', expected %lld", column,
                        (long long)a->n_buffers, s->format, (long long)buffers_of(t));
    for (int64_t k = 1; k < a->n_buffers; k++)
        if (!a->buffers[k] && a->length > 0) return la_error(LA_EINVAL, "column '%s': buffer %lld is missing", column, (long long)k);
    if (a->null_count != 0 && a->n_buffers > 0 && !a->buffers[0] && t != T_NULL)
        return la_error(LA_EINVAL, "column '%s': has nulls but no validity buffer", column);
    int64_t want = t == T_STRUCT ? s->n_children : children_of(t);
    if (s->n_children != want || a->n_children != want)
        return la_error(LA_EINVAL, "column '%s': %lld children for Arrow type '%s', expected %lld", column,
                        (long long)a->n_children, s->format, (long long)want);
    for (int64_t c = 0; c < want; c++) {
        const struct ArrowSchema *cs = s->children[c];
        if (!cs || !a->children[c]) return la_error(LA_EINVAL, "column '%s': a child is missing", column);
        const char *name = cs->name ? cs->name : "";
        if (t == T_STRUCT)
            for (int64_t d = 0; d < c; d++)
                if (!strcmp(s->children[d]->name ? s->children[d]->name : "", name))
                    return la_error(LA_EINVAL, "column '%s': appears twice%s%s", name, column[0] ? " in " : "", column);
        char sub[512];
        snprintf(sub, sizeof sub, "%s%s%s", column, column[0] ? "." : "", t == T_STRUCT ? name : "item");
        LA_TRY(check_col(sub, cs, a->children[c]));
    }
    return LA_OK;
}

la_status la_arrow_check(const struct ArrowSchema *schema, const struct ArrowArray *array)
{
    if (!schema || !array) return la_error(LA_EINVAL, "la_options_add_arrow: no schema or no array");
    int64_t width;
    if (type_of(schema->format, &width) != T_STRUCT)
        return la_error(LA_EINVAL, "la_options_add_arrow: expected a struct array (a record batch), got Arrow type '%s'",
                        schema->format ? schema->format : "(none)");
    if (array->length > UINT32_MAX - 1)
        return la_error(LA_EINVAL, "la_options_add_arrow: %lld rows in one array; give at most %u", (long long)array->length,
                        UINT32_MAX - 1);
    return check_col("", schema, array);
}

void la_arrow_release(la_arrow_input *in)
{
    if (in->array.release) in->array.release(&in->array);
    if (in->schema.release) in->schema.release(&in->schema);
    in->array.release = NULL;
    in->schema.release = NULL;
}

void la_arrow_reader_init(la_arrow_reader *r, const la_arrow_input *in)
{
    r->in = in;
    r->bytes = 0;
    la_blake2b_init(&r->hash, NULL, 0, 32);
}

void la_arrow_reader_digest(la_arrow_reader *r, char hex[65])
{
    unsigned char d[32];
    la_blake2b_final(&r->hash, d, sizeof d);
    for (int i = 0; i < 32; i++) snprintf(hex + 2 * i, 3, "%02x", d[i]);
}

static int valid(const struct ArrowArray *a, int64_t j)
{
    const uint8_t *v = a->buffers[0];
    return !v || a->null_count == 0 || (v[j >> 3] >> (j & 7) & 1);
}

/* A finite number in the shortest text that reads back to it, as JSON writers print it (1.0, not 1):
 * a label given as a number is its text. NaN and infinities (pandas' missing values) are null. */
static json_object *number(double d, int is_float)
{
    if (!isfinite(d)) return NULL;
    char buf[40];
    for (int prec = 1; prec <= 17; prec++) {
        snprintf(buf, sizeof buf, "%.*g", prec, d);
        if (is_float ? strtof(buf, NULL) == (float)d : strtod(buf, NULL) == d) break;
    }
    if (!strpbrk(buf, ".en")) strcat(buf, ".0");
    return json_object_new_double_s(d, buf);
}

/* Column value of physical row j (the array's own offset already added), or NULL for null. *ok
 * becomes 0 when an allocation fails, -1 for a string too long for a JSON value (2 GiB). */
static json_object *cell(const struct ArrowSchema *s, const struct ArrowArray *a, int64_t j, int *ok);

static json_object *list_cell(const struct ArrowSchema *s, const struct ArrowArray *a, int64_t from, int64_t to, int *ok)
{
    json_object *arr = json_object_new_array_ext((int)(to - from));
    if (!arr) return *ok = 0, NULL;
    const struct ArrowArray *c = a->children[0];
    for (int64_t k = from; k < to && *ok == 1; k++)
        if (json_object_array_add(arr, cell(s->children[0], c, c->offset + k, ok)) != 0) *ok = 0;
    return arr;
}

static json_object *struct_cell(const struct ArrowSchema *s, const struct ArrowArray *a, int64_t j, int *ok)
{
    json_object *o = json_object_new_object();
    if (!o) return *ok = 0, NULL;
    for (int64_t c = 0; c < s->n_children && *ok == 1; c++) {
        const struct ArrowArray *ca = a->children[c];
        json_object *v = cell(s->children[c], ca, ca->offset + j, ok);
        /* names were checked distinct and live as long as the schema, which outlives the record */
        if (json_object_object_add_ex(o, s->children[c]->name ? s->children[c]->name : "", v,
                                      JSON_C_OBJECT_ADD_KEY_IS_NEW | JSON_C_OBJECT_KEY_IS_CONSTANT) != 0)
            *ok = 0;
    }
    return o;
}

static json_object *cell(const struct ArrowSchema *s, const struct ArrowArray *a, int64_t j, int *ok)
{
    int64_t width;
    col_type t = type_of(s->format, &width);
    if (t == T_NULL || !valid(a, j)) return NULL;
    const void *b1 = a->buffers[1 < a->n_buffers ? 1 : 0];
    json_object *v = NULL;
    switch (t) {
    case T_BOOL: v = json_object_new_boolean(((const uint8_t *)b1)[j >> 3] >> (j & 7) & 1); break;
    case T_I8: v = json_object_new_int64(((const int8_t *)b1)[j]); break;
    case T_U8: v = json_object_new_int64(((const uint8_t *)b1)[j]); break;
    case T_I16: v = json_object_new_int64(((const int16_t *)b1)[j]); break;
    case T_U16: v = json_object_new_int64(((const uint16_t *)b1)[j]); break;
    case T_I32: v = json_object_new_int64(((const int32_t *)b1)[j]); break;
    case T_U32: v = json_object_new_int64(((const uint32_t *)b1)[j]); break;
    case T_I64: v = json_object_new_int64(((const int64_t *)b1)[j]); break;
    case T_U64: v = json_object_new_uint64(((const uint64_t *)b1)[j]); break;
    case T_F32: return number(((const float *)b1)[j], 1);
    case T_F64: return number(((const double *)b1)[j], 0);
    case T_UTF8: {
        const int32_t *off = b1;
        v = json_object_new_string_len((const char *)a->buffers[2] + off[j], off[j + 1] - off[j]);
        break;
    }
    case T_LUTF8: {
        const int64_t *off = b1;
        int64_t n = off[j + 1] - off[j];
        if (n > INT32_MAX) return *ok = -1, NULL;
        v = json_object_new_string_len((const char *)a->buffers[2] + off[j], (int)n);
        break;
    }
    case T_DATE32: {
        char d[11];
        la_date_format(((const int32_t *)b1)[j], d);
        v = json_object_new_string(d);
        break;
    }
    case T_LIST: return list_cell(s, a, ((const int32_t *)b1)[j], ((const int32_t *)b1)[j + 1], ok);
    case T_LLIST: return list_cell(s, a, ((const int64_t *)b1)[j], ((const int64_t *)b1)[j + 1], ok);
    case T_FIXED: return list_cell(s, a, j * width, (j + 1) * width, ok);
    case T_STRUCT: return struct_cell(s, a, j, ok);
    default: break;
    }
    if (!v) *ok = 0;
    return v;
}

la_status la_arrow_each(void *reader, la_record_fn fn, void *ctx)
{
    la_arrow_reader *r = reader;
    const struct ArrowSchema *s = &r->in->schema;
    const struct ArrowArray *a = &r->in->array;
    la_status st = LA_OK;
    for (int64_t i = 0; i < a->length && st == LA_OK; i++) {
        uint32_t line = (uint32_t)i + 1;
        int64_t j = a->offset + i;
        if (!valid(a, j)) {
            st = fn(ctx, NULL, "null", 4, line, "the row is null; expected an object of its columns");
            continue;
        }
        int ok = 1;
        json_object *rec = struct_cell(s, a, j, &ok);
        if (ok == -1) {
            json_object_put(rec);
            st = fn(ctx, NULL, "", 0, line, "a string of 2 GiB or more; not read");
            continue;
        }
        size_t n = 0;
        const char *raw =
            ok ? json_object_to_json_string_length(rec, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE, &n) : NULL;
        if (!raw) {
            json_object_put(rec);
            return la_error(LA_ENOMEM, "%s:%u: out of memory reading the row", r->in->path, line);
        }
        la_blake2b_update(&r->hash, (const unsigned char *)raw, n);
        la_blake2b_update(&r->hash, (const unsigned char *)"\n", 1);
        r->bytes += n + 1;
        st = fn(ctx, rec, raw, n, line, NULL);
        json_object_put(rec);
    }
    return st;
}
