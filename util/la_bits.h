/*
 * la_bits.h - setting a bit of a bit set (a filter) that one thread or several fill at once.
 */
#ifndef LA_BITS_H
#define LA_BITS_H

#include <stddef.h>
#include <stdint.h>

/* Bit `bit` of words[] set; with `shared` (other threads set bits of the same words at the same
 * time) by an atomic or, and only when it is not set yet, so that a bit most keys share is not
 * written again by every one of them. */
static inline void la_bit_set(uint64_t *words, size_t bit, int shared)
{
    uint64_t m = 1ull << (bit & 63), *w = &words[bit >> 6];
    if (!shared)
        *w |= m;
    else if (!(__atomic_load_n(w, __ATOMIC_RELAXED) & m))
        __atomic_fetch_or(w, m, __ATOMIC_RELAXED);
}

#endif /* LA_BITS_H */
