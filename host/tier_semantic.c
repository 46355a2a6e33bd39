/*
 * tier_semantic.c - the semantic tier in the audit pipeline: embeddings in (.npy per partition, a
 * JSON field, the built-in sentence encoder (host/model.c: the default when a model is installed,
 * long texts as windows) or the built-in lexical embedding), la_semantic_find across the boundary
 * (over windows when there are any; the tiles through the run's la_exec), and the structured result
 * audit/report_tiers.c renders: which embedding and why, the model and its weights hash, the
 * threshold and its source, window pairs, every held-out row's nearest seen rows, the stages.
 */
#include "backend.h"
#include "cli.h"
#include "embed_cache.h"
#include "embed_lexical.h"
#include "la_alloc.h"
#include "la_cpus.h"
#include "model.h"
#include "npy.h"
#include "report_tiers.h"
#include "semantic.h"
#include "tiers.h"
#include "vec_origin.h"

#include <limits.h>
#include "la_blake2b.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void la_semantic_opts_init(la_semantic_opts *o)
{
    memset(o, 0, sizeof *o);
    o->enabled = 1;
    o->lexical = 1;
    o->threshold = NAN;
    o->margin = NAN;
    o->topk = 1;
    la_semantic_method_parse("auto", &o->method);
}

void la_semantic_opts_free(la_semantic_opts *o)
{
    for (size_t k = 0; k < o->nemb; k++) free(o->owned[k]);
}

void la_tier_out_free(la_tier_out *o)
{
    la_buf_free(&o->json);
    la_buf_free(&o->md);
    la_buf_free(&o->html);
    la_buf_free(&o->extra);
}

la_status la_semantic_option(la_semantic_opts *o, const char *name, const char *arg)
{
    char *end;
    if (!strcmp(name, "embeddings")) {
        const char *eq = strchr(arg, '=');
        if (!eq || eq == arg || !eq[1]) return la_error(LA_EINVAL, "--embeddings %s: expected PART=FILE.npy", arg);
        if (o->nemb == LA_MAX_EMB_FILES) return la_error(LA_EINVAL, "--embeddings: at most %d files", LA_MAX_EMB_FILES);
        o->owned[o->nemb] = strndup(arg, (size_t)(eq - arg));
        if (!o->owned[o->nemb]) return la_error(LA_ENOMEM, "out of memory");
        o->emb_part[o->nemb] = o->owned[o->nemb];
        o->emb_path[o->nemb++] = eq + 1;
        o->lexical = 0;
        o->enabled = 1;
        return LA_OK;
    }
    if (!strcmp(name, "embedding-field")) {
        o->embedding_field = arg;
        o->lexical = 0;
        o->enabled = 1;
        return LA_OK;
    }
    if (!strcmp(name, "embed")) {
        o->embed_set = 1;
        if (!strcmp(arg, "lexical")) o->lexical = 1, o->model = 0, o->enabled = 1;
        else if (!strcmp(arg, "model")) o->model = 1, o->lexical = 0, o->enabled = 1;
        else if (!strcmp(arg, "none")) o->enabled = 0;
        else return la_error(LA_EINVAL, "--embed %s: expected model, lexical or none", arg);
        return LA_OK;
    }
    if (!strcmp(name, "model")) {
        if (!*arg) return la_error(LA_EINVAL, "--model: expected a model name or folder");
        o->model_name = arg;
        o->model = 1, o->lexical = 0, o->embed_set = 1, o->enabled = 1;
        return LA_OK;
    }
    if (!strcmp(name, "cache")) {
        if (!*arg) return la_error(LA_EINVAL, "--cache: expected a folder");
        o->cache_dir = arg;
        return LA_OK;
    }
    if (!strcmp(name, "memory-limit")) {
        uint64_t v = 0;
        LA_TRY(la_parse_size("--memory-limit", arg, &v));
        if (v < (16u << 20) || v > SIZE_MAX)
            return la_error(LA_EINVAL, "--memory-limit %s: expected a size of at least 16M (such as 4G or 512M)", arg);
        o->memory_limit = (size_t)v;
        return LA_OK;
    }
    if (!strcmp(name, "semantic-windows")) {
        if (!strcmp(arg, "on")) o->no_windows = 0;
        else if (!strcmp(arg, "off")) o->no_windows = 1;
        else return la_error(LA_EINVAL, "--semantic-windows %s: expected on or off", arg);
        return LA_OK;
    }
    if (!strcmp(name, "semantic-threshold")) {
        o->threshold = strtod(arg, &end);
        if (*end || !*arg || !(o->threshold > 0 && o->threshold <= 1))
            return la_error(LA_EINVAL, "--semantic-threshold %s: expected a cosine in (0, 1]", arg);
        return LA_OK;
    }
    if (!strcmp(name, "semantic-margin")) {
        o->margin = !strcmp(arg, "off") ? 0 : strtod(arg, &end);
        if (strcmp(arg, "off") && (*end || !*arg || !(o->margin >= 1.0 && o->margin <= 2.0)))
            return la_error(LA_EINVAL, "--semantic-margin %s: expected a ratio from 1 to 2 (such as 1.065), or off", arg);
        return LA_OK;
    }
    if (!strcmp(name, "semantic-method")) return la_semantic_method_parse(arg, &o->method);
    if (!strcmp(name, "semantic-topk")) {
        long v = strtol(arg, &end, 10);
        if (*end || v < 1 || v > 1000) return la_error(LA_EINVAL, "--semantic-topk %s: expected 1 to 1000", arg);
        o->topk = (unsigned)v;
        return LA_OK;
    }
    return LA_EUNSUPPORTED;
}

/* Embeddings from .npy files, one per partition, rows in the partition's input order. */
static la_status load_npy(const la_semantic_opts *o, const la_loader *L, const la_table *t, float **out, size_t *dim)
{
    size_t n = la_table_nrows(t);
    const la_row *rows = la_table_rows_const(t);
    float *emb = NULL;
    *dim = 0;
    int *covered = calloc(la_table_npart(t) + 1, sizeof *covered);
    if (!covered) return la_error(LA_ENOMEM, "out of memory");
    la_status s = LA_OK;
    for (size_t k = 0; k < o->nemb && s == LA_OK; k++) {
        uint32_t part;
        if (la_table_find_part(t, o->emb_part[k], &part) != LA_OK) {
            s = la_error(LA_EINVAL, "--embeddings %s=%s: no partition named '%s' in the input", o->emb_part[k],
                         o->emb_path[k], o->emb_part[k]);
            break;
        }
        if (covered[part]) {
            s = la_error(LA_EINVAL, "--embeddings: partition '%s' given twice", o->emb_part[k]);
            break;
        }
        covered[part] = 1;
        size_t expect = part < LA_MAX_PART_COUNT ? L->part_records[part] : 0, r = 0, c = 0;
        float *m = NULL;
        s = la_npy_read(o->emb_path[k], expect, *dim, &m, &r, &c);
        la_vec_origin origin;
        if (s == LA_OK && (s = la_vec_origin_read(o->emb_path[k], &origin)) == LA_OK)
            s = la_vec_origin_check(&origin, o->emb_path[k], m, r, c);
        if (s != LA_OK) {
            free(m);
            char why[600];
            snprintf(why, sizeof why, "%s", la_last_error());
            s = la_error(s, "--embeddings %s: %s", o->emb_part[k], why);
            break;
        }
        if (!emb) {
            *dim = c;
            emb = calloc(n * c + 1, sizeof *emb);
            if (!emb) {
                free(m);
                s = la_error(LA_ENOMEM, "out of memory for %zu x %zu embeddings", n, c);
                break;
            }
        }
        for (size_t i = 0; i < n && s == LA_OK; i++) {
            if (rows[i].part != part) continue;
            memcpy(emb + i * c, m + (size_t)rows[i].ordinal * c, c * sizeof *emb);
            char where[400];
            snprintf(where, sizeof where, "%s: row %u", o->emb_path[k], rows[i].ordinal);
            s = la_vec_check_normalize(emb + i * c, c, where);
        }
        free(m);
    }
    size_t *nrows_part = calloc(la_table_npart(t) + 1, sizeof *nrows_part);
    if (!nrows_part && s == LA_OK) s = la_error(LA_ENOMEM, "out of memory");
    for (size_t i = 0; nrows_part && i < n; i++) nrows_part[rows[i].part]++;
    for (uint32_t p = 0; p < la_table_npart(t) && s == LA_OK; p++)
        if (!covered[p] && nrows_part[p])
            s = la_error(LA_EINVAL, "--embeddings: no embeddings for partition '%s' (give --embeddings %s=FILE.npy)",
                         la_table_part_name(t, p), la_table_part_name(t, p));
    free(covered);
    free(nrows_part);
    if (s != LA_OK) {
        free(emb);
        return s;
    }
    *out = emb;
    return LA_OK;
}

