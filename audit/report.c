/* report.c - writers for the audit report files (see report.h and docs/report-schema.md). */
#include "report.h"
#include "la_alloc.h"
#include "la_sort.h"
#include "report_model.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char *part_name(const la_report *r, uint32_t p)
{
    if (p == LA_OUT_QUARANTINE) return "quarantine";
    return la_table_part_name(r->table, p);
}

void la_report_summarize(la_report *r)
{
    int leaks = 0;
    for (size_t k = 0; k < r->pairs->n && !leaks; k++)
        if (la_report_link_fails(r, k, -1)) leaks = 1;
    if ((la_gate_kinds(&r->gate) & LA_KIND_TIME) && la_report_time_failing(r)) leaks = 1;
    r->leaks = leaks;
    r->exit_code = leaks ? 1 : 0;
}

void la_report_kinds_json(la_buf *b, uint32_t kinds)
{
    la_buf_putc(b, '[');
    int first = 1;
    for (int i = 0; i < LA_KIND_COUNT; i++)
        if (kinds & (1u << i)) {
            if (!first) la_buf_putc(b, ',');
            la_buf_json_str(b, la_kind_name(1u << i));
            first = 0;
        }
    la_buf_putc(b, ']');
}

void la_report_kinds_text(la_buf *b, uint32_t kinds, const char *sep)
{
    int first = 1;
    for (int i = 0; i < LA_KIND_COUNT; i++)
        if (kinds & (1u << i)) {
            if (!first) la_buf_puts(b, sep);
            la_buf_puts(b, la_kind_name(1u << i));
            first = 0;
        }
}

static void interval_json(la_buf *b, const char *name, size_t n, double p)
{
    la_buf_printf(b, "\"%s\":{\"n\":%zu,\"accuracy\":", name, n);
    la_buf_json_num(b, p);
    la_buf_puts(b, ",\"standard_error\":");
    la_buf_json_num(b, n ? sqrt(p * (1 - p) / (double)n) : NAN);
    la_buf_puts(b, ",\"ci95_half_width\":");
    la_buf_json_num(b, la_stat_ci95(p, n));
    la_buf_putc(b, '}');
}

void la_report_inputs_json(const la_report *r, la_buf *b)
{
    la_buf_puts(b, "  \"inputs\": [");
    for (size_t f = 0; f < r->nfiles; f++) {
        const la_file_info *fi = &r->files[f];
        la_buf_puts(b, f ? ",\n    {\"path\": " : "\n    {\"path\": ");
        la_buf_json_str(b, fi->path);
        la_buf_printf(b, ", \"format\": \"%s\", \"compression\": \"%s\", \"bytes\": %zu, \"blake2b_256\": \"%s\", "
                         "\"rows_read\": %zu, \"rows_rejected\": %zu, \"ids_generated\": %s}",
                      fi->format, fi->compression, fi->bytes, fi->blake2b_hex, fi->rows_read, fi->rows_rejected,
                      fi->ids_generated ? "true" : "false");
    }
    la_buf_puts(b, "\n  ],\n");
}

void la_report_backend_json(const la_report *r, la_buf *b)
{
    la_buf_puts(b, ", \"backend\": ");
    la_buf_json_str(b, r->backend ? r->backend : "cpu");
    la_buf_puts(b, ", \"backend_note\": ");
    la_buf_json_str(b, r->backend_note ? r->backend_note : "");
}

void la_report_timings_json(const la_report *r, la_buf *b)
{
    la_buf_puts(b, "\"timings\": {");
    for (size_t k = 0; k < r->ntimings; k++) la_buf_printf(b, "%s\"%s\": %.3f", k ? ", " : "", r->timings[k].name, r->timings[k].seconds);
    la_buf_putc(b, '}');
}

/* ---- report.json ---- */

/* report.json "parameters": the settings the run was made with, as given. */
static void json_parameters(const la_report *r, la_buf *b)
{
    char date[11];
    la_buf_puts(b, ",\n  \"parameters\": {\"heldout\": ");
    la_buf_json_str(b, part_name(r, r->heldout));
    la_buf_puts(b, ", \"cutoff\": ");
    if (r->cutoff == LA_NO_DATE) la_buf_puts(b, "null");
    else {
        la_date_format(r->cutoff, date);
        la_buf_json_str(b, date);
    }
    la_buf_puts(b, ", \"normalize\": ");
    la_buf_json_str(b, r->normalize);
    la_buf_puts(b, ", \"on_invalid\": ");
    la_buf_json_str(b, r->on_invalid);
    la_buf_puts(b, ", \"date_format\": ");
    la_buf_json_str(b, r->date_format);
    if (r->fields_json) la_buf_printf(b, ", \"fields\": %s", r->fields_json);
    la_buf_puts(b, ", \"fail_on\": ");
    char gate[128];
    la_gate_format(&r->gate, gate, sizeof gate);
    la_buf_json_str(b, gate);
    la_buf_puts(b, ", \"resolve\": ");
    la_buf_json_str(b, la_resolve_name(r->resolve));
    la_buf_printf(b, ", \"max_cluster\": %zu", r->max_cluster);
    la_buf_puts(b, ", \"backend\": ");
    la_buf_json_str(b, r->backend);
    for (size_t k = 0; k < r->nparams; k++) {
        la_buf_puts(b, ", ");
        la_buf_json_str(b, r->param_names[k]);
        la_buf_puts(b, ": ");
        la_buf_json_str(b, r->param_values[k]);
    }
    la_buf_puts(b, "},\n");
}

