/*
 * shard.c - shard slices, and the partial results of sharded audits: kept, written, read back and
 * merged (shard.h).
 *
 * shard.bin is little-endian and sequential: a magic line, the format version, then the fields in
 * the order la_partial_encode writes them (integers as u64, floats and doubles by their bits,
 * strings as a length and bytes, absent strings as length 2^64 - 1), then the BLAKE2b-256 of
 * everything before it. It is read only by the same format version; a file of another version is
 * refused with the versions named.
 */
#include "shard.h"

#include "input.h"
#include "la_alloc.h"
#include "near_kernels.h"
#include "shingle_core.h"
#include "simtile_core.h"

#include <errno.h>
#include <math.h>
#include "la_blake2b.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAGIC "leakaudit shard\n"
#define FORMAT 2 /* 2: pairs carry their ratio margin, the semantic result the margin's settings */
#define NO_STR UINT64_MAX

/* ---- slices ------------------------------------------------------------------------------------ */

static la_status env_index(const char *name, const char *v, uint32_t *out)
{
    char *end;
    errno = 0;
    long long x = strtoll(v, &end, 10);
    if (!*v || *end || errno || x < 0 || x >= LA_SHARD_MAX)
        return la_error(LA_EINVAL, "--shard: %s=%s: expected a whole number from 0 to %d", name, v, LA_SHARD_MAX - 1);
    *out = (uint32_t)x;
    return LA_OK;
}

static la_status parse_count(const char *s, const char *arg, uint32_t *out)
{
    char *end;
    errno = 0;
    long long x = strtoll(s, &end, 10);
    if (!*s || *end || errno || x < 1 || x > LA_SHARD_MAX)
        return la_error(LA_EINVAL, "--shard %s: expected I/N (shard I of N, 0 <= I < N <= %d), N, or auto", arg,
                        LA_SHARD_MAX);
    *out = (uint32_t)x;
    return LA_OK;
}

la_status la_shard_parse(const char *arg, la_shard *out)
{
    memset(out, 0, sizeof *out);
    const char *slash = strchr(arg, '/');
    if (slash) {
        char idx[32];
        if ((size_t)(slash - arg) >= sizeof idx) return parse_count("", arg, &out->count);
        snprintf(idx, sizeof idx, "%.*s", (int)(slash - arg), arg);
        LA_TRY(parse_count(slash + 1, arg, &out->count));
        char *end;
        errno = 0;
        long long i = strtoll(idx, &end, 10);
        if (!idx[0] || *end || errno || i < 0 || i >= out->count)
            return la_error(LA_EINVAL, "--shard %s: the index must be from 0 to %u", arg, out->count - 1);
        out->index = (uint32_t)i;
        return LA_OK;
    }
    const char *task = getenv("SLURM_ARRAY_TASK_ID"), *kube = getenv("JOB_COMPLETION_INDEX");
    if (!strcmp(arg, "auto")) {
        const char *count = getenv("SLURM_ARRAY_TASK_COUNT");
        if (!task || !count)
            return la_error(LA_EINVAL, "--shard auto: SLURM_ARRAY_TASK_ID and SLURM_ARRAY_TASK_COUNT are not set (not "
                                       "a Slurm array task); give --shard I/N, or --shard N under a Kubernetes "
                                       "Indexed Job");
        LA_TRY(parse_count(count, "auto (SLURM_ARRAY_TASK_COUNT)", &out->count));
    } else {
        LA_TRY(parse_count(arg, arg, &out->count));
    }
    if (task) {
        LA_TRY(env_index("SLURM_ARRAY_TASK_ID", task, &out->index));
        const char *min = getenv("SLURM_ARRAY_TASK_MIN");
        uint32_t lo = 0;
        if (min) LA_TRY(env_index("SLURM_ARRAY_TASK_MIN", min, &lo));
        if (lo > out->index)
            return la_error(LA_EINVAL, "--shard: SLURM_ARRAY_TASK_ID=%u is below SLURM_ARRAY_TASK_MIN=%u", out->index, lo);
        out->index -= lo;
    } else if (kube) {
        LA_TRY(env_index("JOB_COMPLETION_INDEX", kube, &out->index));
    } else {
        return la_error(LA_EINVAL, "--shard %s: no shard index: give --shard I/%s, or run it as a Slurm array task "
                                   "(SLURM_ARRAY_TASK_ID) or a Kubernetes Indexed Job (JOB_COMPLETION_INDEX)",
                        arg, arg);
    }
    if (out->index >= out->count)
        return la_error(LA_EINVAL, "--shard %s: the task index %u is not below the shard count %u (the array must be "
                                   "numbered 0..%u, or from SLURM_ARRAY_TASK_MIN)",
                        arg, out->index, out->count, out->count - 1);
    return LA_OK;
}

uint32_t la_shard_of(const char *part, const char *id, uint32_t count)
{
    uint64_t h = la_mix64(la_cpu_hash_bytes(part, strlen(part)) ^ la_rotl64(la_cpu_hash_bytes(id, strlen(id)), 29));
    return count ? (uint32_t)(h % count) : 0;
}