/* What made the vectors of this run, and why (for the report). */
typedef struct embed_run {
    float *emb;          /* nrows x dim, or per window with windows */
    size_t dim;
    const char *kind;    /* static description */
    int model;           /* the built-in encoder ran */
    int lexical;         /* the built-in lexical embedding ran */
    char model_name[256], model_hash[80];
    size_t model_window;
    size_t win;          /* word pieces per window of a long text */
    char encoder_backend[8], encoder_fallback[512];
    char why[1400];      /* how the embedding was chosen */
    /* windows (model only): nwin > nrows when some text was longer than the window */
    size_t nwin;
    uint32_t *item, *begin, *end;
    /* --cache */
    int cached;
    size_t cache_hits, cache_misses;
    char cache_file[4200], cache_note[4400];
} embed_run;

static void embed_run_free(embed_run *r)
{
    free(r->emb);
    free(r->item);
    free(r->begin);
    free(r->end);
    memset(r, 0, sizeof *r);
}

static int has_text(const char *s)
{
    for (; s && *s; s++)
        if (*s != ' ' && *s != '\t' && *s != '\n' && *s != '\r') return 1;
    return 0;
}

static int uses_model(const la_semantic_opts *o)
{
    char dir[PATH_MAX];
    return !o->nemb && !o->embedding_field && (o->model || (!o->embed_set && la_model_default_installed(dir, sizeof dir)));
}

static void row_label(void *ctx, size_t i, char *buf, size_t size)
{
    const la_table *t = ctx;
    const la_row *r = la_table_rows_const(t) + i;
    snprintf(buf, size, "%s row %s", la_table_part_name(t, r->part), r->id);
}

/* The origins of the --embeddings files: the model they all name into o->vectors_model, a note
 * of what they said into o->vectors_note. */
static la_status vectors_origin(la_semantic_opts *o)
{
    size_t with = 0;
    const char *first = NULL;
    for (size_t k = 0; k < o->nemb; k++) {
        la_vec_origin v;
        LA_TRY(la_vec_origin_read(o->emb_path[k], &v));
        if (!v.present) continue;
        if (with++ == 0) {
            first = o->emb_path[k];
            snprintf(o->vectors_model, sizeof o->vectors_model, "%s", v.model);
            snprintf(o->vectors_weights, sizeof o->vectors_weights, "%s", v.weights);
        } else if (strcmp(v.model, o->vectors_model) || strcmp(v.weights, o->vectors_weights)) {
            return la_error(LA_EINPUT, "--embeddings: %s was made with %s (weights %s) and %s with %s (weights %s): "
                                       "vectors of two models cannot be compared; embed every partition with one model",
                            first, o->vectors_model, o->vectors_weights, o->emb_path[k], v.model, v.weights);
        }
    }
    if (with && with < o->nemb) {
        snprintf(o->vectors_note, sizeof o->vectors_note,
                 "%s names %s, but %zu of the %zu files come without one (%s): their model is not known, so "
                 "no model's calibration applies", first, o->vectors_model, o->nemb - with, o->nemb,
                 "written by leakaudit embed beside X.npy as X.npy" LA_VEC_ORIGIN_SUFFIX);
        o->vectors_model[0] = o->vectors_weights[0] = '\0';
    } else if (with) {
        snprintf(o->vectors_note, sizeof o->vectors_note, "made by leakaudit embed with %s (weights %s), as %s%s says",
                 o->vectors_model, o->vectors_weights, with > 1 ? "the origin file beside each .npy, X.npy" : first,
                 LA_VEC_ORIGIN_SUFFIX);
    }
    return LA_OK;
}

la_status la_semantic_choose_model(la_semantic_opts *o, const la_table *t)
{
    if (o->nemb) return vectors_origin(o);
    if (!uses_model(o) || o->model_name) return LA_OK;
    size_t n = la_table_nrows(t);
    const la_row *rows = la_table_rows_const(t);
    const char **texts = malloc((n + 1) * sizeof *texts);
    size_t *lens = malloc((n + 1) * sizeof *lens);
    la_status s = texts && lens ? LA_OK : la_error(LA_ENOMEM, "out of memory");
    if (s == LA_OK) {
        for (size_t i = 0; i < n; i++) {
            texts[i] = rows[i].text ? rows[i].text : "";
            lens[i] = strlen(texts[i]);
        }
        char why[300];
        o->model_name = la_model_default_for(texts, lens, n, row_label, (void *)t, why, sizeof why);
        snprintf(o->default_why, sizeof o->default_why, "default: %s, so %s runs%s", why, o->model_name,
                 strcmp(o->model_name, LA_MODEL_DEFAULT) ? " (--model " LA_MODEL_DEFAULT " keeps the English one)"
                 : strstr(why, "not installed") ? " (English only; scripts/install-deps.sh installs "
                                                  LA_MODEL_MULTILINGUAL ")" : "");
    }
    free(texts);
    free(lens);
    return s;
}

/* The built-in encoder over every row's text (as given, not normalized: the model has its own
 * tokenizer). Rows with no text get zero vectors, which match nothing. */
static int cmp_size(const void *x, const void *y)
{
    size_t a = *(const size_t *)x, b = *(const size_t *)y;
    return (a > b) - (a < b);
}

/* The encoder's progress as a stage of its own, in tokens. */
static void encoding_begins(void *ctx, size_t total) { la_progress_begin(ctx, "semantic copies: encoding", total, "tokens", 0); }
static void encoding_adds(void *ctx, size_t n) { la_progress_add(ctx, n); }

/* Windows as long as the held-out items (the 90th percentile of their word pieces, plus a quarter
 * for rewording, 32 at least): a held-out item inside a long seen text then has a window of about
 * its own size, whose vector is not diluted by the rest of the text. 0 when out of memory. */
static size_t window_tokens(const la_model *m, const la_row *rows, const char **texts, const size_t *lens, size_t n,
                            uint32_t heldout)
{
    size_t nh = 0, *tl = malloc((n + 1) * sizeof *tl), win;
    if (!tl) return 0;
    for (size_t i = 0; i < n; i++)
        if (rows[i].part == heldout && lens[i]) tl[nh++] = la_model_count_tokens(m, texts[i], lens[i]);
    if (nh > 1) qsort(tl, nh, sizeof *tl, cmp_size);
    win = nh ? tl[(size_t)((double)(nh - 1) * 0.9)] * 5 / 4 : 0;
    if (win < 32) win = 32;
    if (win > la_model_window(m)) win = la_model_window(m);
    free(tl);
    return win;
}

/* The encoder over n texts into r: windows of win word pieces (r->item, begin, end set), or one
 * vector per text cut at the model window (r->item NULL). */
static la_status embed_texts(la_model *m, const char **texts, const size_t *lens, size_t n, int windows, size_t win,
                             int threads, embed_run *r)
{
    if (windows) return la_model_embed_windows(m, texts, lens, n, win, threads, &r->emb, &r->item, &r->begin, &r->end,
                                               &r->nwin);
    r->emb = malloc((n * la_model_dim(m) + 1) * sizeof *r->emb);
    if (!r->emb) return la_error(LA_ENOMEM, "out of memory");
    r->nwin = n;
    return la_model_embed(m, texts, lens, n, threads, r->emb);
}

/* Everything that changes a vector, as the cache's settings: the model (name, weights, tokenizer
 * and pooling files), its prompt and dimension, the encoder's numerics and the backend. */
#define LA_ENCODER_NUMERICS 1 /* raise when the forward pass computes other bits */
static void cache_settings(const la_model *m, const char *backend, char *out, size_t cap)
{
    static const char *files[] = {"vocab.txt", "tokenizer.json", "tokenizer_config.json", "special_tokens_map.json",
                                  "config.json", "sentence_bert_config.json", "modules.json", "1_Pooling/config.json"};
    la_blake2b_state st;
    la_blake2b_init(&st, NULL, 0, 32);
    for (size_t k = 0; k < sizeof files / sizeof *files; k++) {
        char p[PATH_MAX + 64];
        snprintf(p, sizeof p, "%s/%s", la_model_dir(m), files[k]);
        FILE *f = fopen(p, "rb");
        if (!f) continue;
        unsigned char buf[1 << 14];
        size_t got;
        la_blake2b_update(&st, (const unsigned char *)files[k], strlen(files[k]) + 1);
        while ((got = fread(buf, 1, sizeof buf, f)) > 0) la_blake2b_update(&st, buf, got);
        fclose(f);
    }
    unsigned char h[32];
    la_blake2b_final(&st, h, sizeof h);
    char hex[65];
    for (int i = 0; i < 32; i++) snprintf(hex + 2 * i, 3, "%02x", h[i]);
    snprintf(out, cap, "leakaudit encoder vectors; numerics %d; model %s; weights %s; tokenizer blake2b-256:%s; "
             "prompt \"%s\"; dim %zu; pooling mean; normalize l2; backend %s", LA_ENCODER_NUMERICS, la_model_name(m),
             la_model_weights_hash(m), hex, la_model_prompt(m), la_model_dim(m), backend);
}

