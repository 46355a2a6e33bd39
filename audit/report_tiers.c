/*
 * report_tiers.c - rendering the near and semantic tiers' results (see report_tiers.h): JSON for
 * findings.<tier>, the Markdown and HTML sections, and the tiers' own JSONL files.
 */
#include "report_tiers.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* "stages": {"near_signatures": {"backend": "cuda", ...}, ...}; their seconds are in the report's
 * timings (STAGE_s), which are the one part of report.json that varies between runs. */
static void stages_json(la_buf *j, const la_report_stage *st, size_t n)
{
    la_buf_puts(j, ", \"stages\": {");
    for (size_t i = 0; i < n; i++) {
        la_buf_puts(j, i ? ", " : "");
        la_buf_json_str(j, st[i].name);
        la_buf_puts(j, ": {\"backend\": ");
        la_buf_json_str(j, st[i].backend);
        la_buf_puts(j, ", \"fallback\": ");
        la_buf_json_str(j, st[i].fallback ? st[i].fallback : "");
        la_buf_printf(j, ", \"calls\": %zu, \"items\": %.0f, \"bytes\": %.0f}", st[i].calls, st[i].items, st[i].bytes);
    }
    la_buf_puts(j, "}");
}

la_status la_report_near(const la_table *t, const la_near_report *r, la_buf *j, la_buf *m, la_buf *x)
{
    const la_row *rows = la_table_rows_const(t);
    for (size_t k = 0; k < r->nwithin; k++) {
        const la_pair *q = &r->within_pairs[k];
        la_buf_puts(x, "{\"id_a\":");
        la_buf_json_str(x, rows[q->a].id);
        la_buf_puts(x, ",\"id_b\":");
        la_buf_json_str(x, rows[q->b].id);
        la_buf_puts(x, ",\"split\":");
        la_buf_json_str(x, la_table_part_name(t, rows[q->a].part));
        la_buf_printf(x, ",\"scores\":{\"jaccard\":%.6g,\"containment\":%.6g,\"minhash\":%.6g,\"simhash_distance\":%d}}\n",
                      q->jaccard, q->containment, q->minhash, q->simhash_dist);
    }
    char shingles[64];
    snprintf(shingles, sizeof shingles, "%s %d-grams", r->char_shingles ? "character" : "word", r->shingle_size);
    la_buf_puts(j, "{\"backend\": ");
    la_buf_json_str(j, r->backend);
    la_buf_puts(j, ", \"shingles\": ");
    la_buf_json_str(j, shingles);
    la_buf_printf(j, ", \"num_perm\": %d, \"threshold\": ", r->num_perm);
    la_buf_json_num(j, r->threshold);
    la_buf_puts(j, ", \"containment_threshold\": ");
    la_buf_json_num(j, r->containment_threshold);
    la_buf_printf(j, ", \"containment_min_shingles\": %d, \"simhash_k\": %d, \"lsh\": {\"bands\": %d, \"rows\": %d, "
                     "\"expected_recall_at_threshold\": ",
                  r->containment_min_shingles, r->simhash_k, r->bands, r->rows);
    la_buf_json_num(j, r->expected_recall);
    la_buf_printf(j, "}, \"rows_signed\": %zu, \"candidates\": {\"lsh\": %zu, \"simhash\": %zu, \"containment\": %zu, "
                     "\"distinct\": %zu}, \"pairs\": %zu, \"within_pairs\": %zu",
                  r->rows_signed, r->candidates_lsh, r->candidates_simhash, r->candidates_containment, r->candidates,
                  r->pairs, r->nwithin);
    stages_json(j, r->stages, r->nstages);
    la_buf_puts(j, "}");
    la_buf_printf(m, "\n## Near copies\n\n%s, MinHash with %d permutations in %d bands of %d rows (expected recall %.3f "
                     "at Jaccard %.2f), SimHash within %d bits, containment at %.2f. %zu candidates verified on the true "
                     "shingle sets; %zu near pairs across the boundary.%s\n",
                  shingles, r->num_perm, r->bands, r->rows, r->expected_recall, r->threshold, r->simhash_k,
                  r->containment_threshold, r->candidates, r->pairs,
                  r->within ? " Pairs inside one partition are in within_pairs.jsonl." : "");
    if (la_buf_status(j) != LA_OK || la_buf_status(m) != LA_OK || la_buf_status(x) != LA_OK)
        return la_error(LA_ENOMEM, "out of memory writing the near section");
    return LA_OK;
}