la_status la_shard_skip(const la_table *t, uint32_t heldout, la_shard sh, uint8_t **skip)
{
    size_t n = la_table_nrows(t);
    const la_row *rows = la_table_rows_const(t);
    uint8_t *f = la_calloc_n(n, 1);
    if (!f) return la_error(LA_ENOMEM, "out of memory for the shard flags of %zu rows", n);
    for (size_t i = 0; i < n && sh.count > 1; i++)
        f[i] = rows[i].part != heldout && la_shard_of(la_table_part_name(t, rows[i].part), rows[i].id, sh.count) != sh.index;
    *skip = f;
    return LA_OK;
}

/* ---- keeping results --------------------------------------------------------------------------- */

void la_partial_init(la_partial *p) { memset(p, 0, sizeof *p); }

static void free_stages(la_report_stage *s, size_t n)
{
    for (size_t k = 0; k < n; k++) {
        free((char *)s[k].name);
        free((char *)s[k].backend);
        free((char *)s[k].fallback);
    }
}

void la_partial_free(la_partial *p)
{
    for (size_t k = 0; k < p->argc; k++) free(p->argv[k]);
    free(p->argv);
    for (size_t k = 0; k < p->nfiles; k++) {
        free(p->file_path[k]);
        free(p->file_hash[k]);
    }
    free(p->file_path);
    free(p->file_hash);
    free(p->cwd);
    free(p->ran_on);
    free(p->backend_note);
    free(p->device);
    la_pairs_free(&p->pairs);
    free((char *)p->near.backend);
    free_stages(p->near.stages, p->near.nstages);
    free(p->near_fallback);
    la_semantic_report *s = &p->sem;
    const char **strs[] = {&s->kind, &s->why, &s->model_name, &s->model_hash, &s->encoder_backend,
                           &s->encoder_fallback, &s->cache_file, &s->cache_note, &s->threshold_source,
                           &s->backend, &s->method, &s->margin_source};
    for (size_t k = 0; k < sizeof strs / sizeof *strs; k++) free((char *)*strs[k]);
    free((void *)s->window_pairs);
    free((void *)s->nearest_row);
    free((void *)s->nearest_seen);
    free((void *)s->nearest_cosine);
    free_stages(s->stages, s->nstages);
    free(p->sem_fallback);
    memset(p, 0, sizeof *p);
}

/* strdup that keeps NULL; sets *ok to 0 when out of memory. */
static char *dup_or_null(const char *s, int *ok)
{
    if (!s) return NULL;
    char *d = strdup(s);
    if (!d) *ok = 0;
    return d;
}

static void *dup_mem(const void *src, size_t n, size_t size, int *ok)
{
    void *d = la_malloc_nm(n ? n : 1, size, 1);
    if (!d) {
        *ok = 0;
        return NULL;
    }
    if (n) memcpy(d, src, n * size);
    return d;
}

static void dup_stages(la_report_stage *dst, const la_report_stage *src, size_t n, int *ok)
{
    for (size_t k = 0; k < n; k++) {
        dst[k] = src[k];
        dst[k].name = dup_or_null(src[k].name, ok);
        dst[k].backend = dup_or_null(src[k].backend, ok);
        dst[k].fallback = dup_or_null(src[k].fallback, ok);
    }
}

la_status la_partial_keep_near(la_partial *p, const la_near_report *r, size_t near_signed_heldout, const char *fallback)
{
    int ok = 1;
    p->near_on = 1;
    p->near = *r;
    p->near.within_pairs = NULL;
    p->near.nwithin = 0;
    p->near.backend = dup_or_null(r->backend, &ok);
    dup_stages(p->near.stages, r->stages, r->nstages, &ok);
    p->near_signed_heldout = near_signed_heldout;
    p->near_fallback = dup_or_null(fallback, &ok);
    return ok ? LA_OK : la_error(LA_ENOMEM, "out of memory keeping the near tier's result");
}

la_status la_partial_keep_semantic(la_partial *p, const la_semantic_report *r, size_t windowed_heldout, int lexical,
                                   const char *fallback)
{
    int ok = 1;
    la_semantic_report *s = &p->sem;
    p->sem_on = 1;
    *s = *r;
    const char **strs[] = {&s->kind, &s->why, &s->model_name, &s->model_hash, &s->encoder_backend,
                           &s->encoder_fallback, &s->cache_file, &s->cache_note, &s->threshold_source,
                           &s->backend, &s->method, &s->margin_source};
    for (size_t k = 0; k < sizeof strs / sizeof *strs; k++) *strs[k] = dup_or_null(*strs[k], &ok);
    s->window_pairs = dup_mem(r->window_pairs, r->nwindow_pairs, sizeof *r->window_pairs, &ok);
    s->nearest_row = dup_mem(r->nearest_row, r->nnearest, sizeof *r->nearest_row, &ok);
    s->nearest_seen = dup_mem(r->nearest_seen, r->nnearest * r->k, sizeof *r->nearest_seen, &ok);
    s->nearest_cosine = dup_mem(r->nearest_cosine, r->nnearest * r->k, sizeof *r->nearest_cosine, &ok);
    dup_stages(s->stages, r->stages, r->nstages, &ok);
    p->sem_windowed_heldout = windowed_heldout;
    p->sem_lexical = lexical;
    p->sem_fallback = dup_or_null(fallback, &ok);
    return ok ? LA_OK : la_error(LA_ENOMEM, "out of memory keeping the semantic tier's result");
}