/* report.json "counts": rows read, placed, rejected and quarantined, overall and per partition. */
static void json_counts(const la_report *r, const la_part_counts *pc, size_t orphans, la_buf *b)
{
    const la_table *t = r->table;
    const la_row *rows = la_table_rows_const(t);
    size_t n = la_table_nrows(t);
    size_t placed = n, rejected = r->nrejects, quarantined = 0, empty = 0;
    for (size_t i = 0; i < n; i++) {
        if (r->audit->out[i] == LA_OUT_QUARANTINE) quarantined++;
        if (!rows[i].norm || rows[i].norm_len == 0) empty++;
    }
    la_buf_printf(b, "  \"counts\": {\"rows_read\": %zu, \"rows_placed\": %zu, \"rows_rejected\": %zu, "
                     "\"rows_quarantined\": %zu, \"rejected_without_partition\": %zu, \"rows_without_text\": %zu, "
                     "\"partitions\": {",
                  placed + rejected, placed, rejected, quarantined, orphans, empty);
    for (uint32_t p = 0; p < la_table_npart(t); p++) {
        if (p) la_buf_puts(b, ", ");
        la_buf_json_str(b, la_table_part_name(t, p));
        la_buf_printf(b, ": {\"read\": %zu, \"kept\": %zu, \"quarantined\": %zu, \"rejected\": %zu}", pc[p].read,
                      pc[p].kept, pc[p].quarantined, pc[p].rejected);
    }
    la_buf_puts(b, "}},\n");
}

/* findings.families: families that cross the boundary or span the cutoff, members per partition. */
static void json_families(const la_report *r, la_buf *b)
{
    const la_table *t = r->table;
    const la_row *rows = la_table_rows_const(t);
    la_buf_puts(b, "    \"families\": [");
    for (size_t f = 0; f < r->audit->nfamilies; f++) {
        const la_family_finding *ff = &r->audit->families[f];
        la_buf_puts(b, f ? ",\n      {\"family\": " : "\n      {\"family\": ");
        la_buf_json_str(b, ff->family);
        la_buf_printf(b, ", \"crosses\": %s, \"spans_cutoff\": %s, \"members\": {", ff->crosses ? "true" : "false",
                      ff->spans_cutoff ? "true" : "false");
        uint32_t cur = UINT32_MAX;
        for (size_t i = 0; i < ff->nrows; i++) {
            const la_row *row = &rows[ff->rows[i]];
            if (row->part != cur) {
                if (cur != UINT32_MAX) la_buf_puts(b, "], ");
                la_buf_json_str(b, la_table_part_name(t, row->part));
                la_buf_puts(b, ": [");
                cur = row->part;
            } else {
                la_buf_putc(b, ',');
            }
            la_buf_json_str(b, row->id);
        }
        la_buf_puts(b, "]}}");
    }
    la_buf_puts(b, r->audit->nfamilies ? "\n    ],\n" : "],\n");
}

/* findings.time: rows dated on the wrong side of the cutoff. */
static void json_time(const la_report *r, la_buf *b)
{
    const la_table *t = r->table;
    const la_row *rows = la_table_rows_const(t);
    char date[11];
    la_buf_puts(b, "    \"time\": [");
    for (size_t k = 0; k < r->audit->ntime; k++) {
        const la_row *row = &rows[r->audit->time_rows[k]];
        la_date_format(row->date, date);
        la_buf_puts(b, k ? ",\n      {\"id\": " : "\n      {\"id\": ");
        la_buf_json_str(b, row->id);
        la_buf_puts(b, ", \"split\": ");
        la_buf_json_str(b, la_table_part_name(t, row->part));
        la_buf_printf(b, ", \"available_on\": \"%s\", \"rule\": \"%s\"}", date,
                      row->part == r->heldout ? "held-out row dated before the cutoff"
                                              : "seen row dated on or after the cutoff");
    }
    la_buf_puts(b, r->audit->ntime ? "\n    ],\n" : "],\n");
}

/* findings.label_conflicts: groups of same-text rows with different labels. */
static void json_label_conflicts(const la_report *r, la_buf *b)
{
    const la_table *t = r->table;
    const la_row *rows = la_table_rows_const(t);
    la_buf_puts(b, "    \"label_conflicts\": [");
    for (size_t g = 0; g < r->nconflicts; g++) {
        la_buf_puts(b, g ? ",\n      [" : "\n      [");
        for (size_t k = r->conflict_start[g]; k < r->conflict_start[g + 1]; k++) {
            const la_row *row = &rows[r->conflict_rows[k]];
            la_buf_puts(b, k > r->conflict_start[g] ? ", {\"id\": " : "{\"id\": ");
            la_buf_json_str(b, row->id);
            la_buf_puts(b, ", \"split\": ");
            la_buf_json_str(b, la_table_part_name(t, row->part));
            la_buf_puts(b, ", \"label\": ");
            la_buf_json_str(b, row->label);
            la_buf_putc(b, '}');
        }
        la_buf_putc(b, ']');
    }
    la_buf_puts(b, r->nconflicts ? "\n    ],\n" : "],\n");
}