/* A text's windows from the cache (hit) or from the misses' run r (miss), appended to out. */
static la_status append_windows(embed_run *out, size_t dim, uint32_t item, size_t nwin, const uint32_t *begin,
                                const uint32_t *end, size_t stride, const float *vec)
{
    for (size_t w = 0; w < nwin; w++) {
        out->item[out->nwin] = item;
        out->begin[out->nwin] = begin[w * stride];
        out->end[out->nwin] = end[w * stride];
        memcpy(out->emb + out->nwin * dim, vec + w * dim, dim * sizeof *vec);
        out->nwin++;
    }
    return LA_OK;
}

/* The misses' windows from their run: windows first .. first + count of miss j. */
static size_t miss_windows(const embed_run *mr, size_t j, size_t *first)
{
    if (!mr->item) return *first = j, 1;
    size_t a = *first;
    while (a < mr->nwin && mr->item[a] < j) a++;
    size_t z = a;
    while (z < mr->nwin && mr->item[z] == j) z++;
    *first = a;
    return z - a;
}

/* The encoder through the cache (embed_cache.h): cached texts read back, the others computed in
 * one call and added, the cache saved. When the encoder ran on another backend than the cache's
 * (a GPU that fell back), every text is computed afresh and the cache is left as it was. */
static la_status embed_cached(la_model *m, const la_semantic_opts *o, const char **texts, const size_t *lens,
                              size_t n, int windows, int threads, embed_run *r)
{
    const char *backend = o->use_gpu ? "gpu" : "cpu";
    char settings[1024];
    cache_settings(m, backend, settings, sizeof settings);
    la_embed_cache *c;
    LA_TRY(la_embed_cache_open(o->cache_dir, settings, la_model_dim(m), &c, r->cache_note, sizeof r->cache_note));
    uint32_t want = windows ? (uint32_t)r->win : LA_EMBED_CACHE_CUT;
    size_t H = la_model_dim(m), nm = 0, total = 0, *miss = malloc((n + 1) * sizeof *miss);
    const char **mt = malloc((n + 1) * sizeof *mt);
    size_t *ml = malloc((n + 1) * sizeof *ml);
    unsigned char (*key)[LA_EMBED_CACHE_KEY] = malloc((n + 1) * sizeof *key); /* each text hashed once */
    la_status s = miss && mt && ml && key ? LA_OK : la_error(LA_ENOMEM, "out of memory");
    for (size_t i = 0; s == LA_OK && i < n; i++) {
        size_t nw;
        const uint32_t *b, *e;
        const float *v;
        la_embed_cache_key(texts[i], lens[i], key[i]);
        if (la_embed_cache_get(c, key[i], want, &nw, &b, &e, &v)) {
            total += nw;
            continue;
        }
        miss[nm] = i, mt[nm] = texts[i], ml[nm++] = lens[i];
    }
    embed_run mr;
    memset(&mr, 0, sizeof mr);
    if (s == LA_OK && nm) s = embed_texts(m, mt, ml, nm, windows, r->win, threads, &mr);
    const char *fb;
    if (s == LA_OK && nm && strcmp(la_model_backend(m, &fb), backend)) {
        snprintf(r->cache_note, sizeof r->cache_note, "the encoder ran on the %s, not the %s: --cache was not used",
                 la_model_backend(m, &fb), backend);
        embed_run_free(&mr);
        nm = n;
        s = embed_texts(m, texts, lens, n, windows, r->win, threads, r);
        goto done;
    }
    /* the misses into the cache */
    for (size_t j = 0, first = 0; s == LA_OK && j < nm; j++) {
        size_t k = miss_windows(&mr, j, &first);
        uint32_t zero = 0, len = (uint32_t)ml[j];
        uint32_t win = windows ? (k == 1 ? 0 : want)
                               : (la_model_count_tokens(m, mt[j], ml[j]) > la_model_window(m) ? want : 0);
        s = la_embed_cache_put(c, key[miss[j]], win, k, mr.item ? mr.begin + first : &zero,
                               mr.item ? mr.end + first : &len, mr.emb + first * H);
        total += k;
    }
    /* every row's windows in row order */
    if (s == LA_OK) {
        r->emb = la_malloc_nm(total + 1, H, sizeof *r->emb);
        r->item = malloc((total + 1) * sizeof *r->item);
        r->begin = malloc((total + 1) * sizeof *r->begin);
        r->end = malloc((total + 1) * sizeof *r->end);
        if (!r->emb || !r->item || !r->begin || !r->end) s = la_error(LA_ENOMEM, "out of memory");
    }
    for (size_t i = 0; s == LA_OK && i < n; i++) {
        size_t nw;
        const uint32_t *b, *e;
        const float *v;
        if (!la_embed_cache_get(c, key[i], want, &nw, &b, &e, &v))
            s = la_error(LA_EINTERNAL, "--cache: row %zu was neither cached nor computed", i);
        else
            s = append_windows(r, H, (uint32_t)i, nw, b, e, 2, v);
    }
    if (s == LA_OK && !windows) { /* one vector per row: no windows to speak of */
        free(r->item), free(r->begin), free(r->end);
        r->item = r->begin = r->end = NULL;
    }
    if (s == LA_OK && nm) s = la_embed_cache_save(c, r->cache_file, sizeof r->cache_file);
    else if (s == LA_OK) snprintf(r->cache_file, sizeof r->cache_file, "%s", la_embed_cache_path(c));
done:
    r->cached = 1;
    r->cache_hits = n - nm;
    r->cache_misses = nm;
    embed_run_free(&mr);
    la_embed_cache_free(c);
    free(miss);
    free(mt);
    free(ml);
    free(key);
    return s;
}

/* The encoder of the run's model, on the GPU when the backend has one. */
static la_status open_model(const la_semantic_opts *o, la_model **m)
{
    char dir[PATH_MAX];
    LA_TRY(la_model_resolve(o->model_name ? o->model_name : LA_MODEL_DEFAULT, dir, sizeof dir));
    la_status s = la_model_open(dir, m);
    if (s != LA_OK) {
        char why[600];
        snprintf(why, sizeof why, "%s", la_last_error());
        return la_error(s, "the sentence encoder model could not be loaded: %s", why);
    }
    la_model_set_gpu(*m, o->use_gpu);
    return LA_OK;
}

/* What the report says of the encoder's run, and why it ran. */
static void describe_model(const la_semantic_opts *o, const la_model *m, embed_run *r)
{
    int dflt = !o->model || o->default_why[0];
    r->dim = la_model_dim(m);
    r->model = 1;
    r->kind = "model (built-in sentence encoder: similarity of meaning)";
    snprintf(r->model_name, sizeof r->model_name, "%s", la_model_name(m));
    snprintf(r->model_hash, sizeof r->model_hash, "%s", la_model_weights_hash(m));
    r->model_window = la_model_window(m) + 2;
    if (o->default_why[0])
        snprintf(r->why, sizeof r->why, "%s", o->default_why);
    else if (dflt)
        snprintf(r->why, sizeof r->why, "default: model %s is installed in %s", la_model_name(m), la_model_root());
    else
        snprintf(r->why, sizeof r->why, "asked for (%s)", o->model_name ? "--model" : "--embed model");
}

/* Where the encoder ran, once it has: a device can fall back to the CPU during the run. */
static void note_encoder_backend(const la_model *m, embed_run *r)
{
    const char *fb;
    snprintf(r->encoder_backend, sizeof r->encoder_backend, "%s", la_model_backend(m, &fb));
    snprintf(r->encoder_fallback, sizeof r->encoder_fallback, "%s", fb);
}