/* ---- encoding ---------------------------------------------------------------------------------- */

static void put_u64(la_buf *b, uint64_t v)
{
    unsigned char x[8];
    for (int i = 0; i < 8; i++) x[i] = (unsigned char)(v >> (8 * i));
    la_buf_putn(b, (const char *)x, 8);
}

static void put_f64(la_buf *b, double v)
{
    uint64_t u;
    memcpy(&u, &v, sizeof u);
    put_u64(b, u);
}

static void put_f32(la_buf *b, float v)
{
    uint32_t u;
    memcpy(&u, &v, sizeof u);
    put_u64(b, u);
}

static void put_str(la_buf *b, const char *s)
{
    if (!s) {
        put_u64(b, NO_STR);
        return;
    }
    size_t n = strlen(s);
    put_u64(b, n);
    la_buf_putn(b, s, n);
}

static void put_stages(la_buf *b, const la_report_stage *s, size_t n)
{
    put_u64(b, n);
    for (size_t k = 0; k < n; k++) {
        put_str(b, s[k].name);
        put_str(b, s[k].backend);
        put_str(b, s[k].fallback);
        put_u64(b, s[k].calls);
        put_f64(b, s[k].items);
        put_f64(b, s[k].bytes);
    }
}

static void put_pair(la_buf *b, const la_pair *q)
{
    put_u64(b, q->a);
    put_u64(b, q->b);
    put_u64(b, q->kinds);
    put_f32(b, q->jaccard);
    put_f32(b, q->containment);
    put_f32(b, q->minhash);
    put_f32(b, q->cosine);
    put_f32(b, q->margin);
    put_u64(b, (uint64_t)(int64_t)q->simhash_dist);
    put_f32(b, q->wcontainment);
    put_f32(b, q->wwords);
    put_f32(b, q->slot_evidence);
    put_u64(b, q->grade);
    put_u64(b, q->nums_held);
    put_u64(b, q->nums_shared);
    put_u64(b, q->nums_changed);
}

