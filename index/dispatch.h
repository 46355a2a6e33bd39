/*
 * dispatch.h - running backend ops (kernels/backend_ops.h) for the index stages: one la_exec says
 * which backend runs and which, if any, takes over when it fails; every call is logged per stage
 * (what ran, why it fell back, items, bytes, seconds) for report.json and the benchmarks.
 *
 * Fallback: when an op on the chosen backend returns a device failure (LA_ECUDA, LA_ENODEV,
 * LA_EUNSUPPORTED) and the exec has a fallback, the reason is kept in the stage and in x->note, the
 * op runs on the fallback, and every later call of this exec goes to the fallback too. Without a
 * fallback (--backend gpu) the failure is returned with the stage named in the message.
 *
 * On a backend with host_loops (the CPU reference) a batch op over documents is split into chunks
 * that x->threads workers run at once (index/parallel.h); a device backend gets the whole batch.
 * Outputs go to fixed slots either way, so the results do not depend on the split. A large sort on
 * such a backend is cut into parts by the key bits under the keys' common prefix, each part sorted
 * by the op on a worker: the same stable order.
 *
 * Not thread safe: one exec per pipeline run, called from one thread.
 */
#ifndef LA_DISPATCH_H
#define LA_DISPATCH_H

#include <stddef.h>
#include <stdint.h>

#include "backend_ops.h"
#include "leakaudit.h"

#ifdef __cplusplus
extern "C" {
#endif

#define LA_MAX_STAGES 12

/* What one stage did, over all its calls. */
typedef struct la_stage {
    const char *name;        /* static: "near_signatures", "semantic_tiles", ... */
    const char *backend;     /* name of the backend that ran its last call (static) */
    int device;              /* that backend is a device */
    char fallback[600];      /* why it did not run on the chosen backend; "" when it did */
    size_t calls;
    double items;            /* documents, entries or held-out x seen rows */
    double bytes;            /* input bytes handed to the op */
    double seconds;          /* wall time inside the op, transfers included */
} la_stage;

typedef struct la_stage_log {
    la_stage v[LA_MAX_STAGES];
    size_t n;
} la_stage_log;

typedef struct la_exec {
    const la_backend *be;        /* the backend in use (switches to fallback after a failure) */
    const la_backend *chosen;    /* the backend selected for this run */
    const la_backend *fallback;  /* NULL: device failures are returned */
    int threads;                 /* workers for host_loops backends; 0 = online CPUs */
    la_stage_log log;
    char note[600];              /* the first fallback's reason ("" when none) */
} la_exec;

/* An exec that runs everything on be, falling back to fallback (may be NULL). */
void la_exec_init(la_exec *x, const la_backend *be, const la_backend *fallback, int threads);

/* The stage of that name, or NULL when it never ran. */
const la_stage *la_exec_stage(const la_exec *x, const char *name);

/* The ops, as in backend_ops.h, under a stage name (a static string). */
la_status la_exec_minhash(la_exec *x, const char *stage, const uint64_t *h, const uint64_t *off, size_t ndocs, int k,
                          uint32_t *sig /* OUT */);
la_status la_exec_shingle_minhash(la_exec *x, const char *stage, const char *text, const uint64_t *off, size_t ndocs,
                                  int kind, int n, int k, uint32_t *sig /* OUT */, uint32_t *nshingles /* OUT */);
la_status la_exec_simhash(la_exec *x, const char *stage, const uint64_t *h, const uint64_t *off, size_t ndocs,
                          uint64_t *out /* OUT */);
la_status la_exec_lsh_keys(la_exec *x, const char *stage, const uint32_t *sig, size_t ndocs, int k, int bands,
                           int rows, uint64_t *keys /* OUT */);
la_status la_exec_sort_keys(la_exec *x, const char *stage, la_key_row *e, size_t n);

/* Log one call of a stage whose op the caller ran itself on x->be, a host_loops backend, from its
 * own workers (a loop that runs several ops on each chunk of documents while they are in the
 * cache): its items, bytes and seconds (the workers' time inside the op over the workers). */
la_status la_exec_log_host(la_exec *x, const char *stage, double items, double bytes, double seconds);
la_status la_exec_simtile(la_exec *x, const char *stage, const float *Q, size_t nq, const float *S, size_t ns,
                          size_t d, uint32_t s_offset, const la_simtile_params *p, la_simtile_hits *hits /* OUT: appended */,
                          uint32_t *top_idx /* IN/OUT */, float *top_cos /* IN/OUT */, size_t *rescored /* OUT */);

#ifdef __cplusplus
}
#endif
#endif /* LA_DISPATCH_H */
