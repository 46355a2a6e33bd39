/*
 * fuzz_records.c - fuzz target for the input path: bytes -> records (JSONL, CSV, TSV) -> validated
 * rows or rejects. Whatever the bytes, the load either fails cleanly with a message or accounts for
 * every record: rows read = rows placed + rows rejected, and every placed row has a non-empty id.
 * Each line the loader reads from its text alone (it passes the strict check as one object) is one
 * json-c parses as an object, and every value the loader could ask for, read from the text
 * (json_view.h), is the one json-c gives; la_record_text of "text" and "text.*" is json-c's string,
 * or its array's strings joined by newlines, exactly when that is text a row keeps.
 */
#include "fuzz_file.h"
#include "json_strict.h"
#include "json_view.h"
#include "load.h"

#include "fuzz_check.h"
#include <json-c/json.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* A field as the loader resolved it through json-c: the key itself, else "a.b.0.c" through objects
 * and arrays (null is no value). */
static json_object *jc_path(json_object *o, const char *path)
{
    json_object *v;
    if (json_object_object_get_ex(o, path, &v)) return v;
    if (!strchr(path, '.')) return NULL;
    char buf[512];
    snprintf(buf, sizeof buf, "%s", path);
    json_object *cur = o;
    char *save = NULL;
    for (char *seg = strtok_r(buf, ".", &save); seg && cur; seg = strtok_r(NULL, ".", &save)) {
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

/* The view's value v is json-c's j (NULL: null or none), one level into arrays. */
static void same_value(json_object *j, la_jval v, int depth)
{
    static const la_jtype types[] = {[json_type_null] = LA_JNULL,     [json_type_boolean] = LA_JBOOL,
                                     [json_type_double] = LA_JNUMBER, [json_type_int] = LA_JNUMBER,
                                     [json_type_object] = LA_JOBJECT, [json_type_array] = LA_JARRAY,
                                     [json_type_string] = LA_JSTRING};
    if (!j) {
        LA_FUZZ_CHECK(!v.p || la_jval_type(v) == LA_JNULL);
        return;
    }
    LA_FUZZ_CHECK(v.p && la_jval_type(v) == types[json_object_get_type(j)]);
    switch (json_object_get_type(j)) {
    case json_type_string: {
        char *d = malloc(v.n + 1);
        LA_FUZZ_CHECK(d);
        size_t n = la_jval_string(v, d);
        LA_FUZZ_CHECK(n == (size_t)json_object_get_string_len(j) && !memcmp(d, json_object_get_string(j), n));
        size_t pn;
        const char *plain = la_jval_plain(v, &pn);
        if (plain) LA_FUZZ_CHECK(pn == n && !memcmp(plain, d, n));
        free(d);
        break;
    }
    case json_type_boolean:
    case json_type_double:
    case json_type_int: {
        double a = json_object_get_double(j), b = la_jval_number(v);
        LA_FUZZ_CHECK(a == b || (isnan(a) && isnan(b)));
        break;
    }
    case json_type_array: {
        const char *at = NULL;
        la_jval x;
        size_t k = 0;
        while (la_jval_next(v, &at, &x, NULL, NULL)) {
            LA_FUZZ_CHECK(k < json_object_array_length(j));
            if (depth < 2) same_value(json_object_array_get_idx(j, k), x, depth + 1);
            k++;
        }
        LA_FUZZ_CHECK(k == json_object_array_length(j));
        break;
    }
    default: break;
    }
}

static void same_field(json_object *o, const la_jrec *r, const char *path)
{
    same_value(jc_path(o, path), la_jrec_get(r, path), 0);
}

/* Bytes s[0..n) as a text the table keeps: no NUL, valid UTF-8. */
static int keepable(const char *s, size_t n)
{
    if (memchr(s, '\0', n)) return 0;
    for (size_t i = 0; i < n;) {
        unsigned char b = (unsigned char)s[i];
        size_t len = b < 0x80 ? 1 : (b & 0xE0) == 0xC0 ? 2 : (b & 0xF0) == 0xE0 ? 3 : (b & 0xF8) == 0xF0 ? 4 : 0;
        if (!len || i + len > n) return 0;
        uint32_t cp = len == 1 ? b : len == 2 ? b & 0x1Fu : len == 3 ? b & 0x0Fu : b & 0x07u;
        for (size_t k = 1; k < len; k++) {
            if (((unsigned char)s[i + k] & 0xC0) != 0x80) return 0;
            cp = cp << 6 | ((unsigned char)s[i + k] & 0x3Fu);
        }
        static const uint32_t least[5] = {0, 0, 0x80, 0x800, 0x10000};
        if (cp < least[len] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
        i += len;
    }
    return 1;
}

/* la_record_text of the line for "text" and "text.*" against json-c: a string field, or an
 * array's strings joined by newlines (nulls left out; anything else, or no string, an error); the
 * text is given exactly when json-c's is one the table keeps. */
static void check_record_text(json_object *o, const char *s, size_t n)
{
    char *text;
    size_t len;
    json_object *t = jc_path(o, "text");
    const char *one = "text", *star = "text.*";
    la_status st = la_record_text(s, n, &one, 1, &text, &len);
    int want = t && json_object_is_type(t, json_type_string) &&
               keepable(json_object_get_string(t), (size_t)json_object_get_string_len(t));
    LA_FUZZ_CHECK((st == LA_OK) == want);
    if (st == LA_OK) {
        LA_FUZZ_CHECK(len == (size_t)json_object_get_string_len(t) && !memcmp(text, json_object_get_string(t), len));
        free(text);
    }
    /* the reference join */
    char *ref = NULL;
    size_t rn = 0, count = 0;
    int ok = t && json_object_is_type(t, json_type_array);
    for (size_t k = 0; ok && k < json_object_array_length(t); k++) {
        json_object *e = json_object_array_get_idx(t, k);
        if (!e) continue;
        if (!json_object_is_type(e, json_type_string)) {
            ok = 0;
            break;
        }
        size_t en = (size_t)json_object_get_string_len(e);
        ref = realloc(ref, rn + en + 2);
        LA_FUZZ_CHECK(ref);
        if (count++) ref[rn++] = '\n';
        memcpy(ref + rn, json_object_get_string(e), en);
        rn += en;
    }
    want = ok && count && keepable(ref, rn);
    st = la_record_text(s, n, &star, 1, &text, &len);
    LA_FUZZ_CHECK((st == LA_OK) == want);
    if (st == LA_OK) {
        LA_FUZZ_CHECK(len == rn && !memcmp(text, ref, rn));
        free(text);
    } else {
        LA_FUZZ_CHECK(st == LA_EINPUT || st == LA_ENOMEM);
    }
    free(ref);
}

/* A line the loader reads from its text: json-c reads the same object from it. */
static void check_line(const char *s, size_t n)
{
    size_t at;
    const char *why;
    if (la_json_strict_check(s, n, &at, &why) != 1 || !la_jrec_is_line(s, n)) return;
    json_tokener *tok = json_tokener_new();
    LA_FUZZ_CHECK(tok);
    json_object *o = json_tokener_parse_ex(tok, s, (int)n);
    LA_FUZZ_CHECK(o && json_tokener_get_error(tok) == json_tokener_success && json_object_is_type(o, json_type_object));
    for (size_t k = json_tokener_get_parse_end(tok); k < n; k++) LA_FUZZ_CHECK(s[k] == ' ' || s[k] == '\t');
    la_jrec r;
    la_jrec_open(&r, s, n);
    static const char *const fixed[] = {"id", "text", "family", "label", "score", "split", "available_on", "a.b",
                                        "a.0", "0", "a..b", ".", "x.y.z", "a.1.b", ""};
    for (size_t k = 0; k < sizeof fixed / sizeof *fixed; k++) same_field(o, &r, fixed[k]);
    json_object_object_foreach(o, key, val) {
        char path[600];
        same_field(o, &r, key);
        snprintf(path, sizeof path, "%s.0", key);
        same_field(o, &r, path);
        if (json_object_is_type(val, json_type_object)) {
            json_object_object_foreach(val, sub, subval) {
                (void)subval;
                snprintf(path, sizeof path, "%s.%s", key, sub);
                same_field(o, &r, path);
            }
        }
    }
    check_record_text(o, s, n);
    json_object_put(o);
    json_tokener_free(tok);
}

static void check_lines(const char *s, size_t n)
{
    while (n) {
        const char *nl = memchr(s, '\n', n);
        size_t len = nl ? (size_t)(nl - s) : n;
        size_t line = len && s[len - 1] == '\r' ? len - 1 : len;
        check_line(s, line);
        if (!nl) break;
        n -= len + 1;
        s = nl + 1;
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const char *const exts[3] = {"jsonl", "csv", "tsv"};
    if (size == 0) return 0;
    const char *ext = exts[data[0] % 3];
    if (data[0] % 3 == 0) check_lines((const char *)data + 1, size - 1);
    char path[96];
    if (!la_fuzz_file("records", ext, data + 1, size - 1, path)) return 0;

    la_table *t;
    if (la_table_new(&t) != LA_OK) abort();
    la_load_opts o;
    la_load_opts_default(&o);
    static const char *const known[] = {"dev", "test"};
    o.known_parts = known;
    o.nknown = 2;
    o.allow_timestamp = data[0] & 8;
    if (data[0] & 16) o.text_fields[0] = "text.*"; /* rows of an array's strings */
    la_loader L;
    la_loader_init(&L, t, &o);
    la_status s = la_load_file(&L, path, (data[0] & 4) ? "dev" : NULL);
    if (s == LA_OK) {
        size_t read = 0, rejected = 0;
        for (size_t k = 0; k < L.nfiles; k++) read += L.files[k].rows_read, rejected += L.files[k].rows_rejected;
        LA_FUZZ_CHECK(read == la_table_nrows(t) + rejected);
        LA_FUZZ_CHECK(rejected == L.nrejects);
        const la_row *rows = la_table_rows_const(t);
        for (size_t i = 0; i < la_table_nrows(t); i++) {
            LA_FUZZ_CHECK(rows[i].id && rows[i].id[0]);
            LA_FUZZ_CHECK(la_table_find_id(t, rows[i].id) == i);
            LA_FUZZ_CHECK(rows[i].text);
        }
        for (size_t k = 0; k < L.nrejects; k++) LA_FUZZ_CHECK(L.rejects[k].nreasons > 0);
    } else {
        LA_FUZZ_CHECK(la_last_error()[0] != '\0');
    }
    la_loader_free(&L);
    la_table_free(t);
    unlink(path);
    return 0;
}
