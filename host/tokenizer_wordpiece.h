/*
 * tokenizer_wordpiece.h - the BERT WordPiece tokenizer, from a `vocab.txt` (one token per line,
 * the line number is the id).
 *
 * Text goes through the BERT basic tokenizer first: control characters dropped, whitespace
 * unified, CJK ideographs split into single characters, accents stripped (NFD, then nonspacing
 * marks removed) and lower-casing when the model is uncased, then split on whitespace and around
 * every punctuation character. Each word is cut greedily into the longest vocabulary pieces from
 * the left, continuation pieces carrying "##"; a word with no cut, or longer than 100 characters,
 * becomes [UNK]. This is what the reference `tokenizers` BertNormalizer + BertPreTokenizer +
 * WordPiece pipeline does; tests/unit/test_wordpiece.c holds golden tokenizations made with it.
 * Not for: pair inputs or offsets.
 */
#ifndef LA_TOKENIZER_WORDPIECE_H
#define LA_TOKENIZER_WORDPIECE_H

#include <stddef.h>
#include <stdint.h>

#include "leakaudit.h"

typedef struct la_wordpiece la_wordpiece;

/* Read `vocab_path`. lowercase: fold case (uncased models); strip_accents: 1, 0, or -1 to follow
 * lowercase (the reference default). The vocabulary must hold [UNK], [CLS] and [SEP]; errors name
 * the file and line. Free with la_wordpiece_free. */
la_status la_wordpiece_new(const char *vocab_path, int lowercase, int strip_accents, la_wordpiece **out /* OUT */);
void la_wordpiece_free(la_wordpiece *w);

/* Token ids of `text` (n bytes, UTF-8; invalid bytes are dropped), with no [CLS]/[SEP], appended
 * to *ids (grown with realloc; *n and *cap updated). Thread-safe on a shared la_wordpiece. */
la_status la_wordpiece_encode(const la_wordpiece *w, const char *text, size_t n, int32_t **ids, size_t *nids,
                              size_t *cap);

/* The id of a vocabulary token, or -1. */
int32_t la_wordpiece_id(const la_wordpiece *w, const char *token);
/* The token of an id (borrowed), or NULL. */
const char *la_wordpiece_token(const la_wordpiece *w, int32_t id);
size_t la_wordpiece_size(const la_wordpiece *w);

#endif /* LA_TOKENIZER_WORDPIECE_H */
