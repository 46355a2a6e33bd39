/*
 * tokenizer_unigram.h - the SentencePiece unigram tokenizer from a `tokenizer.json` (the
 * `tokenizers` serialization): model "Unigram" (pieces with log-probability scores, unk_id), the
 * normalizers NFC/NFD/NFKC/NFKD, Lowercase, Strip, Replace (literal patterns) and Sequence, the
 * pre-tokenizers WhitespaceSplit, Metaspace (prepend_scheme always/first/never, split) and
 * Sequence. Each word is cut by Viterbi: the segmentation with the highest sum of piece scores;
 * a character no piece covers is unknown (score: the lowest piece score minus 10) and runs of
 * unknowns fuse into one unk id, as the reference implementation does. A normalizer or
 * pre-tokenizer outside that list (for example "Precompiled", the compiled SentencePiece charsmap
 * of XLM-R models) is refused naming the file and field. Not for: byte fallback, added tokens.
 */
#ifndef LA_TOKENIZER_UNIGRAM_H
#define LA_TOKENIZER_UNIGRAM_H

#include <stddef.h>
#include <stdint.h>

#include "leakaudit.h"

typedef struct la_unigram la_unigram;

/* Read `path` (tokenizer.json). Errors name the file and field. Free with la_unigram_free. */
la_status la_unigram_new(const char *path, la_unigram **out /* OUT */);
void la_unigram_free(la_unigram *u);

/* Ids of text (n bytes of UTF-8), appended to *ids (grown with realloc). Thread-safe. */
la_status la_unigram_encode(const la_unigram *u, const char *text, size_t n, int32_t **ids, size_t *nids,
                            size_t *cap);

size_t la_unigram_size(const la_unigram *u);
/* The piece of an id (borrowed), or NULL. */
const char *la_unigram_piece(const la_unigram *u, int32_t id);

#endif /* LA_TOKENIZER_UNIGRAM_H */
