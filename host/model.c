/*
 * model.c - loading a sentence-transformers model folder and embedding texts with the built-in
 * encoder (see model.h). Weights are converted to float32 once at load (the attention projections
 * fused); texts are tokenized on OpenMP threads, sorted by length and encoded in packed batches.
 */
#include "model.h"
#include "language.h"
#include "la_cpus.h"

#include "e5s1.h"
#include "encoder_cuda.h"
#include "la_alloc.h"
#include "safetensors.h"
#include "tokenizer_unigram.h"
#include "tokenizer_wordpiece.h"

#include <errno.h>
#include <json-c/json.h>
#include <limits.h>
#include <math.h>
#include "la_blake2b.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#ifdef LA_HAVE_OPENMP
#include <omp.h>
#endif

#ifndef LA_MODELS_DIR
#define LA_MODELS_DIR "models"
#endif

/* Tokens per encoder batch: large enough for efficient GEMMs, small enough to stay in cache-ish
 * memory (activations are about 8 KB per token for MiniLM). */
#define LA_MODEL_BATCH_TOKENS 4096
#define LA_MODEL_BATCH_SEQS 128

struct la_model {
    char name[256];
    char dir[PATH_MAX];
    char hash[80];
    size_t weights_bytes;
    la_encoder_weights w;
    la_encoder_layer *layers;
    float **owned;
    size_t nowned;
    la_wordpiece *wp;
    la_unigram *uni;    /* the tokenizer instead of wp (an E5S1 model file) */
    la_safetensors *st; /* kept mapped: F32 weights are used in place */
    la_e5s1 *e5;        /* kept mapped: its word embeddings are dequantized row by row when first used */
    float *tok_rows;    /* [vocab, H] for e5: rows filled on first use (untouched pages cost nothing) */
    unsigned char *row_ready;
    int32_t cls, sep;
    int32_t prefix[16]; /* token ids every sequence starts with after [CLS] (e5's "query: ") */
    size_t nprefix;
    char prompt[32];
    size_t max_seq;
    size_t batch_seqs;
    int gpu;             /* asked for */
    void (*progress_begin)(void *ctx, size_t total);
    void (*progress_add)(void *ctx, size_t n);
    void *progress_ctx;
    int ran_gpu;         /* the last embedding ran on the GPU */
    char fallback[512];
};

/* One sequence to encode: its ids (framed), and where its vector goes. */
typedef struct seq {
    int32_t *ids;
    uint32_t n;
    size_t dst;
} seq;

void la_model_set_gpu(la_model *m, int gpu) { m->gpu = gpu; }

void la_model_set_progress(la_model *m, void (*begin)(void *ctx, size_t total), void (*add)(void *ctx, size_t n),
                           void *ctx)
{
    m->progress_begin = begin;
    m->progress_add = add;
    m->progress_ctx = ctx;
}

/* Tokens of q[0..k). */
static size_t seq_tokens(const seq *q, size_t k)
{
    size_t t = 0;
    for (size_t i = 0; i < k; i++) t += q[i].n;
    return t;
}
const char *la_model_backend(const la_model *m, const char **fallback)
{
    *fallback = m->fallback;
    return m->ran_gpu ? "gpu" : "cpu";
}

void la_model_set_batch(la_model *m, size_t seqs) { m->batch_seqs = seqs ? seqs : LA_MODEL_BATCH_SEQS; }

const char *la_model_root(void)
{
    const char *e = getenv("LEAKAUDIT_MODELS");
    return e && *e ? e : LA_MODELS_DIR;
}

static int is_dir(const char *p)
{
    struct stat sb;
    return stat(p, &sb) == 0 && S_ISDIR(sb.st_mode);
}

static int is_file(const char *p)
{
    struct stat sb;
    return stat(p, &sb) == 0 && S_ISREG(sb.st_mode);
}

int la_model_is_dir(const char *dir)
{
    char probe[PATH_MAX + 32];
    snprintf(probe, sizeof probe, "%s/config.json", dir);
    if (is_file(probe)) return 1;
    snprintf(probe, sizeof probe, "%s/" LA_E5S1_FILE, dir);
    return is_file(probe);
}

la_status la_model_resolve(const char *name, char *dir, size_t cap)
{
    if (strchr(name, '/') || is_dir(name)) {
        if (!is_dir(name)) return la_error(LA_EINPUT, "--model %s: no such folder", name);
        if (!la_model_is_dir(name))
            return la_error(LA_EINPUT, "--model %s: not a model folder (no config.json or " LA_E5S1_FILE " in it)",
                            name);
        snprintf(dir, cap, "%s", name);
        return LA_OK;
    }
    snprintf(dir, cap, "%s/%s", la_model_root(), name);
    if (!la_model_is_dir(dir))
        return la_error(LA_EINPUT, "model '%s' is not installed in %s (run scripts/install-deps.sh, which installs %s, "
                        "or give --model DIR with a sentence-transformers folder)", name, la_model_root(),
                        !strcmp(name, LA_MODEL_MULTILINGUAL) ? LA_MODEL_MULTILINGUAL : LA_MODEL_DEFAULT);
    return LA_OK;
}

/* Calibrated similarity thresholds of the models scripts/install-deps.sh installs, by folder name:
 * a model's cosines sit in a range of their own (multilingual-e5's unrelated texts score 0.7 to
 * 0.85), so one threshold cannot serve every model. */
static const struct {
    const char *name;
    double threshold;
    const char *source;
    double margin;
    const char *margin_source;
    double copy_cosine, digits_cosine;
    const char *grades_source;
} calibrated[] = {
    {LA_MODEL_MULTILINGUAL, LA_MODEL_MULTILINGUAL_THRESHOLD,
     "default for multilingual-e5-small (" LA_STR(LA_MODEL_MULTILINGUAL_THRESHOLD) ", calibrated on Debian message "
     "catalogue translations, STS-B and GSM8K rephrases: docs/semantic.md)",
     LA_MODEL_MULTILINGUAL_MARGIN,
     "default for multilingual-e5-small (" LA_STR(LA_MODEL_MULTILINGUAL_MARGIN) ", calibrated on Debian package "
     "description translations and GSM8K rephrases: docs/semantic.md)",
     LA_MODEL_MULTILINGUAL_COPY_COSINE, LA_MODEL_MULTILINGUAL_DIGITS_COSINE,
     "default for multilingual-e5-small (copy " LA_STR(LA_MODEL_MULTILINGUAL_COPY_COSINE) ", digits "
     LA_STR(LA_MODEL_MULTILINGUAL_DIGITS_COSINE) ", calibrated on GSM8K rephrases against train questions, planted "
     "edited copies and Debian package description translations: docs/grades.md)"},
};

