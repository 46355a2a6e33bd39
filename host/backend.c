/* backend.c - backend selection (see backend.h). */
#include "backend.h"

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

la_status la_backend_select(la_backend_req req, const la_backend *const *table, size_t n, la_backend_choice *out)
{
    memset(out, 0, sizeof *out);
    if (n == 0) return la_error(LA_EINVAL, "no backend table");
    out->be = table[0];
    const char *env = getenv("LEAKAUDIT_BACKEND");
    if (req == LA_BACKEND_AUTO && env && *env) {
        la_status s = la_backend_parse(env, &req);
        if (s != LA_OK) return la_error(LA_EINVAL, "LEAKAUDIT_BACKEND=%s: expected auto, cpu or gpu", env);
    }
    if (req == LA_BACKEND_CPU) return LA_OK;
    la_status first = LA_OK;
    char why[400] = "no device backend in this build";
    for (size_t i = 1; i < n; i++) {
        if (!table[i]->device) continue;
        char desc[256] = "";
        la_status s = table[i]->probe(table[i], desc, sizeof desc);
        if (s == LA_OK) {
            out->be = table[i];
            out->fallback = req == LA_BACKEND_GPU ? NULL : table[0];
            out->explicit_gpu = req == LA_BACKEND_GPU;
            snprintf(out->device, sizeof out->device, "%s", desc);
            return LA_OK;
        }
        if (first == LA_OK) { /* the first device backend's reason is the one to show */
            first = s;
            snprintf(why, sizeof why, "%s", *la_last_error() ? la_last_error() : la_strerror(s));
        }
        la_error_clear();
    }
    if (req == LA_BACKEND_GPU) return la_error(first == LA_OK ? LA_ENODEV : first, "--backend gpu: %s", why);
    snprintf(out->note, sizeof out->note, "auto chose the CPU: %s", why);
    return LA_OK;
}

const char *la_backend_ran_on(const la_exec *x)
{
    for (size_t k = 0; k < x->log.n; k++)
        if (x->log.v[k].device) return "gpu";
    return "cpu";
}

int la_backend_fallback_note(const la_exec *x, char *note, size_t cap)
{
    if (!x->note[0]) return 0;
    snprintf(note, cap, "auto fell back to the CPU: %.600s", x->note);
    return 1;
}

void la_backend_stages(const la_exec *x, const char *prefix, la_report_stage *out, size_t *n)
{
    *n = 0;
    for (size_t i = 0; x && i < x->log.n && *n < LA_REPORT_MAX_STAGES; i++) {
        const la_stage *st = &x->log.v[i];
        if (strncmp(st->name, prefix, strlen(prefix))) continue;
        out[(*n)++] = (la_report_stage){st->name, st->backend, st->fallback, st->calls, st->items, st->bytes};
    }
}
