/*
 * encoder.cu - the CUDA twins of the encoder ops (contract in encoder_cuda.h, math in
 * encoder_core.h). Row ops run one thread per row or per (token, head), calling the same
 * encoder_core.h functions as the CPU loops; projections and the feed-forward are cuBLAS GEMMs on
 * fp16 copies of the weights and activations with fp32 accumulation and fp32 outputs.
 */
#include <cuda_fp16.h>

#include "cuda_check.cuh"
#include "encoder_core.h"
#include "encoder_cuda.h"

/* the sequence of packed token t: the last s with start[s] <= t */
__device__ static size_t seq_of(const uint32_t *start, size_t nseq, uint32_t t)
{
    size_t lo = 0, hi = nseq;
    while (hi - lo > 1) {
        size_t mid = (lo + hi) / 2;
        if (start[mid] <= t) lo = mid;
        else hi = mid;
    }
    return lo;
}

__global__ void k_embed(const float *tok, const float *pos, const float *type, const float *g, const float *bta,
                        const int32_t *ids, const uint32_t *start, size_t nseq, size_t H, float eps, float *x)
{
    uint32_t t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= start[nseq]) return;
    size_t s = seq_of(start, nseq, t);
    float *r = x + (size_t)t * H;
    la_enc_embed_row(tok + (size_t)ids[t] * H, pos + (size_t)(t - start[s]) * H, type, H, r);
    la_enc_layernorm_row(r, NULL, g, bta, H, eps);
}

__global__ void k_add_ln(float *x, const float *res, const float *g, const float *b, size_t nrows, size_t n, float eps)
{
    size_t r = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (r < nrows) la_enc_layernorm_row(x + r * n, res ? res + r * n : NULL, g, b, n, eps);
}

__global__ void k_gelu(float *x, size_t total, int tanh_form)
{
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < total) x[i] = tanh_form ? la_enc_gelu_tanh(x[i]) : la_enc_gelu(x[i]);
}

__global__ void k_bias_rows(const float *bias, size_t nrows, size_t n, float *y)
{
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < nrows * n) y[i] = bias[i % n];
}

__global__ void k_to_half(const float *x, size_t total, __half *h)
{
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < total) h[i] = __float2half(x[i]);
}

__global__ void k_attention(const float *qkv, const uint32_t *start, size_t nseq, uint32_t heads, uint32_t dh,
                            float scale, float *ctx)
{
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    uint32_t T = start[nseq];
    if (i >= (size_t)T * heads) return;
    uint32_t t = (uint32_t)(i / heads), h = (uint32_t)(i % heads);
    size_t s = seq_of(start, nseq, t), H = (size_t)heads * dh, ld = 3 * H;
    size_t t0 = start[s], L = start[s + 1] - t0;
    float p[LA_CUDA_ENCODER_MAX_SEQ];
    la_enc_attention_row(qkv + (size_t)t * ld + h * dh, qkv + t0 * ld + H + h * dh, qkv + t0 * ld + 2 * H + h * dh, ld,
                         L, dh, scale, p, ctx + (size_t)t * H + h * dh);
}

__global__ void k_pool(const float *x, const uint32_t *start, size_t nseq, size_t n, float *out)
{
    size_t s = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (s < nseq) la_enc_pool_row(x + (size_t)start[s] * n, n, start[s + 1] - start[s], n, out + s * n);
}

static unsigned blocks(size_t n, unsigned t) { return (unsigned)((n + t - 1) / t); }

/* Host copies of the batch arrays' totals are needed for launch sizes. */
static la_status batch_tokens(const la_encoder_batch *b, uint32_t *T)
{
    LA_CU(cudaMemcpy(T, b->start + b->nseq, sizeof *T, cudaMemcpyDeviceToHost));
    return LA_OK;
}

extern "C" la_status la_cuda_encoder_embed(const la_encoder_weights *w, const la_encoder_batch *b, float *x)
{
    uint32_t T;
    LA_TRY(batch_tokens(b, &T));
    k_embed<<<blocks(T, 128), 128>>>(w->tok, w->pos, w->type, w->emb_ln_g, w->emb_ln_b, b->ids, b->start, b->nseq,
                                     w->c.hidden, w->c.ln_eps, x);
    LA_CU_LAUNCHED();
    return LA_OK;
}