/* The calibrated entry of a model, by its folder name (a path's last part), or -1. */
static int calibrated_entry(const char *name_or_dir)
{
    size_t n = strlen(name_or_dir);
    while (n > 1 && name_or_dir[n - 1] == '/') n--;
    const char *b = name_or_dir + n;
    while (b > name_or_dir && b[-1] != '/') b--;
    size_t len = (size_t)(name_or_dir + n - b);
    for (size_t i = 0; i < sizeof calibrated / sizeof *calibrated; i++)
        if (strlen(calibrated[i].name) == len && !strncmp(b, calibrated[i].name, len)) return (int)i;
    return -1;
}

double la_model_margin(const char *name_or_dir, const char **source)
{
    int i = calibrated_entry(name_or_dir);
    *source = i < 0 ? NULL : calibrated[i].margin_source;
    return i < 0 ? 0 : calibrated[i].margin;
}

int la_model_grade_cosines(const char *name_or_dir, double *copy, double *digits, const char **source)
{
    int i = calibrated_entry(name_or_dir);
    if (i < 0) return 0;
    *copy = calibrated[i].copy_cosine;
    *digits = calibrated[i].digits_cosine;
    *source = calibrated[i].grades_source;
    return 1;
}

double la_model_threshold(const char *name_or_dir, const char **source)
{
    int i = calibrated_entry(name_or_dir);
    *source = i < 0 ? NULL : calibrated[i].source;
    return i < 0 ? NAN : calibrated[i].threshold;
}

int la_model_default_installed(char *dir, size_t cap)
{
    char probe[PATH_MAX + 64];
    snprintf(probe, sizeof probe, "%s/%s/model.safetensors", la_model_root(), LA_MODEL_DEFAULT);
    if (!is_file(probe)) return 0;
    snprintf(dir, cap, "%s/%s", la_model_root(), LA_MODEL_DEFAULT);
    return 1;
}

const char *la_model_default_for(const char *const *texts, const size_t *lens, size_t n, la_text_label_fn label,
                                 void *ctx, char *why, size_t cap)
{
    size_t other = 0, first = 0;
    la_lang_verdict v = LA_LANG_ENGLISH, vi;
    for (size_t i = 0; i < n; i++)
        if ((vi = la_text_language(texts[i], lens[i])) != LA_LANG_ENGLISH && !other++) first = i, v = vi;
    if (!other) {
        snprintf(why, cap, "every text reads as English");
        return LA_MODEL_DEFAULT;
    }
    char where[160], dir[PATH_MAX];
    if (label) label(ctx, first, where, sizeof where);
    else snprintf(where, sizeof where, "text %zu", first + 1);
    snprintf(dir, sizeof dir, "%s/%s", la_model_root(), LA_MODEL_MULTILINGUAL);
    int multi = la_model_is_dir(dir);
    snprintf(why, cap, "%zu of %zu texts are not English (the first: %s, %s)%s", other, n, where,
             la_lang_verdict_name(v), multi ? "" : ", but " LA_MODEL_MULTILINGUAL " is not installed");
    return multi ? LA_MODEL_MULTILINGUAL : LA_MODEL_DEFAULT;
}

void la_model_free(la_model *m)
{
    if (!m) return;
    for (size_t i = 0; i < m->nowned; i++) free(m->owned[i]);
    free(m->owned);
    free(m->layers);
    la_wordpiece_free(m->wp);
    la_unigram_free(m->uni);
    la_safetensors_free(m->st);
    la_e5s1_free(m->e5);
    free(m->tok_rows);
    free(m->row_ready);
    free(m);
}

const char *la_model_name(const la_model *m) { return m->name; }
const char *la_model_dir(const la_model *m) { return m->dir; }
const char *la_model_weights_hash(const la_model *m) { return m->hash; }
size_t la_model_weights_bytes(const la_model *m) { return m->weights_bytes; }
size_t la_model_dim(const la_model *m) { return m->w.c.hidden; }
size_t la_model_window(const la_model *m) { return m->max_seq - 2 - m->nprefix; }
const char *la_model_prompt(const la_model *m) { return m->prompt; }
const la_encoder_weights *la_model_weights(const la_model *m) { return &m->w; }

/* ---- config files ---- */

static la_status read_json(const char *path, int optional, json_object **out)
{
    *out = NULL;
    if (!is_file(path)) return optional ? LA_OK : la_error(LA_EINPUT, "%s: missing", path);
    json_object *o = json_object_from_file(path);
    if (!o || !json_object_is_type(o, json_type_object)) {
        json_object_put(o);
        return la_error(LA_EINPUT, "%s: not a JSON object (%s)", path, json_util_get_last_err());
    }
    *out = o;
    return LA_OK;
}

/* A positive integer field; when absent, def (0: required). */
static la_status get_uint(json_object *o, const char *path, const char *field, uint32_t def, uint32_t *v)
{
    json_object *x;
    if (!o || !json_object_object_get_ex(o, field, &x)) {
        if (!def) return la_error(LA_EINPUT, "%s: field '%s' is missing", path, field);
        *v = def;
        return LA_OK;
    }
    if (!json_object_is_type(x, json_type_int) || json_object_get_int64(x) <= 0 ||
        json_object_get_int64(x) > (1 << 24))
        return la_error(LA_EINPUT, "%s: field '%s': expected a positive integer", path, field);
    *v = (uint32_t)json_object_get_int64(x);
    return LA_OK;
}

static const char *get_str(json_object *o, const char *field)
{
    json_object *x;
    if (!o || !json_object_object_get_ex(o, field, &x) || !json_object_is_type(x, json_type_string)) return NULL;
    return json_object_get_string(x);
}