la_status la_partial_encode(const la_partial *p, la_buf *b)
{
    la_buf_puts(b, MAGIC);
    put_u64(b, FORMAT);
    put_u64(b, p->shard.index);
    put_u64(b, p->shard.count);
    put_u64(b, p->argc);
    for (size_t k = 0; k < p->argc; k++) put_str(b, p->argv[k]);
    put_str(b, p->cwd);
    put_u64(b, p->nrows);
    put_u64(b, p->nfiles);
    for (size_t k = 0; k < p->nfiles; k++) {
        put_str(b, p->file_path[k]);
        put_str(b, p->file_hash[k]);
    }
    put_str(b, p->ran_on);
    put_str(b, p->backend_note);
    put_str(b, p->device);
    put_u64(b, p->pairs.n);
    for (size_t k = 0; k < p->pairs.n; k++) put_pair(b, &p->pairs.v[k]);

    const la_near_report *n = &p->near;
    put_u64(b, (uint64_t)p->near_on);
    if (p->near_on) {
        put_str(b, n->backend);
        put_u64(b, (uint64_t)n->char_shingles);
        put_u64(b, (uint64_t)n->shingle_size);
        put_u64(b, (uint64_t)n->num_perm);
        put_u64(b, (uint64_t)n->containment_min_shingles);
        put_u64(b, (uint64_t)(int64_t)n->simhash_k);
        put_u64(b, (uint64_t)n->within);
        put_f64(b, n->threshold);
        put_f64(b, n->containment_threshold);
        put_u64(b, (uint64_t)n->bands);
        put_u64(b, (uint64_t)n->rows);
        put_f64(b, n->expected_recall);
        put_u64(b, n->rows_signed);
        put_u64(b, n->candidates_lsh);
        put_u64(b, n->candidates_simhash);
        put_u64(b, n->candidates_containment);
        put_u64(b, n->candidates);
        put_u64(b, n->pairs);
        put_stages(b, n->stages, n->nstages);
        put_u64(b, p->near_signed_heldout);
        put_str(b, p->near_fallback);
    }

    const la_semantic_report *s = &p->sem;
    put_u64(b, (uint64_t)p->sem_on);
    if (p->sem_on) {
        const char *strs[] = {s->kind, s->why, s->model_name, s->model_hash, s->encoder_backend, s->encoder_fallback,
                              s->cache_file, s->cache_note, s->threshold_source, s->backend, s->method,
                              s->margin_source};
        for (size_t k = 0; k < sizeof strs / sizeof *strs; k++) put_str(b, strs[k]);
        put_u64(b, (uint64_t)s->model);
        put_u64(b, s->model_window);
        put_u64(b, s->window_tokens);
        put_u64(b, s->texts_windowed);
        put_u64(b, (uint64_t)s->no_windows);
        put_u64(b, s->cache_hits);
        put_u64(b, s->cache_misses);
        put_u64(b, (uint64_t)s->brought_in);
        put_u64(b, s->dim);
        put_f64(b, s->threshold);
        put_f64(b, s->margin);
        put_f64(b, s->margin_lowest);
        put_u64(b, s->margin_k);
        put_u64(b, s->margin_candidates);
        put_u64(b, s->margin_links);
        put_u64(b, s->nwindow_pairs);
        for (size_t k = 0; k < s->nwindow_pairs; k++) {
            const la_window_pair *w = &s->window_pairs[k];
            put_u64(b, w->a);
            put_u64(b, w->b);
            put_u64(b, w->a_begin);
            put_u64(b, w->a_end);
            put_u64(b, w->b_begin);
            put_u64(b, w->b_end);
            put_f32(b, w->cosine);
        }
        put_u64(b, s->pairs);
        put_u64(b, s->heldout_rows);
        put_u64(b, s->seen_rows);
        put_u64(b, s->nnearest);
        put_u64(b, s->k);
        for (size_t k = 0; k < s->nnearest; k++) put_u64(b, s->nearest_row[k]);
        for (size_t k = 0; k < s->nnearest * s->k; k++) {
            put_u64(b, s->nearest_seen[k]);
            put_f32(b, s->nearest_cosine[k]);
        }
        put_stages(b, s->stages, s->nstages);
        put_u64(b, p->sem_windowed_heldout);
        put_u64(b, (uint64_t)p->sem_lexical);
        put_str(b, p->sem_fallback);
    }
    unsigned char sum[32];
    la_blake2b(sum, sizeof sum, (const unsigned char *)b->p, b->n, NULL, 0);
    la_buf_putn(b, (const char *)sum, sizeof sum);
    return la_buf_status(b);
}

/* ---- decoding ---------------------------------------------------------------------------------- */

typedef struct reader {
    const unsigned char *p, *end;
    int bad;      /* ran past the end, or a value out of range */
    int nomem;
} reader;

static uint64_t get_u64(reader *r)
{
    if (r->end - r->p < 8) {
        r->bad = 1;
        r->p = r->end;
        return 0;
    }
    uint64_t v = 0;
    for (int i = 0; i < 8; i++) v |= (uint64_t)r->p[i] << (8 * i);
    r->p += 8;
    return v;
}

/* A count of items of at least `least` bytes each, which the rest of the file must be able to hold. */
static size_t get_count(reader *r, size_t least)
{
    uint64_t v = get_u64(r);
    if (v > (uint64_t)(r->end - r->p) / (least ? least : 1)) {
        r->bad = 1;
        return 0;
    }
    return (size_t)v;
}

static uint32_t get_u32(reader *r)
{
    uint64_t v = get_u64(r);
    if (v > UINT32_MAX) r->bad = 1;
    return (uint32_t)v;
}

static uint8_t get_u8(reader *r)
{
    uint64_t v = get_u64(r);
    if (v > UINT8_MAX) r->bad = 1;
    return (uint8_t)v;
}

/* 0 or 1 */
static int get_flag(reader *r)
{
    uint64_t v = get_u64(r);
    if (v > 1) r->bad = 1;
    return (int)v;
}

static int get_int(reader *r)
{
    int64_t v = (int64_t)get_u64(r);
    if (v < INT32_MIN || v > INT32_MAX) r->bad = 1;
    return (int)v;
}

static double get_f64(reader *r)
{
    uint64_t u = get_u64(r);
    double v;
    memcpy(&v, &u, sizeof v);
    return v;
}

static float get_f32(reader *r)
{
    uint32_t u = get_u32(r);
    float v;
    memcpy(&v, &u, sizeof v);
    return v;
}

static char *get_str(reader *r)
{
    uint64_t n = get_u64(r);
    if (n == NO_STR || r->bad) return NULL;
    if (n > (uint64_t)(r->end - r->p) || memchr(r->p, 0, (size_t)n)) {
        r->bad = 1;
        return NULL;
    }
    char *s = malloc((size_t)n + 1);
    if (!s) {
        r->nomem = 1;
        return NULL;
    }
    memcpy(s, r->p, (size_t)n);
    s[n] = '\0';
    r->p += n;
    return s;
}