extern "C" la_status la_cuda_encoder_add_layernorm(float *x, const float *res, const float *g, const float *beta,
                                                   size_t nrows, size_t n, float eps)
{
    k_add_ln<<<blocks(nrows, 128), 128>>>(x, res, g, beta, nrows, n, eps);
    LA_CU_LAUNCHED();
    return LA_OK;
}

extern "C" la_status la_cuda_encoder_gelu(float *x, size_t nrows, size_t n, int tanh_form)
{
    k_gelu<<<blocks(nrows * n, 256), 256>>>(x, nrows * n, tanh_form);
    LA_CU_LAUNCHED();
    return LA_OK;
}

/* One cuBLAS handle and one fp16 staging buffer for the activations, reused across calls. */
static cublasHandle_t g_blas;
static __half *g_stage;
static size_t g_stage_cap;

static la_status ensure_blas(size_t stage_elems)
{
    if (!g_blas) {
        LA_CUBLAS(la_cublas_create(&g_blas));
        LA_CUBLAS(la_cublas_set_math_mode(g_blas, CUBLAS_DEFAULT_MATH));
    }
    if (stage_elems > g_stage_cap) {
        la_cu_free(&g_stage);
        g_stage_cap = 0;
        LA_CU(cudaMalloc(&g_stage, stage_elems * sizeof *g_stage));
        g_stage_cap = stage_elems;
    }
    return LA_OK;
}

extern "C" la_status la_cuda_encoder_linear(const float *x, const void *wt, const float *bias, size_t nrows, size_t in,
                                            size_t out, float *y)
{
    LA_TRY(ensure_blas(nrows * in));
    k_to_half<<<blocks(nrows * in, 256), 256>>>(x, nrows * in, g_stage);
    LA_CU_LAUNCHED();
    k_bias_rows<<<blocks(nrows * out, 256), 256>>>(bias, nrows, out, y);
    LA_CU_LAUNCHED();
    const float one = 1.0f;
    /* row-major y = x W^T is column-major y^T = W x^T: W (in x out, col-major) transposed */
    LA_CUBLAS(la_cublas_gemm_ex(g_blas, CUBLAS_OP_T, CUBLAS_OP_N, (int)out, (int)nrows, (int)in, &one, wt, CUDA_R_16F,
                           (int)in, g_stage, CUDA_R_16F, (int)in, &one, y, CUDA_R_32F, (int)out, CUBLAS_COMPUTE_32F,
                           CUBLAS_GEMM_DEFAULT));
    return LA_OK;
}

extern "C" la_status la_cuda_encoder_attention(const float *qkv, const la_encoder_batch *b, uint32_t heads,
                                               uint32_t head_dim, float *ctx)
{
    uint32_t T;
    LA_TRY(batch_tokens(b, &T));
    k_attention<<<blocks((size_t)T * heads, 64), 64>>>(qkv, b->start, b->nseq, heads, head_dim,
                                                       1.0f / sqrtf((float)head_dim), ctx);
    LA_CU_LAUNCHED();
    return LA_OK;
}

extern "C" la_status la_cuda_encoder_pool(const float *x, const la_encoder_batch *b, size_t n, float *out)
{
    k_pool<<<blocks(b->nseq, 64), 64>>>(x, b->start, b->nseq, n, out);
    LA_CU_LAUNCHED();
    return LA_OK;
}

/* ---- the forward pass: device weights kept between calls ---- */

typedef struct dev_layer {
    __half *qkv_w, *out_w, *ffn1_w, *ffn2_w;
    float *qkv_b, *out_b, *ln1_g, *ln1_b, *ffn1_b, *ffn2_b, *ln2_g, *ln2_b;
} dev_layer;

static struct {
    const la_encoder_weights *host; /* the weights the device copy was made from */
    la_encoder_weights w;           /* device tables (tok, pos, type, LN) */
    dev_layer *layer;
    void **owned;
    size_t nowned;
    float *x, *qkv, *ctx, *tmp, *ffn, *vec;
    int32_t *ids;
    uint32_t *start;
    size_t cap_tok, cap_seq;
} g;

static la_status keep(void *p)
{
    void **o = (void **)realloc(g.owned, (g.nowned + 1) * sizeof *o);
    if (!o) {
        cudaFree(p);
        return la_error(LA_ENOMEM, "out of memory");
    }
    g.owned = o;
    g.owned[g.nowned++] = p;
    return LA_OK;
}