/* The same for the lexical embedding. */
static void describe_lexical(const la_semantic_opts *o, embed_run *r)
{
    r->kind = "lexical (built-in TF-IDF of words and character n-grams: similarity of wording, not meaning)";
    if (o->embed_set)
        snprintf(r->why, sizeof r->why, "asked for (--embed lexical)");
    else
        snprintf(r->why, sizeof r->why, "no sentence encoder model is installed in %s (scripts/install-deps.sh "
                 "installs %s)", la_model_root(), LA_MODEL_DEFAULT);
    r->lexical = 1;
    r->dim = o->lexical_dim ? o->lexical_dim : LA_EMBED_LEXICAL_DIM;
}

static la_status embed_model(const la_semantic_opts *o, const la_table *t, uint32_t heldout, int threads, int windows,
                             embed_run *r)
{
    la_model *m;
    LA_TRY(open_model(o, &m));
    if (o->progress) la_model_set_progress(m, encoding_begins, encoding_adds, o->progress);
    size_t n = la_table_nrows(t), H = la_model_dim(m);
    const la_row *rows = la_table_rows_const(t);
    const char **texts = malloc((n + 1) * sizeof *texts);
    size_t *lens = malloc((n + 1) * sizeof *lens);
    la_status s = texts && lens ? LA_OK : la_error(LA_ENOMEM, "out of memory");
    for (size_t i = 0; s == LA_OK && i < n; i++) {
        texts[i] = has_text(rows[i].text) ? rows[i].text : "";
        lens[i] = strlen(texts[i]);
    }
    if (s == LA_OK && windows && !(r->win = window_tokens(m, rows, texts, lens, n, heldout)))
        s = la_error(LA_ENOMEM, "out of memory");
    if (s == LA_OK && o->cache_dir) s = embed_cached(m, o, texts, lens, n, windows, threads, r);
    else if (s == LA_OK) s = embed_texts(m, texts, lens, n, windows, r->win, threads, r);
    for (size_t w = 0; s == LA_OK && w < r->nwin; w++)
        if (!lens[r->item ? r->item[w] : w]) memset(r->emb + w * H, 0, H * sizeof *r->emb);
    if (s == LA_OK) {
        describe_model(o, m, r);
        note_encoder_backend(m, r);
    }
    free(texts);
    free(lens);
    la_model_free(m);
    return s;
}

static la_status embed_rows(const la_semantic_opts *o, const la_loader *L, const la_table *t, uint32_t heldout,
                            int threads, int windows, embed_run *r)
{
    memset(r, 0, sizeof *r);
    size_t n = la_table_nrows(t);
    la_status s;
    char dir[PATH_MAX];
    if (o->nemb) {
        r->kind = "embeddings from .npy files";
        snprintf(r->why, sizeof r->why, "vectors brought in (--embeddings)%s%s", o->vectors_note[0] ? ": " : "",
                 o->vectors_note);
        s = load_npy(o, L, t, &r->emb, &r->dim);
    } else if (o->embedding_field) {
        r->kind = "embeddings from a JSON field";
        snprintf(r->why, sizeof r->why, "vectors brought in (--embedding-field)");
        r->dim = L->emb_dim;
        r->emb = malloc((n * r->dim + 1) * sizeof *r->emb);
        s = r->emb ? LA_OK : la_error(LA_ENOMEM, "out of memory");
        if (s == LA_OK && n) memcpy(r->emb, L->emb, n * r->dim * sizeof *r->emb);
    } else if (o->model || (!o->embed_set && la_model_default_installed(dir, sizeof dir))) {
        return embed_model(o, t, heldout, threads, windows, r);
    } else {
        describe_lexical(o, r);
        /* a shard passes the whole table with its flags (la_tier_semantic): every row's words weigh */
        s = la_semantic_embed_lexical_some(t, o->lexical_dim, threads, o->skip, &r->emb);
    }
    r->nwin = n;
    if (s != LA_OK) embed_run_free(r);
    return s;
}

la_status la_semantic_embeddings(const la_semantic_opts *o, const la_loader *L, const la_table *t, int threads,
                                 float **out, size_t *out_dim, const char **out_kind)
{
    embed_run r;
    LA_TRY(embed_rows(o, L, t, UINT32_MAX, threads, 0, &r));
    *out = r.emb;
    *out_dim = r.dim;
    *out_kind = r.kind;
    r.emb = NULL;
    embed_run_free(&r);
    return LA_OK;
}

/* Texts embedded as more than one window: all of them (rows NULL), or those of partition part. */
static size_t texts_windowed(const embed_run *r, const la_row *rows, uint32_t part)
{
    size_t k = 0;
    for (size_t w = 1; r->item && w < r->nwin; w++)
        k += r->item[w] == r->item[w - 1] && (w < 2 || r->item[w - 2] != r->item[w]) &&
             (!rows || rows[r->item[w]].part == part);
    return k;
}


/* The model whose calibration applies: the built-in encoder's, or the one that made the vectors
 * brought in (vec_origin.h); NULL when none is known. */
static const char *calibrated_model(const la_semantic_opts *o)
{
    if (uses_model(o)) return o->model_name ? o->model_name : LA_MODEL_DEFAULT;
    return o->nemb && o->vectors_model[0] ? o->vectors_model : NULL;
}

/* The model's own calibrated threshold, when it has one (NAN otherwise). */
static double model_threshold(const la_semantic_opts *o, const char **source)
{
    *source = NULL;
    const char *m = calibrated_model(o);
    return m ? la_model_threshold(m, source) : NAN;
}

double la_semantic_margin_for(const la_semantic_opts *o, const char **source)
{
    if (!isnan(o->margin)) {
        *source = o->margin > 0 ? "--semantic-margin" : "--semantic-margin off";
        return o->margin;
    }
    const char *model = calibrated_model(o);
    double m = model ? la_model_margin(model, source) : 0;
    if (!m) *source = "off: no margin is calibrated for this embedding (--semantic-margin turns it on)";
    return m;
}

double la_semantic_threshold_for(const la_semantic_opts *o)
{
    const char *src;
    double own = model_threshold(o, &src);
    return !isnan(o->threshold) ? o->threshold
           : !isnan(own) ? own
           : (o->nemb || o->embedding_field || uses_model(o)) ? LA_SEMANTIC_THRESHOLD_MODEL
                                                              : LA_SEMANTIC_THRESHOLD_LEXICAL;
}

/* One pair found through windows, for the report. */
typedef struct win_hit {
    uint32_t a, b;           /* table rows (seen, held-out) */
    uint32_t wa, wb;         /* their windows */
    float cosine;
    float margin;            /* the window pair's ratio margin when the margin linked it, else NaN */
} win_hit;

/* By held-out text, then seen text, then best cosine first. */
static int cmp_win_hit(const void *x, const void *y)
{
    const win_hit *p = x, *q = y;
    if (p->b != q->b) return p->b < q->b ? -1 : 1;
    if (p->a != q->a) return p->a < q->a ? -1 : 1;
    if (p->cosine != q->cosine) return p->cosine > q->cosine ? -1 : 1;
    if (p->wa != q->wa) return p->wa < q->wa ? -1 : 1;
    return (p->wb > q->wb) - (p->wb < q->wb);
}

typedef struct cand {
    uint32_t item;
    float cosine;
} cand;

static int cmp_cand(const void *x, const void *y)
{
    const cand *p = x, *q = y;
    if (p->cosine != q->cosine) return p->cosine > q->cosine ? -1 : 1;
    return (p->item > q->item) - (p->item < q->item);
}

/*
 * The search over windows: a table of windows (each in its text's partition) goes through
 * la_semantic_find_inplace (r->emb is reordered, and read no more after); a pair of texts takes its best window pair, a held-out text's nearest seen
 * texts are the best over its windows' lists. Pairs are appended to `pairs` in (b, a) order with
 * the window that matched kept in *hits (pairs where a side has more than one window).
 */
static la_status reduce_windows(const la_table *t, uint32_t heldout, const uint32_t *item, size_t nwin,
                                const la_pairs *wp, const la_semantic_nearest *wn, la_pairs *pairs,
                                la_semantic_nearest *nn, win_hit **hits, size_t *nhits);

