/*
 * json_view.h - the values of one JSON object read straight from its text, with no tree built and
 * nothing allocated: a member by name or by dotted path, its type, a string's decoded bytes, a
 * number's value, an array's elements, an object's keys. The text must have passed
 * la_json_strict_check as one object. Values read here are the ones json-c gives for the same
 * text: a lone surrogate escape decodes to U+FFFD, a key ends at an escaped U+0000 (and of two keys
 * that are then equal the last one holds), an integer beyond 64 bits is saturated as json-c
 * saturates it.
 * Not for: checking text (json_strict.h does that) or building JSON.
 */
#ifndef LA_JSON_VIEW_H
#define LA_JSON_VIEW_H

#include <stddef.h>

typedef enum la_jtype { LA_JNULL, LA_JBOOL, LA_JNUMBER, LA_JSTRING, LA_JARRAY, LA_JOBJECT } la_jtype;

/* A value: its literal text [p, p + n), quotes and brackets included; p NULL when absent. */
typedef struct la_jval {
    const char *p;
    size_t n;
} la_jval;

/* How many top-level members la_jrec holds in its index; a record with more is searched from its
 * text past them. */
#define LA_JREC_MEMBERS 24

/* An object's top-level members, found in one pass over its text. Borrows the text. */
typedef struct la_jrec {
    const char *s, *end;
    size_t n;                /* members in m */
    const char *rest;        /* where the members past the index start, or NULL when all are in m */
    struct {
        const char *k;       /* the key's text between its quotes, escapes as written */
        size_t kn;
        la_jval v;
    } m[LA_JREC_MEMBERS];
} la_jrec;

/* Is the line s[0..n), which passed la_json_strict_check, one object as json-c reads a JSONL line?
 * It is when it starts with '{' after white space and ends with '}' before spaces and tabs (json-c
 * takes a trailing carriage return into what it parsed, and the rest of the line must be blank). */
int la_jrec_is_line(const char *s, size_t n);

/* Index the object s[0..n) (white space around it allowed). */
void la_jrec_open(la_jrec *r, const char *s, size_t n);

/* The value at `path`: the member named `path` itself, else the dotted path through objects and
 * array indices ("a.b.0.c"; empty segments are skipped, and a path of dots alone is the record).
 * Absent, or null (json-c gives no object for null, and a member `path` that is null ends the
 * search): p NULL. */
la_jval la_jrec_get(const la_jrec *r, const char *path);

/* The top-level member named `name` itself (no path), null or not. Absent: p NULL. */
la_jval la_jrec_member(const la_jrec *r, const char *name);

/* The whole record as a value (an object). */
la_jval la_jrec_value(const la_jrec *r);

la_jtype la_jval_type(la_jval v);

/* A string's decoded bytes into dst, which has room for v.n bytes (a decoded string is never
 * longer than its literal); returns how many. No terminating NUL is written. */
size_t la_jval_string(la_jval v, char *dst /* OUT */);

/* A string with no escapes: its bytes in the text (*n set); NULL when it has escapes. */
const char *la_jval_plain(la_jval v, size_t *n /* OUT */);

/* A number's value as json-c gives it: an integer literal through 64-bit integers (saturated),
 * any other through strtod. A boolean is 1 or 0. */
double la_jval_number(la_jval v);

/* The member of object `obj` named name[0..nn) (the last one, as json-c keeps it), or element
 * name of array `obj` when name is a decimal index. Absent: p NULL. */
la_jval la_jval_member(la_jval obj, const char *name, size_t nn);

/* Walk an array's elements or an object's members: *at starts NULL; each call sets *val (and for an
 * object *key, the key's raw text between its quotes, and *kn) and returns 1, or returns 0 at the end. */
int la_jval_next(la_jval container, const char **at /* IN/OUT */, la_jval *val /* OUT */, const char **key /* OUT */,
                 size_t *kn /* OUT */);

/* A key's raw text decoded as json-c keeps it (up to an escaped U+0000) into dst (room kn bytes);
 * returns how many bytes. */
size_t la_jkey_decode(const char *k, size_t kn, char *dst /* OUT */);

#endif /* LA_JSON_VIEW_H */
