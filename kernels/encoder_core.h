/*
 * encoder_core.h - per-element math of the BERT-family sentence encoder, shared by the CPU loops
 * (encoder.c) and the CUDA kernels (encoder.cu): embedding sum, residual + layer norm, GELU,
 * one query's attention over its sequence, and the mean pooling with L2 normalisation.
 *
 * Everything is fp32. Layer norm takes the mean first and then the mean squared deviation (two
 * passes over a row held in cache), as the reference implementation does, with eps inside the
 * square root. Attention uses the max-subtracted softmax; keys past the sequence's own length
 * are never read, so no padding mask is needed. The matrix products (projections, feed-forward)
 * are GEMMs in the callers, not here.
 */
#ifndef LA_ENCODER_CORE_H
#define LA_ENCODER_CORE_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>

#include "la_hd.h"

/*
 * e^x for x <= 0 down to about -87 (smaller inputs give 0), relative error below 2e-7: x = n ln 2
 * + r with |r| <= ln2 / 2, e^r by its degree-6 Taylor polynomial, 2^n put into the exponent bits.
 * Written without calls or branches so the CPU loops vectorize (libm's expf does not).
 */
LA_HD static inline float la_enc_exp_neg(float x)
{
    x = x < -87.0f ? -87.0f : x;
    float n = (float)(int)(x * 1.44269504088896341f - 0.5f); /* round to nearest for x <= 0 */
    float r = x - n * 0.693145751953125f - n * 1.42860682030941723e-6f;
    float p = 1.0f + r * (1.0f + r * (0.5f + r * (1.0f / 6 + r * (1.0f / 24 + r * (1.0f / 120 + r * (1.0f / 720))))));
    union { float f; int32_t i; } u;
    u.i = ((int32_t)n + 127) << 23;
    return p * u.f;
}

/* erf(x), absolute error below 2e-7 (Abramowitz and Stegun 7.1.26 with la_enc_exp_neg). */
LA_HD static inline float la_enc_erf(float x)
{
    float a = fabsf(x);
    float t = 1.0f / (1.0f + 0.3275911f * a);
    float y = t * (0.254829592f + t * (-0.284496736f + t * (1.421413741f + t * (-1.453152027f + t * 1.061405429f))));
    float e = 1.0f - y * la_enc_exp_neg(-a * a);
    return copysignf(e, x);
}

/* GELU, the exact form: x * Phi(x) with the normal CDF through erf (BERT's "gelu"). */
LA_HD static inline float la_enc_gelu(float x) { return 0.5f * x * (1.0f + la_enc_erf(x * 0.70710678118654752f)); }

/* GELU, the tanh approximation ("gelu_new", "gelu_pytorch_tanh"). */
LA_HD static inline float la_enc_gelu_tanh(float x)
{
    return 0.5f * x * (1.0f + tanhf(0.79788456080286536f * (x + 0.044715f * x * x * x)));
}

/* x = tok + pos + type, n values: the input embedding of one token before its layer norm. */
LA_HD static inline void la_enc_embed_row(const float *tok, const float *pos, const float *type, size_t n, float *x)
{
    for (size_t i = 0; i < n; i++) x[i] = tok[i] + pos[i] + (type ? type[i] : 0.0f);
}

/* x = LayerNorm(x + res) * g + b over n values (res may be NULL). */
LA_HD static inline void la_enc_layernorm_row(float *x, const float *res, const float *g, const float *b, size_t n,
                                              float eps)
{
    float sum = 0.0f;
    if (res)
        for (size_t i = 0; i < n; i++) x[i] += res[i];
    for (size_t i = 0; i < n; i++) sum += x[i];
    float mean = sum / (float)n, var = 0.0f;
    for (size_t i = 0; i < n; i++) {
        float d = x[i] - mean;
        var += d * d;
    }
    float inv = 1.0f / sqrtf(var / (float)n + eps);
    for (size_t i = 0; i < n; i++) x[i] = (x[i] - mean) * inv * g[i] + b[i];
}

/* p[0..L) = softmax(scale * p): max-subtracted, so no exponent overflows. */
LA_HD static inline void la_enc_softmax_row(float *p, size_t L, float scale)
{
    float m = -INFINITY;
    for (size_t j = 0; j < L; j++) {
        p[j] *= scale;
        m = p[j] > m ? p[j] : m;
    }
    float z = 0.0f;
    for (size_t j = 0; j < L; j++) {
        p[j] = la_enc_exp_neg(p[j] - m);
        z += p[j];
    }
    float iz = 1.0f / z;
    for (size_t j = 0; j < L; j++) p[j] *= iz;
}

/*
 * One query's attention in one head: out[0..dh) = sum_j softmax_j(scale * q.k_j) v_j over the
 * L keys k_j = k + j * ld and values v_j = v + j * ld of its sequence. p holds L floats of
 * scratch (the probabilities).
 */
LA_HD static inline void la_enc_attention_row(const float *q, const float *k, const float *v, size_t ld, size_t L,
                                              size_t dh, float scale, float *p, float *out)
{
    for (size_t j = 0; j < L; j++) {
        const float *kj = k + j * ld;
        float s = 0.0f;
        for (size_t d = 0; d < dh; d++) s += q[d] * kj[d];
        p[j] = s;
    }
    la_enc_softmax_row(p, L, scale);
    for (size_t d = 0; d < dh; d++) out[d] = 0.0f;
    for (size_t j = 0; j < L; j++) {
        const float *vj = v + j * ld;
        for (size_t d = 0; d < dh; d++) out[d] += p[j] * vj[d];
    }
}

/* Mean of the L rows x + j * ld (n values each), then scaled to unit L2 norm (a zero vector
 * stays zero), into out. */
LA_HD static inline void la_enc_pool_row(const float *x, size_t ld, size_t L, size_t n, float *out)
{
    for (size_t i = 0; i < n; i++) out[i] = 0.0f;
    for (size_t j = 0; j < L; j++)
        for (size_t i = 0; i < n; i++) out[i] += x[j * ld + i];
    float ss = 0.0f;
    for (size_t i = 0; i < n; i++) {
        out[i] /= (float)L;
        ss += out[i] * out[i];
    }
    float nr = sqrtf(ss);
    float inv = nr > 1e-12f ? 1.0f / nr : 0.0f;
    for (size_t i = 0; i < n; i++) out[i] *= inv;
}

#endif /* LA_ENCODER_CORE_H */
