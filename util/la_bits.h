/*
 * la_bits.h - setting a bit of a bit set (a filter). A filter that several threads fill is filled
 * in one copy a thread and the copies ORed together (index/near.c, index/grade.c): threads setting
 * bits of one set, atomically, took each other's cache lines on every other key.
 */
#ifndef LA_BITS_H
#define LA_BITS_H

#include <stddef.h>
#include <stdint.h>

/* Bit `bit` of words[] set. */
static inline void la_bit_set(uint64_t *words, size_t bit) { words[bit >> 6] |= 1ull << (bit & 63); }

#endif /* LA_BITS_H */
