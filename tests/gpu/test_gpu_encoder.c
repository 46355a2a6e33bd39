/* test_gpu_encoder.c - the CUDA encoder against the CPU encoder on random weights of a small
 * BERT (2 layers, hidden 64, 4 heads): sentence vectors of 40 packed sequences of 1 to 100 tokens
 * agree with cosine >= 0.999 (fp16 GEMM inputs, fp32 accumulation), and a second call reuses the
 * uploaded weights with the same result. Exits 77 without a device. */
#include "encoder.h"
#include "encoder_cuda.h"
#include "gpu_test.h"

#include <string.h>

static float *arr(size_t n, float scale, float off)
{
    float *p = malloc(n * sizeof *p);
    for (size_t i = 0; i < n; i++) p[i] = off + scale * (float)((double)(rnd() >> 11) / 9007199254740992.0 * 2 - 1);
    return p;
}

int main(void)
{
    require_device();
    la_encoder_config c = {500, 64, 4, 2, 128, 128, 2, 1e-12f, 0};
    la_encoder_layer L[2];
    la_encoder_weights w = {c, arr(500 * 64, 0.5f, 0), arr(128 * 64, 0.2f, 0), arr(64, 0.1f, 0), arr(64, 0.1f, 1),
                            arr(64, 0.1f, 0), L};
    for (int l = 0; l < 2; l++) {
        L[l].qkv_w = arr(3 * 64 * 64, 0.2f, 0), L[l].qkv_b = arr(3 * 64, 0.1f, 0);
        L[l].out_w = arr(64 * 64, 0.2f, 0), L[l].out_b = arr(64, 0.1f, 0);
        L[l].ln1_g = arr(64, 0.1f, 1), L[l].ln1_b = arr(64, 0.1f, 0);
        L[l].ffn1_w = arr(128 * 64, 0.2f, 0), L[l].ffn1_b = arr(128, 0.1f, 0);
        L[l].ffn2_w = arr(64 * 128, 0.2f, 0), L[l].ffn2_b = arr(64, 0.1f, 0);
        L[l].ln2_g = arr(64, 0.1f, 1), L[l].ln2_b = arr(64, 0.1f, 0);
    }
    enum { NS = 40 };
    uint32_t start[NS + 1] = {0};
    for (int s = 0; s < NS; s++) start[s + 1] = start[s] + 1 + (uint32_t)(rnd() % 100);
    int32_t *ids = malloc(start[NS] * sizeof *ids);
    for (uint32_t t = 0; t < start[NS]; t++) ids[t] = (int32_t)(rnd() % 500);
    la_encoder_batch b = {ids, start, NS};
    float cpu[NS * 64], gpu[NS * 64], again[NS * 64];
    la_encoder_ws ws = {0};
    CHECK_OK(la_cpu_encoder_forward(&w, &b, &ws, cpu));
    CHECK_OK(la_cuda_encoder_forward(&w, &b, &ws, gpu));
    CHECK_OK(la_cuda_encoder_forward(&w, &b, &ws, again));
    double worst = 2;
    for (int s = 0; s < NS; s++) {
        double d = 0;
        for (int i = 0; i < 64; i++) d += (double)cpu[s * 64 + i] * gpu[s * 64 + i];
        worst = d < worst ? d : worst;
    }
    printf("encoder: %d sequences, lowest GPU/CPU cosine %.6f\n", NS, worst);
    CHECK(worst >= 0.999, "lowest cosine %.6f", worst);
    CHECK(memcmp(gpu, again, sizeof gpu) == 0, "a second call on the uploaded weights differs");
    la_cuda_encoder_release();
    la_encoder_ws_free(&ws);
    return g_failures ? 1 : 0;
}
