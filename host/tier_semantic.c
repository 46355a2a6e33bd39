/*
 * tier_semantic.c - the semantic tier in the audit pipeline: embeddings in (.npy per partition, a
 * JSON field, or the built-in lexical embedding), la_semantic_find across the boundary, and the
 * report section with the distribution of every held-out row's nearest seen cosine.
 */
#include "embed_lexical.h"
#include "npy.h"
#include "semantic.h"
#include "tiers.h"

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
        if (!strcmp(arg, "lexical")) o->lexical = 1, o->enabled = 1;
        else if (!strcmp(arg, "none")) o->enabled = 0;
        else return la_error(LA_EINVAL, "--embed %s: expected lexical or none", arg);
        return LA_OK;
    }
    if (!strcmp(name, "semantic-threshold")) {
        o->threshold = strtod(arg, &end);
        if (*end || !*arg || !(o->threshold > 0 && o->threshold <= 1))
            return la_error(LA_EINVAL, "--semantic-threshold %s: expected a cosine in (0, 1]", arg);
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
        if (s != LA_OK) {
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

static int cmp_float(const void *x, const void *y)
{
    float a = *(const float *)x, b = *(const float *)y;
    return a < b ? -1 : a > b;
}

la_status la_semantic_embeddings(const la_semantic_opts *o, const la_loader *L, const la_table *t, int threads,
                                 float **out, size_t *out_dim, const char **out_kind)
{
    size_t n = la_table_nrows(t), dim = 0;
    float *emb = NULL;
    const char *kind;
    la_status s;
    if (o->nemb) {
        kind = "embeddings from .npy files";
        s = load_npy(o, L, t, &emb, &dim);
    } else if (o->embedding_field) {
        kind = "embeddings from a JSON field";
        dim = L->emb_dim;
        emb = malloc((n * dim + 1) * sizeof *emb);
        s = emb ? LA_OK : la_error(LA_ENOMEM, "out of memory");
        if (s == LA_OK && n) memcpy(emb, L->emb, n * dim * sizeof *emb);
    } else {
        kind = "lexical (built-in TF-IDF of words and character n-grams: similarity of wording, not meaning)";
        s = la_semantic_embed_lexical(t, o->lexical_dim, threads, &emb);
        if (s == LA_OK) dim = o->lexical_dim ? o->lexical_dim : LA_EMBED_LEXICAL_DIM;
    }
    if (s != LA_OK) return s;
    *out = emb;
    *out_dim = dim;
    *out_kind = kind;
    return LA_OK;
}

double la_semantic_threshold_for(const la_semantic_opts *o)
{
    return !isnan(o->threshold) ? o->threshold
           : (o->nemb || o->embedding_field) ? LA_SEMANTIC_THRESHOLD_MODEL
                                             : LA_SEMANTIC_THRESHOLD_LEXICAL;
}

la_status la_tier_semantic(const la_semantic_opts *o, const la_loader *L, const la_table *t, uint32_t heldout,
                           int threads, la_pairs *pairs, la_tier_out *out)
{
    memset(out, 0, sizeof *out);
    size_t dim = 0;
    float *emb = NULL;
    const char *kind;
    LA_TRY(la_semantic_embeddings(o, L, t, threads, &emb, &dim, &kind));
    la_status s;
    la_semantic_params p;
    la_semantic_params_default(&p);
    p.threshold = la_semantic_threshold_for(o);
    p.topk = o->topk;
    p.method = o->method;
    p.threads = threads;
    p.use_gpu = o->use_gpu;
    la_semantic_nearest nn;
    memset(&nn, 0, sizeof nn);
    la_semantic_stats st;
    memset(&st, 0, sizeof st);
    size_t before = pairs->n;
    s = la_semantic_find(t, heldout, emb, dim, &p, pairs, &nn, &st);
    free(emb);
    if (s != LA_OK) return s;
    out->seconds = st.seconds;
    out->backend = st.backend ? st.backend : "cpu";
    snprintf(out->fallback, sizeof out->fallback, "%s", st.fallback);

    /* the distribution of each held-out row's nearest seen cosine */
    const la_row *rows = la_table_rows_const(t);
    float *best = malloc((nn.n + 1) * sizeof *best);
    if (!best) {
        la_semantic_nearest_free(&nn);
        return la_error(LA_ENOMEM, "out of memory");
    }
    size_t nb = 0, hist[20] = {0};
    for (size_t i = 0; i < nn.n; i++) {
        float c = nn.cosine[i * nn.k];
        if (nn.seen[i * nn.k] != LA_SEMANTIC_NONE && !isnan(c)) {
            best[nb++] = c;
            int bin = (int)floorf((c + 1.0f) * 10.0f);
            hist[bin < 0 ? 0 : bin > 19 ? 19 : bin]++;
        }
        la_buf_puts(&out->extra, "{\"id\":");
        la_buf_json_str(&out->extra, rows[nn.row[i]].id);
        for (uint32_t k = 0; k < nn.k; k++) {
            uint32_t sr = nn.seen[i * nn.k + k];
            if (sr == LA_SEMANTIC_NONE) break;
            if (k == 0) la_buf_puts(&out->extra, ",\"nearest\":");
            else la_buf_printf(&out->extra, ",\"nearest_%u\":", k + 1);
            la_buf_json_str(&out->extra, rows[sr].id);
            if (k == 0) la_buf_printf(&out->extra, ",\"cosine\":%.6f", nn.cosine[i * nn.k + k]);
            else la_buf_printf(&out->extra, ",\"cosine_%u\":%.6f", k + 1, nn.cosine[i * nn.k + k]);
        }
        la_buf_puts(&out->extra, "}\n");
    }
    qsort(best, nb, sizeof *best, cmp_float);
#define Q(f) (nb ? (double)best[(size_t)((double)(nb - 1) * (f))] : NAN)
    la_buf *j = &out->json;
    la_buf_puts(j, "{\"embedding\": ");
    la_buf_json_str(j, kind);
    la_buf_printf(j, ", \"dim\": %zu, \"threshold\": ", dim);
    la_buf_json_num(j, p.threshold);
    la_buf_printf(j, ", \"backend\": \"%s\", \"method\": \"%s\", \"pairs\": %zu, \"heldout_rows\": %zu, \"seen_rows\": %zu, "
                     "\"nearest_cosine\": {\"rows\": %zu, \"quantiles\": {\"p50\": ",
                  out->backend, st.method ? st.method : "", pairs->n - before, st.n_heldout, st.n_seen, nb);
    la_buf_json_num(j, Q(0.5));
    la_buf_puts(j, ", \"p90\": ");
    la_buf_json_num(j, Q(0.9));
    la_buf_puts(j, ", \"p99\": ");
    la_buf_json_num(j, Q(0.99));
    la_buf_puts(j, ", \"max\": ");
    la_buf_json_num(j, nb ? (double)best[nb - 1] : NAN);
    la_buf_puts(j, "}, \"histogram\": {\"bin_width\": 0.1, \"from\": -1, \"counts\": [");
    for (int k = 0; k < 20; k++) la_buf_printf(j, "%s%zu", k ? "," : "", hist[k]);
    la_buf_puts(j, "]}}}");

    la_buf *m = &out->md;
    la_buf_printf(m, "\n## Semantic similarity\n\nEmbedding: %s, %zu dimensions; threshold cosine %.2f; %zu pairs at or "
                     "above it.%s\n\nNearest seen row per held-out row: median cosine %.3f, 90th percentile %.3f, max "
                     "%.3f (every row's nearest is in nearest.jsonl).\n",
                  kind, dim, p.threshold, pairs->n - before,
                  o->nemb || o->embedding_field ? "" : " Lexical similarity flags shared wording; reworded copies need "
                                                      "model embeddings (--embeddings PART=FILE.npy).",
                  Q(0.5), Q(0.9), nb ? (double)best[nb - 1] : NAN);
    /* the histogram of nearest cosines as an SVG bar chart */
    la_buf *h = &out->html;
    size_t peak = 1;
    for (int k = 0; k < 20; k++)
        if (hist[k] > peak) peak = hist[k];
    la_buf_printf(h, "<h2>Semantic similarity</h2><p>Embedding: %s, %zu dimensions; threshold cosine %.2f; %zu pairs at "
                     "or above it. Each held-out row's nearest seen row, by cosine (median %.3f, 90th percentile %.3f):"
                     "</p>\n<svg width=\"620\" height=\"190\" role=\"img\" aria-label=\"histogram of nearest cosines\">",
                  kind, dim, p.threshold, pairs->n - before, Q(0.5), Q(0.9));
    for (int k = 0; k < 20; k++) {
        double bh = 140.0 * (double)hist[k] / (double)peak;
        double lo = -1.0 + 0.1 * k;
        la_buf_printf(h, "<rect x=\"%d\" y=\"%.1f\" width=\"27\" height=\"%.1f\" fill=\"%s\"><title>%.1f to %.1f: %zu "
                         "rows</title></rect>",
                      10 + 30 * k, 150 - bh, bh, lo + 0.1 > p.threshold ? "#e57373" : "#90caf9", lo, lo + 0.1, hist[k]);
        if (k % 2 == 0) la_buf_printf(h, "<text x=\"%d\" y=\"168\" font-size=\"11\" fill=\"#666\">%.1f</text>", 10 + 30 * k, lo);
    }
    la_buf_printf(h, "<line x1=\"%.1f\" y1=\"0\" x2=\"%.1f\" y2=\"150\" stroke=\"#c62828\" stroke-dasharray=\"4\"/>"
                     "<text x=\"10\" y=\"186\" font-size=\"11\" fill=\"#666\">cosine of the nearest seen row (bars "
                     "in red reach the threshold, dashed)</text></svg>\n",
                  10 + 300 * (p.threshold + 1.0), 10 + 300 * (p.threshold + 1.0));
#undef Q
    free(best);
    la_semantic_nearest_free(&nn);
    if (la_buf_status(j) != LA_OK || la_buf_status(m) != LA_OK || la_buf_status(&out->extra) != LA_OK ||
        la_buf_status(&out->html) != LA_OK)
        return la_error(LA_ENOMEM, "out of memory writing the semantic section");
    return LA_OK;
}
