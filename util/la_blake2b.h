/*
 * la_blake2b.h - BLAKE2b (RFC 7693), the hash of every fingerprint the tool writes: input files,
 * models, shards, split keys. The same digests as libsodium's crypto_generichash, whose calls these
 * mirror; a portable 64-bit loop (compiled a second time for BMI2's rotate, taken where the CPU has
 * it), which on the CPUs measured (docs/performance.md) runs faster than the vector code libsodium
 * picks at sodium_init, and does not depend on whether anything called it.
 */
#ifndef LA_BLAKE2B_H
#define LA_BLAKE2B_H

#include <stddef.h>
#include <stdint.h>

enum { LA_BLAKE2B_BLOCK = 128, LA_BLAKE2B_OUT_MAX = 64, LA_BLAKE2B_KEY_MAX = 64 };

typedef struct la_blake2b_state {
    uint64_t h[8];
    uint64_t t[2];                          /* bytes compressed so far, 128-bit */
    unsigned char buf[LA_BLAKE2B_BLOCK];    /* the block not yet compressed (the last is compressed at final) */
    size_t buflen;
    size_t outlen;
} la_blake2b_state;

/* Start a hash of outlen bytes (1..64), keyed when keylen (0..64) is not 0. Returns 0, or -1 for
 * lengths out of range. */
int la_blake2b_init(la_blake2b_state *st, const unsigned char *key, size_t keylen, size_t outlen);
void la_blake2b_update(la_blake2b_state *st, const unsigned char *in, size_t n);
/* The digest (outlen bytes, at most the length given to init) into out. */
void la_blake2b_final(la_blake2b_state *st, unsigned char *out, size_t outlen);
/* For tests: 1 makes every hash take the rounds compiled for any x86-64 CPU even where the CPU has
 * BMI2 (0 gives it back the CPU's choice); returns whether the CPU has BMI2 (0 on other hosts). */
int la_blake2b_portable(int portable);
/* All at once. Returns 0, or -1 for lengths out of range. */
int la_blake2b(unsigned char *out, size_t outlen, const unsigned char *in, size_t n, const unsigned char *key,
               size_t keylen);

#endif /* LA_BLAKE2B_H */
