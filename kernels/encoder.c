/*
 * encoder.c - the CPU encoder ops (see encoder.h): GEMMs on OpenBLAS (its own threads), the
 * per-row math from encoder_core.h on OpenMP threads. Without CBLAS a plain C GEMM keeps the
 * results (slowly).
 */
#include "encoder.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "encoder_core.h"

#ifdef LA_HAVE_CBLAS
#include <cblas.h>
#endif
#ifdef LA_HAVE_OPENMP
#include <omp.h>
#endif

la_status la_encoder_check(const la_encoder_config *c, const la_encoder_batch *b)
{
    if (!c->hidden || !c->heads || c->hidden % c->heads || !c->layers || !c->intermediate || !c->vocab ||
        !c->max_pos || !(c->ln_eps > 0))
        return la_error(LA_EINVAL, "encoder: bad configuration (hidden %u, heads %u, layers %u, intermediate %u, "
                        "vocab %u, positions %u)", c->hidden, c->heads, c->layers, c->intermediate, c->vocab,
                        c->max_pos);
    if (!b) return LA_OK;
    if (b->start[0] != 0) return la_error(LA_EINVAL, "encoder: batch offsets must start at 0");
    for (size_t s = 0; s < b->nseq; s++) {
        uint32_t L = b->start[s + 1] - b->start[s];
        if (b->start[s + 1] < b->start[s] || L == 0 || L > c->max_pos)
            return la_error(LA_EINVAL, "encoder: sequence %zu has %u tokens (1 to %u allowed)", s,
                            b->start[s + 1] - b->start[s], c->max_pos);
    }
    for (uint32_t t = 0; t < b->start[b->nseq]; t++)
        if (b->ids[t] < 0 || (uint32_t)b->ids[t] >= c->vocab)
            return la_error(LA_EINVAL, "encoder: token id %d out of the vocabulary (%u)", b->ids[t], c->vocab);
    return LA_OK;
}

la_status la_cpu_encoder_embed(const la_encoder_weights *w, const la_encoder_batch *b, float *x)
{
    size_t H = w->c.hidden;
    long ns = (long)b->nseq;
#pragma omp parallel for schedule(dynamic, 4)
    for (long s = 0; s < ns; s++)
        for (uint32_t t = b->start[s]; t < b->start[s + 1]; t++) {
            float *r = x + (size_t)t * H;
            la_enc_embed_row(w->tok + (size_t)b->ids[t] * H, w->pos + (size_t)(t - b->start[s]) * H, w->type, H, r);
            la_enc_layernorm_row(r, NULL, w->emb_ln_g, w->emb_ln_b, H, w->c.ln_eps);
        }
    return LA_OK;
}

la_status la_cpu_encoder_add_layernorm(float *x, const float *res, const float *g, const float *beta, size_t nrows,
                                       size_t n, float eps)
{
    long nr = (long)nrows;
#pragma omp parallel for schedule(static)
    for (long r = 0; r < nr; r++)
        la_enc_layernorm_row(x + (size_t)r * n, res ? res + (size_t)r * n : NULL, g, beta, n, eps);
    return LA_OK;
}

la_status la_cpu_encoder_gelu(float *x, size_t nrows, size_t n, int tanh_form)
{
    long total = (long)(nrows * n);
    if (tanh_form) {
#pragma omp parallel for simd schedule(static)
        for (long i = 0; i < total; i++) x[i] = la_enc_gelu_tanh(x[i]);
    } else {
#pragma omp parallel for simd schedule(static)
        for (long i = 0; i < total; i++) x[i] = la_enc_gelu(x[i]);
    }
    return LA_OK;
}

/* Rows per GEMM call. Every block is one single-threaded cblas_sgemm (OpenBLAS runs
 * single-threaded inside an OpenMP region) on the OpenMP threads, so a row's result never depends
 * on how many threads run: the block shapes depend on the batch alone. */
