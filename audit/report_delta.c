/*
 * report_delta.c - what --baseline and --waivers add to the reports: per link in pairs.jsonl, the
 * texts' hashes, whether it is new or known, and its waivers; findings.baseline and
 * findings.waivers in report.json; two sections of report.md; two lines of the summary. Every
 * function writes nothing when the report has no delta, so the files stay as they were without
 * those options. Not for: deciding what is new or waived (link_delta.c).
 */
#include "report.h"
#include "report_model.h"

#include <inttypes.h>

#define LA_DELTA_MD_ROWS 20

static const char *status_name(uint8_t s) { return s == LA_LINK_KNOWN ? "known" : "new"; }

static const char *state_name(uint8_t s)
{
    return s == LA_WAIVER_ACTIVE ? "active" : s == LA_WAIVER_EXPIRED ? "expired" : "stale";
}

static void hash_hex(la_buf *b, const uint64_t h[2]) { la_buf_printf(b, "\"%016" PRIx64 "%016" PRIx64 "\"", h[1], h[0]); }

static void date_json(la_buf *b, int32_t days)
{
    char d[11];
    la_date_format(days, d);
    la_buf_json_str(b, d);
}

/* `sep"name":` then value as a JSON string (null for NULL). */
static void str_member(la_buf *b, const char *sep, const char *name, const char *value)
{
    la_buf_printf(b, "%s\"%s\":", sep, name);
    la_buf_json_str(b, value);
}

/* One waiver as a JSON object; with_link adds the ids it names. */
static void waiver_json(const la_delta *d, size_t i, int with_link, la_buf *b)
{
    const la_waiver *w = &d->waivers->v[i];
    la_buf_printf(b, "{\"line\":%u", w->line);
    if (with_link) {
        str_member(b, ",", "heldout_id", w->heldout_id);
        str_member(b, ",", "seen_id", w->seen_id);
    }
    str_member(b, ",", "kind", w->kind ? la_kind_name(w->kind) : NULL);
    str_member(b, ",", "reason", w->reason);
    str_member(b, ",", "accepted_by", w->accepted_by);
    la_buf_puts(b, ",\"expires\":");
    date_json(b, w->expires);
    la_buf_printf(b, ",\"state\":\"%s\"}", state_name(d->waiver_state[i]));
}

void la_report_delta_pair_json(const la_report *r, size_t k, la_buf *b)
{
    const la_delta *d = r->delta;
    if (!d) return;
    const la_row *rows = la_table_rows_const(r->table);
    const la_pair *p = &r->pairs->v[k];
    la_buf_puts(b, ",\"text_hash_a\":");
    hash_hex(b, rows[p->a].hash);
    la_buf_puts(b, ",\"text_hash_b\":");
    hash_hex(b, rows[p->b].hash);
    if (d->status) la_buf_printf(b, ",\"baseline\":\"%s\"", status_name(d->status[k]));
    if (!d->waivers) return;
    la_buf_printf(b, ",\"waived\":%s", d->waived[k] ? "true" : "false");
    if (d->link_waiver[k] == LA_NO_WAIVER) return;
    la_buf_puts(b, ",\"waivers\":[");
    for (size_t i = d->link_waiver[k]; i != LA_NO_WAIVER; i = d->next_waiver[i]) {
        if (i != d->link_waiver[k]) la_buf_putc(b, ',');
        waiver_json(d, i, 0, b);
    }
    la_buf_putc(b, ']');
}

static void prior_json(const la_prior_link *l, la_buf *b)
{
    str_member(b, "{", "id_a", l->seen_id);
    str_member(b, ", ", "split_a", l->seen_split);
    str_member(b, ", ", "id_b", l->heldout_id);
    str_member(b, ", ", "split_b", l->heldout_split);
    la_buf_puts(b, ", \"kinds\": ");
    la_report_kinds_json(b, l->kinds);
    str_member(b, ", ", "grade", la_grade_name(l->grade));
    la_buf_printf(b, ", \"line\": %u}", l->line);
}

void la_report_delta_json(const la_report *r, la_buf *b)
{
    const la_delta *d = r->delta;
    if (!d) return;
    if (d->baseline) {
        la_buf_puts(b, ",\n    \"baseline\": {\"path\": ");
        la_buf_json_str(b, d->baseline_path);
        la_buf_printf(b, ", \"fail_on_new\": %s, \"links\": {\"new\": %zu, \"known\": %zu, \"resolved\": %zu}, "
                         "\"time_rows\": {\"new\": %zu, \"known\": %zu}, \"resolved\": [",
                      d->fail_on_new ? "true" : "false", d->nnew, d->nknown, d->nresolved, d->ntime_new,
                      r->audit->ntime - d->ntime_new);
        for (size_t k = 0; k < d->nresolved; k++) {
            la_buf_puts(b, k ? ",\n      " : "\n      ");
            prior_json(&d->baseline->links[d->resolved[k]], b);
        }
        la_buf_puts(b, d->nresolved ? "\n    ]}" : "]}");
    }
    if (d->waivers) {
        la_buf_puts(b, ",\n    \"waivers\": {\"path\": ");
        la_buf_json_str(b, d->waivers_path);
        la_buf_puts(b, ", \"today\": ");
        date_json(b, d->today);
        la_buf_printf(b, ", \"entries\": %zu, \"active\": %zu, \"expired\": %zu, \"stale\": %zu, \"links_waived\": %zu, "
                         "\"list\": [",
                      d->waivers->n, d->nactive, d->nexpired, d->nstale, d->nwaived_links);
        for (size_t i = 0; i < d->waivers->n; i++) {
            la_buf_puts(b, i ? ",\n      " : "\n      ");
            waiver_json(d, i, 1, b);
        }
        la_buf_puts(b, d->waivers->n ? "\n    ]}" : "]}");
    }
}

