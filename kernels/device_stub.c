/* device_stub.c - device discovery when the build has no CUDA backend (see device.h). */
#include "device.h"

#include <string.h>

#ifndef LA_HAVE_CUDA
int la_cuda_compiled(void) { return 0; }

la_status la_cuda_device_count(int *count)
{
    *count = 0;
    return la_error(LA_EUNSUPPORTED, "this build has no CUDA backend (built without nvcc)");
}

la_status la_cuda_device_info(int index, la_device_info *out)
{
    memset(out, 0, sizeof *out);
    return la_error(LA_EUNSUPPORTED, "this build has no CUDA backend (built without nvcc)");
}

la_status la_cuda_blas_library(char *path, size_t n)
{
    if (n) path[0] = 0;
    return la_error(LA_EUNSUPPORTED, "this build has no CUDA backend (built without nvcc)");
}
#endif
