/*
 * cublas_load.cu - cuBLAS resolved on first use (see cublas_load.cuh).
 */
#include "cublas_load.cuh"

#include <cuda_runtime.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

extern "C" {
#include "device.h"
}

#define LA_STR2(x) #x
#define LA_STR(x) LA_STR2(x)
#define LA_CUBLAS_SONAME "libcublas.so." LA_STR(CUBLAS_VER_MAJOR)

namespace {

struct api {
    cublasStatus_t (*create)(cublasHandle_t *);
    cublasStatus_t (*destroy)(cublasHandle_t);
    cublasStatus_t (*set_stream)(cublasHandle_t, cudaStream_t);
    cublasStatus_t (*set_math_mode)(cublasHandle_t, cublasMath_t);
    cublasStatus_t (*gemm_ex)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int, int, const void *,
                              const void *, cudaDataType, int, const void *, cudaDataType, int, const void *, void *,
                              cudaDataType, int, cublasComputeType_t, cublasGemmAlgo_t);
    const char *(*status_string)(cublasStatus_t);
};

api g_api;
int g_loaded;             /* 1: every symbol resolved */
char g_why[512];          /* why not, for la_cublas_status_string */
pthread_once_t g_once = PTHREAD_ONCE_INIT;

/* The library next to the CUDA runtime this process loaded (the toolkit's lib folder). */
void *open_beside_runtime(void)
{
    Dl_info info;
    if (!dladdr((const void *)&cudaGetDeviceCount, &info) || !info.dli_fname) return nullptr;
    const char *slash = strrchr(info.dli_fname, '/');
    if (!slash) return nullptr;
    char path[4096];
    int n = snprintf(path, sizeof path, "%.*s/%s", (int)(slash - info.dli_fname), info.dli_fname, LA_CUBLAS_SONAME);
    if (n <= 0 || (size_t)n >= sizeof path) return nullptr;
    return dlopen(path, RTLD_NOW | RTLD_LOCAL);
}

template <typename F> bool resolve(void *lib, const char *name, F *out)
{
    void *p = dlsym(lib, name);
    if (!p) {
        snprintf(g_why, sizeof g_why, "%s: symbol %s not found", LA_CUBLAS_SONAME, name);
        return false;
    }
    *out = reinterpret_cast<F>(p);
    return true;
}

void load(void)
{
    void *lib = dlopen(LA_CUBLAS_SONAME, RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        const char *e = dlerror();
        snprintf(g_why, sizeof g_why, "cannot load %s: %s", LA_CUBLAS_SONAME, e ? e : "not found");
        lib = open_beside_runtime();
        if (!lib) return;
    }
    if (resolve(lib, "cublasCreate_v2", &g_api.create) && resolve(lib, "cublasDestroy_v2", &g_api.destroy) &&
        resolve(lib, "cublasSetStream_v2", &g_api.set_stream) &&
        resolve(lib, "cublasSetMathMode", &g_api.set_math_mode) && resolve(lib, "cublasGemmEx", &g_api.gemm_ex) &&
        resolve(lib, "cublasGetStatusString", &g_api.status_string))
        g_loaded = 1;
}

bool ready(void)
{
    pthread_once(&g_once, load);
    return g_loaded != 0;
}

} // namespace

cublasStatus_t la_cublas_create(cublasHandle_t *handle)
{
    return ready() ? g_api.create(handle) : CUBLAS_STATUS_NOT_INITIALIZED;
}

cublasStatus_t la_cublas_destroy(cublasHandle_t handle)
{
    return ready() ? g_api.destroy(handle) : CUBLAS_STATUS_NOT_INITIALIZED;
}

cublasStatus_t la_cublas_set_stream(cublasHandle_t handle, cudaStream_t stream)
{
    return ready() ? g_api.set_stream(handle, stream) : CUBLAS_STATUS_NOT_INITIALIZED;
}

cublasStatus_t la_cublas_set_math_mode(cublasHandle_t handle, cublasMath_t mode)
{
    return ready() ? g_api.set_math_mode(handle, mode) : CUBLAS_STATUS_NOT_INITIALIZED;
}

cublasStatus_t la_cublas_gemm_ex(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, int m,
                                 int n, int k, const void *alpha, const void *A, cudaDataType Atype, int lda,
                                 const void *B, cudaDataType Btype, int ldb, const void *beta, void *C,
                                 cudaDataType Ctype, int ldc, cublasComputeType_t compute, cublasGemmAlgo_t algo)
{
    if (!ready()) return CUBLAS_STATUS_NOT_INITIALIZED;
    return g_api.gemm_ex(handle, transa, transb, m, n, k, alpha, A, Atype, lda, B, Btype, ldb, beta, C, Ctype, ldc,
                         compute, algo);
}

const char *la_cublas_status_string(cublasStatus_t status)
{
    if (!ready()) return g_why;
    return g_api.status_string(status);
}

extern "C" la_status la_cuda_blas_library(char *path, size_t n)
{
    if (n) path[0] = 0;
    if (!ready()) return la_error(LA_ENODEV, "%s", g_why);
    Dl_info info;
    if (n && dladdr((const void *)g_api.create, &info) && info.dli_fname) snprintf(path, n, "%s", info.dli_fname);
    return LA_OK;
}