/* findings.suspect_clusters: clusters over --max-cluster rows and their weakest links. */
static void json_suspects(const la_report *r, la_buf *b)
{
    const la_row *rows = la_table_rows_const(r->table);
    la_buf_puts(b, "    \"suspect_clusters\": [");
    for (size_t k = 0; k < r->audit->nsuspects; k++) {
        const la_suspect *sus = &r->audit->suspects[k];
        la_buf_printf(b, "%s{\"cluster\": %u, \"rows\": %zu, \"weakest_links\": [", k ? ",\n      " : "\n      ",
                      sus->cluster, sus->nrows);
        for (size_t w = 0; w < sus->nweakest; w++) {
            const la_pair *pp = &sus->weakest[w];
            la_buf_puts(b, w ? ", {\"id_a\": " : "{\"id_a\": ");
            la_buf_json_str(b, rows[pp->a].id);
            la_buf_puts(b, ", \"id_b\": ");
            la_buf_json_str(b, rows[pp->b].id);
            la_buf_puts(b, ", \"kinds\": ");
            la_report_kinds_json(b, pp->kinds);
            la_buf_puts(b, ", \"strength\": ");
            la_buf_json_num(b, la_pair_strength(pp));
            la_buf_putc(b, '}');
        }
        la_buf_puts(b, "]}");
    }
    la_buf_puts(b, r->audit->nsuspects ? "\n    ]" : "]");
}

/* report.json "statistics": the held-out intervals before and after quarantine, and what a random
 * split would have mixed. */
static void json_statistics(const la_report *r, la_buf *b)
{
    la_heldout_stats s;
    if (la_report_heldout_stats(r, &s) != LA_OK) b->failed = 1; /* out of memory */
    double p = s.scored_before ? s.acc_before : r->assumed_accuracy;
    double pa = s.scored_after ? s.acc_after : r->assumed_accuracy;
    la_buf_printf(b, "  \"statistics\": {\n    \"heldout\": {\"partition\": ");
    la_buf_json_str(b, part_name(r, r->heldout));
    la_buf_printf(b, ", \"accuracy_source\": \"%s\", ", s.scored_before ? "scores" : "assumed");
    interval_json(b, "before", s.before, p);
    la_buf_puts(b, ", ");
    interval_json(b, "after", s.after, pa);
    if (s.scored_leaked) {
        la_buf_puts(b, ", ");
        interval_json(b, "leaked", s.scored_leaked, s.acc_leaked);
        la_buf_puts(b, ", \"inflation\": ");
        la_buf_json_num(b, s.acc_before - s.acc_after);
    }
    la_buf_printf(b, ", \"wide_interval\": %s},\n", la_stat_ci95(pa, s.after) > 0.05 || s.after == 0 ? "true" : "false");
    la_buf_printf(b, "    \"random_split\": {\"groups\": %zu, \"groups_with_several_rows\": %zu, \"heldout_share\": ",
                  s.groups, s.multi_groups);
    la_buf_json_num(b, s.share);
    la_buf_puts(b, ", \"expected_mixed_groups\": ");
    la_buf_json_num(b, s.expected_mixed);
    la_buf_printf(b, ", \"observed_mixed_groups\": %zu}\n  },\n", s.observed_mixed);
}

la_status la_report_json(const la_report *r, la_buf *b)
{
    size_t orphans;
    la_part_counts *pc = la_report_count_parts(r, &orphans);
    if (!pc) return la_error(LA_ENOMEM, "out of memory writing report.json");

    la_buf_printf(b, "{\n  \"schema_version\": %d,\n  \"tool\": {\"name\": \"leakaudit\", \"version\": ",
                  LA_REPORT_SCHEMA_VERSION);
    la_buf_json_str(b, la_version());
    la_buf_puts(b, "},\n  \"command\": ");
    la_buf_json_str(b, r->command);

    json_parameters(r, b);
    la_report_inputs_json(r, b);
    json_counts(r, pc, orphans, b);

    /* findings */
    la_buf_printf(b, "  \"findings\": {\n    \"pairs\": %zu,\n    \"gating_pairs\": %zu,\n    \"heldout_rows_compared\": %zu,\n"
                     "    \"pairs_by_kind\": {",
                  r->pairs->n, la_report_gating_pairs(r), r->heldout_compared);
    for (int i = 0; i < LA_KIND_COUNT; i++)
        la_buf_printf(b, "%s\"%s\": %zu", i ? ", " : "", la_kind_name(1u << i), la_report_kind_count(r, 1u << i));
    la_buf_puts(b, "},\n    \"pairs_by_grade\": {");
    for (int g = LA_GRADE_COPY; g >= LA_GRADE_RELATED; g--)
        la_buf_printf(b, "%s\"%s\": %zu", g < LA_GRADE_COPY ? ", " : "", la_grade_name(g), la_report_grade_count(r, 0, g));
    la_buf_printf(b, ", \"held_related_by_numbers\": %zu, \"held_related_by_digits\": %zu, \"near_by_slots\": %zu",
                  r->template_numbers, r->digits_related, r->slot_upgrades);
    la_buf_printf(b, "},\n    \"clusters\": %zu,\n    \"exact\": {\"cross_groups\": %zu, \"duplicates_within\": %zu, "
                     "\"label_conflicts\": %zu},\n",
                  r->audit->nclusters, r->exact_cross_groups, r->ndup, r->nconflicts);

    json_families(r, b);
    json_time(r, b);
    json_label_conflicts(r, b);
    json_suspects(r, b);
    for (size_t k = 0; k < r->nsections; k++)
        if (r->sections[k].json) {
            la_buf_puts(b, ",\n    ");
            la_buf_json_str(b, r->sections[k].name);
            la_buf_puts(b, ": ");
            la_buf_puts(b, r->sections[k].json);
        }
    la_report_delta_json(r, b);
    la_buf_puts(b, "\n  },\n");

    json_statistics(r, b);
    la_buf_printf(b, "  \"leaks\": %s,\n  \"exit_code\": %d,\n  ", r->leaks ? "true" : "false", r->exit_code);
    la_report_timings_json(r, b);
    la_buf_puts(b, "\n}\n");
    free(pc);
    return la_buf_status(b);
}

