/* tiny_model.h - a tiny random BERT model written as a sentence-transformers folder (config.json,
 * sentence_bert_config.json, 1_Pooling/config.json, vocab.txt, model.safetensors in F32, F16 or
 * BF16), and a naive reference forward pass in double precision over the same weights, for the
 * encoder tests. Header-only: included by test_encoder.c. */
#ifndef LA_TEST_TINY_MODEL_H
#define LA_TEST_TINY_MODEL_H

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define TM_H 32
#define TM_HEADS 4
#define TM_LAYERS 2
#define TM_I 64
#define TM_POS 64
#define TM_MAXSEQ 16

static const char *tm_vocab[] = {"[PAD]", "[UNK]", "[CLS]", "[SEP]", "the", "cat", "sat", "on", "mat", "a",
                                 "dog", "ran", "un", "##believ", "##able", "##s", ".", ",", "!", "?",
                                 "big", "red", "ball", "is", "here", "there", "and", "then", "it", "was"};
#define TM_VOCAB (sizeof tm_vocab / sizeof *tm_vocab)

typedef struct tm_tensor {
    char name[96];
    int ndim;
    int64_t shape[2];
    float *v; /* as stored, after rounding to the file's type */
} tm_tensor;

typedef struct tm_model {
    tm_tensor t[8 + TM_LAYERS * 16];
    size_t n;
} tm_model;

static uint64_t tm_rng = 0x9e3779b97f4a7c15ull;
static float tm_rand(void)
{
    tm_rng ^= tm_rng << 13;
    tm_rng ^= tm_rng >> 7;
    tm_rng ^= tm_rng << 17;
    return (float)((double)(tm_rng >> 11) / 9007199254740992.0 * 2.0 - 1.0);
}

static uint16_t tm_to_bf16(float f)
{
    uint32_t b;
    memcpy(&b, &f, 4);
    b += 0x7fffu + ((b >> 16) & 1u); /* round to nearest even */
    return (uint16_t)(b >> 16);
}

static uint16_t tm_to_f16(float f) /* values here are small normal numbers or zero */
{
    uint32_t b;
    memcpy(&b, &f, 4);
    uint32_t sign = (b >> 16) & 0x8000u;
    int e = (int)((b >> 23) & 0xff) - 127 + 15;
    uint32_t m = b & 0x7fffffu;
    if (e <= 0) return (uint16_t)sign;
    uint32_t h = sign | (uint32_t)e << 10 | m >> 13;
    if ((m & 0x1fffu) > 0x1000u || ((m & 0x1fffu) == 0x1000u && (h & 1u))) h++;
    return (uint16_t)h;
}

static float tm_from_bf16(uint16_t h)
{
    uint32_t b = (uint32_t)h << 16;
    float f;
    memcpy(&f, &b, 4);
    return f;
}

static float tm_from_f16(uint16_t h)
{
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16, e = (h >> 10) & 0x1f, m = h & 0x3ffu;
    uint32_t b = e ? sign | (e - 15 + 127) << 23 | m << 13 : sign;
    float f;
    memcpy(&f, &b, 4);
    return f;
}

static void tm_add(tm_model *m, const char *name, int64_t d0, int64_t d1, float scale, float offset)
{
    tm_tensor *t = &m->t[m->n++];
    snprintf(t->name, sizeof t->name, "%s", name);
    t->ndim = d1 ? 2 : 1;
    t->shape[0] = d0;
    t->shape[1] = d1;
    size_t n = (size_t)d0 * (size_t)(d1 ? d1 : 1);
    t->v = malloc(n * sizeof *t->v);
    for (size_t i = 0; i < n; i++) t->v[i] = offset + scale * tm_rand();
}

