/* backend.c - backend selection (see backend.h). */
#include "backend.h"

#include "device.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

la_status la_backend_parse(const char *s, la_backend_req *out)
{
    if (!strcmp(s, "auto")) *out = LA_BACKEND_AUTO;
    else if (!strcmp(s, "cpu")) *out = LA_BACKEND_CPU;
    else if (!strcmp(s, "gpu")) *out = LA_BACKEND_GPU;
    else return la_error(LA_EINVAL, "backend '%s': expected auto, cpu or gpu", s);
    return LA_OK;
}

la_status la_backend_select(la_backend_req req, la_backend *out)
{
    memset(out, 0, sizeof *out);
    const char *env = getenv("LEAKAUDIT_BACKEND");
    if (req == LA_BACKEND_AUTO && env && *env) {
        la_status s = la_backend_parse(env, &req);
        if (s != LA_OK) return la_error(LA_EINVAL, "LEAKAUDIT_BACKEND=%s: expected auto, cpu or gpu", env);
    }
    if (req == LA_BACKEND_CPU) return LA_OK;
    int count = 0;
    la_status s = la_cuda_device_count(&count);
    if (s != LA_OK) {
        char why[400];
        snprintf(why, sizeof why, "%s", la_last_error());
        if (req == LA_BACKEND_GPU) return la_error(s, "--backend gpu: %s", why);
        snprintf(out->note, sizeof out->note, "auto chose the CPU: %s", why);
        la_error_clear();
        return LA_OK;
    }
    la_device_info info;
    s = la_cuda_device_info(0, &info);
    if (s != LA_OK) {
        if (req == LA_BACKEND_GPU) return s;
        snprintf(out->note, sizeof out->note, "auto chose the CPU: %s", la_last_error());
        la_error_clear();
        return LA_OK;
    }
    out->gpu = 1;
    out->explicit_gpu = req == LA_BACKEND_GPU;
    snprintf(out->device, sizeof out->device, "%.200s (compute %d.%d, %.1f GiB)", info.name, info.cc_major, info.cc_minor,
             (double)info.total_mem / (1024.0 * 1024.0 * 1024.0));
    return LA_OK;
}
