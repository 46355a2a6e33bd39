/* gpu_test.h - the few helpers the GPU parity tests share: a checking macro that reports file:line
 * and fails the test, a seeded generator, and the "no device: skip" rule (exit 77, which ctest
 * reports as skipped). */
#ifndef LA_GPU_TEST_H
#define LA_GPU_TEST_H

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "device.h"
#include "leakaudit.h"

static int g_failures;

#define CHECK(cond, ...)                                                   \
    do {                                                                   \
        if (!(cond)) {                                                     \
            fprintf(stderr, "%s:%d: check failed: %s: ", __FILE__, __LINE__, #cond); \
            fprintf(stderr, __VA_ARGS__);                                  \
            fprintf(stderr, "\n");                                         \
            g_failures++;                                                  \
        }                                                                  \
    } while (0)

#define CHECK_OK(expr)                                                     \
    do {                                                                   \
        la_status s_ = (expr);                                             \
        if (s_ != LA_OK) {                                                 \
            fprintf(stderr, "%s:%d: %s: %s: %s\n", __FILE__, __LINE__, #expr, \
                    la_strerror(s_), la_last_error());                     \
            exit(1);                                                       \
        }                                                                  \
    } while (0)

/* Exit 77 unless this build has CUDA and the runtime sees a device. */
static inline void require_device(void) {
    int n = 0;
    if (la_cuda_device_count(&n) != LA_OK || n == 0) {
        printf("skipped: %s\n", la_last_error());
        exit(77);
    }
}

static uint64_t g_rng = 0x9E3779B97F4A7C15ull;
static inline uint64_t rnd(void) {
    g_rng ^= g_rng << 13, g_rng ^= g_rng >> 7, g_rng ^= g_rng << 17;
    return g_rng;
}
static inline double urand(void) { return (double)(rnd() >> 11) / 9007199254740992.0; }
static inline double nrand(void) {
    double u = urand() + 1e-12, v = urand();
    return sqrt(-2.0 * log(u)) * cos(6.283185307179586 * v);
}
static inline void unit(float *v, size_t d) {
    double ss = 0;
    for (size_t i = 0; i < d; i++) ss += (double)v[i] * v[i];
    for (size_t i = 0; i < d; i++) v[i] = (float)(v[i] / sqrt(ss));
}

static inline int finish(const char *name) {
    if (g_failures) {
        fprintf(stderr, "%s: %d checks failed\n", name, g_failures);
        return 1;
    }
    printf("%s: all checks passed\n", name);
    return 0;
}

#endif /* LA_GPU_TEST_H */
