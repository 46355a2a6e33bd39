/*
 * dispatch.c - running backend ops with fallback and a per-stage log (see dispatch.h).
 *
 * Every wrapper packs its arguments and hands run() a function that calls the op over documents
 * [d0, d1) of the batch; run() splits the batch across workers on host-loop backends, times it,
 * falls back on a device failure and logs the stage.
 */
#include "dispatch.h"

#include "la_time.h"
#include "parallel.h"

#include <stdio.h>
#include <string.h>

enum { SPLIT_CHUNK = 256 };

typedef la_status (*op_call)(const la_backend *be, const void *args, size_t d0, size_t d1);

void la_exec_init(la_exec *x, const la_backend *be, const la_backend *fallback, int threads)
{
    memset(x, 0, sizeof *x);
    x->be = x->chosen = be;
    x->fallback = fallback == be ? NULL : fallback;
    x->threads = threads;
}

const la_stage *la_exec_stage(const la_exec *x, const char *name)
{
    for (size_t i = 0; i < x->log.n; i++)
        if (!strcmp(x->log.v[i].name, name)) return &x->log.v[i];
    return NULL;
}

static la_stage *stage_get(la_exec *x, const char *name)
{
    for (size_t i = 0; i < x->log.n; i++)
        if (!strcmp(x->log.v[i].name, name)) return &x->log.v[i];
    if (x->log.n == LA_MAX_STAGES) return NULL;
    la_stage *st = &x->log.v[x->log.n++];
    memset(st, 0, sizeof *st);
    st->name = name;
    return st;
}


typedef struct split_arg {
    const la_backend *be;
    op_call fn;
    const void *args;
} split_arg;

static la_status split_worker(void *ctx, int worker, size_t begin, size_t end)
{
    const split_arg *s = ctx;
    return s->fn(s->be, s->args, begin, end);
}

static la_status call_on(const la_exec *x, const la_backend *be, op_call fn, const void *args, size_t ndocs,
                         int splittable)
{
    if (splittable && be->host_loops && ndocs > SPLIT_CHUNK) {
        split_arg s = {be, fn, args};
        return la_parallel_for(x->threads, ndocs, la_parallel_grain(x->threads, ndocs, SPLIT_CHUNK), split_worker, &s);
    }
    return fn(be, args, 0, ndocs);
}

static la_status run(la_exec *x, const char *stage, op_call fn, const void *args, size_t ndocs, int splittable,
                     double items, double bytes)
{
    la_stage *st = stage_get(x, stage);
    if (!st) return la_error(LA_EINTERNAL, "dispatch: more than %d stages", LA_MAX_STAGES);
    if (x->be != x->chosen && !st->fallback[0]) snprintf(st->fallback, sizeof st->fallback, "%s", x->note);
    double t0 = la_now();
    const la_backend *be = x->be;
    la_status s = call_on(x, be, fn, args, ndocs, splittable);
    if (s != LA_OK && la_backend_device_failure(s)) {
        char why[400];
        snprintf(why, sizeof why, "%s", *la_last_error() ? la_last_error() : la_strerror(s));
        la_error_clear();
        if (!x->fallback || be == x->fallback) return la_error(s, "%.40s on the %.40s backend: %s", stage, be->name, why);
        snprintf(st->fallback, sizeof st->fallback, "%.40s on %.40s: %s", stage, be->name, why);
        if (!x->note[0]) snprintf(x->note, sizeof x->note, "%s", st->fallback);
        x->be = be = x->fallback;
        s = call_on(x, be, fn, args, ndocs, splittable);
    }
    if (s != LA_OK) return s;
    st->backend = be->name;
    st->device = be->device;
    st->calls++;
    st->items += items;
    st->bytes += bytes;
    st->seconds += la_now() - t0;
    return LA_OK;
}

la_status la_exec_log_host(la_exec *x, const char *stage, double items, double bytes, double seconds)
{
    la_stage *st = stage_get(x, stage);
    if (!st) return la_error(LA_EINTERNAL, "dispatch: more than %d stages", LA_MAX_STAGES);
    if (x->be != x->chosen && !st->fallback[0]) snprintf(st->fallback, sizeof st->fallback, "%s", x->note);
    st->backend = x->be->name;
    st->device = x->be->device;
    st->calls++;
    st->items += items;
    st->bytes += bytes;
    st->seconds += seconds;
    return LA_OK;
}

/* ---- the ops ------------------------------------------------------------------------------------- */

typedef struct csr_args {
    const void *items;  /* text or hashes */
    const uint64_t *off;
    int kind, n, k, bands, rows;
    void *out;          /* sig, keys or SimHash */
    uint32_t *counts;
} csr_args;