static void get_stages(reader *r, la_report_stage *s, size_t *n)
{
    *n = get_count(r, 48);
    if (*n > LA_REPORT_MAX_STAGES) {
        r->bad = 1;
        *n = 0;
        return;
    }
    for (size_t k = 0; k < *n; k++) {
        s[k].name = get_str(r);
        s[k].backend = get_str(r);
        s[k].fallback = get_str(r);
        s[k].calls = (size_t)get_u64(r);
        s[k].items = get_f64(r);
        s[k].bytes = get_f64(r);
    }
}

static void get_pair(reader *r, la_pair *q, uint64_t nrows)
{
    q->a = get_u32(r);
    q->b = get_u32(r);
    q->kinds = get_u32(r);
    q->jaccard = get_f32(r);
    q->containment = get_f32(r);
    q->minhash = get_f32(r);
    q->cosine = get_f32(r);
    q->margin = get_f32(r);
    q->simhash_dist = get_int(r);
    q->wcontainment = get_f32(r);
    q->wwords = get_f32(r);
    q->slot_evidence = get_f32(r);
    q->grade = get_u8(r);
    q->nums_held = get_u8(r);
    q->nums_shared = get_u8(r);
    q->nums_changed = get_u8(r);
    if (q->a >= nrows || q->b >= nrows) r->bad = 1;
}

static void *alloc_n(reader *r, size_t n, size_t size)
{
    void *p = la_malloc_nm(n ? n : 1, size, 1);
    if (!p) r->nomem = 1;
    return p;
}

static void decode(reader *r, la_partial *p)
{
    p->shard.index = get_u32(r);
    p->shard.count = get_u32(r);
    if (!p->shard.count || p->shard.count > LA_SHARD_MAX || p->shard.index >= p->shard.count) r->bad = 1;
    p->argc = get_count(r, 8);
    if (!(p->argv = alloc_n(r, p->argc, sizeof *p->argv))) return;
    for (size_t k = 0; k < p->argc; k++) {
        p->argv[k] = get_str(r);
        if (!p->argv[k]) r->bad = 1;
    }
    p->cwd = get_str(r);
    p->nrows = get_u64(r);
    if (p->nrows >= UINT32_MAX) r->bad = 1;
    p->nfiles = get_count(r, 16);
    p->file_path = alloc_n(r, p->nfiles, sizeof *p->file_path);
    p->file_hash = alloc_n(r, p->nfiles, sizeof *p->file_hash);
    if (!p->file_path || !p->file_hash) {
        p->nfiles = 0;
        return;
    }
    for (size_t k = 0; k < p->nfiles; k++) {
        p->file_path[k] = get_str(r);
        p->file_hash[k] = get_str(r);
    }
    p->ran_on = get_str(r);
    p->backend_note = get_str(r);
    p->device = get_str(r);
    size_t np = get_count(r, 15 * 8);
    if (r->bad || r->nomem) return;
    if (!(p->pairs.v = alloc_n(r, np, sizeof *p->pairs.v))) return;
    p->pairs.cap = np ? np : 1;
    for (size_t k = 0; k < np && !r->bad; k++) get_pair(r, &p->pairs.v[p->pairs.n++], p->nrows);

    la_near_report *n = &p->near;
    p->near_on = get_flag(r);
    if (p->near_on) {
        n->backend = get_str(r);
        n->char_shingles = get_flag(r);
        n->shingle_size = get_int(r);
        n->num_perm = get_int(r);
        n->containment_min_shingles = get_int(r);
        n->simhash_k = get_int(r);
        n->within = get_flag(r);
        n->threshold = get_f64(r);
        n->containment_threshold = get_f64(r);
        n->bands = get_int(r);
        n->rows = get_int(r);
        n->expected_recall = get_f64(r);
        n->rows_signed = (size_t)get_u64(r);
        n->candidates_lsh = (size_t)get_u64(r);
        n->candidates_simhash = (size_t)get_u64(r);
        n->candidates_containment = (size_t)get_u64(r);
        n->candidates = (size_t)get_u64(r);
        n->pairs = (size_t)get_u64(r);
        get_stages(r, n->stages, &n->nstages);
        p->near_signed_heldout = (size_t)get_u64(r);
        p->near_fallback = get_str(r);
    }

    la_semantic_report *s = &p->sem;
    p->sem_on = get_flag(r);
    if (!p->sem_on || r->bad || r->nomem) return;
    const char **strs[] = {&s->kind, &s->why, &s->model_name, &s->model_hash, &s->encoder_backend,
                           &s->encoder_fallback, &s->cache_file, &s->cache_note, &s->threshold_source,
                           &s->backend, &s->method, &s->margin_source};
    for (size_t k = 0; k < sizeof strs / sizeof *strs; k++) *strs[k] = get_str(r);
    s->model = get_flag(r);
    s->model_window = (size_t)get_u64(r);
    s->window_tokens = (size_t)get_u64(r);
    s->texts_windowed = (size_t)get_u64(r);
    s->no_windows = get_flag(r);
    s->cache_hits = (size_t)get_u64(r);
    s->cache_misses = (size_t)get_u64(r);
    s->brought_in = get_flag(r);
    s->dim = (size_t)get_u64(r);
    s->threshold = get_f64(r);
    s->margin = get_f64(r);
    s->margin_lowest = get_f64(r);
    s->margin_k = get_u32(r);
    s->margin_candidates = (size_t)get_u64(r);
    s->margin_links = (size_t)get_u64(r);
    size_t nw = get_count(r, 7 * 8);
    la_window_pair *w = alloc_n(r, nw, sizeof *w);
    s->window_pairs = w;
    if (!w) return;
    for (size_t k = 0; k < nw && !r->bad; k++) {
        w[k].a = get_u32(r);
        w[k].b = get_u32(r);
        w[k].a_begin = get_u32(r);
        w[k].a_end = get_u32(r);
        w[k].b_begin = get_u32(r);
        w[k].b_end = get_u32(r);
        w[k].cosine = get_f32(r);
        if (w[k].a >= p->nrows || w[k].b >= p->nrows) r->bad = 1;
        s->nwindow_pairs = k + 1;
    }
    s->pairs = (size_t)get_u64(r);
    s->heldout_rows = (size_t)get_u64(r);
    s->seen_rows = (size_t)get_u64(r);
    size_t nn = get_count(r, 8);
    uint32_t k = get_u32(r);
    if (r->bad || (k && nn > (size_t)(r->end - r->p) / (16 * (size_t)k))) {
        r->bad = 1;
        return;
    }
    uint32_t *row = alloc_n(r, nn, sizeof *row), *seen = alloc_n(r, nn * k, sizeof *seen);
    float *cos = alloc_n(r, nn * k, sizeof *cos);
    s->nearest_row = row;
    s->nearest_seen = seen;
    s->nearest_cosine = cos;
    if (!row || !seen || !cos) return;
    s->nnearest = nn;
    s->k = k;
    for (size_t i = 0; i < nn; i++)
        if ((row[i] = get_u32(r)) >= p->nrows) r->bad = 1;
    for (size_t i = 0; i < nn * k; i++) {
        seen[i] = get_u32(r);
        cos[i] = get_f32(r);
        if (seen[i] != LA_SIMTILE_NONE && seen[i] >= p->nrows) r->bad = 1;
    }
    get_stages(r, s->stages, &s->nstages);
    p->sem_windowed_heldout = (size_t)get_u64(r);
    p->sem_lexical = get_flag(r);
    p->sem_fallback = get_str(r);
}

