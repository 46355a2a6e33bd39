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
 * on how many threads run. Every call also has exactly this many rows: the batch's last, short
 * block is copied into zero-padded scratch. OpenBLAS picks its kernels by the matrix shape, and
 * computes the rows past its last whole register tile with edge kernels that round differently;
 * even inside a whole tile, rows at different places may round differently (on Zen and Haswell
 * the two halves of a 12-row tile do). So a row's bits depend on its place in the block modulo a
 * period the BLAS decides: la_cpu_encoder_row_align finds it, and the forward pass starts every
 * sequence at a multiple of it. 96 is a multiple of every register tile height in use (2, 3, 4,
 * 6, 8, 12, 16, 24, 32, 48). */
#define LA_ENC_GEMM_ROWS 96

/* y[0..m) = x[0..m) W^T + bias for one block of m <= LA_ENC_GEMM_ROWS rows, through a GEMM of
 * LA_ENC_GEMM_ROWS rows. pad_x / pad_y: scratch of LA_ENC_GEMM_ROWS x in / out floats, used
 * when m is short. */
static void linear_block(const float *xb, const float *wt, const float *bias, size_t m, size_t in, size_t out,
                         float *yb, float *pad_x, float *pad_y)
{
#ifdef LA_HAVE_CBLAS
    const float *a = xb;
    float *c = yb;
    if (m < LA_ENC_GEMM_ROWS) {
        memcpy(pad_x, xb, m * in * sizeof *pad_x);
        memset(pad_x + m * in, 0, (LA_ENC_GEMM_ROWS - m) * in * sizeof *pad_x);
        a = pad_x, c = pad_y;
    }
    for (size_t r = 0; r < LA_ENC_GEMM_ROWS; r++) memcpy(c + r * out, bias, out * sizeof *c);
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, LA_ENC_GEMM_ROWS, (int)out, (int)in, 1.0f, a, (int)in, wt,
                (int)in, 1.0f, c, (int)out);
    if (c != yb) memcpy(yb, c, m * out * sizeof *yb);
#else
    (void)pad_x, (void)pad_y;
    for (size_t r = 0; r < m; r++)
        for (size_t o = 0; o < out; o++) {
            float s = bias[o];
            for (size_t i = 0; i < in; i++) s += xb[r * in + i] * wt[o * in + i];
            yb[r * out + o] = s;
        }
#endif
}