static la_status search_windows(const la_table *t, uint32_t heldout, embed_run *r, const la_semantic_params *p,
                                la_pairs *pairs, la_semantic_nearest *nn, la_semantic_stats *st, win_hit **hits,
                                size_t *nhits)
{
    size_t n = la_table_nrows(t);
    const la_row *rows = la_table_rows_const(t);
    la_table *wt = NULL;
    la_pairs wp = {0};
    la_semantic_nearest wn;
    memset(&wn, 0, sizeof wn);
    memset(nn, 0, sizeof *nn);
    *hits = NULL;
    *nhits = 0;
    la_status s = la_table_new(&wt);
    for (uint32_t k = 0; s == LA_OK && k < la_table_npart(t); k++) {
        uint32_t idx;
        s = la_table_part(wt, la_table_part_name(t, k), &idx);
    }
    for (size_t w = 0; s == LA_OK && w < r->nwin; w++) {
        char id[32];
        int len = snprintf(id, sizeof id, "w%zu", w);
        la_row row;
        memset(&row, 0, sizeof row);
        row.part = rows[r->item[w]].part;
        row.date = LA_NO_DATE;
        row.score = NAN;
        row.ordinal = (uint32_t)w;
        size_t at;
        s = la_table_strdup(wt, id, (size_t)len, &row.id);
        if (s == LA_OK) s = la_table_append(wt, &row, &at);
    }
    if (s == LA_OK) s = la_semantic_find_inplace(wt, heldout, r->emb, r->dim, p, &wp, &wn, st);
    if (s == LA_OK) s = reduce_windows(t, heldout, r->item, r->nwin, &wp, &wn, pairs, nn, hits, nhits);
    if (s == LA_OK) {
        size_t nh = 0;
        for (size_t i = 0; i < n; i++) nh += rows[i].part == heldout;
        st->n_heldout = nh;
        st->n_seen = n - nh;
    }
    la_pairs_free(&wp);
    la_semantic_nearest_free(&wn);
    la_table_free(wt);
    return s;
}

/*
 * Windows to texts: wp and wn are the search's pairs and lists over window ids (item[w]: the text
 * of window w, a table row; held-out ids ascending with their rows). A pair of texts takes its
 * best window pair, a held-out text's nearest seen texts are the best over its windows' lists.
 */
static la_status reduce_windows(const la_table *t, uint32_t heldout, const uint32_t *item, size_t nwin,
                                const la_pairs *wp_, const la_semantic_nearest *wn_, la_pairs *pairs,
                                la_semantic_nearest *nn, win_hit **hits, size_t *nhits)
{
    const la_pairs wp = *wp_;
    const la_semantic_nearest wn = *wn_;
    size_t n = la_table_nrows(t);
    const la_row *rows = la_table_rows_const(t);
    uint32_t *nwin_of = calloc(n + 1, sizeof *nwin_of);
    cand *cs = NULL;
    la_status s = nwin_of ? LA_OK : la_error(LA_ENOMEM, "out of memory");
    for (size_t w = 0; s == LA_OK && w < nwin; w++) nwin_of[item[w]]++;
    /* pairs of texts: the best window pair of each */
    win_hit *all = s == LA_OK ? malloc((wp.n + 1) * sizeof *all) : NULL;
    if (s == LA_OK && !all) s = la_error(LA_ENOMEM, "out of memory");
    for (size_t k = 0; s == LA_OK && k < wp.n; k++)
        all[k] = (win_hit){item[wp.v[k].a], item[wp.v[k].b], wp.v[k].a, wp.v[k].b, wp.v[k].cosine, wp.v[k].margin};
    if (s == LA_OK) qsort(all, wp.n, sizeof *all, cmp_win_hit);
    *hits = NULL;
    *nhits = 0;
    size_t caph = 0;
    for (size_t k = 0; s == LA_OK && k < wp.n; k++) {
        if (k && all[k].a == all[k - 1].a && all[k].b == all[k - 1].b) continue;
        la_pair q = la_pair_make(all[k].a, all[k].b, LA_KIND_SEMANTIC);
        q.cosine = all[k].cosine;
        q.margin = all[k].margin; /* NaN when the best window pair reached the threshold */
        s = la_pairs_push(pairs, &q);
        if (s == LA_OK && (nwin_of[q.a] > 1 || nwin_of[q.b] > 1)) {
            if (*nhits == caph) {
                caph = caph ? 2 * caph : 64;
                win_hit *h = realloc(*hits, caph * sizeof *h);
                if (!h) {
                    s = la_error(LA_ENOMEM, "out of memory");
                    break;
                }
                *hits = h;
            }
            (*hits)[(*nhits)++] = all[k];
        }
    }
    free(all);
    /* nearest seen texts of each held-out text */
    size_t nh = 0;
    for (size_t i = 0; i < n; i++) nh += rows[i].part == heldout;
    uint32_t K = wn.k ? wn.k : 1;
    memset(nn, 0, sizeof *nn);
    nn->n = nh;
    nn->k = K;
    nn->row = malloc((nh + 1) * sizeof *nn->row);
    nn->seen = malloc((nh * K + 1) * sizeof *nn->seen);
    nn->cosine = malloc((nh * K + 1) * sizeof *nn->cosine);
    if (s == LA_OK && (!nn->row || !nn->seen || !nn->cosine)) s = la_error(LA_ENOMEM, "out of memory");
    size_t wi = 0, hi = 0, capc = 0;
    for (size_t i = 0; s == LA_OK && i < n; i++) {
        if (rows[i].part != heldout) continue;
        size_t nc = 0;
        for (; wi < wn.n && item[wn.row[wi]] == i; wi++)
            for (uint32_t k = 0; k < wn.k && wn.seen[wi * wn.k + k] != LA_SEMANTIC_NONE; k++) {
                if (nc == capc) {
                    capc = capc ? 2 * capc : 64;
                    cand *c = realloc(cs, capc * sizeof *c);
                    if (!c) {
                        s = la_error(LA_ENOMEM, "out of memory");
                        break;
                    }
                    cs = c;
                }
                cs[nc++] = (cand){item[wn.seen[wi * wn.k + k]], wn.cosine[wi * wn.k + k]};
            }
        qsort(cs, nc, sizeof *cs, cmp_cand);
        nn->row[hi] = (uint32_t)i;
        uint32_t got = 0;
        for (size_t c = 0; c < nc && got < K; c++) {
            int dup = 0;
            for (uint32_t g = 0; g < got && !dup; g++) dup = nn->seen[hi * K + g] == cs[c].item;
            if (dup) continue;
            nn->seen[hi * K + got] = cs[c].item;
            nn->cosine[hi * K + got++] = cs[c].cosine;
        }
        for (; got < K; got++) nn->seen[hi * K + got] = LA_SEMANTIC_NONE, nn->cosine[hi * K + got] = NAN;
        hi++;
    }
    if (s != LA_OK) {
        la_semantic_nearest_free(nn);
        free(*hits);
        *hits = NULL;
        *nhits = 0;
    }
    free(cs);
    free(nwin_of);
    return s;
}

/* A shard's rows: every held-out row and the seen rows not flagged in skip, in table order (the
 * rows' strings borrowed from t), with map[i] the row of t that row i of *out is. */
static la_status shard_table(const la_table *t, const uint8_t *skip, la_table **out, uint32_t **map)
{
    size_t n = la_table_nrows(t);
    const la_row *rows = la_table_rows_const(t);
    *out = NULL;
    *map = la_malloc_n(n + 1, sizeof **map);
    la_status s = *map ? la_table_new(out) : la_error(LA_ENOMEM, "out of memory");
    for (uint32_t k = 0; s == LA_OK && k < la_table_npart(t); k++) {
        uint32_t idx;
        s = la_table_part(*out, la_table_part_name(t, k), &idx);
    }
    size_t m = 0;
    for (size_t i = 0; s == LA_OK && i < n; i++) {
        if (skip[i]) continue;
        size_t at;
        s = la_table_append(*out, &rows[i], &at);
        (*map)[m++] = (uint32_t)i;
    }
    return s;
}

/* The vectors of the shard's rows, gathered from those of every row (emb: n x dim, replaced). */
static la_status gather_rows(embed_run *r, const uint32_t *map, size_t m)
{
    float *e = la_malloc_nm(m + 1, r->dim, sizeof *e);
    if (!e) return la_error(LA_ENOMEM, "out of memory");
    for (size_t i = 0; i < m; i++) memcpy(e + i * r->dim, r->emb + (size_t)map[i] * r->dim, r->dim * sizeof *e);
    free(r->emb);
    r->emb = e;
    r->nwin = m;
    return LA_OK;
}


/* A shard searches exactly, whatever the size of its slice, as the unsharded run would: auto
 * decides from every seen row, and the approximate index is refused (its cells depend on the slice). */