#define LA_ENC_GEMM_ROWS 128

la_status la_cpu_encoder_linear(const float *x, const float *wt, const float *bias, size_t nrows, size_t in,
                                size_t out, float *y)
{
    long nb = (long)((nrows + LA_ENC_GEMM_ROWS - 1) / LA_ENC_GEMM_ROWS);
#pragma omp parallel for schedule(dynamic, 1)
    for (long k = 0; k < nb; k++) {
        size_t r0 = (size_t)k * LA_ENC_GEMM_ROWS, m = nrows - r0 < LA_ENC_GEMM_ROWS ? nrows - r0 : LA_ENC_GEMM_ROWS;
        float *yb = y + r0 * out;
        const float *xb = x + r0 * in;
        for (size_t r = 0; r < m; r++) memcpy(yb + r * out, bias, out * sizeof *y);
#ifdef LA_HAVE_CBLAS
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)m, (int)out, (int)in, 1.0f, xb, (int)in, wt,
                    (int)in, 1.0f, yb, (int)out);
#else
        for (size_t r = 0; r < m; r++)
            for (size_t o = 0; o < out; o++) {
                float s = 0.0f;
                for (size_t i = 0; i < in; i++) s += xb[r * in + i] * wt[o * in + i];
                yb[r * out + o] += s;
            }
#endif
    }
    return LA_OK;
}

/*
 * Per (sequence, head): the head's keys are gathered transposed (dh x L) and its values packed
 * (L x dh), so both products run with the innermost loop over contiguous memory, which the
 * compiler vectorizes without reassociating any sum: scores[i][j] accumulate over d in order,
 * outputs over j in order, as in la_enc_attention_row.
 */
la_status la_cpu_encoder_attention(const float *qkv, const la_encoder_batch *b, uint32_t heads, uint32_t head_dim,
                                   float *ctx)
{
    size_t H = (size_t)heads * head_dim, ld = 3 * H, dh = head_dim;
    uint32_t maxL = 0;
    for (size_t s = 0; s < b->nseq; s++)
        if (b->start[s + 1] - b->start[s] > maxL) maxL = b->start[s + 1] - b->start[s];
    float scale = 1.0f / sqrtf((float)head_dim);
    long work = (long)(b->nseq * heads);
    int failed = 0;
#pragma omp parallel
    {
        size_t m = (size_t)maxL + 1;
        float *kt = malloc(dh * m * sizeof *kt), *vv = malloc(dh * m * sizeof *vv), *p = malloc(m * sizeof *p);
        if (!kt || !vv || !p) {
#pragma omp atomic write
            failed = 1;
        }
#pragma omp for schedule(dynamic, 2)
        for (long wi = 0; wi < work; wi++) {
            if (!kt || !vv || !p) continue;
            size_t s = (size_t)wi / heads, h = (size_t)wi % heads;
            size_t t0 = b->start[s], L = b->start[s + 1] - t0;
            const float *base = qkv + t0 * ld + h * dh;
            for (size_t j = 0; j < L; j++)
                for (size_t d = 0; d < dh; d++) {
                    kt[d * L + j] = base[j * ld + H + d];
                    vv[j * dh + d] = base[j * ld + 2 * H + d];
                }
            for (size_t i = 0; i < L; i++) {
                const float *q = base + i * ld;
                for (size_t j = 0; j < L; j++) p[j] = 0.0f;
                for (size_t d = 0; d < dh; d++) {
                    float qd = q[d];
                    const float *kr = kt + d * L;
                    for (size_t j = 0; j < L; j++) p[j] += qd * kr[j];
                }
                la_enc_softmax_row(p, L, scale);
                float *o = ctx + (t0 + i) * H + h * dh;
                for (size_t d = 0; d < dh; d++) o[d] = 0.0f;
                for (size_t j = 0; j < L; j++) {
                    float pj = p[j];
                    const float *vr = vv + j * dh;
                    for (size_t d = 0; d < dh; d++) o[d] += pj * vr[d];
                }
            }
        }
        free(kt);
        free(vv);
        free(p);
    }
    return failed ? la_error(LA_ENOMEM, "out of memory in attention") : LA_OK;
}

