/* device.cu - device discovery through the CUDA runtime (see device.h). Errors become statuses. */
#include <cuda_runtime.h>
#include <string.h>

extern "C" {
#include "device.h"
}

extern "C" int la_cuda_compiled(void) { return 1; }

extern "C" la_status la_cuda_device_count(int *count)
{
    *count = 0;
    cudaError_t e = cudaGetDeviceCount(count);
    if (e != cudaSuccess) {
        *count = 0;
        cudaGetLastError();
        /* the runtime reports a missing driver as an insufficient one: say which it is */
        int driver = 0;
        if (e == cudaErrorInsufficientDriver && cudaDriverGetVersion(&driver) == cudaSuccess && driver == 0)
            return la_error(LA_ENODEV, "no NVIDIA driver installed");
        return la_error(LA_ENODEV, "no usable CUDA device: %s", cudaGetErrorString(e));
    }
    if (*count == 0) return la_error(LA_ENODEV, "no CUDA device present");
    return LA_OK;
}

extern "C" la_status la_cuda_device_info(int index, la_device_info *out)
{
    memset(out, 0, sizeof *out);
    cudaDeviceProp prop;
    cudaError_t e = cudaGetDeviceProperties(&prop, index);
    if (e != cudaSuccess) return la_error(LA_ECUDA, "cudaGetDeviceProperties(%d): %s", index, cudaGetErrorString(e));
    strncpy(out->name, prop.name, sizeof out->name - 1);
    out->total_mem = prop.totalGlobalMem;
    out->cc_major = prop.major;
    out->cc_minor = prop.minor;
    cudaRuntimeGetVersion(&out->runtime_version);
    cudaDriverGetVersion(&out->driver_version);
    if (cudaSetDevice(index) == cudaSuccess) {
        size_t fr = 0, tot = 0;
        if (cudaMemGetInfo(&fr, &tot) == cudaSuccess) out->free_mem = fr;
    }
    cudaGetLastError();
    return LA_OK;
}
