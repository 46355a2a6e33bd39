/*
 * json_strict.h - the RFC 8259 rules json-c does not enforce, checked on the raw text of one JSONL
 * line. json-c (even with JSON_TOKENER_STRICT) accepts single
 * quotes, NaN and Infinity, raw control characters in strings, "1." and duplicate keys (the last
 * wins), and turns integers beyond 64 bits into one saturated value; rows like that would be copied
 * into manifests that standard JSON readers reject, or would merge different ids into one.
 * Not for: reading values (json_view.h reads them from text that passed).
 */
#ifndef LA_JSON_STRICT_H
#define LA_JSON_STRICT_H

#include <stddef.h>

#define LA_JSON_MAX_DEPTH 32

/* Check that s[0..n) is exactly one JSON value (surrounding white space allowed) under RFC 8259,
 * with no key twice in one object and no value LA_JSON_MAX_DEPTH levels below the outermost
 * (json-c's limit: 32 arrays one inside the next pass when the innermost is empty, not when it
 * holds a value). Returns 1 when it is; else 0 with the byte offset of the problem in
 * *at and a static description in *why; -1 when out of memory. */
int la_json_strict_check(const char *s, size_t n, size_t *at /* OUT */, const char **why /* OUT */);

/* The length of the JSON number (RFC 8259 grammar) that is all of s[0..n), or 0 when s is not one.
 * "0x1", "1.", ".5", "+1", "01", "NaN", "inf" and surrounding blanks are not numbers. */
size_t la_json_number_len(const char *s, size_t n);

#endif /* LA_JSON_STRICT_H */