static int cmp_float(const void *x, const void *y)
{
    float a = *(const float *)x, b = *(const float *)y;
    return a < b ? -1 : a > b;
}

/* nearest.jsonl, and each held-out row's nearest cosine (sorted, into best) with its histogram. */
static void nearest_lines(const la_table *t, const la_semantic_report *r, la_buf *x, float *best, size_t *nbest,
                          size_t hist[20])
{
    const la_row *rows = la_table_rows_const(t);
    size_t nb = 0;
    for (size_t i = 0; i < r->nnearest; i++) {
        const uint32_t *seen = r->nearest_seen + i * r->k;
        const float *cos = r->nearest_cosine + i * r->k;
        if (seen[0] != UINT32_MAX && !isnan(cos[0])) {
            best[nb++] = cos[0];
            int bin = (int)floorf((cos[0] + 1.0f) * 10.0f);
            hist[bin < 0 ? 0 : bin > 19 ? 19 : bin]++;
        }
        la_buf_puts(x, "{\"id\":");
        la_buf_json_str(x, rows[r->nearest_row[i]].id);
        for (uint32_t k = 0; k < r->k; k++) {
            if (seen[k] == UINT32_MAX) break;
            if (k == 0) la_buf_puts(x, ",\"nearest\":");
            else la_buf_printf(x, ",\"nearest_%u\":", k + 1);
            la_buf_json_str(x, rows[seen[k]].id);
            if (k == 0) la_buf_printf(x, ",\"cosine\":%.6f", cos[k]);
            else la_buf_printf(x, ",\"cosine_%u\":%.6f", k + 1, cos[k]);
        }
        la_buf_puts(x, "}\n");
    }
    qsort(best, nb, sizeof *best, cmp_float);
    *nbest = nb;
}

