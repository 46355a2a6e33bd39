/*
 * device.h - what the CUDA runtime says about the devices, for backend selection and `doctor`.
 * Without CUDA compiled in, every function returns LA_EUNSUPPORTED (see device_stub.c). No CUDA
 * header is included here.
 */
#ifndef LA_DEVICE_H
#define LA_DEVICE_H

#include "leakaudit.h"

typedef struct la_device_info {
    char name[256];
    size_t total_mem, free_mem;
    int cc_major, cc_minor;
    int runtime_version, driver_version;
} la_device_info;

/* 1 when this build has the CUDA backend. */
int la_cuda_compiled(void);

/* Number of usable devices; LA_ENODEV with the runtime's message when none, LA_EUNSUPPORTED without
 * CUDA. */
la_status la_cuda_device_count(int *count /* OUT */);

/* Properties of device `index`. */
la_status la_cuda_device_info(int index, la_device_info *out /* OUT */);

/* Load cuBLAS (the CUDA kernels open it on first use, not at start-up) and write the file it was
 * loaded from into path[0 .. n); LA_ENODEV with the loader's message when it cannot be loaded,
 * LA_EUNSUPPORTED without CUDA. Needs no device. */
la_status la_cuda_blas_library(char *path, size_t n);

#endif /* LA_DEVICE_H */
