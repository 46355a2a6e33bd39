/*
 * simhash.c - the CPU loop of the weighted 64-bit SimHash (math in simhash_core.h). The input is a
 * sorted shingle multiset, so each run of equal hashes is one distinct shingle whose length is its
 * weight.
 */
#include "near_kernels.h"
#include "simhash_core.h"

/* Byte k of k_spread[b] is bit k of b: a shingle's 64 votes as eight 8-byte lanes, so one add
 * counts eight bits (SWAR). The counts are exact integers, so the fingerprint has the bits of
 * la_simhash_vote's loop (which the CUDA kernel runs): bit i is set when the weight of the
 * shingles with bit i set is more than half the total weight. */
#define SP(b) ((((uint64_t)(b) * 0x0101010101010101ull & 0x8040201008040201ull) + 0x7f7f7f7f7f7f7f7full) >> 7 & \
               0x0101010101010101ull)
#define SP4(b) SP(b), SP((b) + 1), SP((b) + 2), SP((b) + 3)
#define SP16(b) SP4(b), SP4((b) + 4), SP4((b) + 8), SP4((b) + 12)
#define SP64(b) SP16(b), SP16((b) + 16), SP16((b) + 32), SP16((b) + 48)
static const uint64_t k_spread[256] = {SP64(0), SP64(64), SP64(128), SP64(192)};

/* Move the byte counters into the 32-bit ones (a lane byte holds at most 255). */
static void flush(uint64_t lane[8], uint64_t ones[64])
{
    for (int j = 0; j < 8; j++) {
        for (int k = 0; k < 8; k++) ones[8 * j + k] += (lane[j] >> (8 * k)) & 0xff;
        lane[j] = 0;
    }
}

uint64_t la_cpu_simhash(const uint64_t *h, size_t n)
{
    uint64_t ones[64] = {0}, lane[8] = {0}, total = 0;
    unsigned held = 0; /* weight in the lanes since the last flush */
    size_t i = 0;
    while (i < n) {
        size_t j = i + 1;
        while (j < n && h[j] == h[i]) j++;
        uint64_t v = la_simhash_hash(h[i]);
        total += j - i;
        for (size_t w = j - i; w > 0;) {
            unsigned part = w < 255 ? (unsigned)w : 255;
            if (held + part > 255) {
                flush(lane, ones);
                held = 0;
            }
            for (int b = 0; b < 8; b++) lane[b] += k_spread[(v >> (8 * b)) & 0xff] * part;
            held += part;
            w -= part;
        }
        i = j;
    }
    flush(lane, ones);
    uint64_t s = 0;
    for (int b = 0; b < 64; b++)
        if (2 * ones[b] > total) s |= 1ull << b;
    return s;
}
