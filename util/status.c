/*
 * status.c - status codes, the thread-local last error, kind names and the version string.
 * Not for: formatting reports (see report_*.c).
 */
#include "leakaudit.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static _Thread_local char g_last_error[1024];

const char *la_strerror(la_status s)
{
    switch (s) {
    case LA_OK: return "ok";
    case LA_EINVAL: return "invalid argument";
    case LA_EINPUT: return "invalid input data";
    case LA_EIO: return "input/output error";
    case LA_ENOMEM: return "out of memory";
    case LA_ECUDA: return "CUDA error";
    case LA_ENODEV: return "no usable device";
    case LA_EUNSUPPORTED: return "not supported by this build";
    case LA_EINTERNAL: return "internal error";
    }
    return "unknown status";
}

const char *la_last_error(void) { return g_last_error; }

void la_error_clear(void) { g_last_error[0] = '\0'; }

la_status la_error(la_status s, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(g_last_error, sizeof g_last_error, fmt, ap);
    va_end(ap);
    return s;
}

const char *la_version(void) { return LA_VERSION_STRING; }

static const char *const k_kind_names[LA_KIND_COUNT] = {"family", "time", "exact", "near", "semantic"};

const char *la_kind_name(uint32_t kind_bit)
{
    for (int i = 0; i < LA_KIND_COUNT; i++)
        if (kind_bit == (1u << i)) return k_kind_names[i];
    return NULL;
}