/* 1/0 for a boolean field, def when absent or null. */
static int get_bool(json_object *o, const char *field, int def)
{
    json_object *x;
    if (!o || !json_object_object_get_ex(o, field, &x) || !x) return def;
    return json_object_get_boolean(x);
}

static la_status load_config(la_model *m, const char *dir)
{
    char path[PATH_MAX + 64];
    json_object *cfg = NULL;
    snprintf(path, sizeof path, "%s/config.json", dir);
    LA_TRY(read_json(path, 0, &cfg));
    la_encoder_config *c = &m->w.c;
    la_status s = LA_OK;
    const char *type = get_str(cfg, "model_type");
    if (!type) s = la_error(LA_EINPUT, "%s: field 'model_type' is missing", path);
    else if (strcmp(type, "bert"))
        s = la_error(LA_EINPUT, "%s: field 'model_type' is '%s': only BERT-family encoders ('bert') are supported",
                     path, type);
    if (s == LA_OK) s = get_uint(cfg, path, "hidden_size", 0, &c->hidden);
    if (s == LA_OK) s = get_uint(cfg, path, "num_attention_heads", 0, &c->heads);
    if (s == LA_OK) s = get_uint(cfg, path, "num_hidden_layers", 0, &c->layers);
    if (s == LA_OK) s = get_uint(cfg, path, "intermediate_size", 0, &c->intermediate);
    if (s == LA_OK) s = get_uint(cfg, path, "vocab_size", 0, &c->vocab);
    if (s == LA_OK) s = get_uint(cfg, path, "max_position_embeddings", 512, &c->max_pos);
    if (s == LA_OK) s = get_uint(cfg, path, "type_vocab_size", 2, &c->type_vocab);
    if (s == LA_OK && c->hidden % c->heads)
        s = la_error(LA_EINPUT, "%s: field 'hidden_size' (%u) is not a multiple of 'num_attention_heads' (%u)", path,
                     c->hidden, c->heads);
    if (s == LA_OK) {
        json_object *x;
        c->ln_eps = 1e-12f;
        if (json_object_object_get_ex(cfg, "layer_norm_eps", &x)) c->ln_eps = (float)json_object_get_double(x);
        if (!(c->ln_eps > 0)) s = la_error(LA_EINPUT, "%s: field 'layer_norm_eps': expected a positive number", path);
        const char *act = get_str(cfg, "hidden_act");
        if (act && !strcmp(act, "gelu")) c->gelu_tanh = 0;
        else if (act && (!strcmp(act, "gelu_new") || !strcmp(act, "gelu_pytorch_tanh"))) c->gelu_tanh = 1;
        else if (s == LA_OK)
            s = la_error(LA_EINPUT, "%s: field 'hidden_act' is '%s': gelu, gelu_new or gelu_pytorch_tanh expected",
                         path, act ? act : "(missing)");
        const char *pe = get_str(cfg, "position_embedding_type");
        if (s == LA_OK && pe && strcmp(pe, "absolute"))
            s = la_error(LA_EINPUT, "%s: field 'position_embedding_type' is '%s': only 'absolute' is supported", path, pe);
    }
    json_object_put(cfg);
    if (s != LA_OK) return s;

    /* sentence-transformers: the window and the pooling */
    json_object *sb = NULL, *pool = NULL, *tc = NULL;
    uint32_t max_seq = 0;
    snprintf(path, sizeof path, "%s/sentence_bert_config.json", dir);
    s = read_json(path, 1, &sb);
    if (s == LA_OK) s = get_uint(sb, path, "max_seq_length", c->max_pos, &max_seq);
    m->max_seq = max_seq > c->max_pos ? c->max_pos : max_seq;
    if (s == LA_OK && m->max_seq < 3) s = la_error(LA_EINPUT, "%s: field 'max_seq_length' is below 3", path);
    if (s == LA_OK) {
        snprintf(path, sizeof path, "%s/1_Pooling/config.json", dir);
        s = read_json(path, 1, &pool);
        if (s == LA_OK && pool && !get_bool(pool, "pooling_mode_mean_tokens", 0))
            s = la_error(LA_EINPUT, "%s: field 'pooling_mode_mean_tokens' is not true: only mean pooling is supported",
                         path);
    }
    int lower = 1, strip = -1;
    if (s == LA_OK) {
        snprintf(path, sizeof path, "%s/tokenizer_config.json", dir);
        s = read_json(path, 1, &tc);
        lower = get_bool(tc, "do_lower_case", 1);
        strip = get_bool(tc, "strip_accents", -1);
    }
    json_object_put(sb);
    json_object_put(pool);
    json_object_put(tc);
    if (s != LA_OK) return s;
    snprintf(path, sizeof path, "%s/vocab.txt", dir);
    if (!is_file(path))
        return la_error(LA_EINPUT, "%s: missing (a WordPiece model needs its vocabulary)", path);
    LA_TRY(la_wordpiece_new(path, lower, strip, &m->wp));
    if (la_wordpiece_size(m->wp) > c->vocab)
        return la_error(LA_EINPUT, "%s: %zu tokens, more than config.json's vocab_size %u", path,
                        la_wordpiece_size(m->wp), c->vocab);
    m->cls = la_wordpiece_id(m->wp, "[CLS]");
    m->sep = la_wordpiece_id(m->wp, "[SEP]");
    return LA_OK;
}

/* ---- weights ---- */

/* The fingerprint of the weights file as stored. */
static void fingerprint(la_model *m, const unsigned char *bytes, size_t total)
{
    unsigned char h[32];
    la_blake2b(h, sizeof h, bytes, total, NULL, 0);
    int k = snprintf(m->hash, sizeof m->hash, "blake2b-256:");
    for (int i = 0; i < 32; i++) k += snprintf(m->hash + k, sizeof m->hash - (size_t)k, "%02x", h[i]);
    m->weights_bytes = total;
}

static la_status own(la_model *m, float *p)
{
    float **q = realloc(m->owned, (m->nowned + 1) * sizeof *q);
    if (!q) {
        free(p);
        return la_error(LA_ENOMEM, "out of memory");
    }
    m->owned = q;
    m->owned[m->nowned++] = p;
    return LA_OK;
}

