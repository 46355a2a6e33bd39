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
#include <stdlib.h>
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
    int threads;
} sort_args;

/* A host-loop sort of more entries than this is cut into parts of about this many by the bits
 * under the keys' common prefix, each sorted by the op on its own: a part and its scratch copy stay
 * in the last-level cache, where the op's passes over the whole array would not (one million
 * entries: 20 ms whole, 13 ms in four parts on one thread, on the machine of docs/performance.md). */
enum { SORT_PART = 1 << 18 };

typedef struct sort_parts {
    const la_backend *be;
    la_key_row *e, *tmp;
    const size_t *start;   /* part p is [start[p], start[p + 1]) */
} sort_parts;

/* Parts [begin, end): sorted in the scratch copy, then back in place. */
static la_status sort_part(void *ctx, int worker, size_t begin, size_t end)
{
    const sort_parts *sp = ctx;
    (void)worker;
    for (size_t p = begin; p < end; p++) {
        size_t b = sp->start[p], m = sp->start[p + 1] - b;
        LA_TRY(sp->be->sort_keys(sp->be, sp->tmp + b, m));
        memcpy(sp->e + b, sp->tmp + b, m * sizeof *sp->e);
    }
    return LA_OK;
}

/* The op's stable order, part by part: entries go to the part of their bits just under the common
 * prefix in input order (keys above that prefix are equal, so every key of a part sorts before
 * every key of the next), and each part is sorted by the op, stably. */
static la_status sort_in_parts(const la_backend *be, la_key_row *e, size_t n, int threads)
{
    uint64_t any = 0, all = ~0ull;
    for (size_t i = 0; i < n; i++) {
        any |= e[i].key;
        all &= e[i].key;
    }
    uint64_t differ = any & ~all; /* the bits that are not the same in every key */
    if (!differ) return LA_OK;    /* one key: stably sorted as it is */
    int top = 63 - __builtin_clzll(differ), bits = 1;
    while (((size_t)SORT_PART << bits) < n && bits < 8) bits++;
    int shift = top + 1 - bits < 0 ? 0 : top + 1 - bits;
    size_t parts = (size_t)1 << bits, mask = parts - 1;
    size_t start[257] = {0}, at[256];
    for (size_t i = 0; i < n; i++) start[((e[i].key >> shift) & mask) + 1]++;
    for (size_t p = 0; p < parts; p++) start[p + 1] += start[p];
    memcpy(at, start, parts * sizeof *at);
    la_key_row *tmp = malloc(n * sizeof *tmp);
    if (!tmp) return la_error(LA_ENOMEM, "out of memory sorting %zu bucket entries", n);
    for (size_t i = 0; i < n; i++) tmp[at[(e[i].key >> shift) & mask]++] = e[i];
    sort_parts sp = {be, e, tmp, start};
    la_status s = la_parallel_for(threads, parts, 1, sort_part, &sp);
    free(tmp);
    return s;
}

static la_status call_sort_keys(const la_backend *be, const void *args, size_t d0, size_t d1)
{
    const sort_args *a = args;
    if (be->host_loops && d1 - d0 > 2 * (size_t)SORT_PART) return sort_in_parts(be, a->e + d0, d1 - d0, a->threads);
    return be->sort_keys(be, a->e + d0, d1 - d0);
}

la_status la_exec_sort_keys(la_exec *x, const char *stage, la_key_row *e, size_t n)
{
    sort_args a = {e, x->threads};
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
