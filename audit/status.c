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

la_status la_kinds_parse(const char *list, uint32_t *kinds)
{
    uint32_t k = 0;
    const char *p = list;
    while (p && *p) {
        const char *e = strchr(p, ',');
        size_t n = e ? (size_t)(e - p) : strlen(p);
        int found = 0;
        if (n == 3 && strncmp(p, "all", 3) == 0) { k |= LA_KIND_ALL; found = 1; }
        else if (n == 4 && strncmp(p, "none", 4) == 0) { found = 1; }
        for (int i = 0; i < LA_KIND_COUNT && !found; i++)
            if (strlen(k_kind_names[i]) == n && strncmp(p, k_kind_names[i], n) == 0) {
                k |= 1u << i;
                found = 1;
            }
        if (!found)
            return la_error(LA_EINVAL, "unknown kind '%.*s' (expected family, time, exact, near, semantic, all or none)",
                            (int)n, p);
        p = e ? e + 1 : NULL;
    }
    *kinds = k;
    return LA_OK;
}
