/*
 * report_html.c - report.html: the audit on one self-contained page (inline CSS and SVG, no
 * scripts, nothing fetched), for people who open a report from a CI artifact or a batch job.
 * Not for: machines (report.json) or CI step summaries (report.md).
 */
#include "report.h"
#include "report_model.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* HTML text, at most max_chars code points (0: all), with an ellipsis when cut. */
static void html_text(la_buf *b, const char *s, size_t max_chars)
{
    size_t chars = 0;
    for (; s && *s; s++) {
        unsigned char c = (unsigned char)*s;
        if ((c & 0xC0) != 0x80) {
            if (max_chars && chars == max_chars) {
                la_buf_puts(b, "…");
                return;
            }
            chars++;
        }
        if (c == '&') la_buf_puts(b, "&amp;");
        else if (c == '<') la_buf_puts(b, "&lt;");
        else if (c == '>') la_buf_puts(b, "&gt;");
        else if (c == '"') la_buf_puts(b, "&quot;");
        else if (c == '\n') la_buf_puts(b, "<br>");
        else if (c < 0x20 && c != '\t') la_buf_putc(b, ' ');
        else la_buf_putc(b, (char)c);
    }
}

static const char k_style[] =
    "body{font:14px/1.45 system-ui,-apple-system,Segoe UI,sans-serif;margin:2em auto;max-width:1100px;color:#222;"
    "padding:0 1em}h1{font-size:1.6em}h2{font-size:1.2em;margin-top:2em;border-bottom:1px solid #ddd}"
    "table{border-collapse:collapse;margin:.6em 0}td,th{border:1px solid #ddd;padding:.3em .6em;vertical-align:top;"
    "text-align:left}th{background:#f5f5f5}td.n{text-align:right;font-variant-numeric:tabular-nums}"
    ".bad{background:#fde8e8;border-left:6px solid #c62828;padding:.6em 1em}"
    ".good{background:#e8f5e9;border-left:6px solid #2e7d32;padding:.6em 1em}"
    ".warn{background:#fff8e1;border-left:6px solid #f9a825;padding:.6em 1em}"
    ".txt{max-width:420px;font-size:.92em}.muted{color:#666}code{background:#f3f3f3;padding:0 .2em}";

/* Horizontal bars with 95% interval whiskers for up to three accuracies. */
static void interval_chart(la_buf *b, const char *const *labels, const double *acc, const size_t *n, int count)
{
    const int w = 620, row = 34, left = 200, plot = w - left - 80;
    la_buf_printf(b, "<svg width=\"%d\" height=\"%d\" role=\"img\" aria-label=\"accuracy with 95%% intervals\">", w,
                  row * count + 26);
    for (int t = 0; t <= 10; t += 2) {
        int x = left + plot * t / 10;
        la_buf_printf(b, "<line x1=\"%d\" y1=\"0\" x2=\"%d\" y2=\"%d\" stroke=\"#eee\"/>"
                         "<text x=\"%d\" y=\"%d\" font-size=\"11\" text-anchor=\"middle\" fill=\"#666\">%d%%</text>",
                      x, x, row * count, x, row * count + 16, t * 10);
    }
    for (int i = 0; i < count; i++) {
        int y = i * row + 8;
        la_buf_printf(b, "<text x=\"0\" y=\"%d\" font-size=\"12\">%s (n=%zu)</text>", y + 13, labels[i], n[i]);
        if (n[i] == 0 || isnan(acc[i])) continue;
        double hw = la_stat_ci95(acc[i], n[i]);
        double lo = fmax(0, acc[i] - hw), hi = fmin(1, acc[i] + hw);
        la_buf_printf(b, "<rect x=\"%d\" y=\"%d\" width=\"%.1f\" height=\"16\" fill=\"#90caf9\"/>", left, y,
                      plot * acc[i]);
        la_buf_printf(b, "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"#0d47a1\" stroke-width=\"2\"/>",
                      left + plot * lo, y + 8, left + plot * hi, y + 8);
        la_buf_printf(b, "<text x=\"%.1f\" y=\"%d\" font-size=\"12\">%.1f%% ±%.1f</text>", left + plot * hi + 6, y + 13,
                      100 * acc[i], 100 * hw);
    }
    la_buf_puts(b, "</svg>");
}

