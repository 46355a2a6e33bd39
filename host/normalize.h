/*
 * normalize.h - the normalized form of a row's text and its 128-bit exact-copy hash.
 *   nfkc  (default): Unicode NFKC + case folding (utf8proc), whitespace runs -> one space, trimmed
 *   space: whitespace runs -> one space, trimmed; nothing else changes
 *   none : the text exactly as read
 * Whitespace means Unicode separators (Zs, Zl, Zp) and the ASCII/Latin-1 controls \t \n \v \f \r U+0085.
 * The hash is XXH3-128 (seed 0) of the normalized UTF-8 bytes.
 */
#ifndef LA_NORMALIZE_H
#define LA_NORMALIZE_H

#include "leakaudit.h"

typedef enum la_norm_mode { LA_NORM_NFKC = 0, LA_NORM_SPACE, LA_NORM_NONE } la_norm_mode;

la_status la_norm_mode_parse(const char *s, la_norm_mode *out /* OUT */);
const char *la_norm_mode_name(la_norm_mode m);

/* Normalize s (n bytes of UTF-8) into a malloc'ed NUL-terminated string owned by the caller.
 * Runs of ASCII are folded and collapsed here; only the non-ASCII pieces (each with the ASCII
 * character before it, which a combining mark may compose with) go through utf8proc. The output is
 * byte for byte la_normalize_ref's. In nfkc mode text that is not valid UTF-8 is LA_EINPUT; in space
 * mode bytes that do not decode are kept. Thread-safe. */
la_status la_normalize(const char *s, size_t n, la_norm_mode mode, char **out /* OUT */, size_t *outlen /* OUT */);

/* la_normalize into a buffer the caller reuses across texts: *buf (capacity *cap bytes; NULL and 0
 * to start) is grown with realloc as needed and holds the NUL-terminated result, *outlen bytes. On
 * failure too *buf and *cap are the caller's to reuse or free. Thread-safe. */
la_status la_normalize_into(const char *s, size_t n, la_norm_mode mode, char **buf /* IN/OUT */, size_t *cap /* IN/OUT */,
                            size_t *outlen /* OUT */);

/* The reference la_normalize is tested against: utf8proc over the whole text, then whitespace
 * collapsing. Same contract; several times slower on ASCII text. */
la_status la_normalize_ref(const char *s, size_t n, la_norm_mode mode, char **out /* OUT */,
                           size_t *outlen /* OUT */);

/* XXH3-128 of the bytes. */
void la_text_hash128(const char *s, size_t n, uint64_t out[2]);

/* Fill norm, norm_len and hash for every row with text (rows without text keep norm NULL), using up
 * to `threads` threads (0 = all cores). Output does not depend on the thread count. */
la_status la_normalize_table(la_table *t, la_norm_mode mode, int threads);

#endif /* LA_NORMALIZE_H */