/* ---- report.md ---- */

static void md_interval(la_buf *b, size_t n, double p)
{
    if (n == 0) {
        la_buf_puts(b, "no rows");
        return;
    }
    la_buf_printf(b, "%zu rows, %.1f%% ± %.1f points (95%% interval)", n, 100 * p, 100 * la_stat_ci95(p, n));
}

la_status la_report_md(const la_report *r, la_buf *b)
{
    const la_table *t = r->table;
    const la_row *rows = la_table_rows_const(t);
    size_t orphans;
    la_part_counts *pc = la_report_count_parts(r, &orphans);
    if (!pc) return la_error(LA_ENOMEM, "out of memory writing report.md");
    la_heldout_stats s;
    if (la_report_heldout_stats(r, &s) != LA_OK) b->failed = 1; /* out of memory */
    const char *held = part_name(r, r->heldout);

    la_buf_puts(b, "# leakaudit report\n\n");
    size_t gating = la_report_gating_pairs(r), related = la_report_grade_count(r, 0, LA_GRADE_RELATED);
    if (r->leaks)
        la_buf_printf(b, "**Leaks found** across the `%s` boundary: %zu linked pairs that fail the gate in %zu clusters, "
                         "%zu rows dated on the wrong side of the cutoff. Exit code %d.\n\n",
                      held, gating, r->audit->nclusters, r->audit->ntime, r->exit_code);
    else
        la_buf_printf(b, "**No leaks found** across the `%s` boundary%s. Exit code %d.\n\n", held,
                      r->pairs->n ? " among the kinds and grades that --fail-on names" : "", r->exit_code);
    la_buf_printf(b, "%zu of %zu `%s` rows were compared by their text against the other partitions.", r->heldout_compared,
                  s.before, held);
    if (related)
        la_buf_printf(b, " %zu %s only `related` (shared wording or a template, not the item): listed below and in "
                         "pairs.jsonl, %s not fail the run or move rows.",
                      related, related == 1 ? "link is" : "links are", related == 1 ? "it does" : "they do");
    la_buf_puts(b, "\n\n");

    la_buf_puts(b, "| evidence | pairs | copy | near | related |\n|---|---:|---:|---:|---:|\n");
    for (int i = 0; i < LA_KIND_COUNT; i++) {
        uint32_t bit = 1u << i;
        la_buf_printf(b, "| %s | %zu |", la_kind_name(bit), la_report_kind_count(r, bit));
        if (bit & (LA_KIND_FAMILY | LA_KIND_TIME)) la_buf_puts(b, " | | |\n");
        else
            la_buf_printf(b, " %zu | %zu | %zu |\n", la_report_grade_count(r, bit, LA_GRADE_COPY),
                          la_report_grade_count(r, bit, LA_GRADE_NEAR), la_report_grade_count(r, bit, LA_GRADE_RELATED));
    }
    la_buf_printf(b, "\nTime: %zu rows on the wrong side of the cutoff. Exact: %zu duplicate rows within a partition, "
                     "%zu label conflicts.\n\n",
                  r->audit->ntime, r->ndup, r->nconflicts);
    la_report_delta_md(r, b);
    size_t empty = 0;
    for (size_t i = 0; i < la_table_nrows(t); i++) empty += !rows[i].norm || rows[i].norm_len == 0;
    if (empty)
        la_buf_printf(b, "> **Note:** %zu rows have no text after normalization; no text evidence (exact, near, "
                         "semantic) can link them.\n\n",
                      empty);

    la_buf_puts(b, "| partition | read | kept | quarantined | rejected |\n|---|---:|---:|---:|---:|\n");
    size_t tr = 0, tk = 0, tq = 0, tj = 0;
    for (uint32_t p = 0; p < la_table_npart(t); p++) {
        la_buf_printf(b, "| %s | %zu | %zu | %zu | %zu |\n", la_table_part_name(t, p), pc[p].read, pc[p].kept,
                      pc[p].quarantined, pc[p].rejected);
        tr += pc[p].read, tk += pc[p].kept, tq += pc[p].quarantined, tj += pc[p].rejected;
    }
    if (orphans) la_buf_printf(b, "| (no partition) | %zu | 0 | 0 | %zu |\n", orphans, orphans);
    la_buf_printf(b, "| **all** | %zu | %zu | %zu | %zu |\n\n", tr + orphans, tk, tq, tj + orphans);

    /* statistics */
    double p = s.scored_before ? s.acc_before : r->assumed_accuracy;
    double pa = s.scored_after ? s.acc_after : r->assumed_accuracy;
    la_buf_printf(b, "## What the clean `%s` set can support\n\n", held);
    la_buf_printf(b, "Accuracy %s.\n\n", s.scored_before ? "observed from the per-row scores"
                                                         : "assumed at 90% (no per-row scores given)");
    la_buf_puts(b, "- Before quarantine: ");
    md_interval(b, s.before, p);
    la_buf_puts(b, "\n- After quarantine (clean): ");
    md_interval(b, s.after, pa);
    la_buf_puts(b, "\n");
    if (s.scored_leaked) {
        la_buf_puts(b, "- Leaked rows: ");
        md_interval(b, s.scored_leaked, s.acc_leaked);
        la_buf_printf(b, "\n- The leak inflates the score by %+.1f points (all rows vs clean rows).\n",
                      100 * (s.acc_before - s.acc_after));
    }
    la_buf warn = {0};
    if (la_report_small_set_warning(&warn, "The clean set", pa, s.after))
        la_buf_printf(b, "\n> **Warning:** %s\n", warn.p);
    if (warn.failed) b->failed = 1;
    la_buf_free(&warn);
    if (s.groups) {
        la_buf_putc(b, '\n');
        la_report_random_split_sentence(b, &s);
        la_buf_putc(b, '\n');
    }

    /* top leaks: the links that fail the gate or move rows, then the related ones apart */
    if (r->pairs->n) {
        size_t *idx = la_report_ranked_pairs(r);
        if (!idx) {
            free(pc);
            return la_error(LA_ENOMEM, "out of memory writing report.md");
        }
        size_t nlinks = r->pairs->n - related, top = nlinks < 10 ? nlinks : 10;
        if (top) {
            la_buf_printf(b, "\n## Top leaks (%zu of %zu pairs; all in pairs.jsonl)\n\n", top, nlinks);
            la_buf_puts(b, "| grade | kinds | seen id | seen text | held-out id | held-out text |\n|---|---|---|---|---|---|\n");
        }
        for (size_t k = 0; k < top; k++) {
            const la_pair *pp = &r->pairs->v[idx[k]];
            la_buf_printf(b, "| %s | ", la_grade_name(pp->grade) ? la_grade_name(pp->grade) : "");
            la_report_kinds_text(b, pp->kinds, ", ");
            la_buf_puts(b, " | ");
            la_buf_md_cell(b, rows[pp->a].id, 40);
            la_buf_puts(b, " | ");
            la_buf_md_cell(b, rows[pp->a].text, 80);
            la_buf_puts(b, " | ");
            la_buf_md_cell(b, rows[pp->b].id, 40);
            la_buf_puts(b, " | ");
            la_buf_md_cell(b, rows[pp->b].text, 80);
            la_buf_puts(b, " |\n");
        }
        size_t rtop = related < 10 ? related : 10;
        if (rtop) {
            la_buf_printf(b, "\n## Related, not gating (%zu of %zu)\n\nThese share wording or a template with a held-out row "
                             "but not the item itself (docs/grades.md). The shared frame is the held-out row's words that "
                             "the seen row also has; … marks what differs.\n\n",
                          rtop, related);
            la_buf_puts(b, "| kinds | seen id | held-out id | held-out text | shared frame |\n|---|---|---|---|---|\n");
            la_buf frame = {0};
            for (size_t k = nlinks; k < nlinks + rtop; k++) {
                const la_pair *pp = &r->pairs->v[idx[k]];
                la_buf_puts(b, "| ");
                la_report_kinds_text(b, pp->kinds, ", ");
                la_buf_puts(b, " | ");
                la_buf_md_cell(b, rows[pp->a].id, 40);
                la_buf_puts(b, " | ");
                la_buf_md_cell(b, rows[pp->b].id, 40);
                la_buf_puts(b, " | ");
                la_buf_md_cell(b, rows[pp->b].text, 80);
                la_buf_puts(b, " | ");
                frame.n = 0;
                la_report_shared_frame(r, pp, &frame);
                la_buf_md_cell(b, frame.n ? frame.p : "", 120);
                la_buf_puts(b, " |\n");
            }
            la_buf_free(&frame);
        }
        free(idx);
    }
    if (r->audit->nsuspects) {
        la_buf_printf(b, "\n## Suspect clusters\n\n> **Check these before acting:** %zu clusters have more than %zu rows, "
                         "which usually means chaining through weak links. Their weakest links:\n\n",
                      r->audit->nsuspects, r->max_cluster);
        la_buf_puts(b, "| cluster | rows | weakest link | kinds | strength |\n|---:|---:|---|---|---:|\n");
        for (size_t k = 0; k < r->audit->nsuspects && k < 20; k++) {
            const la_suspect *sus = &r->audit->suspects[k];
            for (size_t w = 0; w < sus->nweakest; w++) {
                const la_pair *pp = &sus->weakest[w];
                la_buf_printf(b, "| %u | %zu | ", sus->cluster, sus->nrows);
                la_buf_md_cell(b, rows[pp->a].id, 40);
                la_buf_puts(b, " – ");
                la_buf_md_cell(b, rows[pp->b].id, 40);
                la_buf_puts(b, " | ");
                la_report_kinds_text(b, pp->kinds, ", ");
                la_buf_printf(b, " | %.3f |\n", la_pair_strength(pp));
            }
        }
    }
    if (r->audit->nfamilies) {
        la_buf_puts(b, "\n## Families\n\n| family | crosses | spans cutoff | rows |\n|---|---|---|---:|\n");
        size_t shown = 0;
        for (size_t f = 0; f < r->audit->nfamilies && shown < 20; f++, shown++) {
            const la_family_finding *ff = &r->audit->families[f];
            la_buf_puts(b, "| ");
            la_buf_md_cell(b, ff->family, 40);
            la_buf_printf(b, " | %s | %s | %zu |\n", ff->crosses ? "yes" : "no", ff->spans_cutoff ? "yes" : "no",
                          ff->nrows);
        }
        if (r->audit->nfamilies > 20)
            la_buf_printf(b, "\n%zu more families in report.json.\n", r->audit->nfamilies - 20);
    }
    for (size_t k = 0; k < r->nsections; k++)
        if (r->sections[k].md) la_buf_puts(b, r->sections[k].md);
    for (size_t f = 0; f < r->nfiles; f++)
        if (r->files[f].ids_generated) {
            la_buf_puts(b, "\nNote: `");
            la_buf_md_cell(b, r->files[f].path, 200);
            la_buf_puts(b, "` has no id field; its rows got ids FILE:LINE.\n");
        }
    if (r->nrejects) la_buf_printf(b, "\n%zu rows were rejected; see rejects.jsonl.\n", r->nrejects);
    la_buf_printf(b, "\nBackend: %s", r->backend ? r->backend : "cpu");
    if (r->backend_note && r->backend_note[0]) {
        la_buf_puts(b, " (");
        la_buf_md_cell(b, r->backend_note, 300);
        la_buf_putc(b, ')');
    }
    la_buf_puts(b, ".\n");
    la_buf_puts(b, "\nFiles: report.json, pairs.jsonl, assignments.jsonl, one manifest per partition, quarantine.jsonl, "
                   "rejects.jsonl.\n");
    free(pc);
    return la_buf_status(b);
}

