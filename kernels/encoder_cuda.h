/*
 * encoder_cuda.h - the CUDA twins of the encoder ops in encoder.h, with the same arguments: the
 * la_cuda_encoder_* ops take device pointers (activations, and a batch whose ids and start arrays
 * are on the device), run on the current device's default stream and use the per-element math of
 * encoder_core.h, so a backend table can register them beside la_cpu_encoder_*. GEMMs are cuBLAS
 * with fp16 inputs and fp32 accumulation (weights converted to fp16 once), tensor cores allowed.
 *
 * la_cuda_encoder_forward takes the same host arguments as la_cpu_encoder_forward (host weights,
 * host batch, host output): it uploads the weights on first use (kept until
 * la_cuda_encoder_release), the batch, runs every op on the device and copies the vectors back.
 * Sequences arrive sorted by length from the host (host/model.c), so each batch is one length
 * bucket. No CUDA header is included here; without CUDA every entry point returns
 * LA_EUNSUPPORTED (encoder_cuda_stub.c).
 */
#ifndef LA_ENCODER_CUDA_H
#define LA_ENCODER_CUDA_H

#include "encoder.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Longest sequence the attention kernel takes (its per-thread scratch). */
#define LA_CUDA_ENCODER_MAX_SEQ 512

la_status la_cuda_encoder_embed(const la_encoder_weights *w /* device tables */, const la_encoder_batch *b,
                                float *x /* OUT, device */);
la_status la_cuda_encoder_add_layernorm(float *x, const float *res, const float *g, const float *beta, size_t nrows,
                                        size_t n, float eps);
la_status la_cuda_encoder_gelu(float *x, size_t nrows, size_t n, int tanh_form);
/* wt: the device weight in fp16 (out x in), as la_cuda_encoder_forward keeps it. */
la_status la_cuda_encoder_linear(const float *x, const void *wt_fp16, const float *bias, size_t nrows, size_t in,
                                 size_t out, float *y /* OUT, device */);
la_status la_cuda_encoder_attention(const float *qkv, const la_encoder_batch *b, uint32_t heads, uint32_t head_dim,
                                    float *ctx /* OUT, device */);
la_status la_cuda_encoder_pool(const float *x, const la_encoder_batch *b, size_t n, float *out /* OUT, device */);

/* The whole encoder on device 0, host in and out (see above). ws is unused (host scratch). */
la_status la_cuda_encoder_forward(const la_encoder_weights *w, const la_encoder_batch *b, la_encoder_ws *ws,
                                  float *out /* OUT: nseq x hidden, host */);

/* Free the device copy of the weights and the scratch. */
void la_cuda_encoder_release(void);

#ifdef __cplusplus
}
#endif
#endif /* LA_ENCODER_CUDA_H */
