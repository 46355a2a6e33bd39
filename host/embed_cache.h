/*
 * embed_cache.h - the sentence encoder's vectors kept between runs (`--cache DIR`): per text, its
 * windows (byte ranges) and their vectors, keyed by the BLAKE2b-128 of the text as encoded, in one
 * file per settings (everything that changes a vector: the model's name, weights and tokenizer
 * files, its prompt and dimension, the encoder's numerics version, the backend). Only the built-in
 * encoder's vectors are cached; a vector read back has the bits a fresh computation gives because
 * the CPU encoder is batch-invariant (encoder.h).
 *
 * The file, DIR/embed-<16 hex of the settings' hash>.lacache: "LAEMBC01", u32 0x0A0B0C0D (the
 * byte order), u32 format version, u32 dimension, u32 settings length, the settings text, u64
 * entries, then per entry the 16-byte key, u32 window setting (0: the text is one window, valid
 * for any setting; LA_EMBED_CACHE_CUT: cut at the model window), u32 windows, their begin/end
 * pairs (u32) and vectors (float32), and last the BLAKE2b-256 of everything before. A file that
 * does not check out (other format, settings, byte order, a bad checksum, cut short) is ignored
 * with a note and replaced when the run saves. Saving writes a temporary file in DIR and renames
 * it over the old one once it is on disk (fsync): a reader sees the old file or the new, never
 * half of one.
 */
#ifndef LA_EMBED_CACHE_H
#define LA_EMBED_CACHE_H

#include <stddef.h>
#include <stdint.h>

#include "leakaudit.h"

#define LA_EMBED_CACHE_CUT UINT32_MAX

typedef struct la_embed_cache la_embed_cache;

/* Open (or start) the cache in dir (created when missing) for vectors of dim floats made under
 * `settings`. note (cap bytes) gets why an existing file was ignored, or "". Free with
 * la_embed_cache_free. LA_EIO when dir cannot be made or read. */
la_status la_embed_cache_open(const char *dir, const char *settings, size_t dim, la_embed_cache **out /* OUT */,
                              char *note /* OUT */, size_t cap);
void la_embed_cache_free(la_embed_cache *c);

#define LA_EMBED_CACHE_KEY 16

/* The key of text[0..len): its BLAKE2b-128. Computed once per text and used for get and put. */
void la_embed_cache_key(const char *text, size_t len, unsigned char key[LA_EMBED_CACHE_KEY] /* OUT */);

/* The cached windows of the text with this key for window setting win (an entry of setting 0
 * matches any): 1 and *nwin, *begin, *end (nwin pairs) and *vec (nwin x dim) borrowed until the
 * next put or free; 0 when not cached. */
int la_embed_cache_get(const la_embed_cache *c, const unsigned char key[LA_EMBED_CACHE_KEY], uint32_t win,
                       size_t *nwin /* OUT */, const uint32_t **begin /* OUT */, const uint32_t **end /* OUT */,
                       const float **vec /* OUT */);

/* Record the windows of the text with this key (replacing an entry of the same key). */
la_status la_embed_cache_put(la_embed_cache *c, const unsigned char key[LA_EMBED_CACHE_KEY], uint32_t win,
                             size_t nwin, const uint32_t *begin, const uint32_t *end, const float *vec);

/* The cache file's path (borrowed). */
const char *la_embed_cache_path(const la_embed_cache *c);

/* Write the cache file (temporary file, then rename). The path written into path (cap bytes). */
la_status la_embed_cache_save(la_embed_cache *c, char *path /* OUT */, size_t cap);

#endif /* LA_EMBED_CACHE_H */