la_status la_partial_read(const char *path, la_partial *p)
{
    la_partial_init(p);
    la_input in;
    LA_TRY(la_input_read(path, NULL, &in));
    size_t ml = strlen(MAGIC);
    la_status s = LA_OK;
    if (in.len < ml + 8 + 32 || memcmp(in.data, MAGIC, ml) != 0) {
        s = la_error(LA_EINPUT, "%s: not a shard result of leakaudit audit --shard", path);
    } else {
        unsigned char sum[32];
        la_blake2b(sum, sizeof sum, (const unsigned char *)in.data, in.len - 32, NULL, 0);
        reader r = {(const unsigned char *)in.data + ml, (const unsigned char *)in.data + in.len - 32, 0, 0};
        uint64_t format = get_u64(&r);
        if (format != FORMAT)
            s = la_error(LA_EINPUT, "%s: shard format %llu, and this leakaudit reads format %d: run the shards and the "
                                    "merge with the same leakaudit",
                         path, (unsigned long long)format, FORMAT);
        else if (memcmp(sum, in.data + in.len - 32, 32) != 0)
            s = la_error(LA_EINPUT, "%s: damaged (its checksum does not match): run that shard again", path);
        else {
            decode(&r, p);
            if (r.nomem) s = la_error(LA_ENOMEM, "out of memory reading %s", path);
            else if (r.bad || r.p != r.end) s = la_error(LA_EINPUT, "%s: damaged (a field is out of range)", path);
        }
    }
    la_input_free(&in);
    if (s != LA_OK) la_partial_free(p);
    return s;
}

/* ---- merging ----------------------------------------------------------------------------------- */

static int same_str(const char *a, const char *b) { return (!a && !b) || (a && b && !strcmp(a, b)); }

/* Stages combined by name: calls, items and bytes summed. */
static void add_stages(la_report_stage *dst, size_t *nd, const la_report_stage *src, size_t ns, int *ok)
{
    for (size_t k = 0; k < ns; k++) {
        size_t j = 0;
        while (j < *nd && !same_str(dst[j].name, src[k].name)) j++;
        if (j == *nd) {
            if (*nd == LA_REPORT_MAX_STAGES) continue;
            dup_stages(&dst[j], &src[k], 1, ok);
            (*nd)++;
            continue;
        }
        dst[j].calls += src[k].calls;
        dst[j].items += src[k].items;
        dst[j].bytes += src[k].bytes;
    }
}