static la_status tensor(la_model *m, const la_safetensors *st, const char *prefix, const char *name, int64_t d0,
                        int64_t d1, const float **out)
{
    char full[256];
    snprintf(full, sizeof full, "%s%s", prefix, name);
    int64_t shape[2] = {d0, d1};
    float *owned;
    LA_TRY(la_safetensors_view_f32(st, full, d1 ? 2 : 1, shape, out, &owned));
    if (owned) LA_TRY(own(m, owned));
    return LA_OK;
}

static la_status load_weights(la_model *m, const char *dir)
{
    char path[PATH_MAX + 64];
    snprintf(path, sizeof path, "%s/model.safetensors", dir);
    if (!is_file(path))
        return la_error(LA_EINPUT, "%s: missing (weights must be in safetensors format)", path);
    la_safetensors *st;
    LA_TRY(la_safetensors_open(path, &st));
    const la_encoder_config *c = &m->w.c;
    int64_t H = c->hidden, I = c->intermediate;
    const char *pre = la_safetensors_find(st, "embeddings.word_embeddings.weight") ? "" : "bert.";
    la_status s = LA_OK;
    if (!la_safetensors_find(st, "bert.embeddings.word_embeddings.weight") && *pre)
        s = la_error(LA_EINPUT, "%s: tensor 'embeddings.word_embeddings.weight' is missing (not a BERT checkpoint)",
                     path);
    const float *type_all = NULL;
    if (s == LA_OK) s = tensor(m, st, pre, "embeddings.word_embeddings.weight", c->vocab, H, &m->w.tok);
    if (s == LA_OK) s = tensor(m, st, pre, "embeddings.position_embeddings.weight", c->max_pos, H, &m->w.pos);
    if (s == LA_OK && la_safetensors_find(st, "embeddings.token_type_embeddings.weight"))
        s = tensor(m, st, pre, "embeddings.token_type_embeddings.weight", c->type_vocab, H, &type_all);
    m->w.type = type_all; /* row 0: every token is of type 0 */
    if (s == LA_OK) s = tensor(m, st, pre, "embeddings.LayerNorm.weight", H, 0, &m->w.emb_ln_g);
    if (s == LA_OK) s = tensor(m, st, pre, "embeddings.LayerNorm.bias", H, 0, &m->w.emb_ln_b);
    m->layers = calloc(c->layers, sizeof *m->layers);
    if (!m->layers && s == LA_OK) s = la_error(LA_ENOMEM, "out of memory");
    for (uint32_t l = 0; l < c->layers && s == LA_OK; l++) {
        la_encoder_layer *L = &m->layers[l];
        char lp[64];
        snprintf(lp, sizeof lp, "%sencoder.layer.%u.", pre, l);
        const float *q, *k, *v, *qb, *kb, *vb;
        s = tensor(m, st, lp, "attention.self.query.weight", H, H, &q);
        if (s == LA_OK) s = tensor(m, st, lp, "attention.self.key.weight", H, H, &k);
        if (s == LA_OK) s = tensor(m, st, lp, "attention.self.value.weight", H, H, &v);
        if (s == LA_OK) s = tensor(m, st, lp, "attention.self.query.bias", H, 0, &qb);
        if (s == LA_OK) s = tensor(m, st, lp, "attention.self.key.bias", H, 0, &kb);
        if (s == LA_OK) s = tensor(m, st, lp, "attention.self.value.bias", H, 0, &vb);
        if (s != LA_OK) break;
        float *w3 = malloc((size_t)(3 * H * H + 3 * H) * sizeof *w3);
        if (!w3 || (s = own(m, w3)) != LA_OK) {
            s = la_error(LA_ENOMEM, "out of memory");
            break;
        }
        memcpy(w3, q, (size_t)(H * H) * sizeof *w3);
        memcpy(w3 + H * H, k, (size_t)(H * H) * sizeof *w3);
        memcpy(w3 + 2 * H * H, v, (size_t)(H * H) * sizeof *w3);
        float *b3 = w3 + 3 * H * H;
        memcpy(b3, qb, (size_t)H * sizeof *b3);
        memcpy(b3 + H, kb, (size_t)H * sizeof *b3);
        memcpy(b3 + 2 * H, vb, (size_t)H * sizeof *b3);
        L->qkv_w = w3;
        L->qkv_b = b3;
        s = tensor(m, st, lp, "attention.output.dense.weight", H, H, &L->out_w);
        if (s == LA_OK) s = tensor(m, st, lp, "attention.output.dense.bias", H, 0, &L->out_b);
        if (s == LA_OK) s = tensor(m, st, lp, "attention.output.LayerNorm.weight", H, 0, &L->ln1_g);
        if (s == LA_OK) s = tensor(m, st, lp, "attention.output.LayerNorm.bias", H, 0, &L->ln1_b);
        if (s == LA_OK) s = tensor(m, st, lp, "intermediate.dense.weight", I, H, &L->ffn1_w);
        if (s == LA_OK) s = tensor(m, st, lp, "intermediate.dense.bias", I, 0, &L->ffn1_b);
        if (s == LA_OK) s = tensor(m, st, lp, "output.dense.weight", H, I, &L->ffn2_w);
        if (s == LA_OK) s = tensor(m, st, lp, "output.dense.bias", H, 0, &L->ffn2_b);
        if (s == LA_OK) s = tensor(m, st, lp, "output.LayerNorm.weight", H, 0, &L->ln2_g);
        if (s == LA_OK) s = tensor(m, st, lp, "output.LayerNorm.bias", H, 0, &L->ln2_b);
    }
    m->w.layer = m->layers;
    if (s == LA_OK) {
        size_t total;
        const unsigned char *bytes = la_safetensors_bytes(st, &total);
        fingerprint(m, bytes, total);
    }
    m->st = st; /* freed with the model, also on failure */
    return s;
}

/* ---- an E5S1 model file (host/e5s1.h): multilingual-e5-small, 4-bit ---- */

static const char *e5_piece(const void *ctx, size_t i, size_t *len, float *score)
{
    return la_e5s1_piece(ctx, (uint32_t)i, len, score);
}