static la_status up_f32(const float *h, size_t n, float **d)
{
    *d = NULL;
    if (!h) return LA_OK;
    LA_CU(cudaMalloc(d, n * sizeof **d));
    LA_TRY(keep(*d));
    LA_CU(cudaMemcpy(*d, h, n * sizeof **d, cudaMemcpyHostToDevice));
    return LA_OK;
}

static la_status up_f16(const float *h, size_t n, __half **d)
{
    float *tmp;
    LA_CU(cudaMalloc(&tmp, n * sizeof *tmp));
    cudaError_t e = cudaMemcpy(tmp, h, n * sizeof *tmp, cudaMemcpyHostToDevice);
    if (e == cudaSuccess) e = cudaMalloc(d, n * sizeof **d);
    if (e == cudaSuccess) {
        k_to_half<<<blocks(n, 256), 256>>>(tmp, n, *d);
        e = cudaGetLastError();
    }
    if (e == cudaSuccess) e = cudaDeviceSynchronize();
    cudaFree(tmp);
    if (e != cudaSuccess) return la_error(LA_ECUDA, "uploading encoder weights: %s", cudaGetErrorString(e));
    return keep(*d);
}

extern "C" void la_cuda_encoder_release(void)
{
    for (size_t i = 0; i < g.nowned; i++) cudaFree(g.owned[i]);
    free(g.owned);
    free(g.layer);
    la_cu_free(&g.x);
    la_cu_free(&g.qkv);
    la_cu_free(&g.ctx);
    la_cu_free(&g.tmp);
    la_cu_free(&g.ffn);
    la_cu_free(&g.vec);
    la_cu_free(&g.ids);
    la_cu_free(&g.start);
    memset(&g, 0, sizeof g);
    if (g_blas) la_cublas_destroy(g_blas);
    g_blas = NULL;
    la_cu_free(&g_stage);
    g_stage_cap = 0;
}

static la_status upload(const la_encoder_weights *w)
{
    if (g.host == w) return LA_OK;
    la_cuda_encoder_release();
    const la_encoder_config *c = &w->c;
    size_t H = c->hidden, NI = c->intermediate;
    g.w.c = *c;
    float *p;
    LA_TRY(up_f32(w->tok, (size_t)c->vocab * H, &p));
    g.w.tok = p;
    LA_TRY(up_f32(w->pos, (size_t)c->max_pos * H, &p));
    g.w.pos = p;
    LA_TRY(up_f32(w->type, H, &p));
    g.w.type = p;
    LA_TRY(up_f32(w->emb_ln_g, H, &p));
    g.w.emb_ln_g = p;
    LA_TRY(up_f32(w->emb_ln_b, H, &p));
    g.w.emb_ln_b = p;
    g.layer = (dev_layer *)calloc(c->layers, sizeof *g.layer);
    if (!g.layer) return la_error(LA_ENOMEM, "out of memory");
    for (uint32_t l = 0; l < c->layers; l++) {
        const la_encoder_layer *L = &w->layer[l];
        dev_layer *D = &g.layer[l];
        LA_TRY(up_f16(L->qkv_w, 3 * H * H, &D->qkv_w));
        LA_TRY(up_f16(L->out_w, H * H, &D->out_w));
        LA_TRY(up_f16(L->ffn1_w, NI * H, &D->ffn1_w));
        LA_TRY(up_f16(L->ffn2_w, H * NI, &D->ffn2_w));
        LA_TRY(up_f32(L->qkv_b, 3 * H, &D->qkv_b));
        LA_TRY(up_f32(L->out_b, H, &D->out_b));
        LA_TRY(up_f32(L->ln1_g, H, &D->ln1_g));
        LA_TRY(up_f32(L->ln1_b, H, &D->ln1_b));
        LA_TRY(up_f32(L->ffn1_b, NI, &D->ffn1_b));
        LA_TRY(up_f32(L->ffn2_b, H, &D->ffn2_b));
        LA_TRY(up_f32(L->ln2_g, H, &D->ln2_g));
        LA_TRY(up_f32(L->ln2_b, H, &D->ln2_b));
    }
    g.host = w;
    return LA_OK;
}