static la_status check_fit(const la_partial *v, const char *const *dirs, size_t n)
{
    uint32_t count = v[0].shard.count;
    if (n != count)
        return la_error(LA_EINPUT, "%zu shard folders given, and %s is shard %u of %u: give all %u", n, dirs[0],
                        v[0].shard.index, count, count);
    for (size_t k = 0; k < n; k++) {
        const la_partial *p = &v[k], *f = &v[0];
        if (p->shard.count != count)
            return la_error(LA_EINPUT, "%s is shard %u of %u, and %s is shard %u of %u: not one sharded audit", dirs[k],
                            p->shard.index, p->shard.count, dirs[0], f->shard.index, count);
        for (size_t j = 0; j < k; j++)
            if (v[j].shard.index == p->shard.index)
                return la_error(LA_EINPUT, "%s and %s are both shard %u of %u", dirs[j], dirs[k], p->shard.index, count);
        size_t a = 0;
        while (a < p->argc && a < f->argc && !strcmp(p->argv[a], f->argv[a])) a++;
        if (a < p->argc || a < f->argc)
            return la_error(LA_EINPUT, "%s and %s were run with other options (argument %zu: '%s' against '%s'): every "
                                       "shard must run the same audit",
                            dirs[k], dirs[0], a + 1, a < p->argc ? p->argv[a] : "(none)",
                            a < f->argc ? f->argv[a] : "(none)");
        if (p->nrows != f->nrows || p->nfiles != f->nfiles)
            return la_error(LA_EINPUT, "%s read %llu rows from %zu files, and %s %llu rows from %zu: not the same inputs",
                            dirs[k], (unsigned long long)p->nrows, p->nfiles, dirs[0], (unsigned long long)f->nrows,
                            f->nfiles);
        for (size_t i = 0; i < p->nfiles; i++)
            if (!same_str(p->file_hash[i], f->file_hash[i]))
                return la_error(LA_EINPUT, "%s read %s with BLAKE2b %s, and %s read %s with %s: the inputs changed "
                                           "between the shards",
                                dirs[k], p->file_path[i], p->file_hash[i] ? p->file_hash[i] : "(none)", dirs[0],
                                f->file_path[i], f->file_hash[i] ? f->file_hash[i] : "(none)");
        if (p->near_on != f->near_on || p->sem_on != f->sem_on ||
            (p->sem_on && p->sem.nnearest != f->sem.nnearest) || (p->sem_on && p->sem.k != f->sem.k))
            return la_error(LA_EINPUT, "%s and %s ran other tiers: not one sharded audit", dirs[k], dirs[0]);
        if (p->sem_on && (!same_str(p->sem.model_hash, f->sem.model_hash) || p->sem.dim != f->sem.dim ||
                          p->sem.window_tokens != f->sem.window_tokens))
            return la_error(LA_EINPUT, "%s and %s embedded with other models or windows (%s, %zu word pieces, against "
                                       "%s, %zu): install the same models for every shard",
                            dirs[k], dirs[0], p->sem.model_name ? p->sem.model_name : "vectors", p->sem.window_tokens,
                            f->sem.model_name ? f->sem.model_name : "vectors", f->sem.window_tokens);
    }
    return LA_OK;
}

/* By held-out row, then seen row (the order the tier appends window pairs in). */
static int cmp_window(const void *x, const void *y)
{
    const la_window_pair *p = x, *q = y;
    if (p->b != q->b) return p->b < q->b ? -1 : 1;
    return (p->a > q->a) - (p->a < q->a);
}

/* Every held-out row's k nearest: the best of the shards' lists, in the tiles' order (higher
 * cosine, then the lower row), so the lists are the unsharded ones. */
static void merge_nearest(const la_partial *v, size_t n, uint32_t *seen, float *cos)
{
    const la_semantic_report *f = &v[0].sem;
    uint32_t k = f->k;
    for (size_t i = 0; i < f->nnearest; i++) {
        uint32_t *si = seen + i * k;
        float *ci = cos + i * k;
        for (uint32_t j = 0; j < k; j++) si[j] = LA_SIMTILE_NONE, ci[j] = -INFINITY;
        for (size_t s = 0; s < n; s++)
            for (uint32_t j = 0; j < k; j++) {
                uint32_t x = v[s].sem.nearest_seen[i * k + j];
                if (x != LA_SIMTILE_NONE) la_simtile_topk_insert(si, ci, k, x, v[s].sem.nearest_cosine[i * k + j]);
            }
        for (uint32_t j = 0; j < k; j++)
            if (si[j] == LA_SIMTILE_NONE) ci[j] = NAN;
    }
}

