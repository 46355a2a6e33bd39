/*
 * cuda_check.cuh - the checking macros every CUDA and cuBLAS call in kernels/ *.cu goes through, and
 * a few helpers the CUDA twins share. Internal to the .cu files: no C file includes it.
 *
 * A failed call records "file:line: call: runtime message" with la_error and returns LA_ECUDA from
 * the enclosing function (which must return la_status), so the caller can fall back to the CPU.
 * Nothing here aborts. Functions that own device memory free it in one cleanup path: they call a
 * worker that returns early through these macros, then release everything the worker allocated.
 */
#ifndef LA_CUDA_CHECK_CUH
#define LA_CUDA_CHECK_CUH

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include "cublas_load.cuh"

#include "leakaudit.h"

#define LA_CU(call)                                                                           \
    do {                                                                                      \
        cudaError_t la_cu_e_ = (call);                                                        \
        if (la_cu_e_ != cudaSuccess) {                                                        \
            cudaGetLastError(); /* clear a non-sticky error so the next call starts clean */ \
            return la_error(LA_ECUDA, "%s:%d: %s: %s", __FILE__, __LINE__, #call,             \
                            cudaGetErrorString(la_cu_e_));                                    \
        }                                                                                     \
    } while (0)

#define LA_CUBLAS(call)                                                                        \
    do {                                                                                       \
        cublasStatus_t la_cb_s_ = (call);                                                      \
        if (la_cb_s_ != CUBLAS_STATUS_SUCCESS)                                                 \
            return la_error(LA_ECUDA, "%s:%d: %s: %s", __FILE__, __LINE__, #call,              \
                            la_cublas_status_string(la_cb_s_));                                  \
    } while (0)

/* After a kernel launch: a bad configuration shows up here, a fault in the kernel at the next
 * synchronizing call. */
#define LA_CU_LAUNCHED() LA_CU(cudaGetLastError())

/* Free with the runtime, ignoring errors (cleanup paths only), and forget the pointer. */
static inline void la_cu_free(void *pp) {
    void **p = (void **)pp;
    if (*p) cudaFree(*p);
    *p = NULL;
}
static inline void la_cu_free_host(void *pp) {
    void **p = (void **)pp;
    if (*p) cudaFreeHost(*p);
    *p = NULL;
}

/* Select a device and check that one exists; LA_ENODEV otherwise. */
static inline la_status la_cu_use_device(int device) {
    int n = 0;
    cudaError_t e = cudaGetDeviceCount(&n);
    if (e != cudaSuccess || n == 0) {
        cudaGetLastError();
        return la_error(LA_ENODEV, "no usable CUDA device: %s",
                        e != cudaSuccess ? cudaGetErrorString(e) : "none present");
    }
    if (device < 0 || device >= n) return la_error(LA_EINVAL, "CUDA device %d: have %d", device, n);
    LA_CU(cudaSetDevice(device));
    return LA_OK;
}

#endif /* LA_CUDA_CHECK_CUH */