static la_status shard_method(const la_table *t, uint32_t heldout, size_t dim, la_semantic_params *p)
{
    size_t nq = 0, n = la_table_nrows(t);
    const la_row *rows = la_table_rows_const(t);
    for (size_t i = 0; i < n; i++) nq += rows[i].part == heldout;
    int method = la_semantic_method_for(p, nq, n - nq, dim); /* from every seen row, as unsharded */
    if (method == LA_SEMANTIC_FAISS_IVF)
        return la_error(LA_EINVAL, "--shard: the approximate index (faiss-ivf%s) depends on the rows of each shard, "
                                   "so the shards would not add up to one audit: give --semantic-method tiles or faiss",
                        p->method == LA_SEMANTIC_AUTO ? ", which auto picks at this size" : "");
    p->method = method;
    return LA_OK;
}

static la_status shard_method(const la_table *t, uint32_t heldout, size_t dim, la_semantic_params *p);

/* ---- the seen side streamed (la_tier_semantic): vectors for the held-out rows and one batch ---- */

/* Rows embedded per call: the encoder's progress moves per call; the lexical kernel's threads want
 * a few thousand rows. */
#define LA_STREAM_MODEL_ROWS 2048
#define LA_STREAM_LEXICAL_ROWS 16384

/* Rows a lexical embedding call takes: LA_STREAM_LEXICAL_ROWS, or LEAKAUDIT_EMBED_ROWS (tests: many
 * calls on a small input; the same vectors whatever the count). */
static size_t lexical_rows(void)
{
    const char *e = getenv("LEAKAUDIT_EMBED_ROWS");
    char *end;
    unsigned long long v = e && *e ? strtoull(e, &end, 10) : 0;
    return v && !*end ? (size_t)v : LA_STREAM_LEXICAL_ROWS;
}
/* The stream's own buffer: at most this share of --memory-limit, and at most 256 MiB (larger
 * batches are no faster). */
#define LA_STREAM_SHARE 16
#define LA_STREAM_MAX_BYTES (256u << 20)

/* The built-in embeddings stream; vectors brought in are in memory already, and --cache keeps
 * every vector of the run for its file. */
static int can_stream(const la_semantic_opts *o) { return !o->nemb && !o->embedding_field && !o->cache_dir; }

/* What embeds one batch: the encoder, or the lexical kernel over frequencies of every row. */
typedef struct streamer {
    la_model *m;              /* NULL: lexical */
    la_lexical_idf *idf;
    la_embed_lexical_params ep;
    const char **texts;       /* every row's text as the embedding reads it */
    size_t *lens;
    int windows, threads;
    size_t win, dim;
} streamer;

/* Embed rows idx[0..k) into *vec (nv x dim; owned by the caller) with each vector's row in
 * *vrow and, for the encoder's windows, its byte range in *vb, *ve (NULL otherwise). */
static la_status embed_batch(streamer *z, const uint32_t *idx, size_t k, float **vec, uint32_t **vrow, uint32_t **vb,
                             uint32_t **ve, size_t *nv, float **spare, size_t *spare_rows)
{
    *vec = NULL;
    *vrow = *vb = *ve = NULL;
    *nv = 0;
    const char **tx = la_malloc_n(k + 1, sizeof *tx);
    size_t *ln = la_malloc_n(k + 1, sizeof *ln);
    la_status s = tx && ln ? LA_OK : la_error(LA_ENOMEM, "out of memory");
    for (size_t i = 0; s == LA_OK && i < k; i++) tx[i] = z->texts[idx[i]], ln[i] = z->lens[idx[i]];
    uint32_t *item = NULL;
    if (s == LA_OK && z->m && z->windows) {
        s = la_model_embed_windows(z->m, tx, ln, k, z->win, z->threads, vec, &item, vb, ve, nv);
    } else if (s == LA_OK) {
        if (spare && *spare && *spare_rows >= k + 1) {
            *vec = *spare; /* the last batch's buffer: its pages are mapped already */
            *spare = NULL;
        } else {
            *vec = la_malloc_nm(k + 1, z->dim, sizeof **vec);
            if (spare && *vec) {
                free(*spare);
                *spare = NULL;
                *spare_rows = k + 1;
            }
        }
        item = la_malloc_n(k + 1, sizeof *item);
        s = *vec && item ? LA_OK : la_error(LA_ENOMEM, "out of memory for %zu x %zu floats", k, z->dim);
        for (size_t i = 0; s == LA_OK && i < k; i++) item[i] = (uint32_t)i;
        if (s == LA_OK) s = z->m ? la_model_embed(z->m, tx, ln, k, z->threads, *vec)
                                 : la_cpu_embed_lexical_with(z->idf, tx, ln, k, &z->ep, *vec);
        *nv = k;
    }
    for (size_t w = 0; s == LA_OK && w < *nv; w++) {
        if (z->m && !ln[item[w]]) memset(*vec + w * z->dim, 0, z->dim * sizeof **vec); /* no text: matches nothing */
        item[w] = idx[item[w]];
    }
    *vrow = item;
    if (s != LA_OK) {
        free(*vec), free(*vrow), free(*vb), free(*ve);
        *vec = NULL;
        *vrow = *vb = *ve = NULL;
        *nv = 0;
    }
    free(tx);
    free(ln);
    return s;
}

/* Append a batch's windows to the run's id arrays (r->item, r->begin, r->end: ids in order). */
static la_status keep_ids(embed_run *r, size_t *cap, const uint32_t *vrow, const uint32_t *vb, const uint32_t *ve,
                          size_t nv)
{
    if (r->nwin + nv > *cap) {
        size_t c = *cap ? *cap : 4096;
        while (c < r->nwin + nv) c *= 2;
        uint32_t *i = la_realloc_n(r->item, c, sizeof *i);
        if (i) r->item = i;
        uint32_t *b = i && vb ? la_realloc_n(r->begin, c, sizeof *b) : r->begin;
        if (b) r->begin = b;
        uint32_t *e = b && vb ? la_realloc_n(r->end, c, sizeof *e) : r->end;
        if (e) r->end = e;
        if (!i || (vb && (!b || !e))) return la_error(LA_ENOMEM, "out of memory");
        *cap = c;
    }
    memcpy(r->item + r->nwin, vrow, nv * sizeof *vrow);
    if (vb) memcpy(r->begin + r->nwin, vb, nv * sizeof *vb), memcpy(r->end + r->nwin, ve, nv * sizeof *ve);
    r->nwin += nv;
    return LA_OK;
}

/* The streamer's model or lexical frequencies, with the run's description in r. */
static la_status streamer_open(const la_semantic_opts *o, const la_table *t, uint32_t heldout, int threads,
                               streamer *z, embed_run *r)
{
    size_t n = la_table_nrows(t);
    const la_row *rows = la_table_rows_const(t);
    z->threads = threads;
    z->texts = la_malloc_n(n + 1, sizeof *z->texts);
    z->lens = la_malloc_n(n + 1, sizeof *z->lens);
    if (!z->texts || !z->lens) return la_error(LA_ENOMEM, "out of memory");
    if (!uses_model(o)) {
        for (size_t i = 0; i < n; i++) {
            z->texts[i] = rows[i].norm ? rows[i].norm : rows[i].text;
            z->lens[i] = rows[i].norm ? rows[i].norm_len : rows[i].text ? strlen(rows[i].text) : 0;
        }
        la_embed_lexical_params_default(&z->ep);
        if (o->lexical_dim) z->ep.dim = o->lexical_dim;
        z->ep.threads = threads;
        z->dim = z->ep.dim;
        describe_lexical(o, r);
        /* every row's words weigh, a shard's other rows too */
        return la_cpu_lexical_idf(z->texts, z->lens, n, &z->ep, &z->idf);
    }
    LA_TRY(open_model(o, &z->m));
    for (size_t i = 0; i < n; i++) {
        z->texts[i] = has_text(rows[i].text) ? rows[i].text : "";
        z->lens[i] = strlen(z->texts[i]);
    }
    z->windows = !o->no_windows;
    z->dim = la_model_dim(z->m);
    if (z->windows && !(z->win = window_tokens(z->m, rows, z->texts, z->lens, n, heldout)))
        return la_error(LA_ENOMEM, "out of memory");
    r->win = z->win;
    describe_model(o, z->m, r);
    return LA_OK;
}

static void streamer_close(streamer *z, embed_run *r)
{
    if (z->m && r) note_encoder_backend(z->m, r);
    la_model_free(z->m);
    la_lexical_idf_free(z->idf);
    free(z->texts);
    free(z->lens);
    memset(z, 0, sizeof *z);
}

size_t la_memory_default(void) { return la_memory_usable() / 2; }