la_status la_partial_merge(const la_partial *v, const char *const *dirs, size_t n, la_partial *out)
{
    la_partial_init(out);
    if (!n) return la_error(LA_EINVAL, "merge: no shard folders");
    LA_TRY(check_fit(v, dirs, n));
    const la_partial *f = &v[0];
    int ok = 1;
    out->shard = (la_shard){0, f->shard.count};
    out->nrows = f->nrows;
    out->argv = la_calloc_n(f->argc + 1, sizeof *out->argv);
    out->file_path = la_calloc_n(f->nfiles + 1, sizeof *out->file_path);
    out->file_hash = la_calloc_n(f->nfiles + 1, sizeof *out->file_hash);
    if (!out->argv || !out->file_path || !out->file_hash) ok = 0;
    for (; ok && out->argc < f->argc; out->argc++) out->argv[out->argc] = dup_or_null(f->argv[out->argc], &ok);
    for (; ok && out->nfiles < f->nfiles; out->nfiles++) {
        out->file_path[out->nfiles] = dup_or_null(f->file_path[out->nfiles], &ok);
        out->file_hash[out->nfiles] = dup_or_null(f->file_hash[out->nfiles], &ok);
    }
    out->cwd = dup_or_null(f->cwd, &ok);
    out->ran_on = dup_or_null("cpu", &ok);
    for (size_t k = 0; k < n; k++)
        if (same_str(v[k].ran_on, "gpu")) {
            free(out->ran_on);
            out->ran_on = dup_or_null("gpu", &ok);
        }
    out->backend_note = dup_or_null(f->backend_note, &ok);
    out->device = dup_or_null(f->device, &ok);
    size_t total = 0;
    for (size_t k = 0; k < n; k++) total += v[k].pairs.n;
    out->pairs.v = la_malloc_n(total ? total : 1, sizeof *out->pairs.v);
    if (!out->pairs.v) ok = 0;
    for (size_t k = 0; ok && k < n; k++) {
        if (v[k].pairs.n) memcpy(out->pairs.v + out->pairs.n, v[k].pairs.v, v[k].pairs.n * sizeof *out->pairs.v);
        out->pairs.n += v[k].pairs.n;
    }
    out->pairs.cap = total ? total : 1;

    if (ok && f->near_on) {
        if (la_partial_keep_near(out, &f->near, f->near_signed_heldout, f->near_fallback) != LA_OK) ok = 0;
        la_near_report *r = &out->near;
        free_stages(r->stages, r->nstages);
        r->nstages = 0;
        r->rows_signed = f->near_signed_heldout;
        r->candidates_lsh = r->candidates_simhash = r->candidates_containment = r->candidates = r->pairs = 0;
        for (size_t k = 0; k < n; k++) {
            const la_near_report *s = &v[k].near;
            r->rows_signed += s->rows_signed - v[k].near_signed_heldout;
            r->candidates_lsh += s->candidates_lsh;
            r->candidates_simhash += s->candidates_simhash;
            r->candidates_containment += s->candidates_containment;
            r->candidates += s->candidates;
            r->pairs += s->pairs;
            add_stages(r->stages, &r->nstages, s->stages, s->nstages, &ok);
            if (same_str(s->backend, "gpu") && !same_str(r->backend, "gpu")) {
                free((char *)r->backend);
                r->backend = dup_or_null("gpu", &ok);
            }
        }
    }
    if (ok && f->sem_on) {
        if (la_partial_keep_semantic(out, &f->sem, f->sem_windowed_heldout, f->sem_lexical, f->sem_fallback) != LA_OK)
            ok = 0;
        la_semantic_report *r = &out->sem;
        free_stages(r->stages, r->nstages);
        r->nstages = 0;
        r->texts_windowed = f->sem_windowed_heldout;
        r->pairs = r->seen_rows = r->cache_hits = r->cache_misses = 0;
        size_t nw = 0;
        for (size_t k = 0; k < n; k++) nw += v[k].sem.nwindow_pairs;
        la_window_pair *w = la_malloc_n(nw ? nw : 1, sizeof *w);
        if (!w) ok = 0;
        free((void *)r->window_pairs);
        r->window_pairs = w;
        r->nwindow_pairs = 0;
        for (size_t k = 0; ok && k < n; k++) {
            const la_semantic_report *s = &v[k].sem;
            r->texts_windowed += s->texts_windowed - v[k].sem_windowed_heldout;
            r->pairs += s->pairs;
            r->seen_rows += s->seen_rows;
            r->cache_hits += s->cache_hits;
            r->cache_misses += s->cache_misses;
            if (s->nwindow_pairs) memcpy(w + r->nwindow_pairs, s->window_pairs, s->nwindow_pairs * sizeof *w);
            r->nwindow_pairs += s->nwindow_pairs;
            add_stages(r->stages, &r->nstages, s->stages, s->nstages, &ok);
        }
        if (ok && r->nwindow_pairs > 1) qsort(w, r->nwindow_pairs, sizeof *w, cmp_window);
        if (ok) merge_nearest(v, n, (uint32_t *)r->nearest_seen, (float *)r->nearest_cosine);
    }
    if (!ok) {
        la_partial_free(out);
        return la_error(LA_ENOMEM, "out of memory merging %zu shards", n);
    }
    return LA_OK;
}