/* The per-character normalization of the file as sorted arrays for the tokenizer. */
static la_status e5_tokenizer(la_model *m, const char *path)
{
    const la_e5s1 *e = m->e5;
    const la_e5s1_header *h = la_e5s1_head(e);
    size_t nn = la_e5s1_norm_count(e), nrep = 0;
    uint32_t *cp = la_malloc_n(nn, sizeof *cp), *off = la_malloc_n(nn + 1, sizeof *off);
    uint32_t *rep = la_malloc_nm(nn, 255, sizeof *rep);
    la_status s = cp && off && rep ? LA_OK : la_error(LA_ENOMEM, "out of memory");
    for (size_t i = 0; s == LA_OK && i < nn; i++) {
        size_t k;
        off[i] = (uint32_t)nrep;
        cp[i] = la_e5s1_norm_at(e, i, rep + nrep, &k);
        nrep += k;
        if (i && cp[i] <= cp[i - 1])
            s = la_error(LA_EINPUT, "%s: normalization entry %zu: code points are not ascending", path, i);
    }
    if (off) off[nn] = (uint32_t)nrep;
    /* special pieces are never matched in text: <s> <pad> </s> <unk> and the last one (<mask>) */
    int32_t skip[5] = {h->bos, h->pad, h->eos, h->unk, (int32_t)h->pieces - 1};
    la_unigram_pieces p = {h->pieces, e5_piece, e, h->unk, skip, 5, cp, off, rep, nn, nrep, 1};
    if (s == LA_OK) s = la_unigram_new_pieces(&p, &m->uni);
    free(cp);
    free(off);
    free(rep);
    if (s != LA_OK) return s;
    m->cls = h->bos;
    m->sep = h->eos;
    /* multilingual-e5 is trained with "query: " before texts compared with each other (and
     * "passage: " before documents retrieved for a query); an audit compares texts with texts */
    snprintf(m->prompt, sizeof m->prompt, "query: ");
    int32_t *ids = NULL;
    size_t nids = 0, cap = 0;
    LA_TRY(la_unigram_encode(m->uni, "query:", 6, &ids, &nids, &cap));
    if (nids > sizeof m->prefix / sizeof *m->prefix) nids = 0;
    memcpy(m->prefix, ids, nids * sizeof *ids);
    m->nprefix = nids;
    free(ids);
    return LA_OK;
}

static la_status load_e5s1(la_model *m, const char *path)
{
    LA_TRY(la_e5s1_open(path, &m->e5));
    const la_e5s1_header *h = la_e5s1_head(m->e5);
    la_encoder_config *c = &m->w.c;
    *c = (la_encoder_config){h->vocab, h->hidden, h->heads, h->layers, h->intermediate, h->positions, h->types,
                             h->ln_eps, 0};
    m->max_seq = h->positions;
    size_t H = h->hidden, I = h->intermediate;
    LA_TRY(e5_tokenizer(m, path));
    LA_TRY(la_e5s1_check_rows(m->e5, "emb.word", h->vocab, H));
    m->tok_rows = la_calloc_n((size_t)h->vocab, H * sizeof *m->tok_rows);
    m->row_ready = la_calloc_n(h->vocab, 1);
    if (!m->tok_rows || !m->row_ready) return la_error(LA_ENOMEM, "out of memory");
    m->w.tok = m->tok_rows;
    const la_e5s1 *e = m->e5;
    float *f;
#define E5_TENSOR(dst, name, n)                             \
    do {                                                    \
        LA_TRY(la_e5s1_read_f32(e, name, (n), &f));         \
        LA_TRY(own(m, f));                                  \
        (dst) = f;                                          \
    } while (0)
    E5_TENSOR(m->w.pos, "emb.pos", (size_t)h->positions * H);
    E5_TENSOR(m->w.type, "emb.type", (size_t)h->types * H);
    E5_TENSOR(m->w.emb_ln_g, "emb.ln.w", H);
    E5_TENSOR(m->w.emb_ln_b, "emb.ln.b", H);
    m->layers = la_calloc_n(h->layers, sizeof *m->layers);
    if (!m->layers) return la_error(LA_ENOMEM, "out of memory");
    m->w.layer = m->layers;
    for (uint32_t l = 0; l < h->layers; l++) {
        la_encoder_layer *L = &m->layers[l];
        char nm[32];
        float *w3 = la_malloc_n(3 * H * H + 3 * H, sizeof *w3);
        if (!w3) return la_error(LA_ENOMEM, "out of memory");
        LA_TRY(own(m, w3));
        static const char *qkv[3] = {"q", "k", "v"};
        for (int k = 0; k < 3; k++) { /* fused as encoder.h wants: query, key, value rows */
            snprintf(nm, sizeof nm, "l%u.%s.w", l, qkv[k]);
            LA_TRY(la_e5s1_read_f32(e, nm, H * H, &f));
            memcpy(w3 + (size_t)k * H * H, f, H * H * sizeof *f);
            free(f);
            snprintf(nm, sizeof nm, "l%u.%s.b", l, qkv[k]);
            LA_TRY(la_e5s1_read_f32(e, nm, H, &f));
            memcpy(w3 + 3 * H * H + (size_t)k * H, f, H * sizeof *f);
            free(f);
        }
        L->qkv_w = w3;
        L->qkv_b = w3 + 3 * H * H;
#define E5_LAYER(dst, suffix, n)                                  \
    do {                                                          \
        snprintf(nm, sizeof nm, "l%u." suffix, l);                \
        E5_TENSOR(dst, nm, (n));                                  \
    } while (0)
        E5_LAYER(L->out_w, "ao.w", H * H);
        E5_LAYER(L->out_b, "ao.b", H);
        E5_LAYER(L->ln1_g, "aln.w", H);
        E5_LAYER(L->ln1_b, "aln.b", H);
        E5_LAYER(L->ffn1_w, "fi.w", I * H);
        E5_LAYER(L->ffn1_b, "fi.b", I);
        E5_LAYER(L->ffn2_w, "fo.w", H * I);
        E5_LAYER(L->ffn2_b, "fo.b", H);
        E5_LAYER(L->ln2_g, "oln.w", H);
        E5_LAYER(L->ln2_b, "oln.b", H);
#undef E5_LAYER
    }
#undef E5_TENSOR
    size_t total;
    const unsigned char *bytes = la_e5s1_bytes(m->e5, &total);
    fingerprint(m, bytes, total);
    return LA_OK;
}

