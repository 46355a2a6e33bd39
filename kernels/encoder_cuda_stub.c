/* encoder_cuda_stub.c - the CUDA encoder ops when the build has no CUDA backend (see
 * encoder_cuda.h): every entry point says so with LA_EUNSUPPORTED. */
#include "encoder_cuda.h"

#ifndef LA_HAVE_CUDA
#define LA_NO_CUDA la_error(LA_EUNSUPPORTED, "this build has no CUDA backend (built without nvcc)")

la_status la_cuda_encoder_embed(const la_encoder_weights *w, const la_encoder_batch *b, float *x) { return LA_NO_CUDA; }
la_status la_cuda_encoder_add_layernorm(float *x, const float *res, const float *g, const float *beta, size_t nrows,
                                        size_t n, float eps) { return LA_NO_CUDA; }
la_status la_cuda_encoder_gelu(float *x, size_t nrows, size_t n, int tanh_form) { return LA_NO_CUDA; }
la_status la_cuda_encoder_linear(const float *x, const void *wt, const float *bias, size_t nrows, size_t in,
                                 size_t out, float *y) { return LA_NO_CUDA; }
la_status la_cuda_encoder_attention(const float *qkv, const la_encoder_batch *b, uint32_t heads, uint32_t head_dim,
                                    float *ctx) { return LA_NO_CUDA; }
la_status la_cuda_encoder_pool(const float *x, const la_encoder_batch *b, size_t n, float *out) { return LA_NO_CUDA; }
la_status la_cuda_encoder_forward(const la_encoder_weights *w, const la_encoder_batch *b, la_encoder_ws *ws,
                                  float *out) { return LA_NO_CUDA; }
void la_cuda_encoder_release(void) {}
#endif