static void tm_build(tm_model *m)
{
    memset(m, 0, sizeof *m);
    tm_rng = 0x9e3779b97f4a7c15ull;
    tm_add(m, "embeddings.word_embeddings.weight", TM_VOCAB, TM_H, 0.5f, 0);
    tm_add(m, "embeddings.position_embeddings.weight", TM_POS, TM_H, 0.2f, 0);
    tm_add(m, "embeddings.token_type_embeddings.weight", 2, TM_H, 0.1f, 0);
    tm_add(m, "embeddings.LayerNorm.weight", TM_H, 0, 0.1f, 1);
    tm_add(m, "embeddings.LayerNorm.bias", TM_H, 0, 0.1f, 0);
    for (int l = 0; l < TM_LAYERS; l++) {
        char n[96];
#define TM_L(suffix, d0, d1, sc, off)                                   \
    snprintf(n, sizeof n, "encoder.layer.%d.%s", l, suffix);        \
    tm_add(m, n, d0, d1, sc, off)
        TM_L("attention.self.query.weight", TM_H, TM_H, 0.3f, 0);
        TM_L("attention.self.query.bias", TM_H, 0, 0.1f, 0);
        TM_L("attention.self.key.weight", TM_H, TM_H, 0.3f, 0);
        TM_L("attention.self.key.bias", TM_H, 0, 0.1f, 0);
        TM_L("attention.self.value.weight", TM_H, TM_H, 0.3f, 0);
        TM_L("attention.self.value.bias", TM_H, 0, 0.1f, 0);
        TM_L("attention.output.dense.weight", TM_H, TM_H, 0.3f, 0);
        TM_L("attention.output.dense.bias", TM_H, 0, 0.1f, 0);
        TM_L("attention.output.LayerNorm.weight", TM_H, 0, 0.1f, 1);
        TM_L("attention.output.LayerNorm.bias", TM_H, 0, 0.1f, 0);
        TM_L("intermediate.dense.weight", TM_I, TM_H, 0.3f, 0);
        TM_L("intermediate.dense.bias", TM_I, 0, 0.1f, 0);
        TM_L("output.dense.weight", TM_H, TM_I, 0.3f, 0);
        TM_L("output.dense.bias", TM_H, 0, 0.1f, 0);
        TM_L("output.LayerNorm.weight", TM_H, 0, 0.1f, 1);
        TM_L("output.LayerNorm.bias", TM_H, 0, 0.1f, 0);
#undef TM_L
    }
}

static void tm_free(tm_model *m)
{
    for (size_t i = 0; i < m->n; i++) free(m->t[i].v);
}

static const float *tm_get(const tm_model *m, const char *name)
{
    for (size_t i = 0; i < m->n; i++)
        if (!strcmp(m->t[i].name, name)) return m->t[i].v;
    return NULL;
}

static void tm_write_text(const char *dir, const char *name, const char *text)
{
    char p[512];
    snprintf(p, sizeof p, "%s/%s", dir, name);
    FILE *f = fopen(p, "w");
    fputs(text, f);
    fclose(f);
}

/* Write the folder; dtype "F32", "F16" or "BF16" (the in-memory weights are rounded the same way,
 * so the reference sees exactly the stored values). */
