/*
 * keysort.cu - the CUDA twin of la_sort_key_rows (util/la_keysort.h; contract in near_cuda.h): CUB's
 * device radix sort of the 64-bit keys with the rows as values. CUB's radix sort is stable, like the
 * CPU's MSD radix sort, so entries with equal keys keep their input order and both give the same
 * array. The entries are split into a key array and a row array on the host, sorted on the device,
 * and written back only when every call succeeded: on failure e is exactly as it was.
 */
#include <cub/device/device_radix_sort.cuh>

#include <limits.h>
#include <stdlib.h>

#include "cuda_check.cuh"
#include "la_keysort.h"
#include "near_cuda.h"

struct sort_bufs {
    uint64_t *h_key;
    uint32_t *h_row;
    uint64_t *d_key[2];
    uint32_t *d_row[2];
    void *d_tmp;
};

static la_status sort_on_device(la_key_row *e, size_t n, const la_cuda_near_opts *o, sort_bufs *b) {
    LA_TRY(la_cu_use_device(o ? o->device : 0));
    if (n > (size_t)INT_MAX) return la_error(LA_EUNSUPPORTED, "key sort (CUDA): %zu entries, at most %d", n, INT_MAX);
    size_t tmp_bytes = 0;
    LA_CU(cub::DeviceRadixSort::SortPairs((void *)NULL, tmp_bytes, (const uint64_t *)NULL, (uint64_t *)NULL,
                                          (const uint32_t *)NULL, (uint32_t *)NULL, (int)n));
    size_t fr = 0, tot = 0;
    LA_CU(cudaMemGetInfo(&fr, &tot));
    size_t need = n * 2 * (sizeof(uint64_t) + sizeof(uint32_t)) + tmp_bytes;
    size_t limit = o && o->mem_limit ? o->mem_limit : fr / 2;
    if (need > limit)
        return la_error(LA_ECUDA, "key sort (CUDA): %zu entries need %zu MiB of device memory, %zu MiB usable", n,
                        need >> 20, limit >> 20);
    LA_CU(cudaMallocHost(&b->h_key, n * sizeof *b->h_key));
    LA_CU(cudaMallocHost(&b->h_row, n * sizeof *b->h_row));
    for (int i = 0; i < 2; i++) {
        LA_CU(cudaMalloc(&b->d_key[i], n * sizeof(uint64_t)));
        LA_CU(cudaMalloc(&b->d_row[i], n * sizeof(uint32_t)));
    }
    LA_CU(cudaMalloc(&b->d_tmp, tmp_bytes ? tmp_bytes : 8));
    for (size_t i = 0; i < n; i++) {
        b->h_key[i] = e[i].key;
        b->h_row[i] = e[i].row;
    }
    LA_CU(cudaMemcpy(b->d_key[0], b->h_key, n * sizeof(uint64_t), cudaMemcpyHostToDevice));
    LA_CU(cudaMemcpy(b->d_row[0], b->h_row, n * sizeof(uint32_t), cudaMemcpyHostToDevice));
    LA_CU(cub::DeviceRadixSort::SortPairs(b->d_tmp, tmp_bytes, b->d_key[0], b->d_key[1], b->d_row[0], b->d_row[1],
                                          (int)n));
    LA_CU_LAUNCHED();
    LA_CU(cudaMemcpy(b->h_key, b->d_key[1], n * sizeof(uint64_t), cudaMemcpyDeviceToHost));
    LA_CU(cudaMemcpy(b->h_row, b->d_row[1], n * sizeof(uint32_t), cudaMemcpyDeviceToHost));
    for (size_t i = 0; i < n; i++) {
        e[i].key = b->h_key[i];
        e[i].row = b->h_row[i];
    }
    return LA_OK;
}

extern "C" la_status la_cuda_sort_key_rows(la_key_row *e, size_t n, const la_cuda_near_opts *o) {
    if (n < 2) return LA_OK;
    if (!e) return la_error(LA_EINVAL, "key sort (CUDA): bad arguments");
    sort_bufs b;
    memset(&b, 0, sizeof b);
    la_status s = sort_on_device(e, n, o, &b);
    la_cu_free_host(&b.h_key);
    la_cu_free_host(&b.h_row);
    for (int i = 0; i < 2; i++) {
        la_cu_free(&b.d_key[i]);
        la_cu_free(&b.d_row[i]);
    }
    la_cu_free(&b.d_tmp);
    cudaGetLastError();
    return s;
}
