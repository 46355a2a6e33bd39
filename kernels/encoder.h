/*
 * encoder.h - the BERT-family sentence encoder as batch operations with one signature per op:
 * la_cpu_encoder_* here (encoder.c, OpenBLAS GEMMs and OpenMP loops) and la_cuda_encoder_*
 * (encoder_cuda.h, cuBLAS and CUDA kernels) take the same arguments, so a backend table can
 * register both and a test can compare them.
 *
 * A batch is packed: the token ids of nseq sequences one after another (each already framed by
 * [CLS] ... [SEP]), sequence s occupying rows start[s] .. start[s+1]-1 of every activation matrix.
 * The projections and the feed-forward run as one GEMM over all tokens of the batch, and
 * attention and pooling look only inside each sequence, so there is no padding at all: a batch
 * gives the same vectors as its sequences one by one.
 *
 * Weights are plain float32 arrays in PyTorch's layout (a linear layer's weight is out x in); the
 * three attention projections are fused into one [3H, H] matrix (query, key, value rows) and one
 * [3H] bias. This file knows no files: host/model.c reads safetensors into this struct.
 */
#ifndef LA_ENCODER_H
#define LA_ENCODER_H

#include <stddef.h>
#include <stdint.h>

#include "leakaudit.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct la_encoder_config {
    uint32_t vocab, hidden, heads, layers, intermediate, max_pos, type_vocab;
    float ln_eps;
    int gelu_tanh; /* 0: exact GELU (erf), 1: tanh approximation */
} la_encoder_config;

typedef struct la_encoder_layer {
    const float *qkv_w, *qkv_b;   /* [3H, H], [3H] */
    const float *out_w, *out_b;   /* [H, H], [H] */
    const float *ln1_g, *ln1_b;   /* [H] */
    const float *ffn1_w, *ffn1_b; /* [I, H], [I] */
    const float *ffn2_w, *ffn2_b; /* [H, I], [H] */
    const float *ln2_g, *ln2_b;   /* [H] */
} la_encoder_layer;

typedef struct la_encoder_weights {
    la_encoder_config c;
    const float *tok, *pos, *type;    /* [vocab, H], [max_pos, H], [type_vocab, H] (type may be NULL) */
    const float *emb_ln_g, *emb_ln_b; /* [H] */
    const la_encoder_layer *layer;    /* c.layers entries */
} la_encoder_weights;

typedef struct la_encoder_batch {
    const int32_t *ids;     /* start[nseq] token ids */
    const uint32_t *start;  /* nseq + 1 offsets, start[0] = 0 */
    size_t nseq;
} la_encoder_batch;

/* Check a configuration and a batch against it (ids in range, lengths 1..max_pos). */
la_status la_encoder_check(const la_encoder_config *c, const la_encoder_batch *b);

/* ---- the ops (CPU) ---- */

/* x[t] = LayerNorm(tok[id] + pos[position in its sequence] + type[0]): start[nseq] x H. */
la_status la_cpu_encoder_embed(const la_encoder_weights *w, const la_encoder_batch *b, float *x /* OUT */);
/* x[r] = LayerNorm(x[r] + res[r]) * g + beta for nrows rows of n (res may be NULL). */
la_status la_cpu_encoder_add_layernorm(float *x, const float *res, const float *g, const float *beta, size_t nrows,
                                       size_t n, float eps);
/* x = gelu(x), nrows x n. */
la_status la_cpu_encoder_gelu(float *x, size_t nrows, size_t n, int tanh_form);
/* y = x W^T + bias: x nrows x in, W out x in, y nrows x out. */
la_status la_cpu_encoder_linear(const float *x, const float *wt, const float *bias, size_t nrows, size_t in,
                                size_t out, float *y /* OUT */);
/* Self-attention: qkv is start[nseq] x 3H (query | key | value), ctx start[nseq] x H. */
la_status la_cpu_encoder_attention(const float *qkv, const la_encoder_batch *b, uint32_t heads, uint32_t head_dim,
                                   float *ctx /* OUT */);
/* Mean over each sequence's rows of x (start[nseq] x n), L2-normalised: out nseq x n. */
la_status la_cpu_encoder_pool(const float *x, const la_encoder_batch *b, size_t n, float *out /* OUT */);

/* Scratch for the forward pass, grown on demand; zero-initialise, free with la_encoder_ws_free. */
typedef struct la_encoder_ws {
    float *x, *qkv, *ctx, *tmp, *ffn;
    size_t cap_tok;
    uint32_t row_align; /* la_cpu_encoder_row_align of the weights, found on first use (0: not yet) */
} la_encoder_ws;
void la_encoder_ws_free(la_encoder_ws *ws);

/* The row alignment at which the CPU GEMMs give a row the same bits wherever it sits: a divisor
 * of the GEMM block (96), found by running one block of identical rows through each projection
 * shape of the weights; 0 when out of memory. */
uint32_t la_cpu_encoder_row_align(const la_encoder_weights *w);

/* The whole encoder: unit sentence vectors, nseq x H, into out. Every sequence starts at a
 * multiple of la_cpu_encoder_row_align rows (filler rows between), so a sequence's vector has the
 * same bits whatever else is in its batch, wherever it sits and at any thread count. ws may be
 * reused across calls with the same weights (one per thread). */
la_status la_cpu_encoder_forward(const la_encoder_weights *w, const la_encoder_batch *b, la_encoder_ws *ws,
                                 float *out /* OUT: nseq x hidden */);

#ifdef __cplusplus
}
#endif
#endif /* LA_ENCODER_H */