static int tm_write(tm_model *m, const char *dir, const char *dtype)
{
    char p[512];
    mkdir(dir, 0755);
    snprintf(p, sizeof p, "%s/1_Pooling", dir);
    mkdir(p, 0755);
    char cfg[1024];
    snprintf(cfg, sizeof cfg,
             "{\"model_type\": \"bert\", \"hidden_size\": %d, \"num_attention_heads\": %d, \"num_hidden_layers\": %d, "
             "\"intermediate_size\": %d, \"vocab_size\": %zu, \"max_position_embeddings\": %d, \"type_vocab_size\": 2, "
             "\"layer_norm_eps\": 1e-12, \"hidden_act\": \"gelu\", \"position_embedding_type\": \"absolute\"}\n",
             TM_H, TM_HEADS, TM_LAYERS, TM_I, TM_VOCAB, TM_POS);
    tm_write_text(dir, "config.json", cfg);
    snprintf(cfg, sizeof cfg, "{\"max_seq_length\": %d, \"do_lower_case\": false}\n", TM_MAXSEQ);
    tm_write_text(dir, "sentence_bert_config.json", cfg);
    tm_write_text(dir, "1_Pooling/config.json", "{\"word_embedding_dimension\": 32, \"pooling_mode_mean_tokens\": true}\n");
    tm_write_text(dir, "tokenizer_config.json", "{\"do_lower_case\": true}\n");
    snprintf(p, sizeof p, "%s/vocab.txt", dir);
    FILE *f = fopen(p, "w");
    for (size_t i = 0; i < TM_VOCAB; i++) fprintf(f, "%s\n", tm_vocab[i]);
    fclose(f);
    size_t es = !strcmp(dtype, "F32") ? 4 : 2;
    /* header */
    size_t hcap = 65536, hl = 0, off = 0;
    char *h = malloc(hcap);
    hl += (size_t)snprintf(h + hl, hcap - hl, "{\"__metadata__\":{\"format\":\"pt\"}");
    for (size_t i = 0; i < m->n; i++) {
        tm_tensor *t = &m->t[i];
        size_t n = (size_t)t->shape[0] * (size_t)(t->ndim == 2 ? t->shape[1] : 1);
        if (t->ndim == 2)
            hl += (size_t)snprintf(h + hl, hcap - hl, ",\"%s\":{\"dtype\":\"%s\",\"shape\":[%lld,%lld],\"data_offsets\":[%zu,%zu]}",
                                   t->name, dtype, (long long)t->shape[0], (long long)t->shape[1], off, off + n * es);
        else
            hl += (size_t)snprintf(h + hl, hcap - hl, ",\"%s\":{\"dtype\":\"%s\",\"shape\":[%lld],\"data_offsets\":[%zu,%zu]}",
                                   t->name, dtype, (long long)t->shape[0], off, off + n * es);
        off += n * es;
    }
    hl += (size_t)snprintf(h + hl, hcap - hl, "}");
    while (hl % 8) h[hl++] = ' ';
    snprintf(p, sizeof p, "%s/model.safetensors", dir);
    f = fopen(p, "wb");
    uint64_t len = hl;
    unsigned char lb[8];
    for (int k = 0; k < 8; k++) lb[k] = (unsigned char)(len >> (8 * k));
    fwrite(lb, 1, 8, f);
    fwrite(h, 1, hl, f);
    free(h);
    for (size_t i = 0; i < m->n; i++) {
        tm_tensor *t = &m->t[i];
        size_t n = (size_t)t->shape[0] * (size_t)(t->ndim == 2 ? t->shape[1] : 1);
        for (size_t k = 0; k < n; k++) {
            if (es == 4) {
                fwrite(&t->v[k], 4, 1, f);
            } else {
                uint16_t x = !strcmp(dtype, "BF16") ? tm_to_bf16(t->v[k]) : tm_to_f16(t->v[k]);
                t->v[k] = !strcmp(dtype, "BF16") ? tm_from_bf16(x) : tm_from_f16(x);
                unsigned char b2[2] = {(unsigned char)(x & 0xff), (unsigned char)(x >> 8)};
                fwrite(b2, 1, 2, f);
            }
        }
    }
    return fclose(f);
}

/* ---- the naive reference, one sequence at a time, in double ---- */

static void tm_ln(double *x, const float *g, const float *b, int n)
{
    double mu = 0, var = 0;
    for (int i = 0; i < n; i++) mu += x[i];
    mu /= n;
    for (int i = 0; i < n; i++) var += (x[i] - mu) * (x[i] - mu);
    var /= n;
    for (int i = 0; i < n; i++) x[i] = (x[i] - mu) / sqrt(var + 1e-12) * g[i] + b[i];
}

/* y[o] = sum_i W[o][i] x[i] + b[o] */
static void tm_lin(const double *x, const float *W, const float *b, int in, int out, double *y)
{
    for (int o = 0; o < out; o++) {
        double s = b[o];
        for (int i = 0; i < in; i++) s += (double)W[o * in + i] * x[i];
        y[o] = s;
    }
}

