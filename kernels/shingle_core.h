/*
 * shingle_core.h - per-element math of shingling, shared by the CPU loop (shingle.c) and a CUDA twin.
 *
 * A shingle is n consecutive tokens of the normalized text: words (maximal runs of bytes that are not
 * ASCII whitespace or ASCII punctuation; bytes >= 0x80 belong to words, so UTF-8 letters stay inside
 * them) or characters (Unicode code points, with every run of ASCII whitespace read as one space).
 * Every shingle becomes one 64-bit hash built only from the functions below, so a kernel compiled by
 * nvcc produces the very same integers:
 *
 *   token hash   word:  la_hash_bytes(bytes)    char: la_mix64(code point ^ LA_CHAR_SEED)
 *   shingle hash of tokens t_0 .. t_{n-1} (oldest first):
 *                la_mix64(LA_SHINGLE_SEED ^ n ^ XOR over k of rotl64(t_k, 13 * k mod 64))
 *
 * The rotation makes the hash order-sensitive ("a b" differs from "b a"); one la_mix64 per shingle
 * whatever n is keeps shingling cheap next to MinHash.
 *
 * la_mix64 is the SplitMix64 finalizer (a bijection of 64-bit integers with full avalanche). The
 * seeds are fixed constants: hashes are identical across runs, machines, thread counts and backends.
 * This file knows nothing of memory allocation, threads or files.
 */
#ifndef LA_SHINGLE_CORE_H
#define LA_SHINGLE_CORE_H

#include <stddef.h>
#include <stdint.h>

#include "la_hd.h"

#define LA_SHINGLE_SEED 0x6c65616b61756469ull /* "leakaudi" */
#define LA_SHINGLE_BYTES_SEED 0x9e3779b97f4a7c15ull
#define LA_CHAR_SEED 0x636861727365656full /* "charseeo" */

#ifndef LA_SHINGLE_MAX_N
#define LA_SHINGLE_MAX_N 32 /* the largest n of an n-gram (also in near_kernels.h) */
#endif

/* SplitMix64 finalizer (Steele, Lea, Flood 2014): a bijection with full avalanche. */
static inline LA_HD uint64_t la_mix64(uint64_t x)
{
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9ull;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebull;
    x ^= x >> 31;
    return x;
}

static inline LA_HD uint64_t la_rotl64(uint64_t x, int r) { return r ? (x << r) | (x >> (64 - r)) : x; }

/* Token hash of one code point. */
static inline LA_HD uint64_t la_char_token(uint32_t cp) { return la_mix64((uint64_t)cp ^ LA_CHAR_SEED); }

/* 64-bit hash of a byte string: little-endian 8-byte words folded through la_mix64 (each followed by
 * adding the golden ratio constant), the last (partial, zero-padded) word mixed together with the
 * length. Strings of up to 8 bytes, most words, cost one la_mix64. Reads bytes one at a time, so it
 * needs no alignment and gives the same value on any host. */
static inline LA_HD uint64_t la_hash_bytes(const unsigned char *p, size_t n)
{
    uint64_t h = LA_SHINGLE_BYTES_SEED;
    size_t i = 0;
    for (; i + 8 < n; i += 8) {
        uint64_t w = 0;
        for (int k = 0; k < 8; k++) w |= (uint64_t)p[i + k] << (8 * k);
        h = la_mix64(h ^ w) + 0x9e3779b97f4a7c15ull;
    }
    uint64_t w = 0;
    for (int k = 0; i + k < n; k++) w |= (uint64_t)p[i + k] << (8 * k);
    return la_mix64(h ^ w ^ ((uint64_t)n << 56) ^ (uint64_t)n);
}

/* Word characters: everything except ASCII whitespace and ASCII punctuation. */
static inline LA_HD int la_is_word_byte(unsigned char c)
{
    if (c >= 0x80) return 1;
    if (c >= '0' && c <= '9') return 1;
    if ((c | 0x20) >= 'a' && (c | 0x20) <= 'z') return 1;
    return 0;
}

