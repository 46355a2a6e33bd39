/*
 * backend.h - choosing where the heavy lifting runs: --backend auto|cpu|gpu (env LEAKAUDIT_BACKEND).
 * auto uses the GPU when the build has CUDA and a device is present, else the CPU; gpu fails with
 * LA_ENODEV/LA_EUNSUPPORTED and the runtime's message when it cannot; cpu never touches a device.
 */
#ifndef LA_BACKEND_H
#define LA_BACKEND_H

#include "leakaudit.h"

typedef enum la_backend_req { LA_BACKEND_AUTO = 0, LA_BACKEND_CPU, LA_BACKEND_GPU } la_backend_req;

typedef struct la_backend {
    int gpu;                 /* 1: run on the GPU */
    int explicit_gpu;        /* the GPU was asked for (--backend gpu or LEAKAUDIT_BACKEND=gpu) */
    char device[256];        /* device name when gpu */
    char note[512];          /* why auto chose the CPU, for the report; empty when nothing to say */
} la_backend;

la_status la_backend_parse(const char *s, la_backend_req *out /* OUT */);

/* Resolve the request (LEAKAUDIT_BACKEND applies when req is AUTO and the variable is set). */
la_status la_backend_select(la_backend_req req, la_backend *out /* OUT */);

#endif /* LA_BACKEND_H */
