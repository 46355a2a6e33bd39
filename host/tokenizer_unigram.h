/*
 * tokenizer_unigram.h - the SentencePiece unigram tokenizer from a `tokenizer.json` (the
 * `tokenizers` serialization): model "Unigram" (pieces with log-probability scores, unk_id), the
 * normalizers NFC/NFD/NFKC/NFKD, Lowercase, Strip, Replace (literal patterns) and Sequence, the
 * pre-tokenizers WhitespaceSplit, Metaspace (prepend_scheme always/first/never, split) and
 * Sequence. Each word is cut by Viterbi: the segmentation with the highest sum of piece scores;
 * a character no piece covers is unknown (score: the lowest piece score minus 10) and runs of
 * unknowns fuse into one unk id, as the reference implementation does. A normalizer or
 * pre-tokenizer outside that list (for example "Precompiled", the compiled SentencePiece charsmap
 * of XLM-R models) is refused naming the file and field; Replace takes literal patterns and the
 * one regular expression of XLM-R tokenizers (" {2,}" to " "). Not for: byte fallback, added tokens.
 *
 * la_unigram_new_pieces builds the same tokenizer from a vocabulary held elsewhere (a model file
 * that carries its own pieces, scores and per-character normalization, host/e5s1.h): the
 * normalization map, then runs of spaces collapsed to one, then Metaspace ("\u2581", prepended,
 * split), as XLM-R's SentencePiece model does.
 */
#ifndef LA_TOKENIZER_UNIGRAM_H
#define LA_TOKENIZER_UNIGRAM_H

#include <stddef.h>
#include <stdint.h>

#include "leakaudit.h"

typedef struct la_unigram la_unigram;

/* A vocabulary held elsewhere: piece(ctx, i, &len, &score) returns piece i's bytes (copied). Pieces
 * listed in skip (special tokens such as <s>) are never matched in text. The normalization map
 * gives code point map_cp[i] (ascending) the replacement map_rep[map_off[i] .. map_off[i+1]). */
typedef struct la_unigram_pieces {
    size_t n;
    const char *(*piece)(const void *ctx, size_t i, size_t *len, float *score);
    const void *ctx;
    int32_t unk;
    const int32_t *skip;
    size_t nskip;
    const uint32_t *map_cp, *map_off, *map_rep;
    size_t nmap, nrep;
    int compose; /* NFKC before the map */
} la_unigram_pieces;
la_status la_unigram_new_pieces(const la_unigram_pieces *p, la_unigram **out /* OUT */);

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
