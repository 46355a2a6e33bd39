/*
 * bench_encoder.c - speed of the encoder forward pass on the CPU or the GPU, on MiniLM-L6-shaped
 * weights (6 layers, hidden 384, 12 heads, feed-forward 1536, vocabulary 30522), random values:
 * the speed does not depend on them, so the device run needs no model files. Sequences of random
 * ids with lengths uniform in [LEN/2, LEN] (framed), packed in batches of BATCH sequences sorted
 * by length, as host/model.c batches them.
 *
 *   bench_encoder cpu|gpu N LEN BATCH     prints sentences/s, tokens/s and GEMM GFLOP/s
 *   bench_encoder parity N LEN            the GPU against the CPU: lowest cosine of N vectors
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "encoder.h"
#include "encoder_cuda.h"

static uint64_t rng = 88172645463325252ull;
static float frand(void)
{
    rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
    return (float)((double)(rng >> 11) / 9007199254740992.0 * 2 - 1);
}

static float *arr(size_t n, float scale, float off)
{
    float *p = malloc(n * sizeof *p);
    for (size_t i = 0; i < n; i++) p[i] = off + scale * frand();
    return p;
}

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static void minilm_shape(la_encoder_weights *w, la_encoder_layer *L)
{
    la_encoder_config c = {30522, 384, 12, 6, 1536, 512, 2, 1e-12f, 0};
    w->c = c;
    size_t H = c.hidden, NI = c.intermediate;
    w->tok = arr((size_t)c.vocab * H, 0.05f, 0);
    w->pos = arr((size_t)c.max_pos * H, 0.05f, 0);
    w->type = arr(H, 0.05f, 0);
    w->emb_ln_g = arr(H, 0.1f, 1);
    w->emb_ln_b = arr(H, 0.1f, 0);
    for (uint32_t l = 0; l < c.layers; l++) {
        L[l].qkv_w = arr(3 * H * H, 0.05f, 0), L[l].qkv_b = arr(3 * H, 0.02f, 0);
        L[l].out_w = arr(H * H, 0.05f, 0), L[l].out_b = arr(H, 0.02f, 0);
        L[l].ln1_g = arr(H, 0.1f, 1), L[l].ln1_b = arr(H, 0.1f, 0);
        L[l].ffn1_w = arr(NI * H, 0.05f, 0), L[l].ffn1_b = arr(NI, 0.02f, 0);
        L[l].ffn2_w = arr(H * NI, 0.05f, 0), L[l].ffn2_b = arr(H, 0.02f, 0);
        L[l].ln2_g = arr(H, 0.1f, 1), L[l].ln2_b = arr(H, 0.1f, 0);
    }
    w->layer = L;
}

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr, "usage: bench_encoder cpu|gpu N LEN BATCH | bench_encoder parity N LEN\n");
        return 2;
    }
    const char *mode = argv[1];
    size_t n = strtoul(argv[2], NULL, 10), len = strtoul(argv[3], NULL, 10);
    size_t batch = argc > 4 ? strtoul(argv[4], NULL, 10) : 64;
    if (!strcmp(mode, "parity")) batch = n;
    la_encoder_weights w;
    la_encoder_layer L[6];
    minilm_shape(&w, L);
    uint32_t *lens = malloc(n * sizeof *lens);
    for (size_t i = 0; i < n; i++) lens[i] = (uint32_t)(len / 2 + (rng = rng * 6364136223846793005ull + 1, rng >> 33) % (len / 2 + 1));
    qsort(lens, n, sizeof *lens, cmp_u32);
    size_t total = 0;
    for (size_t i = 0; i < n; i++) total += lens[i];
    int32_t *ids = malloc(total * sizeof *ids);
    for (size_t t = 0; t < total; t++) ids[t] = (int32_t)((rng = rng * 6364136223846793005ull + 1, rng >> 33) % 30522);
    uint32_t *start = malloc((n + 1) * sizeof *start);
    start[0] = 0;
    for (size_t i = 0; i < n; i++) start[i + 1] = start[i] + lens[i];
    float *out = malloc(n * 384 * sizeof *out), *ref = NULL;
    int gpu = strcmp(mode, "cpu") != 0;
    la_encoder_ws ws = {0};
    double t0 = now();
    for (size_t i = 0; i < n; i += batch) {
        size_t k = n - i < batch ? n - i : batch;
        uint32_t st[k + 1];
        for (size_t j = 0; j <= k; j++) st[j] = start[i + j] - start[i];
        la_encoder_batch b = {ids + start[i], st, k};
        la_status s = gpu ? la_cuda_encoder_forward(&w, &b, &ws, out + i * 384)
                          : la_cpu_encoder_forward(&w, &b, &ws, out + i * 384);
        if (s != LA_OK) {
            fprintf(stderr, "bench_encoder: %s\n", la_last_error());
            return s == LA_EUNSUPPORTED || s == LA_ENODEV ? 77 : 1;
        }
        if (i == 0 && gpu) t0 = now(); /* the first batch uploads the weights */
    }
    double dt = now() - t0;
    if (!strcmp(mode, "parity")) {
        ref = malloc(n * 384 * sizeof *ref);
        la_encoder_batch b = {ids, start, n};
        la_cpu_encoder_forward(&w, &b, &ws, ref);
        double worst = 2;
        for (size_t i = 0; i < n; i++) {
            double c = 0;
            for (int d = 0; d < 384; d++) c += (double)out[i * 384 + d] * ref[i * 384 + d];
            worst = c < worst ? c : worst;
        }
        printf("encoder parity: %zu sequences of %zu-%zu tokens, lowest GPU/CPU cosine %.6f\n", n, len / 2, len, worst);
        return worst >= 0.999 ? 0 : 1;
    }
    double flops = 0;
    for (size_t i = 0; i < n; i++)
        flops += 6.0 * (2.0 * lens[i] * (4.0 * 384 * 384 + 2.0 * 384 * 1536) + 4.0 * lens[i] * lens[i] * 384);
    printf("encoder %s: %zu sentences of %zu-%zu tokens (%zu tokens), batch %zu: %.2f s, %.0f sentences/s, %.0f "
           "tokens/s, %.1f GFLOP/s\n", mode, n, len / 2, len, total, batch, dt, (double)n / dt, (double)total / dt,
           flops / dt / 1e9);
    return 0;
}
