/*
 * rand_fixture.h - random vectors for the similarity tests (test_simtile, test_semantic,
 * test_margin): an xorshift64 stream, Gaussian draws (Box-Muller) and random unit vectors, the
 * same sequence from a given seed on every platform. Define RAND_FIXTURE_SEED before including it;
 * each test file holds its own stream.
 */
#ifndef LA_RAND_FIXTURE_H
#define LA_RAND_FIXTURE_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>

#ifndef RAND_FIXTURE_SEED
#error "define RAND_FIXTURE_SEED before including rand_fixture.h"
#endif

static uint64_t rng = RAND_FIXTURE_SEED;

/* Uniform in [0, 1). */
static double urand(void) {
    rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
    return (double)(rng >> 11) / 9007199254740992.0;
}

/* Standard normal. */
static double nrand(void) {
    double u = urand() + 1e-12, v = urand();
    return sqrt(-2.0 * log(u)) * cos(6.283185307179586 * v);
}

/* v[0 .. d) scaled to unit length. */
static void unit(float *v, size_t d) {
    double ss = 0;
    for (size_t i = 0; i < d; i++) ss += (double)v[i] * v[i];
    for (size_t i = 0; i < d; i++) v[i] = (float)(v[i] / sqrt(ss));
}

/* A random direction: a Gaussian vector made unit. */
static inline void random_unit(float *v, size_t d) {
    for (size_t i = 0; i < d; i++) v[i] = (float)nrand();
    unit(v, d);
}

#endif /* LA_RAND_FIXTURE_H */
