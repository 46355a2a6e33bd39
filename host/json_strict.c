/* json_strict.c - RFC 8259 checks on raw JSON text (see json_strict.h). */
#include "json_strict.h"
#include "la_scan.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef struct span {
    const char *p;
    size_t n;
} span;

typedef struct checker {
    const char *s, *end, *p;
    const char *why;
    const char *at;
    char *arena; /* decoded keys */
    size_t used;
    span *keys;  /* keys of the objects being read, innermost last */
    size_t nkeys, capkeys;
    span small_keys[32]; /* keys until there are more */
    int oom;
} checker;

static int fail(checker *c, const char *at, const char *why)
{
    if (!c->why) {
        c->why = why;
        c->at = at;
    }
    return 0;
}

static void ws(checker *c)
{
    while (c->p < c->end && (*c->p == ' ' || *c->p == '\t' || *c->p == '\n' || *c->p == '\r')) c->p++;
}

static int hex(char ch) { return (ch >= '0' && ch <= '9') || (ch >= 'a' && ch <= 'f') || (ch >= 'A' && ch <= 'F'); }

static unsigned hexval(const char *p)
{
    unsigned v = 0;
    for (int i = 0; i < 4; i++) v = v * 16 + (unsigned)(p[i] <= '9' ? p[i] - '0' : (p[i] | 0x20) - 'a' + 10);
    return v;
}

/* How many bytes from p hold no '"', no '\\' and no control character: the plain run of a string
 * that the byte loop below can skip. */
static size_t plain_run(const char *p, const char *end) { return la_scan_json_plain(p, (size_t)(end - p)); }

/* A string at c->p; with `out`, its decoded bytes are appended to the arena and returned in *out. */
static int string(checker *c, span *out)
{
    const char *start = c->p;
    if (c->p >= c->end || *c->p != '"') return fail(c, c->p, "expected a string in double quotes");
    c->p++;
    char *w = out ? c->arena + c->used : NULL;
    while (c->p < c->end && *c->p != '"') {
        size_t run = plain_run(c->p, c->end);
        if (run) {
            if (w) memcpy(w, c->p, run), w += run;
            c->p += run;
            continue;
        }
        unsigned char ch = (unsigned char)*c->p;
        if (ch < 0x20) return fail(c, c->p, "a control character (such as a raw tab) inside a string must be escaped");
        if (ch != '\\') {
            if (w) *w++ = (char)ch;
            c->p++;
            continue;
        }
        if (c->end - c->p < 2) break;
        char e = c->p[1];
        const char *map = "\"\"\\\\//b\bf\fn\nr\rt\t";
        const char *m = e ? strchr(map, e) : NULL;
        if (m && (m - map) % 2 == 0) {
            if (w) *w++ = m[1];
            c->p += 2;
            continue;
        }
        if (e != 'u' || c->end - c->p < 6 || !hex(c->p[2]) || !hex(c->p[3]) || !hex(c->p[4]) || !hex(c->p[5]))
            return fail(c, c->p, "invalid escape in a string (expected \\\" \\\\ \\/ \\b \\f \\n \\r \\t or \\uXXXX)");
        unsigned cp = hexval(c->p + 2);
        c->p += 6;
        if (cp >= 0xD800 && cp <= 0xDBFF && c->end - c->p >= 6 && c->p[0] == '\\' && c->p[1] == 'u' && hex(c->p[2]) &&
            hex(c->p[3]) && hex(c->p[4]) && hex(c->p[5])) {
            unsigned lo = hexval(c->p + 2);
            if (lo >= 0xDC00 && lo <= 0xDFFF) {
                cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
                c->p += 6;
            }
        }
        if (w) { /* keys compare by their decoded UTF-8 bytes */
            if (cp < 0x80) *w++ = (char)cp;
            else if (cp < 0x800) *w++ = (char)(0xC0 | cp >> 6), *w++ = (char)(0x80 | (cp & 0x3F));
            else if (cp < 0x10000)
                *w++ = (char)(0xE0 | cp >> 12), *w++ = (char)(0x80 | ((cp >> 6) & 0x3F)), *w++ = (char)(0x80 | (cp & 0x3F));
            else
                *w++ = (char)(0xF0 | cp >> 18), *w++ = (char)(0x80 | ((cp >> 12) & 0x3F)),
                *w++ = (char)(0x80 | ((cp >> 6) & 0x3F)), *w++ = (char)(0x80 | (cp & 0x3F));
        }
    }
    if (c->p >= c->end) return fail(c, start, "unterminated string");
    c->p++;
    if (out) {
        out->p = c->arena + c->used;
        out->n = (size_t)(w - out->p);
        c->used += out->n;
    }
    return 1;
}

size_t la_json_number_len(const char *s, size_t n)
{
    size_t i = 0;
    if (i < n && s[i] == '-') i++;
    if (i < n && s[i] == '0') i++;
    else if (i < n && s[i] >= '1' && s[i] <= '9')
        while (i < n && s[i] >= '0' && s[i] <= '9') i++;
    else return 0;
    if (i < n && s[i] == '.') {
        size_t d = ++i;
        while (i < n && s[i] >= '0' && s[i] <= '9') i++;
        if (i == d) return 0;
    }
    if (i < n && (s[i] == 'e' || s[i] == 'E')) {
        i++;
        if (i < n && (s[i] == '+' || s[i] == '-')) i++;
        size_t d = i;
        while (i < n && s[i] >= '0' && s[i] <= '9') i++;
        if (i == d) return 0;
    }
    return i;
}