/* ---- pairs.jsonl ---- */

static void score(la_buf *b, int *first, const char *name, double v)
{
    if (isnan(v)) return;
    la_buf_printf(b, "%s\"%s\":", *first ? "" : ",", name);
    la_buf_printf(b, "%.6g", v);
    *first = 0;
}

la_status la_report_pairs_jsonl(const la_report *r, la_buf *b)
{
    const la_row *rows = la_table_rows_const(r->table);
    la_buf frame = {0};
    for (size_t k = 0; k < r->pairs->n; k++) {
        const la_pair *p = &r->pairs->v[k];
        la_buf_puts(b, "{\"id_a\":");
        la_buf_json_str(b, rows[p->a].id);
        la_buf_puts(b, ",\"split_a\":");
        la_buf_json_str(b, la_table_part_name(r->table, rows[p->a].part));
        la_buf_puts(b, ",\"id_b\":");
        la_buf_json_str(b, rows[p->b].id);
        la_buf_puts(b, ",\"split_b\":");
        la_buf_json_str(b, la_table_part_name(r->table, rows[p->b].part));
        la_buf_puts(b, ",\"kinds\":");
        la_report_kinds_json(b, p->kinds);
        la_buf_puts(b, ",\"grade\":");
        if (la_grade_name(p->grade)) la_buf_json_str(b, la_grade_name(p->grade));
        else la_buf_puts(b, "null");
        la_buf_printf(b, ",\"gates\":%s,\"cluster\":", la_gate_fails(&r->gate, p) ? "true" : "false");
        if (la_audit_pair_moves(r->audit, p)) la_buf_printf(b, "%u", r->audit->cluster[p->a]);
        else la_buf_puts(b, "null");
        la_buf_puts(b, ",\"scores\":{");
        int first = 1;
        score(b, &first, "jaccard", p->jaccard);
        score(b, &first, "containment", p->containment);
        score(b, &first, "minhash", p->minhash);
        score(b, &first, "cosine", p->cosine);
        score(b, &first, "margin", p->margin);
        if (p->simhash_dist >= 0) score(b, &first, "simhash_distance", p->simhash_dist);
        score(b, &first, "weighted_containment", p->wcontainment);
        score(b, &first, "weighted_words", p->wwords);
        score(b, &first, "slot_evidence", p->slot_evidence);
        la_buf_putc(b, '}');
        if (p->nums_held)
            la_buf_printf(b, ",\"numbers\":{\"held\":%u,\"shared\":%u,\"changed\":%u}", p->nums_held, p->nums_shared,
                          p->nums_changed);
        if (p->grade == LA_GRADE_RELATED) {
            frame.n = 0;
            la_report_shared_frame(r, p, &frame);
            if (frame.n) {
                la_buf_puts(b, ",\"shared_frame\":");
                la_buf_json_str(b, frame.p);
            }
        }
        la_report_delta_pair_json(r, k, b);
        la_buf_puts(b, "}\n");
    }
    la_status fs = la_buf_status(&frame);
    la_buf_free(&frame);
    if (fs != LA_OK) return la_error(LA_ENOMEM, "out of memory writing pairs.jsonl");
    return la_buf_status(b);
}

