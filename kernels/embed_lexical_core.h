/*
 * embed_lexical_core.h - per-element math of the built-in `lexical` embedding (embed_lexical.c).
 *
 * A feature (a word, a word bigram or a character n-gram) is a 64-bit hash. Its high bits pick a
 * document-frequency slot, its low bits the output dimension, bit 32 the sign (signed feature
 * hashing: collisions cancel in expectation instead of inflating every cosine). Weights are
 * sublinear term frequency times smoothed inverse document frequency.
 */
#ifndef LA_EMBED_LEXICAL_CORE_H
#define LA_EMBED_LEXICAL_CORE_H

#include <math.h>
#include <stdint.h>

#include "la_hd.h"

/* log2 of the number of document-frequency slots (4M x 4 bytes). */
#define LA_LEX_DF_BITS 22

LA_HD static inline uint32_t la_lex_df_slot(uint64_t h) {
    return (uint32_t)(h >> (64 - LA_LEX_DF_BITS));
}

LA_HD static inline uint32_t la_lex_dim(uint64_t h, uint32_t dim) {
    return (uint32_t)((h & 0xFFFFFFFFu) % dim);
}

LA_HD static inline float la_lex_sign(uint64_t h) {
    return (h >> 32) & 1u ? -1.0f : 1.0f;
}

/* sublinear term frequency: 1 + ln(tf), tf >= 1 */
LA_HD static inline float la_lex_tf(uint32_t tf) {
    return 1.0f + logf((float)tf);
}

/* smoothed inverse document frequency: ln((1 + n) / (1 + df)) + 1 */
LA_HD static inline float la_lex_idf(uint64_t ndocs, uint32_t df) {
    return logf((1.0f + (float)ndocs) / (1.0f + (float)df)) + 1.0f;
}

/* UTF-8: does byte b start a code point? */
LA_HD static inline int la_lex_cp_start(unsigned char b) {
    return (b & 0xC0u) != 0x80u;
}

/* Is byte b part of a word? ASCII letters and digits, and every byte of a non-ASCII code point
 * (letters of other scripts). */
LA_HD static inline int la_lex_word_byte(unsigned char b) {
    return b >= 0x80u || (b >= '0' && b <= '9') || (b >= 'a' && b <= 'z') || (b >= 'A' && b <= 'Z');
}

#endif /* LA_EMBED_LEXICAL_CORE_H */
