/*
 * cublas_load.cuh - cuBLAS, loaded when a kernel first needs it, not when the program starts.
 *
 * Linking libcublas puts it and libcublasLt (half a gigabyte) into every process: their relocation
 * and constructors cost about 0.2 s and 200 MB of resident memory at start-up, on machines with no
 * GPU too, where they are never called. The few cuBLAS functions the kernels use are therefore
 * resolved with dlopen/dlsym on first use (libcublas.so.<major> of the toolkit the build used: the
 * loader's search path first, then the folder the CUDA runtime was loaded from). Each wrapper has
 * the signature of the cuBLAS function it stands for; when the library cannot be loaded they return
 * CUBLAS_STATUS_NOT_INITIALIZED, and la_cublas_status_string names the library and the loader's
 * message, so LA_CUBLAS reports it and the caller falls back to the CPU as for any CUDA error.
 * Internal to the .cu files.
 */
#ifndef LA_CUBLAS_LOAD_CUH
#define LA_CUBLAS_LOAD_CUH

#include <cublas_v2.h>

cublasStatus_t la_cublas_create(cublasHandle_t *handle);
cublasStatus_t la_cublas_destroy(cublasHandle_t handle);
cublasStatus_t la_cublas_set_stream(cublasHandle_t handle, cudaStream_t stream);
cublasStatus_t la_cublas_set_math_mode(cublasHandle_t handle, cublasMath_t mode);
cublasStatus_t la_cublas_gemm_ex(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, int m,
                                 int n, int k, const void *alpha, const void *A, cudaDataType Atype, int lda,
                                 const void *B, cudaDataType Btype, int ldb, const void *beta, void *C,
                                 cudaDataType Ctype, int ldc, cublasComputeType_t compute, cublasGemmAlgo_t algo);
/* cuBLAS's text for a status; after a failed load, why the library could not be loaded. */
const char *la_cublas_status_string(cublasStatus_t status);

#endif /* LA_CUBLAS_LOAD_CUH */