/* ---- assignments.jsonl ---- */

/* One JSON string holding prefix followed by s. */
static void json_prefixed(la_buf *b, const char *prefix, const char *s)
{
    la_buf tmp = {0};
    la_buf_puts(&tmp, prefix);
    la_buf_puts(&tmp, s);
    if (tmp.failed) b->failed = 1;
    else la_buf_json_strn(b, tmp.p, tmp.n);
    la_buf_free(&tmp);
}

la_status la_report_assignments_jsonl(const la_report *r, la_buf *b)
{
    const la_table *t = r->table;
    const la_row *rows = la_table_rows_const(t);
    size_t n = la_table_nrows(t);
    const la_pairs *pairs = r->pairs;
    /* adjacency: for each row, its links (pairs are sorted by b, then a) */
    size_t *start = calloc(n + 1, sizeof *start);
    uint32_t *adj = malloc((2 * pairs->n + 1) * sizeof *adj);
    uint32_t *order = la_malloc_n(n, sizeof *order);
    if (!start || !adj || !order) {
        free(start);
        free(adj);
        free(order);
        return la_error(LA_ENOMEM, "out of memory writing assignments.jsonl");
    }
    for (size_t k = 0; k < pairs->n; k++) start[pairs->v[k].a + 1]++, start[pairs->v[k].b + 1]++;
    for (size_t i = 0; i < n; i++) start[i + 1] += start[i];
    size_t *fill = la_calloc_n(n, sizeof *fill);
    if (!fill) {
        free(start);
        free(adj);
        free(order);
        return la_error(LA_ENOMEM, "out of memory writing assignments.jsonl");
    }
    for (size_t k = 0; k < pairs->n; k++) {
        const la_pair *p = &pairs->v[k];
        adj[start[p->a] + fill[p->a]++] = (uint32_t)k;
        adj[start[p->b] + fill[p->b]++] = (uint32_t)k;
    }
    free(fill);
    for (size_t i = 0; i < n; i++) order[i] = (uint32_t)i;
    la_sort_rows_by_id(order, n, rows);
    char date[11], cut[11];
    if (r->cutoff != LA_NO_DATE) la_date_format(r->cutoff, cut);
    la_buf link = {0};

    for (size_t oi = 0; oi < n; oi++) {
        size_t i = order[oi];
        const la_row *row = &rows[i];
        la_buf_puts(b, "{\"id\":");
        la_buf_json_str(b, row->id);
        la_buf_puts(b, ",\"split_in\":");
        la_buf_json_str(b, la_table_part_name(t, row->part));
        la_buf_puts(b, ",\"split_out\":");
        la_buf_json_str(b, part_name(r, r->audit->out[i]));
        la_buf_puts(b, ",\"reasons\":[");
        int first = 1;
        uint32_t why = r->audit->why[i];
        if (why & LA_WHY_LINKED) {
            size_t nl = start[i + 1] - start[i], shown = nl < 5 ? nl : 5;
            for (size_t k = 0; k < shown; k++) {
                const la_pair *p = &pairs->v[adj[start[i] + k]];
                uint32_t other = p->a == i ? p->b : p->a;
                link.n = 0; /* one buffer for every link: no allocation a link */
                la_report_kinds_text(&link, p->kinds, "+");
                la_buf_putc(&link, ':');
                la_buf_puts(&link, rows[other].id);
                if (link.failed) b->failed = 1; /* out of memory: the report fails as a whole */
                if (!first) la_buf_putc(b, ',');
                la_buf_json_strn(b, link.p ? link.p : "", link.n);
                first = 0;
            }
            if (nl > shown) la_buf_printf(b, ",\"%zu more links\"", nl - shown);
            la_buf_puts(b, ",\"cluster:");
            la_buf_putu(b, r->audit->cluster[i]);
            la_buf_putc(b, '"');
        }
        if (why & LA_WHY_TIME) {
            la_date_format(row->date, date);
            la_buf_printf(b, "%s\"time:available %s, %s cutoff %s\"", first ? "" : ",", date,
                          row->part == r->heldout ? "before the" : "on or after the", cut);
            first = 0;
        }
        if (why & LA_WHY_SPANS_CUTOFF) {
            la_buf_puts(b, first ? "" : ",");
            json_prefixed(b, "family spans the cutoff:", row->family);
            first = 0;
        }
        if ((why & LA_WHY_DUPLICATE) && r->dup_of) {
            la_buf_puts(b, first ? "" : ",");
            json_prefixed(b, "duplicate-of:", rows[r->dup_of[i]].id);
            first = 0;
        }
        la_buf_puts(b, "]}\n");
    }
    la_buf_free(&link);
    la_report_rejected_assignments(r, 1, b);
    free(start);
    free(adj);
    free(order);
    return la_buf_status(b);
}