static int cmp_span(const void *a, const void *b)
{
    const span *x = a, *y = b;
    size_t n = x->n < y->n ? x->n : y->n;
    int c = memcmp(x->p, y->p, n);
    return c ? c : (x->n > y->n) - (x->n < y->n);
}

static int value(checker *c, int depth);

static int object(checker *c, int depth)
{
    const char *open = c->p++;
    size_t base = c->nkeys;
    ws(c);
    if (c->p < c->end && *c->p == '}') {
        c->p++;
        return 1;
    }
    for (;;) {
        ws(c);
        if (c->nkeys == c->capkeys) {
            size_t cap = c->capkeys * 2;
            span *v = c->keys == c->small_keys ? malloc(cap * sizeof *v) : realloc(c->keys, cap * sizeof *v);
            if (!v) {
                c->oom = 1;
                return fail(c, c->p, "out of memory");
            }
            if (c->keys == c->small_keys) memcpy(v, c->small_keys, sizeof c->small_keys);
            c->keys = v;
            c->capkeys = cap;
        }
        if (c->p < c->end && *c->p == '\'') return fail(c, c->p, "keys and strings take double quotes, not single quotes");
        if (c->p < c->end && *c->p == '}') return fail(c, c->p, "a comma before '}' (trailing commas are not JSON)");
        if (!string(c, &c->keys[c->nkeys])) return 0;
        c->nkeys++;
        ws(c);
        if (c->p >= c->end || *c->p != ':') return fail(c, c->p, "expected ':' after a key");
        c->p++;
        if (!value(c, depth + 1)) return 0;
        ws(c);
        if (c->p < c->end && *c->p == ',') {
            c->p++;
            continue;
        }
        if (c->p < c->end && *c->p == '}') break;
        return fail(c, c->p, c->p < c->end ? "expected ',' or '}' in an object" : "the object is not closed");
    }
    c->p++;
    size_t m = c->nkeys - base;
    if (m > 1) {
        qsort(c->keys + base, m, sizeof *c->keys, cmp_span);
        for (size_t k = base + 1; k < c->nkeys; k++)
            if (!cmp_span(&c->keys[k - 1], &c->keys[k])) return fail(c, open, "the same key twice in one object");
    }
    c->nkeys = base;
    return 1;
}

static int array(checker *c, int depth)
{
    c->p++;
    ws(c);
    if (c->p < c->end && *c->p == ']') {
        c->p++;
        return 1;
    }
    for (;;) {
        ws(c);
        if (c->p < c->end && *c->p == ']') return fail(c, c->p, "a comma before ']' (trailing commas are not JSON)");
        if (!value(c, depth + 1)) return 0;
        ws(c);
        if (c->p < c->end && *c->p == ',') {
            c->p++;
            continue;
        }
        if (c->p < c->end && *c->p == ']') break;
        return fail(c, c->p, c->p < c->end ? "expected ',' or ']' in an array" : "the array is not closed");
    }
    c->p++;
    return 1;
}

static int value(checker *c, int depth)
{
    /* json-c's limit: no value LA_JSON_MAX_DEPTH levels below the outermost */
    if (depth >= LA_JSON_MAX_DEPTH) return fail(c, c->p, "nested too deeply");
    ws(c);
    if (c->p >= c->end) return fail(c, c->p, "expected a value");
    size_t left = (size_t)(c->end - c->p);
    switch (*c->p) {
    case '{': return object(c, depth);
    case '[': return array(c, depth);
    case '"': return string(c, NULL);
    case '\'': return fail(c, c->p, "strings take double quotes, not single quotes");
    case '/': return fail(c, c->p, "comments are not JSON");
    case 't':
        if (left >= 4 && !memcmp(c->p, "true", 4)) return c->p += 4, 1;
        break;
    case 'f':
        if (left >= 5 && !memcmp(c->p, "false", 5)) return c->p += 5, 1;
        break;
    case 'n':
        if (left >= 4 && !memcmp(c->p, "null", 4)) return c->p += 4, 1;
        break;
    default: {
        size_t k = 0;
        const char *q = c->p;
        if (*q == '-' || (*q >= '0' && *q <= '9')) {
            /* the longest run of number characters must be one number: "01", "1.", "1e" are not */
            while (k < left && q[k] && strchr("0123456789+-.eE", q[k])) k++;
            int letter = k < left && ((q[k] | 0x20) >= 'a' && (q[k] | 0x20) <= 'z');
            if (!letter && la_json_number_len(q, k) == k) return c->p += k, 1;
            return fail(c, q, "not a JSON number (no leading zeros, digits on both sides of '.', no hex)");
        }
    }
    }
    return fail(c, c->p, "expected a value: an object, array, string, number, true, false or null (not NaN or Infinity)");
}

int la_json_strict_check(const char *s, size_t n, size_t *at, const char **why)
{
    checker c;
    memset(&c, 0, sizeof c);
    if (!s) s = ""; /* an empty buffer may have no storage */
    c.s = c.p = s;
    c.end = s + n;
    c.keys = c.small_keys;
    c.capkeys = sizeof c.small_keys / sizeof *c.small_keys;
    char small[2048]; /* decoded keys are never longer than the line */
    c.arena = n < sizeof small ? small : malloc(n + 1);
    int ok = 0;
    if (!c.arena) {
        *at = 0;
        *why = "out of memory";
        return -1;
    }
    if (value(&c, 0)) {
        ws(&c);
        ok = c.p == c.end;
        if (!ok) fail(&c, c.p, "extra text after the value");
    }
    if (!ok) {
        *at = (size_t)(c.at - s);
        *why = c.why;
    }
    if (c.arena != small) free(c.arena);
    if (c.keys != c.small_keys) free(c.keys);
    return c.oom ? -1 : ok;
}