/* A link table row: grade, kinds, seen id, held-out id. */
static void md_link_row(la_buf *b, int grade, uint32_t kinds, const char *seen, const char *held)
{
    la_buf_printf(b, "| %s | ", la_grade_name(grade) ? la_grade_name(grade) : "");
    la_report_kinds_text(b, kinds, ", ");
    la_buf_puts(b, " | ");
    la_buf_md_cell(b, seen, 40);
    la_buf_puts(b, " | ");
    la_buf_md_cell(b, held, 40);
    la_buf_puts(b, " |\n");
}

static void md_baseline(const la_report *r, const la_delta *d, la_buf *b)
{
    const la_row *rows = la_table_rows_const(r->table);
    la_buf_puts(b, "## Since the baseline\n\nAgainst ");
    la_buf_md_cell(b, d->baseline_path, 200);
    la_buf_printf(b, ": **%zu new**, %zu known and %zu resolved links; %zu of %zu rows on the wrong side of the cutoff "
                     "are new.%s\n\n",
                  d->nnew, d->nknown, d->nresolved, d->ntime_new, r->audit->ntime,
                  d->fail_on_new ? " Only new links and rows fail the run (--fail-on-new)." : "");
    if (d->nnew) {
        size_t shown = d->nnew < LA_DELTA_MD_ROWS ? d->nnew : LA_DELTA_MD_ROWS;
        la_buf_printf(b, "New links (%zu of %zu; `\"baseline\":\"new\"` in pairs.jsonl):\n\n", shown, d->nnew);
        la_buf_puts(b, "| grade | kinds | seen id | held-out id |\n|---|---|---|---|\n");
        for (size_t k = 0, n = 0; k < r->pairs->n && n < shown; k++) {
            if (d->status[k] != LA_LINK_NEW) continue;
            const la_pair *p = &r->pairs->v[k];
            md_link_row(b, p->grade, p->kinds, rows[p->a].id, rows[p->b].id);
            n++;
        }
        la_buf_putc(b, '\n');
    }
    if (d->nresolved) {
        size_t shown = d->nresolved < LA_DELTA_MD_ROWS ? d->nresolved : LA_DELTA_MD_ROWS;
        la_buf_printf(b, "Resolved links (%zu of %zu; all in report.json, findings.baseline.resolved):\n\n", shown,
                      d->nresolved);
        la_buf_puts(b, "| grade | kinds | seen id | held-out id |\n|---|---|---|---|\n");
        for (size_t k = 0; k < shown; k++) {
            const la_prior_link *l = &d->baseline->links[d->resolved[k]];
            md_link_row(b, l->grade, l->kinds, l->seen_id, l->heldout_id);
        }
        la_buf_putc(b, '\n');
    }
}

static void md_waivers(const la_delta *d, la_buf *b)
{
    char today[11];
    la_date_format(d->today, today);
    la_buf_puts(b, "## Waivers\n\n");
    la_buf_md_cell(b, d->waivers_path, 200);
    la_buf_printf(b, ", checked on %s: %zu active (%zu links waived: listed, not gating), %zu expired (they waive "
                     "nothing), %zu stale (they name no link of this run).\n\n",
                  today, d->nactive, d->nwaived_links, d->nexpired, d->nstale);
    if (!d->waivers->n) return;
    size_t shown = d->waivers->n < LA_DELTA_MD_ROWS ? d->waivers->n : LA_DELTA_MD_ROWS;
    la_buf_puts(b, "| line | state | seen id | held-out id | kind | expires | accepted by | reason |\n"
                   "|---:|---|---|---|---|---|---|---|\n");
    for (size_t i = 0; i < shown; i++) {
        const la_waiver *w = &d->waivers->v[i];
        char exp[11];
        la_date_format(w->expires, exp);
        la_buf_printf(b, "| %u | %s | ", w->line, state_name(d->waiver_state[i]));
        la_buf_md_cell(b, w->seen_id, 40);
        la_buf_puts(b, " | ");
        la_buf_md_cell(b, w->heldout_id, 40);
        la_buf_printf(b, " | %s | %s | ", w->kind ? la_kind_name(w->kind) : "all", exp);
        la_buf_md_cell(b, w->accepted_by, 40);
        la_buf_puts(b, " | ");
        la_buf_md_cell(b, w->reason, 120);
        la_buf_puts(b, " |\n");
    }
    if (d->waivers->n > shown) la_buf_printf(b, "\n%zu more waivers in report.json.\n", d->waivers->n - shown);
    la_buf_putc(b, '\n');
}

void la_report_delta_md(const la_report *r, la_buf *b)
{
    const la_delta *d = r->delta;
    if (!d) return;
    if (d->baseline) md_baseline(r, d, b);
    if (d->waivers) md_waivers(d, b);
}

void la_report_delta_summary(const la_report *r, la_buf *b)
{
    const la_delta *d = r->delta;
    if (!d) return;
    if (d->baseline)
        la_buf_printf(b, "  since the baseline: %zu new, %zu known, %zu resolved links%s\n", d->nnew, d->nknown,
                      d->nresolved, d->fail_on_new ? " (only new links fail the run)" : "");
    if (d->waivers)
        la_buf_printf(b, "  waivers: %zu active (%zu links waived), %zu expired, %zu stale\n", d->nactive,
                      d->nwaived_links, d->nexpired, d->nstale);
}
