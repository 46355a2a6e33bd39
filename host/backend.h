/*
 * backend.h - choosing where the heavy lifting runs: --backend auto|cpu|gpu (env LEAKAUDIT_BACKEND)
 * resolved against a backend table (kernels/backend_ops.h; la_backends_builtin, or a test's own).
 *
 *   cpu   the reference (the table's first entry); never touches a device
 *   gpu   the first device backend whose probe succeeds; none: LA_ENODEV or LA_EUNSUPPORTED with
 *         the probe's reason (the CLI exits 2). No fallback during the run: a device failure fails
 *         the run.
 *   auto  gpu when a device backend probes fine, with the reference as the fallback during the
 *         run; otherwise the reference, with why in note
 *
 * The choice feeds one la_exec (index/dispatch.h) that every tier runs its ops through.
 */
#ifndef LA_BACKEND_H
#define LA_BACKEND_H

#include "backend_ops.h"
#include "dispatch.h"
#include "leakaudit.h"
#include "report_tiers.h"

typedef enum la_backend_req { LA_BACKEND_AUTO = 0, LA_BACKEND_CPU, LA_BACKEND_GPU } la_backend_req;

typedef struct la_backend_choice {
    const la_backend *be;        /* what runs (borrowed from the table) */
    const la_backend *fallback;  /* the reference under auto when be is a device; else NULL */
    int explicit_gpu;            /* the GPU was asked for (--backend gpu or LEAKAUDIT_BACKEND=gpu) */
    char device[256];            /* the probe's description when be is a device */
    char note[512];              /* why auto chose the CPU, for the report; empty when nothing to say */
} la_backend_choice;

la_status la_backend_parse(const char *s, la_backend_req *out /* OUT */);

/* Resolve the request (LEAKAUDIT_BACKEND applies when req is AUTO and the variable is set) over
 * table[0..n), whose first entry is the reference. Returns LA_EINVAL for a bad LEAKAUDIT_BACKEND,
 * and for gpu without a usable device the probe's status (LA_ENODEV, LA_EUNSUPPORTED) with
 * "--backend gpu: REASON". */
la_status la_backend_select(la_backend_req req, const la_backend *const *table, size_t n,
                            la_backend_choice *out /* OUT */);

/* What a run's backend ops ran on: "gpu" when any stage of x ran on a device, else "cpu". When
 * auto fell back to the CPU during the run, note receives "auto fell back to the CPU: REASON"
 * and the result is 1; else note keeps what it holds (the choice's note) and the result is 0. */
const char *la_backend_ran_on(const la_exec *x);
int la_backend_fallback_note(const la_exec *x, char *note /* OUT */, size_t cap);

/* The stages of x whose names start with prefix ("near_", "semantic_"), for a tier's report; the
 * strings are borrowed from x. *n receives the count (at most LA_REPORT_MAX_STAGES). */
void la_backend_stages(const la_exec *x, const char *prefix, la_report_stage *out /* OUT */, size_t *n /* OUT */);

#endif /* LA_BACKEND_H */