la_status la_cpu_encoder_linear(const float *x, const float *wt, const float *bias, size_t nrows, size_t in,
                                size_t out, float *y)
{
    size_t nb = (nrows + LA_ENC_GEMM_ROWS - 1) / LA_ENC_GEMM_ROWS, tail = nrows - (nb ? nb - 1 : 0) * LA_ENC_GEMM_ROWS;
    float *pad_x = NULL, *pad_y = NULL;
    if (nb && tail < LA_ENC_GEMM_ROWS) {
        pad_x = malloc(LA_ENC_GEMM_ROWS * in * sizeof *pad_x);
        pad_y = malloc(LA_ENC_GEMM_ROWS * out * sizeof *pad_y);
        if (!pad_x || !pad_y) {
            free(pad_x);
            free(pad_y);
            return la_error(LA_ENOMEM, "out of memory for a GEMM block of %d x %zu", LA_ENC_GEMM_ROWS, in + out);
        }
    }
    long lnb = (long)nb;
#pragma omp parallel for schedule(dynamic, 1)
    for (long k = 0; k < lnb; k++) {
        size_t r0 = (size_t)k * LA_ENC_GEMM_ROWS, m = nrows - r0 < LA_ENC_GEMM_ROWS ? nrows - r0 : LA_ENC_GEMM_ROWS;
        linear_block(x + r0 * in, wt, bias, m, in, out, y + r0 * out, pad_x, pad_y);
    }
    free(pad_x);
    free(pad_y);
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
    uint32_t align = ws->row_align; /* a property of the weights and the BLAS: kept */
    memset(ws, 0, sizeof *ws);
    ws->row_align = align;
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

/* The smallest period P dividing LA_ENC_GEMM_ROWS such that a row's result in a block depends
 * only on its place modulo P, for this GEMM shape: one block of identical rows, compared with
 * each other. 0 when out of memory. */
static uint32_t row_period(const float *wt, const float *bias, size_t in, size_t out)
{
    float *x = malloc(LA_ENC_GEMM_ROWS * in * sizeof *x), *y = malloc(LA_ENC_GEMM_ROWS * out * sizeof *y);
    uint32_t period = 0;
    if (x && y) {
        for (size_t i = 0; i < in; i++) x[i] = (float)((i * 2654435761u) % 2001) / 1000.0f - 1.0f;
        for (size_t r = 1; r < LA_ENC_GEMM_ROWS; r++) memcpy(x + r * in, x, in * sizeof *x);
        linear_block(x, wt, bias, LA_ENC_GEMM_ROWS, in, out, y, NULL, NULL);
        for (uint32_t p = 1; p <= LA_ENC_GEMM_ROWS && !period; p++) {
            if (LA_ENC_GEMM_ROWS % p) continue;
            size_t r = p;
            while (r < LA_ENC_GEMM_ROWS && !memcmp(y + r * out, y + (r % p) * out, out * sizeof *y)) r++;
            if (r == LA_ENC_GEMM_ROWS) period = p;
        }
    }
    free(x);
    free(y);
    return period;
}

static uint32_t gcd_u32(uint32_t a, uint32_t b) { return b ? gcd_u32(b, a % b) : a; }

uint32_t la_cpu_encoder_row_align(const la_encoder_weights *w)
{
    const la_encoder_config *c = &w->c;
    const la_encoder_layer *L = &w->layer[0];
    size_t H = c->hidden, NI = c->intermediate;
    uint32_t p[4] = {row_period(L->qkv_w, L->qkv_b, H, 3 * H), row_period(L->out_w, L->out_b, H, H),
                     row_period(L->ffn1_w, L->ffn1_b, H, NI), row_period(L->ffn2_w, L->ffn2_b, NI, H)};
    uint32_t a = 1;
    for (int k = 0; k < 4; k++) {
        if (!p[k]) return 0;
        a = a / gcd_u32(a, p[k]) * p[k]; /* divisors of LA_ENC_GEMM_ROWS: so is their lcm */
    }
    return a;
}

/* The batch laid out for the GEMMs: every sequence starts at a multiple of align rows, the gaps
 * filled by filler sequences (token id 0) whose vectors are dropped. real[s] is the padded index
 * of sequence s. */
typedef struct aligned_batch {
    int32_t *ids;
    uint32_t *start, *real;
    la_encoder_batch b;
} aligned_batch;

static void aligned_batch_free(aligned_batch *a)
{
    free(a->ids);
    free(a->start);
    free(a->real);
}

static la_status align_batch(const la_encoder_batch *b, uint32_t align, uint32_t max_pos, aligned_batch *a)
{
    memset(a, 0, sizeof *a);
    size_t T = b->start[b->nseq], cap_tok = T + b->nseq * (size_t)align;
    size_t cap_seq = b->nseq * (2 + align / max_pos) + 1; /* a gap is < align rows, fillers <= max_pos each */
    a->ids = malloc(cap_tok * sizeof *a->ids);
    a->start = malloc((cap_seq + 1) * sizeof *a->start);
    a->real = malloc(b->nseq * sizeof *a->real);
    if (!a->ids || !a->start || !a->real) {
        aligned_batch_free(a);
        return la_error(LA_ENOMEM, "out of memory laying out an encoder batch of %zu tokens", T);
    }
    uint32_t t = 0;
    size_t ns = 0;
    a->start[0] = 0;
    for (size_t s = 0; s < b->nseq; s++) {
        uint32_t gap = (align - t % align) % align, L = b->start[s + 1] - b->start[s];
        while (gap) {
            uint32_t piece = gap < max_pos ? gap : max_pos;
            memset(a->ids + t, 0, piece * sizeof *a->ids);
            t += piece, gap -= piece;
            a->start[++ns] = t;
        }
        memcpy(a->ids + t, b->ids + b->start[s], L * sizeof *a->ids);
        t += L;
        a->real[s] = (uint32_t)ns;
        a->start[++ns] = t;
    }
    a->b = (la_encoder_batch){a->ids, a->start, ns};
    return LA_OK;
}

static la_status forward_packed(const la_encoder_weights *w, const la_encoder_batch *b, la_encoder_ws *ws, float *out)
{
    const la_encoder_config *c = &w->c;
    size_t T = b->start[b->nseq], H = c->hidden, NI = c->intermediate;
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

la_status la_cpu_encoder_forward(const la_encoder_weights *w, const la_encoder_batch *b, la_encoder_ws *ws,
                                 float *out)
{
    const la_encoder_config *c = &w->c;
    LA_TRY(la_encoder_check(c, b));
    if (!b->nseq) return LA_OK;
    if (!ws->row_align) ws->row_align = la_cpu_encoder_row_align(w);
    if (!ws->row_align) return la_error(LA_ENOMEM, "out of memory probing the GEMM kernels");
    if (ws->row_align == 1) return forward_packed(w, b, ws, out);
    aligned_batch a;
    LA_TRY(align_batch(b, ws->row_align, c->max_pos, &a));
    size_t H = c->hidden;
    float *vec = malloc(a.b.nseq * H * sizeof *vec);
    la_status s = vec ? forward_packed(w, &a.b, ws, vec) : la_error(LA_ENOMEM, "out of memory");
    for (size_t k = 0; s == LA_OK && k < b->nseq; k++) memcpy(out + k * H, vec + (size_t)a.real[k] * H, H * sizeof *out);
    free(vec);
    aligned_batch_free(&a);
    return s;
}
