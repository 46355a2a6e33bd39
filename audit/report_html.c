/*
 * report_html.c - report.html: the audit on one self-contained page for the person who decides
 * what to do about each leak: the summary, evidence and partition tables and charts as markup, and
 * every link as data (report_review.c) that the page's script (review.js) lists, filters, sorts,
 * pages and opens side by side. Inline CSS, SVG and script; nothing fetched.
 * Not for: machines (report.json, pairs.jsonl) or CI step summaries (report.md).
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

/* Horizontal bars with 95% interval whiskers for up to three accuracies. */
static void interval_chart(la_buf *b, const char *const *labels, const double *acc, const size_t *n, int count)
{
    /* the label right of a whisker that reaches 100% needs about 100 px: the plot leaves 150 */
    const int w = 720, row = 34, left = 200, plot = w - left - 150;
    la_buf_printf(b, "<svg width=\"%d\" height=\"%d\" role=\"img\" aria-label=\"accuracy with 95%% intervals\">", w,
                  row * count + 44);
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
        la_buf_printf(b, "<text x=\"%.1f\" y=\"%d\" font-size=\"12\">%.1f%% ±%.1f pts</text>", left + plot * hi + 6,
                      y + 13, 100 * acc[i], 100 * hw);
    }
    la_buf_printf(b, "<rect x=\"0\" y=\"%d\" width=\"14\" height=\"10\" fill=\"#90caf9\"/><text x=\"20\" y=\"%d\" "
                     "font-size=\"11\" fill=\"#444\">accuracy</text><line x1=\"90\" y1=\"%d\" x2=\"110\" y2=\"%d\" "
                     "stroke=\"#0d47a1\" stroke-width=\"2\"/><text x=\"116\" y=\"%d\" font-size=\"11\" fill=\"#444\">95%% "
                     "interval; the label reads accuracy ± half width in percentage points</text>",
                  row * count + 24, row * count + 33, row * count + 29, row * count + 29, row * count + 33);
    la_buf_puts(b, "</svg>");
}

/* The link list's frame: what the columns and grades mean, the controls, the table, and the pair
 * and cluster panels that review.js fills from the data. Hidden until the script runs. */