static inline LA_HD int la_is_space_byte(unsigned char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

/* Decode one UTF-8 code point at p[0..n). Stores its length in *len (>= 1). Malformed bytes decode as
 * themselves (one byte, value 0x110000 + byte) so that no input is ever skipped or read past n. */
static inline LA_HD uint32_t la_utf8_next(const unsigned char *p, size_t n, size_t *len)
{
    unsigned char c = p[0];
    if (c < 0x80) {
        *len = 1;
        return c;
    }
    int need;
    uint32_t cp;
    if ((c & 0xe0) == 0xc0) {
        need = 1;
        cp = c & 0x1f;
    } else if ((c & 0xf0) == 0xe0) {
        need = 2;
        cp = c & 0x0f;
    } else if ((c & 0xf8) == 0xf0) {
        need = 3;
        cp = c & 0x07;
    } else {
        *len = 1;
        return 0x110000u + c;
    }
    if ((size_t)need >= n) {
        *len = 1;
        return 0x110000u + c;
    }
    for (int k = 1; k <= need; k++) {
        if ((p[k] & 0xc0) != 0x80) {
            *len = 1;
            return 0x110000u + c;
        }
        cp = (cp << 6) | (p[k] & 0x3f);
    }
    *len = (size_t)need + 1;
    return cp;
}

/* Shingle hash of the last n tokens of a ring buffer. `ring` holds `cap` slots, `end` is the index
 * one past the newest token. */
static inline LA_HD uint64_t la_shingle_fold(const uint64_t *ring, int cap, int end, int n)
{
    uint64_t h = LA_SHINGLE_SEED ^ (uint64_t)n;
    int idx = end - n;
    if (idx < 0) idx += cap;
    for (int k = 0; k < n; k++) {
        h ^= la_rotl64(ring[idx], (13 * k) & 63);
        if (++idx == cap) idx = 0;
    }
    return la_mix64(h);
}

/* The reference shingling loops, one token at a time: the CPU's character path and the device use
 * them as they are, and the CPU's word path (a vectorized scan) is tested against la_shingle_words.
 * Both count every shingle and write the first `cap` of them to out; the count is returned. */

/* Word n-grams: tokens are maximal runs of word bytes; a text with fewer than n words gives one
 * shingle of all its words. */
static inline LA_HD size_t la_shingle_words(const unsigned char *p, size_t len, int n, uint64_t *out, size_t cap)
{
    uint64_t ring[LA_SHINGLE_MAX_N];
    size_t ntok = 0, nout = 0, i = 0;
    int end = 0;
    while (i < len) {
        while (i < len && !la_is_word_byte(p[i])) i++;
        if (i >= len) break;
        size_t s = i;
        while (i < len && la_is_word_byte(p[i])) i++;
        ring[end] = la_hash_bytes(p + s, i - s);
        if (++end == n) end = 0;
        ntok++;
        if (ntok >= (size_t)n) {
            if (nout < cap) out[nout] = la_shingle_fold(ring, n, end, n);
            nout++;
        }
    }
    if (ntok > 0 && ntok < (size_t)n) {
        if (nout < cap) out[nout] = la_shingle_fold(ring, n, end, (int)ntok);
        nout++;
    }
    return nout;
}

/* Character n-grams over code points; leading and trailing whitespace is dropped and every inner
 * whitespace run reads as one space. */
static inline LA_HD size_t la_shingle_chars(const unsigned char *p, size_t len, int n, uint64_t *out, size_t cap)
{
    uint64_t ring[LA_SHINGLE_MAX_N];
    size_t ntok = 0, nout = 0, i = 0;
    int end = 0;
    while (len > 0 && la_is_space_byte(p[len - 1])) len--;
    while (i < len && la_is_space_byte(p[i])) i++;
    while (i < len) {
        uint32_t cp;
        if (la_is_space_byte(p[i])) {
            while (i < len && la_is_space_byte(p[i])) i++;
            cp = ' ';
        } else {
            size_t l;
            cp = la_utf8_next(p + i, len - i, &l);
            i += l;
        }
        ring[end] = la_char_token(cp);
        if (++end == n) end = 0;
        ntok++;
        if (ntok >= (size_t)n) {
            if (nout < cap) out[nout] = la_shingle_fold(ring, n, end, n);
            nout++;
        }
    }
    if (ntok > 0 && ntok < (size_t)n) {
        if (nout < cap) out[nout] = la_shingle_fold(ring, n, end, (int)ntok);
        nout++;
    }
    return nout;
}

#endif /* LA_SHINGLE_CORE_H */