/* Dequantize the word-embedding rows the sequences use that are not there yet (all of them when
 * the encoder runs on the GPU, which copies the whole table). */
static void e5_rows(la_model *m, const seq *q, size_t nq, int all)
{
    size_t H = m->w.c.hidden, V = m->w.c.vocab;
    if (all) {
        for (size_t r = 0; r < V; r++)
            if (!m->row_ready[r]) la_e5s1_rows(m->e5, "emb.word", H, r, r + 1, m->tok_rows + r * H), m->row_ready[r] = 1;
        return;
    }
    for (size_t i = 0; i < nq; i++)
        for (uint32_t t = 0; t < q[i].n; t++) {
            size_t r = (size_t)q[i].ids[t];
            if (r < V && !m->row_ready[r]) {
                la_e5s1_rows(m->e5, "emb.word", H, r, r + 1, m->tok_rows + r * H);
                m->row_ready[r] = 1;
            }
        }
}

la_status la_model_open(const char *dir, la_model **out)
{
    *out = NULL;
    la_model *m = calloc(1, sizeof *m);
    if (!m) return la_error(LA_ENOMEM, "out of memory");
    snprintf(m->dir, sizeof m->dir, "%s", dir);
    m->batch_seqs = LA_MODEL_BATCH_SEQS;
    size_t n = strlen(dir);
    while (n > 1 && dir[n - 1] == '/') n--;
    const char *b = dir + n;
    while (b > dir && b[-1] != '/') b--;
    snprintf(m->name, sizeof m->name, "%.*s", (int)(dir + n - b), b);
    char st[PATH_MAX + 32], e5[PATH_MAX + 32];
    snprintf(st, sizeof st, "%s/model.safetensors", dir);
    snprintf(e5, sizeof e5, "%s/" LA_E5S1_FILE, dir);
    la_status s;
    if (!is_file(st) && is_file(e5)) {
        s = load_e5s1(m, e5);
    } else {
        s = load_config(m, dir);
        if (s == LA_OK) s = load_weights(m, dir);
    }
    if (s == LA_OK) s = la_encoder_check(&m->w.c, NULL);
    if (s != LA_OK) {
        la_model_free(m);
        return s;
    }
    *out = m;
    return LA_OK;
}

la_status la_model_tokenize(const la_model *m, const char *text, size_t n, int32_t **ids, size_t *nids, size_t *cap)
{
    return m->uni ? la_unigram_encode(m->uni, text, n, ids, nids, cap) : la_wordpiece_encode(m->wp, text, n, ids, nids, cap);
}

/* ---- embedding ---- */


/* Batches are made from the sequences sorted by length and then by content, never by their place
 * in the input: the same texts in another order meet the same batches, so every vector comes out
 * with the same bits (the determinism the reports promise). */
static int cmp_seq_len(const void *a, const void *b)
{
    const seq *x = a, *y = b;
    if (x->n != y->n) return x->n < y->n ? -1 : 1;
    int c = memcmp(x->ids, y->ids, x->n * sizeof *x->ids);
    return c ? c : (x->dst > y->dst) - (x->dst < y->dst);
}

static int nthreads(int threads)
{
#ifdef LA_HAVE_OPENMP
    return la_omp_threads(threads);
#else
    return threads > 0 ? threads : 1;
#endif
}

/* Encode one batch, q[0..k), with its own scratch; vectors to out + dst * dim. */
static la_status encode_batch(const la_model *m, const seq *q, size_t k, la_encoder_ws *ws, int32_t *ids,
                              uint32_t *start, float *vec, float *out, int gpu)
{
    size_t H = m->w.c.hidden;
    uint32_t t = 0;
    start[0] = 0;
    for (size_t j = 0; j < k; j++) {
        memcpy(ids + t, q[j].ids, q[j].n * sizeof *ids);
        t += q[j].n;
        start[j + 1] = t;
    }
    la_encoder_batch b = {ids, start, k};
    LA_TRY(gpu ? la_cuda_encoder_forward(&m->w, &b, ws, vec) : la_cpu_encoder_forward(&m->w, &b, ws, vec));
    for (size_t j = 0; j < k; j++) memcpy(out + q[j].dst * H, vec + j * H, H * sizeof *out);
    return LA_OK;
}

/*
 * Encode the sequences, vectors to out + dst * dim. Batches are cut from the sorted sequences
 * (at most batch_seqs sequences and LA_MODEL_BATCH_TOKENS tokens). With many batches, each thread
 * encodes whole batches on its own (single-threaded GEMMs, no barrier between threads: this holds
 * up on a busy machine); with few, the batches go one by one with every thread inside each. The
 * vectors are the same bits either way: every op computes a row the same way in both.
 */