static void review_section(const la_report *r, la_buf *b)
{
    la_buf_printf(b, "<h2 id=\"links\">Links</h2>\n<p>All %zu links across the boundary, in review order: first the copy "
                     "and near links that have no exact evidence (they need a judgement), then exact copies, then links "
                     "with only family or time evidence, then related links, which gate nothing by default; inside each, "
                     "the stronger grade and the higher score first, and a cluster's links together. Click a column to "
                     "sort, a row to read both texts side by side.</p>\n",
                  r->pairs->n);
    la_buf_puts(b,
                "<dl class=\"legend\"><dt>grade</dt><dd>copy: the held-out item is there; near: an edited or partial "
                "copy; related: shared wording or a template, not the item (docs/grades.md); —: family or time "
                "evidence only</dd><dt>J</dt><dd>Jaccard similarity of the two rows' word-pair (shingle) sets</dd>"
                "<dt>C</dt><dd>containment: the share of the shorter row's word pairs found in the other</dd>"
                "<dt>cos</dt><dd>cosine similarity of the two rows' embeddings (semantic tier)</dd>"
                "<dt>wC</dt><dd>weighted containment: the rarity-weighted share of the held-out row's word pairs found "
                "in the seen row; it sets the grade</dd><dt>cluster</dt><dd>the leak cluster the link joins (its rows "
                "move together); empty for a link that moves no rows</dd></dl>\n"
                "<noscript><p class=\"warn\">The link list needs JavaScript; every link is in pairs.jsonl.</p></noscript>\n"
                "<div id=\"la-review\" hidden><div id=\"la-controls\">"
                "<label>kind <select id=\"la-kind\"><option value=\"0\">any</option></select></label>"
                "<label>grade <select id=\"la-grade\"><option value=\"-1\">any</option><option value=\"3\">copy</option>"
                "<option value=\"2\">near</option><option value=\"1\">related</option><option value=\"0\">none (family, "
                "time)</option></select></label>"
                "<label>gate <select id=\"la-gates\"><option value=\"-1\">any</option><option value=\"1\">fails the "
                "gate</option><option value=\"0\">does not</option></select></label>"
                "<label>partition <select id=\"la-part\"><option value=\"-1\">any</option></select></label>"
                "<label>text <input type=\"search\" id=\"la-q\" placeholder=\"id or words of either row\"></label>"
                "<label><input type=\"checkbox\" id=\"la-group\" checked> at most 3 links per cluster</label>"
                "<label>per page <select id=\"la-size\"><option>25</option><option selected>50</option><option>100</option>"
                "<option>200</option></select></label><button id=\"la-reset\">review order</button>"
                "<span id=\"la-count\"></span></div>\n"
                "<div class=\"pager\"><button id=\"la-first\">first</button><button id=\"la-prev\">previous</button>"
                "<span id=\"la-page\"></span><button id=\"la-next\">next</button><button id=\"la-last\">last</button></div>\n"
                "<table id=\"la-links\"><colgroup><col style=\"width:5em\"><col style=\"width:10em\"><col style=\"width:4.2em\">"
                "<col style=\"width:4.2em\"><col style=\"width:4.2em\"><col style=\"width:4.2em\"><col><col>"
                "<col style=\"width:5em\"></colgroup><thead><tr><th class=\"sort\" data-col=\"grade\">grade</th>"
                "<th class=\"sort\" data-col=\"kinds\">kinds</th><th class=\"sort\" data-col=\"j\" title=\"Jaccard\">J</th>"
                "<th class=\"sort\" data-col=\"c\" title=\"containment\">C</th><th class=\"sort\" data-col=\"cos\" "
                "title=\"cosine\">cos</th><th class=\"sort\" data-col=\"wc\" title=\"weighted containment\">wC</th>"
                "<th class=\"sort\" data-col=\"a\">seen row</th><th class=\"sort\" data-col=\"b\">held-out row</th>"
                "<th class=\"sort\" data-col=\"cluster\">cluster</th></tr></thead><tbody id=\"la-body\"></tbody></table>\n"
                "<section id=\"la-pair\" class=\"panel\" hidden><h3 id=\"la-pair-title\"></h3><p id=\"la-pair-facts\"></p>"
                "<p id=\"la-pair-cluster\"></p><div id=\"la-frame\" hidden><h3>Shared template frame</h3><p class=\"muted\">"
                "The held-out row's words that the seen row also has, … where they differ: the template both rows "
                "follow. It says little by itself; the words highlighted below as only on one side are the slots.</p>"
                "<div class=\"frame\" id=\"la-frame-text\"></div></div>"
                "<p class=\"key\"><span class=\"same\">shared span</span><span class=\"only-a\">only in the seen row</span>"
                "<span class=\"only-b\">only in the held-out row</span></p><div class=\"sides\"><div><h3 id=\"la-side-a-head\">"
                "</h3><div class=\"side\" id=\"la-side-a\"></div></div><div><h3 id=\"la-side-b-head\"></h3><div class=\"side\" "
                "id=\"la-side-b\"></div></div></div><p class=\"muted\" id=\"la-cut\"></p></section>\n"
                "<section id=\"la-cluster\" class=\"panel\" hidden><h3 id=\"la-cluster-title\"></h3>"
                "<p id=\"la-cluster-facts\"></p><p><button class=\"linkish\" id=\"la-cluster-first\">open its first "
                "link</button></p><div id=\"la-cluster-members\"></div></section></div>\n");
}

la_status la_report_html(const la_report *r, la_buf *b)
{
    const la_table *t = r->table;
    const la_row *rows = la_table_rows_const(t);
    size_t orphans;
    la_part_counts *pc = la_report_count_parts(r, &orphans);
    if (!pc) return la_error(LA_ENOMEM, "out of memory writing report.html");
    la_heldout_stats s;
    if (la_report_heldout_stats(r, &s) != LA_OK) b->failed = 1; /* out of memory */
    const char *held = la_table_part_name(t, r->heldout);

    la_buf_puts(b, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>leakaudit report</title>"
                   "<style>");
    la_buf_puts(b, la_review_css);
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

    if (r->pairs->n) review_section(r, b);
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
                   "the manifests, quarantine.jsonl, rejects.jsonl.</p>\n");
    if (r->pairs->n) {
        la_buf_puts(b, "<script type=\"application/json\" id=\"la-data\">");
        la_status ds = la_report_review_data(r, b);
        la_buf_puts(b, "</script>\n<script>\n");
        la_buf_puts(b, la_review_js);
        la_buf_puts(b, "</script>\n");
        if (ds != LA_OK) b->failed = 1;
    }
    la_buf_puts(b, "</body></html>\n");
    free(pc);
    return la_buf_status(b);
}