la_status la_cpu_encoder_pool(const float *x, const la_encoder_batch *b, size_t n, float *out)
{
    long ns = (long)b->nseq;
#pragma omp parallel for schedule(static)
    for (long s = 0; s < ns; s++)
        la_enc_pool_row(x + (size_t)b->start[s] * n, n, b->start[s + 1] - b->start[s], n, out + (size_t)s * n);
    return LA_OK;
}

void la_encoder_ws_free(la_encoder_ws *ws)
{
    if (!ws) return;
    free(ws->x);
    free(ws->qkv);
    free(ws->ctx);
    free(ws->tmp);
    free(ws->ffn);
    memset(ws, 0, sizeof *ws);
}

static la_status ws_reserve(la_encoder_ws *ws, const la_encoder_config *c, size_t ntok)
{
    if (ntok <= ws->cap_tok) return LA_OK;
    la_encoder_ws_free(ws);
    size_t H = c->hidden, NI = c->intermediate;
    if (ntok > SIZE_MAX / sizeof(float) / (3 * H + NI)) return la_error(LA_ENOMEM, "encoder batch too large");
    ws->x = malloc(ntok * H * sizeof(float));
    ws->qkv = malloc(ntok * 3 * H * sizeof(float));
    ws->ctx = malloc(ntok * H * sizeof(float));
    ws->tmp = malloc(ntok * H * sizeof(float));
    ws->ffn = malloc(ntok * NI * sizeof(float));
    if (!ws->x || !ws->qkv || !ws->ctx || !ws->tmp || !ws->ffn) {
        la_encoder_ws_free(ws);
        return la_error(LA_ENOMEM, "out of memory for an encoder batch of %zu tokens", ntok);
    }
    ws->cap_tok = ntok;
    return LA_OK;
}

la_status la_cpu_encoder_forward(const la_encoder_weights *w, const la_encoder_batch *b, la_encoder_ws *ws,
                                 float *out)
{
    const la_encoder_config *c = &w->c;
    LA_TRY(la_encoder_check(c, b));
    size_t T = b->start[b->nseq], H = c->hidden, NI = c->intermediate;
    if (!b->nseq) return LA_OK;
    LA_TRY(ws_reserve(ws, c, T));
    LA_TRY(la_cpu_encoder_embed(w, b, ws->x));
    for (uint32_t l = 0; l < c->layers; l++) {
        const la_encoder_layer *L = &w->layer[l];
        LA_TRY(la_cpu_encoder_linear(ws->x, L->qkv_w, L->qkv_b, T, H, 3 * H, ws->qkv));
        LA_TRY(la_cpu_encoder_attention(ws->qkv, b, c->heads, c->hidden / c->heads, ws->ctx));
        LA_TRY(la_cpu_encoder_linear(ws->ctx, L->out_w, L->out_b, T, H, H, ws->tmp));
        LA_TRY(la_cpu_encoder_add_layernorm(ws->x, ws->tmp, L->ln1_g, L->ln1_b, T, H, c->ln_eps));
        LA_TRY(la_cpu_encoder_linear(ws->x, L->ffn1_w, L->ffn1_b, T, H, NI, ws->ffn));
        LA_TRY(la_cpu_encoder_gelu(ws->ffn, T, NI, c->gelu_tanh));
        LA_TRY(la_cpu_encoder_linear(ws->ffn, L->ffn2_w, L->ffn2_b, T, NI, H, ws->tmp));
        LA_TRY(la_cpu_encoder_add_layernorm(ws->x, ws->tmp, L->ln2_g, L->ln2_b, T, H, c->ln_eps));
    }
    return la_cpu_encoder_pool(ws->x, b, H, out);
}