static la_status encode_seqs(const la_model *m, seq *q, size_t nq, int threads, float *out)
{
    qsort(q, nq, sizeof *q, cmp_seq_len);
    la_model *mm = (la_model *)m; /* the backend record and e5's rows are the only state an embedding changes */
    if (m->e5) e5_rows(mm, q, nq, m->gpu);
    mm->ran_gpu = 0;
    mm->fallback[0] = 0;
    if (m->progress_begin) m->progress_begin(m->progress_ctx, seq_tokens(q, nq));
    if (m->gpu && nq) {
        /* batches in order on the device; the first failure sends this and every later batch to
         * the CPU below (the vectors agree within fp16 GEMM rounding, cosine >= 0.999) */
        size_t bs = m->batch_seqs, H = m->w.c.hidden, i = 0;
        int32_t *ids = malloc((LA_MODEL_BATCH_TOKENS + m->max_seq) * sizeof *ids);
        uint32_t *start = malloc((bs + 1) * sizeof *start);
        float *vec = malloc(bs * H * sizeof *vec);
        la_status e = ids && start && vec ? LA_OK : la_error(LA_ENOMEM, "out of memory");
        while (e == LA_OK && i < nq) {
            size_t k = 0, t = 0;
            while (i + k < nq && k < bs && (k == 0 || t + q[i + k].n <= LA_MODEL_BATCH_TOKENS)) t += q[i + k++].n;
            e = encode_batch(m, q + i, k, NULL, ids, start, vec, out, 1);
            if (e == LA_OK && m->progress_add) m->progress_add(m->progress_ctx, t);
            if (e == LA_OK) i += k;
        }
        free(ids);
        free(start);
        free(vec);
        la_cuda_encoder_release();
        if (e == LA_OK) {
            mm->ran_gpu = 1;
            return LA_OK;
        }
        if (e == LA_ENOMEM) return e;
        snprintf(mm->fallback, sizeof mm->fallback, "the encoder fell back to the CPU: %s", la_last_error());
        if (m->progress_begin) m->progress_begin(m->progress_ctx, seq_tokens(q, nq)); /* again, on the CPU */
    }
    size_t bs = m->batch_seqs, nb = 0, *cut = malloc((nq + 1) * sizeof *cut);
    if (!cut) return la_error(LA_ENOMEM, "out of memory");
    for (size_t i = 0; i < nq;) {
        size_t k = 0, t = 0;
        while (i + k < nq && k < bs && (k == 0 || t + q[i + k].n <= LA_MODEL_BATCH_TOKENS)) t += q[i + k++].n;
        cut[nb++] = i;
        i += k;
    }
    cut[nb] = nq;
    int nt = nthreads(threads), failed = 0;
    la_status s = LA_OK;
    char why[512] = "";
    long lnb = (long)nb;
#pragma omp parallel num_threads(nb >= 2 * (size_t)nt ? nt : 1)
    {
        size_t H = m->w.c.hidden;
        la_encoder_ws ws = {0};
        int32_t *ids = malloc((LA_MODEL_BATCH_TOKENS + m->max_seq) * sizeof *ids);
        uint32_t *start = malloc((bs + 1) * sizeof *start);
        float *vec = malloc(bs * H * sizeof *vec);
        if (!ids || !start || !vec) {
#pragma omp atomic write
            failed = 1;
        }
#ifdef LA_HAVE_OPENMP
        int outer = omp_get_num_threads() > 1, saved = omp_get_max_threads();
        if (!outer) omp_set_num_threads(nt); /* one at a time: the ops use every thread */
#endif
#pragma omp for schedule(dynamic, 1)
        for (long k = 0; k < lnb; k++) {
            int stop;
#pragma omp atomic read
            stop = failed;
            if (stop) continue;
            la_status e = encode_batch(m, q + cut[k], cut[k + 1] - cut[k], &ws, ids, start, vec, out, 0);
            if (e == LA_OK && m->progress_add) m->progress_add(m->progress_ctx, seq_tokens(q + cut[k], cut[k + 1] - cut[k]));
            if (e != LA_OK) {
#pragma omp critical(la_model_error)
                if (!failed) {
                    s = e;
                    snprintf(why, sizeof why, "%s", la_last_error());
                }
#pragma omp atomic write
                failed = 1;
            }
        }
#ifdef LA_HAVE_OPENMP
        if (!outer) omp_set_num_threads(saved);
#endif
        la_encoder_ws_free(&ws);
        free(ids);
        free(start);
        free(vec);
    }
    free(cut);
    if (failed) return la_error(s != LA_OK ? s : LA_ENOMEM, "%s", why[0] ? why : "out of memory encoding texts");
    return LA_OK;
}


/* [CLS] prefix ids[0..n) [SEP] into a new array. */
static int32_t *frame(const la_model *m, const int32_t *ids, size_t n)
{
    int32_t *f = la_malloc_n(n + 2 + m->nprefix, sizeof *f);
    if (!f) return NULL;
    f[0] = m->cls;
    memcpy(f + 1, m->prefix, m->nprefix * sizeof *f);
    if (n) memcpy(f + 1 + m->nprefix, ids, n * sizeof *f);
    f[n + 1 + m->nprefix] = m->sep;
    return f;
}

la_status la_model_embed(const la_model *m, const char *const *texts, const size_t *lens, size_t n, int threads,
                         float *out)
{
    seq *q = calloc(n + 1, sizeof *q);
    if (!q) return la_error(LA_ENOMEM, "out of memory");
    size_t win = la_model_window(m);
    la_status s = LA_OK;
    long ln = (long)n;
#pragma omp parallel for schedule(dynamic, 16) num_threads(nthreads(threads))
    for (long i = 0; i < ln; i++) {
        int32_t *ids = NULL;
        size_t nids = 0, cap = 0;
        la_status e = texts[i] ? la_model_tokenize(m, texts[i], lens[i], &ids, &nids, &cap) : LA_OK;
        if (nids > win) nids = win;
        q[i].ids = e == LA_OK ? frame(m, ids, nids) : NULL;
        q[i].n = (uint32_t)(nids + 2 + m->nprefix);
        q[i].dst = (size_t)i;
        free(ids);
        if (!q[i].ids) {
#pragma omp atomic write
            s = LA_ENOMEM;
        }
    }
    if (s != LA_OK) s = la_error(LA_ENOMEM, "out of memory tokenizing %zu texts", n);
    if (s == LA_OK) s = encode_seqs(m, q, n, threads, out);
    for (size_t i = 0; i < n; i++) free(q[i].ids);
    free(q);
    return s;
}

/* ---- windows ---- */

/* Byte ends of the sentences of text[0..n): a sentence ends after . ! ? (or the CJK full stop,
 * exclamation and question marks) followed by whitespace, and at every line break. */