static void tm_reference(const tm_model *m, const int32_t *ids, int L, double *out)
{
    static double x[TM_POS][TM_H], q[TM_POS][TM_H], k[TM_POS][TM_H], v[TM_POS][TM_H], c[TM_POS][TM_H],
        t1[TM_POS][TM_H], f[TM_POS][TM_I];
    const float *we = tm_get(m, "embeddings.word_embeddings.weight"), *pe = tm_get(m, "embeddings.position_embeddings.weight"),
                *te = tm_get(m, "embeddings.token_type_embeddings.weight");
    for (int t = 0; t < L; t++) {
        for (int i = 0; i < TM_H; i++) x[t][i] = (double)we[ids[t] * TM_H + i] + pe[t * TM_H + i] + te[i];
        tm_ln(x[t], tm_get(m, "embeddings.LayerNorm.weight"), tm_get(m, "embeddings.LayerNorm.bias"), TM_H);
    }
    for (int l = 0; l < TM_LAYERS; l++) {
        char n[16][96];
        static const char *sfx[16] = {"attention.self.query.weight", "attention.self.query.bias", "attention.self.key.weight",
                                      "attention.self.key.bias", "attention.self.value.weight", "attention.self.value.bias",
                                      "attention.output.dense.weight", "attention.output.dense.bias",
                                      "attention.output.LayerNorm.weight", "attention.output.LayerNorm.bias",
                                      "intermediate.dense.weight", "intermediate.dense.bias", "output.dense.weight",
                                      "output.dense.bias", "output.LayerNorm.weight", "output.LayerNorm.bias"};
        const float *w[16];
        for (int s = 0; s < 16; s++) {
            snprintf(n[s], sizeof n[s], "encoder.layer.%d.%s", l, sfx[s]);
            w[s] = tm_get(m, n[s]);
        }
        for (int t = 0; t < L; t++) {
            tm_lin(x[t], w[0], w[1], TM_H, TM_H, q[t]);
            tm_lin(x[t], w[2], w[3], TM_H, TM_H, k[t]);
            tm_lin(x[t], w[4], w[5], TM_H, TM_H, v[t]);
        }
        int dh = TM_H / TM_HEADS;
        for (int h = 0; h < TM_HEADS; h++)
            for (int i = 0; i < L; i++) {
                double s[TM_POS], mx = -1e300, z = 0;
                for (int j = 0; j < L; j++) {
                    s[j] = 0;
                    for (int d = 0; d < dh; d++) s[j] += q[i][h * dh + d] * k[j][h * dh + d];
                    s[j] /= sqrt((double)dh);
                    if (s[j] > mx) mx = s[j];
                }
                for (int j = 0; j < L; j++) z += s[j] = exp(s[j] - mx);
                for (int d = 0; d < dh; d++) {
                    double a = 0;
                    for (int j = 0; j < L; j++) a += s[j] / z * v[j][h * dh + d];
                    c[i][h * dh + d] = a;
                }
            }
        for (int t = 0; t < L; t++) {
            tm_lin(c[t], w[6], w[7], TM_H, TM_H, t1[t]);
            for (int i = 0; i < TM_H; i++) x[t][i] += t1[t][i];
            tm_ln(x[t], w[8], w[9], TM_H);
            tm_lin(x[t], w[10], w[11], TM_H, TM_I, f[t]);
            for (int i = 0; i < TM_I; i++) f[t][i] = 0.5 * f[t][i] * (1 + erf(f[t][i] / sqrt(2.0)));
            tm_lin(f[t], w[12], w[13], TM_I, TM_H, t1[t]);
            for (int i = 0; i < TM_H; i++) x[t][i] += t1[t][i];
            tm_ln(x[t], w[14], w[15], TM_H);
        }
    }
    double nr = 0;
    for (int i = 0; i < TM_H; i++) {
        out[i] = 0;
        for (int t = 0; t < L; t++) out[i] += x[t][i];
        out[i] /= L;
        nr += out[i] * out[i];
    }
    for (int i = 0; i < TM_H; i++) out[i] /= sqrt(nr);
}

#endif