static double csr_bytes(const uint64_t *off, size_t ndocs, size_t item)
{
    return ndocs ? (double)(off[ndocs] - off[0]) * (double)item : 0.0;
}

static la_status call_minhash(const la_backend *be, const void *args, size_t d0, size_t d1)
{
    const csr_args *a = args;
    return be->minhash(be, a->items, a->off + d0, d1 - d0, a->k, (uint32_t *)a->out + d0 * (size_t)a->k);
}

la_status la_exec_minhash(la_exec *x, const char *stage, const uint64_t *h, const uint64_t *off, size_t ndocs, int k,
                          uint32_t *sig)
{
    csr_args a = {.items = h, .off = off, .k = k, .out = sig};
    return run(x, stage, call_minhash, &a, ndocs, 1, (double)ndocs, csr_bytes(off, ndocs, 8));
}

static la_status call_shingle_minhash(const la_backend *be, const void *args, size_t d0, size_t d1)
{
    const csr_args *a = args;
    return be->shingle_minhash(be, a->items, a->off + d0, d1 - d0, a->kind, a->n, a->k,
                               (uint32_t *)a->out + d0 * (size_t)a->k, a->counts ? a->counts + d0 : NULL);
}

la_status la_exec_shingle_minhash(la_exec *x, const char *stage, const char *text, const uint64_t *off, size_t ndocs,
                                  int kind, int n, int k, uint32_t *sig, uint32_t *nshingles)
{
    csr_args a = {.items = text, .off = off, .kind = kind, .n = n, .k = k, .out = sig, .counts = nshingles};
    return run(x, stage, call_shingle_minhash, &a, ndocs, 1, (double)ndocs, csr_bytes(off, ndocs, 1));
}

static la_status call_simhash(const la_backend *be, const void *args, size_t d0, size_t d1)
{
    const csr_args *a = args;
    return be->simhash(be, a->items, a->off + d0, d1 - d0, (uint64_t *)a->out + d0);
}

la_status la_exec_simhash(la_exec *x, const char *stage, const uint64_t *h, const uint64_t *off, size_t ndocs,
                          uint64_t *out)
{
    csr_args a = {.items = h, .off = off, .out = out};
    return run(x, stage, call_simhash, &a, ndocs, 1, (double)ndocs, csr_bytes(off, ndocs, 8));
}

static la_status call_lsh_keys(const la_backend *be, const void *args, size_t d0, size_t d1)
{
    const csr_args *a = args;
    return be->lsh_keys(be, (const uint32_t *)a->items + d0 * (size_t)a->k, d1 - d0, a->k, a->bands, a->rows,
                        (uint64_t *)a->out + d0 * (size_t)a->bands);
}

la_status la_exec_lsh_keys(la_exec *x, const char *stage, const uint32_t *sig, size_t ndocs, int k, int bands,
                           int rows, uint64_t *keys)
{
    csr_args a = {.items = sig, .k = k, .bands = bands, .rows = rows, .out = keys};
    return run(x, stage, call_lsh_keys, &a, ndocs, 1, (double)ndocs, (double)ndocs * k * 4);
}

typedef struct sort_args {
    la_key_row *e;
} sort_args;

static la_status call_sort_keys(const la_backend *be, const void *args, size_t d0, size_t d1)
{
    const sort_args *a = args;
    return be->sort_keys(be, a->e + d0, d1 - d0);
}

la_status la_exec_sort_keys(la_exec *x, const char *stage, la_key_row *e, size_t n)
{
    sort_args a = {e};
    return run(x, stage, call_sort_keys, &a, n, 0, (double)n, (double)n * sizeof *e);
}

typedef struct tile_args {
    const float *Q, *S;
    size_t nq, ns, d;
    uint32_t s_offset;
    const la_simtile_params *p;
    la_simtile_hits *hits;
    uint32_t *top_idx;
    float *top_cos;
    size_t *rescored;
} tile_args;

static la_status call_simtile(const la_backend *be, const void *args, size_t d0, size_t d1)
{
    const tile_args *a = args;
    return be->simtile(be, a->Q, a->nq, a->S, a->ns, a->d, a->s_offset, a->p, a->hits, a->top_idx, a->top_cos, a->rescored);
}

la_status la_exec_simtile(la_exec *x, const char *stage, const float *Q, size_t nq, const float *S, size_t ns,
                          size_t d, uint32_t s_offset, const la_simtile_params *p, la_simtile_hits *hits,
                          uint32_t *top_idx, float *top_cos, size_t *rescored)
{
    tile_args a = {Q, S, nq, ns, d, s_offset, p, hits, top_idx, top_cos, rescored};
    return run(x, stage, call_simtile, &a, nq, 0, (double)nq * (double)ns, (double)(nq + ns) * d * sizeof(float));
}