void la_report_rejected_assignments(const la_report *r, int with_split_in, la_buf *b)
{
    const la_table *t = r->table;
    for (size_t k = 0; k < r->nrejects; k++) {
        const la_reject *rj = &r->rejects[k];
        la_buf_puts(b, "{\"id\":");
        la_buf_json_str(b, rj->id);
        la_buf_puts(b, ",\"split_in\":");
        la_buf_json_str(b, !with_split_in || rj->part == LA_NO_PART ? NULL : la_table_part_name(t, rj->part));
        la_buf_puts(b, ",\"split_out\":\"rejected\",\"reasons\":[");
        for (size_t m = 0; m < rj->nreasons; m++) {
            if (m) la_buf_putc(b, ',');
            la_buf_json_str(b, rj->reasons[m]);
        }
        la_buf_puts(b, "],\"file\":");
        la_buf_json_str(b, la_table_file_name(t, rj->file));
        la_buf_printf(b, ",\"line\":%u}\n", rj->line);
    }
}

typedef struct cluster_order {
    const la_row *rows;
    const uint32_t *cluster;
} cluster_order;

/* Row indices by cluster, then partition, then id; ctx is a cluster_order. */
static int cmp_cluster_row(const void *x, const void *y, void *ctx)
{
    const cluster_order *o = ctx;
    uint32_t i = *(const uint32_t *)x, j = *(const uint32_t *)y;
    if (o->cluster[i] != o->cluster[j]) return o->cluster[i] < o->cluster[j] ? -1 : 1;
    if (o->rows[i].part != o->rows[j].part) return o->rows[i].part < o->rows[j].part ? -1 : 1;
    return strcmp(o->rows[i].id, o->rows[j].id);
}