static size_t sentence_ends(const char *t, size_t n, uint32_t **ends)
{
    size_t k = 0, cap = 16;
    uint32_t *e = malloc(cap * sizeof *e);
    if (!e) return 0;
    for (size_t i = 0; i < n; i++) {
        size_t after = 0;
        unsigned char c = (unsigned char)t[i];
        if (c == '\n') after = i + 1;
        else if ((c == '.' || c == '!' || c == '?') && i + 1 < n && (t[i + 1] == ' ' || t[i + 1] == '\t'))
            after = i + 1;
        else if (c == 0xe3 && i + 2 < n && (unsigned char)t[i + 1] == 0x80 && (unsigned char)t[i + 2] == 0x82)
            after = i + 3; /* 。 */
        else if (c == 0xef && i + 2 < n && (unsigned char)t[i + 1] == 0xbc &&
                 ((unsigned char)t[i + 2] == 0x81 || (unsigned char)t[i + 2] == 0x9f))
            after = i + 3; /* ！ ？ */
        if (!after) continue;
        while (after < n && (t[after] == ' ' || t[after] == '\t' || t[after] == '\n' || t[after] == '\r')) after++;
        if (k + 2 > cap) {
            uint32_t *p = realloc(e, (cap *= 2) * sizeof *e);
            if (!p) {
                free(e);
                return 0;
            }
            e = p;
        }
        if (after < n) e[k++] = (uint32_t)after;
        i = after - 1;
    }
    e[k++] = (uint32_t)n;
    *ends = e;
    return k;
}

typedef struct winlist {
    seq *q;
    uint32_t *item, *begin, *end;
    size_t n, cap;
} winlist;

static la_status win_push(winlist *w, const la_model *m, const int32_t *ids, size_t nids, uint32_t item,
                          uint32_t b, uint32_t e)
{
    if (w->n == w->cap) {
        size_t nc = w->cap ? 2 * w->cap : 64;
        seq *q = realloc(w->q, nc * sizeof *q);
        if (q) w->q = q;
        uint32_t *a = realloc(w->item, nc * sizeof *a);
        if (a) w->item = a;
        uint32_t *bb = realloc(w->begin, nc * sizeof *bb);
        if (bb) w->begin = bb;
        uint32_t *ee = realloc(w->end, nc * sizeof *ee);
        if (ee) w->end = ee;
        if (!q || !a || !bb || !ee) return la_error(LA_ENOMEM, "out of memory");
        w->cap = nc;
    }
    int32_t *f = frame(m, ids, nids);
    if (!f) return la_error(LA_ENOMEM, "out of memory");
    w->q[w->n] = (seq){f, (uint32_t)(nids + 2 + m->nprefix), w->n};
    w->item[w->n] = item;
    w->begin[w->n] = b;
    w->end[w->n] = e;
    w->n++;
    return LA_OK;
}

/* The windows of one text (see model.h). */
static la_status text_windows(const la_model *m, const char *t, size_t n, size_t win, uint32_t item, winlist *w)
{
    uint32_t *ends = NULL;
    size_t ns = n ? sentence_ends(t, n, &ends) : 0;
    if (n && !ns) return la_error(LA_ENOMEM, "out of memory");
    /* token ids of each sentence, one after another; tok_at[s] is where sentence s starts */
    int32_t *ids = NULL;
    size_t nids = 0, cap = 0;
    size_t *tok_at = malloc((ns + 1) * sizeof *tok_at);
    la_status s = tok_at ? LA_OK : la_error(LA_ENOMEM, "out of memory");
    for (size_t k = 0; k < ns && s == LA_OK; k++) {
        tok_at[k] = nids;
        uint32_t b = k ? ends[k - 1] : 0;
        s = la_model_tokenize(m, t + b, ends[k] - b, &ids, &nids, &cap);
    }
    if (tok_at) tok_at[ns] = nids;
    if (s == LA_OK && nids <= la_model_window(m)) {
        s = win_push(w, m, ids, nids, item, 0, (uint32_t)n);
    } else {
        for (size_t a = 0; a < ns && s == LA_OK;) {
            size_t z = a; /* sentences a..z-1 fit */
            while (z < ns && tok_at[z + 1] - tok_at[a] <= win) z++;
            uint32_t b = a ? ends[a - 1] : 0;
            if (z == a) { /* one sentence longer than the window: pieces overlapping by half */
                size_t len = tok_at[a + 1] - tok_at[a];
                for (size_t o = 0; s == LA_OK; o += win / 2) {
                    size_t take = len - o < win ? len - o : win;
                    s = win_push(w, m, ids + tok_at[a] + o, take, item, b, ends[a]);
                    if (o + take >= len) break;
                }
                a++;
                continue;
            }
            s = win_push(w, m, ids + tok_at[a], tok_at[z] - tok_at[a], item, b, ends[z - 1]);
            if (z >= ns) break;
            /* the next window starts at the first sentence past half of this one */
            size_t half = (tok_at[z] - tok_at[a]) / 2, next = a + 1;
            while (next < z && tok_at[next] - tok_at[a] < half) next++;
            a = next;
        }
    }
    free(ids);
    free(tok_at);
    free(ends);
    return s;
}

size_t la_model_count_tokens(const la_model *m, const char *text, size_t n)
{
    int32_t *ids = NULL;
    size_t nids = 0, cap = 0;
    if (la_model_tokenize(m, text, n, &ids, &nids, &cap) != LA_OK) nids = 0;
    free(ids);
    return nids;
}

la_status la_model_embed_windows(const la_model *m, const char *const *texts, const size_t *lens, size_t n,
                                 size_t win, int threads, float **vec, uint32_t **item, uint32_t **begin,
                                 uint32_t **end, size_t *nwin)
{
    if (!win || win > la_model_window(m)) win = la_model_window(m);
    *vec = NULL;
    *item = *begin = *end = NULL;
    *nwin = 0;
    winlist w = {0};
    la_status s = LA_OK;
    for (size_t i = 0; i < n && s == LA_OK; i++)
        s = text_windows(m, texts[i] ? texts[i] : "", texts[i] ? lens[i] : 0, win, (uint32_t)i, &w);
    float *v = NULL;
    if (s == LA_OK) {
        v = malloc((w.n * m->w.c.hidden + 1) * sizeof *v);
        s = v ? encode_seqs(m, w.q, w.n, threads, v) : la_error(LA_ENOMEM, "out of memory");
    }
    for (size_t i = 0; i < w.n; i++) free(w.q[i].ids);
    free(w.q);
    if (s != LA_OK) {
        free(v);
        free(w.item);
        free(w.begin);
        free(w.end);
        return s;
    }
    *vec = v;
    *item = w.item;
    *begin = w.begin;
    *end = w.end;
    *nwin = w.n;
    return LA_OK;
}
