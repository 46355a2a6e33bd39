/* json_view.c - values of one JSON object read from its text (see json_view.h). */
#include "json_view.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static const char *skip_ws(const char *p, const char *end)
{
    while (p < end && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')) p++;
    return p;
}

/* Past the closing quote of the string whose opening quote is at p: a quote ends it when an even
 * number of backslashes stands before it. */
static const char *string_end(const char *p, const char *end)
{
    const char *from = p + 1;
    for (;;) {
        const char *q = memchr(from, '"', (size_t)(end - from));
        if (!q) return end;
        const char *b = q;
        while (b > from && b[-1] == '\\') b--;
        if (((q - b) & 1) == 0) return q + 1;
        from = q + 1;
    }
}

/* Past the value that starts at p. */
static const char *value_end(const char *p, const char *end)
{
    if (p >= end) return end;
    if (*p == '"') return string_end(p, end);
    if (*p == '{' || *p == '[') {
        int depth = 0;
        while (p < end) {
            char ch = *p;
            if (ch == '"') {
                p = string_end(p, end);
                continue;
            }
            if (ch == '{' || ch == '[') depth++;
            else if ((ch == '}' || ch == ']') && --depth == 0) return p + 1;
            p++;
        }
        return end;
    }
    while (p < end && *p != ',' && *p != '}' && *p != ']' && *p != ' ' && *p != '\t' && *p != '\n' && *p != '\r') p++;
    return p;
}

/* One member or element from p (at its key or value): its key (objects) and value; returns where
 * the next one starts, or NULL at the container's end. */
static const char *next_item(const char *p, const char *end, int object, const char **key, size_t *kn, la_jval *val)
{
    p = skip_ws(p, end);
    if (p >= end || *p == '}' || *p == ']') return NULL;
    if (object) {
        const char *ke = string_end(p, end);
        *key = p + 1;
        *kn = (size_t)(ke - 1 - (p + 1));
        p = skip_ws(ke, end);
        if (p < end && *p == ':') p++;
        p = skip_ws(p, end);
    }
    const char *ve = value_end(p, end);
    *val = (la_jval){p, (size_t)(ve - p)};
    p = skip_ws(ve, end);
    if (p < end && *p == ',') p++;
    return p;
}

int la_jrec_is_line(const char *s, size_t n)
{
    size_t b = 0;
    while (b < n && (s[b] == ' ' || s[b] == '\t' || s[b] == '\r' || s[b] == '\n')) b++;
    while (n > b && (s[n - 1] == ' ' || s[n - 1] == '\t')) n--;
    return b < n && s[b] == '{' && s[n - 1] == '}';
}

void la_jrec_open(la_jrec *r, const char *s, size_t n)
{
    r->s = s;
    r->end = s + n;
    r->n = 0;
    r->rest = NULL;
    const char *p = skip_ws(s, r->end);
    if (p >= r->end || *p != '{') return;
    r->s = p;
    p++;
    while (p) {
        if (r->n == LA_JREC_MEMBERS) {
            if (skip_ws(p, r->end) < r->end && *skip_ws(p, r->end) == '"') r->rest = p;
            break;
        }
        const char *k;
        size_t kn;
        la_jval v;
        p = next_item(p, r->end, 1, &k, &kn, &v);
        if (!p) break;
        r->m[r->n].k = k;
        r->m[r->n].kn = kn;
        r->m[r->n].v = v;
        r->n++;
    }
}

la_jval la_jrec_value(const la_jrec *r)
{
    const char *e = r->end;
    while (e > r->s && e[-1] != '}') e--;
    return (la_jval){r->s, (size_t)(e - r->s)};
}

la_jtype la_jval_type(la_jval v)
{
    switch (v.p ? *v.p : 'n') {
    case '"': return LA_JSTRING;
    case '{': return LA_JOBJECT;
    case '[': return LA_JARRAY;
    case 't':
    case 'f': return LA_JBOOL;
    case 'n': return LA_JNULL;
    default: return LA_JNUMBER;
    }
}

static unsigned hex4(const char *p)
{
    unsigned v = 0;
    for (int i = 0; i < 4; i++) v = v * 16 + (unsigned)(p[i] <= '9' ? p[i] - '0' : (p[i] | 0x20) - 'a' + 10);
    return v;
}

static char *put_utf8(char *w, unsigned cp)
{
    if (cp < 0x80) {
        *w++ = (char)cp;
    } else if (cp < 0x800) {
        *w++ = (char)(0xC0 | cp >> 6);
        *w++ = (char)(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
        *w++ = (char)(0xE0 | cp >> 12);
        *w++ = (char)(0x80 | ((cp >> 6) & 0x3F));
        *w++ = (char)(0x80 | (cp & 0x3F));
    } else {
        *w++ = (char)(0xF0 | cp >> 18);
        *w++ = (char)(0x80 | ((cp >> 12) & 0x3F));
        *w++ = (char)(0x80 | ((cp >> 6) & 0x3F));
        *w++ = (char)(0x80 | (cp & 0x3F));
    }
    return w;
}

/* The string body [p, end) decoded into dst: json-c's decoding, where a surrogate escape that is
 * not a high one followed at once by an escaped low one is U+FFFD (3 bytes from the escape's 6). */
static size_t decode(const char *p, const char *end, char *dst)
{
    char *w = dst;
    while (p < end) {
        const char *bs = memchr(p, '\\', (size_t)(end - p));
        size_t run = (size_t)((bs ? bs : end) - p);
        memcpy(w, p, run);
        w += run;
        if (!bs) break;
        p = bs + 1;
        char e = *p++;
        switch (e) {
        case 'b': *w++ = '\b'; continue;
        case 'f': *w++ = '\f'; continue;
        case 'n': *w++ = '\n'; continue;
        case 'r': *w++ = '\r'; continue;
        case 't': *w++ = '\t'; continue;
        case 'u': break;
        default: *w++ = e; continue; /* \" \\ \/ */
        }
        unsigned cp = hex4(p);
        p += 4;
        if (cp >= 0xD800 && cp <= 0xDBFF && end - p >= 6 && p[0] == '\\' && p[1] == 'u') {
            unsigned lo = hex4(p + 2);
            if (lo >= 0xDC00 && lo <= 0xDFFF) {
                cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
                p += 6;
            }
        }
        if (cp >= 0xD800 && cp <= 0xDFFF) cp = 0xFFFD;
        w = put_utf8(w, cp);
    }
    return (size_t)(w - dst);
}

size_t la_jval_string(la_jval v, char *dst)
{
    if (v.n < 2) return 0;
    return decode(v.p + 1, v.p + v.n - 1, dst);
}

const char *la_jval_plain(la_jval v, size_t *n)
{
    if (v.n < 2 || memchr(v.p + 1, '\\', v.n - 2)) return NULL;
    *n = v.n - 2;
    return v.p + 1;
}

double la_jval_number(la_jval v)
{
    if (!v.n) return 0.0;
    if (*v.p == 't') return 1.0;
    if (*v.p == 'f') return 0.0;
    for (size_t i = 0; i < v.n; i++)
        if (v.p[i] == '.' || v.p[i] == 'e' || v.p[i] == 'E') return strtod(v.p, NULL);
    /* as json-c keeps integers: in 64 bits, signed below zero, unsigned above, saturated */
    if (*v.p == '-') return (double)strtoll(v.p, NULL, 10);
    return (double)strtoull(v.p, NULL, 10);
}

size_t la_jkey_decode(const char *k, size_t kn, char *dst)
{
    size_t n = decode(k, k + kn, dst);
    const char *nul = memchr(dst, '\0', n);
    return nul ? (size_t)(nul - dst) : n;
}

/* Does the raw key k[0..kn) name name[0..nn) as json-c reads keys? */
static int key_is(const char *k, size_t kn, const char *name, size_t nn)
{
    if (!memchr(k, '\\', kn)) return kn == nn && !memcmp(k, name, nn);
    if (nn > kn) return 0; /* a decoded key is no longer than its text */
    char small[256];
    char *buf = kn <= sizeof small ? small : malloc(kn);
    if (!buf) return 0;
    size_t n = la_jkey_decode(k, kn, buf);
    int same = n == nn && !memcmp(buf, name, nn);
    if (buf != small) free(buf);
    return same;
}

int la_jval_next(la_jval container, const char **at, la_jval *val, const char **key, size_t *kn)
{
    if (!container.p || container.n < 2 || (*container.p != '{' && *container.p != '[')) return 0;
    const char *end = container.p + container.n;
    const char *k = NULL;
    size_t n = 0;
    const char *p = next_item(*at ? *at : container.p + 1, end, *container.p == '{', &k, &n, val);
    if (!p) return 0;
    *at = p;
    if (key) *key = k;
    if (kn) *kn = n;
    return 1;
}

/* An index segment as get_path reads it with strtol: all of it a number, not negative. */
static int index_of(const char *name, size_t nn, long *k)
{
    char buf[32];
    if (nn == 0 || nn >= sizeof buf) return 0;
    memcpy(buf, name, nn);
    buf[nn] = '\0';
    char *e;
    *k = strtol(buf, &e, 10);
    return !*e && *k >= 0;
}

la_jval la_jval_member(la_jval obj, const char *name, size_t nn)
{
    la_jval found = {NULL, 0}, v;
    const char *at = NULL, *k;
    size_t kn;
    if (!obj.p) return found;
    if (*obj.p == '[') {
        long want;
        if (!index_of(name, nn, &want)) return found;
        for (long i = 0; la_jval_next(obj, &at, &v, NULL, NULL); i++)
            if (i == want) return v;
        return found;
    }
    if (*obj.p != '{') return found;
    while (la_jval_next(obj, &at, &v, &k, &kn))
        if (key_is(k, kn, name, nn)) found = v;
    return found;
}

/* The top-level member name[0..nn): the last one that matches. */
static la_jval top(const la_jrec *r, const char *name, size_t nn)
{
    la_jval found = {NULL, 0};
    for (size_t i = 0; i < r->n; i++)
        if (key_is(r->m[i].k, r->m[i].kn, name, nn)) found = r->m[i].v;
    if (r->rest) {
        const char *p = r->rest, *k;
        size_t kn;
        la_jval v;
        while ((p = next_item(p, r->end, 1, &k, &kn, &v)))
            if (key_is(k, kn, name, nn)) found = v;
    }
    return found;
}

la_jval la_jrec_member(const la_jrec *r, const char *name) { return top(r, name, strlen(name)); }

la_jval la_jrec_get(const la_jrec *r, const char *path)
{
    size_t len = strlen(path);
    la_jval v = top(r, path, len), none = {NULL, 0};
    if (v.p) return la_jval_type(v) == LA_JNULL ? none : v;
    if (!memchr(path, '.', len)) return v;
    /* segment by segment, as strtok splits them: empty segments are skipped */
    la_jval cur = la_jrec_value(r); /* no segment at all: the record itself, as get_path gives it */
    int first = 1;
    for (const char *seg = path; *seg;) {
        const char *dot = strchr(seg, '.');
        size_t sl = dot ? (size_t)(dot - seg) : strlen(seg);
        if (sl) {
            cur = first ? top(r, seg, sl) : la_jval_member(cur, seg, sl);
            first = 0;
            if (!cur.p) return cur;
        }
        if (!dot) break;
        seg = dot + 1;
    }
    return la_jval_type(cur) == LA_JNULL ? none : cur;
}