la_status la_report_clusters_jsonl(const la_report *r, la_buf *b)
{
    const la_table *t = r->table;
    const la_row *rows = la_table_rows_const(t);
    size_t n = la_table_nrows(t), m = 0, nc = r->audit->nclusters;
    uint32_t *order = la_malloc_n(n, sizeof *order);
    uint32_t *kinds = calloc(nc + 1, sizeof *kinds);
    size_t *npairs = calloc(nc + 1, sizeof *npairs);
    if (!order || !kinds || !npairs) {
        free(order);
        free(kinds);
        free(npairs);
        return la_error(LA_ENOMEM, "out of memory writing clusters.jsonl");
    }
    for (size_t k = 0; k < r->pairs->n; k++) {
        if (!la_audit_pair_moves(r->audit, &r->pairs->v[k])) continue;
        uint32_t c = r->audit->cluster[r->pairs->v[k].a];
        kinds[c] |= r->pairs->v[k].kinds;
        npairs[c]++;
    }
    for (size_t i = 0; i < n; i++)
        if (r->audit->cluster[i]) order[m++] = (uint32_t)i;
    cluster_order co = {rows, r->audit->cluster};
    la_sort(order, m, sizeof *order, cmp_cluster_row, &co);
    for (size_t g = 0; g < m;) {
        uint32_t c = r->audit->cluster[order[g]];
        size_t e = g;
        while (e < m && r->audit->cluster[order[e]] == c) e++;
        int suspect = 0;
        for (size_t k = 0; k < r->audit->nsuspects; k++) suspect |= r->audit->suspects[k].cluster == c;
        la_buf_printf(b, "{\"cluster\":%u,\"rows\":%zu,\"pairs\":%zu,\"kinds\":", c, e - g, npairs[c]);
        la_report_kinds_json(b, kinds[c]);
        la_buf_printf(b, ",\"suspect\":%s,\"members\":{", suspect ? "true" : "false");
        uint32_t cur = UINT32_MAX;
        for (size_t i = g; i < e; i++) {
            const la_row *row = &rows[order[i]];
            if (row->part != cur) {
                if (cur != UINT32_MAX) la_buf_puts(b, "],");
                la_buf_json_str(b, la_table_part_name(t, row->part));
                la_buf_puts(b, ":[");
                cur = row->part;
            } else {
                la_buf_putc(b, ',');
            }
            la_buf_json_str(b, row->id);
        }
        la_buf_puts(b, "]}}\n");
        g = e;
    }
    free(order);
    free(kinds);
    free(npairs);
    return la_buf_status(b);
}

size_t la_report_manifest_rows(const la_report *r, uint32_t out, uint32_t *rows)
{
    size_t n = la_table_nrows(r->table), k = 0;
    for (size_t i = 0; i < n; i++)
        if (r->audit->out[i] == out) rows[k++] = (uint32_t)i;
    return k;
}

la_status la_report_rejects_jsonl(const la_report *r, la_buf *b)
{
    for (size_t k = 0; k < r->nrejects; k++) {
        const la_reject *rj = &r->rejects[k];
        la_buf_puts(b, "{\"file\":");
        la_buf_json_str(b, la_table_file_name(r->table, rj->file));
        la_buf_printf(b, ",\"line\":%u,\"id\":", rj->line);
        la_buf_json_str(b, rj->id);
        la_buf_puts(b, ",\"split\":");
        la_buf_json_str(b, rj->part == LA_NO_PART ? NULL : la_table_part_name(r->table, rj->part));
        la_buf_puts(b, ",\"reasons\":[");
        for (size_t m = 0; m < rj->nreasons; m++) {
            if (m) la_buf_putc(b, ',');
            la_buf_json_str(b, rj->reasons[m]);
        }
        la_buf_puts(b, "],\"record\":");
        la_buf_json_str(b, rj->raw);
        la_buf_puts(b, "}\n");
    }
    return la_buf_status(b);
}