/* The seen vectors to hold at once under the memory limit, in rows of dim floats. */
static size_t stream_rows(const la_semantic_opts *o, size_t dim)
{
    size_t limit = o->memory_limit ? o->memory_limit : la_memory_default();
    size_t bytes = limit / LA_STREAM_SHARE;
    if (bytes > LA_STREAM_MAX_BYTES) bytes = LA_STREAM_MAX_BYTES;
    return bytes / (dim * sizeof(float));
}

/*
 * The search with the seen side streamed: the held-out rows are embedded first and stay; then the
 * seen rows (not flagged in o->skip) are embedded a call at a time, in table order, and go through
 * the tiles a batch at a time (la_semantic_stream), so no more than one batch of seen vectors is
 * held. Ids: the held-out vectors 0.., then the seen ones, r->item giving each id's row (and
 * r->begin, r->end its window). Same pairs, lists and windows as embedding everything at once.
 */
static la_status search_streamed(const la_semantic_opts *o, const la_table *t, uint32_t heldout, int threads,
                                 la_semantic_params *p, int *streamed, embed_run *r, la_pairs *pairs,
                                 la_semantic_nearest *nn, la_semantic_stats *st, win_hit **hits, size_t *nhits)
{
    size_t n = la_table_nrows(t);
    const la_row *rows = la_table_rows_const(t);
    memset(r, 0, sizeof *r);
    memset(nn, 0, sizeof *nn);
    *hits = NULL;
    *nhits = 0;
    streamer z;
    memset(&z, 0, sizeof z);
    la_semantic_stream *ss = NULL;
    la_pairs wp = {0};
    la_semantic_nearest wn;
    memset(&wn, 0, sizeof wn);
    float *Q = NULL, *vec = NULL, *spare = NULL;
    size_t spare_rows = 0;
    uint32_t *vrow = NULL, *vb = NULL, *ve = NULL, *idx = la_malloc_n(n + 1, sizeof *idx), *qid = NULL, *sid = NULL;
    size_t cap = 0, nq = 0, nv = 0, nseen = 0, embedded = 0;
    la_status s = idx ? streamer_open(o, t, heldout, threads, &z, r) : la_error(LA_ENOMEM, "out of memory");
    for (size_t i = 0; s == LA_OK && i < n; i++)
        if (rows[i].part == heldout) idx[nq++] = (uint32_t)i;
    /* auto decides from every seen row, a shard's others too; only the tiles stream */
    *streamed = 1;
    if (s == LA_OK && o->skip) s = shard_method(t, heldout, z.dim, p);
    if (s == LA_OK && la_semantic_method_for(p, nq, n - nq, z.dim) != LA_SEMANTIC_TILES) {
        *streamed = 0;
        streamer_close(&z, NULL);
        free(idx);
        memset(r, 0, sizeof *r);
        return LA_OK;
    }
    /* progress in rows: the pipeline's stage "semantic copies" (a shard's other rows count as done);
     * the encoder, the slow part, as a stage of its own over the rows it embeds */
    size_t skipped = 0;
    for (size_t i = 0; o->skip && i < n; i++) skipped += o->skip[i] != 0;
    if (o->progress && z.m) la_progress_begin(o->progress, "semantic copies: encoding", n - skipped, "rows", 0);
    else if (o->progress) la_progress_add(o->progress, skipped);
    /* the held-out side, whole */
    if (s == LA_OK) s = embed_batch(&z, idx, nq, &Q, &vrow, &vb, &ve, &nv, NULL, NULL);
    if (s == LA_OK) s = keep_ids(r, &cap, vrow, vb, ve, nv);
    size_t nqv = nv;
    if (s == LA_OK && !(qid = la_malloc_n(nqv + 1, sizeof *qid))) s = la_error(LA_ENOMEM, "out of memory");
    for (size_t w = 0; s == LA_OK && w < nqv; w++) qid[w] = (uint32_t)w;
    if (s == LA_OK) s = la_semantic_stream_begin(Q, qid, nqv, z.dim, stream_rows(o, z.dim), p, &ss);
    if (o->progress) la_progress_add(o->progress, nq);
    embedded = nq;
    free(vrow), free(vb), free(ve);
    vrow = vb = ve = NULL;
    /* the seen side, a call at a time */
    size_t step = z.m ? LA_STREAM_MODEL_ROWS : lexical_rows();
    for (size_t i = 0; s == LA_OK && i < n;) {
        size_t k = 0;
        for (; i < n && k < step; i++)
            if (rows[i].part != heldout && !(o->skip && o->skip[i])) idx[k++] = (uint32_t)i;
        if (!k) break;
        s = embed_batch(&z, idx, k, &vec, &vrow, &vb, &ve, &nv, &spare, &spare_rows);
        uint32_t *grown = s == LA_OK ? la_realloc_n(sid, nv + 1, sizeof *sid) : NULL;
        if (s == LA_OK && !grown) s = la_error(LA_ENOMEM, "out of memory");
        if (grown) sid = grown;
        for (size_t w = 0; s == LA_OK && w < nv; w++) sid[w] = (uint32_t)(r->nwin + w);
        if (s == LA_OK) s = la_semantic_stream_add(ss, vec, sid, nv);
        if (s == LA_OK) s = keep_ids(r, &cap, vrow, vb, ve, nv);
        /* one buffer for every batch's vectors (without windows, whose count a batch does not
         * know before): fresh pages for each were most of the semantic stage's page faults */
        if (z.m && z.windows) free(vec);
        else if (vec) spare = vec;
        free(vrow), free(vb), free(ve);
        vec = NULL, vrow = vb = ve = NULL;
        nseen += k;
        embedded += k;
        if (o->progress) la_progress_add(o->progress, k);
    }
    if (s == LA_OK) s = la_semantic_stream_end(ss, &wp, &wn, st);
    la_semantic_stream_free(ss);
    free(Q);
    free(spare);
    streamer_close(&z, r);
    if (s == LA_OK && r->nwin > embedded) {
        /* some text was cut into windows: pairs and lists of texts from those of windows */
        s = reduce_windows(t, heldout, r->item, r->nwin, &wp, &wn, pairs, nn, hits, nhits);
    } else if (s == LA_OK) {
        /* one vector per row: an id stands for its row */
        for (size_t k = 0; s == LA_OK && k < wp.n; k++) {
            la_pair q = wp.v[k];
            q.a = r->item[q.a];
            q.b = r->item[q.b];
            s = la_pairs_push(pairs, &q);
        }
        for (size_t k = 0; k < wn.n; k++) wn.row[k] = r->item[wn.row[k]];
        for (size_t k = 0; k < wn.n * wn.k; k++)
            if (wn.seen[k] != LA_SEMANTIC_NONE) wn.seen[k] = r->item[wn.seen[k]];
        *nn = wn;
        memset(&wn, 0, sizeof wn);
    }
    if (s == LA_OK) {
        st->n_heldout = nq;
        st->n_seen = nseen;
    }
    if (r->nwin == embedded) { /* no windows to name: the report reads begin/end only for windowed texts */
        free(r->item), free(r->begin), free(r->end);
        r->item = r->begin = r->end = NULL;
    }
    la_pairs_free(&wp);
    la_semantic_nearest_free(&wn);
    free(idx);
    free(qid);
    free(sid);
    if (s != LA_OK) {
        la_semantic_nearest_free(nn);
        free(*hits);
        *hits = NULL;
        *nhits = 0;
        embed_run_free(r);
    }
    return s;
}

static la_status semantic_report(const la_semantic_opts *o, const la_table *t, const la_semantic_params *pp, embed_run *runp, size_t npairs,
                                 la_semantic_nearest *nnp, const la_semantic_stats *stp, win_hit *hits, size_t nhits,
                                 size_t windowed, size_t windowed_held, la_tier_out *out);

/* The links the ratio margin made among pairs from..n (with windows: per pair of texts). */
static size_t margin_links_of(const la_pairs *pairs, size_t from)
{
    size_t n = 0;
    for (size_t k = from; k < pairs->n; k++) n += !isnan(pairs->v[k].margin);
    return n;
}