la_status la_report_semantic(const la_table *t, const la_semantic_report *r, la_buf *j, la_buf *m, la_buf *h,
                             la_buf *x)
{
    const la_row *rows = la_table_rows_const(t);
    float *best = malloc((r->nnearest + 1) * sizeof *best);
    if (!best) return la_error(LA_ENOMEM, "out of memory");
    size_t nb = 0, hist[20] = {0};
    nearest_lines(t, r, x, best, &nb, hist);
#define Q(f) (nb ? (double)best[(size_t)((double)(nb - 1) * (f))] : NAN)
    la_buf_puts(j, "{\"embedding\": ");
    la_buf_json_str(j, r->kind);
    la_buf_puts(j, ", \"embedding_choice\": ");
    la_buf_json_str(j, r->why);
    if (r->model) {
        la_buf_puts(j, ", \"model\": {\"name\": ");
        la_buf_json_str(j, r->model_name);
        la_buf_printf(j, ", \"encoder_backend\": \"%s\", \"encoder_fallback\": ", r->encoder_backend);
        la_buf_json_str(j, r->encoder_fallback);
        la_buf_printf(j, ", \"weights\": \"%s\", \"window_tokens\": %zu, \"windows\": %s, \"long_text_window_tokens\": %zu, "
                      "\"texts_windowed\": %zu",
                      r->model_hash, r->model_window, r->no_windows ? "false" : "true", r->window_tokens,
                      r->texts_windowed);
        la_buf_puts(j, ", \"cache\": ");
        if (r->cache_file) {
            la_buf_puts(j, "{\"file\": ");
            la_buf_json_str(j, r->cache_file);
            la_buf_printf(j, ", \"hits\": %zu, \"misses\": %zu, \"note\": ", r->cache_hits, r->cache_misses);
            la_buf_json_str(j, r->cache_note);
            la_buf_puts(j, "}}");
        } else {
            la_buf_puts(j, "null}");
        }
    }
    la_buf_printf(j, ", \"dim\": %zu, \"threshold\": ", r->dim);
    la_buf_json_num(j, r->threshold);
    la_buf_puts(j, ", \"threshold_source\": ");
    la_buf_json_str(j, r->threshold_source);
    la_buf_puts(j, ", \"margin\": {\"ratio\": ");
    if (r->margin > 0) {
        la_buf_json_num(j, r->margin);
        la_buf_printf(j, ", \"k\": %u, \"lowest_cosine\": ", r->margin_k);
        la_buf_json_num(j, r->margin_lowest);
        la_buf_printf(j, ", \"candidates\": %zu, \"links\": %zu", r->margin_candidates, r->margin_links);
    } else {
        la_buf_puts(j, "null");
    }
    la_buf_puts(j, ", \"source\": ");
    la_buf_json_str(j, r->margin_source);
    la_buf_puts(j, "}");
    const la_window_pair *w = r->window_pairs;
    if (r->nwindow_pairs) {
        la_buf_puts(j, ", \"window_pairs\": [");
        for (size_t k = 0; k < r->nwindow_pairs; k++) {
            la_buf_puts(j, k ? ", {\"id_a\": " : "{\"id_a\": ");
            la_buf_json_str(j, rows[w[k].a].id);
            la_buf_printf(j, ", \"bytes_a\": [%u, %u], \"id_b\": ", w[k].a_begin, w[k].a_end);
            la_buf_json_str(j, rows[w[k].b].id);
            la_buf_printf(j, ", \"bytes_b\": [%u, %u], \"cosine\": %.6f}", w[k].b_begin, w[k].b_end, w[k].cosine);
        }
        la_buf_puts(j, "]");
    }
    la_buf_printf(j, ", \"backend\": \"%s\", \"method\": \"%s\", \"pairs\": %zu, \"heldout_rows\": %zu, \"seen_rows\": %zu, "
                     "\"nearest_cosine\": {\"rows\": %zu, \"quantiles\": {\"p50\": ",
                  r->backend, r->method ? r->method : "", r->pairs, r->heldout_rows, r->seen_rows, nb);
    la_buf_json_num(j, Q(0.5));
    la_buf_puts(j, ", \"p90\": ");
    la_buf_json_num(j, Q(0.9));
    la_buf_puts(j, ", \"p99\": ");
    la_buf_json_num(j, Q(0.99));
    la_buf_puts(j, ", \"max\": ");
    la_buf_json_num(j, nb ? (double)best[nb - 1] : NAN);
    la_buf_puts(j, "}, \"histogram\": {\"bin_width\": 0.1, \"from\": -1, \"counts\": [");
    for (int k = 0; k < 20; k++) la_buf_printf(j, "%s%zu", k ? "," : "", hist[k]);
    la_buf_puts(j, "]}}");
    stages_json(j, r->stages, r->nstages);
    la_buf_puts(j, "}");

    la_buf_printf(m, "\n## Semantic similarity\n\nEmbedding: %s, %zu dimensions (%s); threshold cosine %.2f (%s); %zu "
                     "pairs at or above it.%s\n",
                  r->kind, r->dim, r->why, r->threshold, r->threshold_source, r->pairs - r->margin_links,
                  r->brought_in || r->model
                      ? ""
                      : " Lexical similarity flags shared wording; reworded copies need model embeddings (--embed "
                        "model once a model is installed, or --embeddings PART=FILE.npy).");
    if (r->margin > 0)
        la_buf_printf(m, "\nRatio margin (%s): below the threshold, a held-out row's nearest seen row is linked when "
                         "their cosine, at least %.2f, is %.3f times the mean of both rows' %u best cosines across the "
                         "boundary or more (a translation stands out from its neighbours where copies of one "
                         "template do not): %zu of the %zu held-out rows it scored are linked so.\n",
                      r->margin_source, r->margin_lowest, r->margin, r->margin_k,
                      r->margin_links, r->margin_candidates);
    if (r->model)
        la_buf_printf(m, "\nModel: %s, weights %s; texts longer than %zu tokens are embedded as %s%.0zu%s.\n",
                      r->model_name, r->model_hash, r->model_window,
                      r->no_windows ? "their first window only (--semantic-windows off)"
                                    : "overlapping sentence-aligned windows of up to ",
                      r->no_windows ? (size_t)0 : r->window_tokens,
                      r->no_windows ? "" : " tokens (about the held-out items' length), a pair matching when any two "
                                           "windows do");
    for (size_t k = 0; k < r->nwindow_pairs && k < 10; k++)
        la_buf_printf(m, "%s- `%s` bytes %u-%u ~ `%s` bytes %u-%u: cosine %.3f\n",
                      k ? "" : "\nPairs found through windows of long texts (all in report.json):\n\n", rows[w[k].a].id,
                      w[k].a_begin, w[k].a_end, rows[w[k].b].id, w[k].b_begin, w[k].b_end, w[k].cosine);
    la_buf_printf(m, "\nNearest seen row per held-out row: median cosine %.3f, 90th percentile %.3f, max "
                     "%.3f (every row's nearest is in nearest.jsonl).\n",
                  Q(0.5), Q(0.9), nb ? (double)best[nb - 1] : NAN);
    /* the histogram of nearest cosines as an SVG bar chart */
    size_t peak = 1;
    for (int k = 0; k < 20; k++)
        if (hist[k] > peak) peak = hist[k];
    char margin_note[96] = "";
    if (r->margin > 0)
        snprintf(margin_note, sizeof margin_note, ", and %zu below it by ratio margin %.3f", r->margin_links, r->margin);
    la_buf_printf(h, "<h2>Semantic similarity</h2><p>Embedding: %s%s%s, %zu dimensions; threshold cosine %.2f; %zu pairs "
                     "at or above it%s. Each held-out row's nearest seen row, by cosine (median %.3f, 90th percentile "
                     "%.3f):</p>\n<svg width=\"620\" height=\"190\" role=\"img\" aria-label=\"histogram of nearest cosines\">",
                  r->kind, r->model ? ", model " : "", r->model ? r->model_name : "", r->dim, r->threshold,
                  r->pairs - r->margin_links, margin_note, Q(0.5), Q(0.9));
    for (int k = 0; k < 20; k++) {
        double bh = 140.0 * (double)hist[k] / (double)peak;
        double lo = -1.0 + 0.1 * k;
        la_buf_printf(h, "<rect x=\"%d\" y=\"%.1f\" width=\"27\" height=\"%.1f\" fill=\"%s\"><title>%.1f to %.1f: %zu "
                         "rows</title></rect>",
                      10 + 30 * k, 150 - bh, bh, lo + 0.1 > r->threshold ? "#e57373" : "#90caf9", lo, lo + 0.1, hist[k]);
        if (k % 2 == 0) la_buf_printf(h, "<text x=\"%d\" y=\"168\" font-size=\"11\" fill=\"#666\">%.1f</text>", 10 + 30 * k, lo);
    }
    la_buf_printf(h, "<line x1=\"%.1f\" y1=\"0\" x2=\"%.1f\" y2=\"150\" stroke=\"#c62828\" stroke-dasharray=\"4\"/>"
                     "<text x=\"10\" y=\"186\" font-size=\"11\" fill=\"#666\">cosine of the nearest seen row (bars "
                     "in red reach the threshold, dashed)</text></svg>\n",
                  10 + 300 * (r->threshold + 1.0), 10 + 300 * (r->threshold + 1.0));
#undef Q
    free(best);
    if (la_buf_status(j) != LA_OK || la_buf_status(m) != LA_OK || la_buf_status(x) != LA_OK || la_buf_status(h) != LA_OK)
        return la_error(LA_ENOMEM, "out of memory writing the semantic section");
    return LA_OK;
}
