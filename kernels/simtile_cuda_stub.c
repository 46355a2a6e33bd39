/* simtile_cuda_stub.c - la_cuda_simtile and friends when the build has no CUDA backend
 * (see simtile_cuda.h): every entry point says so with LA_EUNSUPPORTED. */
#include "simtile_cuda.h"

#ifndef LA_HAVE_CUDA
void la_cuda_simtile_opts_default(la_cuda_simtile_opts *o) {
    o->device = 0;
    o->precision = LA_GEMM_FP16;
    o->block_q = 0;
    o->block_s = 0;
    o->mem_limit = 0;
}

la_status la_cuda_simtile(const float *Q, size_t nq, const float *S, size_t ns, size_t d,
                          uint32_t s_offset, const la_simtile_params *p,
                          const la_cuda_simtile_opts *o, la_simtile_hits *hits, uint32_t *top_idx,
                          float *top_cos, la_simtile_stats *stats, la_cuda_simtile_stats *cstats) {
    return la_error(LA_EUNSUPPORTED, "this build has no CUDA backend (built without nvcc)");
}

la_status la_cuda_gemm_reference(size_t m, size_t n, size_t d, int precision, int out_fp32,
                                 int reps, int device, double *tflops) {
    *tflops = 0;
    return la_error(LA_EUNSUPPORTED, "this build has no CUDA backend (built without nvcc)");
}
#endif