la_status la_tier_semantic(const la_semantic_opts *o, const la_loader *L, const la_table *t, uint32_t heldout,
                           int threads, la_pairs *pairs, la_tier_out *out)
{
    memset(out, 0, sizeof *out);
    la_semantic_opts chosen = *o;
    LA_TRY(la_semantic_choose_model(&chosen, t));
    o = &chosen;
    la_semantic_params p;
    la_semantic_params_default(&p);
    p.threshold = la_semantic_threshold_for(o);
    const char *margin_source;
    p.margin = la_semantic_margin_for(o, &margin_source);
    if (p.margin > 0 && o->skip)
        return la_error(LA_EINVAL, "--shard: the ratio margin (%s) compares each pair with every seen row's "
                                   "neighbourhood, which a shard does not see: pass --semantic-margin off to shard "
                                   "this audit (links below cosine %.2f are then not scored: docs/semantic.md)",
                        margin_source, p.threshold);
    p.topk = o->topk;
    p.method = o->method;
    p.threads = threads;
    p.exec = o->exec;
    la_semantic_nearest nn;
    memset(&nn, 0, sizeof nn);
    la_semantic_stats st;
    memset(&st, 0, sizeof st);
    size_t before = pairs->n, nhits = 0;
    win_hit *hits = NULL;
    embed_run run;
    int streamed = 0;
    la_status s = LA_OK;
    if (can_stream(o)) {
        /* the approximate index holds every seen vector: auto takes it only when they fit */
        p.approx_max_bytes = (double)(o->memory_limit ? o->memory_limit : la_memory_default()) / 2;
        s = search_streamed(o, t, heldout, threads, &p, &streamed, &run, pairs, &nn, &st, &hits, &nhits);
        if (s != LA_OK) return s;
    }
    if (streamed) st.margin_links = margin_links_of(pairs, before);
    if (streamed) return semantic_report(o, t, &p, &run, pairs->n - before, &nn, &st, hits, nhits,
                                         texts_windowed(&run, NULL, 0),
                                         texts_windowed(&run, la_table_rows_const(t), heldout), out);
    /* A shard embeds and searches its own rows (st), mapped back to t's rows at the end; what is
     * computed from every row (the lexical weights, vectors from files) is computed on t. */
    la_table *st_own = NULL;
    uint32_t *map = NULL;
    if (o->skip) {
        la_status ss = shard_table(t, o->skip, &st_own, &map);
        if (ss != LA_OK) {
            la_table_free(st_own);
            free(map);
            return ss;
        }
    }
    const la_table *full = t;
    if (st_own) t = st_own;
    la_status es = st_own && !uses_model(o) ? embed_rows(o, L, full, heldout, threads, 0, &run)
                                            : embed_rows(o, L, t, heldout, threads, !o->no_windows, &run);
    if (es == LA_OK && st_own && !uses_model(o)) {
        es = gather_rows(&run, map, la_table_nrows(t));
        if (es != LA_OK) embed_run_free(&run);
    }
    if (es != LA_OK) {
        la_table_free(st_own);
        free(map);
        return es;
    }
    size_t dim = run.dim;
    la_pairs own = {0};
    la_pairs *found = st_own ? &own : pairs;
    s = st_own ? shard_method(full, heldout, dim, &p) : LA_OK;
    if (s == LA_OK && run.nwin > la_table_nrows(t))
        s = search_windows(t, heldout, &run, &p, found, &nn, &st, &hits, &nhits);
    else if (s == LA_OK)
        s = la_semantic_find_inplace(t, heldout, run.emb, dim, &p, found, &nn, &st);
    /* a shard's rows back to the table's: the map keeps their order, so every list stays sorted */
    for (size_t k = 0; s == LA_OK && st_own && k < own.n; k++) {
        la_pair q = own.v[k];
        q.a = map[q.a];
        q.b = map[q.b];
        s = la_pairs_push(pairs, &q);
    }
    for (size_t k = 0; s == LA_OK && st_own && k < nhits; k++) hits[k].a = map[hits[k].a], hits[k].b = map[hits[k].b];
    for (size_t k = 0; s == LA_OK && st_own && k < nn.n; k++) nn.row[k] = map[nn.row[k]];
    for (size_t k = 0; s == LA_OK && st_own && k < nn.n * nn.k; k++)
        if (nn.seen[k] != LA_SEMANTIC_NONE) nn.seen[k] = map[nn.seen[k]];
    size_t windowed = texts_windowed(&run, NULL, 0),
           windowed_held = texts_windowed(&run, la_table_rows_const(t), heldout);
    la_pairs_free(&own);
    if (s != LA_OK) {
        free(hits);
        la_semantic_nearest_free(&nn);
        embed_run_free(&run);
        la_table_free(st_own);
        free(map);
        return s;
    }
    t = full;
    st.margin_links = margin_links_of(pairs, before);
    s = semantic_report(o, t, &p, &run, pairs->n - before, &nn, &st, hits, nhits, windowed, windowed_held,
                        out);
    la_table_free(st_own);
    free(map);
    return s;
}

/* The tier's report from its search (frees run, nn and hits). */
static la_status semantic_report(const la_semantic_opts *o, const la_table *t, const la_semantic_params *pp, embed_run *runp, size_t npairs,
                                 la_semantic_nearest *nnp, const la_semantic_stats *stp, win_hit *hits, size_t nhits,
                                 size_t windowed, size_t windowed_held, la_tier_out *out)
{
    la_status s;
    const la_semantic_params p = *pp;
    embed_run run = *runp;
    la_semantic_nearest nn = *nnp;
    const la_semantic_stats st = *stp;
    const size_t dim = run.dim;
    const char *kind = run.kind;
    out->seconds = st.seconds;
    out->lexical_embedding = run.lexical;
    snprintf(out->model_name, sizeof out->model_name, "%s", run.model ? run.model_name : o->vectors_model);
    out->backend = st.backend ? st.backend : "cpu";
    snprintf(out->fallback, sizeof out->fallback, "%s", st.fallback);

    la_window_pair *wp = malloc((nhits + 1) * sizeof *wp);
    for (size_t k = 0; wp && k < nhits; k++)
        wp[k] = (la_window_pair){hits[k].a, hits[k].b, run.begin[hits[k].wa], run.end[hits[k].wa],
                                 run.begin[hits[k].wb], run.end[hits[k].wb], hits[k].cosine};
    int brought_in = o->nemb || o->embedding_field;
    const char *margin_source;
    la_semantic_margin_for(o, &margin_source);
    const char *own_source;
    model_threshold(o, &own_source);
    la_semantic_report r = {
        .kind = kind,
        .why = run.why,
        .model = run.model,
        /* without the encoder, the model that made the vectors brought in (vec_origin.h) or "": the
         * report prints it under `model` only when the encoder ran, and a merge grades by it */
        .model_name = run.model ? run.model_name : o->vectors_model,
        .model_hash = run.model_hash,
        .encoder_backend = run.encoder_backend,
        .encoder_fallback = run.encoder_fallback,
        .model_window = run.model_window,
        .window_tokens = run.win,
        .texts_windowed = windowed,
        .no_windows = o->no_windows,
        .cache_file = run.cached ? run.cache_file : NULL,
        .cache_note = run.cache_note,
        .cache_hits = run.cache_hits,
        .cache_misses = run.cache_misses,
        .brought_in = brought_in,
        .dim = dim,
        .threshold = p.threshold,
        .margin = p.margin,
        .margin_k = p.margin_k,
        .margin_lowest = p.threshold - LA_SEMANTIC_MARGIN_BELOW,
        .margin_source = margin_source,
        .margin_candidates = st.margin_candidates,
        .margin_links = st.margin_links,
        .threshold_source = !isnan(o->threshold) ? "--semantic-threshold"
                            : own_source ? own_source
                            : run.model ? "default for model embeddings (0.82, calibrated with all-MiniLM-L6-v2 on "
                                          "GSM8K rephrases: docs/semantic.md)"
                            : brought_in ? "default for model embeddings brought in (0.82, calibrated "
                                           "with all-MiniLM-L6-v2: docs/semantic.md)"
                                         : "default for the lexical embedding (0.50: docs/semantic.md)",
        .window_pairs = wp,
        .nwindow_pairs = nhits,
        .backend = out->backend,
        .method = st.method,
        .pairs = npairs,
        .heldout_rows = st.n_heldout,
        .seen_rows = st.n_seen,
        .nnearest = nn.n,
        .k = nn.k,
        .nearest_row = nn.row,
        .nearest_seen = nn.seen,
        .nearest_cosine = nn.cosine,
    };
    la_backend_stages(o->exec, "semantic_", r.stages, &r.nstages);
    s = wp ? LA_OK : la_error(LA_ENOMEM, "out of memory");
    if (s == LA_OK && o->partial) s = la_partial_keep_semantic(o->partial, &r, windowed_held, run.lexical, out->fallback);
    if (s == LA_OK) s = la_report_semantic(t, &r, &out->json, &out->md, &out->html, &out->extra);
    free(wp);
    free(hits);
    embed_run_free(&run);
    la_semantic_nearest_free(&nn);
    return s;
}
