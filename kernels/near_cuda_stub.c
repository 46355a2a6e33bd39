/* near_cuda_stub.c - the near-copy CUDA twins when the build has no CUDA backend (see near_cuda.h):
 * every entry point says so with LA_EUNSUPPORTED. */
#include "near_cuda.h"

#ifndef LA_HAVE_CUDA
#define NO_CUDA la_error(LA_EUNSUPPORTED, "this build has no CUDA backend (built without nvcc)")

void la_cuda_near_opts_default(la_cuda_near_opts *o) {
    o->device = 0;
    o->mem_limit = 0;
}

la_status la_cuda_minhash(const uint64_t *h, const uint64_t *off, size_t ndocs, int k, int bands,
                          int rows, const la_cuda_near_opts *o, uint32_t *sig, uint64_t *keys,
                          la_cuda_near_stats *st) {
    return NO_CUDA;
}

la_status la_cuda_simhash(const uint64_t *h, const uint64_t *off, size_t ndocs,
                          const la_cuda_near_opts *o, uint64_t *out, la_cuda_near_stats *st) {
    return NO_CUDA;
}

la_status la_cuda_shingle_minhash(const char *text, const uint64_t *off, size_t ndocs, int kind,
                                  int n, int k, int bands, int rows, const la_cuda_near_opts *o,
                                  uint32_t *sig, uint64_t *keys, uint32_t *nshingles,
                                  la_cuda_near_stats *st) {
    return NO_CUDA;
}

la_status la_cuda_lsh_keys(const uint32_t *sig, size_t ndocs, int k, int bands, int rows,
                           const la_cuda_near_opts *o, uint64_t *keys) {
    return NO_CUDA;
}

la_status la_cuda_sort_key_rows(la_key_row *e, size_t n, const la_cuda_near_opts *o) { return NO_CUDA; }
#endif