la_status la_report_html(const la_report *r, la_buf *b)
{
    const la_table *t = r->table;
    const la_row *rows = la_table_rows_const(t);
    size_t orphans;
    la_part_counts *pc = la_report_count_parts(r, &orphans);
    size_t *idx = la_report_ranked_pairs(r);
    if (!pc || !idx) {
        free(pc);
        free(idx);
        return la_error(LA_ENOMEM, "out of memory writing report.html");
    }
    la_heldout_stats s;
    if (la_report_heldout_stats(r, &s) != LA_OK) b->failed = 1; /* out of memory */
    const char *held = la_table_part_name(t, r->heldout);

    la_buf_puts(b, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>leakaudit report</title>"
                   "<style>");
    la_buf_puts(b, k_style);
    la_buf_puts(b, "</style></head><body>\n<h1>leakaudit report</h1>\n");
    if (r->leaks)
        la_buf_printf(b, "<p class=\"bad\"><b>Leaks found</b> across the <code>%s</code> boundary: %zu linked pairs that "
                         "fail the gate in %zu clusters, %zu rows dated on the wrong side of the cutoff. Exit code %d.</p>\n",
                      held, la_report_gating_pairs(r), r->audit->nclusters, r->audit->ntime, r->exit_code);
    else
        la_buf_printf(b, "<p class=\"good\"><b>No leaks found</b> across the <code>%s</code> boundary. Exit code %d.</p>\n",
                      held, r->exit_code);

    la_buf_printf(b, "<p>%zu of %zu <code>%s</code> rows were compared by their text against the other partitions.</p>\n",
                  r->heldout_compared, s.before, held);
    la_buf_puts(b, "<h2>Evidence</h2><table><tr><th>kind</th><th>pairs</th><th>copy</th><th>near</th><th>related</th>"
                   "<th>gates the exit code</th></tr>\n");
    for (int k = 0; k < LA_KIND_COUNT; k++) {
        uint32_t bit = 1u << k;
        size_t c = bit == LA_KIND_TIME ? r->audit->ntime : la_report_kind_count(r, bit);
        la_buf_printf(b, "<tr><td>%s%s</td><td class=\"n\">%zu</td>", la_kind_name(bit), bit == LA_KIND_TIME ? " (rows)" : "", c);
        if (bit & (LA_KIND_FAMILY | LA_KIND_TIME)) la_buf_puts(b, "<td></td><td></td><td></td>");
        else
            for (int g = LA_GRADE_COPY; g >= LA_GRADE_RELATED; g--)
                la_buf_printf(b, "<td class=\"n\">%zu</td>", la_report_grade_count(r, bit, g));
        int min = r->gate.min_grade[k];
        const char *gate = !min                                     ? "no"
                           : (bit & (LA_KIND_FAMILY | LA_KIND_TIME)) ? "yes"
                           : min == LA_GRADE_COPY                    ? "copy"
                           : min == LA_GRADE_NEAR                    ? "copy, near"
                                                                     : "every grade";
        la_buf_printf(b, "<td>%s</td></tr>\n", gate);
    }
    la_buf_printf(b, "</table><p class=\"muted\">Within partitions: %zu later duplicates, %zu label conflicts.</p>\n",
                  r->ndup, r->nconflicts);

    la_buf_puts(b, "<h2>Partitions</h2><table><tr><th>partition</th><th>read</th><th>kept</th><th>quarantined</th>"
                   "<th>rejected</th></tr>\n");
    for (uint32_t p = 0; p < la_table_npart(t); p++) {
        la_buf_puts(b, "<tr><td>");
        html_text(b, la_table_part_name(t, p), 0);
        la_buf_printf(b, "</td><td class=\"n\">%zu</td><td class=\"n\">%zu</td><td class=\"n\">%zu</td>"
                         "<td class=\"n\">%zu</td></tr>\n",
                      pc[p].read, pc[p].kept, pc[p].quarantined, pc[p].rejected);
    }
    if (orphans) la_buf_printf(b, "<tr><td>(no partition)</td><td class=\"n\">%zu</td><td></td><td></td><td class=\"n\">%zu</td></tr>\n", orphans, orphans);
    la_buf_puts(b, "</table>\n");

    /* statistics */
    la_buf_printf(b, "<h2>What the clean <code>%s</code> set can support</h2>\n", held);
    double pb = s.scored_before ? s.acc_before : r->assumed_accuracy;
    double pa = s.scored_after ? s.acc_after : r->assumed_accuracy;
    const char *labels[3] = {"before quarantine", "clean", "leaked rows"};
    double acc[3] = {pb, pa, s.acc_leaked};
    size_t ns[3] = {s.before, s.after, s.scored_leaked};
    la_buf_printf(b, "<p>Accuracy %s; bars show the 95%% interval 1.96·√(p(1−p)/n).</p>\n",
                  s.scored_before ? "observed from the per-row scores" : "assumed at 90% (no per-row scores given)");
    interval_chart(b, labels, acc, ns, s.scored_leaked ? 3 : 2);
    if (s.scored_leaked)
        la_buf_printf(b, "<p>The leak inflates the score by <b>%+.1f points</b> (all rows against clean rows).</p>\n",
                      100 * (s.acc_before - s.acc_after));
    la_buf warn = {0};
    if (la_report_small_set_warning(&warn, "The clean set", pa, s.after)) {
        la_buf_puts(b, "<p class=\"warn\">");
        html_text(b, warn.p, 0);
        la_buf_puts(b, "</p>\n");
    }
    if (warn.failed) b->failed = 1;
    la_buf_free(&warn);
    if (s.groups) {
        la_buf sentence = {0};
        la_report_random_split_sentence(&sentence, &s);
        la_buf_puts(b, "<p>");
        html_text(b, sentence.p, 0);
        la_buf_puts(b, "</p>\n");
        if (sentence.failed) b->failed = 1;
        la_buf_free(&sentence);
    }

    /* top leaks */
    if (r->pairs->n) {
        size_t top = r->pairs->n < 25 ? r->pairs->n : 25;
        la_buf_printf(b, "<h2>Top leaks</h2><p class=\"muted\">%zu of %zu pairs; all are in pairs.jsonl.</p>\n"
                         "<table><tr><th>grade</th><th>kinds</th><th>scores</th><th>seen row</th><th>held-out row</th></tr>\n",
                      top, r->pairs->n);
        for (size_t k = 0; k < top; k++) {
            const la_pair *p = &r->pairs->v[idx[k]];
            la_buf_printf(b, "<tr><td>%s</td><td>", la_grade_name(p->grade) ? la_grade_name(p->grade) : "");
            la_report_kinds_text(b, p->kinds, ", ");
            la_buf_puts(b, "</td><td class=\"n\">");
            if (!isnan(p->jaccard)) la_buf_printf(b, "J %.2f<br>", p->jaccard);
            if (!isnan(p->containment)) la_buf_printf(b, "C %.2f<br>", p->containment);
            if (!isnan(p->cosine)) la_buf_printf(b, "cos %.3f<br>", p->cosine);
            if (!isnan(p->wcontainment)) la_buf_printf(b, "wC %.2f", p->wcontainment);
            la_buf_puts(b, "</td><td class=\"txt\"><b>");
            html_text(b, rows[p->a].id, 80);
            la_buf_puts(b, "</b> (");
            html_text(b, la_table_part_name(t, rows[p->a].part), 0);
            la_buf_puts(b, ")<br>");
            html_text(b, rows[p->a].text, 300);
            la_buf_puts(b, "</td><td class=\"txt\"><b>");
            html_text(b, rows[p->b].id, 80);
            la_buf_puts(b, "</b><br>");
            html_text(b, rows[p->b].text, 300);
            la_buf_puts(b, "</td></tr>\n");
        }
        la_buf_puts(b, "</table>\n<p class=\"muted\">J: Jaccard of the word-pair sets; C: share of the shorter text's word "
                       "pairs in the other; cos: cosine of the embeddings; wC: rarity-weighted share of the held-out row's "
                       "word pairs in the seen row, which sets the grade (copy, near, related: docs/grades.md). Related "
                       "links come last and do not fail the run.</p>\n");
    }
    if (r->audit->nsuspects) {
        la_buf_printf(b, "<h2>Suspect clusters</h2><p class=\"warn\">%zu clusters have more than %zu rows, which usually "
                         "means chaining through weak links. Check their weakest links before acting.</p>"
                         "<table><tr><th>cluster</th><th>rows</th><th>weakest links</th></tr>\n",
                      r->audit->nsuspects, r->max_cluster);
        for (size_t k = 0; k < r->audit->nsuspects && k < 50; k++) {
            const la_suspect *sus = &r->audit->suspects[k];
            la_buf_printf(b, "<tr><td class=\"n\">%u</td><td class=\"n\">%zu</td><td>", sus->cluster, sus->nrows);
            for (size_t w = 0; w < sus->nweakest; w++) {
                html_text(b, rows[sus->weakest[w].a].id, 60);
                la_buf_puts(b, " ~ ");
                html_text(b, rows[sus->weakest[w].b].id, 60);
                la_buf_printf(b, " (%.3f)<br>", la_pair_strength(&sus->weakest[w]));
            }
            la_buf_puts(b, "</td></tr>\n");
        }
        la_buf_puts(b, "</table>\n");
    }
    for (size_t k = 0; k < r->nsections; k++)
        if (r->sections[k].html) la_buf_puts(b, r->sections[k].html);

    la_buf_puts(b, "<h2>Run</h2><p class=\"muted\">leakaudit ");
    html_text(b, la_version(), 0);
    la_buf_puts(b, "; backend ");
    html_text(b, r->backend ? r->backend : "cpu", 0);
    if (r->backend_note && r->backend_note[0]) {
        la_buf_puts(b, " (");
        html_text(b, r->backend_note, 300);
        la_buf_putc(b, ')');
    }
    la_buf_puts(b, ". Inputs:");
    for (size_t f = 0; f < r->nfiles; f++) {
        la_buf_puts(b, f ? ", <code>" : " <code>");
        html_text(b, r->files[f].path, 200);
        la_buf_printf(b, "</code> (%zu rows%s)", r->files[f].rows_read, r->files[f].ids_generated ? ", ids FILE:LINE" : "");
    }
    la_buf_puts(b, ". Files beside this page: report.json, report.md, pairs.jsonl, clusters.jsonl, assignments.jsonl, "
                   "the manifests, quarantine.jsonl, rejects.jsonl.</p>\n</body></html>\n");
    free(pc);
    free(idx);
    return la_buf_status(b);
}