static la_status reserve(const la_encoder_config *c, size_t T, size_t nseq)
{
    size_t H = c->hidden, NI = c->intermediate;
    if (T > g.cap_tok) {
        la_cu_free(&g.x);
        la_cu_free(&g.qkv);
        la_cu_free(&g.ctx);
        la_cu_free(&g.tmp);
        la_cu_free(&g.ffn);
        la_cu_free(&g.ids);
        g.cap_tok = 0;
        LA_CU(cudaMalloc(&g.x, T * H * sizeof(float)));
        LA_CU(cudaMalloc(&g.qkv, T * 3 * H * sizeof(float)));
        LA_CU(cudaMalloc(&g.ctx, T * H * sizeof(float)));
        LA_CU(cudaMalloc(&g.tmp, T * H * sizeof(float)));
        LA_CU(cudaMalloc(&g.ffn, T * NI * sizeof(float)));
        LA_CU(cudaMalloc(&g.ids, T * sizeof(int32_t)));
        g.cap_tok = T;
    }
    if (nseq > g.cap_seq) {
        la_cu_free(&g.vec);
        la_cu_free(&g.start);
        g.cap_seq = 0;
        LA_CU(cudaMalloc(&g.vec, nseq * H * sizeof(float)));
        LA_CU(cudaMalloc(&g.start, (nseq + 1) * sizeof(uint32_t)));
        g.cap_seq = nseq;
    }
    return LA_OK;
}

extern "C" la_status la_cuda_encoder_forward(const la_encoder_weights *w, const la_encoder_batch *b,
                                             la_encoder_ws *ws, float *out)
{
    const la_encoder_config *c = &w->c;
    LA_TRY(la_encoder_check(c, b));
    if (!b->nseq) return LA_OK;
    for (size_t s = 0; s < b->nseq; s++)
        if (b->start[s + 1] - b->start[s] > LA_CUDA_ENCODER_MAX_SEQ)
            return la_error(LA_EUNSUPPORTED, "CUDA encoder: sequences of at most %d tokens", LA_CUDA_ENCODER_MAX_SEQ);
    LA_TRY(la_cu_use_device(0));
    LA_TRY(upload(w));
    size_t T = b->start[b->nseq], H = c->hidden, NI = c->intermediate;
    LA_TRY(reserve(c, T, b->nseq));
    LA_CU(cudaMemcpy(g.ids, b->ids, T * sizeof *g.ids, cudaMemcpyHostToDevice));
    LA_CU(cudaMemcpy(g.start, b->start, (b->nseq + 1) * sizeof *g.start, cudaMemcpyHostToDevice));
    la_encoder_batch db = {g.ids, g.start, b->nseq};
    LA_TRY(la_cuda_encoder_embed(&g.w, &db, g.x));
    for (uint32_t l = 0; l < c->layers; l++) {
        const dev_layer *L = &g.layer[l];
        LA_TRY(la_cuda_encoder_linear(g.x, L->qkv_w, L->qkv_b, T, H, 3 * H, g.qkv));
        LA_TRY(la_cuda_encoder_attention(g.qkv, &db, c->heads, c->hidden / c->heads, g.ctx));
        LA_TRY(la_cuda_encoder_linear(g.ctx, L->out_w, L->out_b, T, H, H, g.tmp));
        LA_TRY(la_cuda_encoder_add_layernorm(g.x, g.tmp, L->ln1_g, L->ln1_b, T, H, c->ln_eps));
        LA_TRY(la_cuda_encoder_linear(g.x, L->ffn1_w, L->ffn1_b, T, H, NI, g.ffn));
        LA_TRY(la_cuda_encoder_gelu(g.ffn, T, NI, c->gelu_tanh));
        LA_TRY(la_cuda_encoder_linear(g.ffn, L->ffn2_w, L->ffn2_b, T, NI, H, g.tmp));
        LA_TRY(la_cuda_encoder_add_layernorm(g.x, g.tmp, L->ln2_g, L->ln2_b, T, H, c->ln_eps));
    }
    LA_TRY(la_cuda_encoder_pool(g.x, &db, H, g.vec));
    LA_CU(cudaMemcpy(out, g.vec, b->nseq * H * sizeof *out, cudaMemcpyDeviceToHost));
    return LA_OK;
}
